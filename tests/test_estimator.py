"""Tests of `vbfa_lit.estimator.VBPCA`: scikit-learn's estimator checks, every bad input, warnings, and the values
of transform / inverse_transform / score_samples against independent computations (explicit loops, SciPy)."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sparse
from scipy.stats import multivariate_normal
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from vbfa_lit.estimator import VBPCA, ConvergenceWarning, MissingDataWarning, NotFittedError
from vbfa_lit.notation import gamma_moments
from vbfa_lit.engine import observed, sweep


# Convergence is tested on its own; elsewhere short fits are enough and their ConvergenceWarnings are noise.
pytestmark = pytest.mark.filterwarnings('ignore::vbfa_lit.estimator.ConvergenceWarning')


@pytest.fixture(autouse=True, scope='module')
def one_blas_thread():
    "The matrices here are tiny: threaded BLAS only adds synchronisation cost (large on a loaded machine)."
    with threadpool_limits(1):
        yield


def low_rank(seed=0, N=100, M=10, scales=(3.0, 2.0, 1.0), sigma=0.3, missing=0.2):
    "Rank-len(scales) data with distinct component scales, a mean, isotropic noise `sigma` and a random missing mask."
    rng = np.random.default_rng(seed)
    W = np.linalg.qr(rng.normal(size=(M, len(scales))))[0] * np.array(scales) * np.sqrt(M) / 2
    mu = rng.normal(size=M)
    full = rng.normal(size=(N, len(scales))) @ W.T + mu + sigma * rng.normal(size=(N, M))
    hold = rng.random(full.shape) < missing
    return np.where(hold, np.nan, full), full, hold, W, mu


@pytest.fixture(scope='module')
def fitted():
    "One ARD fit on rank-3 data with 20% missing, shared by the read-only tests."
    X, full, hold, W, mu = low_rank(seed=6)                # converges in about 450 sweeps
    with warnings.catch_warnings():
        warnings.simplefilter('error', ConvergenceWarning)
        est = VBPCA(random_state=0).fit(X)
    return est, X, full, hold


# --- scikit-learn's own checks ---------------------------------------------------------------------------------
# Every check of scikit-learn 1.9's check_estimator runs; none is expected to fail. scikit-learn itself skips
# `check_array_api_input` (it raises SkipTest unless SCIPY_ARRAY_API=1 is set before SciPy is imported); VBPCA
# declares no array-API support, and the check would only feed it NumPy arrays, which every other check covers.
# scikit-learn also warns at collection that VBPCA does not inherit from BaseEstimator: on purpose, the package
# must not import scikit-learn at runtime, so VBPCA implements the protocol (get_params, set_params, tags) itself.
@pytest.mark.filterwarnings('ignore::UserWarning')
@parametrize_with_checks([VBPCA()])
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_top_level_reexport():
    from vbfa_lit import VBPCA as top_level
    assert top_level is VBPCA


# --- bad input: every error names its argument -----------------------------------------------------------------
X_ok = low_rank(N=20, M=4)[0]

@pytest.mark.parametrize('X, exc, match', [
    (np.array([[1.0, np.inf], [2, 3], [4, 5]]), ValueError, r'^X: contains 1 infinite'),
    (np.array([[1.0, -np.inf], [2, 3], [4, -np.inf]]), ValueError, r'^X: contains 2 infinite'),
    (np.array([['a', 'b'], ['c', 'd']]), TypeError, r'^X: expected numbers'),
    (np.array([[1.0, '2'], [3, 4]], dtype=object), TypeError, r'^X: expected numbers, got strings'),
    (np.array([[1.0, {'a': 1}], [3, 4]], dtype=object), TypeError, r'^X: expected numbers'),
    (np.ones((3, 2)) + 1j, ValueError, r'^X: Complex data not supported'),
    (np.array([[1.0, 1 + 2j], [3, 4]], dtype=object), ValueError, r'^X: Complex data not supported'),
    (np.array(['2020-01-01', '2020-01-02'], dtype='datetime64[D]').reshape(2, 1), TypeError, r'^X: expected numbers'),
    (np.ones(5), ValueError, r'^X: expected a 2-d array.*1-d'),
    (np.ones((3, 2, 2)), ValueError, r'^X: expected a 2-d array.*3-d'),
    (np.array(3.0), ValueError, r'^X: expected a 2-d array.*0-d'),
    ([[1.0, 2.0], [3.0]], ValueError, r'^X: could not be read'),
    (np.ones((1, 4)), ValueError, r'^X: expected at least 2 samples.*n_samples = 1'),
    (np.empty((0, 3)), ValueError, r'^X: found array with 0 sample'),
    (np.empty((5, 0)), ValueError, r'^X: found array with 0 feature'),
    (np.full((4, 3), np.nan), ValueError, r'^X: no observed value'),
    (sparse.csr_matrix(np.eye(4)), TypeError, r"^X: sparse input needs VBPCA\(missing_values='unstored'\)"),
    (sparse.csr_array(np.eye(4)), TypeError, r"^X: sparse input needs VBPCA\(missing_values='unstored'\)"),
])
def test_bad_X(X, exc, match):
    with pytest.raises(exc, match=match):
        VBPCA(max_iter=5).fit(X)


def invalid(name): # scikit-learn's message for a hyperparameter outside its declared constraint
    return rf"^The '{name}' parameter of VBPCA must be"


@pytest.mark.parametrize('params, exc, match', [
    (dict(n_components=0), ValueError, invalid('n_components')),
    (dict(n_components=-2), ValueError, invalid('n_components')),
    (dict(n_components=5), ValueError, r'^n_components: expected at most n_features = 4'),
    (dict(n_components=2.0), TypeError, invalid('n_components')),
    (dict(n_components='2'), TypeError, invalid('n_components')),
    (dict(n_components=True), TypeError, r'^n_components: expected a number, got True'),
    (dict(prior='bishop'), ValueError, invalid('prior') + r" a str among \{'(ard|broad)', '(ard|broad)'\}"),
    (dict(prior=None), ValueError, invalid('prior')),
    (dict(noise='isotropic'), ValueError, invalid('noise')),
    (dict(transformations='spin'), ValueError, invalid('transformations')),
    (dict(transformations=None), ValueError, invalid('transformations')),
    (dict(warmup_sweeps=-1), ValueError, invalid('warmup_sweeps')),
    (dict(warmup_sweeps=1.5), TypeError, invalid('warmup_sweeps')),
    (dict(max_iter=0), ValueError, invalid('max_iter')),
    (dict(max_iter=-3), ValueError, invalid('max_iter')),
    (dict(max_iter=10.5), TypeError, invalid('max_iter')),
    (dict(max_iter=100.0), TypeError, invalid('max_iter')),
    (dict(max_iter='100'), TypeError, invalid('max_iter')),
    (dict(max_iter=None), TypeError, invalid('max_iter')),
    (dict(tol=-1e-6), ValueError, invalid('tol')),
    (dict(tol=np.nan), ValueError, invalid('tol')),
    (dict(tol='small'), TypeError, invalid('tol')),
    (dict(effective_tol=-0.1), ValueError, invalid('effective_tol')),
    (dict(storage='csc'), ValueError, invalid('storage')),
    (dict(progress='yes'), TypeError, invalid('progress')),
    (dict(random_state=-1), ValueError, invalid('random_state')),
    (dict(random_state='seed'), TypeError, invalid('random_state')),
    (dict(random_state=1.5), TypeError, invalid('random_state')),
    (dict(n_jobs=1.5), TypeError, invalid('n_jobs')),
    (dict(callback='print'), TypeError, invalid('callback')),
] + [(dict([(name, value)]), ValueError, invalid(name))
     for name in ('beta', 'a_alpha', 'b_alpha', 'a_tau', 'b_tau', 'alpha_broad') for value in (0, -1e-5, np.inf, np.nan)]
  + [(dict([(name, value)]), TypeError, invalid(name))
     for name in ('beta', 'a_alpha', 'b_alpha', 'a_tau', 'b_tau', 'alpha_broad') for value in ('1e-5', None)]
  + [(dict([(name, True)]), TypeError, rf'^{name}: expected a number, got True')
     for name in ('beta', 'a_alpha', 'b_alpha', 'a_tau', 'b_tau', 'alpha_broad', 'max_iter', 'n_jobs')])
def test_bad_hyperparameters(params, exc, match):
    est = VBPCA(**{'max_iter': 5, **params})               # __init__ only stores: no error yet
    assert all(getattr(est, k) is v for k, v in params.items())
    with pytest.raises(exc, match=match):
        est.fit(X_ok)


def test_object_arrays():
    "Object arrays of numbers are numbers; None in them is read as NaN (missing), as NumPy's float conversion does."
    X = X_ok.astype(object)
    X[0, 0] = None
    a = VBPCA(max_iter=30, random_state=0).fit(X)
    b = VBPCA(max_iter=30, random_state=0).fit(np.where(np.equal(X, None), np.nan, X).astype(float))
    np.testing.assert_array_equal(a.components_, b.components_)


def test_valid_edge_hyperparameters():
    "The boundaries that are allowed: n_components == n_features, tol == 0, numpy integer types."
    with pytest.warns(ConvergenceWarning):                  # tol=0 can only stop at max_iter
        est = VBPCA(n_components=np.int64(4), max_iter=np.int32(3), tol=0.0, random_state=np.int64(1)).fit(X_ok)
    assert est.n_components_ == 4 and est.components_.shape == (4, 4) and est.n_iter_ == 3


def test_bad_input_after_fit(fitted):
    est, X = fitted[:2]
    with pytest.raises(ValueError, match=r'^X has 9 features, but VBPCA is expecting 10 features as input'):
        est.transform(X[:, :-1])
    with pytest.raises(ValueError, match=r'^X has 9 features'):
        est.score_samples(X[:, :-1])
    with pytest.raises(ValueError, match=r'^X: expected a 2-d array'):
        est.transform(X[0])
    with pytest.raises(ValueError, match=r'^X: contains 1 infinite'):
        est.transform(np.where(np.arange(10) == 3, np.inf, X[:1]))
    with pytest.raises(TypeError, match=r'^X: sparse input'):
        est.transform(sparse.csr_matrix(np.nan_to_num(X)))
    with pytest.raises(ValueError, match=r'^Z has 2 columns, but VBPCA has n_components_ = 9'):
        est.inverse_transform(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r'^Z: contains NaN'):
        est.inverse_transform(np.full((3, 9), np.nan))
    with pytest.raises(ValueError, match=r'^Z: contains 1 infinite'):
        est.inverse_transform(np.where(np.arange(9) == 0, np.inf, 0.0)[None])


@pytest.mark.parametrize('method', ['transform', 'inverse_transform', 'score_samples', 'score'])
def test_unfitted(method):
    with pytest.raises(NotFittedError, match='not fitted yet'):
        getattr(VBPCA(), method)(X_ok)
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


# --- the input array is never modified -----------------------------------------------------------------------------
@pytest.mark.parametrize('storage', ['dense', 'sparse'])
def test_input_not_modified(storage):
    X = low_rank(N=30, M=5)[0]
    X[3] = np.nan                                          # an empty row
    before = X.copy()
    X.setflags(write=False)                                # any in-place write would raise
    with pytest.warns(MissingDataWarning):
        est = VBPCA(max_iter=200, storage=storage, random_state=0).fit(X)
    Z = est.transform(X)
    with pytest.warns(MissingDataWarning):
        est.fit_transform(X)
    est.score_samples(X)
    Z_before = Z.copy()
    est.inverse_transform(Z)
    np.testing.assert_array_equal(X, before)               # equal_nan by default: the NaNs are where they were
    np.testing.assert_array_equal(Z, Z_before)


# --- warnings -----------------------------------------------------------------------------------------------------------
def test_empty_rows_and_columns_warn_and_keep_their_prior():
    X = low_rank(N=40, M=6)[0]
    X[[5, 17], :] = np.nan
    X[:, 2] = np.nan
    with pytest.warns(MissingDataWarning) as record:
        est = VBPCA(noise='per_feature', max_iter=300, random_state=0).fit(X)
    messages = sorted(str(w.message) for w in record if issubclass(w.category, MissingDataWarning))
    assert len(messages) == 2
    assert messages[0].startswith('X: 1 of 6 features (columns) have no observed value')
    assert messages[1].startswith('X: 2 of 40 samples (rows) have no observed value')
    Z = est.transform(X)
    np.testing.assert_array_equal(Z[[5, 17]], 0.0)         # q(x_n) at its prior: mean 0
    assert est.mean_[2] == 0.0                             # q(mu_m) at its prior N(0, 1/beta)
    np.testing.assert_allclose(est.posterior_.vmu[2], 1 / est.beta)
    np.testing.assert_allclose(est.noise_variance_[2], est.scale_ ** 2 * est.b_tau / est.a_tau)   # q(tau_m) = p(tau_m), in the units of X
    assert np.isfinite(est.noise_variance_).all() and np.isfinite(est.components_).all()


def test_no_warning_without_empty_rows_or_columns(fitted):
    X = fitted[1]
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        VBPCA(max_iter=500, tol=1e-3, random_state=0).fit(X)


def test_convergence_warning():
    X = low_rank()[0]
    with pytest.warns(ConvergenceWarning, match=r'max_iter=3 sweeps were used up'):
        est = VBPCA(max_iter=3, random_state=0).fit(X)
    assert est.n_iter_ == 3 and len(est.elbo_) == 3 and not est.converged_
    assert issubclass(ConvergenceWarning, UserWarning)


# --- what fit learns ---------------------------------------------------------------------------------------------
def test_attributes(fitted):
    est, X = fitted[:2]
    q = est.posterior_
    N, M = X.shape
    assert est.n_features_in_ == M and est.n_components_ == M - 1 and est.converged_
    assert est.components_.shape == (M - 1, M) and est.mean_.shape == (M,) and est.alpha_.shape == (M - 1,)
    # the posterior lives in the fitted units (X - center_) / scale_; the attributes are in the units of X
    np.testing.assert_allclose(est.center_, np.nanmean(X, 0), rtol=1e-12)
    np.testing.assert_allclose(est.scale_, np.sqrt(np.nanmean((X - np.nanmean(X, 0)) ** 2)), rtol=1e-12)
    np.testing.assert_allclose(est.components_, est.scale_ * q.W.T, rtol=1e-14)
    np.testing.assert_allclose(est.mean_, est.center_ + est.scale_ * q.mu, rtol=1e-14)
    np.testing.assert_allclose(est.alpha_, q.a_alpha / q.b_alpha)
    assert isinstance(est.noise_variance_, float)
    np.testing.assert_allclose(est.noise_variance_, est.scale_ ** 2 / gamma_moments(q.a_tau, q.b_tau)[0][0])
    assert est.elbo_.shape == (est.n_iter_,) and np.isclose(est.elbo_terms_.total, est.elbo_[-1])
    assert est.n_effective_components_ == 3 == est.effective_components_.sum()
    assert est.prior_.w.a_alpha == est.a_alpha


def test_elbo_never_decreases(fitted):
    elbo = fitted[0].elbo_
    assert np.diff(elbo).min() >= -1e-9 * abs(elbo[-1])


def test_recovers_noise_and_held_out_values(fitted):
    est, X, full, hold = fitted
    # ~800 observed values: the relative sd of a variance estimate is sqrt(2 / 800) = 5%, so 15% is 3 sd
    assert abs(est.noise_variance_ / 0.3 ** 2 - 1) < 0.15
    rec = est.inverse_transform(est.transform(X))
    rmse = np.sqrt(np.mean((rec - full)[hold] ** 2))
    column_means = np.sqrt(np.mean((np.nanmean(X, 0) - full)[hold] ** 2))
    assert rmse < column_means / 3, (rmse, column_means)   # about 0.37 against 2.0 for mean imputation


@pytest.mark.parametrize('noise, shape', [('shared', ()), ('per_feature', (6,))])
def test_noise_variance_shape(noise, shape):
    X = low_rank(N=40, M=6)[0]
    est = VBPCA(noise=noise, max_iter=200, random_state=0).fit(X)
    assert np.shape(est.noise_variance_) == shape
    assert isinstance(est.noise_variance_, float) == (noise == 'shared')
    assert np.all(np.asarray(est.noise_variance_) > 0)


def test_broad_prior_keeps_all_components_ard_does_not(fitted):
    ard, X = fitted[:2]
    broad = VBPCA(prior='broad', random_state=0).fit(X)
    np.testing.assert_array_equal(broad.alpha_, broad.alpha_broad)
    assert broad.posterior_.a_alpha is None
    assert broad.n_effective_components_ == broad.n_components_ == 9
    assert ard.n_effective_components_ == 3


def test_default_n_components():
    assert VBPCA(max_iter=20).fit(X_ok).n_components_ == 3
    with pytest.warns(MissingDataWarning, match='5 of 20 samples'):     # rows whose one value is missing
        one = VBPCA(max_iter=20).fit(X_ok[:, :1])              # n_features == 1: D = 1, not 0
    assert one.n_components_ == 1 and one.components_.shape == (1, 1)


@pytest.mark.parametrize('noise', ['shared', 'per_feature'])
def test_dense_and_sparse_storage_agree(noise):
    X = low_rank(N=40, M=6)[0]
    a = VBPCA(noise=noise, storage='dense', max_iter=100, random_state=3).fit(X)
    b = VBPCA(noise=noise, storage='sparse', max_iter=100, random_state=3).fit(X)
    np.testing.assert_allclose(a.elbo_, b.elbo_, rtol=1e-10)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-8, atol=1e-10)


# --- transform, inverse_transform ---------------------------------------------------------------------------------
def test_transform_matches_explicit_update(fitted):
    "transform == the q(x_n) update written out row by row, with the sums over each row's observed entries."
    est, X = fitted[:2]
    q = est.posterior_
    tau = q.a_tau[0] / q.b_tau[0]
    Z = est.transform(X)
    assert Z.shape == (X.shape[0], est.n_components_)
    X = (X - est.center_) / est.scale_                                   # the fitted units of the posterior
    for n in (0, 1, 7, 42):
        o = ~np.isnan(X[n])
        ww = sum(np.outer(q.W[m], q.W[m]) + q.Sw[m % len(q.Sw)] for m in np.flatnonzero(o))
        Sx = np.linalg.inv(np.eye(est.n_components_) + tau * ww)
        np.testing.assert_allclose(Z[n], Sx @ (tau * q.W[o].T @ (X[n, o] - q.mu[o])), rtol=1e-9, atol=1e-12)


def test_transform_of_training_data_is_the_next_q_x_update(fitted):
    est, X = fitted[:2]
    Z = est.transform(X)
    Xs = (X - est.center_) / est.scale_                                   # the fitted units of the posterior
    q_next, _ = sweep(observed(Xs.T), est.posterior_, est.prior_, True)    # starts with the q(X) update
    np.testing.assert_allclose(Z, q_next.X, rtol=1e-10, atol=1e-12)
    # converged: that update moves the means by far less than their posterior standard deviations
    sd = np.sqrt(np.diagonal(q_next.Sx, axis1=1, axis2=2))
    assert np.abs(Z - est.posterior_.X).max() < 0.1 * sd.min()


def test_transform_rows_are_independent(fitted):
    est, X = fitted[:2]
    Z = est.transform(X)
    np.testing.assert_allclose(est.transform(X[10:13]), Z[10:13], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.transform(X[::-1]), Z[::-1], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(est.transform(np.full((2, 10), np.nan)), 0.0)


def test_inverse_transform(fitted):
    est = fitted[0]
    Z = np.random.default_rng(1).normal(size=(5, est.n_components_))
    Xr = est.inverse_transform(Z)
    assert Xr.shape == (5, est.n_features_in_)
    np.testing.assert_allclose(Xr, est.scale_ * ((est.posterior_.W @ Z.T).T + est.posterior_.mu) + est.center_, rtol=1e-12)


def test_fit_transform_is_fit_then_transform():
    X = low_rank(N=40, M=6)[0]
    a = VBPCA(max_iter=200, random_state=2).fit_transform(X)
    b = VBPCA(max_iter=200, random_state=2).fit(X).transform(X)
    np.testing.assert_array_equal(a, b)


# --- score_samples / score ---------------------------------------------------------------------------------------------
def scipy_scores(est, X):
    "log N(x_o | mean_o, C_oo) per row with SciPy, C = components_.T components_ + diag(noise_variance_)."
    psi = np.broadcast_to(est.noise_variance_, (est.n_features_in_,))
    C = est.components_.T @ est.components_ + np.diag(psi)
    out = []
    for x in X:
        o = ~np.isnan(x)
        out.append(multivariate_normal(est.mean_[o], C[np.ix_(o, o)]).logpdf(x[o]) if o.any() else 0.0)
    return np.array(out)


@pytest.mark.parametrize('noise', ['shared', 'per_feature'])
@pytest.mark.parametrize('missing', [0.0, 0.3])
def test_score_samples_against_scipy(noise, missing):
    X = low_rank(seed=4, N=30, M=5, scales=(2.0, 1.0), missing=missing)[0]
    est = VBPCA(noise=noise, tol=1e-4, random_state=0).fit(X)
    X_new = low_rank(seed=5, N=12, M=5, scales=(2.0, 1.0), missing=missing)[0]
    X_new[0] = np.nan                                       # nothing observed: log density 0
    s = est.score_samples(X_new)
    assert s.shape == (12,) and s[0] == 0.0
    np.testing.assert_allclose(s, scipy_scores(est, X_new), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.score(X_new), s.mean(), rtol=1e-12)


# --- parameters, cloning, reproducibility ------------------------------------------------------------------------
def test_get_params_set_params_round_trip():
    est = VBPCA(4, prior='broad', noise='per_feature', max_iter=77, tol=1e-4, random_state=5, beta=0.1,
                a_alpha=0.2, b_alpha=0.3, a_tau=0.4, b_tau=0.5, alpha_broad=0.6, effective_tol=0.05, storage='dense',
                missing_values='unstored', engine='numpy')
    params = est.get_params()
    assert params == VBPCA(**params).get_params()
    assert params['n_components'] == 4 and params['alpha_broad'] == 0.6 and params['engine'] == 'numpy'
    assert len(params) == 24                    # mean_prior (lesson 08) the 23rd, posterior (lesson 15) the 24th
    assert clone(est).get_params() == params
    other = VBPCA()
    assert other.set_params(**params) is other and other.get_params() == params
    assert repr(other) == repr(est) and repr(VBPCA()) == 'VBPCA()'
    assert repr(VBPCA(3, prior='broad')) == "VBPCA(n_components=3, prior='broad')"
    with pytest.raises(ValueError, match="Invalid parameter 'n_component' for estimator VBPCA"):
        other.set_params(n_component=3)


def test_reproducible_with_random_state():
    X = low_rank(N=40, M=6)[0]
    fit = lambda rs: VBPCA(max_iter=100, random_state=rs).fit(X)
    a, b, c = fit(11), fit(11), fit(12)
    np.testing.assert_array_equal(a.elbo_, b.elbo_)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.elbo_, c.elbo_)                 # a different seed: a different initial W
    g = fit(np.random.default_rng(11))                          # a Generator seeded alike gives the same stream
    np.testing.assert_array_equal(a.components_, g.components_)
    gen = np.random.default_rng(0)
    est = VBPCA(max_iter=100, random_state=gen)
    first, second = est.fit(X).elbo_.copy(), est.fit(X).elbo_   # a Generator advances between fits
    assert not np.array_equal(first, second)


def test_pickle_round_trip(fitted):
    est, X = fitted[:2]
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    np.testing.assert_array_equal(back.score_samples(X), est.score_samples(X))


def test_progress_bar(capsys):
    X = low_rank(N=30, M=5)[0]
    with pytest.warns(ConvergenceWarning):
        VBPCA(max_iter=20, tol=0.0, progress=False, random_state=0).fit(X)
    assert capsys.readouterr().err == ''
    with pytest.warns(ConvergenceWarning):
        VBPCA(max_iter=20, tol=0.0, progress=True, random_state=0).fit(X)
    err = capsys.readouterr().err
    assert 'VBPCA' in err and '20/20' in err and 'elbo=' in err


# --- what users look for: missing values in other spellings, names, pandas output, attributes -------------------------
def test_masked_array_mask_means_missing():
    "A numpy.ma mask marks missing entries, whatever value lies beneath: the fit equals the fit with NaN there."
    X = low_rank(N=60, M=5, missing=0.0)[0]
    hide = np.random.default_rng(1).random(X.shape) < 0.2
    masked = np.ma.masked_array(np.where(hide, 1e6, X), mask=hide)      # a huge value under the mask
    a = VBPCA(max_iter=200, random_state=0).fit(masked)
    b = VBPCA(max_iter=200, random_state=0).fit(np.where(hide, np.nan, X))
    np.testing.assert_array_equal(a.elbo_, b.elbo_)
    np.testing.assert_array_equal(a.transform(masked), b.transform(np.where(hide, np.nan, X)))


def test_pandas_nullable_na_means_missing_and_names_are_kept():
    pd = pytest.importorskip('pandas')
    X = low_rank(N=60, M=4, missing=0.15)[0]
    df = pd.DataFrame({f'f{i}': pd.array(X[:, i], dtype='Float64') for i in range(4)})
    df.iloc[3, 1] = pd.NA
    X[3, 1] = np.nan
    assert df['f1'].isna().sum() == np.isnan(X[:, 1]).sum()
    a = VBPCA(max_iter=200, random_state=0).fit(df)
    b = VBPCA(max_iter=200, random_state=0).fit(X)
    np.testing.assert_allclose(a.elbo_, b.elbo_, rtol=1e-10)          # a DataFrame's values are column-major: other rounding
    assert list(a.feature_names_in_) == ['f0', 'f1', 'f2', 'f3'] and not hasattr(b, 'feature_names_in_')
    assert list(a.get_feature_names_out()) == [f'vbpca{i}' for i in range(a.n_components_)]
    with pytest.raises(ValueError, match='feature names should match'):
        a.transform(df[['f1', 'f0', 'f2', 'f3']])
    ints = pd.DataFrame({'a': pd.array([1, 2, pd.NA, 4, 5], dtype='Int64'), 'b': [2.0, 4.1, 6.0, 7.9, 10.2]})
    assert VBPCA(max_iter=50, random_state=0).fit(ints).n_features_in_ == 2


def test_object_array_with_pandas_na():
    pd = pytest.importorskip('pandas')
    X = np.array([[1.0, 2.0], [pd.NA, 4.1], [3.0, 6.2], [4.0, pd.NA], [5.0, 9.8]], dtype=object)
    from vbfa_lit.estimator import check_data
    np.testing.assert_array_equal(np.isnan(check_data(X)), [[0, 0], [1, 0], [0, 0], [0, 1], [0, 0]])


def test_set_output_pandas_keeps_the_index():
    pd = pytest.importorskip('pandas')
    X = low_rank(N=30, M=4, missing=0.1)[0]
    df = pd.DataFrame(X, columns=list('abcd'), index=[f'r{i}' for i in range(30)])
    est = VBPCA(n_components=2, max_iter=100, random_state=0).set_output(transform='pandas')
    Z = est.fit_transform(df)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == ['vbpca0', 'vbpca1'] and list(Z.index) == list(df.index)
    np.testing.assert_array_equal(Z.to_numpy(), est.set_output(transform='default').transform(df))
    with pytest.raises(ValueError, match='excel'):
        est.set_output(transform='excel').transform(df)


def test_random_state_accepts_a_legacy_randomstate():
    X = low_rank(N=40, M=5)[0]
    a = VBPCA(max_iter=50, random_state=np.random.RandomState(3)).fit(X)
    b = VBPCA(max_iter=50, random_state=np.random.RandomState(3)).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)


def test_float32_in_float32_out():
    X = low_rank(N=40, M=5)[0].astype(np.float32)
    est = VBPCA(max_iter=100, random_state=0).fit(X)
    Z = est.transform(X)
    assert Z.dtype == np.float32 and est.inverse_transform(Z).dtype == np.float32
    assert est.transform(X.astype(float)).dtype == np.float64


def test_explained_variance_matches_pca_on_complete_data():
    "Many samples, nothing missing: the posterior's explained variances are PCA's, to the sampling error of the"
    " N - 1 against N divisor (1/N = 5e-5) and VB's small shrinkage."
    from sklearn.decomposition import PCA
    rng = np.random.default_rng(0)
    W = np.linalg.qr(rng.normal(size=(6, 2)))[0] * [2.0, 1.0]
    X = rng.normal(size=(20000, 2)) @ W.T + 0.4 * rng.normal(size=(20000, 6)) + 50
    ours = VBPCA(n_components=2, noise='shared', random_state=0).fit(X)
    pca = PCA(n_components=2).fit(X)
    np.testing.assert_allclose(ours.explained_variance_, pca.explained_variance_, rtol=1e-3)
    np.testing.assert_allclose(ours.explained_variance_ratio_, pca.explained_variance_ratio_, rtol=1e-3)
    # components_ are ordered like PCA's and point along its axes
    cos = np.abs(np.sum(ours.components_ / np.linalg.norm(ours.components_, axis=1, keepdims=True) * pca.components_, 1))
    np.testing.assert_allclose(cos, 1, atol=1e-4)


def test_columns_ordered_by_size_and_bound_unchanged_by_the_ordering():
    from vbfa_lit.estimator import _ordered_columns
    from vbfa_lit.vbpca import random_posterior, Prior
    from vbfa_lit.engine import elbo
    from vbfa_lit.ard import ARD
    rng = np.random.default_rng(0)
    q = random_posterior(rng, 6, 9, 4, ard=True)
    Y = rng.normal(size=(6, 9)); Y[rng.random(Y.shape) < 0.3] = np.nan
    data, prior = observed(Y), Prior(w=ARD())
    q2 = _ordered_columns(q)
    np.testing.assert_allclose(elbo(data, q2, prior).total, elbo(data, q.__class__(*q), prior).total, rtol=1e-12)
    ww = np.sum(q2.W ** 2, 0) + np.einsum('kdd->d', q2.Sw)
    assert np.all(np.diff(ww) <= 0)
    np.testing.assert_allclose(q2.W @ q2.X.T, q.W @ q.X.T, rtol=1e-12)


# --- degenerate data: warnings instead of silent nonsense ---------------------------------------------------------------
def degenerate_warnings(X, **params):
    from vbfa_lit.estimator import DegenerateDataWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        est = VBPCA(random_state=0, **params).fit(X)
    return est, [str(w.message) for w in caught if issubclass(w.category, DegenerateDataWarning)]


def test_nothing_varies_keeps_no_component():
    est, messages = degenerate_warnings(np.ones((10, 4)))
    assert est.n_effective_components_ == 0 and any('no feature varies' in m for m in messages)
    assert np.all(np.isfinite(est.components_)) and np.allclose(est.mean_, 1)


def test_tiny_data_that_keeps_nothing_says_so():
    est, messages = degenerate_warnings(np.array([[1.0, 2.1], [2, 3.9], [3, 6.2]]))
    assert est.n_effective_components_ == 0
    assert any('kept no component' in m for m in messages) and any('handful' in m for m in messages)


def test_duplicated_column_is_reported():
    X = low_rank(N=80, M=5, missing=0.0)[0]
    X[:, 4] = X[:, 0]
    est, messages = degenerate_warnings(X, noise='per_feature')
    assert any('reproduce feature(s) 0, 4' in m or 'reproduce feature(s) 4' in m for m in messages), messages
    assert np.all(np.isfinite(est.noise_variance_))


def test_ordinary_data_gives_no_degenerate_warning(fitted):
    _, messages = degenerate_warnings(fitted[1])
    assert messages == []


def test_help_shows_parameters_attributes_and_an_example():
    import pydoc
    import vbfa_lit
    text = pydoc.render_doc(VBPCA, renderer=pydoc.plaintext)
    for section in ('Parameters', 'Attributes', 'Examples', 'References', 'n_components', 'explained_variance_'):
        assert section in text
    assert vbfa_lit.__doc__ and 'VBPCA' in vbfa_lit.__doc__


def test_docstring_example_runs():
    import doctest
    from vbfa_lit import estimator
    result = doctest.run_docstring_examples(VBPCA, {}, verbose=False)   # prints failures, returns None
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(VBPCA, 'VBPCA', globs={}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5


def test_package_docstring_example_runs():
    import doctest
    import vbfa_lit
    test = doctest.DocTestParser().get_doctest(vbfa_lit.__doc__, {}, 'vbfa_lit', None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0 and runner.tries == 6


def test_progress_bar_ends_where_the_fit_converged(capsys):
    # issue 21: the bar stopped at "85/5000 2%" when the fit converged, which looked like a crash
    X = np.random.default_rng(0).normal(size=(60, 4)) @ np.diag([3.0, 1.0, 0.3, 0.3])
    est = VBPCA(progress=True, random_state=0).fit(X)
    assert est.converged_
    err = capsys.readouterr().err
    assert f'(converged): 100%' in err and f'{est.n_iter_}/{est.n_iter_}' in err


def test_transform_keeps_the_effective_components_first():
    X = np.random.default_rng(1).normal(size=(200, 3)) @ np.random.default_rng(2).normal(size=(3, 10))
    X += 0.1 * np.random.default_rng(3).normal(size=X.shape)
    est = VBPCA(random_state=0).fit(X)
    k = est.n_effective_components_
    assert 0 < k < est.n_components_ and est.effective_components_[:k].all() and not est.effective_components_[k:].any()
    np.testing.assert_array_equal(est.transform(X)[:, est.effective_components_], est.transform(X)[:, :k])
