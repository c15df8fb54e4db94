#!/usr/bin/env python
"""Benchmarks of Luttinen & Ilin's transformations (`vbfa_lit.transformations`) against plain VB sweeps and
against the anchors' own rotations (BayesPy's `RotationOptimizer`, vbpca-py's `rotate2pca`).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_transformations.py            # full run (budget: ~30 min of machine time)
    .venv/bin/python benchmarks/bench_transformations.py --quick    # a few minutes, fewer seeds, low caps

Three questions (targets from the issue; reported as ratios, never asserted by a test):

1. Iterations to within 1 nat of the best bound, with and without transformations (dataset 1 of Luttinen &
   Ilin, ARD and broad prior, several seeds; the 200-dimensional case).
2. CPU time of one `transform_posterior(..., 'both')` call as a fraction of one `sweep` at D = 50.
3. Side by side with BayesPy's RotationOptimizer and vbpca-py's rotate2pca on the same data.

Every measurement runs in a fresh child process (``--child``) with the BLAS threads fixed before NumPy is
imported; iteration counts do not depend on the clock, so the convergence children may run two at a time
(``--jobs``), while the timing children (question 2) always run alone. Results: ``results/transformations.json``
and ``RESULTS_transformations.md``.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_vbpca import THREAD_VARS, blas_info, dataset1, machine, oracle_rmse, summary  # noqa: E402

TARGETS = dict(dataset1_ratio=10.0, dim200_ratio=100.0, transform_fraction=0.20)
PAPER = dict(dataset1_ratio='~10x (datasets 1-2, Fig. 2)', dim200_ratio='~1000x (200-dim, Sec. 4.1)')
NAT = 1.0          # "within 1 nat of the best bound"
STOP_REL = 1e-10   # a run is stopped as converged when |L_t - L_{t-1}| < STOP_REL |L_t|
OURS_TOL = 1e-6    # fit_vbfa's default rule: |L_t - L_{t-1}| < tol |L_t|
BAYESPY_TOL = 1e-5  # bayespy VB's default rule: (L_t - L_{t-1}) / mean(|L_t|, |L_{t-1}|) < tol
PAPER_REL = 1e-3   # Luttinen & Ilin's rule: relative difference to the converged bound < 1e-3


# ----------------------------------------------------------------------------------------------------
# Problems
# ----------------------------------------------------------------------------------------------------

def dim200(seed, M=200, N=2000, missing=0.2):
    """Luttinen & Ilin's 200-dimensional case in the papers' orientation: Y (M=200 features, N=2000 samples).

    Covariance Q diag(21^2, 20^2, ..., 2^2, 1 x180) Q^T with Q Haar-orthonormal, means ~ N(0, 1), 20% missing
    at random (the paper does not say how much is missing here; we use dataset 1's 20%).
    Returns (Y_full, Y_with_nan, missing_mask, mean, cov)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    Q, R = np.linalg.qr(rng.standard_normal((M, M)))
    Q = Q * np.sign(np.diag(R))
    ev = np.ones(M)
    ev[:20] = np.arange(21, 1, -1, dtype=float) ** 2
    cov = (Q * ev) @ Q.T
    mean = rng.standard_normal(M)
    Y = mean[:, None] + (Q * np.sqrt(ev)) @ rng.standard_normal((M, N))
    miss = rng.random((M, N)) < missing
    return Y, np.where(miss, np.nan, Y), miss, mean, cov


PROBLEMS = dict(dataset1=dataset1, dim200=dim200)
PROBLEM_TEXT = dict(
    dataset1='dataset 1: N=200 samples, M=50 features, eigenvalues 5^2 x10 and 1 x40 in a Haar-random basis, '
             'means ~ N(0,1), 20% missing',
    dim200='200-dim case: N=2000 samples, M=200 features, eigenvalues 21^2, 20^2, ..., 2^2 then 1 x180 in a '
           'Haar-random basis, means ~ N(0,1), 20% missing')


def make_prior(kind):
    from vbfa_lit.vbpca import Prior, FixedAlpha
    from vbfa_lit.ard import ARD
    return Prior(1e-5, 1e-5, 1e-5, w=ARD(1e-5, 1e-5) if kind == 'ard' else FixedAlpha(1e-3))


def init_seed(data_seed): return 1000 + data_seed


def heldout_rmse(rec, Y, miss):
    import numpy as np
    return float(np.sqrt(np.mean((rec[miss] - Y[miss]) ** 2)))


# ----------------------------------------------------------------------------------------------------
# Child: one of our chains (with or without transformations), to a cap or to convergence
# ----------------------------------------------------------------------------------------------------

def child_ours(p):
    """`sweep` (+ `transform_posterior(..., 'both')` when p['transform']) from `init_posterior` with the seed
    `init_seed(data_seed)`, until |dL| < STOP_REL |L| or p['cap'] iterations. The bound of an iteration is the
    bound after it (terms.total + gain); `fit_vbfa` records the bound after each sweep instead (it transforms
    between sweeps), which differs by one coordinate-ascent sweep and is never lower. CPU time of the
    process (1 BLAS thread) around the sweep and around the transformation separately."""
    import numpy as np
    from vbfa_lit.vbpca import observed, init_posterior, sweep
    from vbfa_lit.ard import effective_components
    from vbfa_lit.transformations import transform_posterior
    Y, Yo, miss, mean, cov = PROBLEMS[p['problem']](p['data_seed'])
    data, prior, shared = observed(Yo), make_prior(p['prior']), p.get('shared', False)
    q = init_posterior(data, p['D'], prior, shared, np.random.default_rng(init_seed(p['data_seed'])))
    L, c_sweep, c_tr, gains = [], [], [], []
    stop = 'cap'
    for it in range(p['cap']):
        c0 = time.process_time()
        q, terms = sweep(data, q, prior, shared)
        c1 = time.process_time()
        b = terms.total
        if p['transform']:
            q, gain = transform_posterior(data, q, prior, 'both')
            b += gain
            gains.append(gain)
        c2 = time.process_time()
        L.append(b); c_sweep.append(c1 - c0); c_tr.append(c2 - c1)
        if it > 0 and abs(L[-1] - L[-2]) < STOP_REL * abs(L[-1]):
            stop = 'converged'
            break
    dL = np.diff(L)
    out = dict(p, trace=L, cpu_sweep=c_sweep, cpu_transform=c_tr, stop=stop, iterations=len(L),
               final=L[-1], best=max(L), last_change=float(dL[-1]) if len(dL) else None,
               max_decrease=float(max(0.0, -dL.min())) if len(dL) else 0.0,
               heldout_rmse=heldout_rmse(q.W @ q.X.T + q.mu[:, None], Y, miss),
               effective_components=int(effective_components(q).sum()) if p['prior'] == 'ard' else None,
               loadavg_1min=os.getloadavg()[0])
    if p['transform']: out['gain_median'] = float(np.median(gains))
    if p.get('oracle'): out['oracle_rmse'] = oracle_rmse(Y, miss, mean, cov)
    return out


# ----------------------------------------------------------------------------------------------------
# Child: BayesPy, the same model started from the identical state, with or without RotationOptimizer
# ----------------------------------------------------------------------------------------------------

def bayespy_model(Yo, D, q):
    """Our VBFA model from BayesPy nodes (as in bench_vbpca.BayesPyFA), every factor initialised from our
    initial posterior q (W ~ N(q.W, I), mu ~ N(q.mu, 1), q(tau) and q(alpha) from q's Gamma parameters, X at
    its prior), so that without rotation its bound trace is ours to rounding (checked in the report)."""
    import numpy as np
    import bayespy.nodes as bn
    from bayespy.inference import VB
    M, N = Yo.shape
    mask = ~np.isnan(Yo)
    alpha = bn.Gamma(1e-5, 1e-5, plates=(D,), name='alpha')
    W = bn.GaussianARD(0, alpha, shape=(D,), plates=(M, 1), name='W')
    X = bn.GaussianARD(0, 1, shape=(D,), plates=(1, N), name='X')
    mu = bn.GaussianARD(0, 1e-5, plates=(M, 1), name='mu')
    tau = bn.Gamma(1e-5, 1e-5, plates=(M, 1), name='tau')
    Y = bn.GaussianARD(bn.Add(bn.Dot(W, X), mu), tau, name='Y')
    Y.observe(np.where(mask, Yo, 0.0), mask=mask)
    W.initialize_from_parameters(q.W[:, None, :], 1.0)
    mu.initialize_from_parameters(q.mu[:, None], 1.0)
    tau.initialize_from_parameters(q.a_tau[:, None], q.b_tau[:, None])
    alpha.initialize_from_parameters(q.a_alpha, q.b_alpha)
    return VB(Y, X, W, mu, tau, alpha), dict(W=W, X=X, mu=mu, tau=tau, alpha=alpha)


def child_bayespy(p):
    """BayesPy `Q.update(repeat=1)` per iteration (X, W, mu, tau, alpha, then, when p['rotate'], the callback
    `RotationOptimizer(RotateGaussianARD(W, alpha), RotateGaussianARD(X), D).rotate()` with its defaults
    (scipy CG, maxiter=10), then its lower bound), until |dL| < STOP_REL |L| or p['cap'] iterations."""
    import warnings
    import numpy as np
    from vbfa_lit.vbpca import observed, init_posterior
    from bayespy.inference.vmp import transformations as T
    Y, Yo, miss, mean, cov = PROBLEMS[p['problem']](p['data_seed'])
    prior = make_prior('ard')
    q0 = init_posterior(observed(Yo), p['D'], prior, False, np.random.default_rng(init_seed(p['data_seed'])))
    Q, n = bayespy_model(Yo, p['D'], q0)
    if p['rotate']:
        R = T.RotationOptimizer(T.RotateGaussianARD(n['W'], n['alpha']), T.RotateGaussianARD(n['X']), p['D'])
        Q.set_callback(R.rotate)
    L, cpu, stop = [], [], 'cap'
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        for it in range(p['cap']):
            c0 = time.process_time()
            Q.update(repeat=1, verbose=False)
            cpu.append(time.process_time() - c0)
            L.append(float(Q.L[Q.iter - 1]))
            if it > 0 and abs(L[-1] - L[-2]) < STOP_REL * abs(L[-1]):
                stop = 'converged'
                break
    Wm, Xm, mum = n['W'].get_moments()[0][:, 0], n['X'].get_moments()[0][0], n['mu'].get_moments()[0]
    dL = np.diff(L)
    return dict(p, trace=L, cpu=cpu, stop=stop, iterations=len(L), final=L[-1], best=max(L),
                max_decrease=float(max(0.0, -dL.min())) if len(dL) else 0.0,
                heldout_rmse=heldout_rmse(Wm @ Xm.T + mum.reshape(-1, 1), Y, miss),
                warnings=sorted({str(x.message)[:100] for x in w}), loadavg_1min=os.getloadavg()[0])


# ----------------------------------------------------------------------------------------------------
# Child: vbpca-py with rotate2pca
# ----------------------------------------------------------------------------------------------------

def child_vbpca(p):
    """vbpca-py `pca_full` with `rotate2pca=True` (its default), `num_cpu=1`, `verbose=0`, random_state =
    init_seed(data_seed), otherwise its defaults. mode 'default': its own stopping rules, record_cost False
    (its default), timed. mode 'long': every stopping rule off, `maxiters=cap`, `record_cost=True`, for its
    cost curve (the same iterates: same seed, and the rules only decide when to stop)."""
    import numpy as np
    from vbpca_py._pca_full import pca_full
    Y, Yo, miss, mean, cov = PROBLEMS[p['problem']](p['data_seed'])
    opts = dict(rotate2pca=True, verbose=0, random_state=init_seed(p['data_seed']), num_cpu=1)
    if p['mode'] == 'long':
        opts.update(maxiters=p['cap'], record_cost=True, rmsstop=None, cfstop=None, minangle=0.0,
                    convergence_criteria={'angle': False})
    c0, t0 = time.process_time(), time.perf_counter()
    res = pca_full(Yo, p['D'], **opts)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    lc = res['lc']
    out = dict(p, cpu_seconds=cpu, wall_seconds=wall, iterations=len(lc['rms']) - 1,
               stop=str(lc.get('convergence_reason')), heldout_rmse=heldout_rmse(np.asarray(res['Xrec']), Y, miss),
               noise_var=float(np.ravel(res['V'])[0]), rms=[float(x) for x in lc['rms']],
               loadavg_1min=os.getloadavg()[0])
    if p['mode'] == 'long': out['cost'] = [float(x) for x in lc['cost']]  # entry 0: before the first iteration
    return out


# ----------------------------------------------------------------------------------------------------
# Child: CPU time of one transformation vs one sweep at D = 50, and where the transformation spends it
# ----------------------------------------------------------------------------------------------------

def staged_transform(data, q, prior):
    """`transform_posterior(data, q, prior, 'both')` line by line with a CPU clock around each line (same calls,
    same order, `rotate` unrolled); the caller checks the result against `transform_posterior`."""
    import numpy as np
    from vbfa_lit.transformations import (translation_statistics, translate, rotation_statistics,
                                          optimal_rotation, rotation_bound)
    T, t = {}, time.process_time()
    def lap(name):
        nonlocal t
        now = time.process_time(); T[name] = T.get(name, 0.0) + now - t; t = now
    (N, D), M = q.X.shape, q.W.shape[0]
    total = 0.0
    H, g = translation_statistics(data, q, prior.beta); lap('translation_statistics: H, g (M DxD Sw, mask @ X)')
    with np.errstate(all='ignore'):
        b = np.linalg.lstsq(H, g, rcond=None)[0]
        gain = g @ b - b @ H @ b / 2
    lap('lstsq for b, gain')
    if np.all(np.isfinite(b)) and gain > 0: q, total = translate(q, b), total + gain
    lap('translate: X - b, mu + W b')
    C, S = rotation_statistics(q); lap('rotation_statistics: C = sum_n <x x^T>, S = sum_m <w w^T>')
    with np.errstate(all='ignore'):
        R = optimal_rotation(C, S, N, M, prior.w)
    lap('optimal_rotation: 2 eigh of DxD')
    ok = np.all(np.isfinite(R)) and np.linalg.cond(R) < 1e12; lap('np.linalg.cond(R) (an SVD of DxD)')
    if ok:
        gain = rotation_bound(R, C, S, N, M, prior.w) - rotation_bound(np.eye(D), C, S, N, M, prior.w)
        lap('rotation_bound x2 (slogdet, inv, DxD products)')
        if gain > 0:
            Ri = np.linalg.inv(R); lap('rotate: inv(R)')
            W, Sw = q.W @ R, R.T @ q.Sw @ R; lap('rotate: W R, R^T Sw_m R for M covariances')
            X = q.X @ Ri.T; lap('rotate: X R^-T')
            Sx = Ri @ q.Sx @ Ri.T; lap('rotate: R^-1 Sx_n R^-T for N covariances')
            q = prior.w.update(q._replace(W=W, Sw=Sw, X=X, Sx=Sx)); lap('rotate: q(alpha) re-update')
            total += gain
    return q, total, T


def child_timing(p):
    """From the same start as the convergence runs, `warmup` sweeps (each followed by a transformation), then
    `n` pairs of (sweep, transformation), each call timed with the process CPU clock; the transformation acts on
    the state the sweep left, as in `fit_vbfa`. Then the staged profile and cProfile of the transformation."""
    import cProfile
    import pstats
    import numpy as np
    from vbfa_lit.vbpca import observed, init_posterior, sweep
    from vbfa_lit.transformations import transform_posterior
    Y, Yo, miss, mean, cov = PROBLEMS[p['problem']](p['data_seed'])
    data, prior = observed(Yo), make_prior(p['prior'])
    q = init_posterior(data, p['D'], prior, False, np.random.default_rng(init_seed(p['data_seed'])))
    for _ in range(p['warmup']):
        q, _ = sweep(data, q, prior, False)
        q, _ = transform_posterior(data, q, prior, 'both')
    cs, ct, ws, wt = [], [], [], []
    for _ in range(p['n']):
        t0, c0 = time.perf_counter(), time.process_time()
        q, _ = sweep(data, q, prior, False)
        t1, c1 = time.perf_counter(), time.process_time()
        # as fit_vbfa applies it between sweeps: the q(x_n) covariances, which the next sweep replaces, stay unrotated
        q, _ = transform_posterior(data, q, prior, 'both', latent_covariances=False)
        t2, c2 = time.perf_counter(), time.process_time()
        cs.append(c1 - c0); ct.append(c2 - c1); ws.append(t1 - t0); wt.append(t2 - t1)
    stages, n_prof = {}, p['n_profile']
    for _ in range(n_prof):
        q, _ = sweep(data, q, prior, False)
        q1, g1, T = staged_transform(data, q, prior)
        ref, g2 = transform_posterior(data, q, prior, 'both')
        assert np.allclose(q1.W, ref.W) and np.allclose(q1.Sx, ref.Sx) and np.isclose(g1, g2), 'staged != transform'
        q = ref
        for k, v in T.items(): stages[k] = stages.get(k, 0.0) + v / n_prof
    pr = cProfile.Profile()
    for _ in range(n_prof):
        q, _ = sweep(data, q, prior, False)
        pr.enable()
        q, _ = transform_posterior(data, q, prior, 'both')
        pr.disable()
    st = pstats.Stats(pr).stats
    rows = sorted(((v[2], v[3], f"{Path(k[0]).name}:{k[1]}({k[2]})") for k, v in st.items()), reverse=True)[:8]
    ratio = np.asarray(ct) / np.asarray(cs)
    return dict(p, M=data.mask.shape[0], N=data.mask.shape[1], cpu_sweep=summary(cs), cpu_transform=summary(ct),
                wall_sweep=summary(ws), wall_transform=summary(wt), ratio_of_medians=float(np.median(ct) / np.median(cs)),
                pair_ratio=summary(ratio), stages=stages,
                cprofile=[dict(function=f, own_ms=1e3 * tt / n_prof, cum_ms=1e3 * cc / n_prof) for tt, cc, f in rows],
                loadavg_1min=os.getloadavg()[0], blas=blas_info())


CHILDREN = dict(ours=child_ours, bayespy=child_bayespy, vbpca=child_vbpca, timing=child_timing)


# ----------------------------------------------------------------------------------------------------
# Parent
# ----------------------------------------------------------------------------------------------------

def run_child(name, params, threads=1):
    env = dict(os.environ, **{v: str(threads) for v in THREAD_VARS})
    cmd = [sys.executable, str(Path(__file__).resolve()), '--child', name, '--params', json.dumps(params)]
    t0, c0 = time.perf_counter(), os.times()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0: raise RuntimeError(f'child {name} {params} failed with {proc.returncode}')
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res['child_wall_seconds'] = time.perf_counter() - t0
    print(f'  [{name} {json.dumps(params)}: {res["child_wall_seconds"]:.1f} s wall]', flush=True)
    return res


def first_reaching(trace, level):
    "1-based index of the first bound >= level, or None."
    for i, v in enumerate(trace):
        if v >= level: return i + 1
    return None


def first_rule(trace, rule):
    "1-based index of the first iteration t >= 2 where rule(L_{t-1}, L_t) holds, or None."
    for i in range(1, len(trace)):
        if rule(trace[i - 1], trace[i]): return i + 1
    return None


def extrapolate(trace, best, frac=0.25):
    """Rough: fit log(best - L_t) linear in t over the last `frac` of a capped trace and solve for a gap of 1 nat.
    Returns None when the gap is not shrinking geometrically there. An estimate, not a measurement."""
    import numpy as np
    L = np.asarray(trace)
    t = np.arange(1, len(L) + 1)
    k = max(int(len(L) * (1 - frac)), 1)
    gap = best - L[k:]
    if len(gap) < 10 or np.any(gap <= 0): return None
    slope, icpt = np.polyfit(t[k:], np.log(gap), 1)
    if slope >= 0: return None
    return float((np.log(NAT) - icpt) / slope)


def cum_cpu(run, k):
    "CPU seconds of the first k iterations of a run."
    if k is None: return None
    if 'cpu' in run: return float(sum(run['cpu'][:k]))
    return float(sum(run['cpu_sweep'][:k]) + sum(run['cpu_transform'][:k]))


def thin(trace, n=60):
    "A log-spaced subsample (1-based iteration, bound) of a trace, for the JSON."
    import numpy as np
    idx = np.unique(np.round(np.geomspace(1, len(trace), n)).astype(int))
    return [[int(i), float(trace[i - 1])] for i in idx]


def analyse_t1(runs):
    """Per (problem, data_seed, prior): the best bound over both methods, iterations and CPU seconds to within
    1 nat, the ratio, and the paper's rule (relative distance to the best bound < 1e-3)."""
    groups = {}
    for r in runs: groups.setdefault((r['problem'], r['data_seed'], r['prior']), {})['tr' if r['transform'] else 'none'] = r
    rows = []
    for (prob, s, prior), g in sorted(groups.items()):
        if 'tr' not in g or 'none' not in g: continue
        best = max(g['tr']['best'], g['none']['best'])
        row = dict(problem=prob, data_seed=s, prior=prior, D=g['tr']['D'], best=best,
                   best_from='transform' if g['tr']['best'] >= g['none']['best'] else 'none')
        for k in ('tr', 'none'):
            r = g[k]
            it1 = first_reaching(r['trace'], best - NAT)
            itp = first_reaching(r['trace'], best - PAPER_REL * abs(best))
            row[k] = dict(iters_1nat=it1, cpu_1nat=cum_cpu(r, it1), iters_paper=itp, iterations=r['iterations'],
                          cap=r['cap'], stop=r['stop'], final=r['final'], gap_at_end=best - r['best'],
                          last_change=r['last_change'], cpu_total=cum_cpu(r, r['iterations']),
                          heldout_rmse=r['heldout_rmse'], effective_components=r['effective_components'],
                          max_decrease=r['max_decrease'])
        a, b = row['none']['iters_1nat'], row['tr']['iters_1nat']
        row['ratio'] = a / b if a and b else None
        row['ratio_lower'] = (row['none']['iterations'] / b) if (a is None and b) else None
        if a is None and b: row['extrapolated_none_iters'] = extrapolate(g['none']['trace'], best)
        ca, cb = row['none']['cpu_1nat'], row['tr']['cpu_1nat']
        row['cpu_ratio'] = ca / cb if ca and cb else None
        pa, pb = row['none']['iters_paper'], row['tr']['iters_paper']
        row['paper_rule_ratio'] = pa / pb if pa and pb else None
        row['traces'] = {k: thin(g[k]['trace']) for k in ('tr', 'none')}
        rows.append(row)
    return rows


def analyse_t3(res):
    "Each tool with its rotation on, on dataset 1 (data seed of the first run), against its own best bound."
    ours = {(r['transform'], r.get('shared', False)): r for r in res['t1_runs']
            if r['problem'] == 'dataset1' and r['prior'] == 'ard' and r['data_seed'] == res['t3_seed']}
    ours.update({(r['transform'], True): r for r in res['t3_runs'] if r['kind'] == 'ours'})
    bp = {r['rotate']: r for r in res['t3_runs'] if r['kind'] == 'bayespy'}
    vb = {r['mode']: r for r in res['t3_runs'] if r['kind'] == 'vbpca'}
    out = dict(seed=res['t3_seed'])
    ours_best = max(ours[(True, False)]['best'], ours[(False, False)]['best'])
    bp_best = max(r['best'] for r in bp.values())
    common = max(ours_best, bp_best)
    rows = []
    def add(name, run, own_best, rule_iter, rule_text, extra=None):
        it_own = first_reaching(run['trace'], own_best - NAT)
        it_common = first_reaching(run['trace'], common - NAT)
        rows.append(dict(tool=name, rule=rule_text, iters_rule=rule_iter, cpu_rule=cum_cpu(run, rule_iter),
                         bound_at_rule=run['trace'][rule_iter - 1] if rule_iter else None,
                         iters_own_1nat=it_own, cpu_own_1nat=cum_cpu(run, it_own), own_best=own_best,
                         iters_common_1nat=it_common, final=run['final'], best=run['best'],
                         iterations=run['iterations'], stop=run['stop'], heldout_rmse=run['heldout_rmse'],
                         cpu_per_iteration=summary(run['cpu'] if 'cpu' in run else
                                                   [a + b for a, b in zip(run['cpu_sweep'], run['cpu_transform'])]),
                         **(extra or {})))
    ours_rule = lambda a, b: abs(b - a) < OURS_TOL * abs(b)
    bp_rule = lambda a, b: (b - a) / (0.5 * (abs(a) + abs(b))) < BAYESPY_TOL
    for tr, name in [(True, 'ours (translate + rotate)'), (False, 'ours, no transformation')]:
        r = ours[(tr, False)]
        add(name, r, ours_best, first_rule(r['trace'], ours_rule), 'fit_vbfa default: abs(dL) < 1e-6 abs(L)')
    for rot, name in [(True, 'BayesPy + RotationOptimizer'), (False, 'BayesPy, no rotation')]:
        if rot in bp:
            r = bp[rot]
            add(name, r, bp_best, first_rule(r['trace'], bp_rule), 'VB default: dL / mean(abs(L)) < 1e-5',
                dict(warnings=r['warnings']))
    if (True, True) in ours:
        r = ours[(True, True)]
        shared_best = max(x['best'] for k, x in ours.items() if k[1])
        add('ours, shared noise (translate + rotate; a different model, for vbpca-py)', r, shared_best,
            first_rule(r['trace'], ours_rule), 'fit_vbfa default: abs(dL) < 1e-6 abs(L)')
        rows[-1]['iters_common_1nat'] = None  # its bound belongs to the shared-noise model: no common best
    out['rows'] = rows
    out['ours_best'], out['bayespy_best'], out['common_best'] = ours_best, bp_best, common
    # Same start, same model: BayesPy without rotation must trace our bound without transformation.
    if False in bp:
        a, b = bp[False]['trace'], ours[(False, False)]['trace']
        k = min(len(a), len(b), 200)
        out['identity_check'] = dict(iterations=k, max_abs_diff=float(max(abs(x - y) for x, y in zip(a[:k], b[:k]))))
    if vb:
        d, lg = vb.get('default'), vb.get('long')
        v = dict(default=d)
        if lg:
            cost = lg['cost']
            best = min(cost[1:])
            it = next((i for i in range(1, len(cost)) if cost[i] <= best + NAT), None)
            v.update(long_iterations=lg['iterations'], long_best_cost=best, long_final_cost=cost[-1],
                     iters_own_1nat=it, long_cpu_seconds=lg['cpu_seconds'], long_heldout_rmse=lg['heldout_rmse'],
                     cpu_own_1nat=lg['cpu_seconds'] * it / lg['iterations'] if it else None,
                     cost_at_default_stop=cost[d['iterations']] if d and d['iterations'] < len(cost) else None,
                     same_iterates=bool(d and all(abs(x - y) <= 1e-9 * max(1, abs(y))
                                                  for x, y in zip(d['rms'], lg['rms']))),
                     cost_trace=thin(cost[1:]))
        out['vbpca'] = v
    out['oracle_rmse'] = res.get('t3_oracle')
    return out


# ----------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------

def fmt_it(x): return '-' if x is None else f'{x}'


def fmt_f(x, d=3): return '-' if x is None else f'{x:.{d}f}'


def fmt_ms(s): return f"{1e3 * s['median']:.2f} ms [IQR {1e3 * s['q25']:.2f}-{1e3 * s['q75']:.2f}, n={s['n']}]"


def verdict(ok): return 'met' if ok else '**missed**'


def ratio_text(row):
    if row['ratio'] is not None: return f"{row['ratio']:.1f}x"
    if row['ratio_lower'] is not None: return f"> {row['ratio_lower']:.1f}x (no-transformation run never got there)"
    return 'n/a'


def t1_verdicts(res):
    out = []
    for prob, key in [('dataset1', 'dataset1_ratio'), ('dim200', 'dim200_ratio')]:
        for prior in ('ard', 'broad'):
            rows = [r for r in res['t1'] if r['problem'] == prob and r['prior'] == prior]
            if not rows: continue
            target = TARGETS[key]
            vals = [r['ratio'] if r['ratio'] is not None else r['ratio_lower'] for r in rows]
            lower = [r['ratio'] is None for r in rows]
            if any(v is None for v in vals): v = 'undetermined'
            elif all(v >= target for v in vals): v = 'met'
            elif any(l and x < target for x, l in zip(vals, lower)) and all(
                    x >= target for x, l in zip(vals, lower) if not l):
                v = '**not established** (cap too low to tell)'
            else: v = '**missed**'
            out.append(dict(problem=prob, prior=prior, target=target, paper=PAPER[key], values=vals, lower=lower,
                            verdict=v, seeds=[r['data_seed'] for r in rows]))
    return out


def report(res):
    import numpy as np
    m = res['machine']
    L = ['# Transformation benchmarks', '',
         f"Generated by `benchmarks/bench_transformations.py{' --quick' if res['quick'] else ''}` on {res['date']} "
         f"(total {res['total_seconds'] / 60:.1f} min wall, {res['children_cpu_seconds'] / 60:.1f} min CPU in the "
         f"children, {res['jobs']} convergence children at a time). Ratios are reported, never asserted by a test. "
         "Part of the benchmarks described in [README.md](README.md); the VB-sweep benchmark is in [RESULTS.md](RESULTS.md).", '',
         '## Machine', '',
         f"- CPU: {m['cpu']}; {m['cpu_count']} logical CPUs, affinity {m['affinity']}; "
         f"memory {m['mem_total_bytes'] / 1e9:.2f} GB" if m.get('mem_total_bytes') else f"- CPU: {m['cpu']}",
         f"- {m['platform']}, Python {m['python']}; NumPy build {m['numpy_build']}",
         '- Versions: ' + ', '.join(f'{k} {v}' for k, v in m['versions'].items()),
         '- One BLAS thread in every child (OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=MKL_NUM_THREADS=BLIS_NUM_THREADS=1 '
         'before NumPy is imported; vbpca-py `num_cpu=1`). Clock: CPU time of the child process '
         '(`time.process_time`), which with one thread is what the work costs on a dedicated core and does not '
         'grow when other jobs share the machine.',
         f"- 1-minute load average seen by the children: {', '.join(f'{x:.1f}' for x in res['loadavgs'])} on "
         f"{m['cpu_count']} CPUs (**shared, loaded machine**: wall-clock is inflated; only CPU time is used for verdicts).",
         '']
    # Targets table
    L += ['## Targets', '', '| target | measured | paper | verdict |', '|---|---|---|---|']
    for v in res['t1_verdicts']:
        vals = ', '.join(('> ' if l else '') + f'{x:.1f}x' for x, l in zip(v['values'], v['lower']))
        L.append(f"| 1. {'dataset 1' if v['problem'] == 'dataset1' else '200-dim'}, {v['prior']} prior: iterations "
                 f"to within 1 nat of the best bound >= {v['target']:.0f}x fewer with transformations | {vals} "
                 f"(seeds {', '.join(map(str, v['seeds']))}) | {v['paper']} | {v['verdict']} |")
    for t in res['t2']:
        L.append(f"| 2. one `transform_posterior(..., 'both')` <= 20% of one `sweep`, {t['problem']} shape, D={t['D']} "
                 f"(CPU, median over {t['n']} calls) | {100 * t['ratio_of_medians']:.1f}% (per-call ratios: median "
                 f"{100 * t['pair_ratio']['median']:.1f}%, IQR {100 * t['pair_ratio']['q25']:.1f}-"
                 f"{100 * t['pair_ratio']['q75']:.1f}%) | O(D^2 N + D^2 M) claimed (Sec. 2.2) | "
                 f"{verdict(t['ratio_of_medians'] <= TARGETS['transform_fraction'])} |")
    L.append('| 3. side by side with BayesPy RotationOptimizer and vbpca-py rotate2pca | see section 3 | - | reported |')
    L.append('')
    # Iteration definitions
    L += ['## What one iteration is', '',
          '| tool | one iteration | bound recorded |', '|---|---|---|',
          '| ours, with transformations | `q, terms = sweep(data, q, prior, shared=False)` (q(X), q(W), q(mu), q(tau_m), '
          'q(alpha)) then `q, gain = transform_posterior(data, q, prior, \'both\')` (exact optimal translation b, '
          'then exact optimal rotation R, each skipped if it would not raise the bound) | `terms.total + gain`, the '
          'bound after the transformation (what `fit_vbfa(..., transform=...)` records) |',
          '| ours, no transformation | the same `sweep` alone | `terms.total` |',
          '| BayesPy + RotationOptimizer | `Q.update(repeat=1)`: node updates X, W, mu, tau, alpha, then the VB '
          'callback `RotationOptimizer(RotateGaussianARD(W, alpha), RotateGaussianARD(X), D).rotate()` (defaults: '
          '`scipy.optimize.minimize(method=\'CG\', maxiter=10)` over the D x D matrix R with its analytic gradient; rotation only, BayesPy has no translation for this model), '
          'then its lower bound | `Q.L[iter]`, after the rotation |',
          '| BayesPy, no rotation | `Q.update(repeat=1)` without the callback | `Q.L[iter]` |',
          '| vbpca-py rotate2pca | one `_iteration_step` of `pca_full`: bias, scores, loadings, rms, shared noise '
          'variance, ARD variances `Va` (after 100 broad-prior iterations), then `rotate2pca`: rotation to the PCA '
          'basis (whitened scores, orthogonal loadings) with the bias moved into mu | its cost (-bound of its own '
          'model), `lc[\'cost\']`, with `record_cost=True` |', '']
    # T1
    L += ['## 1. Iterations to within 1 nat of the best bound', '',
          f"Per data seed: the data are generated with that seed and every chain starts from `init_posterior` with "
          f"seed 1000 + data seed (random W ~ N(0, I), q(X) at its prior, mu at the row means, <tau> = 1e3 / variance "
          f"of the observed values, as the paper recommends). Per-feature noise; prior ARD (a_alpha = b_alpha = 1e-5) or "
          f"broad (`FixedAlpha(1e-3)`); beta = a_tau = b_tau = 1e-5. A chain stops when |L_t - L_(t-1)| < "
          f"{STOP_REL:g} |L_t| or at its cap. **Best bound** = the highest bound reached by either chain on that data "
          f"and prior; a chain's count is the first iteration whose bound is >= best - 1 nat. 'Paper rule' = first "
          f"iteration within a relative {PAPER_REL:g} of the best bound (Luttinen & Ilin's criterion, Sec. 4.1, much "
          f"looser: ~17-24 nats on dataset 1, ~560 nats on the 200-dim case). CPU = process CPU seconds of the chain "
          f"up to that iteration (sweeps + transformations).", '']
    for prob in ('dataset1', 'dim200'):
        rows = [r for r in res['t1'] if r['problem'] == prob]
        if not rows: continue
        caps = res['caps'][prob]
        L += [f"### {PROBLEM_TEXT[prob]}; D = {rows[0]['D']}", '',
              f"Caps: {caps['tr']} iterations with transformations, {caps['none']} without.", '',
              '| prior | seed | best bound | with: iters to 1 nat | without: iters to 1 nat | **ratio** | CPU ratio '
              '| paper rule: with / without (ratio) | with: stop | without: stop, gap to best at the end | held-out '
              'RMSE with / without | ARD keeps (with / without) |',
              '|---|---|---|---|---|---|---|---|---|---|---|---|']
        for r in rows:
            tr, no = r['tr'], r['none']
            none_it = fmt_it(no['iters_1nat']) if no['iters_1nat'] else f"> {no['iterations']}"
            ext = r.get('extrapolated_none_iters')
            if no['iters_1nat'] is None and ext: none_it += f" (extrapolated ~{ext:.0f})"
            pr = f"{fmt_it(tr['iters_paper'])} / {fmt_it(no['iters_paper'])}" + (
                f" ({r['paper_rule_ratio']:.1f}x)" if r['paper_rule_ratio'] else '')
            cpu_r = f"{r['cpu_ratio']:.1f}x" if r['cpu_ratio'] else '-'
            L.append(f"| {r['prior']} | {r['data_seed']} | {r['best']:.3f} ({r['best_from']}) | {fmt_it(tr['iters_1nat'])} "
                     f"| {none_it} | **{ratio_text(r)}** | {cpu_r} | {pr} | {tr['stop']} at {tr['iterations']} | "
                     f"{no['stop']} at {no['iterations']}, {no['gap_at_end']:.3f} nats (last dL {no['last_change']:.2g}) "
                     f"| {tr['heldout_rmse']:.4f} / {no['heldout_rmse']:.4f} | "
                     f"{fmt_it(tr['effective_components'])} / {fmt_it(no['effective_components'])} |")
        L.append('')
        if prob in res.get('oracle', {}):
            L.append(f"Oracle held-out RMSE (true conditional mean under the generating Gaussian), seed "
                     f"{rows[0]['data_seed']}: {res['oracle'][prob]:.4f}.")
            L.append('')
        for prior in ('ard', 'broad'):
            ratios = [r['ratio'] for r in rows if r['ratio'] and r['prior'] == prior]
            if ratios:
                L.append(f"{prior} prior: ratio median {np.median(ratios):.1f}x, range {min(ratios):.1f}-"
                         f"{max(ratios):.1f}x over the {len(ratios)} seed(s) where both chains reached 1 nat.")
                L.append('')
    L += ['Bound monotonicity (the largest decrease of any chain from one iteration to the next): ' +
          f"{max(r['max_decrease'] for r in res['t1_runs']):.2e} nats.", '']
    # T2
    L += ['## 2. Cost of one transformation relative to one sweep (D = 50)', '',
          'Same start as above (ARD, per-feature noise), some warm-up iterations, then pairs of (`sweep`, '
          '`transform_posterior(..., \'both\')`) on the live trajectory, each call timed with the process CPU clock. '
          'Ratio of medians, and the distribution of the per-pair ratios.', '',
          '| shape | sweep CPU | transformation CPU | ratio of medians | per-pair ratio | wall: sweep / transformation |',
          '|---|---|---|---|---|---|']
    for t in res['t2']:
        L.append(f"| {t['problem']} (M={t['M']}, N={t['N']}, D={t['D']}) | {fmt_ms(t['cpu_sweep'])} | "
                 f"{fmt_ms(t['cpu_transform'])} | **{100 * t['ratio_of_medians']:.1f}%** | median "
                 f"{100 * t['pair_ratio']['median']:.1f}% [IQR {100 * t['pair_ratio']['q25']:.1f}-"
                 f"{100 * t['pair_ratio']['q75']:.1f}%] | {1e3 * t['wall_sweep']['median']:.2f} / "
                 f"{1e3 * t['wall_transform']['median']:.2f} ms |")
    L.append('')
    for t in res['t2']:
        tot = sum(t['stages'].values())
        L += [f"### Where the transformation spends its time: {t['problem']}, D={t['D']}", '',
              f"CPU per line of `transform_posterior` (staged copy, checked against it; mean of {t['n_profile']} calls, "
              f"total {1e3 * tot:.2f} ms):", '', '| line | ms | share |', '|---|---|---|']
        for k, v in sorted(t['stages'].items(), key=lambda kv: -kv[1]):
            L.append(f"| {k} | {1e3 * v:.3f} | {100 * v / tot:.0f}% |")
        L += ['', 'cProfile, functions by own time (per call, inflated by the profiler):', '',
              '| function | own ms | cumulative ms |', '|---|---|---|']
        for row in t['cprofile']:
            L.append(f"| `{row['function']}` | {row['own_ms']:.3f} | {row['cum_ms']:.3f} |")
        L.append('')
    # T3
    t3 = res['t3']
    L += ['## 3. Side by side with the anchors\' rotations (dataset 1, D = 30, ARD)', '',
          f"Data seed {t3['seed']} (the same data as section 1). Ours and BayesPy: the same model (per-feature noise, "
          "ARD, hyperparameters 1e-5), and BayesPy is started from **our initial posterior** (W ~ N(q.W, I), mu ~ "
          "N(q.mu, 1), q(tau), q(alpha) from q's Gamma parameters, X at its prior), so their bounds are directly "
          "comparable" + (f" (check: BayesPy without rotation traces our bound without transformation to "
                          f"{t3['identity_check']['max_abs_diff']:.1e} nats over {t3['identity_check']['iterations']} "
                          "iterations)" if 'identity_check' in t3 else '') +
          ". Each tool's own best bound = the best over its runs here; the common best = the best over ours and "
          "BayesPy. 'Rule' = the tool's own default convergence criterion, applied to the trace (the chains ran on "
          f"to |dL| < {STOP_REL:g} |L| or their cap).", '',
          '| tool | rule | iters to rule | CPU s to rule | bound at rule | iters to 1 nat of own best | CPU s to 1 nat | '
          'iters to 1 nat of common best | best bound | CPU per iteration | held-out RMSE |',
          '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in t3['rows']:
        own = fmt_it(r['iters_own_1nat']) if r['iters_own_1nat'] else f"> {r['iterations']}"
        com = (fmt_it(r['iters_common_1nat']) if r['iters_common_1nat'] else f"> {r['iterations']}") \
            if 'shared noise' not in r['tool'] else 'n/a'
        L.append(f"| {r['tool']} | {r['rule']} | {fmt_it(r['iters_rule'])} | {fmt_f(r['cpu_rule'], 2)} | "
                 f"{fmt_f(r['bound_at_rule'])} | {own} | {fmt_f(r['cpu_own_1nat'], 2)} | {com} | {r['best']:.3f} | "
                 f"{fmt_ms(r['cpu_per_iteration'])} | {r['heldout_rmse']:.4f} |")
    L.append('')
    if 'vbpca' in t3:
        v = t3['vbpca']
        d = v['default']
        L += ['vbpca-py (its own model: shared noise, learned bias prior, point-estimated ARD variances under its '
              '1e-3 hyperprior, 100 broad-prior iterations first, so its cost is not comparable to our bound; compare '
              'the held-out RMSE):', '',
              '| run | stop | iterations | CPU s | cost at the stop | iters to 1 nat of its own best cost | held-out RMSE |',
              '|---|---|---|---|---|---|---|',
              f"| vbpca-py `pca_full` defaults (rotate2pca=True, its stopping rules: subspace angle < 1e-8, rmsstop "
              f"[100, 1e-4, 1e-3], none before iteration 101) | {d['stop']} | {d['iterations']} | {d['cpu_seconds']:.2f} | "
              f"{fmt_f(v.get('cost_at_default_stop'))} | - | {d['heldout_rmse']:.4f} |"]
        if 'long_iterations' in v:
            L.append(f"| the same, every stopping rule off, `maxiters={v['long_iterations']}`, `record_cost=True` | "
                     f"maxiters | {v['long_iterations']} | {v['long_cpu_seconds']:.2f} | {v['long_final_cost']:.3f} "
                     f"(best {v['long_best_cost']:.3f}) | {fmt_it(v['iters_own_1nat'])} "
                     f"(~{fmt_f(v['cpu_own_1nat'], 2)} CPU s) | {v['long_heldout_rmse']:.4f} |")
            L.append('')
            L.append(f"Same iterates in both vbpca-py runs (rms curves agree): {v['same_iterates']}.")
        L.append('')
    if t3.get('oracle_rmse'): L += [f"Oracle held-out RMSE: {t3['oracle_rmse']:.4f}.", '']
    warn = [w for r in t3['rows'] for w in r.get('warnings', [])]
    if warn: L += ['BayesPy warnings: ' + '; '.join(sorted(set(warn))), '']
    L += ['## Reading the numbers', ''] + [f'- {x}' for x in res['analysis']]
    return '\n'.join(L)


def analysis(res):
    import numpy as np
    A = []
    for v in res['t1_verdicts']:
        name = 'dataset 1' if v['problem'] == 'dataset1' else 'the 200-dim case'
        vals = ', '.join(('> ' if l else '') + f'{x:.1f}x' for x, l in zip(v['values'], v['lower']))
        A.append(f"Target 1, {name}, {v['prior']} prior: {vals} against >= {v['target']:.0f}x ({v['verdict']}); "
                 f"paper {v['paper']}.")
    for prob in ('dataset1', 'dim200'):
        for prior in ('ard', 'broad'):
            rows = [r for r in res['t1'] if r['problem'] == prob and r['prior'] == prior]
            if not rows: continue
            def rng(key, fmt='{:.0f}'):
                v = [r[key] for r in rows if r.get(key)]
                return '-' if not v else (fmt.format(min(v)) if min(v) == max(v) else
                                          fmt.format(min(v)) + '-' + fmt.format(max(v)))
            tr = [r['tr']['iters_1nat'] for r in rows if r['tr']['iters_1nat']]
            no = [r['none']['iters_1nat'] for r in rows if r['none']['iters_1nat']]
            A.append(f"{PROBLEM_TEXT[prob].split(':')[0]}, {prior} prior: with transformations "
                     f"{'/'.join(map(str, tr))} iterations to 1 nat, without {'/'.join(map(str, no)) or 'never'}"
                     f"{' (of the chains that got there)' if len(no) < len(rows) and no else ''}; ratio of CPU "
                     f"seconds (transformation cost included) {rng('cpu_ratio', '{:.1f}x')}; with the paper's looser "
                     f"rule (relative 1e-3 of the best bound) {rng('paper_rule_ratio', '{:.1f}x')}.")
    broad = [r for r in res['t1'] if r['problem'] == 'dataset1' and r['prior'] == 'broad' and r['ratio']]
    if broad and any(r['ratio'] < TARGETS['dataset1_ratio'] for r in broad):
        ard = [r for r in res['t1'] if r['problem'] == 'dataset1' and r['prior'] == 'ard']
        A.append("Why the broad prior misses (what the numbers show): the plain sweeps are not slow there. With alpha "
                 f"fixed at 1e-3 they reach 1 nat in {'/'.join(str(r['none']['iters_1nat']) for r in broad)} "
                 "iterations; with ARD they take " +
                 '/'.join(str(r['none']['iters_1nat'] or '>' + str(r['none']['iterations'])) for r in ard) +
                 f" (ARD ends with {'/'.join(str(r['tr']['effective_components']) for r in ard)} of "
                 f"{ard[0]['D'] if ard else '?'} columns; the long tail of the plain ARD chain, a few nats below the "
                 "best for thousands of sweeps, is what the transformations remove). The transformed chains need "
                 f"{'/'.join(str(r['tr']['iters_1nat']) for r in broad)} iterations with the broad prior, so the "
                 "ratio is capped by how fast plain VB already is. The paper does not state its fixed alpha, and its "
                 "~10x is for its own rule (relative 1e-3) and running time; on that rule ours is " +
                 '/'.join(f"{r['paper_rule_ratio']:.1f}x" for r in broad if r['paper_rule_ratio']) + '.')
    for r in res['t1']:
        if r['ratio'] is None and r['none']['iters_1nat'] is None:
            ext = r.get('extrapolated_none_iters')
            A.append(f"{r['problem']} {r['prior']} seed {r['data_seed']}: without transformations the chain was "
                     f"{r['none']['gap_at_end']:.2f} nats below the best bound at its cap of {r['none']['iterations']} "
                     f"iterations (last change {r['none']['last_change']:.2g} nats per iteration); with them it was "
                     f"within 1 nat after {r['tr']['iters_1nat']}." +
                     (f" A geometric fit to the last quarter of the capped trace puts 1 nat at ~{ext:.0f} iterations, "
                      f"i.e. ~{ext / r['tr']['iters_1nat']:.0f}x (an extrapolation, not a measurement)." if ext else ''))
    for t in res['t2']:
        tot = sum(t['stages'].values())
        top = sorted(t['stages'].items(), key=lambda kv: -kv[1])[:3]
        A.append(f"Target 2, {t['problem']} (M={t['M']}, N={t['N']}, D={t['D']}): a transformation costs "
                 f"{100 * t['ratio_of_medians']:.1f}% of a sweep ({1e3 * t['cpu_transform']['median']:.2f} vs "
                 f"{1e3 * t['cpu_sweep']['median']:.2f} ms CPU): "
                 f"{verdict(t['ratio_of_medians'] <= TARGETS['transform_fraction'])}. Largest lines: " +
                 '; '.join(f"{k} {1e3 * v:.2f} ms ({100 * v / tot:.0f}%)" for k, v in top) + '.')
        sx = t['stages'].get('rotate: R^-1 Sx_n R^-T for N covariances', 0.0)
        dead = sx + t['stages'].get('rotate: X R^-T', 0.0)
        A.append(f"The N-covariance rotation is O(N D^3) (two D x D products per sample), not the O(D^2 N + D^2 M) "
                 f"of Sec. 2.2, and inside `fit_vbfa` it is dead work: the next `sweep` rebuilds q(X) from q(W), "
                 f"q(mu), q(tau) without reading q.Sx or q.X, and the transformation itself needs only sum_n Sx_n "
                 f"(which rotates as R^-1 C R^-T). Rotating q(X) lazily (only when q is returned, or keeping the "
                 f"pending R^-1) would leave {1e3 * (tot - dead):.2f} ms per call here, i.e. about "
                 f"{100 * t['ratio_of_medians'] * (tot - dead) / tot:.0f}% of a sweep (scaling the measured ratio by "
                 f"the staged shares).")
    for t in res['t2']:
        if t['problem'] == 'dim200' and t['ratio_of_medians'] > TARGETS['transform_fraction']:
            A.append(f"The 200-dim miss is narrow: {100 * t['ratio_of_medians']:.1f}% against 20%, per-pair IQR "
                     f"{100 * t['pair_ratio']['q25']:.1f}-{100 * t['pair_ratio']['q75']:.1f}% over {t['n']} pairs.")
    t3 = res['t3']
    rows = {r['tool']: r for r in t3['rows']}
    o, b = rows.get('ours (translate + rotate)'), rows.get('BayesPy + RotationOptimizer')
    if o and b and o['iters_own_1nat'] and b['iters_own_1nat']:
        A.append(f"Target 3: to within 1 nat of the common best bound, ours (translate + rotate) needs "
                 f"{fmt_it(o['iters_common_1nat'])} iterations and {fmt_f(o['cpu_own_1nat'], 2)} CPU s, BayesPy with "
                 f"RotationOptimizer {fmt_it(b['iters_common_1nat'])} iterations and {fmt_f(b['cpu_own_1nat'], 2)} CPU s "
                 f"({b['cpu_per_iteration']['median'] / o['cpu_per_iteration']['median']:.1f}x our CPU per iteration; "
                 f"its rotation is a conjugate-gradient search of at most 10 steps, each evaluating the bound terms of W, alpha "
                 f"and X, where ours is closed form). Best bounds: ours {o['best']:.3f}, BayesPy {b['best']:.3f}.")
    if 'vbpca' in t3:
        v = t3['vbpca']
        A.append(f"vbpca-py with rotate2pca stops by its own rules after {v['default']['iterations']} iterations "
                 f"({v['default']['cpu_seconds']:.2f} CPU s, held-out RMSE {v['default']['heldout_rmse']:.4f}); "
                 f"its first 100 iterations are its broad-prior phase, during which no stopping rule may fire.")
    return A


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true', help='a few minutes: one seed, low caps, fewer timed calls')
    ap.add_argument('--jobs', type=int, default=2, help='convergence children run at a time (timing runs alone)')
    ap.add_argument('--seed', type=int, default=0, help='first data seed')
    ap.add_argument('--out', default=str(HERE / 'results' / 'transformations.json'))
    ap.add_argument('--markdown', default=str(HERE / 'RESULTS_transformations.md'))
    ap.add_argument('--from-json', help='only re-render the markdown from a results JSON')
    ap.add_argument('--child', choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument('--params', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(CHILDREN[a.child](json.loads(a.params))))
        return
    if a.from_json:
        res = json.loads(Path(a.from_json).read_text())
        res['analysis'] = analysis(res)
        Path(a.markdown).write_text(report(res) + '\n')
        return
    t_start, c_start = time.perf_counter(), os.times()
    q, s0 = a.quick, a.seed
    seeds = [s0] if q else [s0, s0 + 1, s0 + 2]
    caps = dict(dataset1=dict(tr=1000 if q else 3000, none=1500 if q else 10000),
                dim200=dict(tr=60 if q else 400, none=60 if q else 2000))
    res = dict(date=time.strftime('%Y-%m-%d %H:%M:%S %Z'), quick=q, jobs=a.jobs, seed=s0, targets=TARGETS, caps=caps,
               stop_rel=STOP_REL, machine=machine())
    # Convergence children (iteration counts do not depend on the clock): biggest first, `jobs` at a time.
    jobs = []
    jobs.append(('ours', dict(problem='dim200', data_seed=s0, D=50, prior='ard', transform=False,
                              cap=caps['dim200']['none'], oracle=True)))
    jobs.append(('ours', dict(problem='dim200', data_seed=s0, D=50, prior='ard', transform=True,
                              cap=caps['dim200']['tr'])))
    for s in seeds:
        for prior in ('ard', 'broad'):
            for tr in (False, True):
                jobs.append(('ours', dict(problem='dataset1', data_seed=s, D=30, prior=prior, transform=tr,
                                          cap=caps['dataset1']['tr' if tr else 'none'], oracle=(s == s0 and tr))))
    jobs.append(('bayespy', dict(kind='bayespy', problem='dataset1', data_seed=s0, D=30, rotate=True,
                                 cap=400 if q else 600)))
    jobs.append(('bayespy', dict(kind='bayespy', problem='dataset1', data_seed=s0, D=30, rotate=False,
                                 cap=100 if q else 1000)))
    jobs.append(('vbpca', dict(kind='vbpca', problem='dataset1', data_seed=s0, D=30, mode='default')))
    jobs.append(('vbpca', dict(kind='vbpca', problem='dataset1', data_seed=s0, D=30, mode='long',
                               cap=300 if q else 1000)))
    jobs.append(('ours', dict(kind='ours', problem='dataset1', data_seed=s0, D=30, prior='ard', transform=True,
                              shared=True, cap=caps['dataset1']['tr'])))
    print(f'benchmarks: {len(jobs)} convergence children, {a.jobs} at a time', flush=True)
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        outs = list(ex.map(lambda j: run_child(*j), jobs))
    t1_runs = [o for (name, p), o in zip(jobs, outs) if name == 'ours' and 'kind' not in p]
    t3_runs = [o for (name, p), o in zip(jobs, outs) if 'kind' in p]
    print('benchmarks: timing children (one at a time)', flush=True)
    t2 = [run_child('timing', dict(problem='dataset1', data_seed=s0, D=50, prior='ard', warmup=20,
                                   n=40 if q else 300, n_profile=10 if q else 50)),
          run_child('timing', dict(problem='dim200', data_seed=s0, D=50, prior='ard', warmup=5 if q else 10,
                                   n=8 if q else 40, n_profile=3 if q else 8))]
    res['total_seconds'] = time.perf_counter() - t_start
    c_end = os.times()
    res['children_cpu_seconds'] = (c_end.children_user + c_end.children_system
                                   - c_start.children_user - c_start.children_system)
    res['loadavgs'] = [o['loadavg_1min'] for o in outs + t2]
    res['oracle'] = {o['problem']: o['oracle_rmse'] for o in t1_runs if 'oracle_rmse' in o}
    res['t1_runs'], res['t3_runs'], res['t2'], res['t3_seed'] = t1_runs, t3_runs, t2, s0
    res['t3_oracle'] = res['oracle'].get('dataset1')
    res['t1'] = analyse_t1(t1_runs)
    res['t1_verdicts'] = t1_verdicts(res)
    res['t3'] = analyse_t3(res)
    res['analysis'] = analysis(res)
    md = report(res)
    # The JSON keeps every number but thins the long traces (full traces: seconds to regenerate per chain).
    for r in res['t1_runs'] + res['t3_runs']:
        for k in ('trace', 'cost'):
            if k in r: r[k + '_thinned'] = thin(r.pop(k))
        for k in ('cpu', 'cpu_sweep', 'cpu_transform'):
            if k in r: r[k] = summary(r[k]) if r[k] else None
        r.pop('rms', None)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1, default=str))
    Path(a.markdown).write_text(md + '\n')
    print(md)
    print(f'\nwrote {a.out} and {a.markdown} ({res["total_seconds"] / 60:.1f} min)')


if __name__ == '__main__':
    main()
