"""nbdev's notebooks as myst-nb pages, a Sphinx extension: nbdev's directives (read by fastcore's `NbCell`, as nbdev
reads them) become myst-nb cell tags, the title and `show_doc` cells what nbdev's site shows, and links are left for
myst and Sphinx to resolve and check (`-W`). The conversion is deterministic: jupyter-cache keys on the code cells."""
import ast, copy, fcntl, hashlib, json, re
from pathlib import Path

from docutils import nodes
from fastcore.nbio import NbCell
from jupyter_cache.cache.main import JupyterCacheBase
from nbdev.config import nbpath2html
from nbdev.processors import _def_names  # the names nbdev's add_show_docs gives a show_doc
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

DOCS = Path(__file__).absolute().parent
NBS, LIB = DOCS.parent / 'nbs', DOCS.parent / 'vbfa_lit'
SKIP_FLAGS = {'slow', 'notest'}             # pyproject's tst_flags: cells nbdev-test skips, shown with saved outputs
REFERENCE = ['00_notation', '98_references']  # looked up, not read in order: no number, no notation line
NOTATION, PRML_ANCHOR = '00_notation', 'prml-this-course'  # the notation page and its dictionary for PRML's readers
LIB_FILES = sorted(LIB.glob('*.py'))        # the library the notebooks import: its change re-runs every notebook
LIB_KEY = hashlib.sha256(b''.join(f.read_bytes() for f in LIB_FILES)).hexdigest()

def page(stem: str) -> str: return nbpath2html(Path(f'{stem}.ipynb')).stem   # 03_vbpca -> vbpca

_TOC = {m[1]: re.findall(r'(?m)^([\w-]+)$', m[2])    # docs/toc.md's toctrees: {caption: [page, ...]}
        for m in re.finditer(r':caption:\s*(.+?)\n(.*?)```', (DOCS / 'toc.md').read_text(encoding='utf-8'), re.S)}
STEMS = {page(p.stem): p.stem for p in sorted(NBS.glob('*.ipynb'))}
LESSONS = ['index'] + [STEMS[p] for p in _TOC['Lessons'] if p in STEMS]
APPENDIX = [STEMS[p] for p in _TOC['Appendix'] if p in STEMS]

def lesson_number(stem: str) -> str:
    "The number the text cites for notebook `stem` (`02`, `04a`); '' for the index and the references."
    key = stem.split('_', 1)[0]
    return key if re.fullmatch(r'\d\d[a-z]?', key) and key != '98' else ''

def numbered_title(stem: str, title: str) -> str:
    "`02 · Variational Bayesian PCA` (unchanged without a number, or if already numbered)."
    n = lesson_number(stem)
    return f'{n} · {title}' if n and not title.startswith(f'{n} ') else title

def directive_tags(d: dict) -> list[str]:
    "myst-nb cell tags for nbdev's and Quarto's directives `d` (fastcore's `NbCell.directives`: '' for a bare or true one)."
    no, yes = ('false', 'False'), ('', 'true', 'True')
    # `#| exporti` + `#| echo: true`: a lesson's reference code, shown but out of `__all__`
    return [tag for tag, on in [
        ('remove-cell', {'hide', 'export'} & d.keys() or ('exporti' in d and d.get('echo') not in yes)
         or d.get('include') in no),
        ('remove-input', d.get('echo') in no), ('remove-output', d.get('output') in no),
        ('hide-input', d.get('code-fold') in yes), ('skip-execution', SKIP_FLAGS & d.keys() or d.get('eval') in no)] if on]

def strip_docstrings(src: str) -> str:
    "`src` without the docstrings of its functions and classes (a body that is only a docstring keeps it)."
    try: tree = ast.parse(src)
    except SyntaxError: return src
    drop = {i for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and len(n.body) > 1 and isinstance(n.body[0], ast.Expr) and isinstance(getattr(n.body[0].value, 'value', None), str)
            for i in range(n.body[0].lineno - 1, n.body[0].end_lineno)}
    return ''.join(line for i, line in enumerate(src.splitlines(keepends=True)) if i not in drop)

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

