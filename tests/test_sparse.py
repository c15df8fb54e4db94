"""VBPCA(missing_values='unstored'): a SciPy sparse matrix whose stored entries are the observations (issue 17,
item 5). The fit must equal the dense NaN form's, never densify the data, and keep explicit zeros observed."""
from functools import lru_cache

import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit import VBPCA
from vbfa_lit.estimator import check_sparse, data_scale, sparse_data_scale

pytestmark = pytest.mark.filterwarnings('ignore::vbfa_lit.estimator.ConvergenceWarning')


def ratings(N=60, M=25, D=3, frac=0.3, seed=0, offset=3.0):
    "Low-rank data, `frac` observed: the dense NaN form and the CSR form of the same entries."
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) @ rng.normal(size=(D, M)) + 0.3 * rng.normal(size=(N, M)) + offset
    X[rng.random(X.shape) > frac] = np.nan
    X[0, 0] = 0.0                                                                        # an observed zero
    obs = ~np.isnan(X)
    return X, sparse.csr_matrix((X[obs], np.nonzero(obs)), shape=X.shape)


def fit_pair(noise='shared'):
    """The dense NaN fit and the sparse fit of `ratings()`, fitted once per noise model in a worker (the tests only read
    the two models); the data are fresh copies each call."""
    Xd, Xs, a, b = _fitted_pair(noise)
    return Xd.copy(), Xs.copy(), a, b


@lru_cache(maxsize=None)
def _fitted_pair(noise):
    Xd, Xs = ratings()
    a = VBPCA(noise=noise, max_iter=200, random_state=0).fit(Xd)
    b = VBPCA(noise=noise, max_iter=200, random_state=0, missing_values='unstored').fit(Xs)
    return Xd, Xs, a, b


