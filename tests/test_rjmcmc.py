"""Reversible-jump MCMC over the number of principal components (`vbfa_lit.rjmcmc`).

The sampler is checked against the exact posterior p(q | g, N) computed by numerical integration (its own check is
against brute-force quadrature and the prior), with tolerances of three Monte-Carlo standard errors from the chains'
effective sample size; the prior check (likelihood off) uses a chi-square test and the order statistics of the prior;
the truncated-Gamma sampler is KS-tested against mpmath's arbitrary-precision CDF, tails included."""
import functools
import math
import warnings

import mpmath
import numpy as np
import pytest
from scipy import integrate, special, stats

from vbfa_lit.rjmcmc import (RJMCMCResult, conditional_parameters, effective_sample_size, exact_posterior_mean,
                             exact_posterior_q, log_birth_ratio, log_gamma_mass, move_probabilities, rjmcmc_pca,
                             rjmcmc_pca_from_eigenvalues, sample_eigenvalues, truncated_gamma)

SET1 = np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876])


# ---------------------------------------------------------------- truncated Gamma
TG_CASES = [(3.0, 0.5, 4.0), (503.0, 400.0, 410.0), (503.0, 40.0, 50.0), (3.0, 800.0, 810.0), (3.0, 800.0, np.inf),
            (0.5, 1000.0, 2000.0), (50003.0, 50000.0, 50000.001), (2.0, 0.0, 1e-3), (0.3, 1e-200, 1e-100),
            (1.0, 0.0, np.inf), (40.0, 0.0, 39.5)]


@pytest.mark.parametrize('a, lo, hi', TG_CASES)
def test_truncated_gamma_matches_exact_cdf(a, lo, hi):
    "KS test against mpmath's truncated CDF, on the bulk and on intervals far beyond double precision's tails."
    rng = np.random.default_rng(int(a * 7 + lo) % 1000)
    rate = 1.7
    x = truncated_gamma(np.full(600, a), rate, lo / rate, hi / rate, rng)
    assert np.all((x >= lo / rate) & (x <= hi / rate))
    assert stats.kstest(x, _truncated_gamma_cdf(a, lo, hi, rate)).pvalue > 1e-3


def _truncated_gamma_cdf(a, lo, hi, rate):
    """mpmath's CDF of Gamma(a, rate) truncated to [lo, hi] / rate: gammainc(a, lo, z) / gammainc(a, lo, hi).

    The two-sided gammainc(a, lo, z) evaluates the lower incomplete Gamma function at both ends for every z; where
    the mass is not far below gamma(a, lo) (at most 10 of mpmath's digits cancel), the same difference
    gamma(a, z) - gamma(a, lo) is taken with gamma(a, lo) computed once, with 30 digits (>= 20 left after the
    cancellation, against double precision's 16): 3.2 -> 0.06 s at a = 0.3 and 3.2 -> 1.0 s at a = 50003 for 600
    points, the same CDF as the two-sided call to 1.3e-15 at every sample of every case here. Elsewhere (tails where
    hundreds of digits cancel) the two-sided call is kept."""
    mass = mpmath.gammainc(a, lo, hi)
    with mpmath.workdps(30):
        low = mpmath.gammainc(a, 0, lo)
        fast = lo > 0 and low / mass < 1e10
    if not fast:
        return lambda z: np.array([float(mpmath.gammainc(a, lo, zz * rate) / mass) for zz in np.atleast_1d(z)])

    def cdf(z):
        with mpmath.workdps(30):
            return np.array([float((mpmath.gammainc(a, 0, zz * rate) - low) / mass) for zz in np.atleast_1d(z)])
    return cdf


@pytest.mark.parametrize('a, lo, hi', TG_CASES)
def test_log_gamma_mass_matches_mpmath(a, lo, hi):
    ref = float(mpmath.log(mpmath.gammainc(a, lo, hi, regularized=True)))
    assert log_gamma_mass(a, lo, hi) == pytest.approx(ref, rel=1e-9, abs=1e-9)


def test_truncated_gamma_scalar_and_broadcast():
    rng = np.random.default_rng(0)
    x = truncated_gamma(3.0, 1.0, 800.0, 810.0, rng)             # scalar input through the rejection path
    assert np.ndim(x) == 0 and 800 <= x <= 810
    y = truncated_gamma([2.0, 5.0], [[1.0], [2.0]], 0.5, np.inf, rng)
    assert y.shape == (2, 2) and np.all(y >= 0.5)


