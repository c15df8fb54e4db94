"""vbfa_lit.widgets without a browser: set the controls' values from Python, read the data and figures they produce."""
import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip('ipywidgets')
from vbfa_lit.widgets import (ARDPruningPanel, HouseholderPanel, Panel, RJMCMCPanel, StaticSlider, VBPCAConvergencePanel,
                              householder_steps, rjmcmc_chains, rjmcmc_data, static_slider)
from vbfa_lit.widgets import _parse_spectrum as parse_spectrum, _parse_stds as parse_stds
from vbfa_lit.data import make_bishop_example, make_low_rank

SMALL = dict(N=60, M=6, D=2)


@pytest.fixture(autouse=True)
def short_pq_chains(monkeypatch):
    "Panel 2's p(q) from 2 chains of 300 sweeps (the panel uses 4 x 1200): what is tested is the plumbing, not the chain."
    monkeypatch.setattr(ARDPruningPanel, 'rj_sweeps', 300)
    monkeypatch.setattr(ARDPruningPanel, 'rj_burn_in', 100)
    monkeypatch.setattr(ARDPruningPanel, 'rj_chains', 2)


def test_missing_ipywidgets_gives_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, 'ipywidgets', None)        # makes `import ipywidgets` fail
    with pytest.raises(ImportError, match=r"pip install 'vbfa_lit\[widgets\]'"):
        VBPCAConvergencePanel()


def test_vbpca_panel_toggles_change_data_and_figure():
    p = VBPCAConvergencePanel(**SMALL)
    assert p.data['kind'] == 'both' and p.error is None
    png0 = p.image.value
    assert png0[:8] == b'\x89PNG\r\n\x1a\n'
    # the transformed run converges in far fewer sweeps than the plain one, and its bound is at least as high
    assert p.data['sweeps']['transformed'] < p.data['sweeps']['plain'] / 5
    assert p.data['transformed'][-1] >= p.data['plain'][-1] - 1e-6 * abs(p.data['plain'][-1])
    assert p.data['W'].shape == (6, 2)
    # the figure shows what data holds: learning-curve lines and one Hinton square per entry of <W>
    ax_l, ax_g, ax_h = p.figure.axes
    np.testing.assert_allclose(ax_l.lines[0].get_ydata(), p.data['transformed'])
    np.testing.assert_allclose(ax_l.lines[1].get_ydata(), p.data['plain'])
    assert len(ax_h.patches) == 12
    p.controls['rotation'].value = False
    assert p.data['kind'] == 'translate' and p.image.value != png0
    assert ax_l.get_legend().get_texts()[0].get_text() == 'with translation + rotation'
    assert p.figure.axes[0].get_legend().get_texts()[0].get_text() == 'with translation'
    p.controls['translation'].value = False
    assert p.data['kind'] == 'none'
    np.testing.assert_allclose(p.data['transformed'], p.data['plain'])           # no transformation: the same run
    assert len(p.timings) == 3


def test_vbpca_panel_sliders_change_the_data(monkeypatch):
    # what is checked is that each slider reaches the fit (shapes, no error), not how the fits converge (the test
    # above checks that at the panel's own max_iter): runs of at most 40 sweeps
    monkeypatch.setattr(VBPCAConvergencePanel, 'max_iter', 40)
    p = VBPCAConvergencePanel(**SMALL)
    p.controls['N'].value = 100
    assert p.data['W_true'].shape == (6, 2)
    p.controls['D'].value = 3
    assert p.data['W'].shape == (6, 3)
    p.controls['missing'].value = 0.3
    assert p.error is None and len(p.data['plain']) > 1


# ---------------------------------------------------------------- the base class: ipywidgets' own observers

def counting_panel():
    "A panel whose compute records, for each update, the thread it ran in and the status line shown meanwhile."
    from matplotlib.figure import Figure

    class Counting(Panel):
        title = 'counting'
        def make_controls(self, w):
            return dict(x=w.IntSlider(value=0, min=0, max=10, continuous_update=False, description='x'),
                        on=w.ToggleButton(value=False, description='on'))
        def compute(self, params):
            self.calls = getattr(self, 'calls', []) + [(threading.current_thread(), self.status.value)]
            return dict(x=params['x'], on=params['on'], summary=f"x = {params['x']} <b>")
        def draw(self, data):
            fig = Figure(figsize=(1, 1))
            fig.add_subplot().bar([0], [data['x'] + 1])
            return fig
    return Counting()


