"""The frame of the course without a browser: the checks of tests/browser/test_course_frame.py catch what they claim to
(a synthetic page with a leak and one over the code budget fails them), the sidebar numbering of the site build, and
the front page: the clickable map of methods, its caption, and a link to every page."""
from __future__ import annotations

import importlib.util

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from notebook_text import NBS, ROOT, flat, prose  # noqa: E402
import proc2sphinx as p2s  # noqa: E402  (docs/ is on the path once notebook_text is imported)

_spec = importlib.util.spec_from_file_location('course_frame', ROOT / 'tests' / 'browser' / 'test_course_frame.py')
frame = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(frame)


def page(body: str) -> str:
    return f'<html><body><nav>tests/not_in_the_article.py</nav><article>{body}</article></body></html>'


def code(lines, folded=False) -> str:
    block = '<div class="cell_input"><div class="highlight"><pre>' + '\n'.join(lines) + '\n</pre></div></div>'
    return f'<details class="hide above-input"><summary>Show code</summary>{block}</details>' if folded else block


def test_a_page_over_the_budget_fails_and_folded_code_and_output_do_not_count():
    over = page(code([f'x{i} = {i}' for i in range(151)]))
    assert frame.shown_code_lines(over) == 151 > frame.CODE_BUDGET
    within = page(code(['a = 1', '', '   ', 'b = 2']) + code([f'y{i} = 0' for i in range(400)], folded=True)
                  + '<div class="cell_output"><pre>' + 'out\n' * 300 + '</pre></div>')
    assert frame.shown_code_lines(within) == 2                  # blank lines, folded code and printed output: none
    assert [(n, f) for n, f, _ in frame.code_blocks(within)] == [(2, False), (400, True)]


@pytest.mark.parametrize('leak', [
    'see tests/test_ppca.py', 'loads figures/fig5_runs.json', 'fig.savefig("a.png")', 'run nbdev-test --flags slow',
    'nbdev_test', 'then make site', 'the hidden cell above', '## Closing note: the numbers', 'as issue 17 asked',
    'see [issue 12]', 'the private helper'])
def test_a_listed_leak_fails_the_page(leak):
    assert frame.leaks(page(f'<p>{leak}</p>')), leak
    assert frame.leaks(page(code([leak], folded=True))), f'{leak} folded is still on the page'


def test_a_clean_page_passes():
    html = page('<h1>02 · VB PCA</h1><p>The update of <code>q(W)</code> calls <code>reference_q_w</code>; '
                'the tests pass and the issue is the noise, H~_n(v).</p><span class="math">x_n(t)</span>'
                + code(['obj.__init__(a)', 'model = VBPCA().fit(X)', 'x_n = f(x)']))
    assert frame.shown_code_lines(html) == 3
    assert frame.leaks(html) == [] and frame.private_names(html) == []


@pytest.mark.parametrize('record', ['measured 2026-11-27 on this machine', 'at 03:23 UTC', 'load average 0.9',
                                    'at a machine load of 1.0', 'with load 3.5', 'read from /work/main/x.npz',
                                    'cached in ~/.cache/vbfa_lit', 'written to benchmarks/results/bench_x.json'])
def test_an_engineering_record_in_the_prose_fails_a_lesson(record):
    assert frame.engineering(page(f'<p>{record}</p>')), record
    clean = page(f'<p>A sweep costs O(N D^2); see the [notation](notation.html).</p>' + code([record])
                 + f'<div class="cell_output"><pre>{record}</pre></div>')
    assert frame.engineering(clean) == []          # code and printed output are not prose (other checks cover them)


def test_private_names_in_prose_and_shown_code_fail_dunders_do_not():
    assert frame.private_names(page('<p>It calls <code>_run</code> once.</p>'))
    assert frame.private_names(page('<p>It calls _sweep(post) once.</p>'))
    assert frame.private_names(page(code(['post = engine._sweep(post)'])))
    assert not frame.private_names(page(code(['post = engine._sweep(post)'], folded=True)))  # folded: not shown
    assert not frame.private_names(page(code(['class A:', '    def __init__(self): super().__init__()'])))
    assert not frame.private_names(page(code(['q = q._replace(X=0)']) + '<p>with <code>_replace</code></p>'))


def test_titles_carry_the_lesson_number_the_text_cites():
    assert p2s.numbered_title('03_vbpca', 'Variational Bayesian PCA') == '03 · Variational Bayesian PCA'
    assert p2s.numbered_title('06_estimator', 'VBPCA') == '06 · VBPCA'
    assert p2s.numbered_title('01_from_pca', 'From PCA') == '01 · From PCA'
    assert p2s.numbered_title('index', 'Bayesian PCA') == 'Bayesian PCA'
    assert p2s.numbered_title('98_references', 'References') == 'References'
    assert p2s.numbered_title('03_vbpca', '03 · Already') == '03 · Already'     # not numbered twice


def test_reading_order_is_the_order_of_the_numbers_notation_first():
    lessons = [s for s in p2s.LESSONS if s != 'index']
    assert lessons[:4] == ['00_notation', '01_from_pca', '02_symbolic', '03_vbpca'] and lessons[-1] == '98_references'
    assert lessons == sorted(lessons), lessons
    assert p2s.APPENDIX == sorted(p2s.APPENDIX) and min(p2s.APPENDIX) > max(lessons[:-1]), p2s.APPENDIX


