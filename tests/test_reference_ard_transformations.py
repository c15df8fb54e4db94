"""The package's ARD, transformations and predictive moments equal the references the lessons show.

Lessons 04 (`reference_alpha_update`, `reference_alpha_kl`), 04 (`reference_translation`, `reference_translate`,
`reference_rotation_statistics`, `reference_rotation_bound`, `reference_rotate`) and 04b
(`reference_predictive_moments`): on random problems of several sizes, with and without missing values, shared and
per-feature noise and covariances, the production functions agree with them to 1e-10 relative.
"""
import warnings

import numpy as np
import pytest

from vbfa_lit.ard import ARD, update_alpha, reference_alpha_update, reference_alpha_kl, reference_alpha_evidence
from vbfa_lit.vbpca import FixedAlpha, Prior, random_posterior

SEEDS = range(8)


def rel(a, b):
    "Largest difference relative to the largest magnitude of the reference."
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(np.broadcast_to(a, b.shape) - b).max() / max(np.abs(b).max(), 1e-300))


def sizes(seed):
    r = np.random.default_rng(100 + seed)
    return r, int(r.integers(2, 12)), int(r.integers(2, 30)), int(r.integers(1, 6))


def shared_covariances(q):
    "The same posterior with one covariance shared by every row (the storage of complete data)."
    return q._replace(Sw=q.Sw[:1], Sx=q.Sx[:1])


# ---- lesson 04: ARD

@pytest.mark.parametrize('seed', SEEDS)
def test_alpha_update_and_kl_equal_the_reference(seed):
    r, M, N, D = sizes(seed)
    a0, b0 = r.uniform(1e-3, 3, 2)
    for q in (random_posterior(r, M, N, D, ard=True), shared_covariances(random_posterior(r, M, N, D, ard=True))):
        a_ref, b_ref = reference_alpha_update(q, a0, b0)
        a, b = update_alpha(q.W, q.Sw, a0, b0)
        assert rel(a, a_ref) < 1e-10 and rel(b, b_ref) < 1e-10
        qa = ARD(a0, b0).update(q)
        assert rel(qa.a_alpha, a_ref) < 1e-10 and rel(qa.b_alpha, b_ref) < 1e-10
        kl_ref = reference_alpha_kl(q.a_alpha, q.b_alpha, a0, b0)
        assert kl_ref.shape == (D,) and np.all(kl_ref >= 0)
        assert rel(ARD(a0, b0).kl(q), kl_ref.sum()) < 1e-10


def test_alpha_kl_is_zero_at_the_prior_and_evidence_alpha_is_m_over_the_squared_length():
    a, b = np.array([0.5, 2.0, 7.0]), np.array([0.1, 3.0, 4.0])
    assert np.all(np.abs(reference_alpha_kl(a, b, a, b)) < 1e-14)
    W = np.array([[1.0, 0.0], [2.0, 0.5], [0.0, 0.5]])
    np.testing.assert_allclose(reference_alpha_evidence(W), [3 / 5, 3 / 0.5], rtol=1e-15)


# ---- lesson 05: translation and rotation

def missing_data(r, M, N, fraction):
    Y = r.normal(size=(M, N)) + 5 * r.normal(size=(M, 1))
    Y[r.random(Y.shape) < fraction] = np.nan
    return Y


@pytest.mark.parametrize('seed', SEEDS)
def test_translation_equals_the_reference(seed):
    from vbfa_lit.transformations import (translation_statistics, optimal_translation, translate,
                                          reference_translation_statistics, reference_translation,
                                          reference_translate)
    from vbfa_lit.engine import observed
    r, M, N, D = sizes(seed)
    Y = missing_data(r, M, N, (0.0, 0.3, 0.6)[seed % 3])
    shared, beta = bool(seed % 2), float(r.choice([0.0, 1e-3, 0.5]))
    q = random_posterior(r, M, N, D, shared)
    if seed % 4 == 3: q = shared_covariances(q)
    data = observed(Y)
    Omega, g = translation_statistics(data, q, beta)
    Omega_ref, g_ref = reference_translation_statistics(Y, q, beta)
    assert rel(Omega, Omega_ref) < 1e-10 and rel(g, g_ref) < 1e-10
    t, t_ref = optimal_translation(data, q, beta), reference_translation(Y, q, beta)
    assert rel(t, t_ref) < 1e-10
    for a, b in zip(translate(q, t_ref), reference_translate(q, t_ref)):
        if b is not None: assert rel(a, b) < 1e-10