def convert_notebook(nb: dict, stem: str, key: str = '') -> dict:
    """Notebook `nb` (nbs/`stem`.ipynb) as myst-nb renders it like nbdev's site (see the module's docstring); `key`,
    stored in the first code cell's metadata, joins the execution cache's key (the library the notebook imports)."""
    nb, cells, names = copy.deepcopy(nb), [], []
    md = [c for c in nb['cells'] if c['cell_type'] == 'markdown']
    title = next((c for c in md if ''.join(c['source']).startswith('# ')), None)
    contents = sum(l.startswith('## ') for c in md for l in ''.join(c['source']).splitlines()) >= 3
    for i, cell in enumerate([*nb['cells'], None]):   # None: the end, after the last API line
        if code := cell and cell['cell_type'] == 'code' and NbCell(i, cell):
            dirs = code.directives
            code.remove_directives()
            body = code.source.removesuffix('\n')
            if m := re.fullmatch(r'\s*show_doc\(\s*([\w.]+)[^()]*\)\s*', body): names.append(m[1]); continue
            if 'default_exp' in dirs and not body.strip(): continue
        if names:  # show_doc cells and an exported cell's public names: one line, linked by LinkNames
            cells.append({'cell_type': 'markdown', 'id': f'api-{len(cells)}', 'metadata': {},
                          'source': '*API reference:* ' + ', '.join(f'`{n}`' for n in dict.fromkeys(names))})
            names = []
        if cell is None: break
        if code:
            cell['source'] = strip_docstrings(body) if {'exports', 'exporti'} & dirs.keys() else body
            if tags := list(dict.fromkeys(cell['metadata'].get('tags', []) + directive_tags(dirs))):
                cell['metadata']['tags'] = tags
            if 'export' in dirs and 'hide' not in dirs: names += _def_names(code, set())
        elif cell is title:
            lesson = stem in LESSONS and stem != 'index' and stem not in REFERENCE
            cell['source'] = title_markdown(''.join(cell['source']), stem, lesson, contents)
        cells.append(cell)
    if key and (code := [c for c in cells if c['cell_type'] == 'code']): code[0]['metadata']['vbfa_lit_key'] = key
    if stem == 'index':
        cells.append({'cell_type': 'markdown', 'id': 'toctree', 'metadata': {},
                      'source': (DOCS / 'toc.md').read_text(encoding='utf-8')})
    return nb | {'cells': cells}

_HREF = re.compile(r'((?:xlink:)?href=)(["\'])([\w-]+)\.ipynb(#[^"\']*)?\2')

def rewrite_html_links(html: str) -> str:
    "`href=\"03_vbpca.ipynb\"` in an HTML output (a clickable figure) -> `href=\"vbpca.html\"`."
    return _HREF.sub(lambda m: f'{m[1]}{m[2]}{page(m[3])}.html{m[4] or ""}{m[2]}' if m[3] in STEMS.values()
                     else m[0], html)

def _inside(node, types) -> bool:
    while node is not None and not isinstance(node, types): node = node.parent
    return node is not None

def _xref(target: str, child: nodes.Node, docname: str, **kw) -> addnodes.pending_xref:
    "The node myst makes of a Markdown link, for myst to resolve (and warn about) like one."
    return addnodes.pending_xref('', nodes.inline('', '', child, classes=['xref', 'myst']), refdoc=docname,
                                 reftype='myst', reftarget=target, refexplicit=True, **kw)

_LESSON_WORD = re.compile(r'\b((?:[Ll]essons?|[Aa]ppendix) (\d\d))\b(?!\.\d)')
_NUMBERED = {lesson_number(s): page(s) for s in STEMS.values() if lesson_number(s)}
_NOT_PROSE = (nodes.FixedTextElement, nodes.literal, nodes.math, nodes.reference, addnodes.pending_xref)
_NOT_NAME = (nodes.reference, addnodes.pending_xref, nodes.container)   # a container: a code cell (its outputs)

def link_pages(app, doctree):
    """Links to nbdev's notebook names point at their pages, `api.html#name` at the entry; "lesson 03" in the text
    (not in code, math or a link) links lesson 03's page."""
    for x in doctree.findall(addnodes.pending_xref):
        m = re.fullmatch(r'([\w-]+)\.(?:ipynb|html)(?:#(.+))?', x.get('reftarget', ''))
        if not m or x.get('reftype') != 'myst' or x.get('refdomain') or m[1] not in {'api', *STEMS.values()}: continue
        if m[1] == 'api' and m[2]: x['reftarget'] = m[2]
        else: x['refdomain'], x['reftarget'], x['reftargetid'] = 'doc', page(m[1]), m[2]
    for text in list(doctree.findall(nodes.Text)):
        if len(parts := _LESSON_WORD.split(text)) > 1 and not _inside(text.parent, _NOT_PROSE):  # [text, words, NN, ...]
            text.parent.replace(text, [
                nodes.Text(p) if i % 3 == 0 or parts[i + 1] not in _NUMBERED else
                _xref(_NUMBERED[parts[i + 1]], nodes.Text(p), app.env.docname, refdomain='doc', reftargetid=None)
                for i, p in enumerate(parts) if i % 3 != 2])

