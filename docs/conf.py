"""Sphinx configuration for the offline course site.

Built by `docs/build_site.py` with `-c docs` from the generated sources in `_build/sphinx_src/`
(converted from nbdev's `_proc/`). Everything the pages load is served from `_site/` itself:
MathJax 3 comes from sphinx-mathjax-offline, the theme bundles its own CSS/JS and fonts.
"""
import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(os.environ.get('SITE_ROOT') or Path(__file__).absolute().parent.parent)
sys.path.insert(0, str(ROOT))  # autodoc imports the package from the work tree

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
exclude_patterns = ['_build', 'jupyter_execute', '**.ipynb_checkpoints']
html_static_path = ['_static']
html_css_files = ['site.css']

# myst / myst-nb: the notebooks were already executed by build_site.py
nb_execution_mode = 'off'
myst_enable_extensions = ['dollarmath', 'amsmath', 'attrs_inline']
# Links were rewritten to relative .html URLs by proc2sphinx (show_doc anchors are rubrics that
# myst cannot resolve); build_site.py checks every local link and anchor in _site/ instead.
myst_all_links_external = True
nb_merge_streams = True
# Markdown outputs (show_doc, tables displayed with IPython's Markdown) in MyST, which has tables and math;
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


def _strip_nbdev_docs_line(app, what, name, obj, options, lines):
    "nbdev's module docstrings end with `Docs: <published URL>`; the site is that documentation."
    if what == 'module':
        lines[:] = [l for l in lines if not re.match(r'^\s*Docs:\s*https?://', l)]


_DOLLAR_MATH = re.compile(r'(?<![\\$])\$([^$\n]+?)\$(?!\$)')


def _dollar_math(app, what, name, obj, options, lines):
    "Module docstrings (nbdev copies each notebook's description) write math as $...$; reST needs the math role."
    if what == 'module': lines[:] = [_DOLLAR_MATH.sub(lambda m: ':math:`' + m.group(1) + '`', l) for l in lines]


_TRAILING_UNDERSCORE = re.compile(r'(?<=\w)_(?=[^\w`]|$)')


def _plain_underscores(app, what, name, obj, options, lines):
    "Docstrings are plain text: `n_components_` or '05_' is a name, not a reST reference (code spans stay)."
    doctest = False                                        # `>>>` blocks are literal: left alone
    for i, l in enumerate(lines):
        doctest = l.lstrip().startswith('>>>') or (doctest and bool(l.strip()))
        if not doctest:
            lines[i] = ''.join(p if p.startswith('`') else _TRAILING_UNDERSCORE.sub(r'\\_', p)
                               for p in re.split(r'(``.*?``|`[^`]*`)', l))


# "lesson 05" in a docstring: a link to that lesson's page on the site (`help()` keeps the plain words). A page is its
# notebook's stem without the number, as nbdev names it: 05_convergence.ipynb -> convergence.
_LESSON_PAGES = {p.stem.split('_', 1)[0]: p.stem.split('_', 1)[1] for p in (ROOT / 'nbs').glob('[0-9]*_*.ipynb')}
_LESSON_REF = re.compile(r'\b([Ll]esson) (\d\d[a-z]?)\b')


def _link_lessons(app, what, name, obj, options, lines):
    "Docstrings name lessons by number ('the pruning rule (lesson 03)'); on the API page each becomes a link."
    doctest = False
    for i, l in enumerate(lines):
        doctest = l.lstrip().startswith('>>>') or (doctest and bool(l.strip()))
        if not doctest:
            lines[i] = ''.join(p if p.startswith('`') else _LESSON_REF.sub(
                lambda m: f':doc:`{m.group(1)} {m.group(2)} <{_LESSON_PAGES[m.group(2)]}>`'
                if m.group(2) in _LESSON_PAGES else m.group(0), p) for p in re.split(r'(``.*?``|`[^`]*`)', l))


def _skip_namedtuple_aliases(app, what, name, obj, skip, options):
    "A NamedTuple field's docstring is 'Alias for field number N': filler; the fields are in the signature."
    doc = getattr(obj, '__doc__', None) or ''
    return True if re.fullmatch(r'Alias for field number \d+', doc.strip()) else skip


def setup(app):
    app.connect('autodoc-process-docstring', _dollar_math)
    app.connect('autodoc-process-docstring', _plain_underscores)
    app.connect('autodoc-skip-member', _skip_namedtuple_aliases)
    app.connect('autodoc-process-docstring', _strip_nbdev_docs_line)
    app.connect('autodoc-process-docstring', _link_lessons)
    # sphinx-mathjax-offline only copies files on `build-finished` but does not declare itself
    # parallel-safe, which is a warning (an error under -W) with `-j 2`.
    ext = app.extensions.get('sphinx-mathjax-offline')
    if ext is not None: ext.parallel_read_safe = ext.parallel_write_safe = True
