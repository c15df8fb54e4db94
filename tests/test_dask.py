"""The sweep on Dask (vbfa_lit.dask_runner): the same fit as the in-memory engine, sweep by sweep, on Dask's threaded
scheduler and on a LocalCluster of worker processes; a worker process killed during a fit changes nothing; the task
graph does not grow across sweeps; bad tables of ratings are refused by name."""
import functools
import os
import time

import numpy as np
import pytest
import scipy.sparse as sparse

da = pytest.importorskip('dask.array')
dd = pytest.importorskip('dask.dataframe')
distributed = pytest.importorskip('distributed')
import dask
import pandas as pd

from dask_helpers import recomputed_since, worker_killer
from vbfa_lit.ard import ARD
from vbfa_lit.data import make_low_rank
from vbfa_lit.engine import fit_vbfa, observed, init_posterior
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.transformations import transform_posterior
from vbfa_lit.vbpca import Prior, FixedAlpha
from vbfa_lit.dask_runner import (fit_vbfa_dask, observed_blocks_from_triples, blocks_from_array, DaskRunner,
                                  load_blocks, init_posterior_dask, sweep_traffic)

BOTH = functools.partial(transform_posterior, kind='both')
RTOL = 1e-8    # the tolerance; the fits agree to rounding (about 1e-14)


def problem(missing=0.3, N=240, M=30, seed=0):
    "Samples x features with NaN where missing: a low-rank signal with offsets and noise."
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


def triples(X):
    "The observed entries of X as a shuffled table of (row, col, value)."
    rows, cols = np.nonzero(~np.isnan(X))
    return pd.DataFrame({'row': rows, 'col': cols, 'value': X[rows, cols]}).sample(frac=1, random_state=0)


def recorded(fit, *args, **kwargs):
    "Run a fit, recording q.W after every sweep with the bound."
    seen = []
    user = kwargs.pop('callback', None)
    def callback(it, q, bound):
        seen.append(q.W.copy())
        if user is not None: user(it, q, bound)
    return fit(*args, callback=callback, **kwargs), seen


def assert_same_fit(got, ref):
    "The bound after every sweep to RTOL relative, q(W) after every sweep and the final moments likewise."
    (fit, Ws), (fit_ref, Ws_ref) = got, ref
    assert len(fit.elbo) == len(fit_ref.elbo)
    np.testing.assert_allclose(fit.elbo, fit_ref.elbo, rtol=RTOL, atol=0)
    for W, W_ref in zip(Ws, Ws_ref): np.testing.assert_allclose(W, W_ref, rtol=0, atol=RTOL * np.abs(W_ref).max())
    for name in fit_ref.q._fields:
        a, b = getattr(fit.q, name), getattr(fit_ref.q, name)
        if b is None: assert a is None; continue
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * np.abs(b).max(), err_msg=name)


CASES = {   # missing data, per-feature noise, ARD, both transformations; complete data, shared noise, fixed alpha
    'missing-ard-both': (0.3, dict(D=5, prior=Prior(w=ARD()), shared=False, transform=BOTH)),
    'complete-shared': (0.0, dict(D=4, prior=Prior(w=FixedAlpha(1.0)), shared=True, transform=None)),
}


@pytest.mark.parametrize('case', CASES)
def test_threaded_scheduler_equals_in_memory_every_sweep(case):
    missing, kw = CASES[case]
    X = problem(missing)
    settings = dict(max_iter=12, tol=0, rng=1, engine='numpy', **kw)
    ref = recorded(fit_vbfa, observed(X.T), **settings)
    graphs = []
    with dask.callbacks.Callback(start_state=lambda dsk, state: graphs.append(len(dsk))):
        got = recorded(fit_vbfa_dask, da.from_array(X, chunks=(70, 30)), **settings)    # blocks of 70, 70, 70, 30
    assert_same_fit(got, ref)
    assert len(got[0].elbo) == 12
    # after loading the blocks (their source's tasks and theirs), every computation is one flat graph of one task per
    # block: the summaries (and, data complete, the blocks' flag), then two maps a sweep; nothing accumulates
    assert set(graphs[1:]) == {4} and len(graphs) - 2 * 12 == (4 if missing == 0 else 3), graphs


def test_ratings_as_triples_equal_in_memory():
    X = problem(0.6, N=200, M=40, seed=3)
    rows, cols = np.nonzero(~np.isnan(X))
    csr = sparse.csr_matrix((X[rows, cols], (cols, rows)), shape=X.shape[::-1])      # features x samples, in memory
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=10, tol=0, rng=2, engine='numpy', transform=BOTH)
    ref = recorded(fit_vbfa, observed(csr), **settings)
    df = triples(X)
    for table in (df, dd.from_pandas(df, npartitions=3)):
        assert_same_fit(recorded(fit_vbfa_dask, observed_blocks_from_triples(table, 200, 40, n_blocks=3), **settings),
                        ref)


