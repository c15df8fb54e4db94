"""How many components, judged against the truth: every method of the course beside the reference evidence (lesson 11).

For each problem (d = 6 features, a true number of components k_true in {1, 2, 3} with latent variances 6, 3, 1.5
over unit noise, N in {20, 50, 200}, a few replicates; and Bishop's example of lesson 04, d = 10, N = 100) and each
k = 0..k_max, the reference log evidence log p(Y | k) of the package's model with a unit-scale prior on the loadings
(`vbfa_lit.reference_evidence.reference_log_evidence`, `PRIOR`: alpha = 1 fixed, the data being in units of the noise;
beta, a_tau, b_tau = 1e-5 as in the fit's defaults) by
both estimators (thermodynamic integration and annealed importance sampling, independent seeds; shorter ladders than the
function's defaults, `SETTINGS`, about a third of the cost: every estimate carries its own standard error, and the two
estimators are compared on every problem), with their errors; beside it, for the same data: the VB bound of the same prior for each k (the best of three
starts), Minka's Laplace evidence (`vbfa_lit.evidence.laplace_evidence`), the exact posterior of Zhang et al.'s
model (`vbfa_lit.rjmcmc.exact_posterior_q`, what a long reversible-jump run converges to) and the number of columns
VB-ARD keeps (`vbfa_lit.VBPCA()` at its defaults, three starts). The results are written after every problem, so a
partial run is usable. About 15 CPU-minutes on one core for the default grid (Bishop's example adds about 6).

    OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/model_selection_reference.py [--replicates 2] [--bishop] [--out PATH]
    OPENBLAS_NUM_THREADS=1 nice -n 5 python benchmarks/model_selection_reference.py --only-bishop --full-ladders --append

(d = 10 needs the full ladders: with the shorter ones annealed importance sampling kept an ESS of 2-5 of 32 runs.)
"""
import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from vbfa_lit import VBPCA
from vbfa_lit.data import make_bishop_example
from vbfa_lit.engine import fit_vbfa, observed
from vbfa_lit.evidence import laplace_evidence
from vbfa_lit.reference_evidence import reference_log_evidence
from vbfa_lit.rjmcmc import exact_posterior_q, sample_eigenvalues
from vbfa_lit.vbpca import FixedAlpha, Prior

D = 6
VARIANCES = (6.0, 3.0, 1.5)       # latent variances of the true components, over unit noise
K_MAX = 4
SETTINGS = dict(ti=dict(n_temperatures=40, n_chains=12, n_sweeps=250, n_burn=100), ais=dict(n_steps=10_000, n_runs=32))
PRIOR = Prior(w=FixedAlpha(1.0))   # the loadings' prior on the scale of the data (the fit's default 1e-3 is broad)


def make_data(n, k_true, replicate, d=D):
    """(n, d) data with k_true components of VARIANCES[:k_true] along random orthonormal axes, unit noise and a random
    mean; seeded by (n, k_true, replicate)."""
    rng = np.random.default_rng([n, k_true, replicate, 47])
    U = np.linalg.qr(rng.normal(size=(d, d)))[0][:, :k_true]
    Z = rng.normal(size=(n, k_true)) * np.sqrt(VARIANCES[:k_true])
    return Z @ U.T + rng.normal(size=(n, d)) + rng.normal(size=d) * 3


