"""vbfa_lit.plots: every function returns its Axes, and the artists hold the data it was given (no pixel tests).
The figures one lesson alone draws are defined, folded, on its page: their functions are read from the notebook
and checked the same way at the end."""
import matplotlib
matplotlib.use('agg')
import matplotlib.pyplot as plt
import numpy as np
import pytest

from matplotlib.patches import Circle, Ellipse, FancyArrowPatch
from scipy.stats import norm

from notebook_text import cell_with
from vbfa_lit import plots
from vbfa_lit.plots import (OKABE_ITO, colour, hinton, plot_elbo, plot_learning_curves, plot_posterior_bars,
                            plot_pruning, plot_sphere, plot_spectrum, plot_trace)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close('all')


def test_hinton_area_and_sign():
    ax = hinton(np.array([[1.0, -0.25], [0.0, 0.5]]))
    areas = np.array([p.get_width() * p.get_height() for p in ax.patches])
    assert len(areas) == 4
    np.testing.assert_allclose(areas / areas[0], [1, 0.25, 0, 0.5])
    assert [p.get_facecolor()[:3] for p in ax.patches][:2] == [(1, 1, 1), (0, 0, 0)]
    with pytest.raises(ValueError, match='W'): hinton(np.zeros(3))


def test_plot_elbo_data_and_gap():
    ax = plot_elbo([-10.0, -5.0, -4.0], label='run')
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1, 2, 3])
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [-10, -5, -4])
    assert 'nats' in ax.get_ylabel() and ax.get_xlabel() == 'sweep'
    ax = plot_elbo([-10.0, -5.0, -4.0], relative_to=-4.0)
    assert ax.get_yscale() == 'log'
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [6, 1, 1e-12])


def test_learning_curves_overlay_with_a_common_best():
    ax_l, ax_g = plot_learning_curves({'plain': [-9.0, -5.0, -4.0], 'rotated': [-6.0, -4.0, -3.0, -3.0]})
    assert [l.get_label() for l in ax_l.lines] == ['plain', 'rotated']
    assert len(ax_g.lines) == 2 and ax_g.get_yscale() == 'log'
    np.testing.assert_allclose(ax_g.lines[0].get_ydata(), [6, 2, 1])            # best = -3 over both runs
    np.testing.assert_allclose(ax_g.lines[1].get_ydata(), [3, 1, 1e-12, 1e-12])
    assert ax_g.lines[0].get_color() != ax_g.lines[1].get_color()
    assert ax_g.lines[0].get_linestyle() != ax_g.lines[1].get_linestyle()
    assert {ax_l.lines[0].get_color(), ax_l.lines[1].get_color()} <= {c.lower() for c in OKABE_ITO} | set(OKABE_ITO)
    _, ax_g = plot_learning_curves({'a': [-2.0, -1.0]}, best=0.0)
    np.testing.assert_allclose(ax_g.lines[0].get_ydata(), [2, 1])
    with pytest.raises(ValueError, match='histories'): plot_learning_curves({})
    with pytest.raises(ValueError, match="histories\\['a'\\]"): plot_learning_curves({'a': [[1.0]]})


def test_pruning_lines_per_column_and_kept_style():
    inv = np.array([[1.0, 1.0, 1.0], [2.0, 0.1, 0.5], [3.0, 0.01, 0.2]])
    ax = plot_pruning(inv, kept=[True, False, True])
    assert len(ax.lines) == 3 and ax.get_yscale() == 'log'
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), inv[:, 1])
    assert [l.get_linestyle() for l in ax.lines] == ['-', '--', '-']
    assert [l.get_label() for l in ax.lines] == ['d = 1', 'd = 2', 'd = 3']
    assert 'alpha' in ax.get_ylabel()
    with pytest.raises(ValueError, match='kept'): plot_pruning(inv, kept=[True])
    with pytest.raises(ValueError, match='inv_alpha'): plot_pruning(np.ones(3))


def test_spectrum_sorted_and_highlighted():
    ax = plot_spectrum([1.0, 4.0, 2.0, 0.5], n_keep=2, log=True)
    assert [p.get_height() for p in ax.patches] == [4.0, 2.0, 1.0, 0.5]
    cols = [p.get_facecolor() for p in ax.patches]
    assert cols[0] == cols[1] != cols[2] == cols[3]
    assert ax.get_yscale() == 'log'
    with pytest.raises(ValueError, match='n_keep'): plot_spectrum([1.0, 2.0], n_keep=3)


