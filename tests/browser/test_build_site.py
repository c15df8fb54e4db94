"""Fast tests of the site's bridge from nbdev to myst-nb (docs/proc2sphinx.py, docs/conf.py) and of its checks.

The conversion must be deterministic (jupyter-cache keys on the converted code cells); small Sphinx projects show
that myst-nb's cache runs a notebook once, again only when its code changes, and names a failing cell, and that the
links the bridge makes are resolved and checked by Sphinx. The browser tests build throwaway pages with broken TeX or
overflowing content and prove that the page check used on the real site (`check_page` in conftest.py) reports them.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from fastcore.nbio import NbCell

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / 'docs'), str(ROOT / 'tests')]
import proc2sphinx as p2s  # noqa: E402
from notebook_text import page_order  # noqa: E402


def cell(kind, src, **kw): return {'cell_type': kind, 'metadata': {}, 'source': src, **kw}


def code(src, i=0, outputs=(), metadata=None):
    return {'cell_type': 'code', 'id': f'c{i}', 'metadata': metadata or {}, 'source': src, 'execution_count': None,
            'outputs': list(outputs)}


def test_title_cell_becomes_numbered_title_description_and_notation_line():
    src = '# Variational Bayesian PCA\n\n> Bishop\'s model\n\nMore text.'
    assert p2s.title_markdown(src, '03_vbpca') == "# 03 · Variational Bayesian PCA\n\nBishop's model\n\nMore text."
    md = p2s.title_markdown(src, '03_vbpca', notation=True, contents=True)
    assert '[notation reference](notation.ipynb)' in md and f'(notation.ipynb#{p2s.PRML_ANCHOR})' in md
    assert '{contents}' in md and md.endswith('More text.')
    assert p2s.title_markdown('# Bayesian PCA', 'index') == '# Bayesian PCA'


def directives(src):
    "A code cell's directives and the code under them, as nbdev (fastcore's NbCell) reads them and the bridge uses them."
    c = NbCell(0, code(src))
    dirs = c.directives
    c.remove_directives()
    return dirs, c.source


def test_directives_are_split_off_and_mapped_to_tags():
    dirs, body = directives('#| echo: false\n#| output: asis\nshow_doc(f)\n#| not a directive here')
    assert dirs == {'echo': 'false', 'output': 'asis'}
    assert body == 'show_doc(f)\n#| not a directive here'
    assert directives('x = 1') == ({}, 'x = 1')
    assert directives('#| default_exp notation\n#| export\n#|code-fold: true\n\ny = 2') == (
        {'default_exp': 'notation', 'export': '', 'code-fold': ''}, 'y = 2')     # fastcore: '' for true
    assert p2s.directive_tags(dirs) == ['remove-input']
    assert p2s.directive_tags({'include': 'false', 'output': 'false'}) == ['remove-cell', 'remove-output']
    assert p2s.directive_tags({'echo': 'true'}) == p2s.directive_tags({'echo': ''}) == []
    assert p2s.directive_tags({'code-fold': ''}) == p2s.directive_tags({'code-fold': 'true'}) == ['hide-input']
    assert p2s.directive_tags({'code-fold': 'show'}) == []
    # run but not shown; shown with their saved outputs but not run (as nbdev-test skips them)
    assert p2s.directive_tags({'export': 'rjmcmc'}) == p2s.directive_tags({'hide': ''}) == ['remove-cell']
    assert p2s.directive_tags({'slow': ''}) == p2s.directive_tags({'eval': 'false'}) == ['skip-execution']


def test_html_outputs_link_the_pages():
    html = '<svg><a xlink:href="04_ard.ipynb"><path/></a><a href="04_ard.ipynb#why-ard">x</a><a href="a.ipynb">y</a></svg>'
    assert p2s.rewrite_html_links(html) == (
        '<svg><a xlink:href="ard.html"><path/></a><a href="ard.html#why-ard">x</a><a href="a.ipynb">y</a></svg>')


def sphinx_build(*args) -> subprocess.CompletedProcess:
    """`python -m sphinx *args`, run in this process (as `sphinx-build` runs it: `build_main`), its output captured.

    A Sphinx process of its own spent about 3 CPU-s importing (nbformat's jsonschema alone about 2) before it read a
    page; this test module has imported the same modules already (proc2sphinx), so each small build costs well under
    a second. Sphinx sets up its logging, registries and docutils roles per build and restores them after."""
    import warnings
    from sphinx.cmd.build import build_main
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter('ignore')       # the extensions' DeprecationWarnings, which a build process kept to itself
        rc = build_main([str(a) for a in args])
    return subprocess.CompletedProcess(['sphinx', *args], rc, out.getvalue(), err.getvalue())


def _site(tmp_path, prose, outputs=()):
    """A Sphinx project as docs/conf.py sets it up (myst-nb, proc2sphinx, -W --keep-going): `lesson.ipynb` (markdown
    `prose`, a code cell with saved `outputs`), `vbpca.md` (lesson 03's page), an API page declaring `VBPCA.fit`."""
    src = tmp_path / 'src'
    src.mkdir(exist_ok=True)
    (src / 'conf.py').write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'docs')!r})\nextensions = ['myst_nb', 'proc2sphinx']\n"
        "nb_execution_mode = 'off'\nmyst_enable_extensions = ['dollarmath', 'amsmath']\nmyst_heading_anchors = 4\n"
        "myst_heading_slug_func = 'docutils'\n")
    (src / 'index.md').write_text('# Index\n\n```{toctree}\nlesson\nvbpca\napi\n```\n')
    (src / 'vbpca.md').write_text('# VB PCA\n\n## The sampler\n\nText.\n')
    (src / 'api.md').write_text('# API\n\n```{py:class} vbfa_lit.estimator.VBPCA\n\n```{py:method} fit(X)\n```\n```\n')
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3'},
                                                           'language_info': {'name': 'python'}},
          'cells': [cell('markdown', f'# Lesson\n\n{prose}', id='m'), code('1', 1, outputs=list(outputs))]}
    (src / 'lesson.ipynb').write_text(json.dumps(nb))
    run = sphinx_build('-b', 'html', '-W', '--keep-going', '-q', '-E', src, tmp_path / 'html')
    return run, (tmp_path / 'html' / 'lesson.html').read_text()


