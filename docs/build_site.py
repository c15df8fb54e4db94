"""Build the offline course site `_site/` from the notebooks in `nbs/`.

    .venv/bin/python docs/build_site.py [--no-execute] [--jobs N]

Run from anywhere; paths are relative to the repository root (the parent of `docs/`).

1. copy `nbs/` to `_build/nbs_exec/` and execute the copies (nbclient, python3 kernel, one
   process per notebook, `--jobs` at a time); `nbs/` itself is never written;
2. nbdev's processing of the executed copies -> `_proc/` (`nbdev.serve.proc_nbs`);
3. `_proc/` -> `_build/sphinx_src/` (docs/proc2sphinx.py) plus a generated API reference page;
4. `sphinx-build -W --keep-going` (myst-nb, sphinx-book-theme, local MathJax 3) -> `_site/`;
5. check `_site/`: local MathJax present, no external http(s) script/stylesheet/image, every
   notebook has its page, every link between pages (and its #anchor) resolves.

Needs the package exported first (`nbdev-export`: `<lib_path>/_modidx.py`).
Cells flagged with one of `tst_flags` (pyproject [tool.nbdev]) or `#| slow`, `#| eval: false`
cells and `nbdev_export()` cells are not executed; they keep their saved outputs.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from html.parser import HTMLParser
from multiprocessing import get_context
from pathlib import Path

DOCS = Path(__file__).absolute().parent
sys.path.insert(0, str(DOCS))
import proc2sphinx  # noqa: E402

TIMINGS: list[tuple[str, float]] = []


class BuildError(RuntimeError):
    pass


@contextmanager
def step(name: str):
    print(f'==> {name}', flush=True)
    t0 = time.perf_counter()
    try: yield
    finally: TIMINGS.append((name, time.perf_counter() - t0))


def run(cmd: list[str], what: str, **kw):
    "Run `cmd`; on failure show its captured output and raise BuildError naming `what`."
    r = subprocess.run(cmd, **kw)
    if r.returncode and kw.get('capture_output'): print(r.stdout, r.stderr, sep='\n', file=sys.stderr)
    if r.returncode: raise BuildError(f'{what} failed (exit {r.returncode}): {" ".join(map(str, cmd))}')
    return r


# ---------------------------------------------------------------- 1. copy + execute

# Folders of `nbs/` that are not pages of the site. `experiments/` holds the Voila apps of the widget panels
# (a title and one live widget each): a static page cannot run them, and their static figures and
# precomputed sliders are on the page of the lesson that defines the panels (09_widgets). They are
# executed by the browser tests, which serve each of them with Voila.
NOT_ON_SITE = ('experiments',)


def copy_notebooks(nbs: Path, dest: Path) -> list[Path]:
    "Fresh copy of `nbs` (notebooks, images, Quarto/nbdev config) in `dest`, without `NOT_ON_SITE`; returns the notebooks."
    if dest.exists(): shutil.rmtree(dest)
    shutil.copytree(nbs, dest, ignore=shutil.ignore_patterns('.*', '__pycache__', '_proc', '_docs', *NOT_ON_SITE))
    return sorted(p for p in dest.rglob('*.ipynb') if not any(s.startswith(('.', '_')) for s in p.relative_to(dest).parts))


def skip_reason(cell: dict, skip_flags: set[str]) -> str | None:
    "Why `cell` (a code cell) is not executed for the docs, like `nbdev-test` would skip it."
    src = proc2sphinx._src(cell)
    if 'nbdev_export(' in src: return 'nbdev_export'
    dirs, _ = proc2sphinx.split_directives(src)
    if dirs.get('eval') in ('false', 'False'): return 'eval: false'
    hit = skip_flags & dirs.keys()
    return f'flag {sorted(hit)[0]}' if hit else None


def execute_notebook(path: str, timeout: int, skip_flags: tuple[str, ...], root: str,
                     log: str) -> tuple[str, float, str | None]:
    "Execute the notebook at `path` in place (cwd = its folder). Returns (path, seconds, error or None)."
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    t0 = time.perf_counter()
    os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [root, os.environ.get('PYTHONPATH')]))
    os.environ.setdefault('JUPYTER_PLATFORM_DIRS', '1')
    nb = nbformat.read(path, as_version=4)
    fm = next((proc2sphinx.parse_front_matter(proc2sphinx._src(c)) for c in nb.cells if c.cell_type == 'raw'), None)
    if fm and str(fm.get('skip_exec', '')).lower() == 'true': return path, 0.0, None
    for c in nb.cells:
        if c.cell_type == 'code' and skip_reason(c, set(skip_flags)):
            tags = c.metadata.setdefault('tags', [])
            if 'skip-execution' not in tags: tags.append('skip-execution')
    # No widget state in the pages: myst-nb would load the ipywidgets JavaScript from a CDN to render it, and
    # the site loads nothing from the network (the widget panels have static figures and sliders instead).
    client = NotebookClient(nb, timeout=timeout, kernel_name='python3', allow_errors=False, store_widget_state=False,
                            resources={'metadata': {'path': str(Path(path).parent)}})
    try:
        with open(log, 'w') as stderr:  # the kernel's start-up chatter stays out of the build log
            client.execute(stderr=stderr)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
        idx = next((i for i, c in enumerate(nb.cells) if c.cell_type == 'code'
                    and any(o.get('output_type') == 'error' for o in c.get('outputs', []))), None)
        where = f'cell {idx + 1} of {len(nb.cells)}' if idx is not None else 'a cell'
        if idx is not None:
            where += ': ' + (proc2sphinx.split_directives(nb.cells[idx].source)[1].strip().splitlines() or [''])[0][:80]
        msg = re.sub(r'\x1b\[[0-9;]*m', '', str(e))  # IPython's coloured traceback, uncoloured
        return path, time.perf_counter() - t0, f'{where}\n{msg}\n(kernel log: {log})'
    for c in nb.cells:  # the copy is read again by nbdev: leave no nbclient-only tags behind
        tags = c.get('metadata', {}).get('tags')
        if tags and 'skip-execution' in tags:
            tags.remove('skip-execution')
            if not tags: del c.metadata['tags']
    nbformat.write(nb, path)
    return path, time.perf_counter() - t0, None


def execute_all(notebooks: list[Path], jobs: int, timeout: int, skip_flags: set[str], root: Path,
                exec_dir: Path, nbs: Path):
    if not notebooks: raise BuildError('no notebooks to execute')
    workers = max(1, min(jobs, len(notebooks)))
    failures = []
    logs = root / '_build' / 'kernel_logs'
    logs.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context('spawn')) as ex:
        futs = [ex.submit(execute_notebook, str(p), timeout, tuple(sorted(skip_flags)), str(root),
                          str(logs / (p.relative_to(exec_dir).as_posix().replace('/', '__') + '.log')))
                for p in notebooks]
        for f in futs:
            path, secs, err = f.result()
            src = nbs / Path(path).relative_to(exec_dir)
            shown = src.relative_to(root) if src.is_relative_to(root) else src
            print(f'    {shown}: {secs:.1f} s' + ('  FAILED' if err else ''), flush=True)
            if err: failures.append(f'{shown} {err}')
    if failures:
        raise BuildError('notebook execution failed:\n\n' + '\n\n'.join(failures))


# ---------------------------------------------------------------- 2. nbdev processing

def nbdev_process(root: Path, exec_dir: Path, jobs: int) -> Path:
    "nbdev's doc processing of the executed copies; returns the `_proc` folder it wrote."
    proc = root / '_proc'
    code = ('from nbdev.serve import proc_nbs; '
            f'print(proc_nbs(path={str(exec_dir)!r}, n_workers={jobs}, force=True))')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(root), os.environ.get('PYTHONPATH')]))}
    r = run([sys.executable, '-c', code], 'nbdev processing', cwd=root, env=env,
            capture_output=True, text=True)
    out = r.stdout.strip().splitlines()  # proc_nbs returns (we print) the folder it wrote
    if not out or Path(out[-1]).resolve() != proc.resolve():
        raise BuildError(f'nbdev wrote {out[-1:]}, expected {proc}')
    missing = [p.name for p in exec_dir.glob('*.ipynb') if not p.name.startswith('_') and not (proc / p.name).exists()]
    if missing: raise BuildError(f'nbdev processing produced no output for {missing}')
    return proc


# ---------------------------------------------------------------- 3. conversion + API reference page

def api_targets(root: Path, lib_path: str) -> dict[str, str | None]:
    """nbdev's symbol anchors (`notation.html#gamma_kl`, from `_modidx.py`) -> the id autodoc gives the name's entry on
    `api.html` (`vbfa_lit.notation.gamma_kl`), or None where the API page documents no such entry: a private name, a
    name outside its module's `__all__`, a method without a docstring."""
    import importlib
    if str(root) not in sys.path: sys.path.insert(0, str(root))
    ns = {}
    exec((root / lib_path / '_modidx.py').read_text(encoding='utf-8'), ns)
    out = {}
    for mod, syms in ns['d']['syms'].items():
        try: m = importlib.import_module(mod)
        except ImportError: m = None
        for full, (url, _) in syms.items():
            parts = full[len(mod) + 1:].split('.')
            obj = m if m is not None and parts[0] in getattr(m, '__all__', ()) else None
            for part in parts:
                obj = None if obj is None or part.startswith('_') else getattr(obj, part, None)
            out[url] = full if obj is not None and inspect.getdoc(obj) else None
    return out


