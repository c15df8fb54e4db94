"""Reading the course's notebooks as text, for the course tests (the one reader every test file imports): their cells
and prose, whitespace folded, which cells the page hides or folds, the code a reader sees unfolded, sections, captions
and solutions, what each cell printed when the site built the page (or a cell's code run again, where a test changes
it), and the smallest font of a figure as the page column shows it."""
import contextlib
import functools
import io
import json
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
sys.path.insert(0, str(ROOT / 'docs'))
# the site's reading order (which pages are lessons) and its conversion of a notebook for myst-nb
from proc2sphinx import APPENDIX, LESSONS, LIB_KEY, convert_notebook  # noqa: E402

CACHE = ROOT / '_build' / '.jupyter_cache'   # where the site build (myst-nb's 'cache' mode) keeps what it ran


def page_order(stems) -> tuple[list[str], list[str]]:
    "Split notebook `stems` into (lessons, appendix) in reading order; unlisted ones close the appendix."
    return ([s for s in LESSONS if s in stems],
            [s for s in APPENDIX if s in stems] + [s for s in sorted(stems) if s not in LESSONS + APPENDIX])


COLUMN_IN = 956 / 100      # the page column (956 px) in inches of a 100-dpi inline figure
MIN_PT = 9 * 96 / 100      # 9 pt on a 96-dpi screen, in points of a 100-dpi figure shown at full size
CAPTION = re.compile(r'^\*Figure (\d+[a-z]?)\.(\d+):', re.M)


def _stem(name):
    return name[:-len('.ipynb')] if name.endswith('.ipynb') else name


def notebook_cells(stem):
    "The cells of nbs/<stem>.ipynb as stored (dicts, with their ids)."
    return json.loads((NBS / f'{_stem(stem)}.ipynb').read_text())['cells']


def cells(stem):
    "The cells of nbs/<stem>.ipynb as (cell_type, source) pairs."
    return [(c['cell_type'], ''.join(c['source'])) for c in notebook_cells(stem)]


def cell_by_id(stem, cid):
    "The source of the cell of nbs/<stem>.ipynb whose id is `cid`."
    return next(''.join(c['source']) for c in notebook_cells(stem) if c.get('id') == cid)


def prose(stem):
    "The markdown cells of nbs/<stem>.ipynb, joined."
    return '\n'.join(s for k, s in cells(stem) if k == 'markdown')


def code(stem):
    "The code cells of nbs/<stem>.ipynb, joined."
    return '\n'.join(s for k, s in cells(stem) if k == 'code')


def flat(text):
    "Whitespace runs folded to one space (sentences that wrap across lines compare as one line)."
    return ' '.join(text.split())


def section(text, start, end):
    "The part of `text` from `start` up to the next `end` after it."
    i = text.index(start)
    return text[i:text.index(end, i + len(start))]


def is_hidden(src):
    "Whether a code cell's source hides it from the page (`#| hide` or `#| echo: false`)."
    return bool(re.search(r'^#\|\s*(hide|echo:\s*false)\s*$', src, re.M))


def is_folded(src):
    "Whether a code cell's source folds it on the page (`#| code-fold: true`)."
    return bool(re.search(r'^#\|\s*code-fold:\s*true\s*$', src, re.M))


def is_exported(src):
    "Whether a code cell is `#| export` (the site shows its API entry instead of its code) or an `#| exporti` not shown."
    return bool(re.search(r'^#\|\s*export\s*$', src, re.M)) or bool(
        re.search(r'^#\|\s*exporti\b', src, re.M) and not re.search(r'^#\|\s*echo:\s*true\s*$', src, re.M))


def on_page(stem):
    "The cells a reader of the built page can see: markdown, and code not hidden nor exported (folded code counts)."
    return [(k, s) for k, s in cells(stem) if k == 'markdown' or not (is_hidden(s) or is_exported(s))]


def shown_code(src):
    "What the page shows unfolded of a code cell's source: nothing when hidden, folded or exported as an API entry."
    d = ' '.join(l for l in src.splitlines() if l.startswith('#|'))
    if any(k in d for k in ('hide', 'echo: false', 'code-fold: true', 'include: false', 'default_exp')): return ''
    if re.search(r'#\|\s*export(?!s|i)', d) or ('exporti' in d and 'echo: true' not in d): return ''
    body = '\n'.join(l for l in src.splitlines() if not l.startswith('#|'))
    return re.sub(r'"""[\s\S]*?"""', '', body) if 'exports' in d or 'exporti' in d else body


def shown_cells(stem):
    "The unfolded code of each code cell of a page (empty for the cells a reader does not see)."
    return [shown_code(s) for k, s in cells(stem) if k == 'code']


def shown_lines(stem):
    "The number of non-blank code lines a reader sees unfolded on a page (the course's code budget)."
    return sum(1 for body in shown_cells(stem) for l in body.splitlines() if l.strip())


def listing(stem, function):
    "The shown lines of the `#| exports` cell that defines `function`."
    src = next(s for k, s in cells(stem) if k == 'code' and f'def {function}(' in s)
    shown = shown_code(src)
    start = shown.index(f'def {function}(')
    nxt = re.search(r'\n(def |class )', shown[start + 1:])
    return shown[start:start + 1 + nxt.start()] if nxt else shown[start:]