def test_truncated_gamma_rejects_bad_intervals():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match='lower, upper'): truncated_gamma(2.0, 1.0, 3.0, 2.0, rng)
    with pytest.raises(ValueError, match='shape, rate'): truncated_gamma(-1.0, 1.0, 0.0, 2.0, rng)


# ---------------------------------------------------------------- the moves
def _log_joint(q, x, s, tau, g, n, r, alpha, eta):
    "log p(q, x, s, tau, D) written out directly with scipy.stats (ordered prior with its (q+1)!)."
    d = len(g)
    ll = n / 2 * sum(np.log(xj) - gj * xj for xj, gj in zip(x, g)) + n * (d - q) / 2 * np.log(s) - n * s / 2 * g[q:].sum()
    lp = math.lgamma(q + 2) + sum(stats.gamma.logpdf(v, r, scale=1 / tau) for v in (*x, s))
    return ll + lp + stats.gamma.logpdf(tau, alpha, scale=1 / eta) - np.log(d - 1)


@pytest.mark.parametrize('q', [1, 2, 3])
def test_birth_ratio_is_greens_ratio(q):
    "log_birth_ratio == log pi(q+1) - log pi(q) + log d_{q+1} - log b_q - log h(v), h the truncated prior proposal."
    rng = np.random.default_rng(q)
    g, n, r, alpha, eta, d = np.array([6.0, 4.0, 2.5, 1.5, 1.0]), 30.0, 3.0, 0.5, 0.4, 5
    x = np.sort(rng.uniform(0.1, 1.0, q + 2))
    xs, v, s, tau = x[:q], x[q], x[q + 1], 1.3
    b, dd = move_probabilities(d)
    lo = xs[-1]
    log_h = stats.gamma.logpdf(v, r, scale=1 / tau) - np.log(stats.gamma.cdf(s, r, scale=1 / tau) - stats.gamma.cdf(lo, r, scale=1 / tau))
    direct = (_log_joint(q + 1, [*xs, v], s, tau, g, n, r, alpha, eta) - _log_joint(q, xs, s, tau, g, n, r, alpha, eta)
              + np.log(dd[q + 1]) - np.log(b[q]) - log_h)
    ours = log_birth_ratio(np.array([v]), np.array([lo]), np.array([s]), np.array([q]), np.array([tau]), g, n, r, b, dd)[0]
    assert ours == pytest.approx(direct, abs=1e-10)


def test_conditional_parameters_are_the_full_conditionals():
    "The log joint as a function of one precision is (a-1) log x - b x + const with the returned (a, b)."
    g, n, r, tau, q = np.array([5.0, 3.0, 1.0, 0.5]), 20.0, 2.0, 0.7, 2
    a, b = conditional_parameters(q, tau, g, n, r)
    base = [0.2, 0.5, 1.3]
    for j in range(q + 1):
        vals = np.array([0.3, 0.4, 0.45]) if j < 2 else np.array([1.0, 1.5, 2.5])
        lj = []
        for val in vals:
            x = list(base); x[j] = val
            lj.append(_log_joint(q, x[:q], x[q], tau, g, n, r, 0.5, 1.0))
        model = (a[j] - 1) * np.log(vals) - b[j] * vals
        diffs = np.array(lj) - model
        assert np.ptp(diffs) < 1e-9


def test_move_probabilities_at_the_ends():
    b, dd = move_probabilities(5)
    assert b[1] == 1 and dd[1] == 0 and b[4] == 0 and dd[4] == 1
    assert np.all(b[2:4] == 0.5) and np.all(dd[2:4] == 0.5)
    assert np.all(b + dd <= 1)


# ---------------------------------------------------------------- the exact posterior
def test_exact_posterior_with_likelihood_off_is_the_uniform_prior():
    p = exact_posterior_q([5.0, 3.0, 2.0, 1.0, 0.5], 0, likelihood=False)
    np.testing.assert_allclose(p, 0.25, atol=5e-5)


def test_exact_posterior_converges_with_the_grid():
    coarse = exact_posterior_q(SET1, 1000, density=8)
    fine = exact_posterior_q(SET1, 1000, density=16, n_tau=320)
    np.testing.assert_allclose(coarse, fine, atol=1e-6)