def test_trace_and_posterior_bars():
    ax = plot_trace([[2, 3, 3], [1, 1, 2]], burn_in=1)
    assert len(ax.lines) == 2
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), [1, 1, 2])
    assert len(ax.patches) == 1                                                   # the burn-in band
    with pytest.raises(ValueError, match='burn_in'): plot_trace([1, 2], burn_in=-1)
    ax = plot_posterior_bars([1, 2, 3], [0.2, 0.7, 0.1], errors=[0.02, 0.03, 0.01], exact=[0.25, 0.65, 0.1])
    np.testing.assert_allclose([p.get_height() for p in ax.patches], [0.2, 0.7, 0.1])
    segs = ax.collections[0].get_segments()                                        # the error bars
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segs], [0.04, 0.06, 0.02])
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), [0.25, 0.65, 0.1])
    assert ax.get_ylabel() == 'posterior probability'
    with pytest.raises(ValueError, match='probs'): plot_posterior_bars([1, 2], [0.5])
    with pytest.raises(ValueError, match='probs'): plot_posterior_bars([1, 2], [0.5, -0.1])
    with pytest.raises(ValueError, match='errors'): plot_posterior_bars([1, 2], [0.5, 0.5], errors=[0.1])


def test_sphere_points_are_normalised():
    ax = plot_sphere({'a': np.array([[2.0, 0, 0], [0, 0, 3.0]]), 'b': np.array([[1.0, 1, 1]])})
    pts = ax.collections[-2]._offsets3d                                             # set 'a' (after the wireframe)
    np.testing.assert_allclose(np.c_[pts[0], pts[1], pts[2]], [[1, 0, 0], [0, 0, 1]])
    assert ax.name == '3d'
    with pytest.raises(ValueError, match='3 columns'): plot_sphere(np.ones((4, 2)))
    with pytest.raises(ValueError, match='zero'): plot_sphere(np.zeros((1, 3)))


def test_every_public_function_has_a_numpydoc_docstring():
    for name in plots.__all__:
        f = getattr(plots, name)
        if callable(f) and name[0].islower() and name != 'colour':
            assert 'Returns\n    -------' in (f.__doc__ or ''), name


def test_hinton_labels_ticks_and_sign_key():
    ax = hinton(np.array([[1.0, -0.25, 0.5], [0.0, 0.5, -1.0]]))
    assert ax.get_xlabel() == 'column $d$' and ax.get_ylabel() == 'row $m$'
    assert [t.get_text() for t in ax.get_xticklabels()] == ['1', '2', '3']
    key = ax.get_legend()
    assert [t.get_text() for t in key.get_texts()] == ['positive', 'negative']
    assert len(ax.patches) == 6                                       # the key adds no patch to the Axes
    ax = hinton(np.ones((2, 2)), key=False, xlabel=None, ylabel='')
    assert ax.get_legend() is None and ax.get_xlabel() == '' and ax.get_ylabel() == ''


def test_graphical_model_nodes_edges_plates_and_errors():
    nodes = {'x': (0, 1, '$x$', 'latent'), 'y': (0, 0, '$y$', 'observed'), 'W': (1, 0, '$W$', 'fixed')}
    ax = plots.plot_graphical_model(nodes, [('x', 'y'), ('W', 'y')], [('$n$', (-0.5, -0.5, 0.5, 1.5))])
    assert len(ax.patches) == 1 + 2 + 2                               # plate, two circles, two arrows
    assert ax.patches[2].get_facecolor()[:3] != ax.patches[1].get_facecolor()[:3]   # observed is shaded
    with pytest.raises(ValueError, match='kind'): plots.plot_graphical_model({'a': (0, 0, 'a', 'hidden')}, [])
    with pytest.raises(ValueError, match='edges'): plots.plot_graphical_model(nodes, [('x', 'z')])


def test_rotation_orbit_turns_each_row():
    ax = plots.plot_rotation_orbit(np.array([[1.0, 0.0], [0.0, 2.0]]), angles=[0.0, np.pi / 2])
    np.testing.assert_allclose(ax.lines[3].get_xdata(), [0.0, 2.0], atol=1e-12)   # rows of W R(pi/2)
    with pytest.raises(ValueError, match='W'): plots.plot_rotation_orbit(np.ones((3, 3)))


