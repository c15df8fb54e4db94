"""`sample_stiefel(M, D)` (Mezzadri's Householder construction) for M in {100, 1000, 2000} rows, D in {2, 10} columns,
against `scipy.stats.ortho_group.rvs(M)[:, :D]` (a full M x M Haar matrix, sliced) and a thin QR of an M x D Gaussian
matrix with the sign fix (the fastest correct alternative); geomstats if it is installed. CPU per call, one BLAS
thread, interleaved rounds. Targets (issue 10) at M = 1000, D = 10: >= 300x faster than ortho_group, within 2x of thin
QR. The parameters, result keys and case names keep Nirwan & Bertschinger's names of the saved results
(`results/bench_stiefel.json`): ``D`` is the number of rows (the course's M), ``Q`` the number of columns (its D).
"""
import numpy as np
from harness import Case, have, interleave, ratio, timed

TARGETS = dict(ortho_group=300.0, thin_qr=2.0)


def thin_qr(rng, D, Q):
    q, r = np.linalg.qr(rng.standard_normal((D, Q)))
    return q * np.sign(np.diag(r))


def stiefel(p):
    from scipy import stats
    from vbfa_lit.stiefel import sample_stiefel
    D, Q, n = p['D'], p['Q'], p['number']
    rng = np.random.default_rng(p['seed'])
    tools = dict(ours=lambda r: timed(lambda: sample_stiefel(D, Q, random_state=rng), n),
                 ours_batched_per_draw=lambda r: [[x / 100 for x in l] for l in
                                                  timed(lambda: sample_stiefel(D, Q, size=100, random_state=rng), max(1, n // 100))],
                 thin_qr=lambda r: timed(lambda: thin_qr(rng, D, Q), n),
                 ortho_group=lambda r: timed(lambda: stats.ortho_group.rvs(D, random_state=rng)[:, :Q], p['number_ortho']))
    geomstats = 'not installed'
    if have('geomstats'):
        try:  # geomstats 2.8.0 does not import under NumPy 2.4 (numpy.trapz was removed)
            from geomstats.geometry.stiefel import Stiefel
            S = Stiefel(D, Q)
            tools['geomstats'], geomstats = (lambda r: timed(lambda: S.random_uniform(), n)), 'measured'
        except Exception as e:
            geomstats = f'does not import: {type(e).__name__}: {e}'
    res = interleave(tools, p['rounds'])
    return dict(D=D, Q=Q, geomstats=geomstats,
                cpu_ms={t: 1e3 * v['cpu']['median'] for t, v in res.items() if t != '_loadavg'},
                ortho_group_over_ours=ratio(res, 'ortho_group', 'ours'), ours_over_thin_qr=ratio(res, 'ours', 'thin_qr'),
                loadavg=res['_loadavg'])


CASES = [Case(f'D{D}_Q{Q}', stiefel, dict(D=D, Q=Q, number=200 if D < 2000 else 50, number_ortho=3 if D < 2000 else 1,
                                          rounds=5 if D < 2000 else 3),
              quick=dict(D=min(D, 50), number=2, number_ortho=1, rounds=1))
         for D in (100, 1000, 2000) for Q in (2, 10)]


def summarise(cases):
    rows = [dict(D=c['D'], Q=c['Q'], **c['cpu_ms'], ortho_group_over_ours=c['ortho_group_over_ours']['ratio'],
                 ours_over_thin_qr=c['ours_over_thin_qr']['ratio']) for c in cases.values() if 'cpu_ms' in c]
    t = cases.get('D1000_Q10', {})
    targets = []
    if t.get('D') == 1000:
        a, b = t['ortho_group_over_ours']['ratio'], t['ours_over_thin_qr']['ratio']
        targets = [dict(issue=10, target='sample_stiefel(1000, 10) >= 300x faster than ortho_group.rvs(1000)[:, :10]',
                        measured=f'{a:.0f}x', ratio=a / TARGETS['ortho_group'], met=a >= TARGETS['ortho_group']),
                   dict(issue=10, target='sample_stiefel(1000, 10) within 2x of thin QR with the sign fix',
                        measured=f'{b:.2f}x the time of QR', ratio=TARGETS['thin_qr'] / b, met=b <= TARGETS['thin_qr'])]
    return dict(rows=rows, targets=targets, geomstats=next((c['geomstats'] for c in cases.values() if 'geomstats' in c), None))