@pytest.mark.parametrize('seed', SEEDS)
def test_rotation_equals_the_reference(seed):
    from vbfa_lit.transformations import (rotation_statistics, rotation_bound, rotate, optimal_rotation,
                                          reference_rotation_statistics, reference_rotation_bound, reference_rotate)
    r, M, N, D = sizes(seed)
    ard = bool(seed % 2)
    w_prior = ARD(*r.uniform(1e-3, 2, 2)) if ard else FixedAlpha(float(r.uniform(1e-3, 2)))
    prior = Prior(w=w_prior)
    q = random_posterior(r, M, N, D, bool(seed % 3 == 0), ard=ard)
    if seed % 4 == 3: q = shared_covariances(q)
    Gx, Gw = rotation_statistics(q)
    Gx_ref, Gw_ref = reference_rotation_statistics(q)
    assert rel(Gx, Gx_ref) < 1e-10 and rel(Gw, Gw_ref) < 1e-10
    for R in (r.normal(size=(D, D)) + 2 * np.eye(D), optimal_rotation(Gx, Gw, N, M, w_prior)):
        R = R * np.r_[np.sign(np.linalg.det(R)), np.ones(D - 1)]          # either sign of |R|: the same bound
        for R_ in (R, R * np.r_[-1.0, np.ones(D - 1)]):
            assert rel(rotation_bound(R_, Gx, Gw, N, M, w_prior),
                       reference_rotation_bound(R_, Gx_ref, Gw_ref, N, M, w_prior)) < 1e-10
        for a, b in zip(rotate(q, R, prior), reference_rotate(q, R, prior)):
            if b is not None: assert rel(a, b) < 1e-10


# ---- lesson 07: predictive moments of the entries

@pytest.mark.parametrize('seed', SEEDS)
def test_predictive_moments_equal_the_reference(seed):
    from vbfa_lit.estimator import latent_posterior, predictive_moments
    from vbfa_lit.imputation import reference_predictive_moments
    r, M, N, D = sizes(seed)
    Y = missing_data(r, M, N, (0.0, 0.3, 0.6)[seed % 3])
    Y[:, 0] = 1.0                                             # no sample without observations
    q = random_posterior(r, M, N, D, bool(seed % 2))
    if seed % 4 == 3: q = q._replace(Sw=q.Sw[:1])
    mean_ref, var_ref = reference_predictive_moments(Y, q)
    Z, Sx = latent_posterior(Y.T, q)                          # the package's q(x_n) of each sample (row of X)
    rows, cols = np.nonzero(np.ones((N, M), bool))            # every entry, observed or not
    mean, var = predictive_moments(q, Z, Sx, rows, cols)
    assert rel(mean, mean_ref.T[rows, cols]) < 1e-10 and rel(var, var_ref.T[rows, cols]) < 1e-10
    sd = predictive_moments(q, Z, Sx, rows, cols, std=True)[1]
    assert rel(sd, np.sqrt(var_ref.T[rows, cols])) < 1e-10


@pytest.mark.parametrize('seed', range(4))
def test_impute_equals_the_reference_in_the_data_units(seed):
    from vbfa_lit.estimator import VBPCA
    from vbfa_lit.imputation import reference_predictive_moments
    r = np.random.default_rng(200 + seed)
    N, M = int(r.integers(20, 60)), int(r.integers(3, 10))
    X = r.normal(size=(N, 2)) @ r.normal(size=(2, M)) * 30 + 100 * r.normal(size=M) + 5 * r.normal(size=(N, M))
    X[r.random(X.shape) < 0.25] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), 1.0, X[:, 0])      # no row without observations
    noise = ('per_feature', 'shared')[seed % 2]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                       # ConvergenceWarning: 30 sweeps are enough here
        model = VBPCA(3, noise=noise, max_iter=30, random_state=seed).fit(X)
    filled, std = model.impute(X, return_std=True)
    mean_ref, var_ref = reference_predictive_moments(((X - model.center_) / model.scale_).T, model.posterior_)
    hidden = np.isnan(X)
    assert rel(filled[hidden], (model.center_ + model.scale_ * mean_ref.T)[hidden]) < 1e-10
    assert rel(std[hidden], (model.scale_ * np.sqrt(var_ref.T))[hidden]) < 1e-10
    assert np.all(std[~hidden] == 0) and np.array_equal(filled[~hidden], X[~hidden])
