"""The precomputed sliders of the lessons' figures: `figure_slider` draws one distinct frame per value, closes its
pyplot figures and names bad arguments; `plot_ridge_sweep` (Figures 4.1 and 5.1) draws each path up to the sweep with
legible contour labels."""
import matplotlib
matplotlib.use('Agg')
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def _draw(k):
    fig = Figure(figsize=(3, 2))
    fig.add_subplot().plot(np.arange(5) * k)
    return fig


def test_figure_slider_precomputes_one_distinct_frame_per_value():
    from vbfa_lit.widgets import figure_slider
    s = figure_slider(_draw, [1, 2, 3], label='k', start=2, summaries=['a', 'b', 'c'])
    assert s.values == [1, 2, 3] and s.start == 1 and s.label == 'k' and s.summaries == ['a', 'b', 'c']
    assert len(set(s.frames)) == 3 and all(f.startswith(b'\x89PNG') for f in s.frames)
    html = s.html
    assert html.count('<img') == 3 and 'type="range"' in html and 'http' not in html.replace('data:image', '')


def test_figure_slider_closes_pyplot_figures():
    import matplotlib.pyplot as plt
    from vbfa_lit.widgets import figure_slider
    before = len(plt.get_fignums())
    figure_slider(lambda k: plt.subplots()[0], [0, 1])
    assert len(plt.get_fignums()) == before


@pytest.mark.parametrize('kw, err, msg', [
    (dict(draw=3, values=[1]), TypeError, 'draw'),
    (dict(draw=_draw, values=[]), ValueError, 'values'),
    (dict(draw=_draw, values=[1, 2], start=5), ValueError, 'start'),
    (dict(draw=_draw, values=[1, 2], summaries=['one']), ValueError, 'summaries'),
    (dict(draw=lambda k: 'not a figure', values=[1]), TypeError, 'Figure'),
    (dict(draw=_draw, values=[1], dpi=0), ValueError, 'dpi'),
    (dict(draw=_draw, values=[1], font_size=-1.0), ValueError, 'font_size'),
])
def test_figure_slider_rejects_bad_input(kw, err, msg):
    from vbfa_lit.widgets import figure_slider
    with pytest.raises(err, match=msg):
        figure_slider(**kw)


def test_plot_ridge_sweep_draws_each_path_up_to_the_sweep_with_legible_labels():
    from vbfa_lit.plots import plot_ridge_sweep
    g = np.logspace(-1, 1, 40)
    values = -np.log(np.outer(g, g)) ** 2 - 0.1 * np.log(np.outer(np.ones_like(g), g)) ** 2
    slow = np.column_stack([np.logspace(1, 0, 101), np.logspace(-1, 0, 101)])     # start + 100 sweeps
    fast = np.array([[10.0, 0.1], [1.0, 1.0], [1.0, 1.0]])                       # start + 2 sweeps
    ax = plot_ridge_sweep(g, g, values, {'slow': slow, 'fast': fast}, 30, levels=[-4.0, -1.0], every=10)
    line, dots, now = ax.lines[:3]
    assert len(line.get_xdata()) == 31 and len(dots.get_xdata()) == 4              # sweeps 0..30, a dot every 10
    assert now.get_xdata()[0] == slow[30, 0] and 'sweep 30' in now.get_label()
    assert ax.lines[5].get_xdata()[0] == fast[2, 0] and 'converged' in ax.lines[5].get_label()
    labels = [t for t in ax.texts if t.get_text() in ('-4', '-1')]
    assert labels and min(t.get_fontsize() for t in labels) >= 9


@pytest.mark.parametrize('kw, msg', [(dict(sweep=-1), 'sweep'), (dict(sweep=1.5), 'sweep'), (dict(every=0), 'every'),
                                     (dict(paths={'p': np.ones((3, 3))}), 'paths')])
def test_plot_ridge_sweep_rejects_bad_input(kw, msg):
    from vbfa_lit.plots import plot_ridge_sweep
    g = np.logspace(-1, 1, 5)
    args = dict(x=g, y=g, values=np.zeros((5, 5)) - np.arange(5), paths={'p': np.ones((3, 2))}, sweep=1,
                levels=[-2.0])
    with pytest.raises(ValueError, match=msg):
        plot_ridge_sweep(**{**args, **kw})

