"""Lesson 10 (reversible jump MCMC) as a reader sees it: a boxed table from Zhang et al.'s symbols to the course's,
repeated near the conditionals; Green (1995) cited for what PRML does not cover; Green's ratio named by Zhang et al.'s
equation and the general ratio written before its check; the KS table showing both ends of a narrow interval; exercise
1's solution printing what its text states; Figure 10.1 legible and its caption true to the axis and the band; the
slider of one reference chain; no sentence saying the factorial favours more components."""
import math
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

from notebook_text import (MIN_PT, NBS, caption, cell_id, cell_with, output_of, cells, flat, is_folded,  # noqa: E402
                           is_hidden, prose, run, section, smallest_shown_pt, solution_blocks)

STEM = '10_rjmcmc'


def test_symbol_table_is_boxed_and_repeated_near_the_conditionals():
    text = prose(STEM)
    box = section(text, '<div style="border', '</div>')
    for row in (r'| $\tau = 1/\sigma^2$, the noise precision | $s = 1/\sigma^2$ |',
                r'| $M$, the number of features | $d$ |', r'$\alpha$, the shape of the Gamma prior of $\tau$'):
        assert row in box, row
    prior = section(text, '## The prior and the log joint', 'SymPy reads off')
    assert 'not a latent point' in prior and "the course's $\\tau$" in prior


def test_points_to_green_and_says_prml_has_no_reversible_jump():
    text = flat(prose(STEM))
    assert 'PRML has no section on reversible jump' in text and 'Green (1995)' in text
    assert 'Green (1995)' in (NBS / '98_references.ipynb').read_text()


def test_imports_of_plumbing_are_folded():
    for k, s in cells(STEM):
        if k == 'code' and not is_hidden(s) and not is_folded(s) and '#| export' not in s:
            assert not re.search(r'^import (mpmath|json|warnings)|^from pathlib', s, re.M), s



def test_no_page_says_the_factorial_favours_more_components():
    for stem in ('11_evidence', '31_zhang_tables', STEM):
        text = flat(prose(stem))
        for sentence in re.split(r'(?<=[.:])\s', text):
            if '(q+1)!' in sentence and re.search(r'favours|adds about', sentence):
                assert 'not' in sentence, (stem, sentence)


def test_ks_table_shows_both_ends_of_a_narrow_interval():
    code = next(s for k, s in cells(STEM) if k == 'code' and 'KS p-value' in s)
    lo_spec, hi_spec = re.search(r'\(\{lo_(:[^}]*)\}, \{hi_(:[^}]*)\}\)', code).groups()
    assert format(50000.0, lo_spec[1:]) != format(50000.001, hi_spec[1:])
    assert format(1e-200, lo_spec[1:]) == '1e-200' and format(np.inf, hi_spec[1:]) == 'inf'


def test_greens_ratio_names_zhangs_equation_and_the_general_ratio_comes_before_its_check():
    src = cells(STEM)
    text = flat(prose(STEM))
    assert "Green's ratio (Zhang et al., eq. 9)" in text
    general = next(i for i, (k, s) in enumerate(src) if k == 'markdown' and 'R = \\Big(\\frac{v}{s}\\Big)^{N/2}' in s)
    check = next(i for i, (k, s) in enumerate(src) if k == 'code' and 'def log_R_general' in s)
    assert general == check - 1
    assert sum('R = \\Big(\\frac{v}{s}\\Big)^{N/2}' in s for _, s in src) == 1


def test_exercise_1_prints_the_values_its_text_states():
    from vbfa_lit.rjmcmc import exact_posterior_q
    text, blocks = solution_blocks(STEM, 1)
    assert not blocks                                           # the code runs in the folded cell after the solution
    code = cell_with(STEM, "exercise 1's solution")
    assert is_folded(code) and not re.search(r'#\s*(\[|about)', code)   # no comments standing in for outputs
    out = run(code, {'np': np, 'math': math, 'exact_posterior_q': exact_posterior_q})
    assert out.count('[0.2 0.2 0.2 0.2 0.2]') == 1 and out.count('[0.6963 0.2321 0.058  0.0116 0.0019]') == 2
    assert 'largest difference 2e-06' in out
    assert 'prints 0.2 for every $q$' in text and '0.6963, 0.2321, 0.058, 0.0116, 0.0019' in text and '2e-06' in text


