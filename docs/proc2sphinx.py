"""Turn nbdev's processed notebooks (`_proc/`) into a Sphinx/myst-nb source tree.

nbdev prepares notebooks for Quarto. Sphinx + myst-nb reading them as-is loses the page titles
(they live in a raw YAML front-matter cell), shows the `#|` directive lines, and prints nbdev's
`show_doc` blocks (signatures and numpydoc sections) in the middle of the lessons. The pure
functions below fix exactly that:

- raw front matter -> a markdown cell with the page title (H1) and the description;
- `#| echo: false` -> the `remove-input` cell tag (also `output: false`, `include: false`; `code-fold: true` ->
  `hide-input`, the code folded behind a toggle);
- every remaining leading `#|` line is stripped from code cells;
- a lesson's `#| exports` cell (library code the lesson shows: nbdev keeps its source, marked "Exported
  source") is shown without its docstrings: the lines that carry the method, with the docstrings a link away on
  the API page;
- a run of `show_doc` cells -> one line linking each name to its entry on the API reference page
  (`api.html`, written by autodoc + napoleon from the same numpydoc docstrings `help()` shows);
- links to other notebooks (`00_notation.ipynb`) and nbdev's symbol links (`/notation.html#gamma_kl`)
  point at the renamed local pages and at the API entries; a link to a name the API page does not
  document (a private helper) becomes plain code;
- each page is named by its `output-file` (`00_notation.ipynb` -> `notation.ipynb`), and the pages
  are ordered by `LESSONS` then `APPENDIX` (the one list the sidebar, "Next" and the index follow);
- each page's title carries its number as the text cites it (`02 · Variational Bayesian PCA ...`, so the sidebar
  reads like the "lesson 02" and "Figure 2.1" of the prose), and each lesson links the notation reference under
  its title;
- links to notebooks inside HTML outputs (a clickable figure's `href="02_vbpca.ipynb"`) point at the pages too.

Notebooks are handled as plain JSON dicts (nbformat 4), so every function is easy to test.
"""
from __future__ import annotations

import ast
import copy
import json
import re
import shutil
from pathlib import Path, PurePosixPath

import yaml

__all__ = ['LESSONS', 'APPENDIX', 'REFERENCE', 'page_order', 'lesson_number', 'numbered_title', 'parse_front_matter', 'title_markdown', 'split_directives',
           'directive_tags', 'strip_docstrings', 'rewrite_links', 'rewrite_html_links', 'page_name', 'show_doc_name', 'convert_notebook',
           'convert_tree', 'toctree_markdown']

# The reading path, by notebook stem (a notebook is matched by the part before its first `_`, so `04b` finds
# `04b_imputation.ipynb` whatever follows; names that do not exist yet are skipped). The course opens with PCA (01c:
# from PCA to probabilistic PCA to Bayesian PCA), then the SymPy machine that derives every mean-field update (01),
# the lessons, and the two reference chapters (the notation table, the references); then the engineering notebooks as
# an appendix; a notebook in neither list goes to the end of the appendix.
LESSONS = ['index', '01c_from_pca', '01_symbolic', '02_vbpca', '03_ard', '04_transformations', '04a_estimator',
           '04b_imputation', '04d_ratings', '05_convergence', '06_rjmcmc', '06a_evidence', '07_stiefel',
           '08_householder_ppca', '11_beyond_one_machine', '00_notation', '98_references']
APPENDIX = ['01a_plots', '01b_data', '02a_linalg', '02b_validation', '02c_vbpca_fast', '02d_engine', '02e_dask',
            '04c_transformations_engine', '05a_convergence_experiments', '06b_rjmcmc_fast', '06c_rjmcmc_engine',
            '06d_zhang_tables', '09_widgets', '10_benchmarks', '99_package']
# Chapters that are looked up rather than read in order: no lesson number, no "notation" line under the title.
REFERENCE = ['00_notation', '98_references']
# The one page that defines every symbol; each lesson links it under its title.
NOTATION = '00_notation'