def test_histogram_heights_and_density():
    ax = plots.plot_histogram([0.1, 0.2, 0.6], x=[0, 1], density=[1, 1], bins=2, range=(0, 1))
    assert [round(p.get_height(), 3) for p in ax.patches] == [1.333, 0.667] and len(ax.lines) == 1
    with pytest.raises(ValueError, match='x and density'): plots.plot_histogram([0.1], x=[0, 1])
    with pytest.raises(ValueError, match='density'): plots.plot_histogram([0.1], x=[0, 1], density=[1])


def test_matrix_missing_black_shared_scale_and_errors():
    A = np.array([[1.0, np.nan], [-2.0, 0.5]])
    ax = plots.plot_matrix(A, vmax=4.0)
    assert ax.images[0].get_clim() == (-4.0, 4.0)
    assert np.ma.getmaskarray(ax.images[0].get_array())[0, 1]         # the missing entry is masked (drawn black)
    assert tuple(ax.images[0].get_cmap().get_bad()[:3]) == (0.0, 0.0, 0.0)
    assert plots.plot_matrix(A).images[0].get_clim() == (-2.0, 2.0)
    with pytest.raises(ValueError, match='A'): plots.plot_matrix(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match='vmax'): plots.plot_matrix(A, vmax=0.0)
    with pytest.raises(ValueError, match='A'): plots.plot_matrix(np.ones(3))


def test_imputation_rmse_share_within_two_sd_and_errors():
    truth = np.array([0.0, 1.0, 2.0, 3.0])
    ax = plots.plot_imputation(truth, truth + [0.1, -0.1, 0.5, 0.0], std=[0.1, 0.1, 0.1, 0.1], baseline=np.full(4, 1.5))
    assert ax.get_title() == '4 entries, 75% within 2 sd'
    labels = [l.get_label() for l in ax.lines]
    assert labels[0].startswith('naive fill-in, RMSE 1.118') and labels[1] == 'model, RMSE 0.260'
    with pytest.raises(ValueError, match='pred'): plots.plot_imputation(truth, truth[:3])
    with pytest.raises(ValueError, match='std'): plots.plot_imputation(truth, truth, std=-np.ones(4))
    with pytest.raises(ValueError, match='truth'): plots.plot_imputation([np.nan], [0.0])
    with pytest.raises(ValueError, match='truth'): plots.plot_imputation([], [])


def test_reference_lines_positions_styles_and_errors():
    ax = plots.plot_reference_lines([1.0, 2.5], labels=['target', None], colors=['k', 'r'], linestyles='--')
    assert [l.get_ydata()[0] for l in ax.lines] == [1.0, 2.5]
    assert [l.get_color() for l in ax.lines] == ['k', 'r'] and {l.get_linestyle() for l in ax.lines} == {'--'}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ['target']
    ax = plots.plot_reference_lines(3.0, axis='x')
    assert ax.lines[0].get_xdata()[0] == 3.0 and ax.get_legend() is None
    with pytest.raises(ValueError, match='axis'): plots.plot_reference_lines([1.0], axis='z')
    with pytest.raises(ValueError, match='labels'): plots.plot_reference_lines([1.0, 2.0], labels=['a'])
    with pytest.raises(ValueError, match='values'): plots.plot_reference_lines([np.inf])


def test_band_edges_scalar_edge_and_order():
    ax = plots.plot_band([0.0, 1.0, 2.0], [0.0, 1.0, 0.5], 2.0, label='gap', xlabel='m', ylabel='nats')
    v = ax.collections[0].get_paths()[0].vertices
    assert v[:, 1].max() == 2.0 and v[:, 1].min() == 0.0 and (ax.get_xlabel(), ax.get_ylabel()) == ('m', 'nats')
    with pytest.raises(ValueError, match='lower'): plots.plot_band([0.0, 1.0], [3.0, 0.0], 1.0)
    plots.plot_band([0.0, 1.0], [1.0 + 1e-15, 0.0], 1.0)        # edges that touch may cross by rounding
    with pytest.raises(ValueError, match='upper'): plots.plot_band([0.0, 1.0], 0.0, [1.0, 2.0, 3.0])


