"""Fixtures and helpers shared by several test files."""
import os
import signal
import time

import pytest


@pytest.fixture(scope='session')
def process_cluster():
    """One Dask LocalCluster of two worker processes (one thread each) per pytest process, shared by the tests that fit
    on worker processes: starting one costs two interpreters that import NumPy, Dask and the library, several CPU
    seconds each time. Each test connects its own Client (`cluster_client`); a test that kills a worker leaves the
    nanny's replacement. The scheduler keeps a long transition log, which the killed-worker tests read."""
    distributed = pytest.importorskip('distributed')
    import dask
    with dask.config.set({'distributed.admin.low-level-log-length': 100_000}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=':0')
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster_client(process_cluster):
    "A Client of the shared process cluster with both workers up (after a killed worker, its replacement)."
    distributed = pytest.importorskip('distributed')
    with distributed.Client(process_cluster) as client:
        client.wait_for_workers(2, timeout=120)
        yield client


def worker_killer(client, keys=None, after=2):
    """A fit callback that SIGKILLs, at sweep index `after`, the worker process holding the most results no other worker
    holds (of `keys`, if given: a copy elsewhere is not lost); `killed` receives (pid, the lost keys, time.time())."""
    killed = []
    def callback(it, q, bound):
        if it != after: return
        pids, has = client.run(os.getpid), client.has_what()
        def alone(w):
            return {k for k in has.get(w, ()) if (keys is None or k in keys)
                    and not any(k in held for v, held in has.items() if v != w)}
        victim = max(pids, key=lambda w: len(alone(w)))
        killed.append((pids[victim], alone(victim), time.time()))
        os.kill(pids[victim], signal.SIGKILL)
    return callback, killed


def recomputed_since(client, when):
    "The keys the scheduler brought back into memory after `when` (a time.time())."
    def recomputed(dask_scheduler):
        return {t[0] for t in dask_scheduler.transition_log if t[2] == 'memory' and t[-1] > when}
    return client.run_on_scheduler(recomputed)