def test_exercises_2_and_3_print_what_their_solutions_say():
    "The Poisson prior moves p(q | D) to smaller q by the quoted means; leaving Z out inflates R by 1/Z as quoted."
    from vbfa_lit.rjmcmc import exact_posterior_q, log_birth_ratio, move_probabilities, reference_truncated_gamma
    ns = {'np': np, 'math': math, 'exact_posterior_q': exact_posterior_q, 'log_birth_ratio': log_birth_ratio,
          'move_probabilities': move_probabilities, 'reference_truncated_gamma': reference_truncated_gamma,
          'g_ref': np.array([4.0, 2.2, 1.6, 1.2, 1.0, 0.8]), 'n_ref': 40}
    out2 = run(cell_with(STEM, "exercise 2's solution"), ns)
    before, after = map(float, re.search(r'mean of q: ([\d.]+) -> ([\d.]+)', out2).groups())
    text2, _ = solution_blocks(STEM, 2)
    assert after < before and f'from {before:.2f} to {after:.2f}' in text2
    out3 = run(cell_with(STEM, "exercise 3's solution"), ns)
    Z = float(re.search(r'Z = ([\d.]+)', out3).group(1))
    R_with, R_without, inv_z = map(float, re.search(r'with Z ([\d.e+-]+), without ([\d.e+-]+): larger by 1/Z = ([\d.]+)',
                                                    out3).groups())
    assert R_without / R_with == pytest.approx(inv_z, rel=0.01) and R_with < 0.1 < 1 < R_without
    text3, _ = solution_blocks(STEM, 3)
    assert round(Z, 2) == 0.01 and '$Z$ is about 0.01' in text3 and 'R \\approx 0.05' in text3 and round(R_with, 2) == 0.05
    assert '($R \\approx 5$)' in text3 and round(R_without) == 5


def test_slider_steps_through_one_reference_chain():
    from vbfa_lit.plots import colour, plot_spectrum, plot_trace
    from vbfa_lit.rjmcmc import reference_sweep
    from vbfa_lit.widgets import StaticSlider, figure_png
    chain, drawing = cell_with(STEM, 'rng_w = np.random.default_rng(11)'), cell_with(STEM, 'def draw_sweep(t):')
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
    # the page opens on the last sweep (the whole trace drawn), not on the start where nothing has happened yet
    assert slider.start == 2 and 'value="2"' in slider.html and slider.html.count('display:block') == 1
    assert slider.html.index('display:block') > slider.html.index('data-value="2"')


def page_figures(**env):
    "A namespace holding the page's own (folded) plot_jump_moves and plot_birth_state."
    from matplotlib.patches import Circle, FancyArrowPatch
    from vbfa_lit.plots import colour
    ns = dict(np=np, plt=plt, colour=colour, Circle=Circle, FancyArrowPatch=FancyArrowPatch, **env)
    exec(cell_with(STEM, 'def plot_jump_moves('), ns)
    return ns


def test_figure_1_is_legible_at_the_column_width():
    src = cell_with(STEM, 'b6 = [0, 1, 0.5')
    exec(src, page_figures())
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')



def test_figure_6_1_caption_reads_the_precision_axis_as_variances_and_names_the_band():
    src = next(s for k, s in cells(STEM) if k == 'code' and 'b6 = [0, 1, 0.5' in s)
    cap = flat(caption(STEM, '10.1'))
    assert 'the variances $l_j = 1/x_j$ decrease from left to right' in cap
    assert 'shaded band, the interval $(x_4, s)$' in cap and '$\\mathcal{G}(r, \\tau)$' in cap
    printed = []
    ns = page_figures(print=lambda *a: printed.append(' '.join(map(str, a))))
    try:
        exec(src, ns)
        ax = plt.gcf().axes[1]
        assert ax.get_xscale() == 'log' and ax.get_xlabel().startswith('precision')
        band = [p for p in ax.patches if p.get_width() > 0]
        lo, hi = band[0].get_x(), band[0].get_x() + band[0].get_width()
        assert (lo, hi) == (ns['x6'][-1], ns['s6'])           # the shaded band is (x_q, s)
    finally:
        plt.close('all')
    variances = [float(v) for v in printed[0].split(':', 1)[1].split(',')]
    order = sorted([*ns['x6'], ns['v6'], ns['s6']])          # the precisions left to right
    assert [round(1 / p, 2) for p in order] == sorted(variances, reverse=True)
    assert '$l_1 = 10$' in cap and f'$l_4 = {1 / ns["x6"][3]:.2f}$' in cap and '1/s = 1$' in cap



