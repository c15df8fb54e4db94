"""Both cores on one machine: the sweep's per-feature factors split over threads, and `VBPCA(n_jobs=)`."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from vbfa_lit import VBPCA
from vbfa_lit.engine import LocalRunner, map_features, w_factor, kernel_set
from vbfa_lit.estimator import default_jobs, PARALLEL_MIN_FLOPS, fit_cost
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.data import make_low_rank

ENGINES = ['numpy', pytest.param('numba', marks=pytest.mark.skipif(not numba_available(), reason='numba absent'))]


def _stats(rng, M, D, shared):
    A = rng.standard_normal((M, D, D + 3))
    XX = A @ A.transpose(0, 2, 1) + np.eye(D)
    YX, mX, mu = rng.standard_normal((M, D)), rng.standard_normal((M, D)), rng.standard_normal(M)
    tau = rng.gamma(2.0, size=1 if shared else M)
    return YX, mX, XX, mu, tau, rng.gamma(2.0, size=D)


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('shared', [True, False])
@pytest.mark.parametrize('M', [5, 17, 80])
def test_features_split_over_threads_give_the_same_factors_bit_for_bit(engine, shared, M):
    YX, mX, XX, mu, tau, alpha = _stats(np.random.default_rng(M), M, 70 if M == 80 else 6, shared)
    kernels = kernel_set(engine)
    one = w_factor(YX, mX, XX, mu, tau, alpha, kernels)
    for n in (2, 3):
        runner = LocalRunner(n)
        try:
            split = map_features(runner, w_factor, (YX, mX, XX, mu, tau), (alpha, kernels))
            assert (runner._pool is not None) == (M >= 2 * n)             # the threads ran where they could
        finally: runner.close()
        for a, b in zip(one, split): np.testing.assert_array_equal(a, b)


def test_another_runner_computes_the_factors_in_one_call():
    calls = []
    def fn(a, b): calls.append(len(a)); return (a + b,)
    class Elsewhere:                                                   # e.g. the Dask runner: maps over its blocks
        n_jobs = 4
    out = map_features(Elsewhere(), fn, (np.arange(10.0),), (1.0,))
    assert calls == [10] and np.array_equal(out[0], np.arange(10.0) + 1)


@pytest.mark.filterwarnings("ignore:VBPCA. max_iter=")
@pytest.mark.parametrize('storage', ['dense', 'sparse'])
def test_vbpca_in_two_threads_is_the_one_thread_fit_to_rounding(storage):
    X = make_low_rank(300, 40, 4, offset=3.0, missing=0.3, random_state=1).X
    fits = [VBPCA(10, random_state=0, n_jobs=j, storage=storage, max_iter=60, tol=0).fit(X) for j in (1, 2)]
    a, b = fits
    np.testing.assert_allclose(b.elbo_, a.elbo_, rtol=1e-10)
    scale = np.nanmax(X) - np.nanmin(X)
    np.testing.assert_allclose(b.impute(X), a.impute(X), atol=1e-8 * scale)
    assert a.n_effective_components_ == b.n_effective_components_


@pytest.mark.parametrize('bad, error', [(0, ValueError), (1.5, TypeError), ('2', TypeError)])
def test_n_jobs_is_checked_by_name(bad, error):
    X = make_low_rank(30, 6, 2, random_state=0).X
    with pytest.raises(error, match='n_jobs'):
        VBPCA(2, n_jobs=bad).fit(X)


def test_default_jobs_uses_the_cores_only_for_long_sweeps():
    import os
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    assert default_jobs(PARALLEL_MIN_FLOPS / 2) == 1
    assert default_jobs(PARALLEL_MIN_FLOPS * 2) == cores
    # MovieLens-100k shape with D = 100 is well above the threshold; a 100 x 10 problem well below it
    assert fit_cost(943, 1682, 100, 100_000, dense=False)[1] > 10 * PARALLEL_MIN_FLOPS
    assert fit_cost(100, 10, 5)[1] < PARALLEL_MIN_FLOPS / 100
    assert VBPCA().get_params()['n_jobs'] is None


@pytest.mark.skipif(not numba_available(), reason='numba absent')
def test_kernels_compiled_from_two_threads_at_once():
    "The first calls of the compiled kernels from two threads at once (a fresh process): both compile, both agree."
    code = textwrap.dedent('''
        import threading, numpy as np
        from vbfa_lit.vbpca_fast import compiled_kernels
        rng = np.random.default_rng(0)
        A = rng.standard_normal((50, 6, 9)); P = A @ A.transpose(0, 2, 1); h = rng.standard_normal((50, 6))
        k, out, start = compiled_kernels(), [None, None], threading.Barrier(2)
        def run(i): start.wait(); out[i] = k.gaussians(P, h)
        ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        [t.start() for t in ts]; [t.join() for t in ts]
        assert all(np.array_equal(a, b) for a, b in zip(*out)), 'different answers'
        import numba; from vbfa_lit import vbpca_fast
        assert isinstance(vbpca_fast._k_gaussians_lanes, numba.core.registry.CPUDispatcher)
        print('ok')
    ''')
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr[-2000:]


@pytest.mark.parametrize('per_chunk', [1, 4, None])                 # matrices a chunk; None: the default size
@pytest.mark.parametrize('K, D', [(1, 3), (9, 5), (40, 60)])
def test_congruence_as_two_large_products_is_the_stacked_product(K, D, per_chunk):
    from vbfa_lit.transformations import congruence
    rng = np.random.default_rng(K)
    A = rng.standard_normal((K, D, D))
    S, R = A @ A.transpose(0, 2, 1), rng.standard_normal((D, D))
    kw = {} if per_chunk is None else dict(chunk_bytes=per_chunk * 8 * D * D + 7)
    ref = R.T @ S @ R          # the same sums in another order: equal to rounding (BLAS picks its kernels by CPU:
    #                            bit for bit on the machine this test was written on, 3.5e-16 apart with SkylakeX ones)
    np.testing.assert_allclose(congruence(S, R, **kw), ref, rtol=0, atol=4 * D * np.finfo(float).eps * abs(ref).max())


def test_with_threads_gives_n_inside_leaves_blas_alone_and_the_rotation_is_the_same_in_threads():
    from threadpoolctl import threadpool_info, threadpool_limits
    from vbfa_lit.linalg import with_threads, available_threads
    from vbfa_lit.transformations import congruence
    blas = lambda: [p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas']
    with threadpool_limits(1, user_api='blas'):
        inside = with_threads(lambda: (available_threads(), blas()), 3)()
        assert inside == (3, blas()) and available_threads() == 1          # BLAS untouched; 1 again after
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 7, 7))
    S, R = A @ A.transpose(0, 2, 1), rng.standard_normal((7, 7))
    one = congruence(S, R, chunk_bytes=3 * 8 * 49)                          # 17 chunks of 3 matrices
    two = with_threads(lambda: congruence(S, R, chunk_bytes=3 * 8 * 49), 2)()
    np.testing.assert_array_equal(two, one)                                 # each matrix computed alike


def test_default_threads_are_fewer_when_memory_is_short_and_an_explicit_count_names_them(monkeypatch):
    import scipy.sparse as sparse
    from vbfa_lit import estimator
    S = sparse.random(400, 300, density=0.2, random_state=0, format='csr')
    D = 60
    base, flops = fit_cost(400, 300, D, S.nnz, dense=False)
    assert default_jobs(flops) >= 1
    per_thread = 16.0 * 300 * D ** 2
    monkeypatch.setattr(estimator, 'available_memory', lambda: base + 0.5 * per_thread)
    monkeypatch.setattr(estimator, 'default_jobs', lambda flops: 2)          # as on a 2-core machine
    seen = []
    real = estimator.fit_blocks                                              # fit_blocks(runner, data, ...)
    monkeypatch.setattr(estimator, 'fit_blocks', lambda *a, **k: seen.append(a[0].n_jobs) or real(*a, **k))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        VBPCA(D, missing_values='unstored', max_iter=1).fit(S)
    assert seen == [1]                                    # two threads would not fit: the default took one
    with pytest.raises(ValueError, match=r'n_components: .* and 2 M D\^2 for each of 1 further thread'):
        VBPCA(D, missing_values='unstored', max_iter=1, n_jobs=2).fit(S)


def test_another_runner_lends_its_local_threads_for_the_per_feature_step():
    "A runner with a `local` LocalRunner (Dask's: this process's threads while the workers wait) splits the features."
    import threading
    seen = []
    def fn(a, b): seen.append((len(a), threading.current_thread().name)); return (a + b,)
    class Elsewhere:
        local = LocalRunner(2)
    try: out = map_features(Elsewhere(), fn, (np.arange(10.0),), (1.0,))
    finally: Elsewhere.local.close()
    assert sorted(n for n, _ in seen) == [5, 5] and all(t.startswith('vbfa_lit') for _, t in seen)
    assert np.array_equal(out[0], np.arange(10.0) + 1)


def test_dask_runner_threads_default_to_the_usable_cores_and_are_checked():
    pytest.importorskip('dask')
    from vbfa_lit.dask_runner import DaskRunner
    from vbfa_lit.linalg import usable_cores
    runner = DaskRunner()
    try: assert runner.local.n_jobs == usable_cores() >= 1
    finally: runner.close()
    assert DaskRunner(threads=1).local.n_jobs == 1
    with pytest.raises(ValueError, match='threads'): DaskRunner(threads=0)
