"""The reversible-jump sampler with vague priors, on badly scaled or masked data, and its argument checks.

Vague priors (r, alpha down to 1e-6, which the sampler documents): tau's posterior is nearly log-uniform down to its
floor (the smallest normal number, in units where g ~ 1); the scratch positions of the sweep used to be drawn from
Gamma(1, tau), overflowed to inf there, and inf * 0 in tau's masked rate made NaN, which the truncated-Gamma sampler
could not finish. Long runs with many chains, both engines, must finish with valid draws and agree with the exact
posterior within the Monte-Carlo error (the exact integral's tau grid now reaches the floor too).
"""
import io
import warnings

import numpy as np
import pytest

from vbfa_lit.data import sample_covariance_eigenvalues
from vbfa_lit.rjmcmc import (exact_posterior_q, log_gamma_mass, rjmcmc_pca, rjmcmc_pca_from_eigenvalues,
                             sample_eigenvalues, truncated_gamma)
from vbfa_lit.rjmcmc_fast import numba_available

G, N = [5.0, 3.0, 2.0, 1.0], 30
KW = dict(n_sweeps=300, burn_in=100, random_state=0, engine='numpy')


def _valid(res, d):
    "What is wrong with the draws of a result (empty list: nothing)."
    bad = []
    if not np.all((res.q >= 1) & (res.q <= d - 1)): bad.append('q out of range')
    used = np.arange(d - 1)[None, None, :] < res.q[..., None]
    if not np.all(np.isfinite(res.l[used]) & (res.l[used] > 0)): bad.append('l not finite and positive')
    if not np.all(np.isfinite(res.sigma2) & (res.sigma2 > 0)): bad.append('sigma2 not finite and positive')
    if not np.all(np.isfinite(res.tau) & (res.tau > 0)): bad.append('tau not finite and positive')
    lq = np.take_along_axis(res.l, (res.q - 1)[..., None], 2)[..., 0]
    if not np.all(res.sigma2 < lq): bad.append('sigma2 not below l_q')
    ordered = np.where(used[..., 1:], np.diff(res.l, axis=2) < 0, True)
    if not np.all(ordered): bad.append('l not decreasing')
    pq = res.posterior_q()
    if not (np.isclose(pq.p.sum(), 1) and np.all(np.isfinite(pq.se))): bad.append('posterior_q')
    return bad


def _agrees_with_exact(res, exact, n_se=4.5):
    "p(q) of the draws within n_se Monte-Carlo standard errors of the exact one (se from the indicator's ESS)."
    pq = res.posterior_q()
    ess = np.nanmin(pq.ess) if np.isfinite(pq.ess).any() else res.q.size
    se = np.maximum(pq.se, np.sqrt(exact * (1 - exact) / ess))          # a q never visited: se from the exact p
    return np.abs(pq.p - exact) <= n_se * se + 1e-12, pq


# (engine, r, alpha, seed): with 40 chains each crashed before ("truncated gamma rejection sampler did not finish"),
# the compiled sweep over 2000 sweeps, the NumPy sweep (slower per sweep) over 1000
VAGUE = [('numba', 1e-3, 1e-3, 6), ('numba', 1e-4, 1e-5, 6), ('numba', 1e-6, 1e-6, 6),
         ('numpy', 1e-3, 1e-3, 6), ('numpy', 1e-4, 1e-5, 6), ('numpy', 1e-6, 1e-6, 1)]


