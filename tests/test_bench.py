"""Smoke test of the benchmarks (`benchmarks/harness.py --quick --first-of-each`): every measuring function of every
comparison runs once, in its child process, and produces finite numbers. Its other cases differ only in parameters
(sizes, engines, storage, BLAS threads, an anchor's variant) and are not smoke-tested here; `make bench-quick` runs
them all. Nothing here asserts a time. An anchor that is not installed is skipped by the harness and recorded as
skipped; our own cases must always run."""
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / 'benchmarks'
MODULES = sorted(p.stem for p in BENCH.glob('bench_*.py'))
# cases that may be skipped when an anchor is missing
ANCHOR_CASES = ('bayespy', 'vbpca', 'householder', 'standard', 'surprise')


def numbers(x):
    "Every number in a nested JSON value."
    if isinstance(x, bool) or x is None: return
    if isinstance(x, (int, float)): yield float(x)
    elif isinstance(x, dict):
        for v in x.values(): yield from numbers(v)
    elif isinstance(x, list):
        for v in x: yield from numbers(v)


def test_modules_found():
    assert {'bench_vbpca', 'bench_transformations', 'bench_rjmcmc', 'bench_stiefel', 'bench_householder',
            'bench_scaling', 'bench_widgets'} <= set(MODULES)


def _run_harness(out, cache_dir):
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    # the Householder benchmark's JAX programs kept in pytest's cache directory from one run to the next (its cold
    # compilation alone is about 30 s; `tests/test_householder_ppca.py` tests the cache with fresh directories); its
    # case names are unique among the bench files, so the setting reaches no other file's cases
    keep = [a for name in ('householder', 'standard') for a in ('--set', f'{name}.cache_dir={json.dumps(cache_dir)}')]
    proc = subprocess.run([sys.executable, str(BENCH / 'harness.py'), '--quick', '--first-of-each', '--out', str(out),
                           *keep, *MODULES], env=env, capture_output=True, text=True, timeout=1800)
    return dict(returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)


def _run_dir(config):
    "This session's directory of the run, the same in every xdist worker (their shared test-run id)."
    run_id = getattr(config, 'workerinput', {}).get('testrunuid') or f'pid{os.getpid()}'
    return config.cache.mkdir('vbfa_lit_bench_quick') / run_id


def start_quick_run(config):
    """Start this session's one harness run over every bench file in the background (`tests/conftest.py` calls this when
    the collection holds these tests, and runs them last), so that it runs beside the other tests instead of holding a
    worker; `make bench` runs them all from one parent too. Under pytest-xdist the first worker to get here starts it
    and the others find it started; the run's result lands in `done.json`, which `quick_run` waits for. Earlier runs'
    directories are removed."""
    import fcntl
    runs, here = config.cache.mkdir('vbfa_lit_bench_quick'), _run_dir(config)
    with open(runs / 'lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if here.exists(): return
        for old in runs.iterdir():
            if old.is_dir(): shutil.rmtree(old, ignore_errors=True)
        here.mkdir()
        cache_dir = str(config.cache.mkdir('vbfa_lit_bench_jax'))
        with open(here / 'runner.err', 'w') as err:        # the child keeps its own copy of the file
            subprocess.Popen([sys.executable, __file__, str(here), cache_dir], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)


@pytest.fixture(scope='session')
def quick_run(request):
    "The harness run `start_quick_run` started (started here if it was not): its exit code and output, and its files."
    here = _run_dir(request.config)
    if not here.exists(): start_quick_run(request.config)
    deadline = time.monotonic() + 1900
    while not (here / 'done.json').exists():
        assert time.monotonic() < deadline, 'the harness run did not finish: ' + (here / 'runner.err').read_text()
        time.sleep(0.5)
    return json.loads((here / 'done.json').read_text()), here / 'out'


def test_quick_harness_exits_cleanly(quick_run):
    proc, _ = quick_run
    assert proc['returncode'] == 0, proc['stdout'][-3000:] + proc['stderr'][-3000:]


@pytest.mark.parametrize('module', MODULES)
def test_quick(module, quick_run):
    proc, out = quick_run
    log = '\n'.join(l for l in proc['stdout'].splitlines() if module in l)[-2000:] + proc['stderr'][-2000:]
    assert (out / f'{module}.json').exists(), log
    res = json.loads((out / f'{module}.json').read_text())
    assert res['complete'], log
    assert res['quick'] and res['machine']['cpu_count'] >= 1 and 'vbfa_lit' in res['machine']['versions']
    assert len(res['cases']) >= 1
    for name, case in res['cases'].items():
        assert 'error' not in case, (name, case, log)
        if 'skipped' in case:
            assert 'not installed' in case['skipped'] and any(a in name for a in ANCHOR_CASES), (name, case)
            continue
        vals = list(numbers(case))
        assert vals and all(math.isfinite(v) for v in vals), name
        assert case['child']['max_rss_bytes'] > 0
    assert 'error' not in res.get('summary', {}), res.get('summary')


def test_first_of_each_runs_every_function_once():
    "The smoke test's choice: the first case of each function, the first runnable one when an anchor is missing."
    sys.path.insert(0, str(BENCH))
    import harness
    f, g, h = (lambda p: {}), (lambda p: {}), (lambda p: {})
    cases = [harness.Case('f1', f), harness.Case('g_missing', g, needs=('no_such_anchor_xyz',)), harness.Case('f2', f),
             harness.Case('g1', g), harness.Case('g2', g), harness.Case('h_missing', h, needs=('no_such_anchor_xyz',))]
    assert [c.name for c in harness.first_of_each(cases)] == ['f1', 'g1', 'h_missing']
    assert [c.name for c in harness.first_of_each(cases, also=('f2',))] == ['f1', 'f2', 'g1', 'h_missing']


def test_the_machine_record_names_the_largest_cache(tmp_path):
    "`last_cache` reads Linux's sysfs: the highest level wins, sizes in K and M; no sysfs gives None."
    sys.path.insert(0, str(BENCH))
    try: import harness
    finally: sys.path.remove(str(BENCH))
    caches = [(1, '32K', '0'), (2, '1024K', '0'), (3, '32768K', '0-1'), (2, '4M', '0')]
    for i, (level, size, shared) in enumerate(caches):
        d = tmp_path / f'index{i}'
        d.mkdir()
        (d / 'level').write_text(f'{level}\n'); (d / 'size').write_text(f'{size}\n')
        (d / 'shared_cpu_list').write_text(f'{shared}\n')
    (tmp_path / 'index9').mkdir()                                   # unreadable entries are passed over
    assert harness.last_cache(tmp_path) == dict(level=3, bytes=32 << 20, shared='0-1')
    assert harness.last_cache(tmp_path / 'none') is None
    assert set(harness.machine()) >= {'cpu', 'cpu_count', 'last_cache'}


if __name__ == '__main__':      # start_quick_run's background process: python test_bench.py <run directory> <JAX cache>
    run = Path(sys.argv[1])
    try: result = _run_harness(run / 'out', sys.argv[2])
    except Exception as e: result = dict(returncode=-1, stdout='', stderr=f'the harness run failed: {e!r}')
    (run / 'done.part').write_text(json.dumps(result))
    (run / 'done.part').rename(run / 'done.json')      # complete or absent, never half-written