def lib_modules(root: Path, lib_path: str) -> list[str]:
    "Dotted names of the package's public modules (`vbfa_lit/*.py`, no `_`-prefixed files)."
    lib = root / lib_path
    pkg = lib.name
    mods = []
    for f in sorted(lib.rglob('*.py')):
        rel = f.relative_to(lib).with_suffix('')
        if any(s.startswith(('_', '.')) for s in rel.parts): continue
        mods.append('.'.join((pkg, *rel.parts)))
    return mods


def module_lessons(nbs: Path) -> dict[str, str]:
    "Map `default_exp` module names (`notation`) to the notebook stem that writes them."
    res = {}
    for p in sorted(nbs.glob('*.ipynb')):
        for c in json.loads(p.read_text(encoding='utf-8')).get('cells', []):
            if c.get('cell_type') != 'code': continue
            d = proc2sphinx.split_directives(proc2sphinx._src(c))[0].get('default_exp')
            if d: res[d.split()[0]] = p.stem; break
    return res


def api_markdown(pkg: str, modules: list[str], lessons: dict[str, str], pages: list[dict]) -> str:
    "The API reference page: one autodoc section per module, linked to its lesson."
    by_nb = {p['notebook']: p for p in pages}
    out = ['# API reference', '',
           f'Every public module of `{pkg}`, one section each, from the numpydoc docstrings that `help()` shows. '
           'The lessons link here where they first use a name; the page that writes each module shows the '
           'derivation and the checks.']
    for m in modules:
        out += ['', f'## `{m}`', '']
        lesson = by_nb.get(lessons.get(m.split('.', 1)[-1], ''))
        if lesson:
            where = 'appendix page' if lesson.get('appendix') else 'lesson'
            out += [f"Written in the {where} [{lesson['title']}]({lesson['page']}.html).", '']
        out += ['```{eval-rst}', f'.. automodule:: {m}', '   :members:', '```']
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------- 4./5. Sphinx + checks