def test_spread_median_range_and_censored_points():
    groups = [[1.0, 3.0, 2.0], [4.0, 8.0]]
    ax = plots.plot_spread([5, 10], groups, censored=[[False, True, False], [False, True]], band=False,
                           label='without', color='r', linestyle='-')
    med, lo, hi, cut = ax.lines
    assert med.get_ydata().tolist() == [2.0, 6.0] and med.get_label() == 'without'
    assert lo.get_ydata().tolist() == [1.0, 4.0] and hi.get_ydata().tolist() == [3.0, 8.0]
    assert cut.get_xydata().tolist() == [[5.0, 3.0], [10.0, 8.0]] and cut.get_markerfacecolor() == 'none'
    ax = plots.plot_spread([5, 10], groups)
    assert len(ax.lines) == 1 and ax.collections[0].get_paths()[0].vertices[:, 1].max() == 8.0
    with pytest.raises(ValueError, match='groups'): plots.plot_spread([5, 10], [[1.0]])
    with pytest.raises(ValueError, match='censored'): plots.plot_spread([5], [[1.0, 2.0]], censored=[[True]])


def test_grouped_bars_positions_heights_and_errors():
    ax = plots.plot_grouped_bars({'exact': ([1, 2, 3], [0.2, 0.5, 0.3]), 'Laplace': ([0, 1, 2], [0.1, 0.6, 0.3])},
                                 xlabel='k', ylabel='p(k | D)')
    centres = [round(p.get_x() + p.get_width() / 2, 6) for p in ax.patches]
    assert centres == [0.8, 1.8, 2.8, 0.2, 1.2, 2.2] and [p.get_height() for p in ax.patches[:3]] == [0.2, 0.5, 0.3]
    assert ax.get_xlabel() == 'k' and ax.get_ylabel() == 'p(k | D)'
    with pytest.raises(ValueError, match='bars'): plots.plot_grouped_bars({})
    with pytest.raises(ValueError, match='bars'): plots.plot_grouped_bars({'a': ([1, 2], [0.5])})


def test_curves_styles_legend_histogram_colour_and_badges():
    ax = plots.plot_curves([1.0, 2.0], {'target': [1.0, 2.0], 'sample': [1.1, 1.9]}, legend=False,
                           styles={'sample': dict(marker='', color='k', label='_nolegend_')})
    assert ax.lines[1].get_color() == 'k' and ax.lines[1].get_marker() in ('', 'None') and ax.get_legend() is None
    with pytest.raises(ValueError, match='styles'): plots.plot_curves([1.0], {'a': [1.0]}, styles={'b': {}})
    ax = plots.plot_curves([4, 5], {'paper': [0.9, 0.1]}, styles={'paper': dict(marker='_', ms=14, mew=2, ls='none')})
    assert ax.lines[0].get_markersize() == 14 and ax.lines[0].get_linestyle() == 'None'     # aliases accepted
    ax = plots.plot_histogram([0.1, 0.2, 0.6], bins=2, range=(0, 1), color='r', draws_label='$l_1$')
    assert ax.patches[0].get_facecolor()[:3] == (1.0, 0.0, 0.0) and ax.patches[0].get_label() == '$l_1$'
    nodes = {'x': (0, 1, 'x', 'latent'), 'y': (0, 0, 'y', 'observed')}
    ax = plots.plot_graphical_model(nodes, [('x', 'y')], badges={'x': 1})
    assert [t.get_text() for t in ax.texts][-1] == '1'
    with pytest.raises(ValueError, match='badges'): plots.plot_graphical_model(nodes, [('x', 'y')], badges={'z': 1})


# ---------------------------------------------------------------- figures defined on one lesson's page

def from_page(stem, name):
    "The function `name` as the folded cell of nbs/<stem>.ipynb defines it (with the names its lesson imports)."
    ns = dict(np=np, plt=plt, colour=colour, norm=norm, Ellipse=Ellipse, Circle=Circle, FancyArrowPatch=FancyArrowPatch)
    exec(cell_with(stem, f'def {name}('), ns)
    return ns[name]


def new_axes():
    return plt.subplots()[1]


def test_shapes_are_drawn_to_scale():
    ax = from_page('00_notation', 'plot_shapes')([('$Y$', 4, 6, 'M', 'N'), '=', ('$W$', 4, 2, 'M', 'D'),
                                                  ('$X$', 2, 6, 'D', 'N')])
    assert [round(p.get_height() / p.get_width(), 3) for p in ax.patches] == [0.667, 2.0, 0.333]
    assert r'$M \times D$' in [t.get_text() for t in ax.texts]