def test_links_point_at_pages_and_api_entries_sphinx_resolves(tmp_path):
    """nbdev's notebook names, `api.html#name`, 'lesson 03' and backticked API names become links Sphinx resolves; a
    broken one fails the build (-W) with its own warning, and nothing else does."""
    prose = ('[a](03_vbpca.ipynb), [b](03_vbpca.ipynb#the-sampler), [c](api.html#vbfa_lit.estimator.VBPCA), [d](api.html),'
             ' [e](https://x.org/a.ipynb); as lesson 03 shows (`lesson 03` in code stays), use `VBPCA` and '
             '`VBPCA.fit()`, not `other`; [`VBPCA`](03_vbpca.ipynb) keeps its link.\n\n'
             '$$\na = b \\\\\n  c = d \\tag{3.2}\n$$\n\nand $$x = y$$ without a tag.\n\n'
             # a missing section, a missing API entry, lesson 04 (a real notebook, but no page of this project)
             'Broken: [x](03_vbpca.ipynb#no-such-section), [y](api.html#vbfa_lit.estimator.Nothing), lesson 04.')
    run, html = _site(tmp_path, prose, [{'output_type': 'display_data', 'metadata': {},
                                          'data': {'text/markdown': 'An output: `VBPCA`', 'text/plain': 'x'}}])
    assert run.returncode != 0
    warnings = [l for l in run.stderr.splitlines() if 'WARNING' in l]
    assert len(warnings) == 3, run.stderr
    for w, expected in zip(warnings, ["local id not found in doc 'vbpca': 'no-such-section'",
                                      "target not found: 'vbfa_lit.estimator.Nothing'", "Unknown source document 'ard'"]):
        assert 'lesson.ipynb' in w and expected in w, (w, expected)
    for a in ['href="vbpca.html"><span class="std std-doc">a</span>', 'href="vbpca.html#the-sampler"',
              'href="api.html#vbfa_lit.estimator.VBPCA" title="vbfa_lit.estimator.VBPCA"><span class="xref myst py py-class">c',
              'href="api.html"><span class="std std-doc">d', 'href="https://x.org/a.ipynb"',
              'href="vbpca.html"><span class="std std-doc">lesson 03</span>',
              'href="api.html#vbfa_lit.estimator.VBPCA.fit" title="vbfa_lit.estimator.VBPCA.fit"><span class="xref myst py '
              'py-meth"><code class="docutils literal notranslate"><span class="pre">VBPCA.fit()</span>',
              ', not <code class="docutils literal notranslate"><span class="pre">other</span></code>;',
              'href="vbpca.html"><span class="std std-doc"><code',
              '\\begin{equation*}\n\\begin{split}a = b \\\\\n  c = d\\end{split}\n\\tag{3.2}\n\\end{equation*}']:
        assert a in html, a
    assert html.count('href="api.html#vbfa_lit.estimator.VBPCA"') == 2             # [c] and `VBPCA`, not the output's
    assert 'lesson</span> <span class="pre">03</span>' in html and '\\begin{equation}' not in html