def _key(stem: str) -> str: return stem.split('_', 1)[0]


def lesson_number(stem: str) -> str:
    """The number the course's text uses for notebook `stem` ("lesson 02", "Figure 4a.1"): its prefix (`02` for
    `02_vbpca`, `04a` for `04a_estimator`); '' for the index and the references."""
    key = _key(stem)
    if not re.fullmatch(r'\d\d[a-z]?', key) or stem == '98_references' or key == '98': return ''
    return key


def numbered_title(stem: str, title: str) -> str:
    "A page title as the sidebar and the page show it: `02 · Variational Bayesian PCA` (unchanged without a number)."
    n = lesson_number(stem)
    return f'{n} · {title}' if n and not title.startswith(f'{n} ') else title


def page_order(stems) -> tuple[list[str], list[str]]:
    "Split notebook `stems` into (lessons, appendix), each in reading order (see `LESSONS`, `APPENDIX`)."
    stems = list(stems)
    by_key = {}
    for s in sorted(stems): by_key.setdefault(_key(s), s)
    pick = lambda names: [by_key.pop(_key(n)) for n in names if _key(n) in by_key]
    lessons, appendix = pick(LESSONS), pick(APPENDIX)
    return lessons, appendix + sorted(by_key.values())


_FM_RE = re.compile(r'^\s*---\s*\n(.*?)\n\s*---\s*$', re.S)
_DIRECTIVE_RE = re.compile(r'^\s*#\|\s?(.*)$')


def _src(cell: dict) -> str:
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else s


def parse_front_matter(raw: str) -> dict | None:
    "The YAML mapping in a raw `---`-delimited front-matter cell, or None if `raw` is not one."
    m = _FM_RE.match(raw.strip() + '\n')
    if not m: return None
    try: d = yaml.safe_load(m.group(1))
    except yaml.YAMLError: return None
    return d if isinstance(d, dict) else None


# The page's own table of contents, at the top of the article: the site has no right-hand sidebar, so
# that code and equations get the full width (pydata-sphinx-theme hides a `contents` without this class).
PAGE_CONTENTS = ('```{contents} On this page\n:local:\n:depth: 1\n'
                 ':class: this-will-duplicate-information-and-it-is-still-useful-here\n```')


# the notation page's boxed dictionary for readers of Bishop's PRML (its heading "PRML ↔ this course")
PRML_ANCHOR = 'prml-this-course'
NOTATION_LINE = ('*Symbols:* every symbol of this page is defined in the [notation reference]({page}.html); '
                 f'coming from PRML, see its [dictionary of PRML\'s symbols]({{page}}.html#{PRML_ANCHOR}).')


def title_markdown(fm: dict, contents: bool = False, notation: str = '') -> str:
    """Markdown for the top of a page: the title as H1, the description as a paragraph, a link to the notation
    reference (if `notation` names its page), then (if asked) its contents."""
    parts = [f"# {str(fm.get('title') or '').strip() or 'Untitled'}"]
    desc = str(fm.get('description') or '').strip()
    if desc: parts.append(desc)
    if notation: parts.append(NOTATION_LINE.format(page=notation))
    if contents: parts.append(PAGE_CONTENTS)
    return '\n\n'.join(parts)


def _n_sections(nb: dict) -> int:
    "Number of level-2 headings in the markdown cells of `nb`."
    return sum(line.startswith('## ') for c in nb.get('cells', []) if c['cell_type'] == 'markdown'
               for line in _src(c).splitlines())


