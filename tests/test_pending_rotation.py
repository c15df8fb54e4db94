"""A rotation left to the next sweep's sums (`engine.PendingRotation`): the same fit as the rotation applied at once.

The transformations rotate every Sigma_w_m (M products); the sweep after them reads the Sigma_w_m only through each
sample's sum over its features, so `transform_posterior(..., defer_w=True)` leaves the rotation to those N sums when
they are fewer (N < M, or one sum with nothing missing). These tests check that the deferred and the immediate rotation
give the same sweeps to rounding, that the deferral happens exactly when it saves products, and that whatever else
reads a pending stack gets it rotated."""
import functools

import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.ard import ARD
from vbfa_lit.data import make_low_rank
from vbfa_lit.engine import (PendingRotation, congruence, fit_vbfa, observed, sum_tau_ww, init_posterior, sweep,
                             kernel_set)
from vbfa_lit.linalg import diagonal_sum
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.transformations import transform_posterior
from vbfa_lit.vbpca import Prior, FixedAlpha

ENGINES = ['numpy', pytest.param('numba', marks=pytest.mark.skipif(not numba_available(), reason='numba absent'))]
RTOL = 1e-12     # rounding of sums formed in another order over tens of sweeps (measured: 2e-16 on the bound, 4e-15 on
                 # the moments, both engines)


def problem(N, M, missing, seed=0):
    "Samples x features, NaN where missing, offsets and noise."
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


def data_of(X, storage):
    if storage == 'dense': return observed(X.T)
    rows, cols = np.nonzero(~np.isnan(X))
    return observed(sparse.csr_matrix((X[rows, cols], (cols, rows)), shape=X.shape[::-1]))


def spd_stack(rng, K, D):
    A = rng.standard_normal((K, D, D + 2))
    return A @ A.transpose(0, 2, 1) / D


def test_congruence_into_its_own_input():
    rng = np.random.default_rng(0)
    S, R = spd_stack(rng, 23, 7), rng.standard_normal((7, 7))
    ref = R.T @ S @ R
    out = congruence(S, R, chunk_bytes=3 * 8 * 49, out=S)                    # 8 chunks, each read before written
    assert out is S
    np.testing.assert_allclose(S, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('storage', ['dense', 'sparse'])
def test_sums_of_a_pending_rotation_are_the_sums_of_the_rotated_moments(engine, storage):
    rng = np.random.default_rng(1)
    N, M, D = 30, 50, 6
    data = data_of(problem(N, M, 0.4), storage)
    W0, S0, R = rng.standard_normal((M, D)), spd_stack(rng, M, D), rng.standard_normal((D, D))
    tau = rng.gamma(2.0, size=M)
    kernels = kernel_set(engine)
    pending = PendingRotation(S0, R, W0)
    ref = sum_tau_ww(data, W0 @ R, R.T @ S0 @ R, tau)                      # NumPy's kernels: whole matrices
    got = sum_tau_ww(data, W0 @ R, pending, tau, kernels)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    # what else reads the stack gets it rotated: as an array, and the sums of its diagonals
    np.testing.assert_allclose(np.asarray(pending), R.T @ S0 @ R, rtol=0, atol=1e-13 * np.abs(ref).max())
    np.testing.assert_allclose(diagonal_sum(pending, M), np.einsum('kdd->d', R.T @ S0 @ R), rtol=1e-12)
    assert len(pending) == M and pending.shape == (M, D, D)


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('storage, missing, N, M, deferred', [
    ('dense', 0.3, 25, 60, True),         # fewer samples than features: N sums rotated instead of M covariances
    ('sparse', 0.5, 25, 60, True),
    ('dense', 0.0, 80, 20, True),         # nothing missing: one sum (per-feature noise keeps M covariances)
    ('dense', 0.3, 80, 20, False),        # more samples than features: the covariances rotated at once
])
def test_deferred_rotation_gives_the_same_sweeps(engine, storage, missing, N, M, deferred):
    data = data_of(problem(N, M, missing, seed=N + M), storage)
    prior = Prior(w=ARD())
    seen = {}
    def fit(defer):
        def transform(d, q, p):
            q, gain = transform_posterior(d, q, p, 'both', latent_covariances=False, defer_w=defer)
            seen.setdefault(defer, []).append(isinstance(q.Sw, PendingRotation))
            return q, gain
        return fit_vbfa(data, 5, prior, False, max_iter=25, tol=0, rng=3, transform=transform, engine=engine)
    now, later = fit(False), fit(True)
    assert not any(seen[False]) and any(seen[True]) == deferred
    np.testing.assert_allclose(later.elbo, now.elbo, rtol=RTOL, atol=0)
    assert np.all(np.diff(later.elbo) >= -1e-9 * np.abs(later.elbo[1:]))     # the bound never falls
    for name in ('W', 'Sw', 'X', 'Sx', 'mu', 'b_tau', 'b_alpha'):
        a, b = getattr(later.q, name), getattr(now.q, name)
        np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * np.abs(b).max(), err_msg=name)
    assert isinstance(later.q.Sw, np.ndarray)                               # a sweep leaves no pending rotation


