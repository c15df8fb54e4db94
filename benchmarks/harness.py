#!/usr/bin/env python
"""The benchmark harness: run each declared case in a fresh child process, write the results as JSON.

    .venv/bin/python benchmarks/harness.py                 # every bench_*.py, full size (make bench)
    .venv/bin/python benchmarks/harness.py --quick         # tiny sizes, one round: a smoke test (make bench-quick)
    .venv/bin/python benchmarks/harness.py bench_stiefel   # one comparison
    .venv/bin/python benchmarks/harness.py --set dim200.cap_without=15000   # override a parameter of a case
    .venv/bin/python benchmarks/harness.py --set '*.rounds=2'               # fewer rounds everywhere
    .venv/bin/python benchmarks/harness.py --only 'd1_*_s0_*' bench_transformations   # some cases only
    .venv/bin/python benchmarks/harness.py --quick --first-of-each   # the first case of each measuring function

A comparison is a file ``bench_<name>.py`` that declares ``CASES``, a list of `Case` (a name, the function that
measures it, its parameters and their quick variant, the anchors it needs), and optionally ``summarise(results)``,
which turns the cases' results into the rows the page shows. The harness does the rest, once:

- every case runs in a fresh interpreter with the BLAS threads fixed (environment variables set before NumPy is
  imported; ``Case.threads=None`` removes them all instead: the default environment), so that peak memory (the kernel's ``ru_maxrss`` of that child, from ``os.wait4``) belongs to one case;
  the smoke run (``--quick``) runs a file's cases of one thread setting in one child instead, and forks its one-thread
  children from a process that has imported the packages they share once (`Zygote`: an interpreter start-up and
  about 2 s of imports a file spared; its numbers mean nothing anyway);
- a case with ``rounds > 1`` is run that many times, interleaved with the other such cases of its file in an order
  that rotates every round (inside a child, `interleave` does the same for tools that share one process);
- clocks: CPU time of the process (``time.process_time``: with one BLAS thread, what the work costs on a dedicated
  core, robust to other jobs on the machine) and wall-clock (``time.perf_counter``);
- a case whose anchor is not installed is skipped and recorded as skipped; our own cases always run;
- ``results/<file>.json`` (``results/quick/`` with ``--quick``) holds the date, the machine (CPU model, cores, memory,
  BLAS), the versions of ours and of the anchors, the load average at start and end, every case's result and the
  summary. The course page ``nbs/33_benchmarks.ipynb`` reads these files and never measures.

Benchmarks report numbers and ratios; nothing here asserts a time.
"""
import argparse
import importlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
THREAD_VARS = ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'BLIS_NUM_THREADS',
               'VECLIB_MAXIMUM_THREADS', 'NUMEXPR_NUM_THREADS')
ANCHORS = {'bayespy': 'bayespy', 'vbpca_py': 'vbpca-py', 'numpyro': 'numpyro', 'geomstats': 'geomstats',
           'surprise': 'scikit-surprise'}
VERSIONED = ('vbfa_lit', 'numpy', 'scipy', 'numba', 'bayespy', 'vbpca-py', 'numpyro', 'jax', 'threadpoolctl', 'geomstats',
             'scikit-surprise')


@dataclass
class Case:
    "One measurement: `fn(params)` returns a JSON-able dict. `quick` overrides params in --quick mode."
    name: str
    fn: object
    params: dict = field(default_factory=dict)
    quick: dict = field(default_factory=dict)
    needs: tuple = ()      # anchors (import names) without which the case cannot run at all
    rounds: int = 1        # fresh-child repetitions, interleaved with the file's other multi-round cases
    threads: object = 1    # BLAS threads of the child; None: the default environment (no thread variables)
    parallel: bool = False  # the result does not depend on the clock (iteration counts): may share the CPU

    def overrides(self, overrides):
        "The --set values whose CASE pattern (fnmatch) matches this case."
        from fnmatch import fnmatchcase
        return {k: v for pat, kv in overrides.items() if fnmatchcase(self.name, pat) for k, v in kv.items()}

    def resolved(self, quick, overrides):
        p = dict(self.params, **(self.quick if quick else {}), seed=self.params.get('seed', 0), quick=quick)
        for k, v in self.overrides(overrides).items():
            if k != 'rounds' or 'rounds' in self.params: p[k] = v
        return p


# ----------------------------------------------------------------------------------------------------
# Helpers for the measuring functions (run inside a child)
# ----------------------------------------------------------------------------------------------------

