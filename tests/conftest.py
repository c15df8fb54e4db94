"""Fixtures shared by several test files."""
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

