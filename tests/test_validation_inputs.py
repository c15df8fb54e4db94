"""Bad data matrices, refused the same way everywhere: the one 2-d array check (`vbfa_lit.validation.check_2d`) and
the range check of the variances (`check_variance_range`), directly and through the functions that use them (PPCA,
Householder PPCA, the sample covariance's eigenvalues, the RJMCMC over q, Minka's evidence)."""
import numpy as np
import pytest

import vbfa_lit.validation as validation

X = np.random.default_rng(0).normal(size=(40, 4)) * [3.0, 2.0, 1.0, 0.5]


# ---------------------------------------------------------------- the one check

@pytest.mark.parametrize('bad, error, match', [
    (X.astype(str), TypeError, r'^A: expected numbers, got strings'),
    (X.astype(bytes), TypeError, r'^A: expected numbers, got strings'),
    (X.astype(str).astype(object), TypeError, r'^A: expected numbers, got strings'),
    ([['1.0', 2.0], [3.0, 4.0]], TypeError, r'^A: expected numbers, got strings'),
    (np.array([[{}, 1.0]], dtype=object), TypeError, r'^A: expected numbers'),
    (np.zeros((2, 2), dtype='datetime64[s]'), TypeError, r'^A: expected numbers, got dtype datetime64'),
    (X + 1j, ValueError, r'^A: Complex data not supported'),
    ([[1 + 1j, 2.0], [3.0, 4.0]], ValueError, r'^A: Complex data not supported'),
    (X[0], ValueError, r'^A: expected a 2-d array \(n_samples, n_features\), got 1-d of shape \(4,\)'),
    (X[None], ValueError, r'^A: expected a 2-d array .* got 3-d'),
    (np.where(np.eye(40, 4) > 0, np.inf, X), ValueError, r'^A: contains 4 infinite value\(s\)'),
    (np.where(np.eye(40, 4) > 0, np.nan, X), ValueError, r'^A: contains NaN.*complete data.*VBPCA'),
    (np.ma.masked_array(X, mask=np.eye(40, 4) > 0), ValueError, r'^A: a masked array with 4 masked entries'),
    (np.zeros((0, 3)), ValueError, r'^A: expected at least 1 sample \(row\), got n_samples = 0'),
    (np.zeros((3, 0)), ValueError, r'^A: expected at least 1 feature \(column\), got n_features = 0'),
])
def test_bad_arrays_are_refused_naming_the_argument(bad, error, match):
    with pytest.raises(error, match=match): validation.check_2d('A', bad)


def test_minimum_sizes_and_nan_when_the_caller_allows_it():
    with pytest.raises(ValueError, match=r'^X: expected at least 2 samples \(rows\), got n_samples = 1'):
        validation.check_2d('X', X[:1], min_samples=2)
    with pytest.raises(ValueError, match=r'^X: expected at least 2 features \(columns\), got n_features = 1'):
        validation.check_2d('X', X[:, :1], min_features=2)
    with pytest.raises(TypeError, match='^X: a sparse matrix'):
        import scipy.sparse
        validation.check_2d('X', scipy.sparse.csr_matrix(X))
    Xn = np.where(np.eye(40, 4) > 0, np.nan, X)
    np.testing.assert_array_equal(validation.check_2d('X', Xn, allow_nan=True), Xn)
    masked = validation.check_2d('X', np.ma.masked_array(X, mask=np.eye(40, 4) > 0), allow_nan=True)
    np.testing.assert_array_equal(np.isnan(masked), np.eye(40, 4) > 0)        # masked = missing
    Xn[0, 1] = np.inf
    with pytest.raises(ValueError, match='^X: contains 1 infinite'): validation.check_2d('X', Xn, allow_nan=True)


def test_good_arrays_come_back_as_float64():
    for good in (X, X.astype(np.float32), (X > 0), X.astype(int), X.tolist(), X.astype(object),
                 np.ma.masked_array(X, mask=False)):
        out = validation.check_2d('X', good)
        assert out.dtype == np.float64 and out.shape == X.shape
        np.testing.assert_array_equal(out, np.asarray(np.ma.getdata(good), dtype=float))