def tagged_equations(app, doctree):
    "`$$ ... \\tag{3.2} $$` -> `\\begin{equation*} ... \\tag{3.2} \\end{equation*}` (its lines split if they break)."
    for m in doctree.findall(nodes.math_block):
        if m.get('nowrap') or m.get('label') or not (tag := re.search(r'\\tag\{[^}]*\}', m.astext())): continue
        inner = m.astext().replace(tag[0], '').strip()
        if '\\\\' in inner and not inner.startswith('\\begin'): inner = '\\begin{split}' + inner + '\\end{split}'
        m[0] = nodes.Text('\n'.join(['\\begin{equation*}', inner, tag[0], '\\end{equation*}']))
        m['nowrap'], m['classes'] = True, [*m['classes'], 'amsmath']   # as myst's amsmath makes it

class LinkNames(SphinxPostTransform):
    "A backticked name of the API (`VBPCA`, `VBPCA.fit()`) outside links, code and outputs -> a link to its entry."
    default_priority = 8   # before myst's resolver (9), which resolves and checks the link
    _API = ('function', 'class', 'exception', 'method', 'property', 'classmethod', 'staticmethod')

    def run(self, **kwargs):
        if not self.env.doc2path(self.env.docname).suffix == '.ipynb': return
        api = {full.split('.', 2)[-1]: full for full, o in sorted(self.env.domains['py'].objects.items(), reverse=True)
               if o.objtype in self._API and not o.aliased}   # `VBPCA.fit` -> `vbfa_lit.estimator.VBPCA.fit`
        for lit in list(self.document.findall(nodes.literal)):
            m = re.fullmatch(r'([A-Za-z]\w*(?:\.\w+)?)(\(\))?', lit.astext())
            if m and m[1] in api and not _inside(lit.parent, _NOT_NAME):
                lit.replace_self(_xref(api[m[1]], lit.deepcopy(), self.env.docname, refdomain=None))

def _convert(app, docname, source):
    "A notebook as Sphinx reads it -> myst-nb's notebook; it depends on the library (and the index on docs/toc.md)."
    if app.env.doc2path(docname).suffix != '.ipynb': return
    source[0] = json.dumps(convert_notebook(json.loads(source[0]), STEMS.get(docname, docname), LIB_KEY),
                           ensure_ascii=False)
    for f in [*LIB_FILES, DOCS / 'proc2sphinx.py', *([DOCS / 'toc.md'] if docname == 'index' else [])]:
        app.env.note_dependency(str(f))

def _output_links(app, doctree):
    """A clickable figure's `href="03_vbpca.ipynb"` (an HTML output) -> the page; no widget state in the page (its
    JavaScript would come from a CDN: the widget panels have static figures and sliders instead)."""
    for node in doctree.findall(nodes.raw):
        if 'html' in node.get('format', '') and node.children: node[0] = nodes.Text(rewrite_html_links(node.astext()))
    getattr(app.env, 'nb_metadata', {}).get(app.env.docname, {}).get('js_files', {}).pop('ipywidgets_state', None)

def serialise_cache_writes():
    """One jupyter-cache write at a time across Sphinx's `-j` processes: its truncation lists the records to keep and
    then the others, so a record another process adds between the two queries is deleted before its notebook is on
    disk (KeyError 'Notebook file does not exist for cache record')."""
    if hasattr(JupyterCacheBase, '_write_unlocked'): return
    JupyterCacheBase._write_unlocked = JupyterCacheBase.cache_notebook_bundle
    def write(self, *args, **kw):
        with open(self.path / 'write.lock', 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX); return self._write_unlocked(*args, **kw)
    JupyterCacheBase.cache_notebook_bundle = write

def setup(app):
    serialise_cache_writes()
    app.connect('source-read', _convert)
    for hook in (link_pages, tagged_equations, _output_links): app.connect('doctree-read', hook, priority=400)
    app.add_post_transform(LinkNames)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