def test_page_names_and_order_come_from_nbdev_and_the_toctree():
    assert p2s.page('00_notation') == 'notation' and p2s.page('06_estimator') == 'estimator' and p2s.page('index') == 'index'
    toc = (ROOT / 'docs' / 'toc.md').read_text()
    listed = [l for l in toc.splitlines() if l and l[0].isalpha()]
    assert [p2s.page(s) for s in p2s.LESSONS[1:] + p2s.APPENDIX] + ['api'] == listed
    assert p2s.LESSONS[0] == 'index' and not set(p2s.LESSONS) & set(p2s.APPENDIX)
    lessons, appendix = page_order(['12_new', '20_plots', '00_notation', 'index', '01_from_pca', '22_linalg'])
    assert lessons == ['index', '00_notation', '01_from_pca'] and appendix == ['20_plots', '22_linalg', '12_new']
    nbs = sorted(p.stem for p in (ROOT / 'nbs').glob('*.ipynb'))
    assert sorted(p2s.LESSONS + p2s.APPENDIX) == nbs, 'every notebook is listed in docs/toc.md'


def show_doc_cell(name, i): return code(f'#| echo: false\n#| output: asis\nshow_doc({name})', i)


def notebook():
    return {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {'kernelspec': {'name': 'python3'}}, 'cells': [
        cell('markdown', '# Notation\n\n> Symbols\n\n## A\n\n## B\n\n## C', id='t'),
        code('#| default_exp notation', 1),
        code('#| export\ndef gamma_kl(a, b):\n    "KL."\n    return a\n\ndef _private(): pass', 2),
        show_doc_cell('Gamma.kl', 3), show_doc_cell('_helper', 4),
        cell('markdown', 'See [x](03_vbpca.ipynb) and `gamma_kl`.', id='m'),
        code('#| slow\nbig()', 5, outputs=[{'output_type': 'stream', 'name': 'stdout', 'text': 'saved'}]),
        code('#| code-fold: true\nx = 1', 6, metadata={'tags': ['mine']})]}


def test_convert_notebook():
    nb = notebook()
    out = p2s.convert_notebook(nb, '00_notation', key='k1')
    title, export, apiline, md, slow, fold = out['cells']
    assert title['source'].startswith('# 00 · Notation\n\nSymbols\n\n```{contents}')   # a reference: no notation line
    assert export['source'].startswith('def gamma_kl') and export['metadata'] == {'tags': ['remove-cell'], 'vbfa_lit_key': 'k1'}
    # the exported cell's public names and the show_doc cells: one line naming them (LinkNames links them), no signatures
    assert apiline['source'] == '*API reference:* `gamma_kl`, `Gamma.kl`, `_helper`'
    assert md['source'] == 'See [x](03_vbpca.ipynb) and `gamma_kl`.'   # links are made on the doctree
    assert slow['metadata']['tags'] == ['skip-execution'] and slow['outputs'][0]['text'] == 'saved'
    assert fold['source'] == 'x = 1' and fold['metadata']['tags'] == ['mine', 'hide-input']
    assert nb == notebook(), 'the input notebook must not be modified'
    lesson = p2s.convert_notebook(nb, '03_vbpca')
    assert lesson['cells'][0]['source'].startswith('# 03 · Notation\n\nSymbols\n\n*Symbols:*')
    index = p2s.convert_notebook(nb, 'index')
    assert '{toctree}' in index['cells'][-1]['source'] and ':caption: Appendix' in index['cells'][-1]['source']


