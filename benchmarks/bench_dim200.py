"""The 200-dimensional case of Luttinen & Ilin (Sec. 4.1): sweeps to within 1 nat of the best bound, with and
without the transformations, run until the plain run gets there (or a cap), so that the ratio is measured, not
extrapolated. M = 200, N = 2000, eigenvalues 21^2, 20^2, ..., 2^2 then 1, 20% missing, D = 50, ARD, per-feature
noise. One BLAS thread; CPU time per process. Writes benchmarks/results/dim200.json.

    python benchmarks/bench_dim200.py [--cap 15000] [--seed 0]
"""
import os
for v in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(v, '1')
import argparse, json, time
from pathlib import Path

import numpy as np

from vbfa_lit.ard import ARD
from vbfa_lit.convergence import paper_dataset
from vbfa_lit.transformations import transform_posterior
from vbfa_lit.vbpca import Prior, init_posterior, observed, sweep


def learning_curve(data, prior, D, seed, transform, cap, stop_at=None, log_every=500, progress=None):
    "Bound after each sweep (transformations between sweeps, as in fit_vbfa); stops early at `stop_at`."
    q = init_posterior(data, D, prior, False, np.random.default_rng(seed))
    history, t0 = [], time.process_time()
    for it in range(cap):
        if transform and it > 0: q, _ = transform_posterior(data, q, prior, 'both', latent_covariances=False)
        q, terms = sweep(data, q, prior, False)
        history.append(terms.total)
        if log_every and (it + 1) % log_every == 0:
            print(f'  {"with" if transform else "without"}: sweep {it + 1}, bound {history[-1]:.3f}, '
                  f'{time.process_time() - t0:.0f} s CPU', flush=True)
            if progress is not None: progress(np.array(history), time.process_time() - t0)
        if stop_at is not None and history[-1] >= stop_at: break
    return np.array(history), time.process_time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--cap', type=int, default=15000, help='most sweeps without the transformations')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'dim200.json'))
    args = ap.parse_args()
    Y_train, _, _ = paper_dataset('200', np.random.default_rng(args.seed))
    data, prior, D = observed(Y_train), Prior(w=ARD()), 50
    with_t, cpu_with = learning_curve(data, prior, D, args.seed, True, 400, log_every=100)
    best_with = with_t.max()

    def write(without, cpu_without, final):
        "Results so far (a run stopped early still leaves a lower bound on the ratio)."
        best = max(best_with, without.max())
        reach = lambda h: int(np.argmax(h >= best - 1)) + 1 if (h >= best - 1).any() else None
        res = dict(M=200, N=2000, D=D, prior='ARD', missing=0.2, seed=args.seed, cap_without=args.cap, final=final,
                   sweeps_to_1nat_with=reach(with_t), sweeps_without_so_far=len(without),
                   sweeps_to_1nat_without=reach(without), gap_now_without=float(best - without[-1]),
                   best_bound=float(best), cpu_s_per_sweep_with=cpu_with / len(with_t),
                   cpu_s_per_sweep_without=cpu_without / len(without))
        n_with, n_without = res['sweeps_to_1nat_with'], res['sweeps_to_1nat_without']
        if n_with: res['ratio_sweeps' if n_without else 'ratio_sweeps_at_least'] = (n_without or len(without)) / n_with
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(res, indent=1))
        return res

    # the plain run stops once it is within 1 nat of the transformed run's best (if it ends higher, 'best' moves up)
    without, cpu_without = learning_curve(data, prior, D, args.seed, False, args.cap, stop_at=best_with - 1,
                                          progress=lambda h, c: write(h, c, False))
    print(json.dumps(write(without, cpu_without, True), indent=1))


if __name__ == '__main__':
    main()
