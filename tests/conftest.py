"""Fixtures shared by several test files."""
import pytest

_CLUSTER = {}          # 'cluster': the live process cluster, 'tests': the ids of the tests that use it


def _start_cluster():
    distributed = pytest.importorskip('distributed')
    import dask
    # the workers' statistical profiler (a sample every 10 ms) is off: no test reads it, and it was a third of an idle
    # worker's CPU
    with dask.config.set({'distributed.admin.low-level-log-length': 100_000,
                          'distributed.worker.profile.enabled': False}):
        return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=':0')


@pytest.fixture
def process_cluster():
    """One Dask LocalCluster of two worker processes (one thread each), shared by the tests that fit on worker
    processes: starting one costs two interpreters that import NumPy, Dask and the library, several CPU seconds each
    time. It starts when a test first asks for it and is closed once the tests that use it are done (they run first,
    together: `pytest_collection_modifyitems`; an idle cluster costs about a tenth of a core, its workers' and
    scheduler's heartbeats); a later test that asks for it starts it again. Each test connects its own Client
    (`cluster_client`); a test that kills a worker leaves the nanny's replacement. The scheduler keeps a long
    transition log, which the killed-worker tests read."""
    if 'cluster' not in _CLUSTER: _CLUSTER['cluster'] = _start_cluster()
    return _CLUSTER['cluster']


def _close_cluster():
    cluster = _CLUSTER.pop('cluster', None)
    if cluster is not None: cluster.close()


def pytest_collection_modifyitems(items):
    """The tests that use the process cluster run first, one after the other (each file's in its own order), so that
    the cluster starts once: under `--dist worksteal` the first worker takes the head of the collection and runs it
    first (a worker that runs out steals from the tail of another's queue), so they stay on one pytest worker and do
    not start a cluster on each; with `-n 1` or without xdist they still run as one stretch. The benchmark smoke tests
    run last: they read the harness run that `pytest_collection_finish` starts in the background."""
    uses = [it for it in items if 'process_cluster' in getattr(it, 'fixturenames', ())]
    bench = [it for it in items if it.path.name == 'test_bench.py' and 'quick_run' in getattr(it, 'fixturenames', ())]
    items[:] = uses + [it for it in items if it not in uses and it not in bench] + bench
    _CLUSTER['tests'] = {it.nodeid for it in uses}


def pytest_collection_finish(session):
    "The benchmark smoke test's harness run starts now, when the tests that read it are collected (and not deselected)."
    bench = next((it for it in session.items if it.path.name == 'test_bench.py'
                  and 'quick_run' in getattr(it, 'fixturenames', ())), None)
    if bench is not None and not session.config.option.collectonly: bench.module.start_quick_run(session.config)


@pytest.hookimpl(trylast=True)      # after the test's own fixtures (its Client) are torn down
def pytest_runtest_teardown(item, nextitem):
    if 'cluster' in _CLUSTER and (nextitem is None or nextitem.nodeid not in _CLUSTER.get('tests', ())):
        _close_cluster()


def pytest_sessionfinish(session):
    _close_cluster()


@pytest.fixture
def cluster_client(process_cluster):
    "A Client of the shared process cluster with both workers up (after a killed worker, its replacement)."
    distributed = pytest.importorskip('distributed')
    with distributed.Client(process_cluster) as client:
        client.wait_for_workers(2, timeout=120)
        yield client
