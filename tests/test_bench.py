"""Smoke test of the benchmarks (`benchmarks/harness.py --quick`): every case of every comparison runs in its child
process and produces finite numbers. Nothing here asserts a time. An anchor that is not installed is skipped by the
harness and recorded as skipped; our own cases must always run."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / 'benchmarks'
MODULES = sorted(p.stem for p in BENCH.glob('bench_*.py'))
ANCHOR_CASES = ('bayespy', 'vbpca', 'householder', 'standard', 'surprise')  # cases that may be skipped when an anchor is missing
# Files whose cases share one measuring function: the smoke test runs one case per function (a LocalCluster costs
# seconds to start: every case of bench_cluster would add a minute to the test suite)
ONLY = {'bench_cluster': ('ml1m_D20_2workers', 'netflix_D15_in_memory_2threads')}


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


@pytest.mark.parametrize('module', MODULES)
def test_quick(module, tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
    only = [a for pattern in ONLY.get(module, ()) for a in ('--only', pattern)]
    proc = subprocess.run([sys.executable, str(BENCH / 'harness.py'), '--quick', '--out', str(tmp_path), *only, module],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads((tmp_path / f'{module}.json').read_text())
    assert res['quick'] and res['machine']['cpu_count'] >= 1 and 'vbfa_lit' in res['machine']['versions']
    assert len(res['cases']) >= 1
    for name, case in res['cases'].items():
        assert 'error' not in case, (name, case)
        if 'skipped' in case:
            assert 'not installed' in case['skipped'] and any(a in name for a in ANCHOR_CASES), (name, case)
            continue
        vals = list(numbers(case))
        assert vals and all(math.isfinite(v) for v in vals), name
        assert case['child']['max_rss_bytes'] > 0
    assert 'error' not in res.get('summary', {}), res.get('summary')
