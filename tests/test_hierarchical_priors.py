"""The learned prior of the feature means (lesson 08, Eqs. 8.10-8.14): mu_m ~ N(m_0 - c_m, 1/beta_mu) with q(m_0) and
q(beta_mu). The updates and the bound agree with SymPy's read-offs; the engine equals the reference sweep on random
problems with empty rows and columns (both kernel sets, with and without per-sample biases); the offsets c_m are a
shift of the data; the translation's claimed gain is the bound's; the bound never falls in VBPCA fits (in memory and
on Dask, a LocalCluster of processes included) and Dask equals in memory; a feature never observed is predicted at
the learned level, not 0, and a rarely seen one is shrunk towards it, the less the more it is seen."""
import warnings

import numpy as np
import pytest

from vbfa_lit import VBPCA
from vbfa_lit.ard import ARD
from vbfa_lit.engine import elbo, init_posterior, observed, sweep
from vbfa_lit.linalg import numba_available
from vbfa_lit.ratings import (random_learned_posterior, reference_learned_bound, reference_learned_sweep,
                              reference_q_beta, reference_q_m0, reference_q_mu_learned)
from vbfa_lit.symbolic import (evaluate, gamma_readoff, gaussian_readoff, mean_field, symbolic_biased,
                               symbolic_biased_values, symbolic_learned_mean, symbolic_learned_mean_bound,
                               symbolic_values, symbolic_vbfa)
from vbfa_lit.transformations import transform_posterior
from vbfa_lit.vbpca import FixedAlpha, Prior

ENGINES = ['numpy', pytest.param('numba', marks=pytest.mark.skipif(not numba_available(),
                                                                   reason="numba (the 'fast' extra) not installed"))]
OBSERVED = [(1, 1), (2, 1), (3, 1), (1, 2), (3, 2)]            # y_22 missing


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return fn(*args, **kwargs)


def problem(seed, M=14, N=25, missing=0.5, level=3.0):
    """Features x samples with a common level, feature offsets of sd 0.7, a rank-2 signal and noise; NaN where missing,
    one feature and one sample empty, one feature seen once."""
    rng = np.random.default_rng(seed)
    Y = (level + 0.7 * rng.normal(size=(M, 1)) + rng.normal(size=(M, 2)) @ rng.normal(size=(2, N))
         + 0.3 * rng.normal(size=(M, N)))
    Y[rng.random(Y.shape) < missing] = np.nan
    Y[1], Y[:, 2], Y[4] = np.nan, np.nan, np.nan
    Y[4, 0] = level + 4.0
    Y[0, 0] = level                                             # sample 0 keeps an observation besides feature 4
    return Y


def scalar(expr, vals): return np.asarray(evaluate(expr, vals), float).ravel()[0]