def test_the_execution_cache_key_depends_on_code_and_library_only():
    "jupyter-cache hashes the code cells (source, metadata): the conversion must give the same cells every time."
    from jupyter_cache.cache.main import JupyterCacheBase
    import nbformat
    key = lambda nb, lib='k1': JupyterCacheBase.create_hashed_notebook(
        None, nbformat.from_dict(p2s.convert_notebook(nb, '03_vbpca', key=lib)), cell_metadata=None)[1]
    nb = notebook()
    assert key(nb) == key(notebook())
    nb['cells'][5]['source'] = 'Other prose, [a link](04_ard.ipynb).'          # markdown only: same key
    assert key(nb) == key(notebook())
    assert key(nb, 'k2') != key(nb)                                          # the library changed
    nb['cells'][7]['source'] = '#| code-fold: true\nx = 2'                    # code changed
    assert key(nb) != key(notebook())


def _project(tmp_path, cells):
    "A Sphinx project of one notebook, converted and executed as docs/conf.py does."
    src = tmp_path / 'src'
    src.mkdir(exist_ok=True)
    (src / 'conf.py').write_text(
        f"import sys; sys.path.insert(0, {str(ROOT / 'docs')!r})\n"
        "extensions = ['myst_nb', 'proc2sphinx']\nroot_doc = 'lesson'\nnb_execution_mode = 'cache'\n"
        f"nb_execution_raise_on_error = False\nnb_execution_show_tb = True\nnb_execution_cache_path = {str(tmp_path / 'cache')!r}\n")
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'cells': cells, 'metadata': {
        'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}}}
    (src / 'lesson.ipynb').write_text(json.dumps(nb))
    # one notebook: Sphinx reads it in one process whatever -j says (it forks readers for more than 5 documents)
    return sphinx_build('-b', 'html', '-W', '--keep-going', '-j', '1', '-v', src, tmp_path / 'html')


def test_myst_nb_cache_runs_a_notebook_once_and_names_a_failing_cell(tmp_path):
    cells = [cell('markdown', '# T', id='t'), code("#| hide\nprint('ran' + 'X')", 1), code('#| slow\n1/0', 2)]
    first = _project(tmp_path, cells)
    assert first.returncode == 0, first.stderr
    assert 'Executed notebook' in first.stdout and 'ranX' not in (tmp_path / 'html' / 'lesson.html').read_text()
    cells[0]['source'] = '# T\n\nNew prose.'                                 # prose only: Sphinx re-reads, no run
    again = _project(tmp_path, cells)
    assert again.returncode == 0 and 'Using cached notebook' in again.stdout and 'Executed' not in again.stdout
    cells.append(code("raise ValueError('the fault')", 3))
    failed = _project(tmp_path, cells)
    assert failed.returncode != 0
    out = re.sub(r'\x1b\[[0-9;]*m', '', failed.stdout + failed.stderr)    # IPython's colours
    assert 'lesson.ipynb' in out and "raise ValueError('the fault')" in out and 'ValueError: the fault' in out


@pytest.mark.browser
def test_browser_check_reports_broken_tex(tmp_path, browser, check_page, serve):
    src, out = tmp_path / 'src', tmp_path / 'html'
    src.mkdir()
    (src / 'conf.py').write_text(
        "extensions = ['myst_parser', 'sphinx.ext.mathjax', 'sphinx-mathjax-offline']\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath']\n"
        "mathjax3_config = {'tex': {'packages': {'[-]': ['noundefined']}}}  # as docs/conf.py\n")
    (src / 'index.md').write_text('# Good\n\n$$\\frac{1}{2}$$\n\n```{toctree}\n:hidden:\nbroken\n```\n')
    (src / 'broken.md').write_text('# Broken\n\nFine: $$a+b$$\n\nUnclosed brace:\n\n$$\\frac{1}{$$\n\n'
                                   'Extra brace: $$x}$$\n\nUnknown macro: $$\\notamacro{x}$$\n')
    built = sphinx_build('-b', 'html', '-W', '-q', src, out)
    assert built.returncode == 0, built.stderr
    with serve(out) as url:
        good, broken = check_page(browser, url + 'index.html'), check_page(browser, url + 'broken.html')
    assert good.problems() == [] and good.mathjax_ok and good.mjx_containers == 1
    assert broken.mathjax_ok
    errs = broken.math_errors
    assert any(e.startswith('not typeset') and '\\frac{1}{' in e for e in errs), errs
    assert sum(e.startswith('MathJax error') for e in errs) == 2, errs
    assert [p for p in broken.problems() if not p.startswith('broken TeX')] == []
    assert len(broken.problems()) == 3


@pytest.mark.browser
def test_browser_check_reports_what_does_not_fit(tmp_path, browser, check_page, serve):
    "A page that brings back any artefact a reader once saw fails the page check; a clean one passes."
    src, out = tmp_path / 'src', tmp_path / 'html'
    src.mkdir()
    (src / 'conf.py').write_text(
        "extensions = ['myst_parser', 'sphinx.ext.mathjax', 'sphinx-mathjax-offline']\n"
        "myst_enable_extensions = ['dollarmath', 'amsmath']\n")
    long_sum = ' + '.join(f'a_{{{i}}} b_{{{i}}}' for i in range(60))
    (src / 'index.md').write_text('# Fits\n\n$$a + b$$\n\n```python\nx = 1\n```\n\n'
                                  '<div class="cell_output"><pre>max |difference| = 2.2e-16</pre></div>\n\n'
                                  # code shown with its body is what a lesson should show: not an API entry
                                  '<div class="cell_output"><pre>def update(x):\n    return 2 * x</pre></div>\n\n'
                                  '```{toctree}\n:hidden:\nwide\n```\n')
    (src / 'wide.md').write_text(
        f'# Does not fit\n\n$$\n{long_sum}\n$$\n\n```python\nx = {" + ".join(["1"] * 120)}\n```\n\n'
        '<div class="cell_output"><pre>[np.float64(4.44e-16), np.float64(0.0)]</pre></div>\n\n'
        '<div class="cell_output"><pre>' + "{'1/ARD/D=5': " + "'1.2x', " * 30 + '}</pre></div>\n\n'
        '<p>| dataset | D |<br>|---|---|</p>\n\nThe type is `__main__.Observed`.\n\n'
        # faults a reader once saw: raw $$ in the text (a display equation inside a list item), a warning printed
        # by a build step, SymPy's function names and a symbol name split by SymPy's printer in typeset math
        'The log joint of a small explicit problem:\n$$ \\log p(\\mathbf{Y}) = a\n- b $$\n\n'
        '<div class="cell_output"><pre>docscrape.py:434: UserWarning: Unknown section See Also</pre></div>\n\n'
        '$$\\langle \\log \\theta \\rangle = \\operatorname{polygamma}{\\left(0,a \\right)} - \\log b$$\n\n'
        '$$\\langle x^{2 \\rangle} = m^2 + \\sigma^2$$\n\nIn plain text: loggamma(a_0).\n\n'
        # nbdev's show_doc block of an exported function, as the lessons printed it before the API page held it
        '<div class="cell_output"><div class="highlight-python"><pre>def gamma_kl(\n    a, # shape\n    b, # rate\n'
        ') -> float: # nats\n</pre></div><p><em>KL divergence.</em></p></div>\n')
    built = sphinx_build('-b', 'html', '-W', '-q', src, out)
    assert built.returncode == 0, built.stderr
    with serve(out) as url:
        good, wide = check_page(browser, url + 'index.html'), check_page(browser, url + 'wide.html')
    assert good.problems() == [], good.problems()
    found = wide.problems()
    for what in ('equation', 'code block', 'numpy scalar repr', 'raw dict dump', 'raw pipe text', '__main__.',
                 'raw $$', 'Python warning', 'SymPy function name in the math', 'SymPy function name in the text',
                 'symbol name split by SymPy', 'show_doc signature block'):
        assert any(what in p for p in found), (what, found)


def test_text_artefacts_are_detected():
    "The checks every page of the site passes would catch each artefact a reader once saw."
    from conftest import text_artefacts
    assert text_artefacts('| dataset | D |\n|---|---|\n| 1 | 5 |') == ['a markdown table rendered as raw pipe text']
    assert text_artefacts('x: __main__.Observed') == ['a type shown as __main__.<name>']
    assert text_artefacts('Alias for field number 0') == ['namedtuple filler "Alias for field number"']
    assert text_artefacts('As :func:load_mnist.') == ["a Sphinx role left as text: ':func:'"]
    assert text_artefacts('a | b, and ---- alone, main.py') == []
    assert text_artefacts('returns both. [VBPCA.impute] (06_estimator.ipynb) returns') == [
        "a link left as text: 'returns both. [VBPCA.impute] (06_estimator.ipynb)'"]
    assert text_artefacts('Below: $$ \\log p $$') == ["raw $$ left in the text: 'Below: $$ \\\\log p $$'"]
    assert text_artefacts('x.py:3: UserWarning: Unknown section') == [
        "a Python warning printed on the page: 'UserWarning: Unknown section'"]
    assert text_artefacts('then polygamma(0, a) and loggamma (a_0)') == [
        "a SymPy function name in the text: 'polygamma('", "a SymPy function name in the text: 'loggamma ('"]
    assert text_artefacts('ConvergenceWarning is raised when max_iter runs out; the digamma function') == []
    from conftest import unlinked_references
    assert unlinked_references('as in lesson 11, and in lessons 03 and 05') == [
        "a lesson named but not linked: 'as in lesson 11, and in lessons 03 '",
        "a lesson named but not linked: 'as in lesson 11, and in lessons 03 and 05'"]
    assert unlinked_references('as in , and in  and ') == []     # the same prose with its links removed
    from conftest import math_artefacts, output_artefacts
    assert math_artefacts([r'\operatorname{polygamma}{\left(0,a \right)}', r'\operatorname{loggamma}{\left(a_{0} \right)}'])
    assert math_artefacts([r'\langle x^{2 \rangle}']) and not math_artefacts([r'\langle {w_{1}}^{2} \rangle'])
    assert math_artefacts([r'\psi\left(a\right) - \log\Gamma\left(a_{0}\right)', r'\langle x^2 \rangle']) == []
    assert output_artefacts(['/x/docscrape.py:434: UserWarning: Unknown section See Also']) != []
    # the package's warnings caught and printed on purpose (04a's guard rails) are content
    assert output_artefacts(['MissingDataWarning: X: 1 of 8 samples (rows) have no observed value']) == []
    # an API entry (show_doc's signature alone) on a page fails; code with its body, or any other output, does not
    assert output_artefacts(['def f(\n    x, # data, shape (n, d)\n): # the mean\n']) != []
    assert output_artefacts(['class VBPCA(BaseEstimator)']) != []
    assert output_artefacts(['Text(0.5, 1.0, "exercise 3: the broad prior\'s L(r)")']) != []
    assert output_artefacts(['[<matplotlib.lines.Line2D at 0x7f>]']) != [] and output_artefacts(['Text of a table']) == []
    assert output_artefacts(['def f(x):\n    return x + 1', 'class A:\n    x: int', 'define the prior']) == []


def test_shown_library_code_loses_its_docstrings():
    src = ('def f(x):\n    """One line.\n\n    Parameters\n    ----------\n    x : float\n    """\n    return x\n\n'
           'class C:\n    "Doc."\n    y = 1\n\ndef g():\n    "Only a docstring."\n')
    assert p2s.strip_docstrings(src) == 'def f(x):\n    return x\n\nclass C:\n    y = 1\n\ndef g():\n    "Only a docstring."\n'
    assert p2s.strip_docstrings('%timeit f(1)') == '%timeit f(1)'
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {}, 'cells': [
        cell('code', '#| code-fold: show\n#| code-summary: "Exported source"\n#| exports\ndef f():\n    "Doc."\n    return 1',
             id='e', execution_count=1, outputs=[]),
        cell('code', 'def h():\n    "Kept: a lesson cell."\n    return 2', id='l', execution_count=2, outputs=[])]}
    out = p2s.convert_notebook(nb, '24_vbpca_fast')
    assert [c['source'] for c in out['cells']] == ['def f():\n    return 1', nb['cells'][1]['source']]