def test_a_change_recomputes_once_in_the_callers_thread_and_leaves_no_thread():
    threads = threading.active_count()
    p = counting_panel()
    assert len(p.calls) == 1 and p.data['x'] == 0                                   # built: one update
    png = p.image.value
    p.controls['x'].value = 4                                                         # a slider released at 4
    assert len(p.calls) == 2 and p.data['x'] == 4 and p.image.value != png            # one update, at once
    assert all(t is threading.current_thread() for t, _ in p.calls)                   # in the caller's thread
    assert all('computing' in status for _, status in p.calls)                        # what the reader sees meanwhile
    assert p.status.value.startswith('updated in ') and p.status.value.endswith('; x = 4 &lt;b&gt;')   # escaped
    p.controls['x'].value = 4                                                         # no change: nothing to do
    assert len(p.calls) == 2
    p.controls['on'].value = True                                                     # a toggle, clicked
    assert len(p.calls) == 3 and p.data['on'] and len(p.timings) == 3
    assert threading.active_count() == threads                                        # no thread of the panel's own


def test_a_toggle_shows_its_state_as_a_tick_or_a_cross():
    p = counting_panel()
    on = p.controls['on']
    assert on.icon == 'times'
    on.value = True
    assert on.icon == 'check'
    assert counting_panel().controls['on'].icon == 'times'                           # each panel its own buttons


EXPERIMENTS = sorted((Path(__file__).resolve().parents[1] / 'nbs' / 'experiments').glob('*.ipynb'))
CONTROLS = {   # every control a reader of each app sees, in order
    '01_vbpca_convergence': ['N', 'M', 'D', 'noise', 'missing', 'seed', 'translation', 'rotation'],
    '02_ard_pruning': ['stds', 'N', 'seed', 'rotation'],
    '03_rjmcmc_explorer': ['dataset', 'N', 'spectrum', 'sweeps', 'burn_in', 'chains', 'seed', 'exact'],
    '04_householder_stiefel': ['angle', 'step', 'dim', 'n', 'seed', 'sign_fix'],
}