def test_variance_range():
    v = np.array([4.0, 1.0, 0.0])
    np.testing.assert_array_equal(validation.check_variance_range('X', v, 2.0 ** 10), v * 2.0 ** 20)
    for unit in (2.0 ** 600, 2.0 ** -600):
        with pytest.raises(ValueError, match=r'^X: its variances \(about 2\^[-0-9]+\) lie outside the floating-point '
                                             r'range; rescale X \(the answer does not depend on its units\)'):
            validation.check_variance_range('X', v, unit)
    with pytest.raises(ValueError, match=r'^data: .* rescale data \(q\)$'):
        validation.check_variance_range('data', [np.inf], why='q')


# ---------------------------------------------------------------- finding 6: strings taken for numbers

def test_laplace_evidence_refuses_strings():
    from vbfa_lit.evidence import laplace_evidence
    with pytest.raises(TypeError, match=r'^data: expected numbers, got strings'): laplace_evidence(X.astype(str))
    with pytest.raises(TypeError, match=r'^data: expected numbers, got strings'):
        laplace_evidence(np.array(['3.0', '2.0', '1.0']), 40)                       # eigenvalues as strings


def test_rjmcmc_pca_refuses_strings():
    from vbfa_lit.rjmcmc import rjmcmc_pca, sample_eigenvalues
    with pytest.raises(TypeError, match=r'^X: expected numbers, got strings'):
        rjmcmc_pca(X.astype(str), n_sweeps=20, burn_in=10)
    with pytest.raises(TypeError, match=r'^X: expected numbers, got strings'): sample_eigenvalues(X.astype(str))


@pytest.mark.parametrize('call', ['ppca_ml', 'ppca_em', 'sample_covariance_eigenvalues', 'sufficient_statistics'])
def test_every_complete_data_method_refuses_strings(call):
    from vbfa_lit.data import sample_covariance_eigenvalues
    from vbfa_lit.householder_ppca import sufficient_statistics
    from vbfa_lit.ppca import ppca_em, ppca_ml
    fn = dict(ppca_ml=lambda A: ppca_ml(A, 1), ppca_em=lambda A: ppca_em(A, 1),
              sample_covariance_eigenvalues=sample_covariance_eigenvalues,
              sufficient_statistics=sufficient_statistics)[call]
    with pytest.raises(TypeError, match=r'^X: expected numbers, got strings'): fn(X.astype(str))
    with pytest.raises(ValueError, match=r'^X: expected a 2-d array'): fn(X[0])


# ---------------------------------------------------------------- finding 8: Householder PPCA on data beyond float64

@pytest.mark.parametrize('c', [1e200, 1e-200])
def test_householder_ppca_asks_to_rescale_before_sampling(c, monkeypatch):
    import importlib
    hp = importlib.import_module('vbfa_lit.householder_ppca')     # the package's name householder_ppca is the function
    def no_sampling(*a, **k): raise AssertionError('sampling started')
    monkeypatch.setattr(hp, '_run_nuts', no_sampling)
    with pytest.raises(ValueError, match=r'^X: its variances \(about 2\^-?\d+\) lie outside the floating-point '
                                         r'range; rescale X'):
        hp.householder_ppca(X * c, 1, num_warmup=10, num_samples=10, num_chains=1)
    with pytest.raises(ValueError, match='rescale X'): hp.sufficient_statistics(X * c)


def test_sufficient_statistics_hold_at_the_ends_of_the_range():
    from vbfa_lit.householder_ppca import sufficient_statistics
    s = sufficient_statistics(X)
    for k in (509, -500):        # X * 2^k: the variances, 2^(2k) times, are still floats (but 40 of them are not)
        t = sufficient_statistics(X * 2.0 ** k)
        np.testing.assert_allclose(t.cov, s.cov * 2.0 ** (2 * k), rtol=1e-13)
        np.testing.assert_allclose(t.mean, s.mean * 2.0 ** k, rtol=1e-13)
