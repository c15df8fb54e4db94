"""Both cores of one machine: seconds per sweep of the estimator's fit (the sweeps of `fit_vbfa` with the
translation and rotation, as `VBPCA` runs them) with `n_jobs` = 1 and 2 threads, at MovieLens-100k shape (943 users
x 1,682 films, 100,000 ratings, CSR, synthetic as in `bench_sparse`), D = 100, users as rows and transposed (films as
rows), compiled kernels. The children run in the default environment (no BLAS thread variables): the fit keeps one
BLAS thread per thread of its own, the rotation's products included (split over `n_jobs` threads).

Wall-clock is the clock here (two threads spend about the same CPU seconds in less time); each case is a fresh child,
the four cases interleaved over `rounds`. Target (scale issue, item 3): <= 0.5 s per sweep on this 2-core machine.
"""
import numpy as np
from harness import Case
from bench_sparse import sweep_time

TARGET_SECONDS = 0.5
ML100K = dict(n_users=943, n_items=1682, n_ratings=100_000)
QUICK = dict(n_users=94, n_items=168, n_ratings=2_000, D=6, iters=2)
CASES = [Case(f'ml100k_{rows}_D100_jobs{j}', sweep_time,
              dict(ML100K, D=100, iters=6, engine='numba', n_jobs=j, transpose=rows == 'items'), quick=QUICK,
              threads=None, needs=('numba',), rounds=3)
         for rows in ('users', 'items') for j in (1, 2)]


def summarise(results):
    rows, targets = [], []
    for name, r in results.items():
        if 'wall_s' not in r: continue
        rows.append(dict(case=name, rows=name.split('_')[1], n_jobs=int(name.rsplit('jobs', 1)[1]), wall_s=r['wall_s'],
                         cpu_s=r['cpu_s'], peak_gb=r['child']['max_rss_bytes'] / 2 ** 30))
    for orient in ('users', 'items'):
        by = {r['n_jobs']: r for r in rows if r['rows'] == orient}
        if 1 in by and 2 in by:
            targets.append(dict(issue=31, target=f"MovieLens-100k shape ({orient} as rows), D = 100, transformations, "
                                                f"2 threads: <= {TARGET_SECONDS:g} s per sweep",
                                measured=f"{by[2]['wall_s']:.2f} s (1 thread: {by[1]['wall_s']:.2f} s; speed-up "
                                         f"{by[1]['wall_s'] / by[2]['wall_s']:.2f}x)",
                                ratio=TARGET_SECONDS / by[2]['wall_s'], met=by[2]['wall_s'] <= TARGET_SECONDS))
    return dict(rows=rows, targets=targets)
