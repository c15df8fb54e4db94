#!/usr/bin/env python
"""Small fits, one code against another: milliseconds a sweep on Luttinen & Ilin's dataset 1 (M = 50 features,
N = 200 samples, 20% missing), per-feature noise, ARD, no transformations, in both environments (no BLAS thread
variables, and every thread variable set to 1), each run in a fresh process and the codes alternated.

    .venv/bin/python benchmarks/compare_small_fits.py --code old=/tmp/old --code new=. --D 10 30 --rounds 8

`--code NAME=PATH` picks the package a child imports (PATH goes first on PYTHONPATH; a checkout before the engine
module, such as 10d21e9, is read through `vbfa_lit.vbpca`). What a child times, after `--warmup` sweeps:
- fit: `fit_vbfa(observed(Y), D, prior, max_iter=warmup + iters, tol=0)` (engine 'auto': numba when installed),
  the path the estimator takes; a sweep is the time between two calls of its callback, summed over `iters` sweeps;
- sweep: `sweep(data, q, prior, shared=False, engine='numba')` called in a loop inside the package's one-BLAS-thread
  limit, as `bench_vbpca.iteration` times it (no runner: each sweep makes its own);
- estimator: `VBPCA(D, noise='per_feature', transformations='none', tol=0)` fitted to the samples x features
  matrix, warmup + iters sweeps against warmup sweeps, the difference divided by iters (what a user's fit costs a
  sweep, its thread choice and one-BLAS-thread limit included).
Printed: for each case and code the median over rounds of CPU and wall ms a sweep, and each code's ratio to the
first one (the median of the per-round ratios and their range), with the load average before and after.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
THREAD_VARS = ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'NUMBA_NUM_THREADS')


def child(a):
    "Runs in a fresh process: time one case of one code and print a JSON line."
    try:
        import vbfa_lit.engine as eng
    except ImportError:                      # before the engine module: the lesson's module held the sweep and fit
        import vbfa_lit.vbpca as eng
    from vbfa_lit.vbpca import Prior
    from vbfa_lit.ard import ARD
    from vbfa_lit.linalg import _threadpool_controller
    Yo = np.load(a.data)
    data, prior = eng.observed(Yo), Prior(1e-5, 1e-5, 1e-5, w=ARD(1e-5, 1e-5))
    W0, K = a.warmup, a.iters
    if a.mode == 'estimator':
        import warnings
        from vbfa_lit.estimator import VBPCA
        def est(n):
            m = VBPCA(a.D, noise='per_feature', transformations='none', max_iter=n, tol=0.0, random_state=a.seed)
            c, t = time.process_time(), time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                m.fit(Yo.T)
            return time.process_time() - c, time.perf_counter() - t, m
        est(W0)
        (cw, tw, _), (ck, tk, m) = est(W0), est(W0 + K)
        c0, t0, c1, t1, bound = cw, tw, ck, tk, float(m.elbo_[-1])
    elif a.mode == 'fit':
        stamps = []
        cb = lambda it, q, bound: stamps.append((time.process_time(), time.perf_counter()))
        fit = eng.fit_vbfa(data, a.D, prior, shared=False, max_iter=W0 + K, tol=0.0, rng=a.seed, callback=cb)
        (c0, t0), (c1, t1) = stamps[W0 - 1], stamps[-1]
        bound = fit.elbo[-1]
    else:
        q = eng.init_posterior(data, a.D, prior, False, np.random.default_rng(a.seed))
        with _threadpool_controller().limit(limits=1, user_api='blas'):
            for _ in range(W0): q, terms = eng.sweep(data, q, prior, False, 'numba')
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(K): q, terms = eng.sweep(data, q, prior, False, 'numba')
            c1, t1 = time.process_time(), time.perf_counter()
        bound = terms.total
    print(json.dumps(dict(cpu_ms=1e3 * (c1 - c0) / K, wall_ms=1e3 * (t1 - t0) / K, bound=bound)))


def run_child(code, env_name, mode, D, a, data_file):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS and k != 'PYTHONPATH'}
    if env_name == 'one': env.update({k: '1' for k in THREAD_VARS})
    env['PYTHONPATH'] = str(Path(code).resolve())
    iters = a.iters if a.iters else (400 if D <= 10 else 100)
    cmd = [sys.executable, __file__, '--child', '--mode', mode, '--D', str(D), '--data', data_file,
           '--warmup', str(a.warmup), '--iters', str(iters), '--seed', str(a.seed)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(Path(code).resolve()))
    if out.returncode: raise RuntimeError(f'{code} {env_name} {mode} D={D}: {out.stderr[-2000:]}')
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--code', action='append', default=[], help='NAME=PATH, in the order of the comparison')
    ap.add_argument('--D', nargs='+', type=int, default=[10, 30])
    ap.add_argument('--env', nargs='+', default=['default', 'one'], choices=['default', 'one'])
    ap.add_argument('--mode', nargs='+', default=['fit', 'estimator', 'sweep'], choices=['fit', 'estimator', 'sweep'])
    ap.add_argument('--rounds', type=int, default=8)
    ap.add_argument('--warmup', type=int, default=20)
    ap.add_argument('--iters', type=int, default=0, help='timed sweeps a child (0: 400 for D <= 10, else 100)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--json', help='write every round here')
    ap.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    ap.add_argument('--data', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        a.mode = a.mode[0]; a.D = a.D[0]
        return child(a)
    codes = [c.split('=', 1) for c in (a.code or ['this=.'])]
    sys.path.insert(0, str(HERE))
    from problems import dataset1
    Yo = dataset1(a.seed)[1]
    load0 = os.getloadavg()
    print(f'load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; {os.cpu_count()} cores', flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data_file = os.path.join(tmp, 'Y.npy')
        np.save(data_file, Yo)
        for r in range(a.rounds):
            for env_name in a.env:
                for mode in a.mode:
                    for D in a.D:
                        order = codes[r % len(codes):] + codes[:r % len(codes)]   # alternate which code goes first
                        for name, path in order:
                            res = run_child(path, env_name, mode, D, a, data_file)
                            results.setdefault((env_name, mode, D), {}).setdefault(name, []).append(res)
            print(f'round {r + 1}/{a.rounds} done, load {os.getloadavg()[0]:.2f}', flush=True)
    load1 = os.getloadavg()
    print(f'load average at end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}')
    base = codes[0][0]
    print(f"\n{'env':8s}{'mode':10s}{'D':>4s}  {'code':10s}{'CPU ms':>9s}{'wall ms':>9s}  "
          f"{'CPU ratio to ' + base:>26s}  {'wall ratio':>20s}  bound")
    for (env_name, mode, D), by in results.items():
        for name, rs in by.items():
            cpu, wall = [x['cpu_ms'] for x in rs], [x['wall_ms'] for x in rs]
            rc = [x / y for x, y in zip(cpu, [x['cpu_ms'] for x in by[base]])]
            rw = [x / y for x, y in zip(wall, [x['wall_ms'] for x in by[base]])]
            print(f'{env_name:8s}{mode:10s}{D:4d}  {name:10s}{np.median(cpu):9.3f}{np.median(wall):9.3f}  '
                  f'{np.median(rc):10.3f} ({min(rc):.2f}-{max(rc):.2f})  {np.median(rw):8.3f} ({min(rw):.2f}-{max(rw):.2f})'
                  f'  {rs[0]["bound"]:.12g}')
    if a.json:
        Path(a.json).write_text(json.dumps(dict(load_start=load0, load_end=load1, codes=codes,
            results=[dict(env=e, mode=m, D=D, code=n, rounds=rs) for (e, m, D), by in results.items()
                     for n, rs in by.items()]), indent=1))


if __name__ == '__main__':
    main()