_LOADING = {'script': ('src',), 'img': ('src',), 'iframe': ('src',), 'source': ('src',), 'audio': ('src',), 'video': ('src',)}
_LINK_RELS = {'stylesheet', 'preload', 'modulepreload', 'prefetch', 'icon', 'shortcut', 'manifest', 'import'}


class _ExternalRefs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        urls = [a.get(k) for k in _LOADING.get(tag, ())]
        if tag == 'link' and _LINK_RELS & set((a.get('rel') or '').lower().split()): urls.append(a.get('href'))
        self.found += [f'<{tag} {u}>' for u in urls if u and re.match(r'^\s*(https?:)?//', u, re.I)]


def external_references(site: Path) -> list[str]:
    "Every script, stylesheet, image or frame in `site` loaded from another host (must be none)."
    bad = []
    for f in sorted(site.rglob('*.html')):
        p = _ExternalRefs()
        p.feed(f.read_text(encoding='utf-8', errors='replace'))
        bad += [f'{f.relative_to(site)}: {x}' for x in p.found]
    for f in sorted(site.rglob('*.css')):
        for m in re.finditer(r'(?:@import\s+|url\()\s*["\']?((?:https?:)?//[^"\')\s]+)', f.read_text(errors='replace')):
            bad.append(f'{f.relative_to(site)}: {m.group(1)}')
    return bad


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'): self.ids.add(a['id'])
        if tag == 'a' and a.get('name'): self.ids.add(a['name'])
        if tag == 'a' and a.get('href'): self.hrefs.append(a['href'])


def broken_local_links(site: Path) -> list[str]:
    "Links between the site's pages whose file or `#anchor` does not exist."
    parsed = {}
    def parse(f):
        if f not in parsed:
            parsed[f] = p = _Links()
            p.feed(f.read_text(encoding='utf-8', errors='replace'))
        return parsed[f]
    bad = []
    for f in sorted(site.rglob('*.html')):
        for href in parse(f).hrefs:
            if re.match(r'^([a-z][a-z0-9+.-]*:|//)', href, re.I): continue
            path, _, frag = href.partition('#')
            path = path.split('?')[0]
            target = (f.parent / path).resolve() if path else f
            if target.is_dir(): target = target / 'index.html'
            if not target.exists(): bad.append(f'{f.relative_to(site)}: {href} (no such file)')
            elif frag and target.suffix == '.html' and frag not in parse(target).ids:
                bad.append(f'{f.relative_to(site)}: {href} (no id {frag!r})')
    return bad


