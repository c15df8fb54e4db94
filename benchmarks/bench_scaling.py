"""How the cost of one sweep grows: CPU per `sweep` against N (samples), M (features), D (components) and the observed
fraction, each axis in one process with its points in interleaved rounds, one BLAS thread. Data: rank-5 Gaussian
structure plus unit noise, entries missing at random, ARD, per-feature noise. The fitted exponent (slope on log-log
axes) is set beside the expected one: O(N M D^2) with a dense mask (the masked sums are dense matrix products), plus
O((N + M) D^3) for the N + M Cholesky factorisations; O(|O| D^2) with CSR storage, |O| the number of observed entries.
"""
import numpy as np
from harness import Case, interleave, timed
from problems import Ours

BASE = dict(N=1000, M=100, D=10, observed=0.8, storage='dense')
EXPECTED = dict(N=1.0, M=1.0, D=2.0, observed_csr=1.0, observed_dense=0.0)


def data(N, M, observed, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((M, 5)) @ rng.standard_normal((5, N)) + rng.standard_normal((M, N))
    return np.where(rng.random((M, N)) < observed, Y, np.nan)


def axis(p):
    "Per-sweep CPU at each value of one axis (the others at `base`), interleaved rounds of `iters` sweeps after 2 warm-up."
    pts = [dict(p['base'], **{p['axis']: v}) for v in p['values']]
    def run(pt):
        def go(r):
            m = Ours(data(pt['N'], pt['M'], pt['observed']), pt['D'], False, r, sparse_storage=pt['storage'] == 'csr')
            for _ in range(2): m.step()
            return timed(m.step, p['iters'])
        return go
    res = interleave({str(v): run(pt) for v, pt in zip(p['values'], pts)}, p['rounds'])
    cpu = [res[str(v)]['cpu']['median'] for v in p['values']]
    x = np.array(p['values'], float)
    slope = float(np.polyfit(np.log(x), np.log(cpu), 1)[0])
    return dict(axis=p['axis'], storage=p['base']['storage'], values=p['values'], cpu_s=cpu, exponent=slope,
                base=p['base'], loadavg=res['_loadavg'])


AXES = [('N', [250, 500, 1000, 2000, 4000], {}), ('M', [50, 100, 200, 400, 800], {}), ('D', [5, 10, 20, 40], {}),
        ('observed', [0.02, 0.05, 0.1, 0.2, 0.4], dict(N=2000, M=500, storage='csr')),
        ('observed', [0.02, 0.05, 0.1, 0.2, 0.4], dict(N=2000, M=500, storage='dense'))]
CASES = [Case(f"{a}{'_' + b['storage'] if 'storage' in b else ''}", axis,
              dict(axis=a, values=v, base=dict(BASE, **b), rounds=3, iters=5),
              quick=dict(values=v[:2], base=dict(BASE, **dict(b, N=60, M=20, D=3)), rounds=1, iters=1))
         for a, v, b in AXES]


def summarise(cases):
    rows = []
    for k, c in cases.items():
        if 'exponent' in c:
            key = k if k in EXPECTED else c['axis']
            rows.append(dict(case=k, axis=c['axis'], storage=c['storage'], exponent=c['exponent'],
                             expected=EXPECTED.get(key), values=c['values'], cpu_s=c['cpu_s']))
    return dict(rows=rows)
