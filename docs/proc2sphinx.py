"""nbdev's notebooks as myst-nb pages (docs/conf.py converts each as Sphinx reads it, before myst-nb's cache runs it).

Directives -> cell tags (`hide`, `export`, `exporti` -> remove-cell; `echo: false` -> remove-input; `code-fold` -> hide-input;
`slow`, `eval: false` -> skip-execution); the title cell -> the numbered title; `show_doc` and exported names -> a line
of links to the API page; links to notebooks and API names -> links Sphinx resolves and checks. Deterministic: the
execution cache keys on the converted code cells. The reading order is docs/toc.md's toctree.
"""
from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

from nbdev.config import nbpath2html

DOCS = Path(__file__).absolute().parent
NBS = DOCS.parent / 'nbs'
SKIP_FLAGS = {'slow', 'notest'}             # pyproject's tst_flags: cells nbdev-test skips, shown with saved outputs
REFERENCE = ['00_notation', '98_references']  # looked up, not read in order: no number, no notation line
NOTATION = '00_notation'
PRML_ANCHOR = 'prml-this-course'            # the notation page's dictionary for readers of PRML


def page(stem: str) -> str: return nbpath2html(Path(f'{stem}.ipynb')).stem   # 03_vbpca -> vbpca


def _toc() -> dict[str, list[str]]:
    "docs/toc.md's toctrees: {caption: [page, ...]}."
    out, cap = {}, None
    for line in (DOCS / 'toc.md').read_text(encoding='utf-8').splitlines():
        if m := re.match(r':caption:\s*(.+)', line): cap = out.setdefault(m.group(1).strip(), [])
        elif cap is not None and re.fullmatch(r'[\w-]+', line.strip()): cap.append(line.strip())
    return out


STEMS = {page(p.stem): p.stem for p in sorted(NBS.glob('*.ipynb'))}
LESSONS = ['index'] + [STEMS[p] for p in _toc()['Lessons'] if p in STEMS]
APPENDIX = [STEMS[p] for p in _toc()['Appendix'] if p in STEMS]


def page_order(stems) -> tuple[list[str], list[str]]:
    "Split notebook `stems` into (lessons, appendix) in reading order; unlisted ones close the appendix."
    stems = sorted(stems)
    return ([s for s in LESSONS if s in stems],
            [s for s in APPENDIX if s in stems] + [s for s in stems if s not in LESSONS + APPENDIX])


def lesson_number(stem: str) -> str:
    "The number the text cites for notebook `stem` (`02`, `04a`); '' for the index and the references."
    key = stem.split('_', 1)[0]
    return key if re.fullmatch(r'\d\d[a-z]?', key) and key != '98' else ''


def numbered_title(stem: str, title: str) -> str:
    "`02 · Variational Bayesian PCA` (unchanged without a number, or if already numbered)."
    n = lesson_number(stem)
    return f'{n} · {title}' if n and not title.startswith(f'{n} ') else title


def _src(cell: dict) -> str:
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else s


def split_directives(source: str) -> tuple[dict, str]:
    "Split the leading `#| key: value` / `#| key value` lines off a code cell: ({key: value}, rest)."
    lines, dirs, i = source.splitlines(), {}, 0
    while i < len(lines) and (lines[i].lstrip().startswith('#|') or not lines[i].strip()):
        text = lines[i].lstrip()[2:].strip()
        key, val = text.split(':', 1) if re.match(r'^[\w-]+\s*:', text) else (text.split(None, 1) + ['', ''])[:2]
        if key.strip(): dirs[key.strip()] = val.strip()
        i += 1
    return dirs, '\n'.join(lines[i:])


def directive_tags(dirs: dict) -> list[str]:
    "myst-nb cell tags for nbdev's and Quarto's directives."
    no, yes = {'false', 'False'}, {'true', 'True'}
    tags = []
    # `#| exporti` + `#| echo: true`: a lesson's reference code, shown but out of `__all__`
    if {'hide', 'export'} & dirs.keys() or ('exporti' in dirs and dirs.get('echo') not in yes) or dirs.get('include') in no:
        tags.append('remove-cell')
    if dirs.get('echo') in no: tags.append('remove-input')
    if dirs.get('output') in no: tags.append('remove-output')
    if dirs.get('code-fold') in yes: tags.append('hide-input')
    if SKIP_FLAGS & dirs.keys() or dirs.get('eval') in no: tags.append('skip-execution')
    return tags


