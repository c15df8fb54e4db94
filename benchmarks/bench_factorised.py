"""The fully factorised posterior (lesson 15; `vbfa_lit.factorised_engine.fit_factorised`) at MovieLens-25M's shape,
beside the full posterior on the same ratings, and on Dask at Netflix's shape (issue 46, item 3), with the least a sweep
can take there (`roofline`).

What is measured (one fresh child per case): synthetic ratings at uniformly drawn positions (`bench_sparse.ratings`:
1..5 from a rank-5 structure plus noise), the papers' orientation (items as features, users as samples), ARD, one
noise precision. Seconds per sweep: the median over the sweeps after the first (which also loads the compiled kernel),
CPU and wall, the two passes shared by `n_jobs` threads of one process. Peak memory is the child's maximum resident
set, the data included. The full posterior (`VBPCA(missing_values='unstored')`, its own sweeps with the translation
and rotation) runs on a quarter of MovieLens-25M for the side-by-side ratio at the same D; a full sweep at the whole
shape is measured in the cluster benchmark.
"""
import time

import numpy as np
from harness import Case
from bench_sparse import ML25M, ratings
from bench_cluster import NETFLIX

TARGETS = dict(ml25m_seconds=15.0, worker_gb=4.0,                # issue 46: MovieLens-25M shape, D = 50, 2 workers
               netflix_seconds=3.0)                            # Netflix shape, D = 15, 2 workers (full posterior 7.0 s)