@pytest.mark.parametrize('engine, r, alpha, seed', VAGUE)
def test_vague_priors_finish_and_match_the_exact_posterior(engine, r, alpha, seed):
    if not numba_available(): pytest.skip('numba not installed')
    kw = dict(n_sweeps=2000 if engine == 'numba' else 1000, burn_in=500, n_chains=40, r=r, alpha=alpha,
              random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                      # a ConvergenceWarning is not what this test is about
        res = rjmcmc_pca_from_eigenvalues(G, N, engine=engine, **kw)
        if engine == 'numpy':                                # the compiled sweep gives the same chains
            fast = rjmcmc_pca_from_eigenvalues(G, N, engine='numba', **kw)
            np.testing.assert_array_equal(fast.q, res.q)
            for name in ('l', 'sigma2', 'tau', 'birth_rate', 'death_rate'):
                np.testing.assert_allclose(getattr(fast, name), getattr(res, name), rtol=1e-12, atol=0)
    assert not _valid(res, len(G)), _valid(res, len(G))
    ok, pq = _agrees_with_exact(res, exact_posterior_q(G, N, r=r, alpha=alpha))
    assert ok.all(), (pq, exact_posterior_q(G, N, r=r, alpha=alpha))


def test_exact_posterior_reaches_the_floor_of_tau():
    # r = alpha = 1e-3: p(log tau | q, D) ~ tau^((q+1) r + alpha) is nearly flat down to the floor, e^-708 in units
    # where g ~ 1; the grid used to stop 250 below its centre and lost a q-dependent share of the mass (p(q = 1)
    # 0.9755 instead of 0.9780). A grid forced down to the floor, four times finer, must give the same answer.
    import vbfa_lit.rjmcmc as rj
    p = exact_posterior_q(G, N, r=1e-3, alpha=1e-3)
    original = rj._tau_grid
    def to_floor(q, g, n, r, alpha, eta, n_tau):
        low, high = np.log(rj._TAU_FLOOR), original(q, g, n, r, alpha, eta, n_tau)[-1]
        return np.linspace(low, high, 4 * n_tau)
    rj._tau_grid = to_floor
    try: p_floor = exact_posterior_q(G, N, r=1e-3, alpha=1e-3)
    finally: rj._tau_grid = original
    np.testing.assert_allclose(p, p_floor, rtol=1e-3, atol=1e-6)


# ---- item 2: masked arrays and NaN
X0 = np.random.default_rng(0).normal(size=(200, 4)) * [3.0, 2.0, 1.0, 1.0]


def test_masked_entries_are_refused_naming_X():
    Xm = np.ma.masked_array(X0.copy(), mask=np.zeros(X0.shape, bool))
    Xm.mask[0, 0], Xm.data[0, 0] = True, 1e6                      # the hidden value must not be used
    for f in (lambda: rjmcmc_pca(Xm, **KW), lambda: sample_eigenvalues(Xm)):
        with pytest.raises(ValueError, match=r'^X: a masked array with 1 masked entry.*complete data.*VBPCA'):
            f()
    Xn = X0.copy(); Xn[3, 1] = np.nan                            # NaN (already refused): the same advice
    with pytest.raises(ValueError, match=r'^X: contains NaN.*complete data.*VBPCA'): rjmcmc_pca(Xn, **KW)
    with pytest.raises(ValueError, match=r'^X: a masked array with 1 masked entry'):
        rjmcmc_pca(np.ma.masked_invalid(Xn), **KW)
    res = rjmcmc_pca(np.ma.masked_array(X0, mask=False), **KW)         # nothing masked: its data, as they are
    np.testing.assert_allclose(res.eigenvalues, sample_eigenvalues(X0)[0], rtol=1e-13)


# ---- item 3: badly scaled but independent columns are accepted, collinear ones refused
def _orthogonal_data(scales, n=200, seed=0):
    "Centred columns exactly orthogonal up to rounding, of norms sqrt(n) * scales: S = diag(scales^2)."
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, len(scales) + 1)))
    Q = Q[:, 1:] - Q[:, 1:].mean(0)                              # Q's first column spans the constants' ...
    Q, _ = np.linalg.qr(np.c_[np.ones(n), Q])                    # ... direction: orthogonal to it, then centred
    return Q[:, 1:] * np.sqrt(n) * np.asarray(scales, float)


@pytest.mark.parametrize('scales', [[1e6, 1, 1, 1, 1], [1e6, 2, 1.5, 1, 1e-6], [1e-3, 1e3, 1, 7, 5e5]])
def test_badly_scaled_columns_accepted_with_accurate_eigenvalues(scales):
    X = _orthogonal_data(scales)
    g_true = np.sort(np.square(scales))[::-1]
    res = rjmcmc_pca(X, **KW)
    np.testing.assert_allclose(res.eigenvalues, g_true, rtol=1e-10)      # every eigenvalue to 1e-10, relative
    assert not _valid(res, len(scales))


def test_issue_example_badly_scaled_columns():
    X = np.random.default_rng(0).normal(size=(200, 5)) * [1e6, 1, 1, 1, 1e-0]
    g, n = sample_eigenvalues(X)
    g_ref, _ = sample_covariance_eigenvalues(X)                   # independent columns: the product is accurate
    np.testing.assert_allclose(g, g_ref, rtol=1e-9)
    res = rjmcmc_pca(X, n_sweeps=2000, burn_in=500, n_chains=4, random_state=1, engine='numpy')
    ok, pq = _agrees_with_exact(res, exact_posterior_q(g, n))
    assert ok.all(), pq