@pytest.mark.browser
def test_browser_check_waits_for_every_image_and_reports_a_missing_one(tmp_path, browser, check_page, serve):
    """The page check reads each image of the article once it has finished: a lazy one far below loads, a missing
    one is reported."""
    import matplotlib.pyplot as plt
    import numpy as np
    plt.imsave(tmp_path / 'a.png', np.arange(12.0).reshape(3, 4))
    (tmp_path / 'index.html').write_text(
        '<html><body><article><p>A figure.</p><img src="a.png">'
        '<div style="height:20000px"></div><img src="a.png?lazy" loading="lazy">'
        '<img src="missing.png"></article></body></html>')
    with serve(tmp_path) as url:
        rep = check_page(browser, url + 'index.html')
    widths = {src.rsplit('/', 1)[1]: w for src, w in rep.images}
    assert widths == {'a.png': 4, 'a.png?lazy': 4, 'missing.png': 0}, rep.images
    assert any('image not loaded' in p and 'missing.png' in p for p in rep.problems()), rep.problems()


def test_internal_exports_are_removed_like_exports():
    "`#| exporti` cells (plumbing exported outside `__all__`) leave the page as `#| export` cells do."
    for d in ('export', 'exporti'):
        assert 'remove-cell' in p2s.directive_tags(directives(f'#| {d}\ndef f(): pass')[0])