def split_directives(source: str) -> tuple[dict, str]:
    "Split the leading `#| key: value` / `#| key value` lines off a code cell: ({key: value}, rest)."
    lines = source.splitlines()
    dirs, i = {}, 0
    while i < len(lines):
        m = _DIRECTIVE_RE.match(lines[i])
        if m:
            text = m.group(1).strip()  # `key: value` (Quarto) or `key value...` (nbdev)
            key, val = text.split(':', 1) if re.match(r'^[\w-]+\s*:', text) else (text.split(None, 1) + [''])[:2]
            if key.strip(): dirs[key.strip()] = val.strip()
        elif lines[i].strip(): break
        i += 1
    return dirs, '\n'.join(lines[i:])


def directive_tags(dirs: dict) -> list[str]:
    "myst-nb cell tags equivalent to Quarto's `echo`/`output`/`include`/`code-fold` directives."
    false = {'false', 'False'}
    tags = []
    if dirs.get('include') in false: tags.append('remove-cell')
    if dirs.get('echo') in false: tags.append('remove-input')
    if dirs.get('output') in false: tags.append('remove-output')
    if dirs.get('code-fold') in {'true', 'True'}: tags.append('hide-input')   # folded code, a click away
    return tags


def strip_docstrings(src: str) -> str:
    "`src` without the docstrings of its functions and classes (a body that is only a docstring keeps it)."
    try: tree = ast.parse(src)
    except SyntaxError: return src                  # not plain Python (a magic): shown as it is
    lines, drop = src.splitlines(keepends=True), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and len(node.body) > 1:
            first = node.body[0]
            is_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, 'value', None), ast.Constant)
            if is_doc and isinstance(first.value.value, str):
                drop.update(range(first.lineno - 1, first.end_lineno))
    return ''.join(line for i, line in enumerate(lines) if i not in drop)


# a markdown link `[text](url#anchor)`, optionally with Quarto attributes `{target="_blank" ...}` after it
_LINK_RE = re.compile(r'\[([^\[\]]*)\]\(([^()\s#]*)(#[^()\s]*)?\)(\{[^{}\n]*\})?')


def _make_id(anchor: str) -> str:
    "The HTML id docutils gives a heading (`The_Gamma` -> `the-gamma`)."
    from docutils.nodes import make_id
    return make_id(anchor)


def rewrite_links(md: str, pages: dict[str, str], api: dict[str, str | None] | None = None) -> str:
    """Point markdown links at the pages of the built site.

    `pages` maps both notebook stems (`00_notation`) and output stems (`notation`) to the page name.
    `api` maps nbdev's symbol anchors (`notation.html#gamma_kl`) to the id of the entry on `api.html`
    (`vbfa_lit.notation.gamma_kl`), or to None for a name the API page does not document. So
    `[x](00_notation.ipynb#a_b)` -> `[x](notation.html#a-b)`, `[`f`](/notation.html#f)` ->
    `[`f`](api.html#vbfa_lit.notation.f)`, `[`_h`](/linalg.html#_h)` -> `` `_h` ``; Quarto
    attributes after a link are dropped; other links are left alone.
    """
    api = api or {}
    def sub(m):
        text, url, anchor = m.group(1), m.group(2), m.group(3) or ''
        if re.match(r'^[a-z][a-z0-9+.-]*:', url, re.I): return m.group(0)
        p = PurePosixPath(url.lstrip('/'))
        if not url and anchor: return f'[{text}](#{_make_id(anchor[1:])})'
        if f'{p.name}{anchor}' in api:
            target = api[f'{p.name}{anchor}']
            return f'[{text}](api.html#{target})' if target else text
        if p.suffix not in ('.ipynb', '.html', '.md') or p.stem not in pages: return m.group(0)
        anchor = f'#{_make_id(anchor[1:])}' if len(anchor) > 1 else ''
        return f'[{text}]({pages[p.stem]}.html{anchor})'
    # nbdev links a name inside a double-backtick span (``elbo``), leaving `[`elbo`](/vbpca.html#elbo)` as code
    md = re.sub(r'`(\[`[\w.]+`\]\([^()\s]*\))`', r'\1', md)
    return _LINK_RE.sub(sub, md)


