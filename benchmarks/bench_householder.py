"""Bayesian PPCA by NUTS on the breast-cancer data (issue 10's target): Q = 2, 4 chains x (1000 warm-up + 1000 draws),
wall-clock and CPU time (compilation included; the CPU time of all threads is less sensitive to other load on a shared machine) and diagnostics: split R-hat < 1.01 and bulk ESS > 400 for sigma and the noise, fewer
than 1% divergent transitions, in under 60 s (the authors' Stan run: 9.4 minutes for 4 x 2000).

Writes `benchmarks/results/householder.json`. Usage: `.venv/bin/python benchmarks/bench_householder.py [--seed S]`.
"""
import os
for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(var, '1')
import argparse, json, platform, time
from pathlib import Path

import numpy as np

from vbfa_lit.householder_ppca import householder_ppca, load_breast_cancer_standardised


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--parameterisation', default='householder')
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'householder.json'))
    a = ap.parse_args()
    X, _, _ = load_breast_cancer_standardised()
    load_before = os.getloadavg()
    cpu = time.process_time()
    r = householder_ppca(X, 2, num_warmup=1000, num_samples=1000, num_chains=4, random_state=a.seed,
                         parameterisation=a.parameterisation)
    cpu = time.process_time() - cpu
    d = r.diagnostics()
    import jax, numpyro
    res = dict(seconds=r.seconds, cpu_seconds=cpu, rhat_sigma=float(np.max(d['r_hat']['sigma'])), rhat_noise=float(d['r_hat']['noise_std']),
               ess_sigma=float(np.min(d['ess_bulk']['sigma'])), ess_noise=float(d['ess_bulk']['noise_std']),
               rhat_W_max=float(np.nanmax(d['r_hat']['W'])), ess_W_min=float(np.nanmin(d['ess_bulk']['W'])),
               divergences=d['divergences'], draws=d['draws'], divergent_fraction=d['divergent_fraction'],
               mean_leapfrog_steps=float(r.num_steps.mean()), settings=r.settings, parameterisation=a.parameterisation,
               seed=a.seed, targets=dict(rhat='< 1.01', ess_bulk='> 400', divergent_fraction='< 0.01', seconds='< 60'),
               machine=dict(python=platform.python_version(), jax=jax.__version__, numpyro=numpyro.__version__,
                            cpu_count=os.cpu_count(), load_average_before=load_before, load_average_after=os.getloadavg()))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    print(r.summary())
    print(f"seconds {r.seconds:.1f} wall, {cpu:.1f} CPU (compilation included); R-hat sigma {res['rhat_sigma']:.4f}, noise {res['rhat_noise']:.4f}; "
          f"bulk ESS sigma {res['ess_sigma']:.0f}, noise {res['ess_noise']:.0f}; divergent {res['divergences']} of {res['draws']}")


if __name__ == '__main__':
    main()