def test_start_is_the_engines():
    X = problem(0.4)
    runner = DaskRunner()
    data = load_blocks(runner, blocks_from_array(da.from_array(X, chunks=(50, 30))))
    for shared in (False, True):
        q = init_posterior_dask(data, 3, Prior(w=ARD()), shared, np.random.default_rng(5))
        q_ref = init_posterior(observed(X.T), 3, Prior(w=ARD()), shared, np.random.default_rng(5))
        for a, b in zip(q, q_ref):
            if b is None: assert a is None
            else: np.testing.assert_allclose(a, b, rtol=1e-13)


def held_tasks(client):
    """(futures the client holds, tasks the scheduler holds once the client's releases have arrived: three equal
    counts in a row)."""
    counts = [-1]
    for _ in range(100):
        counts.append(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))
        if len(counts) > 3 and counts[-1] == counts[-2] == counts[-3]: return len(client.futures), counts[-1]
        time.sleep(0.1)
    raise AssertionError(f"the scheduler's task count did not settle: {counts}")


def test_local_cluster_of_processes_same_fit_flat_graph_and_a_killed_worker(cluster_client):
    X = problem(0.3, N=240, M=30, seed=4)
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=7, tol=0, rng=3, engine='numpy', transform=BOTH)
    ref = recorded(fit_vbfa, observed(X.T), **settings)
    X_dask = da.from_array(X, chunks=(60, 30))                                            # four blocks
    client = cluster_client                   # two worker processes (tests/conftest.py), a long transition log
    held = []
    got = recorded(fit_vbfa_dask, X_dask, client=client, callback=lambda *_: held.append(held_tasks(client)),
                   **settings)
    assert_same_fit(got, ref)
    assert len(set(held)) == 1, held     # the same tasks held after every sweep: the graph does not grow

    block_keys = {b.key for b in blocks_from_array(X_dask).blocks}    # the names the fit's blocks get
    kill_a_worker, killed = worker_killer(client, keys=block_keys)   # after sweep 3, the worker with most blocks
    got = recorded(fit_vbfa_dask, X_dask, client=client, callback=kill_a_worker, **settings)
    (pid, lost, when), = killed
    assert lost and pid not in client.run(os.getpid).values()
    assert lost <= recomputed_since(client, when), lost     # the lost blocks, recomputed from their source
    assert_same_fit(got, ref)


@pytest.mark.parametrize('change, message', [
    (lambda df: df.assign(row=df.row + 1), "'row' must lie in [0, 240)"),
    (lambda df: df.assign(col=df.col - 1), "'col' must lie in [0, 30)"),
    (lambda df: pd.concat([df, df[:1]]), 'given twice'),
    (lambda df: df.assign(row=df.row.astype(float)), "'row' must hold integers"),
    (lambda df: df.assign(value=np.where(np.arange(len(df)) == 5, np.inf, df.value)), "'value' must be finite"),
    (lambda df: df.rename(columns={'value': 'rating'}), "expected columns ['row', 'col', 'value']"),
])
def test_bad_ratings_are_refused_by_name(change, message):
    blocks = observed_blocks_from_triples(change(triples(problem(0.3))), 240, 30, n_blocks=3)
    with pytest.raises((ValueError, TypeError)) as err: fit_vbfa_dask(blocks, 2, max_iter=1)
    assert message in str(err.value)


def test_bad_arguments_are_refused_by_name():
    X = problem(0.3)
    with pytest.raises(TypeError, match='X: expected a dask.array.Array'): fit_vbfa_dask(X, 2)
    with pytest.raises(TypeError, match='df: expected a pandas or dask DataFrame'):
        observed_blocks_from_triples(X, 240, 30, 2)
    with pytest.raises(ValueError, match='n_blocks'): observed_blocks_from_triples(triples(X), 240, 30, 0)
    with pytest.raises(TypeError, match='client: expected a distributed.Client'):
        fit_vbfa_dask(da.from_array(X, chunks=(60, 30)), 2, client='tcp://127.0.0.1:8786')
    Xinf = X.copy(); Xinf[3, 4] = np.inf
    with pytest.raises(ValueError, match='X: entries must be finite or NaN'):
        fit_vbfa_dask(da.from_array(Xinf, chunks=(60, 30)), 2, max_iter=1)


