"""Fast tests of the site build's conversion step (docs/proc2sphinx.py) and its checks.

The last test builds a throwaway Sphinx page with broken TeX and proves that the browser check
used on the real site (`check_page` in conftest.py) reports it.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'docs'))
import build_site  # noqa: E402
import proc2sphinx as p2s  # noqa: E402

FM = '---\ndescription: Symbols, shapes and moments\noutput-file: notation.html\ntitle: Notation\n\n---\n\n'
SHOW_DOC = ('---\n\n[source](https://github.com/o/r/blob/main/pkg/notation.py#L10)'
            '{target="_blank" style="float:right; font-size:smaller"}\n\n'
            '### gauss_second_moment\n\n```python\ndef gauss_second_moment(mu, Sigma):\n```\n\n*Second moment.*')


def cell(kind, src, **kw): return {'cell_type': kind, 'metadata': {}, 'source': src, **kw}


def test_front_matter_becomes_title_and_description():
    fm = p2s.parse_front_matter(FM)
    assert fm == {'description': 'Symbols, shapes and moments', 'output-file': 'notation.html', 'title': 'Notation'}
    assert p2s.title_markdown(fm) == '# Notation\n\nSymbols, shapes and moments'
    assert p2s.title_markdown({'title': 'T'}) == '# T'
    assert p2s.parse_front_matter('just text') is None
    assert p2s.parse_front_matter('---\n- a list\n---') is None


def test_directives_are_split_off_and_mapped_to_tags():
    dirs, body = p2s.split_directives('#| echo: false\n#| output: asis\nshow_doc(f)\n#| not a directive here')
    assert dirs == {'echo': 'false', 'output': 'asis'}
    assert body == 'show_doc(f)\n#| not a directive here'
    assert p2s.split_directives('x = 1') == ({}, 'x = 1')
    assert p2s.split_directives('#| default_exp notation\n#| export\n#|code-fold: true\n\ny = 2') == (
        {'default_exp': 'notation', 'export': '', 'code-fold': 'true'}, 'y = 2')
    assert p2s.directive_tags(dirs) == ['remove-input']
    assert p2s.directive_tags({'include': 'false', 'output': 'false'}) == ['remove-cell', 'remove-output']
    assert p2s.directive_tags({'echo': 'true'}) == []
    assert p2s.directive_tags({'export': '', 'code-fold': 'true'}) == ['hide-input']


def test_links_to_notebooks_point_at_renamed_pages_and_api_entries():
    pages = {'00_notation': 'notation', 'notation': 'notation'}
    api = {'notation.html#gamma_kl': 'vbfa_lit.notation.gamma_kl', 'linalg.html#_tril_inv': None}
    md = ('[a](00_notation.ipynb) [b](notation.html#The_Gamma) [c](/notation.html) '
          '[d](https://x.org/notation.html) [e](other.html) [f](/notation.html#gamma_kl){target="_blank"} '
          '[g](#The_Gamma) ![img](images/fig.png)')
    assert p2s.rewrite_links(md, pages, api) == (
        '[a](notation.html) [b](notation.html#the-gamma) [c](notation.html) '
        '[d](https://x.org/notation.html) [e](other.html) [f](api.html#vbfa_lit.notation.gamma_kl) '
        '[g](#the-gamma) ![img](images/fig.png)')
    # nbdev links private helpers too, but the API page does not document them: they stay code, unlinked
    md = 'uses [`_tril_inv`](/linalg.html#_tril_inv) and [`gamma_kl`](/notation.html#gamma_kl)'
    assert p2s.rewrite_links(md, pages, api) == 'uses `_tril_inv` and [`gamma_kl`](api.html#vbfa_lit.notation.gamma_kl)'
    # a link nbdev put inside a double-backtick span is the link, not literal code
    md = "scikit-learn's `[`gamma_kl`](/notation.html#gamma_kl)`."
    assert p2s.rewrite_links(md, pages, api) == "scikit-learn's [`gamma_kl`](api.html#vbfa_lit.notation.gamma_kl)."


def test_page_names_and_order():
    assert p2s.page_name('_proc/00_notation.ipynb', {'output-file': 'notation.html'}) == 'notation'
    assert p2s.page_name('_proc/index.ipynb', None) == 'index'
    names = ['01a_plots', '10_benchmarks', '01_symbolic', 'index', '06_rjmcmc', '00_notation', '04b_imputing',
             '12_new', '01c_from_pca', '06b_rjmcmc_fast', '02c_vbpca_fast']
    lessons, appendix = p2s.page_order(names)
    # lessons in LESSONS order (a notebook is found by its number: 04b_imputing), absent ones skipped
    assert lessons == ['index', '01c_from_pca', '01_symbolic', '04b_imputing', '06_rjmcmc', '00_notation']
    # the engineering notebooks after them, then anything unlisted
    assert appendix == ['01a_plots', '02c_vbpca_fast', '06b_rjmcmc_fast', '10_benchmarks', '12_new']
    assert not set(p2s.LESSONS) & set(p2s.APPENDIX)


def show_doc_cell(name, i):
    return cell('code', f'#| echo: false\n#| output: asis\nshow_doc({name})', id=f'sd{i}', execution_count=i, outputs=[
        {'output_type': 'execute_result', 'execution_count': i, 'metadata': {},
         'data': {'text/markdown': SHOW_DOC, 'text/plain': name}}])


def test_convert_notebook():
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {}, 'cells': [
        cell('raw', FM, id='a'),
        cell('markdown', 'See [x](00_notation.ipynb).', id='b'),
        show_doc_cell('gauss_second_moment', 1), show_doc_cell('Gamma.kl', 2),
        cell('code', '#| code-fold: true\nx = 1', id='d', execution_count=3, outputs=[]),
        show_doc_cell('_private', 4)]}
    api = {'notation.html#gauss_second_moment': 'vbfa_lit.notation.gauss_second_moment',
           'notation.html#gamma.kl': 'vbfa_lit.notation.Gamma.kl', 'notation.html#_private': None}
    out = p2s.convert_notebook(nb, {'00_notation': 'notation', 'notation': 'notation'}, api, page='notation')
    c0, c1, c2, c3, c4 = out['cells']
    assert c0['cell_type'] == 'markdown' and c0['source'].startswith('# Notation\n\nSymbols') and c0['id']
    assert c1['source'] == 'See [x](notation.html).'
    # the two show_doc blocks are one line of links to the API page: no signature, no numpydoc sections
    assert c2['cell_type'] == 'markdown' and c2['source'] == (
        '*API reference:* [`gauss_second_moment`](api.html#vbfa_lit.notation.gauss_second_moment), '
        '[`Gamma.kl`](api.html#vbfa_lit.notation.Gamma.kl)')
    assert c3['source'] == 'x = 1' and c3['metadata']['tags'] == ['hide-input']   # folded, a click away
    assert c4['source'] == '*API reference:* `_private`'
    assert not any('show_doc' in p2s._src(c) or c.get('outputs') for c in out['cells'])
    assert nb['cells'][0]['cell_type'] == 'raw', 'the input notebook must not be modified'
    assert p2s.show_doc_name(cell('code', 'show_doc(VBPCA.fit, title_level=3)')) == 'VBPCA.fit'
    assert p2s.show_doc_name(cell('code', 'x = show_doc(f)')) is None


def test_broken_local_links_are_found(tmp_path):
    (tmp_path / 'a.html').write_text('<h2 id="s-1">S</h2><a href="b.html#x-y">ok</a><a href="#s-1">ok</a>'
                                     '<a href="https://x.org/nope.html">external</a><a href="c.html">no file</a>'
                                     '<a href="b.html#nope">no id</a>')
    (tmp_path / 'b.html').write_text('<p class="rubric" id="x-y">x_y</p>')
    assert build_site.broken_local_links(tmp_path) == [
        'a.html: c.html (no such file)', "a.html: b.html#nope (no id 'nope')"]


def test_external_references_are_found(tmp_path):
    (tmp_path / 'a.html').write_text(
        '<script src="_static/x.js"></script><script src="https://cdn.example.org/m.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/f.css"><link rel="next" href="https://x.org/b.html">'
        '<a href="https://x.org">fine: a link, not a load</a>')
    (tmp_path / 's.css').write_text('@import url("https://fonts.example.org/x.css"); a {background: url(img.png)}')
    bad = build_site.external_references(tmp_path)
    assert bad == ['a.html: <script https://cdn.example.org/m.js>', 'a.html: <link //fonts.example.org/f.css>',
                   's.css: https://fonts.example.org/x.css']


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
    subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-W', '-q', str(src), str(out)], check=True)
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
    subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-W', '-q', str(src), str(out)], check=True)
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
    assert text_artefacts('returns both. [VBPCA.impute] (04a_estimator.ipynb) returns') == [
        "a link left as text: 'returns both. [VBPCA.impute] (04a_estimator.ipynb)'"]
    assert text_artefacts('Below: $$ \\log p $$') == ["raw $$ left in the text: 'Below: $$ \\\\log p $$'"]
    assert text_artefacts('x.py:3: UserWarning: Unknown section') == [
        "a Python warning printed on the page: 'UserWarning: Unknown section'"]
    assert text_artefacts('then polygamma(0, a) and loggamma (a_0)') == [
        "a SymPy function name in the text: 'polygamma('", "a SymPy function name in the text: 'loggamma ('"]
    assert text_artefacts('ConvergenceWarning is raised when max_iter runs out; the digamma function') == []
    from conftest import unlinked_references
    assert unlinked_references('as in lesson 06a, and in lessons 02 and 04') == [
        "a lesson named but not linked: 'as in lesson 06a, and in lessons 02 '",
        "a lesson named but not linked: 'as in lesson 06a, and in lessons 02 and 04'"]
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
    out = p2s.convert_notebook(nb, {}, {}, page='x')
    assert [c['source'] for c in out['cells']] == ['def f():\n    return 1', nb['cells'][1]['source']]


@pytest.mark.browser
def test_browser_check_waits_for_every_image_and_reports_a_missing_one(tmp_path, browser, check_page, serve):
    """The page check reads each image of the article once it has finished: a lazy one far below loads, a missing
    one is reported."""
    import matplotlib.pyplot as plt
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
