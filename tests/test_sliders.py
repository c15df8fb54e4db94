"""The precomputed sliders of the lessons' figures: `figure_slider` draws one distinct frame per value, closes its
pyplot figures and names bad arguments (Figure 5.1's own `plot_ridge_sweep`, folded on lesson 05's page, is checked in
test_plots.py)."""
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