def test_sweep_traffic_counts_what_the_sweep_sends():
    """The byte counts against the arrays a real sweep sends: the posterior the map reads, <tau>, the new means, and
    one block's statistics."""
    from vbfa_lit.engine import map_latent, sweep, row_blocks
    from vbfa_lit.dask_runner import _stats, _pack_sw
    from vbfa_lit.notation import gamma_moments
    X = problem(0.3)
    data, prior = observed(X.T), Prior(w=ARD())
    q = init_posterior(data, 4, prior, False, np.random.default_rng(0))
    q, _ = sweep(data, q, prior, False, 'numpy')
    tau = gamma_moments(q.a_tau, q.b_tau)[0]
    blocks = row_blocks(data, 6)
    t = sweep_traffic(30, 240, 4, 6)
    Sw_sent = _pack_sw(q.Sw, 'key').P                   # the upper triangles, as the runner sends them
    assert Sw_sent.shape == (30, 10)
    assert t['broadcast'] == sum(a.nbytes for a in (q.W, Sw_sent, q.mu, tau, q.W, q.mu))
    stats = _stats(map_latent(blocks[0], q, tau), {})  # XX_m packed, as a block sends them
    assert stats[0].shape == (30, 10)
    assert t['per_block'] == sum(np.asarray(a).nbytes for a in stats)
    assert t['to_client'] == t['per_block'] + 6 * tau.nbytes + 240 * 4 * 8


def test_a_workers_previous_sweep_is_let_go_before_the_next_map():
    """The blocks' q(x_n) and sums of the last sweep are released when the next sweep's map is sent, so that a worker
    never holds two sweeps of them (at MovieLens-25M shape, D = 50, each is several GB)."""
    from vbfa_lit.engine import map_latent, kernel_set
    from vbfa_lit.notation import gamma_moments
    X = problem(0.3)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        runner = DaskRunner(client)
        data = load_blocks(runner, blocks_from_array(da.from_array(X, chunks=(60, 30))))
        q = init_posterior_dask(data, 3, Prior(w=ARD()), False, np.random.default_rng(0))
        tau = gamma_moments(q.a_tau, q.b_tau)[0]
        n = len(data.blocks)
        def run_map():
            return runner.map(map_latent, data.blocks, [q] * n, [tau] * n, [kernel_set("numpy")] * n, keep=True)
        first = run_map()
        runner.reduce(first, False)
        keys = {f.key for f in first}
        del first
        second = run_map()
        assert not keys & {f.key for f in second}
        def stored(dask_scheduler): return set(dask_scheduler.tasks)
        for _ in range(50):                          # the releases reach the scheduler
            if not keys & client.run_on_scheduler(stored): break
            time.sleep(0.1)
        assert not keys & client.run_on_scheduler(stored)
        runner.reduce(second, False)
        assert runner.latent(False)[0].shape == (240, 3)


