"""Lessons 06, 06a, 07, 08 and 09 as a reader sees them: each corrected sentence against the number it rests on (06's
reproduction of Zhang et al. is the appendix page 06d, checked in test_course_06d.py), 06's precomputed slider of a
chain, figures legible at the page's column width, and no project (test paths, saved-result files, private names) on
the pages."""
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from notebook_text import cells, prose, cell_with

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
COLUMN_IN = 956 / 100      # the page column (956 px) in inches of a 100-dpi inline figure
MIN_PT = 9 * 96 / 100      # 9 pt on a 96-dpi screen, in points of a 100-dpi figure shown at full size


def is_hidden(src):
    return bool(re.search(r'^#\|\s*(hide|echo:\s*false)\s*$', src, re.M)) or bool(
        re.search(r'^#\|\s*export\s*$', src, re.M))


def on_page(stem):
    "The text of the cells a reader of the built page can see (markdown, and code not hidden; folded code counts)."
    return [(k, s) for k, s in cells(stem) if k == 'markdown' or not is_hidden(s)]


def smallest_shown_pt(fig):
    "The smallest font of `fig` in points as shown in the page column (figures wider than it are scaled down)."
    fig.canvas.draw()
    scale = min(1.0, COLUMN_IN / fig.get_size_inches()[0])
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) * scale


# ---------------------------------------------------------------- 06a: N - 1 in Minka's formula

def figure_6a1_data():
    rng = np.random.default_rng(0)
    variances = np.array([10, 8, 6, 4, 2] + [1] * 5)
    basis = np.linalg.qr(rng.normal(size=(10, 10)))[0]
    return rng.normal(size=(100, 10)) * np.sqrt(variances) @ basis.T


def test_06a_n_minus_1_moves_the_log_evidence_by_nats_not_order_1_over_N():
    from vbfa_lit.evidence import laplace_evidence
    X = figure_6a1_data()
    lam = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    ev_n, ev_n1 = laplace_evidence(lam, n_samples=100), laplace_evidence(lam, n_samples=99)
    shift = np.abs(ev_n.log_evidence - ev_n1.log_evidence)
    assert shift.min() > 3 and ev_n.p.argmax() == ev_n1.p.argmax()
    text = ' '.join(prose('06a_evidence').split())
    assert 'O(1/N)' not in text
    assert f'{shift.min():.1f} to {shift.max():.1f} nats' in text
    assert f'up to {np.ptp(ev_n.log_evidence - ev_n1.log_evidence):.1f} nats' in text


def test_06a_sketches_minkas_laplace_step_and_checks_it():
    text = prose('06a_evidence')
    assert "a sketch of Minka's Laplace step" in text
    src = cell_with('06a_evidence', 'def loglik(U, l, v, S, N)')
    assert 'assert abs(step1) < 1e-8 and worst < 1e-5' in src


def test_06a_set4_mode_at_the_true_k_is_the_luck_of_the_draw():
    reps = json.loads((NBS / 'figures' / '06a_replicates.json').read_text())
    modes = np.array(reps['d=15, N=10000, noise 0.1']['RJMCMC (exact posterior mode)'])
    n5 = int(np.sum(modes == 5))
    assert n5 < len(modes) / 2
    assert f'the mode is at 5 in only {n5}' in prose('06a_evidence').replace('\n', ' ')


def test_06a_figure_2_is_legible_at_the_column_width():
    from IPython.display import Markdown
    import vbfa_lit.plots as P
    src = cell_with('06a_evidence', "compare = json.loads(Path('figures/06a_compare.json')")
    ns = dict(np=np, plt=plt, Path=lambda p: NBS / p, json=json, Markdown=Markdown,
              **{k: getattr(P, k) for k in dir(P) if k.startswith('plot_')})
    exec(src, ns)
    fig = plt.gcf()
    try: assert smallest_shown_pt(fig) >= MIN_PT
    finally: plt.close('all')


# ---------------------------------------------------------------- 06: its sentences (on 06d), the slider

def test_06_sentences_say_what_the_numbers_say():
    text = prose('06d_zhang_tables')     # the reproduction of Zhang et al.'s tables, moved out of lesson 06
    for gone in ('nothing in Table 2 requires a different model', 'a rounding, a different draw',
                 'a few hundredths', 'through the private'):
        assert gone not in text, gone
    flat = ' '.join(text.split())
    for said in ('at most 0.209 over 20 replicates', '$-3.1\\,\\%$ to $+4.8\\,\\%$', 'Widening $g_5 - g_6$ by 0.09',
                 'the one out-of-sample test', 'mode 5 in 1 of 10'):
        assert said in flat, said


