"""`VBPCA(posterior='factorised')` (lesson 15): the estimator over `fit_factorised`, with everything the full fit gives
(units, missing and sparse input, transform, impute with error bars), a bound that never falls and lies below the full
posterior's, and the settings it cannot take refused by name."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit import VBPCA


def low_rank(seed=0, N=120, M=30, D=3, missing=0.3, noise=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) @ rng.normal(size=(D, M)) + rng.normal(size=M) + noise * rng.normal(size=(N, M))
    full = X.copy()
    X[rng.random(X.shape) < missing] = np.nan
    return X, full


def fit(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return VBPCA(**({'n_components': 6, 'random_state': 0, 'max_iter': 400} | kw)).fit(X)


def test_the_bound_never_falls_and_lies_below_the_full_posteriors():
    X, _ = low_rank()
    f, v = fit(X, posterior='factorised'), fit(X, posterior='full')
    assert np.all(np.diff(f.elbo_) >= -1e-9 * abs(f.elbo_[-1]))
    assert f.elbo_[-1] < v.elbo_[-1]
    assert np.isclose(f.elbo_terms_.total, f.elbo_[-1])
    assert np.allclose(f.posterior_.Sx[:, ~np.eye(6, dtype=bool)], 0)           # still factorised
    assert np.allclose(f.posterior_.Sw[:, ~np.eye(6, dtype=bool)], 0)


def test_it_predicts_the_hidden_entries_as_well_as_the_full_fit():
    X, full = low_rank()
    hidden = np.isnan(X)
    err = {p: np.sqrt(np.mean((fit(X, posterior=p).impute(X) - full)[hidden] ** 2)) for p in ('full', 'factorised')}
    assert err['factorised'] < 0.3 and abs(err['factorised'] - err['full']) < 0.05, err
    f = fit(X, posterior='factorised')
    mean, sd = f.impute(X, return_std=True)
    assert np.all(sd[hidden] > 0) and np.all(sd[~hidden] == 0)
    assert f.transform(X).shape == (len(X), f.n_components_)
    assert f.n_effective_components_ == 3


def test_any_units_give_the_same_fit():
    X, _ = low_rank(1)
    a, b = fit(X, posterior='factorised'), fit(1e4 * X - 7e5, posterior='factorised')
    np.testing.assert_allclose(b.components_, 1e4 * a.components_, rtol=1e-6, atol=1e-6 * np.abs(b.components_).max())
    np.testing.assert_allclose(b.noise_variance_, 1e8 * a.noise_variance_, rtol=1e-6)


def test_sparse_unstored_input_is_the_same_fit_as_nan():
    X, _ = low_rank(2, missing=0.6)
    r, c = np.nonzero(~np.isnan(X))
    S = sparse.csr_matrix((X[r, c], (r, c)), shape=X.shape)
    a = fit(X, posterior='factorised')
    b = fit(S, posterior='factorised', missing_values='unstored')
    np.testing.assert_allclose(a.elbo_, b.elbo_, rtol=1e-9)


@pytest.mark.parametrize('kw, name', [(dict(sample_bias=True), 'sample_bias'), (dict(mean_prior='learned'), 'mean_prior')])
def test_settings_that_need_the_full_posterior_are_refused_by_name(kw, name):
    X, _ = low_rank()
    with pytest.raises(ValueError, match=name):
        VBPCA(3, posterior='factorised', **kw).fit(X)


def test_an_unknown_posterior_is_refused_by_name():
    with pytest.raises(ValueError, match='posterior'):
        VBPCA(3, posterior='diagonal').fit(low_rank()[0])


@pytest.mark.parametrize('sparse_chunks', [False, True])
@pytest.mark.filterwarnings('ignore')
def test_a_dask_array_gives_the_in_memory_fit(sparse_chunks):
    "The factorised posterior on a dask array (blocks by sample and by feature, appendix 35) is the fit in memory."
    da = pytest.importorskip('dask.array')
    import dask
    import scipy.sparse as sp
    X = low_rank()[0]
    X = np.where(np.random.default_rng(5).random(X.shape) < 0.3, np.nan, X)
    params = dict(n_components=3, posterior='factorised', random_state=0, max_iter=40, tol=0)
    if sparse_chunks:                                           # unstored entries are missing
        Xs = sp.csr_matrix(np.nan_to_num(X, nan=0.0))
        mem = VBPCA(**params, missing_values='unstored').fit(Xs)
        Xd = da.from_array(np.nan_to_num(X, nan=0.0), chunks=(60, X.shape[1])).map_blocks(sp.csr_matrix)
        est = VBPCA(**params, missing_values='unstored')
    else:
        mem, est, Xd = VBPCA(**params).fit(X), VBPCA(**params), da.from_array(X, chunks=(60, X.shape[1]))
    with dask.config.set(scheduler='threads'), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        est.fit(Xd)
    np.testing.assert_allclose(est.elbo_, mem.elbo_, rtol=1e-9)
    np.testing.assert_allclose(est.components_, mem.components_, rtol=1e-7, atol=1e-10)
