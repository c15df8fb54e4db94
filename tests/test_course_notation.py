"""One symbol, one meaning: lessons 12 and 13 count with the notation table's M (features) and D (components), not
Nirwan & Bertschinger's D and Q, except in the one sentence of each lesson that names theirs; and the two pages'
figures legible (Figure 0.2's three curves told apart, lesson 12's text at 9 pt or more)."""
import io
import re
import tokenize

from notebook_text import cells, prose

COUNT_LESSONS = ('12_stiefel', '13_householder_ppca')
# the one place where each lesson names Nirwan & Bertschinger's own counts
NB_COUNTS = (r'(Nirwan & Bertschinger write $V_{Q,D}$ with D features and Q components)',
             r'their $(D, Q)$ are our $(M, D)$')
# Q that is not a count: the Q factor of a QR decomposition (00's table: QT, "numpy's R")
QR_FACTOR = re.compile(r'\\mathbf\{Q\}|Q factor|Q_\{11\}|columns of Q\.')
STANDALONE_Q = re.compile(r'(?:(?<![A-Za-z\\])|(?<=(?<![A-Za-z\\])D))Q(?![A-Za-z])')   # Q, and the DQ of $DQ^2$


def standalone_q_in_markdown(text):
    "Every standalone Q in lesson markdown that is neither N&B's named counts nor the QR factor, with context."
    for allowed in NB_COUNTS: text = text.replace(allowed, '')
    text = QR_FACTOR.sub('', text)
    return [text[max(0, m.start() - 30):m.end() + 30] for m in STANDALONE_Q.finditer(text)]


def q_names_in_code(source):
    "Python names Q (a variable, a parameter) in a code cell; strings and comments are not names."
    src = '\n'.join(line for line in source.splitlines() if not line.lstrip().startswith(('%', '!')))
    toks = tokenize.generate_tokens(io.StringIO(src).readline)
    return [t.line.strip() for t in toks if t.type == tokenize.NAME and t.string in ('Q', 'Q_demo', 'Q_s')]


def test_count_checker_can_fail():
    bad = [r'a $D \times Q$ loading matrix', r'$\mathcal{V}_{Q,D}$', 'for $Q = 1$ it is', r'order $DQ^2$',
           'the first Q columns', r'\sigma_Q > 0']
    assert all(standalone_q_in_markdown(s) for s in bad)
    assert not standalone_q_in_markdown(r'the $\mathbf{Q}$ factor, $Q_{11} < 0$; ' + NB_COUNTS[0])
    assert q_names_in_code('def f(D, Q):\n    return D * Q\n') and not q_names_in_code("x = 'Q'  # Q\n")


def test_lessons_07_08_use_the_tables_counts():
    """07 and 08 write M features (the ambient dimension) and D components, as 00's table does; N&B's D, Q appear
    only in the one notation line that names them."""
    for name in COUNT_LESSONS:
        markdown = prose(name)
        for allowed in NB_COUNTS:
            assert markdown.count(allowed) == 1, f'{name}: the notation line naming N&B counts should appear once'
        assert standalone_q_in_markdown(markdown) == [], f'{name}: Q used as a count in the prose'
        names = [n for k, s in cells(name) if k == 'code' for n in q_names_in_code(s)]
        assert names == [], f'{name}: code cells name a count Q: {names[:3]}'


def test_figure_0_2_tells_its_three_gamma_factors_apart():
    "Each curve its own colour and dash, named beside it (no legend to decode), the two moments as two marker shapes."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from notebook_text import MIN_PT, cell_by_id, smallest_shown_pt
    ns = {}
    for cid in ('shp0cd00', 'fbf55e5a', 'f9fe39d4', '5b0671e8'):      # imports, the Gamma functions, Figure 0.2
        exec(cell_by_id('00_notation', cid), ns)
    fig = plt.gcf()
    try:
        ax = fig.axes[0]
        curves = [l for l in ax.lines if len(l.get_xdata()) > 10]
        assert len(curves) == 3
        assert len({l.get_color() for l in curves}) == 3 and len({str(l.get_linestyle()) for l in curves}) == 3
        assert {t.get_text() for t in ax.texts} >= {'a = 1.5', 'a = 5', 'a = 40'}
        markers = {l.get_marker() for l in ax.lines if len(l.get_xdata()) == 1}
        assert markers == {'o', 's'}
        assert smallest_shown_pt(fig) >= MIN_PT
    finally:
        plt.close('all')


def test_lesson_12_figures_are_legible_at_the_column_width():
    "Figures 12.1-12.3 (12.4 needs SymPy's integrals): no text smaller than 9 pt as the page column shows it."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from notebook_text import MIN_PT, smallest_shown_pt
    ns, sizes = {}, {}
    for kind, src in cells('12_stiefel'):
        if kind != 'code' or 'sp.' in src: continue                # the SymPy cells are not needed here
        exec(src.replace('20_000', '2_000'), ns)
        for n in plt.get_fignums():
            title = next((l for l in src.splitlines() if l.startswith('# Figure 12.')), '?')
            sizes[title[:14]] = smallest_shown_pt(plt.figure(n))
        plt.close('all')
        if 'Figure 12.3' in src: break
    assert len(sizes) == 3, sizes
    assert min(sizes.values()) >= MIN_PT, sizes