_HREF_RE = re.compile(r'((?:xlink:)?href=)(["\'])([^"\'#]+?)\.ipynb(#[^"\']*)?\2')


def rewrite_html_links(html: str, pages: dict[str, str]) -> str:
    """`href="02_vbpca.ipynb"` (or `xlink:href`, as matplotlib writes an artist's `url` into an SVG) in an HTML
    output -> `href="vbpca.html"`, so a clickable figure works in Jupyter and on the site; other links are left."""
    def sub(m):
        stem = PurePosixPath(m.group(3)).stem
        if stem not in pages or re.match(r'^[a-z][a-z0-9+.-]*:', m.group(3), re.I): return m.group(0)
        anchor = f'#{_make_id(m.group(4)[1:])}' if m.group(4) and len(m.group(4)) > 1 else ''
        return f'{m.group(1)}{m.group(2)}{pages[stem]}.html{anchor}{m.group(2)}'
    return _HREF_RE.sub(sub, html)


def page_name(nb_path: str | Path, fm: dict | None) -> str:
    "Page stem for a notebook: its front matter's `output-file` stem, else the notebook stem."
    out = (fm or {}).get('output-file')
    return PurePosixPath(str(out)).stem if out else Path(nb_path).stem


def show_doc_name(cell: dict) -> str | None:
    "The name a `show_doc(name)` code cell documents (`VBPCA.fit`), or None for any other cell."
    if cell.get('cell_type') != 'code': return None
    m = re.fullmatch(r'\s*show_doc\(\s*([\w.]+)[^()]*\)\s*', split_directives(_src(cell))[1])
    return m.group(1) if m else None


def convert_notebook(nb: dict, pages: dict[str, str], api: dict[str, str | None] | None = None,
                     page: str = '', stem: str = '', notation: str = '') -> dict:
    """A copy of processed notebook `nb` that Sphinx/myst-nb renders like nbdev's Quarto site, with each run of
    `show_doc` cells replaced by one line of links to the API reference (`page` is the notebook's own page,
    `notation`, where nbdev anchors its names). With the notebook's `stem` (`02_vbpca`) the title carries its lesson
    number (`numbered_title`); with `notation` (the notation page's name) a line under the title links it. Links in
    HTML outputs (`href="02_vbpca.ipynb"`, a clickable figure) point at the pages like those of the markdown."""
    nb = copy.deepcopy(nb)
    contents = _n_sections(nb) >= 3
    cells, names = [], []
    def flush():
        if names:
            links = ', '.join(rewrite_links(f'[`{n}`](/{page}.html#{n.lower()})', pages, api) for n in names)
            cells.append({'cell_type': 'markdown', 'metadata': {}, 'source': f'*API reference:* {links}'})
            names.clear()
    for cell in nb.get('cells', []):
        src = _src(cell)
        name = show_doc_name(cell)
        if name: names.append(name); continue
        flush()
        if cell['cell_type'] == 'raw':
            fm = parse_front_matter(src)
            if fm is not None:
                if stem: fm = {**fm, 'title': numbered_title(stem, str(fm.get('title') or '').strip())}
                cells.append({'cell_type': 'markdown', 'id': 'page-title', 'metadata': {},
                              'source': title_markdown(fm, contents, notation)})
                continue
        if cell['cell_type'] == 'markdown':
            cell['source'] = rewrite_links(src, pages, api)
        if cell['cell_type'] == 'code':
            dirs, body = split_directives(src)
            if 'exports' in dirs or dirs.get('code-summary', '').strip('"') == 'Exported source':
                body = strip_docstrings(body)
            cell['source'] = body
            tags = cell.setdefault('metadata', {}).setdefault('tags', [])
            tags.extend(t for t in directive_tags(dirs) if t not in tags)
            if not tags: del cell['metadata']['tags']
            for out in cell.get('outputs', []):
                html = out.get('data', {}).get('text/html')
                if html is not None: out['data']['text/html'] = rewrite_html_links(_src({'source': html}), pages)
        cells.append(cell)
    flush()
    if nb.get('nbformat', 4) == 4 and nb.get('nbformat_minor', 0) >= 5:  # ids are required
        for i, c in enumerate(cells): c.setdefault('id', f'cell-{i}')
    nb['cells'] = cells
    return nb