def test_ppca_density_draws_the_one_and_two_sd_contours_of_c():
    w, sigma2 = np.array([1.0, 0.5]), 0.2
    ax = from_page('01_from_pca', 'plot_ppca_density')(np.random.default_rng(0).normal(size=(50, 2)), w, sigma2)
    lam = np.linalg.eigvalsh(np.outer(w, w) + sigma2 * np.eye(2))
    np.testing.assert_allclose([(p.width, p.height) for p in ax.patches], [2 * k * np.sqrt(lam[::-1]) for k in (1, 2)])
    assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 10


def test_gaussian_ellipses_lie_at_their_mahalanobis_radius():
    mean, cov = np.array([1.0, -2.0]), np.array([[2.0, 0.9], [0.9, 1.0]])
    ax = from_page('02_symbolic', 'plot_gaussian_ellipses')(mean, cov, new_axes(), 'k', 'q', n_std=(1, 3))
    assert len(ax.lines) == 2 and ax.lines[0].get_label() == 'q' and ax.get_xlabel() and ax.get_ylabel()
    for line, k in zip(ax.lines, (1, 3)):
        p = line.get_xydata() - mean
        np.testing.assert_allclose(np.einsum('ni,ij,nj->n', p, np.linalg.inv(cov), p), k ** 2)


def test_update_sequence_path_and_one_legend_entry_per_kind():
    ax = from_page('03_vbpca', 'plot_update_sequence')([-5.0, -3.0, -2.5, -2.4], ['start', 'X', 'W', 'X'], new_axes(),
                                                       {'start': 'k', 'X': 'r', 'W': 'b'}, 'update', 'bound')
    assert ax.lines[0].get_ydata().tolist() == [-5.0, -3.0, -2.5, -2.4]
    assert [l.get_label() for l in ax.lines[1:]] == ['start', 'X', 'W'] and ax.lines[1].get_color() == 'k'
    assert ax.lines[2].get_xdata().tolist() == [1, 3] and ax.lines[2].get_ydata().tolist() == [-3.0, -2.4]


def test_ard_evidence_marks_each_maximum_and_the_threshold_its_points():
    ax = from_page('04_ard', 'plot_ard_evidence')(np.array([0.1, 1.0, 10.0]), {'x': np.array([0.5, 1.0, 0.2]),
                                                  'y': np.array([-1.0, -0.5, -0.1])}, {'x': 1.0, 'y': np.inf}, new_axes())
    assert ax.get_xscale() == 'log' and ax.lines[-1].get_ydata().tolist() == [1.0]       # the maximum of 'x'
    assert len(ax.texts) == 1                                                            # 'y' grows to infinity
    ax2 = from_page('04_ard', 'plot_ard_threshold')([0.0, 1.0, 2.0], [0.0, 0.0, 1.0], ([2.0], [1.0]), new_axes())
    assert ax2.lines[1].get_xdata().tolist() == [2.0]
    for a in (ax, ax2): assert min(t.get_fontsize() for t in a.get_legend().get_texts()) >= 10


def test_ridge_sweep_draws_each_path_up_to_the_sweep_with_legible_labels():
    g = np.logspace(-1, 1, 40)
    values = -np.log(np.outer(g, g)) ** 2 - 0.1 * np.log(np.outer(np.ones_like(g), g)) ** 2
    slow = np.column_stack([np.logspace(1, 0, 101), np.logspace(-1, 0, 101)])     # start + 100 sweeps
    fast = np.array([[10.0, 0.1], [1.0, 1.0], [1.0, 1.0]])                       # start + 2 sweeps
    ax = from_page('05_transformations', 'plot_ridge_sweep')(g, g, values, {'slow': slow, 'fast': fast}, 30,
                                                             [-4.0, -1.0], 10, None, new_axes(), 'x', 'y')
    line, dots, now = ax.lines[:3]
    assert len(line.get_xdata()) == 31 and len(dots.get_xdata()) == 4              # sweeps 0..30, a dot every 10
    assert now.get_xdata()[0] == slow[30, 0] and 'sweep 30' in now.get_label()
    assert ax.lines[5].get_xdata()[0] == fast[2, 0] and 'converged' in ax.lines[5].get_label()
    labels = [t for t in ax.texts if t.get_text() in ('-4', '-1')]
    assert labels and min(t.get_fontsize() for t in labels) >= 9