def test_06_slider_steps_through_one_reference_chain():
    from vbfa_lit.plots import colour, plot_spectrum, plot_trace
    from vbfa_lit.rjmcmc import reference_sweep
    from vbfa_lit.widgets import StaticSlider, figure_png
    chain, drawing = cell_with('06_rjmcmc', 'rng_w = np.random.default_rng(11)'), cell_with('06_rjmcmc', 'def draw_sweep(t):')
    ns = dict(np=np, reference_sweep=reference_sweep, g_ref=np.array([4.0, 2.2, 1.6, 1.2, 1.0, 0.8]), n_ref=40)
    exec(chain, ns)
    q_w, moves = ns['q_w'], ns['moves']
    assert len(q_w) == 41 == len(moves)
    # what the caption says: up by births to q = 5 in five sweeps, then between 3, 4 and 5 in single steps
    assert list(q_w[:6]) == [1, 2, 2, 3, 4, 5] and set(q_w[6:]) == {3, 4, 5}
    assert np.abs(np.diff(q_w)).max() == 1
    assert 'a birth accepted' in moves and 'a death accepted' in moves
    # the frames: drawn here for the first three sweeps (the page has all 41)
    ns.update(plt=plt, plot_trace=plot_trace, plot_spectrum=plot_spectrum, colour=colour, StaticSlider=StaticSlider,
              figure_png=figure_png, display=lambda *a: None, states=ns['states'][:3], q_w=q_w[:3], moves=moves[:3])
    try: exec(drawing, ns)
    finally: plt.close('all')
    slider = ns['slider']
    assert len(slider.frames) == 3 == len(set(slider.frames)) and slider.values == [0, 1, 2]
    assert 'vbfa-static-slider' in slider.html and slider.html.count('<img ') == 3
    assert slider.summaries[1] == 'sweep 1: q = 2, a birth accepted'


def test_06_figure_1_is_legible_at_the_column_width():
    from vbfa_lit.plots import plot_birth_state, plot_jump_moves
    src = cell_with('06_rjmcmc', 'b6 = [0, 1, 0.5')
    exec(src, dict(plt=plt, plot_jump_moves=plot_jump_moves, plot_birth_state=plot_birth_state))
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')


# ---------------------------------------------------------------- 08 and 09

def test_08_householder_index_is_not_the_sample_index():
    block = next(s for k, s in cells('08_householder_ppca') if k == 'markdown' and s.startswith('## The model'))
    assert r'\mathbf{v}_n' not in block and r'i = M, \dots, M-D+1' in block
    assert r'\mathbf{v}_n' not in prose('08_householder_ppca')


def test_08_figure_4_is_legible_at_the_column_width():
    from vbfa_lit.plots import plot_interval_rows
    src = cell_with('08_householder_ppca', "fig.suptitle('Figure 8.4:")
    ax_saved = json.loads((NBS / 'figures' / '08_breast_cancer.json').read_text())['axes']
    exec(src, dict(np=np, plt=plt, plot_interval_rows=plot_interval_rows, ax_saved=ax_saved))
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')


def test_09_exercise_3_does_not_blame_correlated_chains():
    text = prose('09_widgets')
    ex3 = text[text.index('In panel 3, choose Set 1'):text.index('4. In panel 3')]
    assert 'correlated' not in ex3 and 'independent' in ex3


# ---------------------------------------------------------------- no project on the pages

LEAKS = re.compile(r'tests/|test_\w+\.py|\.json\b|savefig|hidden cell|closing note|nbdev-test|--flags'
                   r'|(?<![\w.])_(run|log_ordered_integral|sweep|Tables)\b', re.I)


@pytest.mark.parametrize('stem', ['06_rjmcmc', '06d_zhang_tables', '06a_evidence', '07_stiefel',
                                  '08_householder_ppca'])
def test_lesson_pages_carry_no_project(stem):
    found = [(k, m.group(0), s[max(0, m.start() - 40):m.end() + 20]) for k, s in on_page(stem)
             for m in LEAKS.finditer(s)]
    assert not found, found
