"""A bias per sample as well as per feature (lesson 08): the derivation, the reference, the engine, the estimator option
and the ratings generator."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sparse
from scipy import stats

from vbfa_lit.ard import ARD
from vbfa_lit.engine import (BiasedPosterior, ElboTerms, LocalRunner, elbo, fit_vbfa, init_posterior, observed,
                             row_blocks, sweep)
from vbfa_lit.estimator import VBPCA, latent_bias_posterior
from vbfa_lit.ratings import (make_ratings, random_biased_posterior, reference_biased_bound, reference_biased_sweep,
                              reference_q_b, reference_q_gamma, reference_q_tau_biased)
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.transformations import transform_posterior
from vbfa_lit.vbpca import FixedAlpha, Posterior, Prior, reference_q_mu, reference_q_w, reference_q_x

ENGINES = ['numpy'] + (['numba'] if numba_available() else [])


def awkward(seed, M=18, N=30, missing=0.5):
    """Y (M, N) that looks like real data at its worst: offsets per feature and per sample, features on very different
    scales, a constant feature, heavy missingness (every row and column keeps an observed value)."""
    rng = np.random.default_rng(seed)
    Y = (rng.normal(size=(M, 3)) @ rng.normal(size=(3, N)) + rng.normal(0, 50, (M, 1)) + rng.normal(0, 8, (1, N))
         + 0.1 * rng.normal(size=(M, N))) * np.exp(rng.normal(0, 2, (M, 1)))
    Y[0] = 7.0                                                            # a constant feature
    hide = rng.random(Y.shape) < missing
    hide[np.arange(M), rng.integers(0, N, M)] = False
    hide[rng.integers(0, M, N), np.arange(N)] = False
    Y[hide] = np.nan
    return Y


def relative_difference(q, q_ref, L, L_ref):
    worst = abs(L / L_ref - 1)
    for a, b in zip(q, q_ref):
        if b is None: assert a is None; continue
        worst = max(worst, np.abs(np.broadcast_to(a, b.shape) - b).max() / np.abs(b).max())
    return worst


# ---------------------------------------------------------------------------------------------------------------------
# the bound: every step of a sweep, and whole fits on every storage, kernel set and block count
# ---------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('seed', range(4))
def test_no_single_update_lowers_the_bound(seed):
    Y = awkward(seed, missing=[0.2, 0.5, 0.7, 0.5][seed])
    shared, prior = seed % 2 == 0, Prior(w=ARD() if seed < 2 else FixedAlpha(1e-3), a_gamma=1e-3, b_gamma=1e-3)
    q = reference_biased_sweep(Y, init_posterior(observed(Y), 4, prior, shared, np.random.default_rng(seed),
                                                 sample_bias=True), prior, shared)
    steps = [lambda q: reference_q_x(Y - q.b, q), lambda q: reference_q_b(Y, q),
             lambda q: reference_q_w(Y - q.b, q, prior), lambda q: reference_q_mu(Y - q.b, q, prior),
             lambda q: reference_q_tau_biased(Y, q, prior, shared), lambda q: reference_q_gamma(q, prior),
             prior.w.update]
    L = reference_biased_bound(Y, q, prior)
    for _ in range(6):
        for step in steps:
            q = step(q)
            new = reference_biased_bound(Y, q, prior)
            assert new >= L - 1e-10 * abs(L), (step, new - L)
            L = new


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('storage', ['dense', 'csr'])
@pytest.mark.parametrize('n_blocks', [1, 3])
def test_bound_never_decreases_over_a_fit(engine, storage, n_blocks):
    for seed in range(3):
        Y = awkward(10 + seed, missing=[0.1, 0.5, 0.8][seed])
        data = observed(Y, sparse_storage=storage == 'csr')
        trans = lambda d, q, p: transform_posterior(d, q, p, 'both', latent_covariances=False)
        fit = fit_vbfa(data, 4, Prior(w=ARD()), seed == 1, max_iter=25, tol=0, rng=seed, engine=engine,
                       n_blocks=n_blocks, sample_bias=True, transform=trans)
        L = np.array(fit.elbo)
        assert isinstance(fit.q, BiasedPosterior) and fit.terms.b != 0
        assert np.all(np.diff(L) >= -1e-10 * np.abs(L[1:])), np.diff(L).min()


def test_complete_data_and_threads():
    "Complete data (the shared-covariance path) and two threads over three blocks: the same fit as one block."
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(12, 3)) @ rng.normal(size=(3, 40)) + rng.normal(0, 4, (1, 40)) + 0.3 * rng.normal(size=(12, 40))
    data = observed(Y)
    assert data.complete
    one = fit_vbfa(data, 4, Prior(w=ARD()), True, max_iter=30, tol=0, rng=0, engine='numpy', sample_bias=True)
    two = fit_vbfa(data, 4, Prior(w=ARD()), True, max_iter=30, tol=0, rng=0, engine='numpy', sample_bias=True,
                   n_jobs=2, n_blocks=3)
    assert np.all(np.diff(one.elbo) >= -1e-10 * abs(one.elbo[-1]))
    np.testing.assert_allclose(two.elbo, one.elbo, rtol=1e-11)
    np.testing.assert_allclose(two.q.b, one.q.b, rtol=0, atol=1e-9 * np.abs(one.q.b).max())


def test_transformations_raise_the_bound_by_their_gain():
    Y = awkward(21, missing=0.6)
    data, prior = observed(Y), Prior(w=ARD())
    q = init_posterior(data, 4, prior, False, np.random.default_rng(0), sample_bias=True)
    for _ in range(8):
        q, terms = sweep(data, q, prior, False)
        q_t, gain = transform_posterior(data, q, prior, 'both')
        assert gain >= 0
        assert elbo(data, q_t, prior).total == pytest.approx(terms.total + gain, rel=1e-10)
        assert q_t.b is q.b                                  # the biases are neither moved nor read
        q = q_t


# ---------------------------------------------------------------------------------------------------------------------
# the engine is the reference, sweep by sweep; the reference is the derivation
# ---------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('storage', ['dense', 'csr'])
def test_engine_equals_reference_per_sweep(engine, storage):
    for seed, (shared, w) in enumerate([(False, ARD()), (True, FixedAlpha(1e-3)), (True, ARD())]):
        Y = awkward(30 + seed, missing=[0.3, 0.6, 0.05][seed])
        data, prior = observed(Y, sparse_storage=storage == 'csr'), Prior(w=w)
        for n_blocks in (1, 3):
            blocks = row_blocks(data, n_blocks)
            q_eng = q_ref = init_posterior(data, 4, prior, shared, np.random.default_rng(seed), sample_bias=True)
            for _ in range(10):
                q_eng, terms = sweep(data, q_eng, prior, shared, engine, blocks)
                q_ref = reference_biased_sweep(Y, q_ref, prior, shared)
                assert relative_difference(q_eng, q_ref, terms.total, reference_biased_bound(Y, q_ref, prior)) < 1e-10


def test_engine_bound_equals_reference_on_random_posteriors():
    "elbo (its own squared errors, with the bias) against reference_biased_bound on deliberately non-optimal q."
    rng = np.random.default_rng(4)
    for shared in (False, True):
        Y = awkward(40, M=7, N=9, missing=0.3)
        q = random_biased_posterior(rng, 7, 9, 3, shared=shared, ard=True)
        prior = Prior(beta=0.5, a_tau=0.3, b_tau=0.7, w=ARD(0.2, 0.4), a_gamma=0.4, b_gamma=0.9)
        for data in (observed(Y), observed(Y, sparse_storage=True)):
            assert elbo(data, q, prior).total == pytest.approx(reference_biased_bound(Y, q, prior), rel=1e-12)


def test_reference_equals_the_sympy_derivation():
    sp = pytest.importorskip('sympy')
    from vbfa_lit.symbolic import (symbolic_biased, symbolic_biased_bound, symbolic_biased_values, gaussian_readoff,
                                   gamma_readoff, mean_field, evaluate)
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(2, 2)); Y[1, 1] = np.nan
    obs = [(1, 1), (2, 1), (1, 2)]
    prior = Prior(beta=0.5, a_tau=0.3, b_tau=0.7, w=FixedAlpha(0.8), a_gamma=0.4, b_gamma=0.9)
    mdl = symbolic_biased(2, 2, 1, observed=obs)
    q = random_biased_posterior(rng, 2, 2, 1)
    vals = symbolic_biased_values(mdl, Y, q, prior)
    qb, qg = reference_q_b(Y, q), reference_q_gamma(q, prior)
    for n, f in mdl.b.items():
        r = gaussian_readoff(mean_field(mdl, f), f)
        P, h = float(evaluate(r.precision, vals)[0, 0]), float(evaluate(r.linear, vals)[0, 0])
        assert 1 / qb.vb[n - 1] == pytest.approx(P, rel=1e-12) and qb.b[n - 1] == pytest.approx(h / P, rel=1e-12)
    a, b = (float(evaluate(e, vals)) for e in gamma_readoff(mean_field(mdl, mdl.gamma), mdl.gamma))
    assert (qg.a_gamma[0], qg.b_gamma[0]) == pytest.approx((a, b), rel=1e-12)
    qx = reference_q_x(Y - q.b, q)
    r = gaussian_readoff(mean_field(mdl, mdl.X[1]), mdl.X[1])
    P, h = evaluate(r.precision, vals), evaluate(r.linear, vals).reshape(-1)
    np.testing.assert_allclose(qx.X[0], np.linalg.solve(P, h), rtol=1e-12)
    qt = reference_q_tau_biased(Y, q, prior)
    a, b = (float(evaluate(e, vals)) for e in gamma_readoff(mean_field(mdl, mdl.tau[1]), mdl.tau[1]))
    assert (qt.a_tau[0], qt.b_tau[0]) == pytest.approx((a, b), rel=1e-12)
    assert reference_biased_bound(Y, q, prior) == pytest.approx(symbolic_biased_bound(mdl, Y, q, prior), rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------------
# the option off: what it was
# ---------------------------------------------------------------------------------------------------------------------

# the bound after each of 6 sweeps (and the estimator's last bound), computed by the code before the bias was added,
# bit for bit on the machine they were recorded on; BLAS picks its kernels by CPU, and on a machine with AVX-512
# (OpenBLAS's SkylakeX kernels) some bounds differ in the last bit or two (1.2e-16 to 2.3e-16 relative): ULPS allows 4
ULPS = 4 * np.finfo(float).eps
BEFORE = ['-0x1.d4763e6de5247p+9', '-0x1.0b4cbf66b566fp+9', '-0x1.0390cbe56ccc2p+9', '-0x1.fcd0b1eb0bd4cp+8',
          '-0x1.f0389ab2c0b16p+8', '-0x1.e3b348e9b728dp+8']
BEFORE_ESTIMATOR = '-0x1.ce21c6a3039dcp+8'
# per-feature noise, CSR, 2 blocks, numba; re-pinned when the compiled outer sums took four entries per pass (their
# additions in another order: the last bit of three bounds moved), and when split sums at small D became two packed
# passes (the means' part no longer by BLAS: the last bit of the last bound moved)
BEFORE_CSR_NUMBA = ['-0x1.04217113aa705p+10', '-0x1.4e649630309eap+9', '-0x1.460fc78a39dd2p+9', '-0x1.418f9dbe43ae4p+9',
                    '-0x1.3f8114fdeededp+9', '-0x1.3e4645d588586p+9']


def before_problem():
    rng = np.random.default_rng(7)
    Y = rng.normal(size=(15, 3)) @ rng.normal(size=(3, 25)) + rng.normal(0, 3, (15, 1)) + 0.3 * rng.normal(size=(15, 25))
    Y[rng.random(Y.shape) < 0.3] = np.nan
    return Y


def _hex_close(got, recorded):   # the bounds recorded against ours, to a few units in the last place (see BEFORE)
    np.testing.assert_allclose(np.asarray(got, dtype=float), [float.fromhex(v) for v in recorded], rtol=ULPS, atol=0)


def test_option_off_is_the_fit_before_the_option_to_rounding():
    Y = before_problem()
    trans = lambda d, q, p: transform_posterior(d, q, p, 'both', latent_covariances=False)
    fit = fit_vbfa(observed(Y), 3, Prior(w=ARD()), True, max_iter=6, tol=0, rng=0, engine='numpy', sample_bias=False,
                   transform=trans)
    _hex_close(fit.elbo, BEFORE)
    assert type(fit.q) is Posterior and type(fit.terms) is ElboTerms
    if numba_available():
        fit = fit_vbfa(observed(Y, sparse_storage=True), 3, Prior(w=ARD()), False, max_iter=6, tol=0, rng=1,
                       engine='numba', n_blocks=2, sample_bias=False, transform=trans)
        _hex_close(fit.elbo, BEFORE_CSR_NUMBA)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(3, random_state=0, engine='numpy', max_iter=20, sample_bias=False).fit(Y.T)
    _hex_close([model.elbo_[-1]], [BEFORE_ESTIMATOR])
    assert not hasattr(model, 'sample_bias_')


# ---------------------------------------------------------------------------------------------------------------------
# statistics: planted biases recovered; units
# ---------------------------------------------------------------------------------------------------------------------

def test_recovers_planted_biases():
    """Data drawn from the model; the learned biases against the exact posterior means of b_n given the true W, mu, tau
    and gamma (x_n and b_n integrated out jointly), in units of that posterior's standard deviation s_n.

    A bias is indistinguishable from a component whose loadings are all equal (b_n + c^T x_n with W - 1 c^T fits the
    same), so the planted W has columns of mean zero: then the planted biases are the ones the priors prefer. A constant
    also moves freely between the b_n and the mu_m, so differences are centred. Tolerances: (b_n - b_exact_n) / s_n is
    N(0, 1) given the truth, so the mean of its square is 1 up to 5 sampling errors sqrt(2/N); the learned posterior
    differs from the exact one by the estimation error of W and mu, of order D/M in units of s_n^2 (3 D/M allowed)."""
    rng = np.random.default_rng(11)
    M, N, D, sigma, sd_b = 40, 400, 2, 0.5, 1.0
    W, X = rng.normal(size=(M, D)), rng.normal(size=(N, D))
    W -= W.mean(0)
    mu, b = rng.normal(0, 2, M), rng.normal(0, sd_b, N)
    Y = W @ X.T + mu[:, None] + b + sigma * rng.normal(size=(M, N))
    O = rng.random(Y.shape) > 0.3
    Y[~O] = np.nan
    fit = fit_vbfa(observed(Y), 4, Prior(w=ARD()), True, max_iter=500, tol=1e-8, rng=0, engine='numpy',
                   sample_bias=True, transform=lambda d, q, p: transform_posterior(d, q, p, 'both', False))
    A = np.column_stack([W, np.ones(M)])                   # the exact posterior of (x_n, b_n) given the truth
    s2, exact = np.empty(N), np.empty(N)
    for n in range(N):
        o = O[:, n]
        C = np.linalg.inv(np.diag([1.0] * D + [1 / sd_b ** 2]) + A[o].T @ A[o] / sigma ** 2)
        s2[n], exact[n] = C[D, D], (C @ A[o].T @ (Y[o, n] - mu[o]))[D] / sigma ** 2
    centred = lambda v: v - v.mean()
    assert abs(np.mean(centred(exact - b) ** 2 / s2) - 1) < 5 * np.sqrt(2 / N)     # the data are as modelled
    assert np.mean(centred(fit.q.b - exact) ** 2 / s2) < 3 * D / M
    assert abs(np.mean(centred(fit.q.b - b) ** 2 / s2) - 1) < 5 * np.sqrt(2 / N) + 3 * D / M
    # the learned spread of the biases, 1/<gamma>, against the planted variance, to the sampling error of a variance
    var_b = fit.q.b_gamma[0] / fit.q.a_gamma[0]
    assert abs(var_b / sd_b ** 2 - 1) < 5 * np.sqrt(2 / N), var_b


def test_answer_does_not_depend_on_the_units():
    rng = np.random.default_rng(5)
    X = (rng.normal(size=(60, 3)) @ rng.normal(size=(3, 12)) + rng.normal(0, 2, (60, 1)) + 0.3 * rng.normal(size=(60, 12))
         + rng.normal(0, 5, 12))
    X[rng.random(X.shape) < 0.25] = np.nan
    shift = rng.normal(0, 1e4, 12)                                  # per-feature offsets, in the new units
    fits = {}
    for k, Z in (('one', X), ('milli', 1000 * X + shift)):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            fits[k] = VBPCA(5, sample_bias=True, random_state=0, engine='numpy', max_iter=100).fit(Z)
    a, b = fits['one'], fits['milli']
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(b.sample_bias_, 1000 * a.sample_bias_, rtol=0, atol=1e-6 * 1000 * np.abs(a.sample_bias_).max())
    assert b.sample_bias_variance_ == pytest.approx(1e6 * a.sample_bias_variance_, rel=1e-6)
    n_obs = np.sum(~np.isnan(X))
    np.testing.assert_allclose(b.elbo_, a.elbo_ - n_obs * np.log(1000), rtol=1e-9)
    rows, cols = np.nonzero(np.isnan(X))
    np.testing.assert_allclose(b.predict_entries(1000 * X + shift, rows, cols),
                               1000 * a.predict_entries(X, rows, cols) + shift[cols], rtol=1e-7)


# ---------------------------------------------------------------------------------------------------------------------
# the estimator option
# ---------------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def ratings_fit():
    r = make_ratings(n_users=120, n_items=80, n_ratings=3000, random_state=3)
    X = r.matrix()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(6, missing_values='unstored', sample_bias=True, random_state=0, engine='numpy', tol=1e-5).fit(X)
    return r, X, model


def test_estimator_option_attributes_and_errors(ratings_fit):
    r, X, model = ratings_fit
    assert model.get_params()['sample_bias'] is True and 'sample_bias=True' in repr(model)
    assert model.sample_bias_.shape == (r.shape[0],) and model.sample_bias_variance_ > 0
    np.testing.assert_allclose(model.sample_bias_, model.scale_ * model.posterior_.b)
    assert np.corrcoef(model.sample_bias_, r.user_bias)[0, 1] > 0.5
    with pytest.raises(TypeError, match='sample_bias'):
        VBPCA(sample_bias='yes').fit(np.ones((5, 3)) + np.arange(15).reshape(5, 3) ** 1.5)
    with pytest.raises(TypeError, match='sample_bias'):
        VBPCA(sample_bias=1).fit(np.ones((5, 3)) + np.arange(15).reshape(5, 3) ** 1.5)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        VBPCA(2, sample_bias=np.True_, max_iter=3).fit(np.random.default_rng(0).normal(size=(10, 4)))   # numpy's bool
        refit = VBPCA(6, missing_values='unstored', sample_bias=True, random_state=0, max_iter=5).fit(X)
        refit.set_params(sample_bias=False).fit(X)
    assert not hasattr(refit, 'sample_bias_') and not hasattr(refit, 'sample_bias_variance_')


def test_sweep_refuses_the_bias_on_another_runner():
    Y = awkward(50)
    data, prior = observed(Y), Prior()
    q = init_posterior(data, 3, prior, True, np.random.default_rng(0), sample_bias=True)

    class Remote:                      # a runner of another kind (as the Dask runner is), same map and reduce
        def __init__(self): self.local = LocalRunner()
        def map(self, fn, *iterables): return self.local.map(fn, *iterables)
        def reduce(self, parts, complete): return self.local.reduce(parts, complete)
    with pytest.raises(ValueError, match='sample_bias'):
        sweep(data, q, prior, True, runner=Remote())
    sweep(data, q, prior, True, runner=LocalRunner())               # the in-memory runner runs it


def test_new_rows_infer_their_bias(ratings_fit):
    "latent_bias_posterior is the fixed point of the two updates; predictions, imputations and transform include it."
    r, X, model = ratings_fit
    q = model.posterior_
    Xs = X[:25].toarray()
    Xs[X[:25].toarray() == 0] = np.nan
    Xs = (Xs - model.center_) / model.scale_
    Z, Sx, b, vb = latent_bias_posterior(Xs, q)
    # iterate the engine's two updates for these rows, from b = 0, to convergence: until b no longer changes in
    # floating point (within 50 rounds here; every further round would give the same b and Z bit for bit)
    from vbfa_lit.engine import sum_tau_ww, update_X, update_b
    data, tau = observed(Xs.T), q.a_tau / q.b_tau
    TWW, bi = sum_tau_ww(data, q.W, q.Sw, tau), np.zeros(25)
    for _ in range(3000):
        Zi, _ = update_X(data, q.W, TWW, q.mu, tau, b=bi)
        new, vbi = update_b(data, q.W, Zi, q.mu, tau, (q.a_gamma / q.b_gamma)[0])
        if np.array_equal(new, bi): break
        bi = new
    np.testing.assert_allclose(b, bi, rtol=0, atol=1e-9)
    np.testing.assert_allclose(Z, Zi, rtol=0, atol=1e-9)
    np.testing.assert_allclose(vb, vbi, rtol=1e-12)
    # the training rows: what the fit learned, to its convergence
    np.testing.assert_allclose(model.scale_ * b, model.sample_bias_[:25], rtol=0, atol=0.02 * model.sample_bias_.std())
    rows, cols = np.nonzero(np.isnan(Xs))
    mean, std = model.predict_entries(X[:25], rows, cols, return_std=True)
    expect = model.center_[cols] + model.scale_ * (np.einsum('kd,kd->k', Z[rows], q.W[cols]) + q.mu[cols] + b[rows])
    np.testing.assert_allclose(mean, expect, rtol=1e-12)
    dense = np.where(np.isnan(Xs), np.nan, Xs * model.scale_ + model.center_)
    filled, std_i = model.impute(dense, return_std=True)
    np.testing.assert_allclose(filled[rows, cols], mean, rtol=1e-12)
    np.testing.assert_allclose(std_i[rows, cols], std, rtol=1e-12)
    np.testing.assert_allclose(model.transform(X[:25]), Z, rtol=1e-12, atol=1e-14)
    # a row with nothing observed (the lesson's exercise): bias and latent variables at their prior, so every
    # prediction is the item's mean
    empty = sparse.csr_matrix((1, X.shape[1]))
    np.testing.assert_allclose(model.predict_entries(empty, [0, 0], [3, 7]), model.mean_[[3, 7]], rtol=1e-12)


def test_score_samples_marginalises_the_bias(ratings_fit):
    "A row's log density: N(mean_, W W^T + (1/<gamma>) 1 1^T + diag(psi)) on its observed entries, in X's units."
    r, X, model = ratings_fit
    q, s = model.posterior_, model.scale_
    got = model.score_samples(X[:3])
    for n in range(3):
        cols = X[n].indices
        W = q.W[cols]
        C = W @ W.T + q.b_gamma[0] / q.a_gamma[0] + np.diag(np.broadcast_to(q.b_tau / q.a_tau, (len(q.W),))[cols])
        expect = stats.multivariate_normal(model.mean_[cols], s ** 2 * C).logpdf(X[n].data)
        assert got[n] == pytest.approx(expect, rel=1e-10)


# ---------------------------------------------------------------------------------------------------------------------
# the ratings generator
# ---------------------------------------------------------------------------------------------------------------------

def test_ratings_generator_properties():
    r = make_ratings(random_state=0)
    assert r.shape == (943, 1682) and len(r.ratings) == len(r.users) == len(r.items) == 100_000
    assert repr(r) == 'Ratings(943 users x 1682 items, 100000 ratings)'
    assert len(np.unique(r.users * r.shape[1] + r.items)) == 100_000               # no pair repeats
    assert r.ratings.dtype == np.int64 and set(np.unique(r.ratings)) == {1, 2, 3, 4, 5}
    per_user, per_item = np.bincount(r.users, minlength=943), np.bincount(r.items, minlength=1682)
    assert per_user.min() >= 20 and per_item.min() >= 1 and per_user.max() <= 1682 // 2
    assert np.all(np.diff(r.users) >= 0)                                            # sorted by user
    assert per_item.max() > 8 * np.median(per_item) and per_user.max() > 5 * np.median(per_user)   # long tails
    M = r.matrix()
    assert sparse.isspmatrix_csr(M) and M.nnz == 100_000 and M[r.users[5], r.items[5]] == r.ratings[5]
    again = make_ratings(random_state=0)
    assert np.array_equal(again.ratings, r.ratings) and np.array_equal(again.items, r.items)
    assert not np.array_equal(make_ratings(random_state=1).items, r.items)
    small = make_ratings(50, 80, 1500, random_state=np.random.default_rng(2))
    assert small.shape == (50, 80) and len(small.ratings) == 1500
    # the planted biases show in the ratings: a user's mean rating follows their bias
    mean_rating = np.bincount(r.users, r.ratings) / per_user
    assert np.corrcoef(mean_rating, r.user_bias)[0, 1] > 0.5


def test_ratings_generator_refuses_bad_sizes():
    with pytest.raises(ValueError, match='n_ratings'):
        make_ratings(100, 50, 1000)                    # fewer than n_items + 20 per user
    with pytest.raises(ValueError, match='n_ratings'):
        make_ratings(10, 40, 300)                      # more than half of every row
    with pytest.raises(ValueError, match='noise_sd'):
        make_ratings(noise_sd=-1)
    with pytest.raises(ValueError, match='n_users'):
        make_ratings(n_users=0)
