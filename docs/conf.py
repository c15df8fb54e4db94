"""The offline course site (make site: `sphinx-build -b html -W --keep-going -j 2 -c docs ... _build/src _build/html`).
`_build/src/` holds the notebooks under nbdev's page names (`nbs/03_vbpca.ipynb` -> `vbpca.ipynb`), `figures` and the
API page, written as the build starts; docs/proc2sphinx.py makes each notebook a myst-nb page, which myst-nb executes
through jupyter-cache. Everything a page loads is in the site (MathJax 3 from sphinx-mathjax-offline's copy)."""
import importlib.util, os, re, sys
from pathlib import Path

ROOT = Path(__file__).absolute().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / 'docs')]  # autodoc and the kernels import the package from the work tree
import proc2sphinx as p2s  # noqa: E402

# the kernels myst-nb starts inherit this: the work tree's package, one BLAS thread (the lessons' small matrices)
os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))
os.environ.update(OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
os.environ.setdefault('JUPYTER_PLATFORM_DIRS', '1')

project = html_title = 'vbfa_lit'
author = copyright = 'vbfa_lit developers'
extensions = ['myst_nb', 'proc2sphinx', 'sphinx.ext.autodoc', 'sphinx.ext.napoleon', 'sphinx.ext.mathjax']
exclude_patterns = ['figures', '**.ipynb_checkpoints']
html_static_path = ['_static', str(Path(importlib.util.find_spec('sphinx-mathjax-offline').origin).parent / 'static')]
html_css_files = ['site.css']
mathjax_path = 'mathjax/tex-chtml.js'   # MathJax 3 from the site's own _static/mathjax
# without `noundefined` an unknown macro is a TeX error (an <mjx-merror> the browser test finds), not printed in red
mathjax3_config = {'tex': {'packages': {'[-]': ['noundefined']}}}

# a failing cell is a warning with its traceback (-W fails the build; shown even under -j)
nb_execution_mode, nb_execution_raise_on_error, nb_execution_show_tb = 'cache', False, True
nb_execution_cache_path = str(ROOT / '_build' / '.jupyter_cache')
nb_execution_timeout = 600          # seconds a cell
nb_ipywidgets_js = {}               # no widget JavaScript from a CDN (proc2sphinx drops the widget state)
nb_merge_streams = True
nb_render_markdown_format = 'myst'  # Markdown outputs (tables) in MyST, which has tables and math, not CommonMark
myst_enable_extensions = ['dollarmath', 'amsmath', 'attrs_inline']
myst_heading_anchors = 4            # links to a section (`vbpca.ipynb#the-sampler`), checked like the pages
myst_heading_slug_func = 'docutils'

html_theme = 'sphinx_book_theme'
html_theme_options = {
    'home_page_in_toc': True, 'show_navbar_depth': 1, 'show_toc_level': 2, 'navigation_with_keys': False,
    'use_download_button': False, 'use_fullscreen_button': False,   # sources are not copied into the site
    # no right-hand "on this page" column: code and equations get its width (see proc2sphinx.PAGE_CONTENTS)
    'secondary_sidebar_items': [],
}
html_context = {'default_mode': 'light'}   # figures are drawn for a white page (and no "invalid theme mode" logged)
html_show_sourcelink = html_copy_source = False

# `__all__` order as nbdev writes it; every public docstring is numpydoc: the API page and help() show the same text
autodoc_member_order, autodoc_default_options = 'bysource', {'members': True, 'undoc-members': False}
napoleon_google_docstring, napoleon_numpy_docstring = False, True
napoleon_use_ivar = True        # attributes as fields of their class, not as separate targets

def _docstring(app, what, name, obj, options, lines):
    """Docstrings are plain text, as `help()` shows them: `n_components_` is no reST reference (code spans and `>>>`
    blocks stay as they are); a module's $...$ (nbdev copies the notebook's description) is math."""
    if what == 'module': lines[:] = [re.sub(r'(?<![\\$])\$([^$\n]+?)\$(?!\$)', r':math:`\1`', l) for l in lines]
    doctest = False
    for i, l in enumerate(lines):
        doctest = l.lstrip().startswith('>>>') or (doctest and bool(l.strip()))
        if not doctest:
            lines[i] = ''.join(p if p.startswith('`') else re.sub(r'(?<=\w)_(?=[^\w`]|$)', r'\\_', p)
                               for p in re.split(r'(``.*?``|`[^`]*`)', l))

def _skip(app, what, name, obj, skip, options):
    """A NamedTuple field's docstring is 'Alias for field number N': filler, the fields are in the signature; the
    `set_*_request` methods scikit-learn's metadata routing adds to an estimator are scikit-learn's to document."""
    doc = (getattr(obj, '__doc__', None) or '').strip()
    return skip or bool(re.fullmatch(r'set_\w+_request', name.rsplit('.', 1)[-1])
                        or re.fullmatch(r'Alias for field number \d+', doc))

def _api_page() -> str:
    "The API reference page: one autodoc section per public module, linked to the notebook that writes it."
    out = ['# API reference\n\nEvery public module of `vbfa_lit`, one section each, from the numpydoc docstrings that '
           '`help()` shows. The lessons link here where they first use a name; the page that writes each module shows '
           'the derivation and the checks.']
    writes = {m[1]: p.stem for p in sorted(p2s.NBS.glob('*.ipynb'), reverse=True)  # the first `#| default_exp` wins
              if (m := re.search(r'#\|\s*default_exp\s+([\w.]+)', p.read_text(encoding='utf-8')))}
    for mod in [f.stem for f in p2s.LIB_FILES if not f.name.startswith('_')]:
        out.append(f'## `vbfa_lit.{mod}`')
        if stem := writes.get(mod):
            out.append(f"Written in the {'appendix page' if stem in p2s.APPENDIX else 'lesson'} [](./{p2s.page(stem)}.ipynb).")
        out.append(f'```{{eval-rst}}\n.. automodule:: vbfa_lit.{mod}\n   :members:\n```')
    return '\n\n'.join(out) + '\n'

def _write_sources(app):
    """`_build/src/`: each notebook copied under its page's name (myst-nb runs it there; a symlink would send links to
    `nbs/`), `figures` (a link: the lessons read their saved data), the API page; each written only if it changed."""
    src = Path(app.srcdir)
    want = {f'{p2s.page(p.stem)}.ipynb': p.read_bytes() for p in p2s.NBS.glob('*.ipynb')} | {'api.md': _api_page().encode()}
    for f in src.glob('*.ipynb'):
        if f.name not in want: f.unlink()
    for name, data in want.items():
        if not (src / name).is_file() or (src / name).read_bytes() != data: (src / name).write_bytes(data)
    if not (src / 'figures').is_symlink(): (src / 'figures').symlink_to(os.path.relpath(p2s.NBS / 'figures', src))

def setup(app):
    app.connect('builder-inited', _write_sources)
    app.connect('autodoc-process-docstring', _docstring)
    app.connect('autodoc-skip-member', _skip)
