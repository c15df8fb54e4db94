"""Fast tests of the site build's conversion step (docs/proc2sphinx.py) and its checks.

The last test builds a throwaway Sphinx page with broken TeX and proves that the browser check
used on the real site (`check_page` in conftest.py) reports it.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_show_doc_markdown_loses_rule_quarto_attributes_and_source_link():
    md = p2s.clean_show_doc_markdown(SHOW_DOC)
    assert not md.startswith('---') and '{target=' not in md
    # the project has no public repository: nbdev's link to it goes, the heading comes first
    assert '[source]' not in md and md.lstrip().startswith('### gauss_second_moment')
    assert '[source]' not in p2s.clean_show_doc_markdown('[source]()\n\n### f')
    assert p2s.clean_show_doc_markdown('a [b](c.html){.x} d') == 'a [b](c.html) d'
    assert p2s.clean_show_doc_markdown('no rule {x}') == 'no rule {x}'  # braces not after a link stay


def test_numpydoc_sections_become_readable_markdown():
    md = p2s.clean_show_doc_markdown(
        '### f\n\n```python\ndef f(x, a<b):\n```\n\n*KL = -H[q] - <log p>_q.*\n\nParameters\n----------\n'
        'x : ndarray of shape (D,)\n    The mean <x> of q,\n    with ``<a>`` as code.\ny : int\n\n'
        'Examples\n--------\n>>> f(1)\n2\n\nReferences\n----------\nA. B (1999). <b>Title</b>.')
    assert '```python\ndef f(x, a<b):\n```' in md                       # the signature is untouched
    assert r'*KL = -H[q] - \<log p>_q.*' in md                            # angle brackets survive markdown
    assert '- **`x`** (ndarray of shape (D,)): The mean \\<x> of q, with ``<a>`` as code.' in md
    assert '- **`y`** (int)' in md and '**Parameters**' in md and '----------' not in md
    assert '```pycon\n>>> f(1)\n2\n```' in md
    assert '<b>Title</b>' in md                                           # real HTML tags are left alone


def test_links_to_notebooks_point_at_renamed_pages():
    pages = {'00_notation': 'notation', 'notation': 'notation'}
    site = ('https://org.github.io/pkg',)
    md = ('[a](00_notation.ipynb) [b](notation.html#gauss_second_moment) [c](/notation.html) '
          '[d](https://x.org/notation.html) [e](other.html) [f](https://org.github.io/pkg/notation.html#gamma_kl) '
          '[g](#The_Gamma) ![img](images/fig.png)')
    assert p2s.rewrite_links(md, pages, site) == (
        '[a](notation.html) [b](notation.html#gauss-second-moment) [c](notation.html) '
        '[d](https://x.org/notation.html) [e](other.html) [f](notation.html#gamma-kl) '
        '[g](#the-gamma) ![img](images/fig.png)')
    # nbdev links private helpers too, but no page documents them: they stay code, unlinked
    md = 'uses [`_tril_inv`](/linalg.html#_tril_inv) and [`tril`](/linalg.html#tril)'
    assert p2s.rewrite_links(md, {'linalg': 'linalg'}) == 'uses `_tril_inv` and [`tril`](linalg.html#tril)'
    # a link nbdev put inside a double-backtick span is the link, not literal code
    md = "scikit-learn's `[`Bunch`](/data.html#bunch)`."
    assert p2s.rewrite_links(md, {'data': 'data'}) == "scikit-learn's [`Bunch`](data.html#bunch)."


def test_page_names_and_order():
    assert p2s.page_name('_proc/00_notation.ipynb', {'output-file': 'notation.html'}) == 'notation'
    assert p2s.page_name('_proc/index.ipynb', None) == 'index'
    names = ['03a_householder', '10_more', '01_symbolic', 'index', '03_rjmcmc', '00_notation']
    assert sorted(names, key=p2s.page_sort_key) == ['index', '00_notation', '01_symbolic', '03_rjmcmc',
                                                    '03a_householder', '10_more']


def test_convert_notebook():
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {}, 'cells': [
        cell('raw', FM, id='a'),
        cell('markdown', 'See [x](00_notation.ipynb).', id='b'),
        cell('code', '#| echo: false\n#| output: asis\nshow_doc(f)', id='c', execution_count=1, outputs=[
            {'output_type': 'execute_result', 'execution_count': 1, 'metadata': {},
             'data': {'text/markdown': SHOW_DOC, 'text/plain': 'f'}}]),
        cell('code', '#| code-fold: true\nx = 1', id='d', execution_count=2, outputs=[])]}
    out = p2s.convert_notebook(nb, {'00_notation': 'notation', 'notation': 'notation'})
    c0, c1, c2, c3 = out['cells']
    assert c0['cell_type'] == 'markdown' and c0['source'].startswith('# Notation\n\nSymbols') and c0['id']
    assert c1['source'] == 'See [x](notation.html).'
    assert c2['source'] == 'show_doc(f)' and c2['metadata']['tags'] == ['remove-input']
    assert c2['outputs'][0]['data']['text/markdown'].lstrip().startswith('### gauss_second_moment')
    assert c3['source'] == 'x = 1' and 'tags' not in c3['metadata']
    assert nb['cells'][0]['cell_type'] == 'raw', 'the input notebook must not be modified'


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
        '$$\\langle x^{2 \\rangle} = m^2 + \\sigma^2$$\n\nIn plain text: loggamma(a_0).\n')
    subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-W', '-q', str(src), str(out)], check=True)
    with serve(out) as url:
        good, wide = check_page(browser, url + 'index.html'), check_page(browser, url + 'wide.html')
    assert good.problems() == [], good.problems()
    found = wide.problems()
    for what in ('equation', 'code block', 'numpy scalar repr', 'raw dict dump', 'raw pipe text', '__main__.',
                 'raw $$', 'Python warning', 'SymPy function name in the math', 'SymPy function name in the text',
                 'symbol name split by SymPy'):
        assert any(what in p for p in found), (what, found)


def test_named_tuples_show_their_fields():
    from vbfa_lit.vbpca import Observed
    md = '### Observed\n\n```python\ndef Observed(\n    *args, **kwargs\n):\n```\n\n*Observed entries.*'
    out = p2s.namedtuple_fields(md)
    assert 'kwargs' not in out and 'class Observed(NamedTuple):' in out
    assert all(f'    {f}' in out for f in Observed._fields)
    assert '# ' in out.split('```')[1]                    # the fields keep their comments
    assert p2s.namedtuple_fields(md, lookup=lambda name: None) == md   # unknown names are left alone


def test_text_artefacts_are_detected():
    "The checks every page of the site passes would catch each artefact a reader once saw."
    from conftest import text_artefacts
    assert text_artefacts('| dataset | D |\n|---|---|\n| 1 | 5 |') == ['a markdown table rendered as raw pipe text']
    assert text_artefacts('x: __main__.Observed') == ['a type shown as __main__.<name>']
    assert text_artefacts('Alias for field number 0') == ['namedtuple filler "Alias for field number"']
    assert text_artefacts('As :func:load_mnist.') == ["a Sphinx role left as text: ':func:'"]
    assert text_artefacts('a | b, and ---- alone, main.py') == []
    assert text_artefacts('Below: $$ \\log p $$') == ["raw $$ left in the text: 'Below: $$ \\\\log p $$'"]
    assert text_artefacts('x.py:3: UserWarning: Unknown section') == [
        "a Python warning printed on the page: 'UserWarning: Unknown section'"]
    assert text_artefacts('then polygamma(0, a) and loggamma (a_0)') == [
        "a SymPy function name in the text: 'polygamma('", "a SymPy function name in the text: 'loggamma ('"]
    assert text_artefacts('ConvergenceWarning is raised when max_iter runs out; the digamma function') == []
    from conftest import math_artefacts, output_artefacts
    assert math_artefacts([r'\operatorname{polygamma}{\left(0,a \right)}', r'\operatorname{loggamma}{\left(a_{0} \right)}'])
    assert math_artefacts([r'\langle x^{2 \rangle}']) and not math_artefacts([r'\langle {w_{1}}^{2} \rangle'])
    assert math_artefacts([r'\psi\left(a\right) - \log\Gamma\left(a_{0}\right)', r'\langle x^2 \rangle']) == []
    assert output_artefacts(['/x/docscrape.py:434: UserWarning: Unknown section See Also']) != []
    # the package's warnings caught and printed on purpose (04a's guard rails) are content
    assert output_artefacts(['MissingDataWarning: X: 1 of 8 samples (rows) have no observed value']) == []


def test_wrapped_return_comment_of_a_signature_stays_a_comment():
    md = p2s.signature_comments('x\n```python\ndef f(\n    a, # c\n): # long return\nfixed ``R``.\n```\nafter')
    assert md == 'x\n```python\ndef f(\n    a, # c\n): # long return\n# fixed ``R``.\n```\nafter'


def test_numpydoc_signature_drops_docments_comments_and_wraps_long_defaults():
    md = ('```python\ndef f(\n    x, # The data.\n    # (continued)\n    urls:tuple=(\'https://a.example/x/\', '
          '\'https://b.example/very/long/path/to/a/file/\', \'https://c.example/another/long/path/\'), # Where.\n'
          '): # X : the result\nmore : of the return comment\n```\n\n*F.*\n\nParameters\n----------\nx : array\n')
    out = p2s.numpydoc_signature(md)
    assert out.startswith("```python\ndef f(\n    x,\n    urls:tuple=('https://a.example/x/',\n")
    assert '#' not in out.split('```')[1] and 'more : of' not in out and '\n):\n```' in out
    assert max(len(line) for line in out.split('```')[1].split('\n')) <= 100
    plain = md.replace('Parameters\n----------\n', '')          # docments only: the comments are the documentation
    assert p2s.numpydoc_signature(plain) == plain


def test_classes_without_a_signature_show_their_bases():
    md = '```python\ndef Oops(\n    *args, **kwargs\n):\n```\n\n*A warning.*'
    assert p2s.namedtuple_fields(md, lookup=lambda n: type(n, (UserWarning,), {})).startswith(
        '```python\nclass Oops(UserWarning)\n```')
    assert p2s.namedtuple_fields(md, lookup=lambda n: None) == md


def test_sphinx_roles_become_markdown():
    md = 'As :func:`load_mnist`; see :class:`~vbfa_lit.data.Bunch`; :math:`\\sum_n x_n` nats.'
    assert p2s.sphinx_roles(md) == 'As `load_mnist`; see `vbfa_lit.data.Bunch`; $\\sum_n x_n$ nats.'
    linked = 'applies :func:[`householder_matrix`](/stiefel.html#householder_matrix) to'
    assert p2s.sphinx_roles(linked) == 'applies [`householder_matrix`](/stiefel.html#householder_matrix) to'
