"""The lessons' reference implementations (06 reversible jump, 07 Householder map, 08 Householder PPCA) against the
library's production code: the same numbers to 1e-10, and for the sampler the same moves from the same random
numbers."""
import warnings

import numpy as np
import pytest

from vbfa_lit import rjmcmc as R
from vbfa_lit.rjmcmc import (reference_birth, reference_death, reference_log_birth_ratio, reference_sweep,
                             reference_truncated_gamma)


# ---------------------------------------------------------------- 06: reversible-jump MCMC (Zhang et al.)

def _problem(seed, d, N, signal):
    "Eigenvalues of a sample covariance with `signal` strong directions among d, and a start near the posterior."
    rng = np.random.default_rng(seed)
    sd = np.r_[np.linspace(3.0, 1.6, signal), np.ones(d - signal)]
    X = rng.normal(size=(N, d)) * sd
    g = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    q0 = int(rng.integers(1, d))
    return g, q0, 1 / g[:q0], 1 / g[q0:].mean()


def _production_chain(g, N, x0, s0, tau0, n_sweeps, seed, r=3.0, alpha=0.5, eta=None):
    "One chain of the library's vectorised sweep (C = 1): (x, s, tau) after every sweep, and the move counts."
    d, eta = g.size, 1.2 / g.mean() if eta is None else eta
    y = np.ones((1, d + 2)); y[:, 0], y[:, -1] = 0.0, np.inf
    q = np.array([len(x0)]); y[0, 1:q[0] + 1], y[0, q[0] + 1] = x0, s0
    tau, counts = np.array([tau0]), np.zeros((4, 1))
    b, dd = R.move_probabilities(d)
    tables, rng, out = R._tables(g, N, r), np.random.default_rng(seed), []
    with np.errstate(all='ignore'):
        for _ in range(n_sweeps):
            R._sweep(y, q, tau, g, N, r, alpha, eta, b, dd, tables, rng, counts)
            out.append((y[0, 1:q[0] + 1].copy(), y[0, q[0] + 1], tau[0]))
    return out, counts[:, 0]


def _reference_chain(g, N, x0, s0, tau0, n_sweeps, seed, r=3.0, alpha=0.5, eta=None):
    eta = 1.2 / g.mean() if eta is None else eta
    rng, x, s, tau, out = np.random.default_rng(seed), np.array(x0, float), s0, tau0, []
    for _ in range(n_sweeps):
        x, s, tau = reference_sweep(x, s, tau, g, N, r, alpha, eta, rng)
        out.append((x.copy(), s, tau))
    return out


def _assert_same_chain(prod, ref):
    worst = 0.0
    for t, ((xp, sp_, tp), (xr, sr, tr)) in enumerate(zip(prod, ref)):
        assert len(xp) == len(xr), f"sweep {t}: q = {len(xp)} (library) != {len(xr)} (reference)"
        a, b = np.r_[xp, sp_, tp], np.r_[xr, sr, tr]
        worst = max(worst, float(np.max(np.abs(a - b) / np.abs(a))))
    assert worst <= 1e-10, worst
    return worst


@pytest.mark.parametrize('seed, d, N, signal', [(0, 3, 40, 1), (1, 5, 60, 2), (2, 6, 100, 3), (3, 8, 150, 3),
                                                (4, 10, 200, 4)])
def test_reference_sweep_makes_the_librarys_moves(seed, d, N, signal):
    "Driven by the same generator, the reference sweep and one chain of the library's sweep agree sweep by sweep."
    g, q0, x0, s0 = _problem(seed, d, N, signal)
    prod, counts = _production_chain(g, N, x0, s0, 1.0, 400, seed)
    _assert_same_chain(prod, _reference_chain(g, N, x0, s0, 1.0, 400, seed))
    assert counts[1] > 0 and counts[3] > 0, f"no accepted birth or no accepted death: {counts}"   # moves exercised