def strip_docstrings(src: str) -> str:
    "`src` without the docstrings of its functions and classes (a body that is only a docstring keeps it)."
    try: tree = ast.parse(src)
    except SyntaxError: return src
    lines, drop = src.splitlines(keepends=True), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and len(node.body) > 1:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, 'value', None), str):
                drop.update(range(first.lineno - 1, first.end_lineno))
    return ''.join(line for i, line in enumerate(lines) if i not in drop)


def exported_names(src: str) -> list[str]:
    "The public functions and classes an `#| export` cell defines (nbdev documents each with `show_doc`)."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not n.name.startswith('_')]


# the page's own contents at the top of a long page (the site has no right-hand column; the class keeps it shown)
PAGE_CONTENTS = ('```{contents} On this page\n:local:\n:depth: 1\n'
                 ':class: this-will-duplicate-information-and-it-is-still-useful-here\n```')
NOTATION_LINE = ('*Symbols:* every symbol of this page is defined in the [notation reference]({page}.ipynb); '
                 f"coming from PRML, see its [dictionary of PRML's symbols]({{page}}.ipynb#{PRML_ANCHOR}).")


def title_markdown(src: str, stem: str, notation: bool = False, contents: bool = False) -> str:
    "nbdev's title cell (`# Title`, `> description`, more text) with the numbered title and the lines under it."
    lines = src.strip().splitlines()
    i, desc = 1, []
    while i < len(lines) and (lines[i].startswith('>') or not lines[i].strip()):
        desc.append(lines[i].lstrip('> ').strip()); i += 1
    parts = [f'# {numbered_title(stem, lines[0][2:].strip())}', ' '.join(filter(None, desc)),
             NOTATION_LINE.format(page=page(NOTATION)) if notation else '', PAGE_CONTENTS if contents else '',
             '\n'.join(lines[i:])]
    return '\n\n'.join(p for p in parts if p)


_LINK = re.compile(r'\]\((?![a-z][\w+.-]*:)([^()\s#]*?)(?:\.(ipynb|html|md))?(#[^()\s]*)?\)')


def rewrite_links(md: str) -> str:
    "`(03_vbpca.ipynb#x)` -> `(vbpca.ipynb#x)`, `(api.html#name)` -> `(#name)`: links Sphinx resolves."
    def sub(m):
        path, ext, anchor = m.group(1), m.group(2), m.group(3) or ''
        if path == 'api' and anchor: return f']({anchor})'
        name = path if path in STEMS or path == 'api' else page(path) if path in STEMS.values() else None
        if not ext or name is None: return m.group(0)
        return f']({name}.{"md" if name == "api" else "ipynb"}{anchor})'
    return _LINK.sub(sub, md)


# a display equation with a \\tag becomes an `equation*` environment (myst's amsmath): Sphinx wraps a $$ block that
# holds line breaks in `split`, where MathJax refuses \\tag; the star keeps Sphinx from adding a second number
_TAGGED = re.compile(r'(?m)^([ \t]*)\$\$[ \t]*\n?((?:(?!\$\$).)*?\\tag\{[^}]*\}(?:(?!\$\$).)*?)\n?[ \t]*\$\$[ \t]*$', re.S)


def tagged_equations(md: str) -> str:
    "`$$ ... \\tag{3.2} $$` -> `\\begin{equation*} ... \\tag{3.2} \\end{equation*}` (its lines split if they break)."
    def sub(m):
        indent, body = m.group(1), m.group(2)
        tag = re.search(r'\\tag\{[^}]*\}', body).group(0)
        inner = body.replace(tag, '').strip()
        if '\\\\' in inner and not inner.startswith('\\begin'): inner = '\\begin{split}' + inner + '\\end{split}'
        return '\n'.join(indent + line for line in ['\\begin{equation*}', *inner.splitlines(), tag, '\\end{equation*}'])
    return _TAGGED.sub(sub, md)


# "lesson 03" (or "appendix 33") in the prose becomes a link to that page; code, math and links are left alone
_PROTECTED = re.compile(r'(```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\[[^\]\n]*\]\([^)\s]*\)|<[^>\n]*>)', re.S)
_LESSON_WORD = re.compile(r'\b([Ll]essons?|[Aa]ppendix) (\d\d)\b(?!\.\d)')