QUARTER = {k: v // 4 for k, v in ML25M.items()}


def factorised_sweeps(p):
    "Per-sweep CPU and wall seconds of `fit_factorised`, from time stamps its callback takes."
    from vbfa_lit.engine import observed
    from vbfa_lit.factorised_engine import fit_factorised
    from vbfa_lit.vbpca import Prior
    from vbfa_lit.ard import ARD
    X = ratings(p['seed'], p['n_users'], p['n_items'], p['n_ratings'])
    data = observed(X.T.tocsr())                                          # items x users
    stamps = []
    r = fit_factorised(data, p['D'], Prior(w=ARD()), shared=True, max_iter=1 + p['iters'], tol=0, rng=p['seed'],
                       n_jobs=p['n_jobs'], callback=lambda it, q, L: stamps.append((time.process_time(), time.perf_counter())))
    cpu, wall = np.diff([s[0] for s in stamps]), np.diff([s[1] for s in stamps])
    return dict(posterior='factorised', cpu_s=float(np.median(cpu)), wall_s=float(np.median(wall)), nnz=int(X.nnz),
                shape=list(X.shape), D=p['D'], n_jobs=p['n_jobs'],
                bound_never_decreased=bool(np.all(np.diff(r.elbo) >= -1e-9 * abs(r.elbo[-1]))))


def full_sweeps(p):
    "Per-sweep CPU and wall seconds of the estimator's full-posterior fit on the same kind of ratings."
    import warnings
    from vbfa_lit import VBPCA
    X = ratings(p['seed'], p['n_users'], p['n_items'], p['n_ratings'])
    stamps = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                                 # a few sweeps on purpose: not converged
        VBPCA(p['D'], missing_values='unstored', max_iter=1 + p['iters'], tol=0, random_state=p['seed'],
              n_jobs=p['n_jobs'], callback=lambda s, e: stamps.append((time.process_time(), time.perf_counter()))).fit(X)
    cpu, wall = np.diff([s[0] for s in stamps]), np.diff([s[1] for s in stamps])
    return dict(posterior='full', cpu_s=float(np.median(cpu)), wall_s=float(np.median(wall)), nnz=int(X.nnz),
                shape=list(X.shape), D=p['D'], n_jobs=p['n_jobs'])


def netflix_on_workers(p):
    """`fit_factorised_dask` on a LocalCluster of `workers` single-threaded processes; the ratings made on the workers."""
    import distributed
    from bench_cluster import (dask_ratings, local_cluster, per_sweep, worker_peaks, worker_busy, SweepClock,
                               counting_gathers, waits_per_sweep)
    from vbfa_lit.factorised_engine import fit_factorised_dask
    from vbfa_lit.vbpca import Prior
    from vbfa_lit.ard import ARD
    X = dask_ratings(p, p['n_blocks'])
    with local_cluster(p) as cluster, distributed.Client(cluster) as client:
        SweepClock.reset()
        counting_gathers(client)
        t0 = time.perf_counter()
        cpu = []                                   # the workers' CPU seconds after sweep 2 and at the end
        def stamp(it, q, L):
            SweepClock.stamp()
            if it == 1: cpu.append(sum(client.run(time.process_time).values()))
        with distributed.get_task_stream(client) as stream:
            r = fit_factorised_dask(X, p['D'], Prior(w=ARD()), shared=False, max_iter=p['sweeps'], tol=0,
                                    rng=p['seed'], engine=p.get('engine', 'auto'), client=client,
                                    callback=stamp)
        total = time.perf_counter() - t0
        cpu.append(sum(client.run(time.process_time).values()))
        sweep_s, each = per_sweep(SweepClock.stamps)
        compute, transfer, by_task = worker_busy(stream.data, SweepClock.stamps)
        peaks = worker_peaks(client)
    return dict(posterior='factorised', wall_s=sweep_s, sweeps_wall_s=each, fit_wall_s=total,
                load_and_first_sweep_s=SweepClock.stamps[0][0] - t0, waits_per_sweep=waits_per_sweep(SweepClock.stamps),
                worker_compute_s=compute, worker_transfer_s=transfer, worker_compute_by_task_s=by_task,
                worker_cpu_s=(cpu[-1] - cpu[0]) / (len(r.elbo) - 2) if len(cpu) == 2 else None,
                worker_peak_gb=peaks, worker_peak_max_gb=max(peaks), nnz=int(p['n_ratings']),
                shape=[p['n_users'], p['n_items']], D=p['D'], workers=p['workers'], n_blocks=p['n_blocks'],
                bound_never_decreased=bool(np.all(np.diff(r.elbo) >= -1e-9 * abs(r.elbo[-1]))))


def residual_kernel():
    "A numba kernel that only computes each rating's residual y - a_i . b_c (the least work a pass must do), summed."
    import numba

    @numba.njit(fastmath=True, boundscheck=False)
    def residuals(indptr, idx, val, A, B):
        D, total = A.shape[1], 0.0
        for i in range(len(indptr) - 1):
            for j in range(indptr[i], indptr[i + 1]):
                c, acc = idx[j], val[j]
                for d in range(D): acc -= A[i, d] * B[c, d]
                total += acc * acc
        return total
    return residuals


def roofline(p):
    """The least a factorised sweep can cost at a shape, one core (CPU seconds, so that other jobs on the machine
    weigh little): the engine's pass (`_k_pass`) by sample and by feature, and a kernel that only computes each
    rating's residual, both ways (the gathered side is q(W)'s, M x D, by sample and q(X)'s, N x D, by feature); the
    bytes the ratings take held once (CSR, int32 indices and float64 values) and twice (by sample and by feature)."""
    import scipy.sparse as sparse
    from bench_cluster import ratings_block
    from vbfa_lit import factorised_engine as fe
    n_blocks, D, rng = p['n_blocks'], p['D'], np.random.default_rng(p['seed'])
    starts = np.linspace(0, p['n_users'], n_blocks + 1).astype(int)        # the Netflix case's blocks, in one process
    counts = np.diff(np.rint(starts * p['n_ratings'] / p['n_users']).astype(np.int64))
    rows = sparse.vstack([ratings_block(p['seed'], b, int(starts[b]), int(starts[b + 1]), p['n_items'], int(counts[b]))
                          for b in range(n_blocks)]).tocsr()
    cols = rows.T.tocsr()
    (N, M), nnz = rows.shape, rows.nnz
    X, W = rng.standard_normal((N, D)) * 0.3, rng.standard_normal((M, D)) * 0.3
    vX, vW, tau, mu = np.full((N, D), 0.01), np.full((M, D), 0.01), np.ones(M), np.full(M, 3.6)
    fe._compile()
    residuals = residual_kernel()

    def cpu(f):                                   # the second of two runs (the first compiles), CPU seconds
        f()
        t = time.process_time()
        f()
        return time.process_time() - t
    out = dict(nnz=int(nnz), shape=[int(N), int(M)], D=D)
    out['k_pass_by_sample_s'] = cpu(lambda: fe.sample_pass(rows, X.copy(), fe.side_by_side(W, vW), tau, mu, 'numba'))
    out['k_pass_by_feature_s'] = cpu(lambda: fe.feature_pass(cols, W.copy(), fe.side_by_side(X, vX), tau, mu,
                                                             np.ones(D), 'numba'))
    out['residual_by_sample_s'] = cpu(lambda: residuals(rows.indptr, rows.indices, rows.data, X, W))
    out['residual_by_feature_s'] = cpu(lambda: residuals(cols.indptr, cols.indices, cols.data, W, X))
    for k in [k for k in out if k.endswith('_s')]: out[k[:-2] + '_ns_a_rating'] = out[k] / nnz * 1e9
    once = rows.data.nbytes + rows.indices.nbytes + rows.indptr.nbytes
    out.update(gb_once=once / 2 ** 30, gb_twice=(once + cols.data.nbytes + cols.indices.nbytes + cols.indptr.nbytes) / 2 ** 30)
    # the least a sweep can take on `workers` processes: every rating's residual once each way, the work split evenly
    out['least_sweep_s'] = (out['residual_by_sample_s'] + out['residual_by_feature_s']) / p['workers']
    out['passes_sweep_s'] = (out['k_pass_by_sample_s'] + out['k_pass_by_feature_s']) / p['workers']
    return out


QUICK = dict(n_users=1625, n_items=590, n_ratings=25_000, D=5, iters=2)
CASES = [Case('ml25m_factorised_D50_2threads', factorised_sweeps, dict(ML25M, D=50, iters=3, n_jobs=2, seed=0),
              quick=QUICK, needs=('numba',)),
         Case('ml25m_quarter_factorised_D50_2threads', factorised_sweeps, dict(QUARTER, D=50, iters=3, n_jobs=2, seed=0),
              quick=QUICK, needs=('numba',)),
         Case('ml25m_quarter_full_D50_2threads', full_sweeps, dict(QUARTER, D=50, iters=2, n_jobs=2, seed=0),
              quick=QUICK, needs=('numba',)),
         Case('netflix_factorised_D15_2workers', netflix_on_workers,
              dict(NETFLIX, D=15, sweeps=6, workers=2, n_blocks=4, seed=0),
              # quick: the NumPy passes on the workers, as bench_cluster's quick cases (each worker would load the
              # compiled kernels for a few milliseconds of work; the other cases here run them)
              quick=dict(n_users=3_000, n_items=400, n_ratings=60_000, D=4, sweeps=4, n_blocks=4, engine='numpy'),
              threads=1, needs=('distributed', 'numba')),
         Case('netflix_roofline_D15_1core', roofline, dict(NETFLIX, D=15, workers=2, n_blocks=4, seed=0),
              quick=dict(n_users=3_000, n_items=400, n_ratings=60_000, D=4), needs=('numba',))]


def summarise(results):
    rows = []
    for name, r in results.items():
        if 'wall_s' not in r: continue
        gb = r['worker_peak_max_gb'] if 'worker_peak_max_gb' in r else r['child']['max_rss_bytes'] / 2 ** 30
        rows.append(dict(case=name, posterior=r['posterior'], D=r['D'], ratings=r['nnz'], wall_s=r['wall_s'],
                         cpu_s=r.get('cpu_s', r.get('worker_cpu_s')), peak_gb=gb))
    extra = {}
    fq = results.get('ml25m_quarter_factorised_D50_2threads', {})
    fu = results.get('ml25m_quarter_full_D50_2threads', {})
    if 'wall_s' in fq and 'wall_s' in fu:
        extra['full_over_factorised_wall'] = fu['wall_s'] / fq['wall_s']
    big = results.get('ml25m_factorised_D50_2threads', {})
    if 'wall_s' in big:
        extra['met_ml25m'] = big['wall_s'] <= TARGETS['ml25m_seconds']
        extra['met_memory'] = big['child']['max_rss_bytes'] / 2 ** 30 <= TARGETS['worker_gb']
    nf = results.get('netflix_factorised_D15_2workers', {})
    if 'wall_s' in nf:
        extra['met_netflix'] = nf['wall_s'] <= TARGETS['netflix_seconds']
        extra['met_netflix_memory'] = nf['worker_peak_max_gb'] <= TARGETS['worker_gb']
    roof = results.get('netflix_roofline_D15_1core', {})
    if 'least_sweep_s' in roof:                  # the least a sweep can take there, and the engine's two passes
        extra.update(netflix_least_sweep_s=roof['least_sweep_s'], netflix_passes_sweep_s=roof['passes_sweep_s'])
    return dict(rows=rows, **extra)