@pytest.mark.parametrize('D', [1, 2])
@pytest.mark.parametrize('biased', [True, False])
def test_updates_and_bound_equal_the_symbolic_derivation(D, biased):
    "Eqs. (8.11)-(8.13) equal SymPy's read-offs of the log joint with (8.10); (8.14) equals SymPy's bound."
    rng = np.random.default_rng(10 * D + biased)
    Y = rng.normal(size=(3, 2)); Y[1, 1] = np.nan
    prior = Prior(beta=0.5, a_tau=0.3, b_tau=0.7, w=FixedAlpha(0.8), a_gamma=0.4, b_gamma=0.9, learned_mean=True,
                  beta_0=0.6, a_beta=0.3, b_beta=0.8)
    mdl = symbolic_learned_mean((symbolic_biased if biased else symbolic_vbfa)(3, 2, D, observed=OBSERVED))
    q = random_learned_posterior(rng, 3, 2, D, biased)
    vals = (symbolic_biased_values if biased else symbolic_values)(mdl, Y, q, prior)
    vals.update({**mdl.m0.values(q.m0[0], q.vm0[0]), **mdl.beta_mu.values(q.a_beta[0], q.b_beta[0]),
                 mdl.hyper['beta_0']: prior.beta_0, mdl.hyper['a_beta']: prior.a_beta,
                 mdl.hyper['b_beta']: prior.b_beta})
    qm = reference_q_mu_learned(Y - q.b if biased else Y, q)
    for m, f in mdl.mu.items():
        r = gaussian_readoff(mean_field(mdl, f), f)
        P, h = scalar(r.precision, vals), scalar(r.linear, vals)
        np.testing.assert_allclose([qm.vmu[m - 1], qm.mu[m - 1]], [1 / P, h / P], rtol=1e-12, atol=1e-12)
    q0 = reference_q_m0(q, prior)
    r = gaussian_readoff(mean_field(mdl, mdl.m0), mdl.m0)
    P, h = scalar(r.precision, vals), scalar(r.linear, vals)
    np.testing.assert_allclose([q0.vm0[0], q0.m0[0]], [1 / P, h / P], rtol=1e-12, atol=1e-12)
    qb = reference_q_beta(q, prior)
    a, b = (float(evaluate(e, vals)) for e in gamma_readoff(mean_field(mdl, mdl.beta_mu), mdl.beta_mu))
    np.testing.assert_allclose([qb.a_beta[0], qb.b_beta[0]], [a, b], rtol=1e-12)
    np.testing.assert_allclose(reference_learned_bound(Y, q, prior), symbolic_learned_mean_bound(mdl, Y, q, prior),
                               rtol=1e-12)


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('shared', [False, True])
def test_engine_sweep_equals_reference_and_bound_rises(engine, bias, shared):
    "Every sweep of the engine equals the reference's (empty rows and columns included); the bound never falls."
    for seed in range(3):
        Y = problem(seed)
        data, prior = observed(Y, mask=~np.isnan(Y)), Prior(learned_mean=True, w=ARD(1e-3, 1e-3))
        q = q_ref = init_posterior(data, 3, prior, shared, np.random.default_rng(seed), sample_bias=bias)
        bounds = []
        for _ in range(15):
            q, terms = sweep(data, q, prior, shared, engine)
            q_prev, q_ref = q_ref, reference_learned_sweep(Y, q_ref, prior, shared)
            for name in ('X', 'W', 'mu', 'vmu', 'm0', 'vm0', 'a_beta', 'b_beta', 'a_tau', 'b_tau', 'a_alpha'):
                np.testing.assert_allclose(getattr(q, name), getattr(q_ref, name), rtol=1e-9, atol=1e-10,
                                           err_msg=name)
            bounds.append(reference_learned_bound(Y, q_ref, prior))
            np.testing.assert_allclose(terms.total, bounds[-1], rtol=1e-10)
        assert np.all(np.diff(bounds) >= -1e-10 * np.abs(bounds[1:])), np.diff(bounds)
        # a feature never observed sits at the level: (8.11) with O_m empty, with the q(m_0), q(beta_mu) it read
        np.testing.assert_allclose([q_ref.mu[1], q_ref.vmu[1]], [q_prev.m0[0], q_prev.b_beta[0] / q_prev.a_beta[0]],
                                   rtol=1e-12)


