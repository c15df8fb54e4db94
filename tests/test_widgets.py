"""vbfa_lit.widgets without a browser: set the controls' values from Python, read the data and figures they produce."""
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip('ipywidgets')
from vbfa_lit.widgets import (ARDPruningPanel, Panel, StaticSlider, VBPCAConvergencePanel, bishop_data, parse_stds,
                              static_slider, vbpca_data)

SMALL = dict(N=60, M=6, D=2)


def test_import_vbfa_lit_does_not_import_ipywidgets():
    code = 'import sys, vbfa_lit, vbfa_lit.plots; print("ipywidgets" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == 'False'


def test_missing_ipywidgets_gives_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, 'ipywidgets', None)        # makes `import ipywidgets` fail
    with pytest.raises(ImportError, match=r"pip install 'vbfa_lit\[widgets\]'"):
        VBPCAConvergencePanel(debounce=0)


def test_vbpca_panel_toggles_change_data_and_figure():
    p = VBPCAConvergencePanel(debounce=0, **SMALL)
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


def test_vbpca_panel_sliders_change_the_data():
    p = VBPCAConvergencePanel(debounce=0, **SMALL)
    p.controls['N'].value = 100
    assert p.data['W_true'].shape == (6, 2)
    p.controls['D'].value = 3
    assert p.data['W'].shape == (6, 3)
    p.controls['missing'].value = 0.3
    assert p.error is None and len(p.data['plain']) > 1


def test_bad_input_is_reported_not_raised():
    p = ARDPruningPanel(debounce=0, N=40)
    png, data = p.image.value, p.data
    p.controls['stds'].value = '5, four, 3'
    assert 'stds' in p.error and 'input error' in p.status.value
    assert p.data is data and p.image.value == png                                  # the last good figure stays
    p.controls['stds'].value = '3, 1, 1, 1'
    assert p.error is None and p.data['W'].shape == (4, 3)
    with pytest.raises(ValueError, match='stds'): parse_stds('1')
    with pytest.raises(ValueError, match='stds'): parse_stds('1, -2')
    with pytest.raises(ValueError, match='D'): vbpca_data(M=3, D=3)
    with pytest.raises(ValueError, match='missing'): vbpca_data(missing=0.95)
    with pytest.raises(ValueError, match='unknown control'): VBPCAConvergencePanel(debounce=0, K=3)
    with pytest.raises(ValueError, match='debounce'): VBPCAConvergencePanel(debounce=-1)


def test_ard_panel_bishop_default_keeps_four():
    p = ARDPruningPanel(debounce=0)
    assert p.controls['stds'].value == '5, 4, 3, 2, 1, 1, 1, 1, 1, 1'
    assert p.data['n_kept'] == 4 and p.data['kept'].tolist() == [True] * 4 + [False] * 5
    T, q = p.data['inv_alpha'].shape
    assert q == 9 and T == len(p.data['elbo'])
    # pruned columns end with a prior variance far below the kept ones'
    assert p.data['inv_alpha'][-1, 4:].max() < 1e-2 * p.data['inv_alpha'][-1, :4].min()
    ax_p, ax_h, ax_s = p.figure.axes
    assert len(ax_p.lines) == 9 and [l.get_linestyle() for l in ax_p.lines].count('--') == 5
    np.testing.assert_allclose(sorted(pt.get_height() for pt in ax_s.patches)[::-1], p.data['eigenvalues'])
    # the eigenvalues are those of the data the panel generated
    T_data = bishop_data(N=100, seed=1999)
    np.testing.assert_allclose(p.data['eigenvalues'], np.sort(np.linalg.eigvalsh(np.cov(T_data.T, bias=True)))[::-1])


def test_ard_panel_plain_sweeps_take_longer():
    p = ARDPruningPanel(debounce=0, N=40)
    fast = len(p.data['elbo'])
    p.controls['rotation'].value = False
    assert len(p.data['elbo']) > 5 * fast
    assert 'plain sweeps' in p.data['summary']


def test_debounced_updates_run_in_the_background_and_coalesce():
    p = VBPCAConvergencePanel(debounce=0.2, **SMALL)
    n0 = len(p.timings)                                                               # the first draw is synchronous
    for N in (80, 100, 120):                                                          # three quick changes ...
        p.controls['N'].value = N
    assert 'waiting' in p.status.value                                                # ... nothing computed yet
    p.wait()
    assert len(p.timings) == n0 + 1                                                   # ... one update, for the last
    assert p.data['transformed'] is not None and 'updated in' in p.status.value
    X = p.data  # and that update used N = 120: the plain run's bound is for 120 x 6 entries
    p2 = VBPCAConvergencePanel(debounce=0, N=120, M=6, D=2)
    np.testing.assert_allclose(X['plain'], p2.data['plain'])


def test_a_newer_change_cancels_the_running_update():
    class Slow(Panel):
        title = 'slow'
        def make_controls(self, w): return dict(x=w.IntSlider(value=0, min=0, max=10))
        def compute(self, params, progress):
            import time
            for i in range(40):
                time.sleep(0.01)
                progress(f'step {i}')
            return dict(x=params['x'])
        def draw(self, data):
            from matplotlib.figure import Figure
            return Figure(figsize=(1, 1))
    p = Slow(debounce=0.01)
    p.controls['x'].value = 1
    import time
    time.sleep(0.1)                                                                   # the update for x = 1 is running
    p.controls['x'].value = 2
    p.wait()
    assert p.data == {'x': 2} and len(p.timings) == 2                                 # x = 1 never completed


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


def test_householder_panel_reflection_and_samplers():
    from vbfa_lit.widgets import HouseholderPanel
    p = HouseholderPanel(debounce=0, n=400, angle=120.0)
    v, H, mirror = p.data['v'], p.data['H'], p.data['mirror']
    np.testing.assert_allclose(p.data['Hv'], [np.linalg.norm(v), 0], atol=1e-12)     # H v = ||v|| e_1
    np.testing.assert_allclose(H @ mirror, mirror, atol=1e-12)                           # the mirror is fixed
    np.testing.assert_allclose(H @ H, np.eye(2), atol=1e-12)
    # numpy's QR without the sign fix: every first column has x_1 <= 0; the Householder sampler is uniform,
    # its mean x_1 within 4 Monte-Carlo standard errors (sd of x_1 on the sphere: 1/sqrt(3)) of 0
    assert np.all(p.data['qr'][:, 0] <= 0)
    assert abs(p.data['mean_x1']['householder']) < 4 / np.sqrt(3 * 400)
    np.testing.assert_allclose(np.linalg.norm(p.data['householder'], axis=1), 1)
    png = p.image.value
    p.controls['sign_fix'].value = True
    assert abs(p.data['mean_x1']['qr']) < 4 / np.sqrt(3 * 400) and p.image.value != png
    p.controls['reflection'].value = 'swap'
    np.testing.assert_allclose(p.data['Hv'], [np.linalg.norm(v), 0], atol=1e-12)
    w = np.array([1.0, 0.0]) - v / np.linalg.norm(v)                                      # swap: normal along e_1 - v/|v|
    assert abs(p.data['mirror'] @ w) < 1e-12
    ax2d, ax_h, ax_q = p.figure.axes
    assert ax_q.get_title() == 'numpy QR with sign fix' and ax_h.name == '3d'
