"""Speed of `vbfa_lit.stiefel.sample_stiefel(1000, 10)` beside its anchors (issue 10's targets):

- `scipy.stats.ortho_group.rvs(1000)[:, :10]` (target: at least 300x slower than ours), and
- a thin QR of a 1000 x 10 Gaussian matrix with the sign fix (the fastest correct alternative; target: ours within 2x).

Each timing is the best of `--repeat` rounds of `--number` calls, on one BLAS thread. Writes
`benchmarks/results/stiefel.json`. Usage: `.venv/bin/python benchmarks/bench_stiefel.py [--quick]`.
"""
import os
for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(var, '1')
import argparse, json, platform, timeit
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

from vbfa_lit.stiefel import sample_stiefel


def thin_qr_sign_fix(rng, D=1000, Q=10):
    q, r = np.linalg.qr(rng.standard_normal((D, Q)))
    return q * np.sign(np.diag(r))


def best(f, number, repeat):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'stiefel.json'))
    a = ap.parse_args()
    number, repeat = (50, 3) if a.quick else (200, 7)
    rng = np.random.default_rng(0)
    t_ours = best(lambda: sample_stiefel(1000, 10, random_state=rng), number, repeat)
    t_ours_swap = best(lambda: sample_stiefel(1000, 10, random_state=rng, reflection='swap'), number, repeat)
    t_qr = best(lambda: thin_qr_sign_fix(rng), number, repeat)
    t_scipy = best(lambda: stats.ortho_group.rvs(1000, random_state=rng)[:, :10], 1, 3 if a.quick else 5)
    t_batch = best(lambda: sample_stiefel(1000, 10, size=100, random_state=rng), 3, repeat) / 100
    res = dict(sample_stiefel_s=t_ours, sample_stiefel_swap_s=t_ours_swap, thin_qr_sign_fix_s=t_qr, ortho_group_s=t_scipy,
               sample_stiefel_batched_per_draw_s=t_batch,
               speedup_vs_ortho_group=t_scipy / t_ours, ratio_vs_thin_qr=t_ours / t_qr,
               targets=dict(speedup_vs_ortho_group='>= 300', ratio_vs_thin_qr='<= 2'),
               machine=dict(python=platform.python_version(), numpy=np.__version__, scipy=scipy.__version__,
                            cpu_count=os.cpu_count(), load_average=os.getloadavg(), blas_threads=os.environ['OPENBLAS_NUM_THREADS']),
               timing=dict(number=number, repeat=repeat, statistic='best of repeat, per call'))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    print(f"sample_stiefel(1000, 10)           {1e3 * t_ours:8.3f} ms  (reflection='swap' {1e3 * t_ours_swap:.3f} ms; "
          f"batched, per draw {1e3 * t_batch:.3f} ms)")
    print(f"thin QR with sign fix              {1e3 * t_qr:8.3f} ms  -> ours / QR = {t_ours / t_qr:.2f} (target <= 2)")
    print(f"ortho_group.rvs(1000)[:, :10]      {1e3 * t_scipy:8.1f} ms  -> {t_scipy / t_ours:.0f}x (target >= 300x)")


if __name__ == '__main__':
    main()
