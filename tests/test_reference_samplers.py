"""The lessons' reference implementations (06 reversible jump, 07 Householder map, 08 Householder PPCA) against the
library's production code: the same numbers to 1e-10, and for the sampler the same moves from the same random
numbers."""
import importlib
import warnings

import numpy as np
import pytest

R = importlib.import_module('vbfa_lit.rjmcmc')
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


# ---------------------------------------------------------------- 07: Householder map on the Stiefel manifold

from vbfa_lit.stiefel import (householder_matrix, householder_to_stiefel, reference_householder,  # noqa: E402
                              reference_householder_to_stiefel, reference_sample_stiefel,
                              reference_singular_value_logpdf, reference_swap_reflection, sample_stiefel,
                              singular_value_logpdf)

_SIZES = [(1, 1), (2, 1), (2, 2), (3, 2), (5, 3), (8, 8), (12, 4), (30, 5)]


@pytest.mark.parametrize('reflection, ref', [('mezzadri', reference_householder),
                                             ('swap', reference_swap_reflection)])
def test_reference_reflection_equals_the_librarys(reflection, ref):
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 6, 20):
        for scale in (1.0, 1e-3, 1e3):
            v = rng.normal(size=n) * scale
            np.testing.assert_allclose(ref(v), householder_matrix(v, reflection=reflection), rtol=0, atol=1e-12)


@pytest.mark.parametrize('reflection, ref', [('mezzadri', reference_householder),
                                             ('swap', reference_swap_reflection)])
def test_reference_map_equals_the_librarys(reflection, ref):
    "The reference product of M x M reflections and the library's rank-one updates, one draw and batched."
    rng = np.random.default_rng(8)
    worst = 0.0
    for M, D in _SIZES:
        vecs = [rng.normal(size=(3, M - k)) for k in range(D)]
        batched = householder_to_stiefel(vecs, reflection=reflection)
        for i in range(3):
            one = [v[i] for v in vecs]
            U_ref = reference_householder_to_stiefel(one, ref)
            worst = max(worst, np.abs(U_ref - batched[i]).max(),
                        np.abs(U_ref - householder_to_stiefel(one, reflection=reflection)).max())
    assert worst <= 1e-10, worst


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_reference_sampler_step_equals_the_librarys(seed):
    "Same generator, same normal numbers in the same order: the same point of the Stiefel manifold."
    for M, D in _SIZES:
        U_ref = reference_sample_stiefel(M, D, np.random.default_rng(seed))
        U = sample_stiefel(M, D, random_state=np.random.default_rng(seed))
        np.testing.assert_allclose(U_ref, U, rtol=0, atol=1e-10)
        Us = sample_stiefel(M, D, random_state=np.random.default_rng(seed), reflection='swap')
        rng = np.random.default_rng(seed)
        U_swap = reference_householder_to_stiefel([rng.standard_normal(M - k) for k in range(D)],
                                                  reference_swap_reflection)
        np.testing.assert_allclose(U_swap, Us, rtol=0, atol=1e-10)


def test_reference_singular_value_logpdf_equals_the_librarys():
    rng = np.random.default_rng(9)
    for D in (1, 2, 3, 5):
        for M in (D, D + 1, D + 7):
            for _ in range(10):
                sigma = np.sort(rng.gamma(2.0, 1.0, D))[::-1]
                lib = float(singular_value_logpdf(sigma, M))
                assert abs(reference_singular_value_logpdf(sigma, M) - lib) <= 1e-10 * max(1.0, abs(lib))


# ---------------------------------------------------------------- 08: Householder-parameterised Bayesian PPCA

H = importlib.import_module('vbfa_lit.householder_ppca')   # the package also has a function of that name
St = importlib.import_module('vbfa_lit.stiefel')
from vbfa_lit.householder_ppca import (ppca_log_likelihood, reference_log_density,  # noqa: E402
                                       reference_log_likelihood, sufficient_statistics)


def _ppca_problem(rng, N, M, D):
    "Data with a large offset and columns of different scale, and random parameters of the Householder model."
    X = 100 + rng.normal(size=(N, M)) * rng.uniform(0.1, 10, size=M)
    vectors = [rng.normal(size=M - q) * rng.uniform(0.5, 2) for q in range(D)]
    sigma = np.sort(rng.uniform(0.3, 4, D))[::-1]
    return X, vectors, sigma, rng.uniform(0.2, 2), X.mean(0) + rng.normal(size=M)


@pytest.mark.parametrize('N, M, D', [(20, 3, 1), (50, 3, 2), (200, 8, 3), (569, 30, 2), (40, 6, 6)])
def test_reference_log_likelihood_equals_the_librarys(N, M, D):
    rng = np.random.default_rng(N + M + D)
    for _ in range(5):
        X, vectors, sigma, s, mu = _ppca_problem(rng, N, M, D)
        U = St.reference_householder_to_stiefel(vectors, St.reference_swap_reflection)
        ref = reference_log_likelihood(X, U, sigma, s, mu)
        general = float(ppca_log_likelihood(X, U * sigma, s, mu))                         # Cholesky branch
        diagonal = float(H._log_likelihood(U * sigma, np.float64(s**2), mu, sufficient_statistics(X),
                                           orthogonal=True))                               # the sampler's branch
        assert abs(ref - general) <= 1e-10 * abs(general) and abs(ref - diagonal) <= 1e-10 * abs(general)


def test_reference_log_density_equals_the_numpyro_model():
    """The model NUTS samples (NumPyro, JAX in float64) has the reference's log density less the constant of the
    singular-value density, at random parameters."""
    pytest.importorskip('numpyro')
    jax, jnp, numpyro = H._import_numpyro()
    from numpyro.infer.util import log_density
    M, D = 6, 3
    rng = np.random.default_rng(11)
    with H._double_precision(jax):
        # one compiled log density for every data set: the statistics are the model's arguments, as in the sampler
        lib_log_density = jax.jit(lambda params, n, mean, cov: log_density(
            H._ppca_model(M, D), (H.SufficientStatistics(n, mean, cov),), {}, params)[0])
        for N in (30, 50, 80, 200, 569):
            for _ in range(2):
                X, vectors, sigma, s, mu = _ppca_problem(rng, N, M, D)
                stats = sufficient_statistics(X)
                params = {**{f'v_{M - q}': jnp.asarray(v) for q, v in enumerate(vectors)},
                          'sigma_increasing': jnp.asarray(sigma[::-1].copy()), 'noise_std': jnp.asarray(s),
                          'mu_offset': jnp.asarray(mu - stats.mean)}
                lib = float(lib_log_density(params, float(stats.n), jnp.asarray(stats.mean), jnp.asarray(stats.cov)))
                ref = reference_log_density(vectors, sigma, s, mu, X) - St._log_sv_const(M, D)
                assert abs(ref - lib) <= 1e-10 * abs(ref), (ref, lib)