def have(module):
    "Whether an optional package (an anchor) can be imported."
    return importlib.util.find_spec(module) is not None


def summary(xs):
    "Median, quartiles, min, max and n of a list of numbers (seconds)."
    import numpy as np
    xs = np.asarray(xs, dtype=float)
    q25, q50, q75 = np.percentile(xs, [25, 50, 75])
    return dict(median=float(q50), q25=float(q25), q75=float(q75), min=float(xs.min()), max=float(xs.max()),
                n=int(xs.size))


def timed(step, n):
    "CPU and wall seconds of each of n calls of step()."
    cpu, wall = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return cpu, wall


def interleave(tools, rounds):
    """Interleaved rounds inside one process: `tools` maps a name to run(r) -> (cpu list, wall list) for round r;
    the order rotates every round. Returns {name: dict(cpu=summary of the per-round medians, wall=summary of all
    calls, round_cpu=[...], round_wall=[...])} plus '_loadavg' (1-minute load average after each round)."""
    import numpy as np
    names = list(tools)
    per = {t: dict(round_cpu=[], round_wall=[], wall_all=[]) for t in names}
    load = [os.getloadavg()[0]]
    for r in range(rounds):
        for t in names[r % len(names):] + names[:r % len(names)]:
            c, w = tools[t](r)
            per[t]['round_cpu'].append(float(np.median(c)))
            per[t]['round_wall'].append(float(np.median(w)))
            per[t]['wall_all'] += list(w)
        load.append(os.getloadavg()[0])
    out = {t: dict(cpu=summary(v['round_cpu']), wall=summary(v['wall_all']), round_cpu=v['round_cpu'],
                   round_wall=v['round_wall']) for t, v in per.items()}
    out['_loadavg'] = load
    return out


def ratio(res, slow, fast, clock='cpu'):
    "slow / fast from the medians over rounds, with the range of the per-round ratios."
    a, b = res[slow]['round_' + clock], res[fast]['round_' + clock]
    per = [x / y for x, y in zip(a, b)]
    import numpy as np
    return dict(ratio=float(np.median(a) / np.median(b)), round_min=min(per), round_max=max(per))


def proc_status(key):
    "A /proc/self/status entry in bytes (VmRSS, VmHWM), or None off Linux."
    try:
        for line in Path('/proc/self/status').read_text().splitlines():
            if line.startswith(key + ':'): return int(line.split()[1]) * 1024
    except OSError:
        return None


# ----------------------------------------------------------------------------------------------------
# Machine and versions
# ----------------------------------------------------------------------------------------------------