def test_each_blocks_map_runs_on_the_worker_that_holds_the_block():
    """The map's tasks go to their blocks: with the broadcast state larger than a block (here 11.5 MB of Sigma_w
    against 20 x 400 values), the scheduler left to itself sent the blocks' tasks to the worker holding the state,
    and one worker did the work."""
    from vbfa_lit.engine import map_latent, kernel_set
    from vbfa_lit.notation import gamma_moments
    X = problem(0.3, N=80, M=400, seed=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        runner = DaskRunner(client)
        data = load_blocks(runner, blocks_from_array(da.from_array(X, chunks=(20, 400))))
        home = {key: set(w) for key, w in client.who_has(data.blocks).items()}
        assert len(set().union(*home.values())) == 2                 # the blocks are on both workers
        q = init_posterior_dask(data, 60, Prior(w=ARD()), False, np.random.default_rng(0))
        tau = gamma_moments(q.a_tau, q.b_tau)[0]
        n = len(data.blocks)
        for _ in range(6):
            parts = runner.map(map_latent, data.blocks, [q] * n, [tau] * n, [kernel_set('numpy')] * n, keep=True)
            distributed.wait(parts)
            held = client.who_has(parts)
            assert all(set(held[p.key]) == home[b.key] for p, b in zip(parts, data.blocks))
            runner.reduce(parts, False)


@pytest.mark.skipif(not numba_available(), reason='numba absent')
def test_each_block_keeps_its_buffers_on_its_worker_from_sweep_to_sweep():
    """A block's map writes its sums into buffers the worker keeps (`scratch_buffer`), the same arrays every sweep, one
    dict per block, and so does each node of the reduce's tree; the fit with them is the in-memory fit; closing the
    runner lets every worker's go."""
    from vbfa_lit.engine import map_latent, kernel_set
    from vbfa_lit.notation import gamma_moments
    import vbfa_lit.dask_runner as dr
    X = problem(0.9, N=240, M=60, seed=2)             # mostly missing: the compiled CSR sums, into kept buffers
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:    # workers in this process: their buffers are visible here
        runner = DaskRunner(client)
        data = load_blocks(runner, blocks_from_array(da.from_array(X, chunks=(60, 60))))
        q = init_posterior_dask(data, 3, Prior(w=ARD()), False, np.random.default_rng(0))
        S = np.asarray(q.Sw)                          # one covariance per feature (as after a sweep): sent packed
        q = q._replace(Sw=np.stack([S[min(m, len(S) - 1)] * (1 + m / 60) for m in range(60)]))
        tau, n = gamma_moments(q.a_tau, q.b_tau)[0], len(data.blocks)
        def buffers():
            return {k: dict(v) for k, v in dr._KEPT.items() if k.startswith(runner._id)}
        seen = []
        for _ in range(2):
            parts = runner.map(map_latent, data.blocks, [q] * n, [tau] * n, [kernel_set('numba')] * n, [None] * n,
                               [None] * n, *runner.buffers(data.blocks, 3), keep=True)   # as `engine.sweep` calls it
            runner.reduce(parts, False)
            seen.append(buffers())
        first, second = seen
        node = lambda k: '-add-' in k                 # the reduce's tree: n - 1 nodes, each adding into its own
        stats = lambda k: '-stats-' in k              # each block's XX_m packed to travel, into its own
        sw = f'{runner._id}-Sw'                       # the broadcast Sigma_w_m unpacked, once per worker process
        blocks = {k: v for k, v in first.items() if not (node(k) or stats(k) or k == sw)}
        assert len(blocks) == n and all({'out', 'out_cov', 'S'} <= set(d) for d in blocks.values())
        assert sorted(k for k in first if node(k)) == [f'{runner._id}-add-{i}' for i in range(n - 1)]
        assert sorted(k for k in first if stats(k)) == sorted(f'{runner._id}-stats-{i}' for i in range(n))
        assert all(set(first[k]) == {'packed'} for k in first if stats(k))
        assert first[sw]['token'] != second[sw]['token']                # a new broadcast each sweep, unpacked anew
        assert second[sw]['Sw_unpacked'].base is first[sw]['Sw']         # ... into the same buffer
        np.testing.assert_array_equal(second[sw]['Sw_unpacked'], q.Sw)   # the covariances, whole again
        assert all(second[k][b] is first[k][b] for k in first for b in first[k]
                   if b not in ('token', 'Sw_unpacked'))                # reused, not made again
        runner.close()
        assert not buffers()
    ref = fit_vbfa(observed(X.T), 3, Prior(w=ARD()), max_iter=4, tol=0, rng=1, engine='numba')
    before = set(dr._KEPT)                          # (other tests' runners, never closed, may have left theirs)
    got = fit_vbfa_dask(da.from_array(X, chunks=(60, 60)), 3, Prior(w=ARD()), max_iter=4, tol=0, rng=1, engine='numba')
    np.testing.assert_allclose(got.elbo, ref.elbo, rtol=RTOL, atol=0)
    assert set(dr._KEPT) <= before                  # the fit's runner let its buffers go


def test_reduce_into_kept_buffers_in_process_gives_each_sweeps_own_sums():
    """With workers in this process a gathered result is the worker's own object, not a copy: the reduce's tree adds
    into buffers reused every sweep, and the fit must still be the in-memory one sweep by sweep (four blocks: three
    nodes, one buffer set each)."""
    X = problem(0.3, N=240, M=30, seed=6)
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=6, tol=0, rng=2, engine='numpy', transform=BOTH)
    ref = recorded(fit_vbfa, observed(X.T), **settings)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        got = recorded(fit_vbfa_dask, da.from_array(X, chunks=(60, 30)), client=client, **settings)
    assert_same_fit(got, ref)


def test_a_rotation_left_to_the_blocks_sums_equals_in_memory():
    """Fewer samples than features: the transformations leave the rotation of the Sigma_w_m to the sums each block
    forms (`engine.PendingRotation`, sent with the broadcast state); the fit equals the in-memory one, and the in-memory
    one with the rotation applied at once."""
    import pickle
    from vbfa_lit.engine import PendingRotation
    X = problem(0.3, N=40, M=90, seed=6)
    later = functools.partial(transform_posterior, kind='both', latent_covariances=False, defer_w=True)
    deferred = []
    def transform(data, q, prior):
        q, gain = later(data, q, prior)
        deferred.append(isinstance(q.Sw, PendingRotation))
        if deferred[-1]:                                       # what travels to a worker comes back the same
            back = pickle.loads(pickle.dumps(q.Sw))
            assert all(np.array_equal(getattr(back, k), getattr(q.Sw, k)) for k in ('S', 'R', 'W'))
        return q, gain
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=10, tol=0, rng=1, engine='numpy')
    ref = recorded(fit_vbfa, observed(X.T), transform=transform, **settings)
    assert any(deferred)
    now = functools.partial(transform_posterior, kind='both', latent_covariances=False)
    assert_same_fit(recorded(fit_vbfa, observed(X.T), transform=now, **settings), ref)
    deferred.clear()
    assert_same_fit(recorded(fit_vbfa_dask, da.from_array(X, chunks=(15, 90)), transform=transform, **settings), ref)
    assert any(deferred)
