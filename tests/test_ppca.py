"""vbfa_lit.ppca: the closed-form maximum-likelihood PPCA (Tipping & Bishop, 1999) and the solutions of 01c's exercises."""
import numpy as np
import pytest
from sklearn.decomposition import PCA

from vbfa_lit.data import make_ppca
from vbfa_lit.ppca import PPCAFit, ppca_log_likelihood, ppca_ml


def _data(n=200, m=6, scales=(2.5, 1.5), seed=1, **kw):
    return make_ppca(n, m, list(scales), noise_std=0.7, random_state=seed, **kw).X


@pytest.mark.parametrize('n, m, d', [(200, 6, 2), (50, 10, 3), (8, 12, 3), (30, 3, 1)])
def test_agrees_with_sklearn_pca(n, m, d):
    X = _data(n, m, scales=np.linspace(3, 1, d), seed=n)
    fit = ppca_ml(X, d)
    pca = PCA(n_components=d, svd_solver='full').fit(X)
    # sklearn divides S by N - 1, maximum likelihood by N; and sklearn averages the min(N, M) - D smallest
    # eigenvalues it computes, while the likelihood's maximum averages all M - D (those beyond the rank are 0)
    k = min(n, m)
    np.testing.assert_allclose(fit.sigma2, pca.noise_variance_ * (n - 1) / n * (k - d) / (m - d), rtol=1e-10)
    if n > m:
        C = fit.W @ fit.W.T + fit.sigma2 * np.eye(m)
        np.testing.assert_allclose(C, pca.get_covariance() * (n - 1) / n, atol=1e-10 * np.abs(C).max())
    np.testing.assert_allclose(fit.mean, pca.mean_)
    np.testing.assert_allclose(fit.eigenvalues[:d], pca.explained_variance_ * (n - 1) / n, rtol=1e-10)
    assert fit.W.shape == (m, d) and isinstance(fit, PPCAFit) and 'D=' in repr(fit)


def test_columns_are_the_principal_axes_with_lengths_sqrt_lambda_minus_sigma2():
    X = _data()
    fit = ppca_ml(X, 2)
    lam, U = np.linalg.eigh(np.cov(X.T, bias=True))
    lam, U = lam[::-1], U[:, ::-1]
    np.testing.assert_allclose(np.linalg.norm(fit.W, axis=0), np.sqrt(lam[:2] - lam[2:].mean()), rtol=1e-10)
    np.testing.assert_allclose(np.abs(np.sum(fit.W / np.linalg.norm(fit.W, axis=0) * U[:, :2], 0)), 1, rtol=1e-10)


def test_the_closed_form_is_the_maximum():
    "Every random perturbation of W, sigma2 or mu lowers the likelihood; the gradient is zero there."
    X = _data()
    fit = ppca_ml(X, 2)
    best = ppca_log_likelihood(X, fit.W, fit.sigma2, fit.mean)
    rng = np.random.default_rng(0)
    for scale in (1e-3, 1e-2, 1e-1):
        for _ in range(50):
            assert ppca_log_likelihood(X, fit.W + scale * rng.normal(size=fit.W.shape), fit.sigma2, fit.mean) < best
            assert ppca_log_likelihood(X, fit.W, fit.sigma2 * np.exp(scale * rng.normal()), fit.mean) < best
            assert ppca_log_likelihood(X, fit.W, fit.sigma2, fit.mean + scale * rng.normal(size=6)) < best
    # central differences of the likelihood in W vanish (relative to a unit-scale gradient, N = 200 terms)
    h, g = 1e-5, np.zeros_like(fit.W)
    for idx in np.ndindex(*fit.W.shape):
        E = np.zeros_like(fit.W); E[idx] = h
        g[idx] = (ppca_log_likelihood(X, fit.W + E, fit.sigma2, fit.mean)
                  - ppca_log_likelihood(X, fit.W - E, fit.sigma2, fit.mean)) / (2 * h)
    assert np.abs(g).max() < 1e-4


def test_rotations_give_the_same_likelihood_and_R_is_applied():
    X = _data()
    rng = np.random.default_rng(2)
    R = np.linalg.qr(rng.normal(size=(2, 2)))[0]
    fit, rot = ppca_ml(X, 2), ppca_ml(X, 2, R=R)
    np.testing.assert_allclose(rot.W, fit.W @ R)
    np.testing.assert_allclose(ppca_log_likelihood(X, rot.W, rot.sigma2, rot.mean),
                               ppca_log_likelihood(X, fit.W, fit.sigma2, fit.mean), rtol=1e-12)