@pytest.mark.slow
def test_exact_posterior_matches_nested_quadrature():
    "d = 3, small N: adaptive quadrature over tau and the ordered precisions (innermost integral in closed form)."
    g3, n3, eta3, r = np.array([3.0, 1.5, 0.7]), 12, 0.6, 3.0
    kw = dict(epsabs=0, epsrel=1e-7, limit=200)

    def brute(q):
        a, _ = conditional_parameters(q, 1.0, g3, n3, r)
        def inner(t):
            _, b = conditional_parameters(q, t, g3, n3, r)
            k = lambda j, x: x ** (a[j] - 1) * np.exp(-b[j] * x)
            F0 = lambda x: math.gamma(a[0]) * special.gammainc(a[0], b[0] * x) / b[0] ** a[0]
            if q == 1: val = integrate.quad(lambda s: k(1, s) * F0(s), 0, np.inf, **kw)[0]
            else: val = integrate.quad(lambda s: k(2, s) * integrate.quad(lambda x2: k(1, x2) * F0(x2), 0, s, **kw)[0],
                                       0, np.inf, **kw)[0]
            return val * math.factorial(q + 1) * (t ** r / math.gamma(r)) ** (q + 1) * stats.gamma.pdf(t, 0.5, scale=1 / eta3)
        return integrate.quad(inner, 0, np.inf, **kw)[0]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', integrate.IntegrationWarning)
        bf = np.array([brute(1), brute(2)])
    np.testing.assert_allclose(exact_posterior_q(g3, n3, eta=eta3), bf / bf.sum(), atol=1e-6)


# ---------------------------------------------------------------- the sampler against the exact posterior
def _agrees_with_exact(res, exact):
    "Every q within 3 Monte-Carlo standard errors, sd from the exact p and the chains' ESS of 1[q_t = q]."
    pq = res.posterior_q()
    visited = np.isfinite(pq.ess)
    ess = np.where(visited, pq.ess, np.nanmin(pq.ess) if visited.any() else res.q.size)
    sd = np.sqrt(exact * (1 - exact) / ess)
    z = np.abs(pq.p - exact) / np.maximum(sd, 1e-12)
    return z, pq


SPECTRA = {  # name: (g, N); 'spread' puts mass on >= 3 values of q
    'spread': (np.array([4.0, 2.2, 1.5, 1.2, 0.9, 0.7]), 40),
    'set1': (SET1, 1000),
    'd4': (np.array([3.0, 1.4, 1.0, 0.8]), 60),
    'd3': (np.array([2.0, 1.2, 0.9]), 15),   # two models only: the birth/death pair alone sets p(1) : p(2) (detailed balance)
}


@functools.lru_cache(maxsize=None)
def long_chains(name, seed):
    "8 chains of 5000 sweeps on a spectrum and its exact p(q), run once: the p(q) and the mean tests read the same draws."
    g, n = SPECTRA[name]
    return (rjmcmc_pca_from_eigenvalues(g, n, n_sweeps=5000, burn_in=500, n_chains=8, random_state=seed),
            exact_posterior_q(g, n))


@pytest.mark.parametrize('name', list(SPECTRA))
@pytest.mark.parametrize('seed', [0, 1])
def test_sampler_matches_exact_posterior(name, seed):
    res, exact = long_chains(name, seed)
    if name == 'spread': assert np.sum(exact > 0.1) >= 3
    z, pq = _agrees_with_exact(res, exact)
    assert np.all(z < 3), (pq.p, exact, z)