@pytest.mark.browser
def test_browser_check_reports_each_pages_own_external_and_failed_requests(tmp_path, browser, check_pages, serve):
    """Pages checked together (tabs of one context, one HTTP cache) each report their own external requests (sent
    nowhere), missing files and errors; a file one page fetched does not hide another page's failure."""
    (tmp_path / 'ok.js').write_text('window.ok = 1;\n')
    (tmp_path / 'a.html').write_text(
        '<html><body><article><p>A.</p><script src="ok.js"></script><script src="missing.js"></script>'
        '<img src="http://example.com/x.png"></article></body></html>')
    (tmp_path / 'b.html').write_text(
        '<html><body><article><p>B.</p><script src="ok.js"></script><script src="missing.js"></script>'
        '<script src="http://203.0.113.9/y.js"></script><script>throw new Error("b fails")</script>'
        '</article></body></html>')
    (tmp_path / 'c.html').write_text('<html><body><article><p>C.</p><script src="ok.js"></script></article></body></html>')
    with serve(tmp_path) as url:
        a, b, c = check_pages(browser, [url + 'a.html', url + 'b.html', url + 'c.html'])
    assert a.external_requests == ['http://example.com/x.png'], a.external_requests
    assert b.external_requests == ['http://203.0.113.9/y.js'], b.external_requests
    for rep in (a, b):
        assert [f for f in rep.failed_requests if 'missing.js' in f and 'HTTP 404' in f], rep.failed_requests
        assert not [f for f in rep.failed_requests if 'example.com' in f or '203.0.113.9' in f], rep.failed_requests
    assert b.page_errors and 'b fails' in b.page_errors[0] and not a.page_errors, (a.page_errors, b.page_errors)
    assert c.problems() == [], c.problems()