def test_the_birth_ratio_is_derived_by_hand_in_numbered_steps_before_its_sympy_check():
    src = cells(STEM)
    birth = next(s for k, s in src if k == 'markdown' and s.startswith('## Birth and death'))
    for tag, what in (('10.7', 'Z = '), ('10.8', '= 1.'), ('10.9', 'g_{q+1}(s - v)'), ('10.10', '(q+2)\\,\\mathcal{G}(v'),
                      ('10.11', '(q+2)\\ Z\\')):
        eq = birth[:birth.index(f'\\tag{{{tag}}}')]
        assert what in eq[eq.rindex('$$'):], (tag, what)
    check = next(s for k, s in src if k == 'code' and 'def log_R_general' in s)
    assert is_folded(check) and 'SymPy agrees with Eq. (10.11)' in check
    tags = [int(m) for m in re.findall(r'\\tag\{10\.(\d+)\}', prose(STEM))]
    assert tags == list(range(1, len(tags) + 1)), tags


def test_leaving_z_out_is_measured_on_the_appendix_page_and_the_summary_keeps_its_numbers_there():
    text = flat(prose(STEM))
    assert 'We measure below' not in text
    note = section(text, "Beside the paper's eq. (10)", 'Where a Jacobian')
    assert '(31_zhang_tables.ipynb) measures what' in note
    summary = section(text, '## Summary', '## Exercises')
    assert not re.search(r'0\.883|0\.586|0\.209|0\.683', summary)


def test_the_missing_occam_factor_is_stated_and_measured_on_pure_noise():
    text = flat(prose(STEM))
    assert 'Fixing the directions at the sample eigenvectors removes that factor' in text
    assert '8 to 9 components' in text
    out = output_of(STEM, cell_id(STEM, 'noise_q = []'))             # what it printed when the page's notebook ran
    first, other = out.splitlines()[:2]
    modes, means = first.split('posterior mode of q ')[1].split('; posterior mean ')
    assert {int(m) for m in modes.split(', ')} <= {8, 9}
    assert all(7.5 <= float(e) <= 9 for e in means.split(', '))
    # the excess is not the hyperparameters': r = 1 or 10, eta x10 or /10 keep the modes high (the prose says 7 to 9)
    lo, hi = (int(m) for m in re.search(r'modes (\d) to (\d)', other).groups())
    assert 7 <= lo <= hi <= 9 and 'modes stay at 7 to 9' in text


def test_figure_6_2_starts_at_sweep_0_on_one_vertical_scale():
    from vbfa_lit.plots import colour, plot_spectrum, plot_trace
    from vbfa_lit.rjmcmc import reference_sweep
    from vbfa_lit.widgets import StaticSlider
    ns = dict(np=np, reference_sweep=reference_sweep, g_ref=np.array([4.0, 2.2, 1.6, 1.2, 1.0, 0.8]), n_ref=40)
    exec(cell_with(STEM, 'rng_w = np.random.default_rng(11)'), ns)
    # the cell draws all 41 frames; here each is named by its own title instead of rendered to PNG (rendering was 21 of
    # this test's 31 CPU-s): the slider test renders three frames, and the site build runs the cell as the page shows it
    ns.update(plt=plt, plot_trace=plot_trace, plot_spectrum=plot_spectrum, colour=colour, StaticSlider=StaticSlider,
              figure_png=lambda fig, **kw: fig.get_suptitle().encode(), display=lambda *a: None)
    exec(cell_with(STEM, 'def draw_sweep(t):'), ns)
    assert len(ns['slider'].frames) == 41
    try:
        tops = set()
        for t in (0, 3, 20):
            fig = ns['draw_sweep'](t)
            line = fig.axes[0].lines[0]
            assert list(line.get_xdata()) == list(range(t + 1)) and line.get_ydata()[0] == ns['q_w'][0]
            tops.add(fig.axes[1].get_ylim()[1])
            plt.close(fig)
        assert len(tops) == 1
    finally:
        plt.close('all')
