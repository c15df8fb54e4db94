"""Sparse input at MovieLens-1M shape: `VBPCA(missing_values='unstored')` on a SciPy CSR matrix whose stored entries
are the ratings (issue 17, item 5), never densified.

What is measured (one fresh child per case): a synthetic rating matrix of MovieLens-1M's shape and density (6,040
users x 3,706 films, 1,000,209 ratings at uniformly drawn positions, 1..5 from a rank-5 structure plus noise), D = 50.
Seconds per sweep: the median over K sweeps (after the first, which runs no rotation) of the estimator's own sweeps
(with the translation and rotation), time-stamped after each: CPU and wall, with one BLAS thread and with two (the
machine's default). Peak memory is the child's maximum resident set, the data
included. The summary extrapolates time and memory to MovieLens-25M's shape on paper: the sweep's arithmetic grows
like |O| D^2 + (N + M) D^3 and its memory like |O| (the stored data, its mask and their transposes) + (N + M) D^2
(one D x D covariance per row and per column).
"""
import time

import numpy as np
from harness import Case

TARGETS = dict(seconds=3.0, gb=2.0)                               # issue 17: MovieLens-1M shape, sparse, D = 50
ML1M = dict(n_users=6040, n_items=3706, n_ratings=1_000_209)
ML25M = dict(n_users=162_541, n_items=59_047, n_ratings=25_000_095)


def ratings(seed, n_users, n_items, n_ratings, rank=5):
    "CSR (users x items): n_ratings uniformly placed ratings 1..5 from a rank-5 structure plus noise."
    import scipy.sparse as sparse
    rng = np.random.default_rng(seed)
    flat = rng.choice(n_users * n_items, n_ratings, replace=False)
    u, i = np.divmod(flat, n_items)
    A, B = rng.standard_normal((n_users, rank)) / 2, rng.standard_normal((n_items, rank)) / 2
    r = np.clip(np.rint(3.5 + np.einsum('kd,kd->k', A[u], B[i]) + 0.5 * rng.standard_normal(n_ratings)), 1, 5)
    return sparse.csr_matrix((r, (u, i)), shape=(n_users, n_items))


def sweep_time(p):
    """Per-sweep CPU and wall seconds of the estimator's own fit (`VBPCA(missing_values='unstored')`, ARD, shared
    noise, both transformations), from time stamps its per-sweep callback takes."""
    import warnings
    from vbfa_lit import VBPCA
    X = ratings(p['seed'], p['n_users'], p['n_items'], p['n_ratings'])
    if p.get('transpose'): X = X.T.tocsr()                            # items as rows
    c0 = time.process_time()
    stamps = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                                 # a few sweeps on purpose: not converged
        model = VBPCA(p['D'], missing_values='unstored', max_iter=1 + p['iters'], tol=0, random_state=p['seed'],
                      engine=p['engine'], n_jobs=p.get('n_jobs', 1),
                      callback=lambda sweep, elbo: stamps.append((time.process_time(), time.perf_counter()))).fit(X)
    cpu = np.diff([s[0] for s in stamps])                              # sweeps 2.. (the first runs no rotation)
    wall = np.diff([s[1] for s in stamps])
    return dict(engine=p['engine'], cpu_s=float(np.median(cpu)), wall_s=float(np.median(wall)), cpu_each=cpu.tolist(),
                setup_and_first_sweep_cpu_s=stamps[0][0] - c0, nnz=int(X.nnz), shape=list(X.shape), D=p['D'],
                n_sweeps=int(model.n_iter_),
                bound_never_decreased=bool(np.all(np.diff(model.elbo_) >= -1e-9 * abs(model.elbo_[-1]))))


QUICK = dict(n_users=604, n_items=371, n_ratings=10_000, D=5, iters=2)
# the NumPy sweep (lesson 03) and the compiled one (02c, engine='numba': the default when numba is installed); the first
# sweep of a numba case also loads the kernels from numba's disk cache (or compiles them on a new machine): not timed
CASES = [Case(f'ml1m_sparse_D50_{suffix}{t}thread', sweep_time, dict(ML1M, D=50, iters=3, engine=engine), quick=QUICK,
              threads=t, needs=('numba',) if engine == 'numba' else ())
         for engine, suffix in (('numpy', ''), ('numba', 'numba_')) for t in (1, 2)]


def summarise(results):
    rows, extra = [], {}
    for name, r in results.items():
        if 'cpu_s' not in r: continue
        gb = r['child']['max_rss_bytes'] / 2 ** 30
        rows.append(dict(case=name, engine=r.get('engine', 'numpy'), cpu_s=r['cpu_s'], wall_s=r['wall_s'], peak_gb=gb,
                         met_time=r['wall_s'] <= TARGETS['seconds'], met_memory=gb <= TARGETS['gb']))
    # the targets and the extrapolation: the default engine (numba when these cases ran it)
    default = 'numba' if any(r['engine'] == 'numba' for r in rows) else 'numpy'
    one = next((r for n, r in results.items() if n.endswith('_1thread') and 'cpu_s' in r
                and r.get('engine', 'numpy') == default), None)
    if one is not None:
        D = one['D']
        N1, M1, O1 = one['shape'][0], one['shape'][1], one['nnz']
        N2, M2, O2 = ML25M['n_users'], ML25M['n_items'], ML25M['n_ratings']
        work = lambda N, M, O: O * D ** 2 + (N + M) * D ** 3
        mem = lambda N, M, O: (4 * O * 12 + 3 * (N + M) * D * D * 8)          # bytes, the model above
        extra = dict(ml25m_cpu_s_per_sweep=one['cpu_s'] * work(N2, M2, O2) / work(N1, M1, O1),
                     ml25m_gb_model=mem(N2, M2, O2) / 2 ** 30, ml1m_gb_model=mem(N1, M1, O1) / 2 ** 30,
                     dense_nan_copy_gb_ml1m=N1 * M1 * 8 / 2 ** 30, dense_nan_copy_gb_ml25m=N2 * M2 * 8 / 2 ** 30)
    targets = []
    one_row = next((r for r in rows if r['case'].endswith('_1thread') and r['engine'] == default), None)
    if one_row is not None:
        targets = [dict(issue=17, target=f"MovieLens-1M shape, sparse input, D = 50, {default} engine: "
                                         f"<= {TARGETS['seconds']:g} s per sweep",
                        measured=f"{one_row['cpu_s']:.2f} s CPU ({one_row['wall_s']:.2f} s wall)",
                        ratio=TARGETS['seconds'] / one_row['wall_s'], met=one_row['met_time']),
                   dict(issue=17, target=f"MovieLens-1M shape, sparse input, D = 50, {default} engine: "
                                         f"<= {TARGETS['gb']:g} GB peak",
                        measured=f"{one_row['peak_gb']:.2f} GB", ratio=TARGETS['gb'] / one_row['peak_gb'],
                        met=one_row['met_memory'])]
    return dict(rows=rows, targets=targets, limits=TARGETS, on_paper=extra)