def measure(X, k_true, k_max, seed, settings=SETTINGS):
    """Every method on X (n, d); reference by TI (seed) and AIS (seed + 1) for k = 0..k_max, with `settings`."""
    N, d = X.shape
    Y = X.T
    ref = {'ti': [], 'ti_se': [], 'ti_disc': [], 'ais': [], 'ais_se': [], 'ais_ess': [], 'seconds': []}
    for k in range(k_max + 1):
        ti = reference_log_evidence(X, k, PRIOR, random_state=seed * 100 + 2 * k, **settings['ti'])
        ais = reference_log_evidence(X, k, PRIOR, method='ais', random_state=seed * 100 + 2 * k + 1,
                                     **settings['ais'])
        for key, val in (('ti', ti.log_evidence), ('ti_se', ti.se), ('ti_disc', ti.discretisation_error),
                         ('ais', ais.log_evidence), ('ais_se', ais.se), ('ais_ess', ais.ess),
                         ('seconds', ti.seconds + ais.seconds)):
            ref[key].append(float(val))
    vb = []
    with np.errstate(divide='ignore'), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for k in range(k_max + 1):
            vb.append(max(float(fit_vbfa(observed(Y), k, PRIOR, shared=True, rng=s).elbo[-1]) for s in range(3)))
        ard = [int(VBPCA(random_state=s).fit(X).n_effective_components_) for s in range(3)]
    g, n = sample_eigenvalues(X)
    return dict(N=N, d=d, k_true=k_true, k_max=k_max, settings=settings, reference=ref, vb_bound=vb,
                laplace=laplace_evidence(X).log_evidence.tolist(),
                rjmcmc=exact_posterior_q(g, n).tolist(), vb_ard=ard)


def grid(replicates, replicates_200):
    "The problems in the order they run: replicate 0 of every (N, k_true) first, so a partial run covers the grid."
    for r in range(replicates):
        for n in (50, 20, 200):
            if n == 200 and r >= replicates_200: continue
            for k_true in (1, 2, 3):
                yield f'd=6 k={k_true} N={n} rep={r}', (lambda n=n, k_true=k_true, r=r: make_data(n, k_true, r)), \
                    k_true, K_MAX, r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--replicates', type=int, default=2, help='replicates of each (N, k_true) for N = 20, 50')
    ap.add_argument('--replicates-200', type=int, default=1, help='replicates for N = 200')
    ap.add_argument('--bishop', action='store_true', help="add Bishop's example (d = 10, N = 100, k = 0..6) at the end")
    ap.add_argument('--only-bishop', action='store_true', help="Bishop's example alone (with --append: added to --out)")
    ap.add_argument('--full-ladders', action='store_true',
                    help="the function's default ladders (80 rungs x 16 chains; 20,000 steps x 40 runs) instead of SETTINGS")
    ap.add_argument('--append', action='store_true', help='keep the problems already in --out, add the new ones')
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'model_selection_reference.json'))
    args = ap.parse_args()
    out = dict(python=platform.python_version(), started=time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
               prior=repr(PRIOR), settings=SETTINGS, d=D, variances=VARIANCES, problems={})
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    if args.append and path.exists():
        out['problems'] = json.loads(path.read_text())['problems']
    todo = [] if args.only_bishop else list(grid(args.replicates, args.replicates_200))
    if args.bishop or args.only_bishop:
        todo.append(("Bishop's example", lambda: make_bishop_example(random_state=1999).X, 4, 6, 0))
    for i, (name, data, k_true, k_max, r) in enumerate(todo):
        start = time.process_time()
        rec = measure(data(), k_true, k_max, seed=1000 + i,
                      settings=dict(ti={}, ais={}) if args.full_ladders else SETTINGS)
        rec['cpu_seconds'] = time.process_time() - start
        out['problems'][name] = rec
        path.write_text(json.dumps(out, indent=1))
        ref = rec['reference']
        z = (np.array(ref['ti']) - ref['ais']) / np.hypot(np.hypot(ref['ti_se'], ref['ti_disc']), ref['ais_se'])
        print(f"{name}: {rec['cpu_seconds']:.0f} CPU-s; TI - AIS in combined s.e.: {np.round(z, 1).tolist()}; "
              f"argmax TI {int(np.argmax(ref['ti']))}, VB {int(np.argmax(rec['vb_bound']))}, "
              f"Laplace {int(np.argmax(rec['laplace']))}, ARD {rec['vb_ard']}", flush=True)
    out['finished'] = time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())
    path.write_text(json.dumps(out, indent=1))
    print('wrote', path)


if __name__ == '__main__':
    main()