def test_log_likelihood_against_scipy():
    from scipy.stats import multivariate_normal
    X = _data(30, 4, (2.0,))
    rng = np.random.default_rng(3)
    W, mu = rng.normal(size=(4, 2)), rng.normal(size=4)
    ref = multivariate_normal(mu, W @ W.T + 0.3 * np.eye(4)).logpdf(X).sum()
    np.testing.assert_allclose(ppca_log_likelihood(X, W, 0.3, mu), ref, rtol=1e-12)


def test_units_do_not_matter_and_input_is_not_modified():
    X = _data()
    X0 = X.copy()
    fit = ppca_ml(X, 2)
    scaled = ppca_ml(1000 * X + 5, 2)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_allclose(scaled.sigma2, 1e6 * fit.sigma2, rtol=1e-9)
    np.testing.assert_allclose(np.abs(scaled.W), 1000 * np.abs(fit.W), rtol=1e-8)


@pytest.mark.parametrize('args, kind, name', [
    ((np.zeros(5), 1), ValueError, 'X'),
    ((np.ones((1, 3)), 1), ValueError, 'X'),
    ((np.array([[1.0, np.nan, 0], [0, 1, 2], [2, 0, 1]]), 1), ValueError, 'X'),
    (([['a', 'b'], ['c', 'd']], 1), TypeError, 'X'),
    ((np.eye(3), 0), ValueError, 'n_components'),
    ((np.eye(3), 3), ValueError, 'n_components'),
    ((np.eye(3), 1.5), TypeError, 'n_components'),
    ((np.eye(3), True), TypeError, 'n_components'),
])
def test_bad_input_names_the_argument(args, kind, name):
    with pytest.raises(kind, match=name): ppca_ml(*args)


def test_bad_rotation_and_degenerate_data():
    X = _data()
    with pytest.raises(ValueError, match='R'): ppca_ml(X, 2, R=np.eye(3))
    with pytest.raises(ValueError, match='R'): ppca_ml(X, 2, R=2 * np.eye(2))
    rng = np.random.default_rng(0)
    flat = rng.normal(size=(20, 2)) @ rng.normal(size=(2, 5))        # rank 2: sigma2_ML = 0
    with pytest.raises(ValueError, match='subspace'): ppca_ml(flat, 2)


def test_log_likelihood_bad_input():
    X, W, mu = np.zeros((3, 2)), np.ones((2, 1)), np.zeros(2)
    with pytest.raises(ValueError, match='sigma2'): ppca_log_likelihood(X, W, 0.0, mu)
    with pytest.raises(ValueError, match='W'): ppca_log_likelihood(X, np.ones((3, 1)), 1.0, mu)
    with pytest.raises(ValueError, match='mean'): ppca_log_likelihood(X, W, 1.0, np.zeros(3))
    with pytest.raises(ValueError, match='X'): ppca_log_likelihood(np.zeros(3), W, 1.0, mu)


# --- 01c's exercises: the worked solutions compute these


def test_exercise_1_sigma2_is_the_variance_lost_per_discarded_dimension():
    X = _data()
    fit = ppca_ml(X, 2)
    lost = np.trace(np.cov(X.T, bias=True)) - fit.eigenvalues[:2].sum()
    P = fit.W @ np.linalg.pinv(fit.W)
    resid = ((X - fit.mean) @ (np.eye(6) - P))**2
    np.testing.assert_allclose([lost, resid.sum(1).mean()], 4 * fit.sigma2, rtol=1e-10)


def test_exercise_2_reflections_keep_the_likelihood_other_maps_do_not():
    X = _data()
    fit = ppca_ml(X, 2)
    best = ppca_log_likelihood(X, fit.W, fit.sigma2, fit.mean)
    np.testing.assert_allclose(ppca_log_likelihood(X, fit.W @ np.diag([1.0, -1.0]), fit.sigma2, fit.mean), best,
                               rtol=1e-12)
    assert ppca_log_likelihood(X, fit.W @ np.diag([1.1, 1 / 1.1]), fit.sigma2, fit.mean) < best - 1


def test_exercise_3_posterior_mean_tends_to_least_squares_coordinates():
    X = _data()
    fit = ppca_ml(X, 2)
    W, Yc = fit.W, X - fit.mean
    ls = np.linalg.solve(W.T @ W, W.T @ Yc.T)
    errs = [np.abs(np.linalg.solve(W.T @ W + s2 * np.eye(2), W.T @ Yc.T) - ls).max() for s2 in (1.0, 0.1, 0.01, 0.001)]
    assert np.all(np.diff(errs) < 0)
    # first order in sigma2: the ratio of successive errors tends to 0.1 (the second-order term is sigma2 / lambda)
    np.testing.assert_allclose(np.array(errs[2:]) / errs[1:-1], 0.1, rtol=0.05)