def cell_with(stem, text):
    "The one code cell of nbs/<stem>.ipynb that contains `text` (fails if none or several do)."
    hits = [s for k, s in cells(stem) if k == 'code' and text in s]
    assert len(hits) == 1, (stem, text, len(hits))
    return hits[0]


def cell_id(stem, text):
    "The id of the one code cell of nbs/<stem>.ipynb that contains `text` (fails if none or several do)."
    hits = [c['id'] for c in notebook_cells(stem) if c['cell_type'] == 'code' and text in ''.join(c['source'])]
    assert len(hits) == 1, (stem, text, len(hits))
    return hits[0]


def caption(stem, number):
    "The markdown cell that opens with the caption '*Figure <number>:'."
    return next(s for k, s in cells(stem) if k == 'markdown' and s.startswith(f'*Figure {number}:'))


def captions(stem):
    "Every caption of a page as (chapter, number, text of its cell)."
    return [(m.group(1), int(m.group(2)), s) for k, s in cells(stem) if k == 'markdown' for m in CAPTION.finditer(s)]


def solutions(stem):
    "The folded worked solutions of a page, in order."
    return re.findall(r'<details><summary>Solution</summary>(.*?)</details>', prose(stem), re.S)


def solution_blocks(stem, number):
    "The prose (whitespace folded) and the python code blocks of exercise `number`'s folded solution."
    ex = prose(stem)[prose(stem).index('## Exercises'):]
    start = ex.index(f'\n{number}. ')
    sol = ex[ex.index('<summary>Solution', start):]
    sol = sol[:sol.index('</details>')]
    return flat(re.sub(r'```python\n.*?```', '', sol, flags=re.S)), re.findall(r'```python\n(.*?)```', sol, re.S)


def run(code, env):
    "Execute `code` in the namespace `env` (warnings silenced) and return what it printed."
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter('ignore')
        exec(code, env)
    return out.getvalue()


def smallest_shown_pt(fig):
    "The smallest font of `fig` in points as shown in the page column (figures wider than it are scaled down)."
    import matplotlib
    fig.canvas.draw()
    scale = min(1.0, COLUMN_IN / fig.get_size_inches()[0])
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) * scale


def site_notebook(stem):
    "nbs/<stem>.ipynb converted exactly as the site converts it before myst-nb executes it (cell ids kept)."
    import nbformat
    nb = convert_notebook(json.loads((NBS / f'{_stem(stem)}.ipynb').read_text(encoding='utf-8')), _stem(stem), LIB_KEY)
    return nbformat.reads(json.dumps(nb, ensure_ascii=False), as_version=4)


def cached_run(nb, cache=CACHE):
    """The notebook `nb` with the outputs the site build cached for it, or None when the cache holds no run of this
    code: jupyter-cache matches on every code cell's source and metadata (the library's hash is in the first one).
    Read only: the database is opened read-only and no record is touched (jupyter-cache's `get_cache_bundle` would
    write the access time)."""
    if not (Path(cache) / 'global.db').exists(): return None
    import nbformat
    from sqlalchemy import create_engine
    from jupyter_cache import get_cache
    jc = get_cache(str(cache))
    jc._db = create_engine(f"sqlite:///file:{Path(cache).resolve() / 'global.db'}?mode=ro&uri=true")
    try: record = jc.match_cache_notebook(nb)
    except KeyError: return None
    ran = nbformat.read(str(jc._get_notebook_path_cache(record.hashkey)), as_version=4)
    outputs = iter([c.outputs for c in ran.cells if c.cell_type == 'code'])
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs = next(outputs)
    assert next(outputs, None) is None, 'the cached run has more code cells than the notebook'
    return nb


def kernel_run(nb):
    "The notebook `nb` executed in a fresh kernel in nbs/, as myst-nb runs it (errors raise)."
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=600, kernel_name='python3', resources={'metadata': {'path': str(NBS)}}).execute()
    return nb


@functools.lru_cache(maxsize=None)
def executed(stem, cache=CACHE):
    """{cell id: outputs} of the CURRENT nbs/<stem>.ipynb: the site build's run of it when its code and the library are
    unchanged since (a stale run never matches), else a run in a kernel now (slower; one notebook at a time)."""
    nb = site_notebook(stem)
    nb = cached_run(nb, cache) or kernel_run(nb)
    return {c['id']: c.get('outputs', []) for c in nb.cells if c['cell_type'] == 'code'}


def output_of(stem, cid):
    "What cell `cid` of nbs/<stem>.ipynb printed (its stdout) when the page's notebook ran."
    return ''.join(o['text'] for o in executed(stem)[cid] if o['output_type'] == 'stream' and o['name'] == 'stdout')


def shown_text(stem, cid):
    "The plain text of what cell `cid` displayed (its `display()` calls and its value), in order."
    return ''.join(o['data'].get('text/plain', '') for o in executed(stem)[cid]
                   if o['output_type'] in ('display_data', 'execute_result'))