def toctree_markdown(docs: list[str], caption: str = '') -> str:
    "A hidden MyST toctree listing `docs` in order (the book theme shows it, under `caption`, as the left navigation)."
    return ('```{toctree}\n:hidden:\n:maxdepth: 1\n' + (f':caption: {caption}\n' if caption else '')
            + '\n' + '\n'.join(docs) + '\n```')


def _front_matter(nb: dict) -> dict | None:
    for c in nb.get('cells', []):
        if c['cell_type'] == 'raw':
            fm = parse_front_matter(_src(c))
            if fm is not None: return fm
    return None


_SKIP_ASSETS = {'_quarto.yml', 'nbdev.yml', 'styles.css', 'sidebar.yml', '_brand.yml'}


def convert_tree(proc: Path, dest: Path, extra_docs: list[str] = (), api: dict[str, str | None] | None = None
                 ) -> list[dict]:
    """Convert every notebook in `proc` into `dest` and copy the other assets (images, data).

    The `index` page gets two hidden toctrees: the lessons, then the appendix followed by `extra_docs`
    (e.g. the API reference), in the order of `page_order`. Returns one dict per page in that order:
    `{'notebook': '00_notation', 'page': 'notation', 'title': 'Notation', 'appendix': False}`.
    `api` maps nbdev's symbol anchors to API-page ids (see `rewrite_links`).
    """
    proc, dest = Path(proc), Path(dest)
    if dest.exists(): shutil.rmtree(dest)
    dest.mkdir(parents=True)
    found = {p.stem: p for p in proc.glob('*.ipynb')}
    lessons, appendix = page_order(found)
    if 'index' not in lessons: raise ValueError(f'no notebook in {proc} produces the index page')
    nbs = [found[s] for s in lessons + appendix]
    loaded = {p: json.loads(p.read_text(encoding='utf-8')) for p in nbs}
    fms = {p: _front_matter(nb) or {} for p, nb in loaded.items()}
    names = {p: page_name(p, fms[p]) for p in nbs}
    seen = list(names.values())
    dupes = sorted({n for n in seen if seen.count(n) > 1})
    if dupes: raise ValueError(f'two notebooks map to the same page name(s): {dupes}')
    pages = {}
    for p in nbs: pages[p.stem] = pages[names[p]] = names[p]
    notation = pages.get(NOTATION, '')
    for p in nbs:
        lesson = p.stem in lessons and p.stem != 'index' and p.stem not in REFERENCE
        nb = convert_notebook(loaded[p], pages, api, page=names[p], stem=p.stem, notation=notation if lesson else '')
        if names[p] == 'index':
            nb['cells'].append({'cell_type': 'markdown', 'id': 'page-toctree', 'metadata': {}, 'source':
                                toctree_markdown([names[found[s]] for s in lessons[1:]], 'Lessons') + '\n\n'
                                + toctree_markdown([names[found[s]] for s in appendix] + list(extra_docs), 'Appendix')})
        (dest / f'{names[p]}.ipynb').write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    for f in proc.rglob('*'):
        r = f.relative_to(proc)
        if (f.is_dir() or f.suffix == '.ipynb' or f.name in _SKIP_ASSETS
                or any(s.startswith('.') for s in r.parts)): continue
        (dest / r).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest / r)
    return [{'notebook': p.stem, 'page': names[p], 'title': numbered_title(p.stem, str(fms[p].get('title') or names[p])),
             'appendix': p.stem in appendix} for p in nbs]
