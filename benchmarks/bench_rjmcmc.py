"""Reversible-jump MCMC over the number of components (`vbfa_lit.rjmcmc`): sweeps per second for d = 6 (Zhang et al.'s
Set 1, N = 1000) and d = 15 (their Set 4 spectrum, N = 10,000), 1 and 8 chains vectorised in one process. No peer:
absolute numbers, and the issue's target (issue 9): the paper's run, 20,000 sweeps on d = 15, in <= 1 s for one chain
and <= 3 s for 8 chains. The four configurations run in interleaved rounds, each the paper's 20,000 sweeps.
"""
import numpy as np
from harness import Case, interleave, timed

TARGET_SECONDS = {1: 1.0, 8: 3.0}  # for 20,000 sweeps on d = 15


def spectra():
    "d = 6: the eigenvalues printed for Set 1; d = 15: one Set 4 sample (variances 10, 8, 6, 4, 2, then ten 0.1)."
    from vbfa_lit.rjmcmc import sample_eigenvalues
    X = np.random.default_rng(0).normal(size=(10000, 15)) * np.sqrt([10, 8, 6, 4, 2] + [0.1] * 10)
    return {6: (np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]), 1000), 15: sample_eigenvalues(X)}


def rjmcmc(p):
    from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues
    S, n = spectra(), p['n_sweeps']
    def tool(d, chains):
        g, N = S[d]
        return lambda r: timed(lambda: rjmcmc_pca_from_eigenvalues(g, N, n_sweeps=n, burn_in=n // 2, n_chains=chains,
                                                                   random_state=r), 1)
    res = interleave({f'd{d}_chains{c}': tool(d, c) for d in (6, 15) for c in (1, 8)}, p['rounds'])
    rows = [dict(d=int(k[1:].split('_')[0]), chains=int(k.split('chains')[1]), n_sweeps=n,
                 cpu_s=v['cpu']['median'], wall_s=v['wall']['median'], sweeps_per_cpu_s=n / v['cpu']['median'],
                 cpu_s_per_20000=20000 * v['cpu']['median'] / n) for k, v in res.items() if k != '_loadavg']
    return dict(rows=rows, loadavg=res['_loadavg'])


CASES = [Case('rjmcmc', rjmcmc, dict(n_sweeps=20000, rounds=3), quick=dict(n_sweeps=200, rounds=1))]


def summarise(cases):
    rows = cases['rjmcmc'].get('rows', [])
    targets = [dict(issue=9, target=f"20,000 sweeps, d = 15, {r['chains']} chain(s): <= {TARGET_SECONDS[r['chains']]:g} s",
                    measured=f"{r['cpu_s_per_20000']:.1f} s CPU", ratio=TARGET_SECONDS[r['chains']] / r['cpu_s_per_20000'],
                    met=r['cpu_s_per_20000'] <= TARGET_SECONDS[r['chains']]) for r in rows if r['d'] == 15]
    return dict(rows=rows, targets=targets)