@pytest.mark.parametrize('noise', ['shared', 'per_feature'])
def test_sparse_fit_equals_dense_fit(noise):
    Xd, Xs, a, b = fit_pair(noise)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(b.elbo_, a.elbo_, rtol=1e-10)
    np.testing.assert_allclose(b.components_, a.components_, rtol=1e-7, atol=1e-9 * np.abs(a.components_).max())
    np.testing.assert_allclose(b.mean_, a.mean_, rtol=1e-9)
    np.testing.assert_allclose(b.noise_variance_, a.noise_variance_, rtol=1e-9)
    np.testing.assert_allclose(b.transform(Xs), a.transform(Xd), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(b.score_samples(Xs), a.score_samples(Xd), rtol=1e-10)
    assert abs(b.score(Xs) - a.score(Xd)) < 1e-9 * abs(a.score(Xd))
    # a fitted sparse model also takes dense rows with NaN
    np.testing.assert_allclose(b.transform(Xd), b.transform(Xs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('fmt', ['csr', 'csc', 'coo', 'lil', 'dok', 'bsr'])
def test_any_sparse_format(fmt):
    Xd, Xs, a, _ = fit_pair()
    b = VBPCA(max_iter=200, random_state=0, missing_values='unstored').fit(Xs.asformat(fmt))
    np.testing.assert_allclose(b.elbo_, a.elbo_, rtol=1e-10)


def test_sparse_array_as_well_as_matrix():
    Xd, Xs, a, _ = fit_pair()
    c = VBPCA(max_iter=200, random_state=0, missing_values='unstored').fit(sparse.csr_array(Xs))
    np.testing.assert_allclose(c.elbo_, a.elbo_, rtol=1e-10)


def test_explicit_zero_is_observed_and_stored_nan_is_missing():
    Xd, Xs, *_ = ratings()
    assert check_sparse(Xs).nnz == int((~np.isnan(Xd)).sum())
    assert Xd[0, 0] == 0.0 and check_sparse(Xs)[0, 0] == 0.0 and check_sparse(Xs)[0].indices[0] == 0
    with_nan = Xs.tolil(copy=True)
    with_nan[1, 1] = np.nan
    Xd2 = Xd.copy(); Xd2[1, 1] = np.nan
    a = VBPCA(max_iter=50, random_state=0).fit(Xd2)
    b = VBPCA(max_iter=50, random_state=0, missing_values='unstored').fit(with_nan)
    np.testing.assert_allclose(b.elbo_, a.elbo_, rtol=1e-10)


def test_scale_from_stored_values_matches_dense():
    Xd, Xs, *_ = ratings(offset=1e8)
    c1 = np.nanmean(Xd, 0)                           # an independent reference, in long double
    s1 = float(np.sqrt(np.nanmean((Xd.astype(np.longdouble) - c1) ** 2)))
    c2, s2 = sparse_data_scale(check_sparse(Xs))
    np.testing.assert_allclose(c2, c1, rtol=1e-13)
    assert abs(s2 - s1) <= 1e-10 * s1
    np.testing.assert_array_equal(data_scale(Xd)[0], c2)      # the dense form goes through the same entries


def test_never_densified_and_input_unmodified(monkeypatch):
    Xd, Xs, *_ = ratings()
    before = (Xs.data.copy(), Xs.indices.copy(), Xs.indptr.copy())
    def refuse(*a, **k): raise AssertionError('densified')
    for cls in (sparse.csr_matrix, sparse.csc_matrix, sparse.coo_matrix):
        monkeypatch.setattr(cls, 'toarray', refuse)
        monkeypatch.setattr(cls, 'todense', refuse)
    m = VBPCA(max_iter=30, random_state=0, missing_values='unstored').fit(Xs)
    m.transform(Xs); m.score(Xs); m.predict_entries(Xs, [0, 1], [2, 3], return_std=True)
    for x, y in zip(before, (Xs.data, Xs.indices, Xs.indptr)): np.testing.assert_array_equal(x, y)


def test_predict_entries_equals_the_reconstruction_and_impute():
    Xd, Xs, a, b = fit_pair()
    rng = np.random.default_rng(5)
    rows, cols = rng.integers(0, Xd.shape[0], 300), rng.integers(0, Xd.shape[1], 300)
    full = b.inverse_transform(b.transform(Xs))
    np.testing.assert_allclose(b.predict_entries(Xs, rows, cols), full[rows, cols], rtol=1e-12, atol=1e-12)
    filled, std = a.impute(Xd, return_std=True)
    miss = np.isnan(Xd[rows, cols])
    mean, s = b.predict_entries(Xs, rows, cols, return_std=True)
    np.testing.assert_allclose(mean[miss], filled[rows, cols][miss], rtol=1e-7)
    np.testing.assert_allclose(s[miss], std[rows, cols][miss], rtol=1e-6)
    assert np.all(s > 0)
    e = b.predict_entries(Xs, np.array([], dtype=int), np.array([], dtype=int), return_std=True)
    assert e[0].shape == (0,) and e[1].shape == (0,)


def test_default_refuses_sparse_and_names_the_option():
    _, Xs, *_ = ratings()
    with pytest.raises(TypeError, match=r"^X: sparse input needs VBPCA\(missing_values='unstored'\)"):
        VBPCA().fit(Xs)
    m = VBPCA(max_iter=20, random_state=0, missing_values='unstored').fit(Xs)
    with pytest.raises(TypeError, match='sparse input needs'):
        m.impute(Xs)                                # a dense N x M answer: use predict_entries


@pytest.mark.parametrize('kw, exc, match', [
    (dict(missing_values='zero'), ValueError, "^The 'missing_values' parameter"),
    (dict(missing_values=0), ValueError, '^missing_values: '),
    (dict(missing_values=None), ValueError, "^The 'missing_values' parameter"),
])
def test_bad_missing_values(kw, exc, match):
    X, _ = ratings()
    with pytest.raises(exc, match=match):
        VBPCA(max_iter=5, **kw).fit(X)


@pytest.mark.parametrize('X, exc, match', [
    (sparse.csr_matrix(np.array([[1.0, np.inf], [2.0, 3.0]])), ValueError, '^X: contains 1 stored infinite'),
    (sparse.csr_matrix(np.array([[1.0 + 1j, 2.0], [2.0, 3.0]])), ValueError, '^X: Complex'),
    (sparse.csr_matrix((2, 0)), ValueError, r'^X: found array with 0 feature'),
    (sparse.csr_matrix((0, 3)), ValueError, r'^X: found array with 0 sample'),
    (sparse.csr_matrix((3, 3)), ValueError, r'^X: no observed value'),
    (sparse.csr_matrix(np.array([[True, False], [False, True]])), None, None),
])
def test_bad_sparse_input(X, exc, match):
    if exc is None:
        VBPCA(max_iter=5, random_state=0, missing_values='unstored').fit(X)          # bool counts as numbers
        return
    with pytest.raises(exc, match=match):
        VBPCA(max_iter=5, missing_values='unstored').fit(X)


@pytest.mark.parametrize('rows, cols, exc, match', [
    ([0, 1], [0], ValueError, '^cols: expected as many'), ([[0]], [0], ValueError, '^rows: expected a 1-d'),
    ([0.5], [0], TypeError, '^rows: expected integer'), ([-1], [0], ValueError, r'^rows: indices must lie'),
    ([0], [25], ValueError, r'^cols: indices must lie'),
])
def test_bad_entries(rows, cols, exc, match):
    _, Xs, _, b = fit_pair()
    with pytest.raises(exc, match=match):
        b.predict_entries(Xs, rows, cols)


def test_sklearn_clone_and_repr():
    from sklearn.base import clone
    m = VBPCA(missing_values='unstored')
    assert clone(m).missing_values == 'unstored'
    assert repr(VBPCA()) == 'VBPCA()' and repr(m) == "VBPCA(missing_values='unstored')"


def test_shifted_entries_and_the_one_product_updates_equal_the_dense_ones():
    """`engine.shifted` holds y_mn - mu_m - b_n on exactly the stored entries (an observed zero among them); the sparse
    update of q(x_n), one product of those entries, equals the dense update's three products, with and without b."""
    from vbfa_lit.engine import observed, shifted, sum_tau_ww, update_X
    Xd, Xs = ratings(N=40, M=15, frac=0.4, seed=3)
    rng = np.random.default_rng(1)
    sp, dn = observed(Xs.T), observed(Xd.T)
    (M, N), D = sp.Y.shape, 3
    mu, b, tau = rng.normal(size=M), rng.normal(size=N), rng.uniform(0.5, 2, M)
    obs = ~np.isnan(Xd)
    for m_, b_ in ((None, None), (mu, None), (None, b), (mu, b)):
        got = shifted(sp, m_, b_)
        assert got.shape == (N, M) and got.nnz == obs.sum()
        want = Xd - (0 if m_ is None else m_[None, :]) - (0 if b_ is None else b_[:, None])
        np.testing.assert_allclose(got.toarray()[obs], want[obs], rtol=1e-14, atol=1e-14)
        assert np.all(got.toarray()[~obs] == 0)
    assert 0.0 in sp.YT.data and np.array_equal(sp.YT.data, observed(Xs.T).YT.data)   # the data untouched
    W, G = rng.normal(size=(M, D)), rng.normal(size=(M, D, D)) * 0.2
    Sw = G @ G.transpose(0, 2, 1) + 0.1 * np.eye(D)
    for b_ in (None, b):
        xs = update_X(sp, W, sum_tau_ww(sp, W, Sw, tau), mu, tau, b=b_)
        xd = update_X(dn, W, sum_tau_ww(dn, W, Sw, tau), mu, tau, b=b_)
        np.testing.assert_allclose(xs[0], xd[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(xs[1], xd[1], rtol=1e-12, atol=1e-12)
