"""The factorised posterior on Dask (`vbfa_lit.factorised_engine.fit_factorised_dask`): the in-memory fit
(`fit_factorised`) sweep by sweep, on Dask's threaded scheduler (dense chunks with NaN, sparse chunks, ratings as
triples, any number of blocks of features) and on a LocalCluster of worker processes, where the task graph does not
grow across sweeps and a worker killed during the fit changes nothing; bad input is refused by name."""
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
from vbfa_lit.dask_runner import observed_blocks_from_triples, ratings_matrix
from vbfa_lit.engine import observed
from vbfa_lit.factorised_engine import fit_factorised, fit_factorised_dask
from vbfa_lit.linalg import numba_available
from vbfa_lit.vbpca import FixedAlpha, Prior
from test_dask import recorded  # noqa: E402  a fit with q.W recorded after every sweep

ENGINES = ['numpy'] + (['numba'] if numba_available() else [])
RTOL = 1e-10


def problem(missing=0.3, N=240, M=30, seed=0):
    "Samples x features with NaN where missing: a low-rank signal with offsets and noise."
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


def assert_same_fit(got, ref):
    "The bound after every sweep to RTOL relative, q(W) after every sweep and the final moments to RTOL of their size."
    (fit, Ws), (fit_ref, Ws_ref) = got, ref
    assert len(fit.elbo) == len(fit_ref.elbo)
    np.testing.assert_allclose(fit.elbo, fit_ref.elbo, rtol=RTOL, atol=0)
    for W, W_ref in zip(Ws, Ws_ref): np.testing.assert_allclose(W, W_ref, rtol=0, atol=RTOL * np.abs(W_ref).max())
    for name in ('X', 'W', 'mu', 'vmu', 'a_tau', 'b_tau', 'a_alpha', 'b_alpha'):
        a, b = getattr(fit.q, name), getattr(fit_ref.q, name)
        if b is None: assert a is None; continue
        np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * np.abs(b).max(), err_msg=name)
    for name in ('Sx', 'Sw'):
        a, b = getattr(fit.q, name).v, getattr(fit_ref.q, name).v
        np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * np.abs(b).max(), err_msg=name)


SETTINGS = {'ard-per-feature': dict(D=4, prior=Prior(w=ARD()), shared=False),
            'fixed-shared': dict(D=3, prior=Prior(w=FixedAlpha(0.5)), shared=True)}


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('case', SETTINGS)
def test_threaded_scheduler_equals_in_memory_every_sweep(case, engine):
    X = problem(0.3, seed=1)
    settings = dict(max_iter=12, tol=0, rng=1, engine=engine, **SETTINGS[case])
    ref = recorded(fit_factorised, observed(X.T), **settings)
    graphs = []
    with dask.callbacks.Callback(start_state=lambda dsk, state: graphs.append(len(dsk))):
        got = recorded(fit_factorised_dask, da.from_array(X, chunks=(70, 30)), **settings)   # 70, 70, 70, 30
    assert_same_fit(got, ref)
    assert np.all(np.diff(got[0].elbo) >= -1e-12 * abs(got[0].elbo[-1]))
    # after loading, flat maps over the four blocks a sweep: the samples with round 0 (and the map that reads its sums
    # and bound terms), D more rounds (each with the map that reads its sums), the means; one at the end: nothing
    # accumulates
    k = 3 + 2 * settings["D"]
    per_sweep = graphs[-1 - k * 12:-1]
    assert set(per_sweep) == {4} and len(graphs[-1 - k * 12:]) == k * 12 + 1, graphs


@pytest.mark.parametrize('n_blocks', [1, 3, 5])
def test_sparse_chunks_and_any_number_of_blocks_give_the_same_fit(n_blocks):
    X = problem(0.7, N=200, M=40, seed=3)
    rows, cols = np.nonzero(~np.isnan(X))
    table = pd.DataFrame({'row': rows, 'col': cols, 'value': X[rows, cols]}).sample(frac=1, random_state=0)
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=10, tol=0, rng=2, engine=ENGINES[-1])
    ref = recorded(fit_factorised, observed(sparse.csr_matrix((X[rows, cols], (cols, rows)), shape=X.shape[::-1])),
                   **settings)
    R = ratings_matrix(table, 200, 40, n_blocks=n_blocks)                    # sparse chunks
    assert_same_fit(recorded(fit_factorised_dask, R, **settings), ref)
    blocks = observed_blocks_from_triples(dd.from_pandas(table, npartitions=2), 200, 40, n_blocks=n_blocks + 1)
    assert_same_fit(recorded(fit_factorised_dask, blocks, **settings), ref)


def held_tasks(client):
    "Tasks the scheduler holds once the client's releases have arrived (three equal counts in a row)."
    counts = [-1]
    for _ in range(100):
        counts.append(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))
        if len(counts) > 3 and counts[-1] == counts[-2] == counts[-3]: return counts[-1]
        time.sleep(0.1)
    raise AssertionError(f"the scheduler's task count did not settle: {counts}")


def test_local_cluster_of_processes_same_fit_flat_graph_and_a_killed_worker(cluster_client):
    X = problem(0.3, N=240, M=30, seed=4)
    settings = dict(D=4, prior=Prior(w=ARD()), max_iter=7, tol=0, rng=3, engine='numpy')
    ref = recorded(fit_factorised, observed(X.T), **settings)
    X_dask = da.from_array(X, chunks=(60, 30))                                            # four blocks
    client = cluster_client                   # two worker processes (tests/conftest.py), a long transition log
    held = []
    got = recorded(fit_factorised_dask, X_dask, client=client, callback=lambda *_: held.append(held_tasks(client)),
                   **settings)
    assert_same_fit(got, ref)
    assert len(set(held)) == 1, held     # the same tasks held after every sweep: the graph does not grow

    kill_a_worker, killed = worker_killer(client)    # after sweep 3, the worker holding most that no other holds
    got = recorded(fit_factorised_dask, X_dask, client=client, callback=kill_a_worker, **settings)
    (pid, lost, when), = killed
    assert lost and pid not in client.run(os.getpid).values()
    again = recomputed_since(client, when)
    blocks = {k for k in lost if str(k).startswith('_rows_csr')}
    assert blocks and blocks <= again, (blocks, again)    # the lost blocks of samples, recomputed
    assert_same_fit(got, ref)


def test_bad_input_is_refused_by_name():
    X = problem(0.3)
    with pytest.raises(TypeError, match='X: expected a dask.array.Array'): fit_factorised_dask(X, 2)
    with pytest.raises(ValueError, match='X: expected a 2-d array'): fit_factorised_dask(da.ones(5, chunks=5), 2)
    with pytest.raises(ValueError, match='D'): fit_factorised_dask(da.from_array(X, chunks=(60, 30)), 0)
    with pytest.raises(ValueError, match='learned prior'):
        fit_factorised_dask(da.from_array(X, chunks=(60, 30)), 2, prior=Prior(learned_mean=True))
    bad = X.copy(); bad[3, 4] = np.inf
    with pytest.raises(ValueError, match='X: observed entries must be finite'):
        fit_factorised_dask(da.from_array(bad, chunks=(60, 30)), 2, max_iter=2)
    with pytest.raises(TypeError, match='X: expected real numbers'):
        fit_factorised_dask(da.from_array(X.astype(complex), chunks=(60, 30)), 2, max_iter=2)
