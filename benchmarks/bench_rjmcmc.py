"""Reversible-jump MCMC over the number of components (`vbfa_lit.rjmcmc`): the paper's run, 20,000 sweeps, for d = 6
(Zhang et al.'s Set 1, N = 1000) and d = 15 (their Set 4 spectrum, N = 10,000), 1 and 8 chains in one process, with the
NumPy sweep and the compiled one (`engine='numba'`, `vbfa_lit.rjmcmc_fast`), which gives the same chains for the same
seed (checked here on every pair). No peer: absolute numbers, and the targets of issue 17: 20,000 sweeps on d = 15 in
<= 0.5 s for one chain and <= 1.5 s for 8 chains (issue 9 had asked for 1 s and 3 s). The eight configurations run in
interleaved rounds; numba's compiled kernel is loaded from its disk cache before the clock starts (the time of that load
is reported as numba_load_s).
"""
import time

import numpy as np
from harness import Case, interleave, timed

TARGET_SECONDS = {1: 0.5, 8: 1.5}  # for 20,000 sweeps on d = 15 (issue 17)
ENGINES = ('numpy', 'numba')


def spectra():
    "d = 6: the eigenvalues printed for Set 1; d = 15: one Set 4 sample (variances 10, 8, 6, 4, 2, then ten 0.1)."
    from vbfa_lit.rjmcmc import sample_eigenvalues
    X = np.random.default_rng(0).normal(size=(10000, 15)) * np.sqrt([10, 8, 6, 4, 2] + [0.1] * 10)
    return {6: (np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]), 1000), 15: sample_eigenvalues(X)}


def rjmcmc(p):
    import warnings
    from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues
    from vbfa_lit.rjmcmc_fast import numba_available
    S, n = spectra(), p['n_sweeps']
    engines = [e for e in ENGINES if e == 'numpy' or numba_available()]
    t0 = time.perf_counter()
    if 'numba' in engines:                      # load (or, on a new machine, compile) the kernel before timing
        rjmcmc_pca_from_eigenvalues(S[6][0], 1000, n_sweeps=20, burn_in=10, engine='numba', random_state=0)
    load_s = time.perf_counter() - t0
    last = {}
    def tool(d, chains, engine):
        g, N = S[d]
        def run():
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')        # short chains at d = 15 may warn that they disagree
                last[d, chains, engine] = rjmcmc_pca_from_eigenvalues(g, N, n_sweeps=n, burn_in=n // 2, n_chains=chains,
                                                                      random_state=chains, engine=engine)
        return lambda r: timed(run, 1)
    res = interleave({f'd{d}_chains{c}_{e}': tool(d, c, e) for d in (6, 15) for c in (1, 8) for e in engines},
                     p['rounds'])
    rows = []
    for k, v in res.items():
        if k == '_loadavg': continue
        d, c, e = int(k[1:].split('_')[0]), int(k.split('chains')[1].split('_')[0]), k.rsplit('_', 1)[1]
        rows.append(dict(d=d, chains=c, engine=e, n_sweeps=n, cpu_s=v['cpu']['median'], wall_s=v['wall']['median'],
                         sweeps_per_cpu_s=n / v['cpu']['median'], cpu_s_per_20000=20000 * v['cpu']['median'] / n))
    same = {f'd{d}_chains{c}': bool(np.array_equal(last[d, c, 'numpy'].q, last[d, c, 'numba'].q)
                                    and np.allclose(last[d, c, 'numpy'].tau, last[d, c, 'numba'].tau, rtol=1e-12, atol=0))
            for d in (6, 15) for c in (1, 8) if (d, c, 'numba') in last}
    return dict(rows=rows, loadavg=res['_loadavg'], numba_load_s=load_s if 'numba' in engines else None,
                same_chains=same)


CASES = [Case('rjmcmc', rjmcmc, dict(n_sweeps=20000, rounds=3), quick=dict(n_sweeps=200, rounds=1))]


def summarise(cases):
    c = cases['rjmcmc']
    rows = c.get('rows', [])
    for r in rows:
        ref = next((x for x in rows if (x['d'], x['chains'], x['engine']) == (r['d'], r['chains'], 'numpy')), None)
        r['numpy_over_this_cpu'] = ref['cpu_s'] / r['cpu_s'] if ref else None
    targets = [dict(issue=17, target=f"20,000 sweeps, d = 15, {r['chains']} chain(s), {r['engine']} sweep: "
                                     f"<= {TARGET_SECONDS[r['chains']]:g} s",
                    measured=f"{r['cpu_s_per_20000']:.2f} s CPU, {r['wall_s'] * 20000 / r['n_sweeps']:.2f} s wall",
                    ratio=TARGET_SECONDS[r['chains']] / r['cpu_s_per_20000'],
                    met=r['cpu_s_per_20000'] <= TARGET_SECONDS[r['chains']])
               for r in rows if r['d'] == 15 and r['engine'] == ('numba' if any(x['engine'] == 'numba' for x in rows)
                                                                 else 'numpy')]
    return dict(rows=rows, targets=targets, numba_load_s=c.get('numba_load_s'), same_chains=c.get('same_chains', {}))