def test_one_transformation_step_deferred_is_the_step_applied():
    """One call: the q(alpha) it updates from the rotated diagonals and the gain are the same; the pending stack
    read as an array is the rotated one."""
    data = data_of(problem(20, 45, 0.3, seed=4), 'dense')
    prior = Prior(w=ARD())
    q = init_posterior(data, 4, prior, False, np.random.default_rng(0))
    for _ in range(3): q, _ = sweep(data, q, prior, False)
    (a, gain_a), (b, gain_b) = (transform_posterior(data, q, prior, 'both', False, defer_w=d) for d in (False, True))
    assert isinstance(b.Sw, PendingRotation) and gain_a == gain_b
    np.testing.assert_allclose(np.asarray(b.Sw), a.Sw, rtol=0, atol=1e-13 * np.abs(a.Sw).max())
    for name in ('W', 'X', 'a_alpha', 'b_alpha'): np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-13)


def test_fixed_alpha_and_shared_covariances_are_not_deferred_needlessly():
    "One shared Sigma_w (complete data, shared noise) is rotated at once: nothing to save."
    data = data_of(problem(30, 10, 0.0, seed=5), 'dense')
    prior = Prior(w=FixedAlpha(1.0))
    q = init_posterior(data, 3, prior, True, np.random.default_rng(0))
    for _ in range(3): q, _ = sweep(data, q, prior, True)
    assert len(q.Sw) == 1
    q2, _ = transform_posterior(data, q, prior, 'both', False, defer_w=True)
    assert isinstance(q2.Sw, np.ndarray)


@pytest.mark.parametrize('threads', [1, 2, 3])
def test_the_sums_over_the_stack_in_one_pass_on_any_threads(threads):
    "sw_sums: the weighted sums and sum_m Sigma_w_m v_m as the plain products, in chunks dealt to any number of threads."
    from vbfa_lit.linalg import with_threads
    from vbfa_lit.transformations import sw_sums
    rng = np.random.default_rng(threads)
    M, D = 41, 5
    Sw, weights, v = spd_stack(rng, M, D), rng.standard_normal((2, M)), rng.standard_normal((M, D))
    sums, Swv = with_threads(lambda: sw_sums(Sw, weights, v, chunk_bytes=3 * 8 * D * D), threads)()   # 14 chunks
    np.testing.assert_allclose(sums, np.einsum('jm,mde->jde', weights, Sw), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(Swv, np.einsum('mde,me->d', Sw, v), rtol=1e-13, atol=1e-13)
    assert sw_sums(Sw, weights)[1] is None
    shared, Swv1 = sw_sums(Sw[:1], weights, v)                                  # one Sigma_w for every feature
    np.testing.assert_allclose(shared, weights.sum(1)[:, None, None] * Sw[0], rtol=1e-14)
    np.testing.assert_allclose(Swv1, Sw[0] @ v.sum(0), rtol=1e-14)


def test_map_chunks_deals_every_chunk_once():
    from vbfa_lit.engine import map_chunks
    from vbfa_lit.linalg import with_threads
    for threads, K, step in ((1, 10, 3), (2, 10, 3), (3, 2, 1), (2, 0, 4)):
        got = with_threads(lambda: map_chunks(list, K, step), threads)()
        assert sorted(s for part in got for s in part) == list(range(0, K, step))
        assert len(got) == max(1, min(threads, len(range(0, K, step))))


@pytest.mark.parametrize('seed', range(12))
def test_deferred_rotation_on_random_problems(seed):
    """Random shapes with fewer samples than features, missing fractions, storage, noise model, prior on W and engine:
    the deferred and the immediate rotation give the same bound after every sweep to rounding, and it never falls."""
    rng = np.random.default_rng(100 + seed)
    N = int(rng.integers(6, 30)); M = N + int(rng.integers(1, 40)); D = int(rng.integers(1, 7))
    missing = float(rng.choice([0.0, 0.2, 0.6]))
    X = make_low_rank(N, M, min(D, 3), offset='normal', missing=missing, random_state=seed).X
    X[rng.integers(N), :] = np.nan if missing else X[0]    # a sample with nothing observed (or a repeated one)
    storage = 'sparse' if missing and rng.random() < 0.5 else 'dense'
    data = data_of(X * 10.0 ** rng.integers(-3, 4), storage)   # any units
    prior = Prior(w=ARD() if rng.random() < 0.7 else FixedAlpha(float(rng.uniform(0.1, 3))))
    shared = bool(rng.random() < 0.5)
    engine = 'numba' if numba_available() and rng.random() < 0.5 else 'numpy'
    fits = [fit_vbfa(data, D, prior, shared, max_iter=15, tol=0, rng=seed, engine=engine,
                     transform=lambda d, q, p, defer=defer: transform_posterior(d, q, p, 'both', False, defer_w=defer))
            for defer in (False, True)]
    now, later = (f.elbo for f in fits)
    np.testing.assert_allclose(later, now, rtol=RTOL, atol=0)
    assert np.all(np.diff(later) >= -1e-9 * np.abs(later[1:]))
