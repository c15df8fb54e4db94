"""Sphinx configuration of the offline course site: the notebooks of `nbs/`, executed by myst-nb through its cache.

    sphinx-build -b html -W --keep-going -j 2 -c docs -d _build/doctrees _build/src _build/html   (make site)

`_build/src/` holds the notebooks under nbdev's page names (`nbs/03_vbpca.ipynb` -> `vbpca.ipynb`), `figures` and
the API page, written when the build starts. As Sphinx reads a notebook, docs/proc2sphinx.py turns nbdev's
directives into cell tags; myst-nb then runs it through jupyter-cache (`_build/.jupyter_cache`): a notebook runs again
only when its code cells (or the library it imports) changed, and Sphinx re-reads only what changed. Everything the
pages load is in the site: MathJax 3 from sphinx-mathjax-offline, the theme's own CSS, JS and fonts.
"""
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import sys
import tomllib
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).absolute().parent.parent
NBS, LIB = ROOT / 'nbs', ROOT / 'vbfa_lit'
sys.path[:0] = [str(ROOT), str(ROOT / 'docs')]  # autodoc and the kernels import the package from the work tree
import proc2sphinx as p2s  # noqa: E402

# the kernels myst-nb starts inherit this: the work tree's package, one BLAS thread (the lessons' small matrices)
os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))
os.environ.update(OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
os.environ.setdefault('JUPYTER_PLATFORM_DIRS', '1')

_pp = tomllib.loads((ROOT / 'pyproject.toml').read_text(encoding='utf-8'))
_meta, _nbdev = _pp.get('project', {}), _pp.get('tool', {}).get('nbdev', {})

project = _nbdev.get('title') or _meta.get('name', 'docs')
author = ', '.join(a.get('name', '') for a in _meta.get('authors', [])) or project
copyright = author
html_title = project

extensions = [
    'myst_nb',
    'sphinx.ext.autodoc',
    'sphinx.ext.napoleon',      # numpydoc sections (Parameters, Attributes, Examples, References) of public classes
    'sphinx.ext.mathjax',
    'sphinx-mathjax-offline',  # sets mathjax_path to the bundled MathJax 3 (tex-chtml.js)
]

root_doc = 'index'
exclude_patterns = ['figures', '**.ipynb_checkpoints']
html_static_path = ['_static']
html_css_files = ['site.css']

# Execution: through jupyter-cache; a failing cell stops the build, its notebook, code and traceback printed.
nb_execution_mode = 'cache'
nb_execution_cache_path = str(ROOT / '_build' / '.jupyter_cache')
nb_execution_timeout = 600          # seconds a cell
nb_execution_raise_on_error = False  # a failure is a warning with its traceback (-W fails the build), shown even under -j
nb_execution_show_tb = True
nb_ipywidgets_js = {}               # no widget JavaScript from a CDN (see _output_links)
myst_enable_extensions = ['dollarmath', 'amsmath', 'attrs_inline']
myst_heading_anchors = 4            # links to a section (`vbpca.ipynb#the-sampler`), checked like the pages
myst_heading_slug_func = 'docutils'
nb_merge_streams = True
# Markdown outputs (tables displayed with IPython's Markdown) in MyST, which has tables and math;
# myst-nb's default, CommonMark, prints a table as raw pipes.
nb_render_markdown_format = 'myst'

# MathJax 3 (local copy). Without `noundefined`, an unknown macro is a TeX error (an
# <mjx-merror>, which the browser test looks for) instead of quietly printed in red.
mathjax3_config = {'tex': {'packages': {'[-]': ['noundefined']}}}

html_theme = 'sphinx_book_theme'
html_theme_options = {
    'home_page_in_toc': True,      # the index page heads the left navigation
    'show_navbar_depth': 1,
    'show_toc_level': 2,
    'use_download_button': False,  # sources are not copied into the site
    'use_fullscreen_button': False,
    'navigation_with_keys': False,
    # no right-hand "on this page" column: code and equations get its width; each page lists its sections at the
    # top instead (docs/proc2sphinx.py, PAGE_CONTENTS)
    'secondary_sidebar_items': [],
}
# A fixed light mode: figures are matplotlib PNGs drawn for a white page, and with no default
# the theme logs "Got invalid theme mode" to the console on a first visit.
html_context = {'default_mode': 'light'}
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False

# autodoc + napoleon: members in `__all__` order as nbdev writes them; every public docstring is numpydoc
# (tests/test_docstrings.py), so the API page and help() show the same text
autodoc_member_order = 'bysource'
autodoc_typehints = 'signature'
autodoc_default_options = {'members': True, 'undoc-members': False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True        # attributes as fields of their class, not as separate targets


_DOLLAR_MATH = re.compile(r'(?<![\\$])\$([^$\n]+?)\$(?!\$)')
_UNDERSCORE = re.compile(r'(?<=\w)_(?=[^\w`]|$)')
_LESSON_REF = re.compile(r'\b([Ll]esson|[Aa]ppendix) (\d\d)\b')
_LESSON_PAGES = {p2s.lesson_number(s): page for page, s in p2s.STEMS.items() if p2s.lesson_number(s)}


def _lesson_link(m):
    return f':doc:`{m[1]} {m[2]} <{_LESSON_PAGES[m[2]]}>`' if m[2] in _LESSON_PAGES else m[0]


def _docstring(app, what, name, obj, options, lines):
    """Docstrings are plain text, as `help()` shows them: `n_components_` is no reST reference (code spans and `>>>`
    blocks stay as they are), 'lesson 09' links the lesson; a module's $...$ (nbdev copies the notebook's description)
    is math, its `Docs: <URL>` line goes (the site is those docs)."""
    if what == 'module':
        lines[:] = [_DOLLAR_MATH.sub(r':math:`\1`', l) for l in lines if not re.match(r'^\s*Docs:\s*https?://', l)]
    doctest = False
    for i, l in enumerate(lines):
        doctest = l.lstrip().startswith('>>>') or (doctest and bool(l.strip()))
        if not doctest:
            lines[i] = ''.join(p if p.startswith('`') else _LESSON_REF.sub(_lesson_link, _UNDERSCORE.sub(r'\\_', p))
                               for p in re.split(r'(``.*?``|`[^`]*`)', l))


def _skip_namedtuple_aliases(app, what, name, obj, skip, options):
    """A NamedTuple field's docstring is 'Alias for field number N': filler; the fields are in the signature. The
    `set_*_request` methods scikit-learn's metadata routing adds to an estimator are scikit-learn's to document."""
    if re.fullmatch(r'set_\w+_request', name.rsplit('.', 1)[-1]): return True
    return True if re.fullmatch(r'Alias for field number \d+', (getattr(obj, '__doc__', None) or '').strip()) else skip


# ---------------------------------------------------------------- the sources: notebooks, API page

def _modules() -> list[str]:
    "The package's public modules (`vbfa_lit/*.py` without `_`-prefixed files)."
    return [f'vbfa_lit.{f.stem}' for f in sorted(LIB.glob('*.py')) if not f.name.startswith('_')]


@functools.cache
def _api() -> dict[str, str]:
    "The names the API page documents (`VBPCA`, `VBPCA.fit`) -> their entries (`vbfa_lit.estimator.VBPCA`)."
    out = {}
    for mod in _modules():
        m = importlib.import_module(mod)
        for n in getattr(m, '__all__', ()):
            obj = getattr(m, n, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not inspect.getdoc(obj): continue
            if n not in out or obj.__module__ == mod: out[n] = f'{mod}.{n}'
            for k, v in vars(obj).items() if inspect.isclass(obj) else ():
                if (not k.startswith('_') and (inspect.isfunction(v) or isinstance(v, (property, classmethod, staticmethod)))
                        and inspect.getdoc(getattr(obj, k))): out.setdefault(f'{n}.{k}', f'{mod}.{n}.{k}')
    return out


# the library the notebooks import: a change to it re-runs every notebook (the execution cache's key holds its hash)
_LIB_FILES = sorted(LIB.glob('*.py'))
_LIB_KEY = hashlib.sha256(b''.join(f.read_bytes() for f in _LIB_FILES)).hexdigest()


def _api_page() -> str:
    "The API reference page: one autodoc section per module, linked to the notebook that writes it."
    out = ['# API reference', '', 'Every public module of `vbfa_lit`, one section each, from the numpydoc docstrings '
           'that `help()` shows. The lessons link here where they first use a name; the page that writes each module '
           'shows the derivation and the checks.']
    writes = {}
    for p in sorted(NBS.glob('*.ipynb')):
        for c in json.loads(p.read_text(encoding='utf-8'))['cells']:
            d = p2s.split_directives(p2s._src(c))[0].get('default_exp') if c['cell_type'] == 'code' else None
            if d: writes.setdefault(d.split()[0], p.stem)
    for m in _modules():
        out += ['', f'## `{m}`', '']
        stem = writes.get(m.split('.', 1)[1])
        if stem:
            out += [f"Written in the {'appendix page' if stem in p2s.APPENDIX else 'lesson'} "
                    f"[](./{p2s.page(stem)}.ipynb).", '']
        out += ['```{eval-rst}', f'.. automodule:: {m}', '   :members:', '```']
    return '\n'.join(out) + '\n'


def _write_sources(app):
    """`_build/src/`: each notebook copied under its page's name (myst-nb runs it there; a symlink would send links to
    `nbs/`), `figures` (a link: the lessons read their saved data), the API page; each written only if it changed."""
    src = Path(app.srcdir)
    want = {f'{p2s.page(p.stem)}.ipynb': p.read_bytes() for p in NBS.glob('*.ipynb')} | {'api.md': _api_page().encode()}
    for f in src.glob('*.ipynb'):
        if f.name not in want: f.unlink()
    for name, data in want.items():
        if not (src / name).is_file() or (src / name).read_bytes() != data: (src / name).write_bytes(data)
    if not (src / 'figures').is_symlink(): (src / 'figures').symlink_to(os.path.relpath(NBS / 'figures', src))


def _convert(app, docname, source):
    "A notebook as Sphinx reads it -> myst-nb's notebook (docs/proc2sphinx.py); it depends on the library too."
    path = Path(app.env.doc2path(docname))
    if path.suffix != '.ipynb': return
    nb = p2s.convert_notebook(json.loads(source[0]), p2s.STEMS[path.stem], _api(), _LIB_KEY)
    source[0] = json.dumps(nb, ensure_ascii=False)
    for f in [*_LIB_FILES, p2s.DOCS / 'proc2sphinx.py', *([p2s.DOCS / 'toc.md'] if docname == 'index' else [])]:
        app.env.note_dependency(str(f))


def _output_links(app, doctree):
    """A clickable figure's `href="03_vbpca.ipynb"` (an HTML output) -> the page; no widget state in the page (its
    JavaScript would come from a CDN: the widget panels have static figures and sliders instead)."""
    for node in list(doctree.findall(nodes.raw)):
        if 'html' in node.get('format', '') and (new := p2s.rewrite_html_links(node.astext())) != node.astext():
            node.replace_self(nodes.raw('', new, format=node['format']))
    getattr(app.env, 'nb_metadata', {}).get(app.env.docname, {}).get('js_files', {}).pop('ipywidgets_state', None)


def setup(app):
    app.connect('builder-inited', _write_sources)
    app.connect('source-read', _convert)
    app.connect('env-before-read-docs', lambda app, env, docs: docs and _api())  # once, before -j forks
    app.connect('doctree-read', _output_links)
    app.connect('autodoc-process-docstring', _docstring)
    app.connect('autodoc-skip-member', _skip_namedtuple_aliases)
    # sphinx-mathjax-offline only copies files on `build-finished` but does not declare itself
    # parallel-safe, which is a warning (an error under -W) with `-j 2`.
    ext = app.extensions.get('sphinx-mathjax-offline')
    if ext is not None: ext.parallel_read_safe = ext.parallel_write_safe = True
