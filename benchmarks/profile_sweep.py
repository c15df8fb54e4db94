#!/usr/bin/env python
"""Per-sweep CPU time and Python call counts of `vbfa_lit.engine.sweep` on dataset 1 (a quick look, not a benchmark).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/profile_sweep.py 10 30     # one BLAS thread
    .venv/bin/python benchmarks/profile_sweep.py 10 30                            # default environment

Prints, for each D: the median CPU and wall ms per sweep over `--rounds` rounds of `--iters` sweeps (after a
warm-up), with the package's own one-thread limit (`one_blas_thread`, as `fit_vbfa` runs) and without it, and the
number of Python function calls in one sweep (cProfile). The machine's load average is printed beside them.
"""
import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problems import Ours, dataset1  # noqa: E402


def per_sweep(m, iters, rounds):
    cpu, wall = [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(iters): m.step()
        cpu.append((time.process_time() - c0) / iters)
        wall.append((time.perf_counter() - t0) / iters)
    return 1e3 * np.median(cpu), 1e3 * np.median(wall)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('D', nargs='*', type=int, default=[10, 30])
    ap.add_argument('--iters', type=int, default=50)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--shared', action='store_true', help='one shared tau (VB PCA) instead of per-feature noise')
    a = ap.parse_args()
    from vbfa_lit.linalg import _threadpool_controller
    env = {k: v for k, v in os.environ.items() if k.endswith('_NUM_THREADS')}
    print(f'environment: {env or "no thread variables"}; load average {os.getloadavg()[0]:.2f}')
    Y, Yo, *_ = dataset1(0)
    for D in a.D:
        m = Ours(Yo, D, a.shared, 0)
        for _ in range(10): m.step()
        raw = per_sweep(m, a.iters, a.rounds)
        with _threadpool_controller().limit(limits=1, user_api='blas'):
            lim = per_sweep(m, a.iters, a.rounds)
            pr = cProfile.Profile()
            pr.enable(); m.step(); pr.disable()
        calls = pstats.Stats(pr).total_calls
        print(f'D={D:3d}: {raw[0]:7.3f} ms CPU ({raw[1]:7.3f} wall) as the environment gives; '
              f'{lim[0]:7.3f} ms CPU ({lim[1]:7.3f} wall) under one_blas_thread; {calls} Python calls per sweep; '
              f'load {os.getloadavg()[0]:.2f}')


if __name__ == '__main__':
    main()