def test_prior_check_chi_square_and_order_statistics():
    "Likelihood off: q uniform (chi-square on ESS-scaled counts), tau ~ Gamma(alpha, eta), and the ordered precisions."
    d, r, alpha, eta = 5, 3.0, 0.5, 2.0
    res = rjmcmc_pca_from_eigenvalues(np.ones(d), 0, likelihood=False, r=r, alpha=alpha, eta=eta, n_sweeps=6000,
                                      burn_in=500, n_chains=8, random_state=3)
    pq = res.posterior_q()
    n_eff = np.nanmin(pq.ess)
    chi2 = n_eff * np.sum((pq.p - 0.25) ** 2 / 0.25)
    assert stats.chi2.sf(chi2, d - 2) > 1e-3, (pq.p, n_eff)
    thin = max(1, int(res.q.size / effective_sample_size(res.tau)))
    assert stats.kstest(res.tau.reshape(-1)[::thin], stats.gamma(alpha, scale=1 / eta).cdf).pvalue > 1e-3
    # given q = 2 and tau, P(r, tau x_1) is the smallest of 3 uniforms: Beta(1, 3); P(r, tau s) the largest: Beta(3, 1)
    at2 = res.q == 2
    u_first = special.gammainc(r, res.tau[at2] / res.l[at2][:, 0])
    u_last = special.gammainc(r, res.tau[at2] / res.sigma2[at2])
    thin2 = 2 * int(np.ceil(res.q.size / n_eff))                    # twice the integrated autocorrelation time
    assert stats.kstest(u_first[::thin2], stats.beta(1, 3).cdf).pvalue > 1e-3
    assert stats.kstest(u_last[::thin2], stats.beta(3, 1).cdf).pvalue > 1e-3


# ---------------------------------------------------------------- invariants
def test_chains_never_leave_the_ordered_region():
    res = rjmcmc_pca_from_eigenvalues(SPECTRA['spread'][0], 40, n_sweeps=2000, burn_in=0, n_chains=6, random_state=5)
    d = 6
    full = np.concatenate([res.l, np.full(res.l.shape[:2] + (1,), np.nan)], axis=2)
    full[np.arange(d)[None, None, :] == res.q[..., None]] = res.sigma2.reshape(-1)
    for c in range(res.n_chains):
        for t in range(0, res.q.shape[1], 7):
            seq = full[c, t, :res.q[c, t] + 1]
            assert np.all(np.diff(seq) < 0) and np.all(seq > 0)
    assert np.all(np.isnan(res.l[np.arange(d - 1)[None, None, :] >= res.q[..., None]]))
    assert np.all((res.q >= 1) & (res.q <= d - 1))


def test_seed_reproducibility():
    kw = dict(n_sweeps=400, burn_in=100, n_chains=3)
    a = rjmcmc_pca_from_eigenvalues(SET1, 1000, random_state=11, **kw)
    b = rjmcmc_pca_from_eigenvalues(SET1, 1000, random_state=np.random.default_rng(11), **kw)
    c = rjmcmc_pca_from_eigenvalues(SET1, 1000, random_state=12, **kw)
    np.testing.assert_array_equal(a.q, b.q); np.testing.assert_array_equal(a.sigma2, b.sigma2)
    assert not np.array_equal(a.sigma2, c.sigma2)
    rjmcmc_pca_from_eigenvalues(SET1, 1000, random_state=np.random.RandomState(0), **kw)


def test_data_entry_point_and_units():
    "rjmcmc_pca(X) == the eigenvalue entry point; rescaling X rescales l and sigma^2 and leaves q unchanged."
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 5)) * np.array([3.0, 2.0, 1.0, 1.0, 1.0]) + 100.0
    kw = dict(n_sweeps=1500, burn_in=500, n_chains=2, random_state=4)
    res = rjmcmc_pca(X, **kw)
    g, n = sample_eigenvalues(X)
    ref = rjmcmc_pca_from_eigenvalues(g, n, **kw)
    np.testing.assert_array_equal(res.q, ref.q)
    scaled = rjmcmc_pca(1e3 * X, **kw)
    assert np.mean(scaled.q == res.q) > 0.99
    same = scaled.q == res.q
    np.testing.assert_allclose(scaled.sigma2[same], 1e6 * res.sigma2[same], rtol=1e-6)


def test_effective_sample_size():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 5000))
    assert effective_sample_size(iid) == pytest.approx(20000, rel=0.1)
    rho, x = 0.9, np.zeros((4, 20000))
    e = rng.normal(size=x.shape)
    for t in range(1, x.shape[1]): x[:, t] = rho * x[:, t - 1] + e[:, t]
    assert effective_sample_size(x) == pytest.approx(80000 * (1 - rho) / (1 + rho), rel=0.15)
    assert np.isnan(effective_sample_size(np.ones((2, 100))))


