"""The four widget panels of appendix 32 (`vbfa_lit.widgets`): how long an update takes at the default settings, the
time a reader waits between letting go of a control and seeing the new figure (compute, draw and PNG rendering, as
`Panel.refresh` runs them). No peer: absolute numbers, and the target of issue 17, an
update in <= 0.5 s at the default settings. Each panel is built once (its first update loads numba's compiled kernels
from their disk cache and warms matplotlib; reported apart as first_s), then updated `updates` times with the same
settings, in both environments (one BLAS thread, and no thread variables as a user's shell gives).
"""
import time

import numpy as np
from harness import Case, summary

TARGET_SECONDS = 0.5
PANELS = ('VBPCAConvergencePanel', 'ARDPruningPanel', 'RJMCMCPanel', 'HouseholderPanel')
ENVS = {'one': 1, 'default': None}
SUFFIX = {'one': '', 'default': '_default'}


def updates(p):
    import vbfa_lit.widgets as w
    rows = []
    for name in PANELS:
        t0, c0 = time.perf_counter(), time.process_time()
        panel = getattr(w, name)()                        # builds the controls and runs the first update
        first_wall, first_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert panel.error is None, f'{name}: {panel.error}'
        cpu = []
        for _ in range(p['updates']):
            c0 = time.process_time()
            panel.refresh()
            cpu.append(time.process_time() - c0)
            assert panel.error is None, f'{name}: {panel.error}'
        wall = panel.timings[1:]                           # the panel's own clock: start of compute to PNG shown
        if not p['updates']:                               # the smoke run: the first update (refresh) only
            wall, cpu = panel.timings, [first_cpu]
        rows.append(dict(panel=name, first_s=first_wall, first_cpu_s=first_cpu, wall=summary(wall), cpu=summary(cpu),
                         wall_all=wall))
    return dict(rows=rows)


# quick: the update the panel's construction runs (the same `refresh`) and no more: the smoke run only checks it runs
CASES = [Case(f'updates{SUFFIX[env]}', updates, dict(updates=9), quick=dict(updates=0), threads=threads)
         for env, threads in ENVS.items()]


def summarise(cases):
    rows, targets = [], []
    for env, suffix in SUFFIX.items():
        for r in cases.get(f'updates{suffix}', {}).get('rows', []):
            rows.append(dict(panel=r['panel'], env=env, median_s=r['wall']['median'], max_s=r['wall']['max'],
                             cpu_median_s=r['cpu']['median'], first_s=r['first_s'], n=r['wall']['n']))
    for r in rows:
        targets.append(dict(issue=17, target=f"widget update, {r['panel']}, default settings, {r['env']} environment: "
                                             f"<= {TARGET_SECONDS:g} s",
                            measured=f"{r['median_s']:.2f} s median (max {r['max_s']:.2f} s of {r['n']}; "
                                     f"first update {r['first_s']:.2f} s)",
                            ratio=TARGET_SECONDS / r['median_s'], met=r['median_s'] <= TARGET_SECONDS))
    return dict(rows=rows, targets=targets)