def link_lessons(md: str) -> str:
    numbered = {lesson_number(s): s for s in STEMS.values() if lesson_number(s)}
    parts = _PROTECTED.split(md)
    for i in range(0, len(parts), 2):
        parts[i] = _LESSON_WORD.sub(lambda m: f'[{m[0]}]({numbered[m[2]]}.ipynb)' if m[2] in numbered else m[0],
                                    parts[i])
    return ''.join(parts)


# code, math and links are left alone; a `name` (or `name()`) of the API elsewhere becomes a link to its entry
_KEEP = re.compile(r'(```.*?```|\$\$.*?\$\$|\[[^\]\n]*\]\([^)\s]*\))', re.S)
_NAME = re.compile(r'(?<![`\w])`([A-Za-z]\w*(?:\.\w+)?)(\(\))?`(?!`)')


def link_names(md: str, api: dict[str, str]) -> str:
    parts = _KEEP.split(md)
    for i in range(0, len(parts), 2):
        parts[i] = _NAME.sub(lambda m: f'[{m.group(0)}](#{api[m.group(1)]})' if m.group(1) in api else m.group(0),
                             parts[i])
    return ''.join(parts)


_HREF = re.compile(r'((?:xlink:)?href=)(["\'])([\w-]+)\.ipynb(#[^"\']*)?\2')


def rewrite_html_links(html: str) -> str:
    "`href=\"03_vbpca.ipynb\"` in an HTML output (a clickable figure) -> `href=\"vbpca.html\"`."
    return _HREF.sub(lambda m: f'{m[1]}{m[2]}{page(m[3])}.html{m[4] or ""}{m[2]}' if m[3] in STEMS.values()
                     else m[0], html)


def convert_notebook(nb: dict, stem: str, api: dict[str, str] | None = None, key: str = '') -> dict:
    """Notebook `nb` (nbs/`stem`.ipynb) as myst-nb renders it like nbdev's site (see the module's docstring). `api` maps
    the API's names (`VBPCA.fit`) to their entries (`vbfa_lit.estimator.VBPCA.fit`); `key`, stored in the first code
    cell's metadata, joins the execution cache's key (the library the notebook imports)."""
    nb, api = copy.deepcopy(nb), api or {}
    lesson = stem in LESSONS and stem != 'index' and stem not in REFERENCE
    contents = sum(l.startswith('## ') for c in nb['cells'] if c['cell_type'] == 'markdown'
                   for l in _src(c).splitlines()) >= 3
    cells, names, titled = [], [], False
    def flush():
        if names:
            links = ', '.join(f'[`{n}`](#{api[n]})' if n in api else f'`{n}`' for n in dict.fromkeys(names))
            cells.append({'cell_type': 'markdown', 'id': f'api-{len(cells)}', 'metadata': {},
                          'source': f'*API reference:* {links}'})
            names.clear()
    for cell in nb['cells']:
        src = _src(cell)
        if cell['cell_type'] == 'code':
            dirs, body = split_directives(src)
            if m := re.fullmatch(r'\s*show_doc\(\s*([\w.]+)[^()]*\)\s*', body): names.append(m[1]); continue
            if 'default_exp' in dirs and not body.strip(): continue
            flush()
            cell['source'] = strip_docstrings(body) if {'exports', 'exporti'} & dirs.keys() else body
            tags = cell['metadata'].get('tags', [])
            tags += [t for t in directive_tags(dirs) if t not in tags]
            if tags: cell['metadata']['tags'] = tags
            if 'export' in dirs and 'hide' not in dirs: names += exported_names(body)
        else:
            flush()
            if cell['cell_type'] == 'markdown':
                if not titled and src.startswith('# '):
                    src, titled = title_markdown(src, stem, lesson, contents), True
                cell['source'] = tagged_equations(link_names(rewrite_links(link_lessons(src)), api))
        cells.append(cell)
    flush()
    code = [c for c in cells if c['cell_type'] == 'code']
    if key and code: code[0]['metadata']['vbfa_lit_key'] = key
    if stem == 'index':
        cells.append({'cell_type': 'markdown', 'id': 'toctree', 'metadata': {},
                      'source': (DOCS / 'toc.md').read_text(encoding='utf-8')})
    nb['cells'] = cells
    return nb