def _conditional_mean_z(res, q, exact_l, exact_s2):
    """(sampler - exact) / Monte-Carlo s.e. for the posterior means of l_1..l_q, sigma^2 given q. The estimator is the
    ratio sum_t l_t 1[q_t = q] / sum_t 1[q_t = q]; by the delta method its s.e. is sqrt(var(z) / ESS(z)) / p(q) with
    z_t = (l_t - m) 1[q_t = q], ESS from the chains (effective_sample_size, pooled)."""
    at = res.q == q
    vals = np.concatenate([np.nan_to_num(res.l[..., :q]), res.sigma2[..., None]], axis=2)
    m = vals[at].mean(0)
    se = np.array([np.sqrt(np.var(z) / effective_sample_size(z)) / at.mean()
                   for z in np.moveaxis((vals - m) * at[..., None], 2, 0)])
    return (m - np.r_[exact_l, exact_s2]) / se


def test_result_summaries():
    res = rjmcmc_pca_from_eigenvalues(SET1, 1000, n_sweeps=3000, burn_in=1000, n_chains=2, random_state=0)
    assert isinstance(res, RJMCMCResult) and res.q.shape == (2, 2000) and res.l.shape == (2, 2000, 5)
    pq = res.posterior_q()
    assert pq.p.sum() == pytest.approx(1) and np.all(pq.se >= 0)
    # conditional means within 4 Monte-Carlo standard errors of the exact ones (6 values, 2 values of q)
    for q in (4, 5):
        z = _conditional_mean_z(res, q, *exact_posterior_mean(SET1, 1000, q))
        assert np.all(np.abs(z) < 4), (q, z)
    l4, s4 = res.posterior_mean(4)
    assert l4.shape == (4,) and isinstance(s4, float)
    assert np.all((res.birth_rate > 0) & (res.birth_rate < 1)) and np.all((res.death_rate > 0) & (res.death_rate < 1))
    with pytest.raises(ValueError, match='q'): res.posterior_mean(1)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize('kwargs, match', [
    (dict(eigenvalues=[1.0]), 'eigenvalues'),
    (dict(eigenvalues=[1.0, 2.0]), 'sorted'),
    (dict(eigenvalues=[2.0, 0.0]), 'eigenvalues'),
    (dict(eigenvalues=[2.0, np.nan]), 'eigenvalues'),
    (dict(n_samples=1), 'n_samples'),
    (dict(n_sweeps=100, burn_in=100), 'n_sweeps'),
    (dict(burn_in=-1), 'burn_in'),
    (dict(r=0.0), 'r'),
    (dict(alpha=-1.0), 'alpha'),
    (dict(eta=0.0), 'eta'),
    (dict(eta=np.inf), 'eta'),
    (dict(n_chains=0), 'n_chains'),
])
def test_bad_eigenvalue_input(kwargs, match):
    args = dict(eigenvalues=[3.0, 2.0, 1.0], n_samples=10, n_sweeps=20, burn_in=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        rjmcmc_pca_from_eigenvalues(args.pop('eigenvalues'), args.pop('n_samples'), **args)


@pytest.mark.parametrize('X, match', [
    (np.ones((1, 3)), 'at least 2 samples'),
    (np.ones((10, 1)), 'at least 2 features'),
    (np.where(np.eye(10, 3) > 0, np.nan, 1.0), 'VBPCA'),
    (np.where(np.eye(10, 3) > 0, np.inf, 1.0), 'infinite'),
    (np.random.default_rng(0).normal(size=(3, 5)), 'singular'),
    (np.ones(5), '2-d'),
])
def test_bad_data(X, match):
    with pytest.raises(ValueError, match=match):
        rjmcmc_pca(X, n_sweeps=20, burn_in=10)


def test_bad_types():
    with pytest.raises(TypeError, match='random_state'):
        rjmcmc_pca_from_eigenvalues([2.0, 1.0], 10, n_sweeps=20, burn_in=10, random_state='seed')
    with pytest.raises(TypeError, match='n_sweeps'):
        rjmcmc_pca_from_eigenvalues([2.0, 1.0], 10, n_sweeps=20.5, burn_in=10)


def test_two_dimensions_has_one_model():
    res = rjmcmc_pca_from_eigenvalues([2.0, 1.0], 50, n_sweeps=300, burn_in=100, random_state=0)
    assert np.all(res.q == 1) and res.posterior_q().p.tolist() == [1.0]


# ---------------------------------------------------------------- exact means, the unordered variant
@pytest.mark.parametrize('name', ['spread', 'set1', 'd4'])
def test_posterior_means_match_exact(name):
    "Conditional means of l_j and sigma^2 at the two most probable q within 4 Monte-Carlo s.e. (ESS) of the exact ones."
    g, n = SPECTRA[name]
    res, exact = long_chains(name, 1)                           # the draws of test_sampler_matches_exact_posterior
    for q in np.argsort(exact)[::-1][:2] + 1:
        if np.mean(res.q == q) < 0.05: continue                 # too few visits for the delta method
        z = _conditional_mean_z(res, int(q), *exact_posterior_mean(g, n, int(q)))
        assert np.all(np.abs(z) < 4), (name, q, z)


def test_exact_posterior_mean_against_quadrature():
    "d = 3, q = 1: E[l_1] and E[sigma^2] by nested adaptive quadrature over tau, x_1 < s."
    g3, n3, eta3, r, alpha = np.array([3.0, 1.5, 0.7]), 12, 0.6, 3.0, 0.5
    a, _ = conditional_parameters(1, 1.0, g3, n3, r)
    kw = dict(epsabs=0, epsrel=1e-8, limit=200)

    def moment(shift):
        aa = a - shift
        def inner(t):
            _, b = conditional_parameters(1, t, g3, n3, r)
            F0 = lambda x: math.gamma(aa[0]) * special.gammainc(aa[0], b[0] * x) / b[0] ** aa[0]
            val = integrate.quad(lambda s: s ** (aa[1] - 1) * np.exp(-b[1] * s) * F0(s), 0, np.inf, **kw)[0]
            return val * t ** (2 * r) * stats.gamma.pdf(t, alpha, scale=1 / eta3)
        return integrate.quad(inner, 0, np.inf, **kw)[0]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', integrate.IntegrationWarning)
        base = moment(np.zeros(2))
        ref = [moment(np.array([1.0, 0.0])) / base, moment(np.array([0.0, 1.0])) / base]
    l, s2 = exact_posterior_mean(g3, n3, 1, eta=eta3)
    np.testing.assert_allclose([l[0], s2], ref, rtol=1e-6)


def test_unordered_exact_is_the_reweighted_ordered():
    g, n = SPECTRA['spread']
    fact = np.array([math.factorial(q + 1) for q in range(1, len(g))])
    p, u = exact_posterior_q(g, n), exact_posterior_q(g, n, prior='unordered')
    np.testing.assert_allclose(u, p / fact / (p / fact).sum(), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize('seed', [0, 1])
def test_unordered_sampler_matches_exact(seed):
    g, n = SPECTRA['spread']
    exact = exact_posterior_q(g, n, prior='unordered')
    res = rjmcmc_pca_from_eigenvalues(g, n, n_sweeps=5000, burn_in=500, n_chains=8, random_state=seed, prior='unordered')
    assert res.prior == 'unordered'
    z, pq = _agrees_with_exact(res, exact)
    assert np.all(z < 3), (pq.p, exact, z)


def test_unordered_prior_on_q_is_one_over_factorial():
    "Likelihood off, prior='unordered': p(q) proportional to 1/(q+1)!; chi-square on ESS-scaled frequencies."
    d = 5
    res = rjmcmc_pca_from_eigenvalues(np.ones(d), 0, likelihood=False, prior='unordered', eta=2.0, n_sweeps=8000,
                                      burn_in=500, n_chains=8, random_state=4)
    target = 1 / np.array([math.factorial(q + 1) for q in range(1, d)])
    target /= target.sum()
    pq = res.posterior_q()
    # the ESS of the rarest visited indicator is the smallest: the conservative scaling of the counts
    n_eff = np.nanmin(pq.ess)
    chi2 = n_eff * np.sum((pq.p - target) ** 2 / target)
    assert stats.chi2.sf(chi2, d - 2) > 1e-3, (pq.p, target, n_eff)
    np.testing.assert_allclose(exact_posterior_q(np.ones(d), 0, likelihood=False, prior='unordered'), target, atol=1e-4)


def test_same_chain_in_any_units():
    "The sampler runs in power-of-two units: g * 2^k gives the same q and l * 2^k draw for draw."
    kw = dict(n_sweeps=600, burn_in=100, n_chains=3, random_state=9)
    a = rjmcmc_pca_from_eigenvalues(SET1, 1000, **kw)
    b = rjmcmc_pca_from_eigenvalues(SET1 * 2.0 ** 40, 1000, **kw)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.sigma2 * 2.0 ** 40, b.sigma2)


@pytest.mark.parametrize('kwargs, exc, match', [
    (dict(density=1), ValueError, 'density'), (dict(density=2.5), TypeError, 'density'),
    (dict(n_tau=1), ValueError, 'n_tau'), (dict(n_tau=0), ValueError, 'n_tau'), (dict(n_tau=10.0), TypeError, 'n_tau'),
    (dict(prior='flat'), ValueError, 'prior'),
])
def test_exact_posterior_bad_settings(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        exact_posterior_q(SET1, 1000, **kwargs)


@pytest.mark.parametrize('make, match', [
    (lambda X: np.column_stack([X, np.full(len(X), 3.0)]), 'constant'),
    (lambda X: np.column_stack([X, X[:, 0]]), 'collinear'),
    (lambda X: X + 1j, 'Complex'),
])
def test_singular_and_complex_data_named(make, match):
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match=match):
        rjmcmc_pca(make(X), n_sweeps=20, burn_in=10)


def test_chains_stuck_in_different_modes_warn():
    # Issue 20, item 4: with r = 1e4 the exact p(q) of Set 1 is bimodal (q = 1 ahead of q = 4 by ~115 nats, q = 2, 3
    # another ~15 nats lower); birth-death chains cannot cross and stay where they start. Each chain's q is constant
    # or nearly so while the chains differ: the split R-hat of the indicator is inf, and the sampler says so.
    import warnings
    from vbfa_lit.estimator import ConvergenceWarning
    g = [8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]
    exact = exact_posterior_q(g, 1000, r=1e4)
    assert exact[0] > 0.999                                    # q = 1 carries the posterior
    with pytest.warns(ConvergenceWarning, match='chains disagree'):
        res = rjmcmc_pca_from_eigenvalues(g, 1000, r=1e4, n_sweeps=2000, burn_in=500, n_chains=8, random_state=3)
    assert len({int(np.bincount(q).argmax()) for q in res.q}) > 1
    # at the paper's r = 3 the same number of chains agree, and nothing is said
    with warnings.catch_warnings():
        warnings.simplefilter('error', ConvergenceWarning)
        res = rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=6000, burn_in=1000, n_chains=4, random_state=0)
    assert np.nanmax(res.split_rhat_q()) < 1.1