def test_collinearity_judged_on_standardised_columns():
    Z = np.random.default_rng(1).normal(size=(100, 3))
    rjmcmc_pca(Z * [1e6, 1, 1e-6], **KW)                                   # independent, badly scaled: accepted
    for X in (np.c_[Z, Z[:, 0] * 1e6],                                     # a duplicated column, rescaled
              np.c_[Z * [1e6, 1, 1e-6], Z[:, 0] * 1e6 + Z[:, 2] * 1e-6],   # a sum of badly scaled columns
              np.c_[Z, np.full(len(Z), 4.0)]):                             # a constant column
        with pytest.raises(ValueError, match='^X: .*(collinear|constant)'):
            rjmcmc_pca(X, **KW)


# ---- item 4: argument types
@pytest.mark.parametrize('name', ['r', 'alpha', 'eta'])
@pytest.mark.parametrize('value', ['3', True, np.array([3.0])])
def test_hyperparameters_must_be_real_numbers(name, value):
    with pytest.raises(TypeError, match=f'^{name}: expected a real number'):
        rjmcmc_pca_from_eigenvalues(G, N, **{name: value}, **KW)
    with pytest.raises(TypeError, match=f'^{name}: expected a real number'):
        exact_posterior_q(G, N, **{name: value})


def test_prior_must_be_a_string():
    for f in (lambda p: rjmcmc_pca_from_eigenvalues(G, N, prior=p, **KW), lambda p: exact_posterior_q(G, N, prior=p)):
        with pytest.raises(ValueError, match='^prior: expected one of'): f(np.array(['ordered']))
        with pytest.raises(ValueError, match='^prior: expected one of'): f(['ordered'])
    assert type(rjmcmc_pca_from_eigenvalues(G, N, prior=np.str_('unordered'), **KW).prior) is str


@pytest.mark.parametrize('value', ['no', 0, 1, None])
def test_likelihood_and_progress_must_be_bools(value):
    with pytest.raises(TypeError, match='^likelihood: expected True or False'):
        exact_posterior_q(G, N, likelihood=value)
    with pytest.raises(TypeError, match='^likelihood: expected True or False'):
        rjmcmc_pca_from_eigenvalues(G, N, likelihood=value, **KW)
    with pytest.raises(TypeError, match='^progress: expected True or False'):
        rjmcmc_pca_from_eigenvalues(G, N, progress=value, **KW)


@pytest.mark.parametrize('args, match', [
    ((2.0, 1.0, np.nan, 3.0), '^lower, upper: expected 0 <= lower < upper'),
    ((2.0, 1.0, 1.0, np.nan), '^lower, upper: expected 0 <= lower < upper'),
    ((2.0, 1.0, [0.5, np.nan], 3.0), '^lower, upper'),
    ((np.nan, 1.0, 1.0, 2.0), '^shape, rate: expected finite values > 0'),
    ((2.0, np.inf, 1.0, 2.0), '^shape, rate: expected finite values > 0'),
])
def test_truncated_gamma_refuses_nan(args, match):
    with pytest.raises(ValueError, match=match):
        truncated_gamma(*args, np.random.default_rng(0))


@pytest.mark.parametrize('rng', [0, None, np.random.RandomState(0)])
def test_truncated_gamma_needs_a_generator(rng):
    with pytest.raises(TypeError, match='^rng: expected a numpy.random.Generator'):
        truncated_gamma(2.0, 1.0, 1.0, 3.0, rng)


def test_log_gamma_mass_bounds():
    for lo, hi in [(2, 0.5), (np.nan, 0.5), (1.0, np.nan), (-1.0, 2.0), (np.inf, np.inf)]:
        with pytest.raises(ValueError, match='^lo, hi: expected 0 <= lo <= hi'):
            log_gamma_mass(3, lo, hi)
    for a in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match='^a: expected finite values > 0'):
            log_gamma_mass(a, 1.0, 2.0)
    assert log_gamma_mass(3, 2.0, 2.0) == -np.inf                       # an empty interval: probability 0
    assert np.isclose(log_gamma_mass(3, 0.0, np.inf), 0.0)


@pytest.mark.skipif(not numba_available(), reason='numba not installed')
def test_progress_bar_counts_sweeps(monkeypatch):
    import tqdm.auto
    bars = []

    class Recorder(tqdm.auto.tqdm):
        def __init__(self, *a, **k):
            super().__init__(*a, file=io.StringIO(), **k); bars.append(self)

    monkeypatch.setattr(tqdm.auto, 'tqdm', Recorder)
    for engine in ('numba', 'numpy'):                   # the compiled sweep runs blocks of 1000, counted as sweeps
        rjmcmc_pca_from_eigenvalues(G, N, n_sweeps=2500, burn_in=500, progress=True, engine=engine, random_state=0)
    for bar in bars:
        assert (bar.total, bar.n, bar.unit) == (2500, 2500, 'sweep')
    assert len(bars) == 2
