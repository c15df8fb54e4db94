"""The plots several lessons share keep their legends legible (10 pt at the column width), and `plot_imputation` takes
the caption's words for its legend."""
import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

LEGEND_PT = 9 * 96 / 100      # 9 pt on a 96-dpi screen, in points of a 100-dpi figure shown at its natural size


def test_plot_imputation_takes_the_legend_labels_at_a_legible_size():
    from vbfa_lit.plots import plot_coverage, plot_imputation, plot_imputation_intervals
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
        for ax in (plot_imputation_intervals(truth, truth + 0.1, np.full(4, 0.2)),
                   plot_coverage([0.5, 0.9], {'model': [0.5, 0.88]})):
            assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 10
    finally:
        plt.close('all')


def test_the_other_shared_legends_are_legible_too():
    from vbfa_lit.plots import plot_ard_evidence, plot_ard_threshold, plot_ppca_density, plot_rotation_orbit
    rng = np.random.default_rng(0)
    alpha = np.logspace(-2, 2, 20)
    try:
        axes = [plot_ppca_density(rng.normal(size=(50, 2)), np.array([1.0, 0.5]), 0.3),
                plot_rotation_orbit(rng.normal(size=(5, 2))),
                plot_ard_evidence(alpha, {'column': -np.log(alpha)}),
                plot_ard_threshold(np.linspace(0.5, 3, 20), np.maximum(np.linspace(0.5, 3, 20) - 1, 0))]
        for ax in axes:
            assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 10
    finally:
        plt.close('all')