def test_converted_lesson_has_a_numbered_title_and_links_the_notation():
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {}, 'cells': [
        {'cell_type': 'markdown', 'id': 'a', 'metadata': {}, 'source': '# Variational Bayesian PCA\n\n> D'}]}
    title = p2s.convert_notebook(nb, '03_vbpca')['cells'][0]['source']
    assert title.startswith('# 03 · Variational Bayesian PCA\n\nD\n\n') and '[notation reference](notation.ipynb)' in title
    html = '<svg><a xlink:href="04_ard.ipynb"><path/></a><a href="04_ard.ipynb#why-ard">x</a><a href="https://x.org/a.ipynb">y</a></svg>'
    assert p2s.rewrite_html_links(html) == (       # a clickable figure's links, as docs/conf.py rewrites its outputs
        '<svg><a xlink:href="ard.html"><path/></a><a href="ard.html#why-ard">x</a><a href="https://x.org/a.ipynb">y</a></svg>')
    plain = p2s.convert_notebook(nb, '98_references')          # a reference chapter: no number, no notation line
    assert plain['cells'][0]['source'] == '# Variational Bayesian PCA\n\nD'


def test_method_map_boxes_are_links_in_the_svg():
    from vbfa_lit.plots import plot_method_map, svg_markup
    nodes = {'ppca': (1.0, 1.5, 'PPCA\nlesson 01', '01_from_pca.ipynb', 'main'),
             'vb': (3.0, 1.5, 'VB-ARD\nlesson 03', '03_vbpca.ipynb', 'main'),
             'tr': (1.0, 0.4, 'transformations', '05_transformations.ipynb', 'main'),
             'sym': (3.0, 0.4, 'SymPy', None, 'aside')}
    ax = plot_method_map(nodes, [('ppca', 'vb'), ('vb', 'tr', 'wrap'), ('sym', 'vb', 'dashed')])
    try:
        assert [p.get_url() for p in ax.patches[:4]] == ['01_from_pca.ipynb', '03_vbpca.ipynb',
                                                          '05_transformations.ipynb', None]
        assert len(ax.patches) == 4 + 3
        assert [t.get_text() for t in ax.texts] == ['PPCA', 'lesson 01', 'VB-ARD', 'lesson 03', 'transformations', 'SymPy']
        assert min(t.get_fontsize() for t in ax.texts) >= 9
        svg = svg_markup(ax.figure, 'method-map', 'the map')
        assert svg.startswith('<svg') and 'id="method-map"' in svg and 'aria-label="the map"' in svg
        assert 'xlink:href' not in svg and svg.count('<a href="03_vbpca.ipynb">') == 3  # the box and its two lines,
        assert 'target=' not in svg                                                      # opening in the same tab
        assert 'width="100%"' in svg and 'viewBox=' in svg
    finally:
        plt.close(ax.figure)
    with pytest.raises(ValueError, match='kind'):
        plot_method_map({'a': (0, 0, 'a', None, 'big')})
    with pytest.raises(ValueError, match="'b' is not a node"):
        plot_method_map({'a': (0, 0, 'a', None, 'main')}, [('a', 'b')])
    with pytest.raises(ValueError, match='style'):
        plot_method_map({'a': (0, 0, 'a', None, 'main'), 'b': (2, 0, 'b', None, 'main')}, [('a', 'b', 'dotted')])


def test_front_page_table_links_every_page_and_names_no_build_command():
    md = prose('index')
    stems = [p.stem for p in NBS.glob('*.ipynb') if p.stem != 'index' and not p.name.startswith('_')]
    assert not [s for s in stems if f']({s}.ipynb)' not in md]
    assert not [s for s in frame.FRONT_PAGE_STATUS if s in md]


def test_front_page_map_arrows_are_the_logical_order_and_the_reference_rows_are_named():
    text = flat(prose('index'))
    assert 'the arrows give the logical order' in text
    assert '| [notation reference](00_notation.ipynb) |' in text and '| [references](98_references.ipynb) |' in text


def test_a_tagged_display_equation_carries_its_tag_alone():
    "A $$ block with a \\tag becomes a starred equation (Sphinx numbers an unstarred one a second time); others stay."
    from docutils import nodes
    doc = nodes.document(None, None)
    doc += [nodes.math_block(t, t, nowrap=False, number=None) for t in ('a = b \\\\\n  c = d \\tag{3.2}', 'x = y')]
    p2s.tagged_equations(None, doc)          # as Sphinx reads a page (a doctree-read hook)
    assert doc[0].astext() == '\\begin{equation*}\n\\begin{split}a = b \\\\\n  c = d\\end{split}\n\\tag{3.2}\n\\end{equation*}'
    assert doc[0]['nowrap'] and doc[1].astext() == 'x = y' and not doc[1]['nowrap']


def test_front_page_map_draws_no_arrow_into_the_last_three_boxes():
    "The caption says the last three boxes build on PPCA itself, not on the line above: no edge may lead to them."
    from notebook_text import code
    src = code('index')
    edges = eval(src[src.index('EDGES = '):].split('\n\n')[0].split('=', 1)[1].split('\nax =')[0])
    assert edges and not {e[1] for e in edges} & {'laplace', 'rjmcmc', 'nuts'}
    assert 'so no arrow leads to them' in flat(prose('index'))