@pytest.mark.parametrize('notebook', EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_each_experiment_app_builds_its_panel(notebook):
    "The code of each Voila app, run as Voila runs it: a panel with every control, observed, and a first figure."
    import ipywidgets as w
    cells = [''.join(c['source']) for c in json.loads(notebook.read_text())['cells'] if c['cell_type'] == 'code']
    ns = {}
    for code in cells: exec(code, ns)
    p = ns['panel']
    assert isinstance(p, Panel) and p.error is None and p.image.value[:8] == b'\x89PNG\r\n\x1a\n'
    assert list(p.controls) == CONTROLS[notebook.stem] and 'updated in' in p.status.value
    assert p.status in p.widget.children and p.image in p.widget.children
    shown = [c for box in p.widget.children if isinstance(box, w.HBox) for c in box.children]
    assert shown == list(p.controls.values())                                          # every control on the panel
    for name, c in p.controls.items():
        assert c.has_trait('continuous_update') is isinstance(c, (w.IntSlider, w.FloatSlider, w.SelectionSlider,
                                                                   w.Text)), name
        if c.has_trait('continuous_update'): assert c.continuous_update is False, name       # reports when released
    assert 'application/vnd.jupyter.widget-view+json' in p._repr_mimebundle_()


@pytest.fixture(scope='module')
def ard_small_panel():
    """Panel 2 at N = 40 (with short_pq_chains' chains), built once for the tests that type into its `stds` box: each
    starts from whatever valid spectrum the one before left and ends on a valid one ('3, 1, 1, 1')."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ARDPruningPanel, 'rj_sweeps', 300)
        mp.setattr(ARDPruningPanel, 'rj_burn_in', 100)
        mp.setattr(ARDPruningPanel, 'rj_chains', 2)
        p = ARDPruningPanel(N=40)
    yield p
    # the panel's updates after its build ran under short_pq_chains' patch too (autouse: every test of this module)


def test_bad_input_is_reported_not_raised(ard_small_panel):
    p = ard_small_panel
    assert p.error is None
    png, data = p.image.value, p.data
    p.controls['stds'].value = '5, four, 3'
    assert 'stds' in p.error and 'input error' in p.status.value
    assert p.data is data and p.image.value == png                                  # the last good figure stays
    p.controls['stds'].value = '3, 1, 1, 1'
    assert p.error is None and p.data['W'].shape == (4, 3)
    with pytest.raises(ValueError, match='stds'): parse_stds('1')
    with pytest.raises(ValueError, match='stds'): parse_stds('1, -2')
    p1 = VBPCAConvergencePanel(N=20, M=4, D=2)                      # built at 20 samples: one fit fewer
    assert p1.error is None
    p1.controls['D'].value = 4
    assert p1.error.startswith('D: expected fewer components than features M = 4')
    p1.controls['D'].value = 2
    assert p1.error is None
    p1.controls['missing'].value = 0.8
    assert p1.error.startswith('missing: so many entries missing')      # 20 samples of 4 features, 80% missing
    with pytest.raises(ValueError, match='unknown control'): VBPCAConvergencePanel(K=3)


@pytest.fixture(scope='module')
def ard_default_panel():
    "Panel 2 at its defaults (Bishop's example), built once for the tests that read it (with short_pq_chains' chains)."
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ARDPruningPanel, 'rj_sweeps', 300)
        mp.setattr(ARDPruningPanel, 'rj_burn_in', 100)
        mp.setattr(ARDPruningPanel, 'rj_chains', 2)
        return ARDPruningPanel()


def test_ard_panel_bishop_default_keeps_four(ard_default_panel):
    p = ard_default_panel
    assert p.controls['N'].value == 100                             # (test_ard_panel_compares_p_of_q changes it later)
    assert p.controls['stds'].value == '5, 4, 3, 2, 1, 1, 1, 1, 1, 1'
    assert p.data['n_kept'] == 4 and p.data['kept'].tolist() == [True] * 4 + [False] * 5
    T, q = p.data['inv_alpha'].shape
    assert q == 9 and T == len(p.data['elbo'])
    # pruned columns end with a prior variance far below the kept ones'
    assert p.data['inv_alpha'][-1, 4:].max() < 1e-2 * p.data['inv_alpha'][-1, :4].min()
    ax_p, ax_h, ax_s, ax_q = p.figure.axes
    assert len(ax_p.lines) == 9 and [l.get_linestyle() for l in ax_p.lines].count('--') == 5
    np.testing.assert_allclose(sorted(pt.get_height() for pt in ax_s.patches)[::-1], p.data['eigenvalues'])
    # the eigenvalues are those of the data the panel generated
    T_data = make_bishop_example(100, random_state=1999).X
    np.testing.assert_allclose(p.data['eigenvalues'], np.sort(np.linalg.eigvalsh(np.cov(T_data.T, bias=True)))[::-1])


def test_ard_panel_plain_sweeps_take_longer():
    p = ARDPruningPanel(N=40)
    fast = len(p.data['elbo'])
    p.controls['rotation'].value = False
    assert len(p.data['elbo']) > 5 * fast
    assert 'plain sweeps' in p.data['summary']


def test_static_slider_frames_and_html():
    s = static_slider(VBPCAConvergencePanel, 'N', [40, 80, 120], start=80, M=5, D=2)
    assert isinstance(s, StaticSlider) and s.values == [40, 80, 120]
    assert len(s.frames) == 3 and len(set(s.frames)) == 3
    assert all(f[:4] == b'\x89PNG' for f in s.frames)
    h = s.html
    assert h.count('<img ') == 3 and h.count('data:image/png;base64,') == 3
    assert 'type="range"' in h and 'max="2"' in h and 'value="1"' in h and '<script>' in h
    assert 'http' not in h                                                             # nothing from the network
    with pytest.raises(ValueError, match='start'): static_slider(VBPCAConvergencePanel, 'N', [40], start=50)
    with pytest.raises(ValueError, match='values'): static_slider(VBPCAConvergencePanel, 'N', [])


def test_householder_panel_samplers():
    p = HouseholderPanel(n=400)
    # numpy's QR without the sign fix: every first column has x_1 <= 0; the Householder sampler is uniform,
    # its mean x_1 within 4 Monte-Carlo standard errors (sd of x_1 on the sphere: 1/sqrt(3)) of 0
    assert np.all(p.data['qr'][:, 0] <= 0) and p.data['neg_x1']['qr'] == 1.0
    assert abs(p.data['mean_x1']['householder']) < 4 / np.sqrt(3 * 400)
    assert p.figure.axes[2].get_title() == 'QR without sign fix: 100% with $x_1 < 0$'    # the bias, in the figure
    # the uniform sampler: about half on each side (binomial sd 0.5 / sqrt(400) = 0.025)
    assert abs(p.data['neg_x1']['householder'] - 0.5) < 4 * 0.025
    np.testing.assert_allclose(np.linalg.norm(p.data['householder'], axis=1), 1)
    png = p.image.value
    p.controls['sign_fix'].value = True
    assert abs(p.data['mean_x1']['qr']) < 4 / np.sqrt(3 * 400) and p.image.value != png
    ax_step, ax_h, ax_q = p.figure.axes
    assert ax_q.get_title() == f"QR with sign fix: {p.data['neg_x1']['qr']:.0%} with $x_1 < 0$"
    assert abs(p.data['neg_x1']['qr'] - 0.5) < 4 * 0.025 and ax_h.name == '3d' and ax_step.name == '3d'


@pytest.mark.parametrize('D', [2, 3, 5])
@pytest.mark.parametrize('positive', [False, True])
def test_householder_steps_are_reflections_that_map_each_column_as_stated(D, positive):
    A = np.random.default_rng(D).normal(size=(D, D))
    st = householder_steps(A, positive=positive)
    assert len(st['reflections']) == D and len(st['stages']) == D + 1
    for k, (H, u) in enumerate(zip(st['reflections'], st['normals']), start=1):
        before, after = st['stages'][k - 1], st['stages'][k]
        np.testing.assert_allclose(H @ H.T, np.eye(D), atol=1e-13)                      # orthogonal
        np.testing.assert_allclose(H, H.T, atol=1e-15)                                   # symmetric: H^-1 = H
        np.testing.assert_allclose(after, H @ before, atol=1e-13)
        np.testing.assert_allclose(H[:k - 1], np.eye(D)[:k - 1], atol=1e-15)             # e_1..e_{k-1} left alone
        a = np.where(np.arange(D) >= k - 1, before[:, k - 1], 0.0)
        r = np.linalg.norm(a)
        np.testing.assert_allclose(after[k:, k - 1], 0, atol=1e-12)                      # column k on the axis e_k
        expected = r if positive else (-np.sign(a[k - 1]) * r if k < D else a[k - 1])    # LAPACK: H_D = I
        np.testing.assert_allclose(after[k - 1, k - 1], expected, rtol=1e-12)
        if u is None:
            np.testing.assert_array_equal(H, np.eye(D))
        else:                                                                           # a mirror: I - 2 u u^T
            np.testing.assert_allclose(np.linalg.norm(u), 1)
            np.testing.assert_allclose(H, np.eye(D) - 2 * np.outer(u, u), atol=1e-15)
            np.testing.assert_allclose(np.linalg.eigvalsh(H), [-1] + [1] * (D - 1), atol=1e-12)
    R, Q = st['R'], st['Q']
    np.testing.assert_allclose(np.tril(R, -1), 0, atol=1e-12)
    np.testing.assert_allclose(Q @ R, A, atol=1e-12)
    Qn, Rn = np.linalg.qr(A)
    if positive:                                                  # the QR factor with a positive diagonal
        assert np.all(np.diag(R) > 0)
        np.testing.assert_allclose(Q, Qn * np.sign(np.diag(Rn)), atol=1e-12)
    else:                                                         # exactly numpy's (LAPACK's) factors
        np.testing.assert_allclose(Q, Qn, atol=1e-12)
        np.testing.assert_allclose(R, Rn, atol=1e-12)


def test_householder_panel_steps_and_dimension():
    p = HouseholderPanel(n=100, angle=120.0)
    A = p.data['A']
    t, e = np.deg2rad(120.0), np.deg2rad(35.0)
    np.testing.assert_allclose(A[:, 0], 1.5 * np.array([np.cos(t) * np.cos(e), np.sin(t) * np.cos(e), np.sin(e)]))
    pngs = set()
    for k in range(4):
        p.controls['step'].value = k
        assert p.data['step'] == k and p.error is None
        pngs.add(p.image.value)
        np.testing.assert_allclose(p.data['stages'][k][k:, :k], 0, atol=1e-12)        # columns 1..k done
    assert len(pngs) == 4
    p.controls['dim'].value = 2                                   # the step slider shrinks to 0..2
    assert p.controls['step'].max == 2 and p.data['step'] == 2 and p.data['A'].shape == (2, 2)
    np.testing.assert_allclose(p.data['A'][:, 0], 1.5 * np.array([np.cos(t), np.sin(t)]))
    p.controls['step'].value = 1
    u, (before, after) = p.data['normals'][0], (p.data['stages'][0][:, 0], p.data['stages'][1][:, 0])
    assert abs(abs(u @ (before - after)) - np.linalg.norm(before - after)) < 1e-12   # the segment is along u ...
    assert abs(u @ (before + after)) < 1e-12                                           # ... its midpoint on the mirror
    with pytest.raises(ValueError, match='A'): householder_steps(np.ones((2, 3)))


# ---------------------------------------------------------------- panel 3 and panel 2's p(q)

def test_rjmcmc_chains_gives_the_librarys_draws():
    from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues
    g = np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876])
    res, trace = rjmcmc_chains(g, 1000, 350, 50, 3, seed=11)
    ref = rjmcmc_pca_from_eigenvalues(g, 1000, n_sweeps=350, burn_in=50, n_chains=3, random_state=11)
    np.testing.assert_array_equal(res.q, ref.q)
    np.testing.assert_array_equal(res.l, ref.l)
    np.testing.assert_array_equal(res.tau, ref.tau)
    np.testing.assert_array_equal(trace[:, 50:], ref.q)
    assert trace.shape == (3, 350) and set(np.unique(trace)) <= set(range(1, 6))        # q = 1..d-1 in every sweep
    with pytest.raises(ValueError, match='burn_in'): rjmcmc_chains(g, 1000, 100, 100, 1, seed=0)


def test_rjmcmc_panel_posterior_sums_to_one_and_matches_the_exact_one():
    from vbfa_lit.rjmcmc import exact_posterior_q
    p = RJMCMCPanel(sweeps=1500, burn_in=300, chains=4, seed=3)
    d = p.data
    assert p.error is None and d['trace'].shape == (4, 1500)
    np.testing.assert_allclose(d['p'].sum(), 1, rtol=1e-12)
    np.testing.assert_allclose(d['p_chain'].sum(1), 1, rtol=1e-12)
    np.testing.assert_allclose(d['p'], d['p_chain'].mean(0), rtol=1e-12)                 # equal-length chains
    ds = rjmcmc_data('Set 1', 0, 3)                                                       # Set 1, N = 1000, seed 3
    np.testing.assert_allclose(d['g'], ds['g']) and d['N'] == 1000
    np.testing.assert_allclose(d['exact'], exact_posterior_q(ds['g'], 1000), rtol=1e-12)
    # the sampler's estimate within 4 Monte-Carlo standard errors (from the ESS) of the exact posterior, for every q
    # it visits, and within 0.01 where it never goes
    ok = d['se'] > 0
    assert np.all(np.abs(d['p'] - d['exact'])[ok] <= 4 * d['se'][ok])
    assert np.all(d['exact'][~ok] < 0.01)
    # the figure shows the data: one trace line per chain, one bar per q, the exact diamonds
    ax_t, ax_p = p.figure.axes
    assert len([l for l in ax_t.lines if l.get_label().startswith('chain')]) == 4
    np.testing.assert_allclose([b.get_height() for b in ax_p.patches], d['p'])
    exact_line = [l for l in ax_p.lines if l.get_label() == 'exact'][0]
    np.testing.assert_allclose(exact_line.get_ydata(), d['exact'])
    # more chains: a new trace, the same data set, the exact posterior from the cache
    png = p.image.value
    p.controls['chains'].value = 2
    assert p.data['trace'].shape == (2, 1500) and p.image.value != png and p.data['exact'] is d['exact']


def test_rjmcmc_panel_data_sets_custom_spectrum_and_bad_input():
    p = RJMCMCPanel(sweeps=300, burn_in=100, chains=2, dataset="Set 1 (the paper's eigenvalues)")
    np.testing.assert_allclose(p.data['g'], [8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876])
    assert p.data['N'] == 1000 and p.data['q'].tolist() == [1, 2, 3, 4, 5]
    p.controls['N'].value = 100                                    # the same spectrum, fewer samples
    assert p.data['N'] == 100
    png, data = p.image.value, p.data
    p.controls['dataset'].value = 'custom'
    assert p.error is None and p.data['g'].shape == (8,) and p.data['N'] == 100
    p.controls['spectrum'].value = '10, 5, one'
    assert 'spectrum' in p.error and 'input error' in p.status.value
    last = p.data
    p.controls['spectrum'].value = '4, 1'                          # d = 2: q = 1 is the only model
    assert p.error is None and p.data['p'].tolist() == [1.0]
    p.controls['burn_in'].value = 300
    assert 'burn_in' in p.error and p.data is not last
    with pytest.raises(ValueError, match='spectrum'): parse_spectrum('3')
    with pytest.raises(ValueError, match='spectrum'): parse_spectrum('3, 0')
    with pytest.raises(ValueError, match='spectrum'): parse_spectrum('3, nan')
    with pytest.raises(ValueError, match='spectrum'): parse_spectrum(', '.join(['1'] * 21))
    np.testing.assert_array_equal(parse_spectrum('1 3, 2'), [3, 2, 1])
    with pytest.raises(ValueError, match='dataset'): rjmcmc_data('Set 5')
    with pytest.raises(ValueError, match='N'): rjmcmc_data('Set 2', N=10)                 # N <= d = 10


def test_rjmcmc_panel_says_when_the_exact_posterior_is_not_computed():
    p = RJMCMCPanel(sweeps=200, burn_in=100, chains=1, dataset='Set 4', N=1000)
    assert p.data['exact'] is None and 'not computed' in p.data['exact_note'] and 'd = 15' in p.data['exact_note']
    assert 'not computed' in p.data['summary']
    assert any('not computed' in t.get_text() for t in p.figure.axes[1].texts)
    p.controls['exact'].value = False
    assert p.data['exact'] is None and 'switched off' in p.data['exact_note']


def test_ard_panel_compares_p_of_q(ard_default_panel):
    from vbfa_lit.evidence import laplace_evidence
    p = ard_default_panel                                            # changed below: the last test to use it
    d = p.data
    np.testing.assert_allclose(d['pq_rjmcmc'].sum(), 1, rtol=1e-12)
    np.testing.assert_allclose(d['pq_laplace'].sum(), 1, rtol=1e-12)
    assert d['pq_q'].tolist() == list(range(1, 10)) and d['pq_k'].tolist() == list(range(10))
    T = make_bishop_example(100, random_state=1999).X
    np.testing.assert_allclose(d['pq_laplace'], laplace_evidence(T).p)
    ax_q = p.figure.axes[3]
    heights = [b.get_height() for b in ax_q.patches]
    np.testing.assert_allclose(heights, np.r_[d['pq_rjmcmc'], d['pq_laplace']])
    marker = [l for l in ax_q.lines if 'VB-ARD' in l.get_label()][0]
    assert marker.get_xdata()[0] == d['n_kept'] == 4
    assert any('short' in t.get_text() for t in ax_q.get_legend().get_texts())       # the figure says so
    p.controls['N'].value = 10                                     # N = d: S is singular, no p(q); ARD still runs
    assert p.error is None and 'pq_rjmcmc' not in p.data and 'N > d' in p.data['pq_note']


def test_static_slider_over_the_data_set_and_the_step():
    s = static_slider(RJMCMCPanel, 'dataset', ['Set 1', 'Set 3'], sweeps=200, burn_in=100, chains=1)
    assert s.values == ['Set 1', 'Set 3'] and len(set(s.frames)) == 2 and s.label == 'data set'
    s = static_slider(HouseholderPanel, 'step', [0, 3], n=100)
    assert len(set(s.frames)) == 2 and 'step 3 of 3' in s.summaries[1]


@pytest.mark.parametrize('text', ['1e200, 1, 1', '1e-200, 1e-200, 1e-200'])
def test_any_failure_of_an_update_is_shown_and_the_panel_stays_usable(text, ard_small_panel):
    # issue 20, item 5: a FloatingPointError or ZeroDivisionError from an update left the panel at "computing..."
    p = ard_small_panel
    assert p.error is None and p.controls['stds'].value != text
    png = p.image.value
    p.controls['stds'].value = text
    assert 'computing' not in p.status.value
    if p.error is not None:                                          # reported by name, the last figure kept
        assert ('input error' in p.status.value or 'update failed' in p.status.value) and p.image.value == png
    p.controls['stds'].value = '3, 1, 1, 1'
    assert p.error is None and p.data['W'].shape == (4, 3)


def test_an_unexpected_exception_is_reported_with_its_type():
    class Boom(Panel):
        def make_controls(self, w): return {}
        def compute(self, params): raise ZeroDivisionError('float division by zero')
        def draw(self, data): raise AssertionError('never drawn')
    p = Boom()
    p.refresh()
    assert p.error == 'ZeroDivisionError: float division by zero' and 'the update failed' in p.status.value