def test_offsets_are_a_shift_of_the_features():
    "mu_offset c: fitting Y with offsets c is fitting Y + c with none, every mu moved by c (same bound)."
    Y = problem(5)
    c = np.random.default_rng(0).normal(0, 2, len(Y))
    fits = []
    for data_, offset in ((Y, c), (Y + c[:, None], None)):
        prior = Prior(learned_mean=True, mu_offset=offset, w=ARD(1e-3, 1e-3))
        data = observed(data_, mask=~np.isnan(data_))
        q = init_posterior(data, 3, prior, False, np.random.default_rng(1), sample_bias=True)
        for _ in range(10): q, terms = sweep(data, q, prior, False)
        fits.append((q, terms.total))
    (q1, L1), (q2, L2) = fits
    np.testing.assert_allclose(q1.mu + c, q2.mu, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([q1.m0[0], q1.b_beta[0], L1], [q2.m0[0], q2.b_beta[0], L2], rtol=1e-9)


@pytest.mark.parametrize('bias', [False, True])
def test_translation_gain_is_the_bounds_increase(bias):
    "Under the learned prior (with offsets) the translation's claimed gain is exactly what the bound gains, and >= 0."
    Y = problem(7)
    c = np.random.default_rng(1).normal(size=len(Y))
    prior = Prior(learned_mean=True, mu_offset=c, w=ARD(1e-3, 1e-3))
    data = observed(Y, mask=~np.isnan(Y))
    q = init_posterior(data, 3, prior, False, np.random.default_rng(2), sample_bias=bias)
    for _ in range(3): q, _ = sweep(data, q, prior, False)
    q = q._replace(X=q.X + 0.5)                                  # a bias in X for the translation to move
    before = elbo(data, q, prior).total
    moved, gain = transform_posterior(data, q, prior, 'translate')
    assert gain > 0
    np.testing.assert_allclose(elbo(data, moved, prior).total - before, gain, rtol=1e-7)


def random_problem(seed):
    "Samples x features, with the learned prior's settings: offsets, scales, empty rows and columns, rare columns."
    r = np.random.default_rng(seed)
    N, M = int(r.choice([6, 20, 60])), int(r.choice([3, 8, 25]))
    X = (r.normal(size=(N, 2)) @ r.normal(size=(2, M)) + 10.0 ** r.uniform(-2, 0) * r.normal(size=(N, M))
         + r.normal(0, 10.0 ** r.uniform(-1, 1), M))
    X = X * 10.0 ** r.uniform(-3, 3) + 10.0 ** r.uniform(0, 4) * r.normal()
    X[r.random(X.shape) < r.uniform(0.1, 0.9)] = np.nan
    X[:, r.integers(M)] = np.nan                                 # an empty column
    X[r.integers(N)] = np.nan                                    # an empty row
    if np.count_nonzero(~np.isnan(X)) < 3: X[:2, 0] = [1.0, 2.0]
    params = dict(n_components=int(r.integers(1, M + 1)), prior=str(r.choice(['ard', 'broad'])),
                  noise=str(r.choice(['shared', 'per_feature'])),
                  transformations=str(r.choice(['both', 'translate', 'rotate', 'none'])),
                  sample_bias=bool(r.random() < 0.5), max_iter=100, random_state=seed, mean_prior='learned')
    return X, params


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('seed', range(12))
def test_vbpca_bound_never_falls_on_random_problems(seed, engine):
    X, params = random_problem(seed)
    model = quiet(VBPCA(engine=engine, **params).fit, X)
    L = model.elbo_
    assert np.all(np.diff(L) >= -1e-9 * np.abs(L[1:])), (params, np.diff(L).min())
    assert np.all(np.isfinite(model.mean_)) and np.all(np.isfinite(model.impute(X)))


def ratings(seed=0, N=120, M=60, level=3.5):
    "Users x items with a common level, item and user biases, a rank-2 taste; 60% missing."
    rng = np.random.default_rng(seed)
    X = (level + 0.5 * rng.normal(size=(1, M)) + 0.4 * rng.normal(size=(N, 1))
         + 0.5 * rng.normal(size=(N, 2)) @ rng.normal(size=(2, M)) + 0.5 * rng.normal(size=(N, M)))
    X[rng.random(X.shape) < 0.6] = np.nan
    return X


@pytest.mark.parametrize('bias', [False, True])
def test_cold_start_a_column_never_seen_is_predicted_at_the_learned_level(bias):
    X = ratings()
    X[:, 5] = np.nan
    learned = quiet(VBPCA(4, mean_prior='learned', sample_bias=bias, random_state=0).fit, X)
    broad = quiet(VBPCA(4, sample_bias=bias, random_state=0).fit, X)
    q = learned.posterior_
    level = learned.center_[5] + learned.scale_ * q.m0[0]         # the learned level in X's units
    assert abs(level - np.nanmean(X)) < 0.1 and abs(broad.mean_[5]) < 1e-6     # broad: the unseen column's 0
    np.testing.assert_allclose(learned.mean_[5], level, rtol=1e-6)
    pred = learned.impute(X)[:, 5]
    expected = level + (learned.sample_bias_ if bias else 0.0)     # the level plus the row's bias
    np.testing.assert_allclose(pred, expected, rtol=0, atol=1e-6 + 0.02 * bias)
    if bias:                                                      # a row never seen: the column's mean, bias 0
        X2 = X.copy(); X2[7] = np.nan
        m = quiet(VBPCA(4, mean_prior='learned', sample_bias=True, random_state=0).fit, X2)
        np.testing.assert_allclose(m.impute(X2)[7], m.mean_, atol=1e-6)


def test_shrinkage_a_rarely_seen_column_is_pulled_to_the_level_the_less_the_more_it_is_seen():
    X = ratings(1, N=200)
    far = np.nanmean(X) + 3.0                                     # four columns all of whose values lie 3 above the level
    counts = [1, 2, 8, 40]
    for j, k in zip(range(10, 14), counts):
        X[:, j] = np.nan
        X[:k, j] = far + 0.0 * np.arange(k)
    learned = quiet(VBPCA(4, mean_prior='learned', random_state=0).fit, X)
    broad = quiet(VBPCA(4, random_state=0).fit, X)
    level = learned.center_[0] + learned.scale_ * learned.posterior_.m0[0]
    kept = (learned.mean_[10:14] - level) / (far - level)          # the share of the distance kept
    assert np.all((kept > 0) & (kept < 1)), kept
    assert np.all(np.diff(kept) > 0), kept                         # more observations, less shrinkage
    assert kept[0] < 0.7 and kept[-1] > 0.9, kept
    np.testing.assert_allclose(broad.mean_[10], far, atol=1e-3)    # the broad prior keeps the one value


def test_the_broad_default_is_unchanged_and_learned_can_be_chosen():
    X = ratings(2)
    assert VBPCA().mean_prior == 'broad'
    a = quiet(VBPCA(3, random_state=0).fit, X)
    b = quiet(VBPCA(3, random_state=0, mean_prior='broad').fit, X)
    np.testing.assert_array_equal(a.elbo_, b.elbo_)
    assert a.posterior_.m0 is None and a.prior_.learned_mean is False
    with pytest.raises(ValueError, match='mean_prior'):
        VBPCA(mean_prior='shrunk').fit(X)


def test_dask_equals_in_memory_threaded_and_on_a_local_cluster(process_cluster):
    da = pytest.importorskip('dask.array')
    distributed = pytest.importorskip('distributed')
    X = ratings(3)
    X[:, 4] = np.nan
    X[:1, 6] = 9.0; X[1:, 6] = np.nan
    settings = dict(n_components=4, mean_prior='learned', random_state=1, engine='numpy', noise='per_feature')
    ref = quiet(VBPCA(**settings).fit, X)
    assert np.all(np.diff(ref.elbo_) >= -1e-9 * np.abs(ref.elbo_[1:]))
    Xd = da.from_array(X, chunks=(35, X.shape[1]))
    got = quiet(VBPCA(**settings).fit, Xd)                       # the threaded scheduler
    np.testing.assert_allclose(got.elbo_, ref.elbo_, rtol=1e-8, atol=0)
    for name in ('mean_', 'components_', 'center_'):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=0,
                                   atol=1e-9 * np.abs(getattr(ref, name)).max(), err_msg=name)
    np.testing.assert_allclose([got.posterior_.m0[0], got.posterior_.b_beta[0]],
                               [ref.posterior_.m0[0], ref.posterior_.b_beta[0]], rtol=1e-9)
    # on worker processes, the first 20 of the 61 sweeps (each sweep runs the same map and reduce; a sweep on the
    # cluster costs about 0.1 CPU-s in this process besides the workers' own): equal to the in-memory fit stopped there
    short = dict(settings, max_iter=20)
    ref20 = quiet(VBPCA(**short).fit, X)
    np.testing.assert_array_equal(ref20.elbo_, ref.elbo_[:20])
    with distributed.Client(process_cluster) as client:                   # two worker processes (conftest.py)
        client.wait_for_workers(2, timeout=120)
        on_cluster = quiet(VBPCA(**short).fit, Xd, client=client)
    np.testing.assert_allclose(on_cluster.elbo_, ref20.elbo_, rtol=1e-8, atol=0)
    np.testing.assert_allclose(on_cluster.mean_, ref20.mean_, rtol=0, atol=1e-9 * np.abs(ref20.mean_).max())
