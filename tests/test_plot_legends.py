"""The plots several lessons share keep their legends legible (10 pt at the column width), and `plot_imputation` takes
the caption's words for its legend. (The legends of the figures one lesson draws are checked in test_plots.py.)"""
import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

LEGEND_PT = 9 * 96 / 100      # 9 pt on a 96-dpi screen, in points of a 100-dpi figure shown at its natural size


def test_plot_imputation_takes_the_legend_labels_at_a_legible_size():
    from vbfa_lit.plots import plot_imputation
    truth = np.array([1.0, 2.0, 3.0, 4.0])
    try:
        ax = plot_imputation(truth, truth + 0.1, std=np.full(4, 0.2), baseline=np.full(4, 2.5),
                             labels=("each item's mean", 'VB PCA with the bias'))
        texts = ax.get_legend().get_texts()
        assert [t.get_text().split(',')[0] for t in texts] == ["each item's mean", 'VB PCA with the bias']
        assert min(t.get_fontsize() for t in texts) >= 10 > LEGEND_PT
        ax = plot_imputation(truth, truth + 0.1, baseline=np.full(4, 2.5))        # the default words stay
        assert [t.get_text().split(',')[0] for t in ax.get_legend().get_texts()] == ['naive fill-in', 'model']
        for bad in ('model', ('a',), ('a', 2)):
            with pytest.raises(ValueError, match='^labels: expected two strings'):
                plot_imputation(truth, truth, labels=bad)
    finally:
        plt.close('all')


def test_the_rotation_orbit_legend_is_legible_too():
    from vbfa_lit.plots import plot_rotation_orbit
    try:
        ax = plot_rotation_orbit(np.random.default_rng(0).normal(size=(5, 2)))
        assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 10
    finally:
        plt.close('all')