def machine():
    "CPU model, cores, memory, platform, NumPy's BLAS and the versions of ours and of the anchors."
    from importlib.metadata import version
    cpu = platform.processor()
    try:
        cpu = next(l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name'))
    except (OSError, StopIteration):
        pass
    try:
        mem = int(next(l.split()[1] for l in open('/proc/meminfo') if l.startswith('MemTotal'))) * 1024
    except (OSError, StopIteration):
        mem = None
    versions = {}
    for pkg in VERSIONED:
        try: versions[pkg] = version(pkg)
        except Exception: versions[pkg] = None
    try:
        import numpy
        cfg = numpy.show_config(mode='dicts')['Build Dependencies']
        blas = f"{cfg['blas'].get('name')} {cfg['blas'].get('version')}"
    except Exception:
        blas = None
    return dict(cpu=cpu, cpu_count=os.cpu_count(), affinity=len(os.sched_getaffinity(0)), mem_total_bytes=mem,
                last_cache=last_cache(), platform=platform.platform(), python=platform.python_version(),
                numpy_blas=blas, versions=versions)


def last_cache(root='/sys/devices/system/cpu/cpu0/cache'):
    "The largest cache of the first core (Linux's sysfs): its level, bytes and the cores that share it; None elsewhere."
    from pathlib import Path
    units = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    best = None
    for d in sorted(Path(root).glob('index*')):
        try:
            level, size = int((d / 'level').read_text()), (d / 'size').read_text().strip()
            shared = (d / 'shared_cpu_list').read_text().strip()
        except (OSError, ValueError):
            continue
        n = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        if best is None or (level, n) > (best['level'], best['bytes']): best = dict(level=level, bytes=n, shared=shared)
    return best


# ----------------------------------------------------------------------------------------------------
# Parent: run the children
# ----------------------------------------------------------------------------------------------------

def run_child(module, cases, params, threads):
    """Run the cases `cases` (names) of `module` one after the other in one fresh interpreter with `threads` BLAS
    threads (None: every thread variable removed, what a user's shell gives), `params` the parameters of each; a list
    of their results, each with the child's CPU and wall seconds and its peak resident memory (ru_maxrss of this child
    only, from os.wait4). A measurement runs one case a child; the smoke run (--quick) runs a file's cases of one
    thread setting in one child, sparing an interpreter start-up a case (its numbers mean nothing anyway)."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if threads is not None: env.update({v: str(threads) for v in THREAD_VARS})
    env['PYTHONHASHSEED'] = '0'
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f: out = f.name
    spec = f"{module}:{','.join(cases)}"
    t0 = time.perf_counter()
    if _ZYGOTE.get(threads) is not None:                 # the smoke run: a fork of a process that has the imports
        status, usage = _ZYGOTE[threads].run(spec, params, out)
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), '--child', spec, '--params', json.dumps(params),
               '--result', out]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    try:
        done = Path(out).read_text()
        res = json.loads(done) if done else []        # the cases that finished (all of them unless the child failed)
    finally:
        Path(out).unlink(missing_ok=True)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:                                      # the case that was running, and those after it, failed
        err = f'child exited with {code}'
        if len(res) == len(cases): res[-1] = dict(res[-1], error=err)
        res += [dict(error=err, params=p) for p in params[len(res):]]
    child = dict(cpu_seconds=usage.ru_utime + usage.ru_stime, wall_seconds=wall, max_rss_bytes=usage.ru_maxrss * 1024,
                 threads=threads)
    if len(cases) > 1: child['cases'] = len(cases)       # shared by the cases of one smoke-run child
    return [dict(r, child=child) for r in res]


# the packages the bench files' children import (the smoke run's zygote imports those that are installed, once)
SHARED_IMPORTS = ('numpy', 'scipy.linalg', 'scipy.sparse', 'scipy.special', 'scipy.stats', 'scipy.optimize', 'numba',
                  'pandas', 'matplotlib.pyplot', 'sklearn.impute', 'sklearn.linear_model', 'sklearn.preprocessing',
                  'dask.array', 'distributed', 'surprise', 'vbfa_lit', 'vbfa_lit.estimator', 'vbfa_lit.engine',
                  'vbfa_lit.vbpca_fast', 'vbfa_lit.rjmcmc', 'vbfa_lit.rjmcmc_fast', 'vbfa_lit.ratings',
                  'vbfa_lit.recommend', 'vbfa_lit.factorised_engine', 'vbfa_lit.transformations', 'vbfa_lit.convergence',
                  'vbfa_lit.data', 'vbfa_lit.stiefel', 'vbfa_lit.widgets')
_ZYGOTE = {}     # threads -> Zygote, during a smoke run


class Zygote:
    """The smoke run's (--quick) one-thread children: a process started once with the children's environment, which
    imports `SHARED_IMPORTS` and then forks a child for each request (``child_main`` in the fork, which runs the
    interpreter's exit functions and exits when its cases are done); it waits for that child and answers with its exit
    status and its own resource usage (CPU seconds from the fork on, children included; peak memory, which counts the
    pages it shares with the zygote), which `run_child` records as a fresh child's. The zygote's own CPU seconds count
    when the harness waits for it at the end. Nothing runs in it before the fork but imports: no threads, no BLAS
    calls, no compiled kernel."""
    def __init__(self, env):
        import threading
        self.lock = threading.Lock()
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), '--zygote'], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, spec, params, result):
        with self.lock:
            self.proc.stdin.write(json.dumps(dict(spec=spec, params=params, result=result)) + '\n')
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        if not answer: raise RuntimeError(f'the zygote exited with {self.proc.wait()}')
        a = json.loads(answer)
        import resource
        usage = resource.struct_rusage((a['utime'], a['stime'], a['maxrss']) + (0,) * 13)
        return a['status'], usage

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def zygote_main():
    "Inside the zygote: import, then fork a child per request line on stdin, answer a line on stdout when it ends."
    sys.path.insert(0, str(HERE))
    for name in SHARED_IMPORTS:
        try: importlib.import_module(name)
        except ImportError: pass
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        out.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:                                        # the child: stdin and stdout to /dev/null, as run_child's
            code = 1
            try:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0); os.dup2(null, 1)
                sys.stdin = open(os.devnull); sys.stdout = open(os.devnull, 'w')
                child_main(req['spec'], req['params'], req['result'])
                code = 0
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                import atexit
                atexit._run_exitfuncs()                     # what the interpreter's exit runs (waits for helpers)
                sys.stderr.flush()
                os._exit(code)
        _, status, usage = os.wait4(pid, 0)
        out.write(json.dumps(dict(status=status, utime=usage.ru_utime, stime=usage.ru_stime,
                                  maxrss=usage.ru_maxrss)) + '\n')
        out.flush()


def child_main(spec, params, result):
    "Inside the child: run the cases' functions in turn and write their results (stdout is left to the tools' chatter)."
    module, names = spec.split(':')
    sys.path.insert(0, str(HERE))
    mod = importlib.import_module(module)
    import warnings
    warnings.filterwarnings('ignore', message='.*niter_broadprior')  # vbpca-py on its short, fixed-length calls
    out = []
    for name, p in zip(names.split(','), params):
        case = next(c for c in mod.CASES if c.name == name)
        l0, c0, t0 = os.getloadavg()[0], time.process_time(), time.perf_counter()
        res = case.fn(p)
        out.append(dict(res, params=p, loadavg_start=l0, loadavg_end=os.getloadavg()[0],
                        case_cpu_seconds=time.process_time() - c0, case_wall_seconds=time.perf_counter() - t0))
        Path(result).write_text(json.dumps(out, default=float))


def skip_reason(case):
    missing = [ANCHORS.get(m, m) for m in case.needs if not have(m)]
    return f"not installed: {', '.join(missing)}" if missing else None


def first_of_each(cases, also=()):
    """The first case of each measuring function that can run here (else its first case, recorded as skipped), and
    the cases named in `also` (a file's ``SMOKE_ALSO``: those its summary pairs with them), in the file's order: the
    smoke test runs these, every function once."""
    out = {}
    for c in cases:
        if c.fn not in out or (skip_reason(out[c.fn]) and not skip_reason(c)): out[c.fn] = c
    return [c for c in cases if c in out.values() or c.name in also]


def run_module(module, quick, overrides, jobs, out_dir, only=(), first=False):
    "Run every case of one bench file (with `first`, `first_of_each` of them), write results/<module>.json, return it."
    from concurrent.futures import ThreadPoolExecutor
    sys.path.insert(0, str(HERE))
    mod = importlib.import_module(module)
    res = dict(module=module, date=time.strftime('%Y-%m-%d %H:%M:%S %Z'), quick=quick, machine=machine(),
               loadavg_start=os.getloadavg(), command=' '.join([Path(sys.executable).name] + sys.argv), cases={})
    t0 = time.perf_counter()
    todo = []
    from fnmatch import fnmatchcase
    for c in (first_of_each(mod.CASES, getattr(mod, 'SMOKE_ALSO', ())) if first else mod.CASES):
        if only and not any(fnmatchcase(c.name, pat) for pat in only): continue
        o = c.overrides(overrides)
        if 'rounds' in o and 'rounds' not in c.params: c.rounds = int(o['rounds'])  # fresh-child rounds
        why = skip_reason(c)
        if why:
            res['cases'][c.name] = dict(skipped=why)
            print(f'  {module}:{c.name}: skipped ({why})', flush=True)
        else:
            todo.append(c)

    import threading
    lock = threading.Lock()

    def save(final=False):
        "Write what is measured so far (a run stopped early keeps its finished cases); the summary on a copy."
        import copy
        out = dict(res, cases=copy.deepcopy(res['cases']), complete=final, loadavg_end=os.getloadavg(),
                   total_wall_seconds=time.perf_counter() - t0)
        if hasattr(mod, 'summarise'):
            try:
                out['summary'] = mod.summarise(out['cases'])
            except Exception as e:  # a summary must never lose the measurements
                out['summary'] = dict(error=f'{type(e).__name__}: {e}')
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f'{module}.json').write_text(json.dumps(out, indent=1, default=float))
        return out

    def one(c, r=0):
        return group([c], r)[0]

    def group(cs, r=0):
        outs = run_child(module, [c.name for c in cs], [c.resolved(quick, overrides) for c in cs], cs[0].threads)
        for c, out in zip(cs, outs):
            print(f"  {module}:{c.name}{f' round {r + 1}' if c.rounds > 1 else ''}: "
                  f"{out.get('error') or 'ok'} ({out['child']['wall_seconds']:.1f} s wall, "
                  f"{out['child']['cpu_seconds']:.1f} s CPU{' for ' + str(len(cs)) + ' cases' if len(cs) > 1 else ''})"
                  if 'child' in out else f'  {module}:{c.name}: {out}', flush=True)
            if c.rounds == 1 or c in par:
                with lock:
                    res['cases'][c.name] = out
                    save()
        return outs

    par = [c for c in todo if c.parallel or quick]  # quick numbers mean nothing: run everything side by side
    if par:
        # quick: the cases of one thread setting share a child (its numbers mean nothing; it checks that they run)
        groups = [[c for c in par if c.threads == t] for t in dict.fromkeys(c.threads for c in par)] if quick \
            else [[c] for c in par]
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            list(ex.map(group, groups))
    multi = [c for c in todo if c not in par and c.rounds > 1]
    for c in todo:
        if c not in par and c not in multi: one(c)
    if multi:
        runs = {c.name: [] for c in multi}
        for r in range(max(c.rounds for c in multi)):
            order = [c for c in multi if c.rounds > r]
            for c in order[r % len(order):] + order[:r % len(order)]:
                runs[c.name].append(one(c, r))
                res['cases'][c.name] = dict(rounds=runs[c.name], **median_of_rounds(runs[c.name]))
                save()
    return save(final=True)


def median_of_rounds(rs):
    "The median over rounds of every top-level number (and of the child's numbers) of a multi-round case."
    import numpy as np
    ok = [r for r in rs if 'error' not in r]
    if not ok: return dict(error=rs[0].get('error'))
    keys = [k for k, v in ok[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    med = {k: float(np.median([r[k] for r in ok])) for k in keys}
    med['child'] = {k: (float(np.median([r['child'][k] for r in ok])) if v is not None else None)
                    for k, v in ok[0]['child'].items()}  # threads is None in the default environment
    return med


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('modules', nargs='*', help='bench files to run (default: every benchmarks/bench_*.py)')
    ap.add_argument('--quick', action='store_true', help='tiny sizes and one round: checks that every case runs')
    ap.add_argument('--jobs', type=int, default=2, help='clock-free cases (iteration counts) run this many at a time')
    ap.add_argument('--set', action='append', default=[], metavar='CASE.KEY=VALUE',
                    help="override a parameter (CASE may be a pattern: 'd1_*_without.cap=6000'; KEY rounds also sets "
                         "the fresh-child rounds of a case that has no rounds parameter)")
    ap.add_argument('--only', action='append', default=[], metavar='CASE', help='run only these cases (patterns)')
    ap.add_argument('--first-of-each', action='store_true',
                    help='run only the first case of each measuring function (with --quick: every function once)')
    ap.add_argument('--out', help='directory of the JSON files (default results/, or results/quick/ with --quick)')
    ap.add_argument('--child', help=argparse.SUPPRESS)
    ap.add_argument('--params', help=argparse.SUPPRESS)
    ap.add_argument('--result', help=argparse.SUPPRESS)
    ap.add_argument('--zygote', action='store_true', help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child: return child_main(a.child, json.loads(a.params), a.result)
    if a.zygote: return zygote_main()
    overrides = {}
    for s in a.set:
        key, value = s.split('=', 1)
        case, param = key.rsplit('.', 1)
        overrides.setdefault(case, {})[param] = json.loads(value)
    modules = [m.removesuffix('.py') for m in a.modules] or sorted(p.stem for p in HERE.glob('bench_*.py'))
    out_dir = Path(a.out) if a.out else HERE / 'results' / ('quick' if a.quick else '')
    t0 = time.perf_counter()
    failed = []
    if a.quick:                                          # the one-thread children forked from one zygote
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
        _ZYGOTE[1] = Zygote(dict(env, PYTHONHASHSEED='0', **{v: '1' for v in THREAD_VARS}))
    try:
        for m in modules:
            print(f'{m}:', flush=True)
            res = run_module(m, a.quick, overrides, a.jobs, out_dir, a.only, a.first_of_each)
            failed += [f'{m}:{k}' for k, v in res['cases'].items() if 'error' in v]
    finally:
        for z in _ZYGOTE.values(): z.close()
        _ZYGOTE.clear()
    print(f'wrote {len(modules)} file(s) to {out_dir} in {(time.perf_counter() - t0) / 60:.1f} min'
          + (f'; FAILED: {failed}' if failed else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