def test_imputation_intervals_split_by_whether_they_hold_the_truth():
    true, mean, std = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.1, 1.0, 4.0, 3.2]), np.array([0.5, 0.5, 0.5, 0.5])
    ax = from_page('07_imputation', 'plot_imputation_intervals')(true, mean, std, 0.9, new_axes())
    inside, outside = ax.containers                       # one errorbar container per group
    np.testing.assert_allclose(inside.lines[0].get_xdata(), [0.0, 1.0, 3.0])
    np.testing.assert_allclose(outside.lines[0].get_ydata(), [4.0])
    texts = ax.get_legend().get_texts()
    assert [t.get_text() for t in texts] == ['interval holds the true value (75%)', 'interval misses it (25%)']
    assert ax.get_xlabel() == 'true (hidden) value' and '90%' in ax.get_ylabel()
    assert min(t.get_fontsize() for t in texts) >= 10


def test_jump_moves_and_birth_state():
    from vbfa_lit.rjmcmc import move_probabilities
    b, d = move_probabilities(5)
    ax = from_page('10_rjmcmc', 'plot_jump_moves')(b, d, new_axes(), 8)
    texts = [t.get_text() for t in ax.texts]
    assert [t for t in texts if t in '1234'] == ['1', '2', '3', '4']            # the states q = 1..d-1
    assert 'b$_1$ = 1' in texts and 'd$_{4}$ = 1' in texts and 'b$_2$ = 0.5' in texts
    ax = from_page('10_rjmcmc', 'plot_birth_state')([0.1, 0.2], 1.0, 0.5, new_axes(), 9)
    before, after = ax.lines[0].get_xdata(), ax.lines[1].get_xdata()
    np.testing.assert_allclose(before, [0.1, 0.2, 1.0]); np.testing.assert_allclose(after, [0.1, 0.2, 0.5, 1.0])


def test_reflection_and_stiefel_recursion():
    ax = from_page('12_stiefel', 'plot_reflection')(np.array([3.0, 4.0]), np.array([1.0, 0.0]), new_axes())
    np.testing.assert_allclose(ax.lines[3].get_xydata()[1], [5.0, 0.0], atol=1e-12)      # v -> ||v|| e_1
    np.testing.assert_allclose(ax.lines[5].get_xydata()[1], [0.6, 0.8], atol=1e-12)      # e_1 -> v / ||v||
    u1 = np.array([1.0, 2.0, 2.0]) / 3
    ax = from_page('12_stiefel', 'plot_stiefel_recursion')(np.eye(3), u1, np.array([[0.0, 1.0, -1.0]]) / np.sqrt(2),
                                                           plt.figure().add_subplot(projection='3d'))
    circle = np.array(ax.lines[-1].get_data_3d()).T
    np.testing.assert_allclose(circle @ u1, 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(circle, axis=1), 1, atol=1e-12)


def test_chains_and_interval_rows():
    ax = from_page('13_householder_ppca', 'plot_chains')(np.arange(6.0).reshape(2, 3), new_axes(), '$W_{11}$', 'draw')
    assert [l.get_ydata().tolist() for l in ax.lines] == [[0, 1, 2], [3, 4, 5]] and ax.get_ylabel() == '$W_{11}$'
    ax = from_page('13_householder_ppca', 'plot_interval_rows')(
        np.array([0.5, -0.2]), np.array([0.4, -0.5]), np.array([0.7, 0.1]), ['a', 'b'], np.array([0.6, 0.0]), 'PCA',
        'u', new_axes())
    assert ax.get_ylim() == (1.5, -0.5) and [t.get_text() for t in ax.get_yticklabels()] == ['a', 'b']
    np.testing.assert_allclose(ax.lines[1].get_xdata(), [0.6, 0.0])         # the reference, beside the means


def test_stacked_bars_lay_the_parts_end_to_end():
    ax = from_page('33_benchmarks', 'plot_stacked_bars')(
        {'one worker': {'computing': 3.0, 'rest': 1.0}, 'two': {'computing': 1.5, 'rest': 1.0}}, new_axes(), 's')
    assert [p.get_x() + p.get_width() for p in ax.patches] == [3.0, 1.5, 4.0, 2.5]   # the rest after the computing
    assert [t.get_text() for t in ax.get_yticklabels()] == ['one worker', 'two'] and list(ax.get_yticks()) == [1, 0]