def test_result_repr_is_short():
    res = rjmcmc_pca_from_eigenvalues([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876], 1000, n_sweeps=600,
                                      burn_in=100, n_chains=2, random_state=0)
    text = repr(res)
    assert text.startswith('RJMCMCResult(2 chain(s) x 500 kept draws, d = 6, N = 1000') and 'p(q) = {' in text
    assert len(text) < 300 and 'array' not in text


def test_callback_sees_every_sweep_and_cancels():
    from vbfa_lit.rjmcmc import SamplingCancelled, SweepState
    g = [8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]
    seen = []
    def cb(sweep, state):
        assert isinstance(state, SweepState) and state.q.shape == (2,) and state.n_sweeps == 300
        seen.append((sweep, state.q.copy()))
    res = rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=300, burn_in=100, n_chains=2, random_state=3, callback=cb)
    ref = rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=300, burn_in=100, n_chains=2, random_state=3)
    np.testing.assert_array_equal(res.q, ref.q)                       # the callback does not change the draws
    assert [s for s, _ in seen] == list(range(1, 301))
    np.testing.assert_array_equal(np.array([q for _, q in seen[100:]]).T, res.q)
    calls = []
    with pytest.raises(SamplingCancelled, match='after sweep 5 of 300'):
        rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=300, burn_in=100, random_state=3,
                                    callback=lambda sweep, state: calls.append(sweep) or sweep == 5)
    assert calls == [1, 2, 3, 4, 5]
    class Stop(Exception): pass
    def raiser(sweep, state): raise Stop()
    with pytest.raises(Stop): rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=300, burn_in=100, callback=raiser)
    with pytest.raises(TypeError, match='callback'): rjmcmc_pca_from_eigenvalues(g, 1000, callback=3)
