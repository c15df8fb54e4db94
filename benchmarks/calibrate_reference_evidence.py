"""Are the reference evidence's standard errors honest? (appendix 36; `vbfa_lit.reference_evidence`)

Each validation problem of the appendix (two pure-noise problems and one component in two dimensions, whose log
evidence is known by quadrature, and two components in six dimensions, whose is not) is estimated `--repeats` times
by each estimator with its defaults and independent seeds. Recorded per problem and estimator: every estimate, its
reported standard error (thermodynamic integration: Monte-Carlo and discretisation combined), ESS and seconds; and
the summary a reader needs: the mean error against the known value (or against the other estimator's mean), the
spread of the estimates over the repeats beside the mean reported error (a ratio near 1 or below: honest errors).

    OPENBLAS_NUM_THREADS=1 python benchmarks/calibrate_reference_evidence.py [--repeats 8] [--out PATH]
"""
import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from vbfa_lit.reference_evidence import _log_evidence_2d, _log_evidence_noise, reference_log_evidence
from vbfa_lit.vbpca import Prior


def problems():
    "The appendix's validation problems, (M, N) papers' orientation, with the known log evidence (NaN if unknown)."
    rng = np.random.default_rng(0)
    Y2 = np.array([[2.0], [1.0]]) @ rng.normal(size=(1, 20)) + 0.5 * rng.normal(size=(2, 20)) + np.array([[1.0], [-2.0]])
    Y0 = rng.normal(size=(5, 30)) * 2 + 3
    rng = np.random.default_rng(1)
    W6 = rng.normal(size=(6, 2)) * 2
    Y10 = rng.normal(size=(10, 200)) + 5
    Y6 = W6 @ rng.normal(size=(2, 50)) + rng.normal(size=(6, 50)) + 5
    return {'k=0 d=5 N=30': (Y0, 0, _log_evidence_noise(Y0, Prior())),
            'k=0 d=10 N=200': (Y10, 0, _log_evidence_noise(Y10, Prior())),
            'k=1 d=2 N=20': (Y2, 1, _log_evidence_2d(Y2, Prior())),
            'k=2 d=6 N=50': (Y6, 2, float('nan'))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeats', type=int, default=8)
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'calibrate_reference_evidence.json'))
    args = ap.parse_args()
    out = dict(repeats=args.repeats, python=platform.python_version(), started=time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
               problems={})
    for name, (Y, k, known) in problems().items():
        res = {}
        for method in ('ti', 'ais'):
            runs = [reference_log_evidence(Y.T, k, method=method, random_state=1000 * (method == 'ais') + s)
                    for s in range(args.repeats)]
            est = np.array([r.log_evidence for r in runs])
            err = np.array([np.hypot(r.se, r.discretisation_error) for r in runs])
            res[method] = dict(estimates=est.tolist(), reported_errors=err.tolist(), ess=[r.ess for r in runs],
                               seconds=[r.seconds for r in runs], mean=float(est.mean()),
                               sd_over_repeats=float(est.std(ddof=1)), mean_reported_error=float(err.mean()),
                               spread_over_reported=float(est.std(ddof=1) / err.mean()))
        ref = known if np.isfinite(known) else None
        for method, other in (('ti', 'ais'), ('ais', 'ti')):
            target = ref if ref is not None else res[other]['mean']
            res[method]['mean_error'] = float(res[method]['mean'] - target)
            res[method]['mean_error_in_se_of_mean'] = float(res[method]['mean_error'] * np.sqrt(args.repeats)
                                                            / res[method]['sd_over_repeats'])
        out['problems'][name] = dict(known=ref, **res)
        print(name, {m: {k_: round(v, 3) for k_, v in res[m].items() if isinstance(v, float)} for m in res}, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print('wrote', args.out)


if __name__ == '__main__':
    main()