def test_reference_sweep_matches_the_public_sampler_under_the_prior():
    """rjmcmc_pca_from_eigenvalues with the likelihood off (one chain, NumPy engine, g in units where the sampler
    does not rescale) against the reference started from the same draw of the prior."""
    g, r, alpha, eta, K = np.array([2.0, 1.5, 1.0, 0.8, 0.5]), 3.0, 0.5, 1.1, 300
    assert R._unit(g) == 1.0
    for seed in (0, 1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')      # one chain: the split R-hat may warn
            res = R.rjmcmc_pca_from_eigenvalues(g, 10, n_sweeps=K, burn_in=0, r=r, alpha=alpha, eta=eta, n_chains=1,
                                                random_state=seed, likelihood=False, engine='numpy')
        rng = np.random.default_rng(seed)                       # the sampler's start: q, tau, then the precisions
        q0 = int(rng.integers(1, g.size, size=1)[0])
        tau = rng.gamma(alpha, 1 / eta, size=1)[0]
        p = np.sort(rng.gamma(r, 1 / tau, size=q0 + 1))
        x, s = p[:-1], p[-1]
        for t in range(K):
            x, s, tau = reference_sweep(x, s, tau, g, 0.0, r, alpha, eta, rng)
            assert len(x) == res.q[0, t]
            np.testing.assert_allclose(1 / x, res.l[0, t, :len(x)], rtol=1e-10)
            np.testing.assert_allclose([1 / s, tau], [res.sigma2[0, t], res.tau[0, t]], rtol=1e-10)
        assert len(set(res.q[0])) > 2                       # the chain moved between models


def test_reference_birth_ratio_equals_the_librarys():
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(300):
        d = int(rng.integers(3, 12)); q = int(rng.integers(1, d - 1))     # a birth q -> q+1 <= d-1
        g = np.sort(rng.gamma(1.0, 2.0, d))[::-1]
        N, r, tau = float(rng.integers(5, 2000)), rng.uniform(0.5, 5), rng.gamma(2.0, 1.0)
        prec = np.sort(rng.gamma(2.0, 1.0, q + 2))                      # x_1..x_q, v, s
        x, v, s = prec[:q], prec[q], prec[-1]
        b, dd = R.move_probabilities(d)
        lib = float(R.log_birth_ratio(np.array([v]), np.array([x[-1]]), np.array([s]), np.array([q]),
                                      np.array([tau]), g, N, r, b, dd)[0])
        ref = reference_log_birth_ratio(v, x, s, tau, g, N, r)
        worst = max(worst, abs(lib - ref) / max(1.0, abs(lib)))
    assert worst <= 1e-10, worst


def test_reference_birth_and_death_accept_as_the_ratio_says():
    "A birth is kept iff w < R and a death iff w < 1/R, with R the library's ratio; the proposal is the library's draw."
    rng = np.random.default_rng(6)
    g, N, r, tau = np.array([5.0, 3.0, 1.2, 1.0, 0.8]), 50.0, 3.0, 0.7
    b, dd = R.move_probabilities(g.size)
    for _ in range(200):
        q = int(rng.integers(2, 4))
        prec = np.sort(1 / np.r_[g[:q], g[q:].mean()] * rng.uniform(0.8, 1.2, q + 1))
        x, s, u, w = prec[:q], prec[-1], rng.random(), rng.random()
        v = float(R.truncated_gamma(r, tau, x[-1], s, np.random.default_rng(int(u * 2**32))))
        v_ref = reference_truncated_gamma(r, tau, x[-1], s, np.random.default_rng(int(u * 2**32)).random())
        assert abs(v - v_ref) <= 1e-10 * v
        log_r = R.log_birth_ratio(np.array([v]), x[-1:], np.array([s]), np.array([q]), np.array([tau]), g, N, r, b,
                                  dd)[0]
        born = reference_birth(x, s, tau, g, N, r, np.random.default_rng(int(u * 2**32)).random(), w)
        assert (len(born) == q + 1) == (np.log(w) < log_r)
        log_r_back = R.log_birth_ratio(x[-1:], x[-2:-1], np.array([s]), np.array([q - 1]), np.array([tau]), g, N, r,
                                       b, dd)[0]
        died = reference_death(x, s, tau, g, N, r, w)
        assert (len(died) == q - 1) == (np.log(w) < -log_r_back)


@pytest.mark.parametrize('a, lo, hi', [(3.0, 0.5, 4.0), (503.0, 400.0, 410.0), (53.0, 40.0, np.inf),
                                       (2.0, 0.0, 1e-1), (0.5, 0.1, 3.0), (3003.0, 2990.0, 3010.0)])
def test_reference_truncated_gamma_equals_the_librarys(a, lo, hi):
    "Inside the bulk (where the library does not need its rejection sampler) the same draws and the same mass."
    b = 1.7
    prod = R.truncated_gamma(np.full(200, a), b, lo / b, hi / b, np.random.default_rng(1))
    u = np.random.default_rng(1).random(200)
    ref = np.array([reference_truncated_gamma(a, b, lo / b, hi / b, ui) for ui in u])
    np.testing.assert_allclose(ref, prod, rtol=1e-10)
    np.testing.assert_allclose(np.log(reference_truncated_gamma(a, b, lo / b, hi / b)),
                               R.log_gamma_mass(a, lo, hi), rtol=1e-10)