def check_site(site: Path, pages: list[dict]) -> None:
    problems = []
    mathjax = site / '_static' / 'mathjax' / 'tex-chtml.js'
    if not mathjax.is_file(): problems.append(f'MathJax missing: {mathjax}')
    for p in pages + [{'page': 'api'}]:
        html = site / f"{p['page']}.html"
        if not html.is_file(): problems.append(f'page missing: {html}')
    for f in sorted(site.rglob('*.html')):
        t = f.read_text(encoding='utf-8', errors='replace')
        if ('class="math' in t) and '_static/mathjax/tex-chtml.js' not in t:
            problems.append(f'{f.relative_to(site)} has math but does not load the local MathJax')
    problems += [f'external reference {x}' for x in external_references(site)]
    problems += [f'broken link {x}' for x in broken_local_links(site)]
    if problems: raise BuildError('site check failed:\n  ' + '\n  '.join(problems))


def sphinx_build(root: Path, src: Path, site: Path, build: Path, jobs: int):
    """`sphinx-build -W --keep-going` of `src` into `site`.

    Sphinx writes into `_build/html` first: myst-nb puts its image files in
    `<outdir>/../jupyter_execute`, which must not land at the repository root.
    """
    out, doctrees = build / 'html', build / 'doctrees'
    for d in (out, doctrees, build / 'jupyter_execute'):
        if d.exists(): shutil.rmtree(d)
    env = {**os.environ, 'SITE_ROOT': str(root)}
    run([sys.executable, '-m', 'sphinx', '-b', 'html', '-W', '--keep-going', '-q', '-j', str(jobs),
         '-c', str(DOCS), '-d', str(doctrees), str(src), str(out)], 'sphinx-build', cwd=root, env=env)
    if site.exists(): shutil.rmtree(site)
    shutil.move(out, site)


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--no-execute', action='store_true', help="use the notebooks' saved outputs")
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1), help='parallel notebooks / Sphinx workers')
    ap.add_argument('--timeout', type=int, default=600, help='seconds per cell')
    ap.add_argument('--flags', default='', help='space-separated flags whose cells run anyway (e.g. "slow")')
    ap.add_argument('--root', type=Path, default=DOCS.parent, help='repository root (default: parent of docs/)')
    a = ap.parse_args(argv)
    root = a.root.absolute()
    cfg = tomllib.loads((root / 'pyproject.toml').read_text(encoding='utf-8')).get('tool', {}).get('nbdev', {})
    nbs, lib_path = root / cfg.get('nbs_path', 'nbs'), cfg.get('lib_path', root.name)
    build, site = root / '_build', root / '_site'
    exec_dir, src = build / 'nbs_exec', build / 'sphinx_src'
    skip_flags = (set(str(cfg.get('tst_flags', '')).split()) | {'slow'}) - set(a.flags.split())
    jobs = max(1, a.jobs)
    t_all = time.perf_counter()
    try:
        if not (root / lib_path / '_modidx.py').is_file():
            raise BuildError(f'{lib_path}/_modidx.py not found: run nbdev-export first')
        with step('copy nbs/ -> _build/nbs_exec/'):
            notebooks = copy_notebooks(nbs, exec_dir)
        if a.no_execute:
            print('==> execute notebooks: skipped (--no-execute, saved outputs)')
        else:
            with step(f'execute {len(notebooks)} notebooks ({min(jobs, len(notebooks))} at a time)'):
                execute_all(notebooks, jobs, a.timeout, skip_flags, root, exec_dir, nbs)
        with step('nbdev processing -> _proc/'):
            proc = nbdev_process(root, exec_dir, jobs)
        with step('convert _proc/ -> _build/sphinx_src/'):
            pages = proc2sphinx.convert_tree(proc, src, extra_docs=['api'], api=api_targets(root, lib_path))
            pkg = Path(lib_path).name
            api = api_markdown(pkg, lib_modules(root, lib_path), module_lessons(nbs), pages)
            (src / 'api.md').write_text(api, encoding='utf-8')
        with step('sphinx-build -W -> _site/'):
            sphinx_build(root, src, site, build, jobs)
        with step('check _site/'):
            check_site(site, pages)
    except BuildError as e:
        sys.stdout.flush()
        print(f'\nbuild_site: {e}', file=sys.stderr, flush=True)
        return 1
    finally:
        if TIMINGS:
            print('\ntiming:')
            for name, secs in TIMINGS: print(f'  {secs:7.1f} s  {name}')
            print(f'  {time.perf_counter() - t_all:7.1f} s  total')
    print(f'\nsite: {site}/index.html ({len(pages)} notebook pages + API reference)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
