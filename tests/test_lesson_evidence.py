"""Lesson 11 (Laplace evidence) as a reader sees it: the bridge from Minka's evidence to PRML's Laplace
approximation with the integral of its step 4 written and checked, a sketch of Minka's Laplace step run on the page,
the N - 1 of the sample covariance moving the log evidence by nats (as printed), the set-4 mode at the true k the luck
of the draw, the excess components in noise put on the plug-in, and Figure 11.2 legible at the column width; then the
yardstick: equations tagged and cited, the two estimators agreeing on every saved problem, the bound below the
evidence with a gap that grows with k, the small case run on the page (its seed's result), the numbers the prose quotes
against the saved results, and Figures 11.4-11.5 legible."""
import json
import re

import pytest

import matplotlib
import numpy as np

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

from notebook_text import (MIN_PT, NBS, cell_id, cell_with, cells, flat, prose, run, section,  # noqa: E402
                           smallest_shown_pt)

STEM = '11_evidence'


def test_bridges_to_prmls_laplace_approximation():
    text = flat(prose(STEM))
    sketch = section(text, "a sketch of Minka's Laplace step", '1. **The maximum**')
    for ref in ('Sec. 4.4', 'eq. (4.135)', 'Sec. 3.5', 'Sec. 12.2.3', 'tangent angles'):
        assert ref in sketch, ref


def test_step_4_integral_is_written_and_checked():
    text = flat(prose(STEM))
    step4 = section(text, '4. **The eigenvalues and the noise.**', 'So $(2\\pi)^{(m+k)/2}$')
    assert 'c/l_j' in step4 and r'\Gamma\big(\tfrac N2\big)' in step4 and '1 + 1/(6N)' in step4
    src = cell_with(STEM, 'def loglik(U, l, v, S, N)')
    assert 'integrate.quad' in src and 'gamma_fn - laplace - 1 / (6 * N_fig)' in src
    # the claim itself: Laplace's method in log l is the Gamma function to a factor 1 + 1/(6N)
    from scipy import special
    for N, lam in ((100, 10.46), (1000, 0.7)):
        exact = special.gammaln(N / 2) + N / 2 * np.log(2 / (N * lam))
        laplace = -N / 2 * (np.log(lam) + 1) + 0.5 * np.log(4 * np.pi / N)
        assert abs(exact - laplace - 1 / (6 * N)) < 1 / N ** 3


def test_n_minus_1_printout_stands_under_its_paragraph():
    cs = cells(STEM)
    printout = next(i for i, (k, s) in enumerate(cs) if k == 'code' and 'n_samples=99' in s)
    side = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and '## Side by side' in s)
    assert printout < side
    ex2 = section(prose(STEM), "2. Minka's BIC", '*Hint:*')
    assert 'Sec. 4.4.1' in ex2 and 'Minka, 2000' in ex2



def figure_6a1_data():
    rng = np.random.default_rng(0)
    variances = np.array([10, 8, 6, 4, 2] + [1] * 5)
    basis = np.linalg.qr(rng.normal(size=(10, 10)))[0]
    return rng.normal(size=(100, 10)) * np.sqrt(variances) @ basis.T


def test_n_minus_1_moves_the_log_evidence_by_nats_not_order_1_over_N():
    from vbfa_lit.evidence import laplace_evidence
    X = figure_6a1_data()
    lam = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    ev_n, ev_n1 = laplace_evidence(lam, n_samples=100), laplace_evidence(lam, n_samples=99)
    shift = np.abs(ev_n.log_evidence - ev_n1.log_evidence)
    assert shift.min() > 3 and ev_n.p.argmax() == ev_n1.p.argmax()
    text = flat(prose(STEM))
    assert f'{shift.min():.1f} to {shift.max():.1f} nats' in text
    assert f'up to {np.ptp(ev_n.log_evidence - ev_n1.log_evidence):.1f} nats' in text


def test_sketches_minkas_laplace_step_and_checks_it():
    text = prose(STEM)
    assert "a sketch of Minka's Laplace step" in text
    src = cell_with(STEM, 'def loglik(U, l, v, S, N)')
    assert 'assert abs(step1) < 1e-8 and worst < 1e-5' in src


def test_set4_mode_at_the_true_k_is_the_luck_of_the_draw():
    reps = json.loads((NBS / 'figures' / '06a_replicates.json').read_text())
    modes = np.array(reps['d=15, N=10000, noise 0.1']['RJMCMC (exact posterior mode)'])
    n5 = int(np.sum(modes == 5))
    assert n5 < len(modes) / 2
    assert f'the mode is at 5 in only {n5}' in prose(STEM).replace('\n', ' ')


def test_figure_2_is_legible_at_the_column_width():
    from IPython.display import Markdown
    import vbfa_lit.plots as P
    src = cell_with(STEM, "compare = json.loads(Path('figures/06a_compare.json')")
    ns = dict(np=np, plt=plt, Path=lambda p: NBS / p, json=json, Markdown=Markdown,
              **{k: getattr(P, k) for k in dir(P) if k.startswith('plot_')})
    exec(src, ns)
    fig = plt.gcf()
    try: assert smallest_shown_pt(fig) >= MIN_PT
    finally: plt.close('all')



def test_summary_puts_the_excess_on_the_plug_in_and_the_factorial_keeps_p_q_uniform():
    text = flat(prose(STEM))
    summary = text[text.index('## Summary'):text.index('## Exercises')]
    assert 'no Occam factor for them: with few samples it favours too many components' in summary
    assert 'keeps the prior of $k$ uniform' in summary



def test_figure_1_is_legible_at_the_column_width():
    import vbfa_lit.plots as P
    from vbfa_lit.evidence import laplace_evidence
    src = cell_with(STEM, 'Figure 11.1: the spectrum')
    ns = dict(np=np, plt=plt, laplace_evidence=laplace_evidence,
              **{k: getattr(P, k) for k in dir(P) if k.startswith('plot_')})
    exec(src, ns)
    fig = plt.gcf()
    try: assert smallest_shown_pt(fig) >= MIN_PT
    finally: plt.close('all')


# --- the yardstick: the reference evidence, and every answer against it

def saved_grid():
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / 'benchmarks' / 'results' / 'model_selection_reference.json'
    return json.loads(path.read_text())['problems']


def softmax(v):
    v = np.asarray(v, float)
    p = np.exp(v - v.max())
    return p / p.sum()


def test_equations_are_tagged_in_order_and_every_citation_has_its_equation():
    import re
    text = prose(STEM)
    tags = [int(t) for t in re.findall(r'\\tag\{11\.(\d+)\}', text)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 9, tags
    cited = {int(c) for c in re.findall(r'Eq\. \(11\.(\d+)\)', text)}
    assert cited <= set(tags) and {6, 7, 9} <= cited, cited


def test_every_saved_problem_has_the_two_estimators_agreeing():
    """Done-when of the yardstick: on every problem the lesson reports, TI and AIS agree within three combined errors,
    and every annealed importance sampling run has enough weight-carrying runs for its delta-method error."""
    grid = saved_grid()
    assert len(grid) >= 9
    for name, rec in grid.items():
        r = rec['reference']
        z = np.abs(np.subtract(r['ti'], r['ais'])) / np.hypot(np.hypot(r['ti_se'], r['ti_disc']), r['ais_se'])
        assert z.max() < 3, (name, z)
        assert min(r['ais_ess']) > 3, (name, r['ais_ess'])
        assert len(r['ti']) == rec['k_max'] + 1 and max(r['ti_se']) < 1.5, name


def test_the_vb_bound_is_below_the_reference_and_its_gap_grows_with_k():
    "Eq. (11.6) on the saved grid: never above (within the error), and the gap larger at k = 4 than at k = 1 everywhere."
    for name, rec in saved_grid().items():
        r = rec['reference']
        err = np.hypot(r['ti_se'], r['ti_disc'])
        gap = np.array(r['ti']) - rec['vb_bound']
        assert np.all(gap > -3 * err), (name, gap)
        assert gap[4] > gap[1] + 5, (name, gap)


def test_small_case_agrees_is_bounded_and_reproduces_its_seed():
    "The lesson's small case as its table printed it when the page's notebook ran (the site build's run, else now)."
    from notebook_text import output_of
    table = output_of(STEM, cell_id(STEM, "print(' k   TI (err)"))
    rows = np.array([l.replace('(', ' ').replace(')', ' ').replace(',', ' ').split()
                     for l in table.splitlines() if re.match(r'\s*\d\s', l)], float)
    assert rows[:, 0].tolist() == [0, 1, 2, 3], table
    ti, ti_err, ais, ais_se, bound = rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4], rows[:, 7]
    assert np.all(np.abs(ti - ais) < 3 * np.hypot(ti_err, ais_se)) and np.all(rows[:, 6] < 3)
    gap = ti - bound
    assert np.allclose(gap, rows[:, 8], atol=0.011)                  # the printed gap is TI minus the bound
    assert np.all(gap > -3 * ti_err) and np.all(np.diff(gap) > 0)
    from scipy import special
    floor = np.array([k * np.log(2) + special.gammaln(k + 1) for k in range(4)])
    assert np.all(gap[1:] > floor[1:])                      # exercise 4: each gap above its symmetric-modes floor
    assert softmax(ti).argmax() == 2 and softmax(bound)[3] < softmax(ti)[3]
    # exercise 4's worked solution, run with the small case's names, prints the floors its text quotes
    from notebook_text import solution_blocks
    text, blocks = solution_blocks(STEM, 4)
    assert not blocks                                        # the solution's code runs in the folded cell after it
    printed = output_of(STEM, cell_id(STEM, "exercise 4's solution"))
    floors, gaps = [np.array(l.split('[')[1].strip(' ]').split(), float) for l in printed.splitlines()]
    assert np.allclose(floors, [0, 0.69, 2.08, 3.87]) and np.all(gaps[1:] > floors[1:])
    assert np.allclose(gaps, gap, atol=0.06)                 # the gaps of the small case's table above
    assert '0, 0.69, 2.08 and 3.87 nats' in text and 'The gaps of the small case are larger from $k = 1$ on' in text
    # a fixed seed's result (one BLAS thread): the lesson's printout
    assert ti[2] == pytest.approx(-390.252, abs=5e-3) and ais[2] == pytest.approx(-389.963, abs=5e-3)
    # the table is the one the page computes: the lesson's seeds and settings
    run_cell = cell_with(STEM, 'small[k] = ti, ais, vb_bound(X_small, k, prior)')
    assert 'short = dict(n_temperatures=30, n_chains=8, n_sweeps=300, n_burn=100)' in run_cell
    assert "method='ais', n_steps=5000, n_runs=32, random_state=10 + k" in run_cell


def test_figures_4_and_5_are_legible_at_the_column_width():
    from pathlib import Path
    from IPython.display import Markdown
    import vbfa_lit
    import vbfa_lit.plots as P
    ns = dict(np=np, plt=plt, json=json, Path=Path, vbfa_lit=vbfa_lit, Markdown=Markdown, softmax=softmax,
              **{k: getattr(P, k) for k in dir(P) if k.startswith('plot_')})
    import os
    cwd = os.getcwd()
    os.chdir(NBS)
    try:
        exec(cell_with(STEM, 'def judged(rec)'), ns)
        for marker in ("Figure 11.4: p(k | D)", "Figure 11.5: the gap"):
            plt.close('all')
            exec(cell_with(STEM, marker), ns)
            assert smallest_shown_pt(plt.gcf()) >= MIN_PT, marker
    finally:
        os.chdir(cwd)
        plt.close('all')


def quoted_numbers(grid):
    "The numbers the closing section quotes, recomputed from the saved grid by their definitions in the prose."
    names = [n for n, r in grid.items() if r['d'] == 6]
    z, ps, gaps = [], {}, {}
    for n in names:
        rec = grid[n]; r = rec['reference']; K = rec['k_max'] + 1
        ti, ais = np.array(r['ti']), np.array(r['ais'])
        te, ae = np.hypot(r['ti_se'], r['ti_disc']), np.array(r['ais_se'])
        z.append(np.abs(ti - ais) / np.hypot(te, ae))
        ref = (ti / te ** 2 + ais / ae ** 2) / (1 / te ** 2 + 1 / ae ** 2)        # precision-weighted
        rj = np.r_[0.0, rec['rjmcmc']][:K]
        ps[n] = {'ref': softmax(ref), 'vb': softmax(rec['vb_bound']), 'lap': softmax(rec['laplace'][:K]), 'rj': rj / rj.sum()}
        gaps[n] = ref - np.array(rec['vb_bound'])
    mean_k = lambda p: float(np.dot(np.arange(len(p)), p))
    mode = {m: np.array([ps[n][m].argmax() for n in names]) for m in ('ref', 'vb', 'lap', 'rj')}
    q = dict(n=len(names), n_ev=sum(len(x) for x in z), worst=max(x.max() for x in z),
             slope=np.mean([np.polyfit(np.arange(5), gaps[n], 1)[0] for n in names]),
             vb_below=int(np.sum(mode['vb'] < mode['ref'])), vb_above=int(np.sum(mode['vb'] > mode['ref'])),
             lap_at=int(np.sum(mode['lap'] == mode['ref'])), rj_top=int(np.sum(mode['rj'] == 4)),
             ard_at=int(np.sum(np.array([np.median(grid[n]['vb_ard']) for n in names]) == mode['ref'])),
             ref_true=int(np.sum(mode['ref'] == np.array([grid[n]['k_true'] for n in names]))))
    for m in ('vb', 'rj'):
        q[m + '_shift'] = np.mean([mean_k(ps[n][m]) - mean_k(ps[n]['ref']) for n in names])
    for m in ('lap', 'rj'):
        for N in (20, 50, 200):
            q[f'{m}_tv{N}'] = np.mean([0.5 * np.abs(ps[n][m] - ps[n]['ref']).sum() for n in names if grid[n]['N'] == N])
    return q


def test_the_closing_section_quotes_the_saved_results():
    q = quoted_numbers(saved_grid())
    text = flat(prose(STEM))
    closing = text[text.index('### What each gets wrong, and why'):text.index('## Summary')]
    assert q['vb_above'] == 0 and q['vb_shift'] < 0 < q['rj_shift']         # the directions the prose states
    assert q['lap_tv20'] > q['lap_tv50'] > q['lap_tv200']
    for s in (f"On all {q['n_ev']} evidences of the {q['n']} data sets", f"within {q['worst']:.1f} combined",
              f"mode is the generating $k$ on {q['ref_true']} of the {q['n']}", f"about {q['slope']:.1f} nats per component",
              f"below the reference's on {q['vb_below']} of the {q['n']} data sets and never above",
              f"$\\mathbb E[k]$ is {-q['vb_shift']:.2f} below", f"reference's mode on {q['ard_at']} of the {q['n']}",
              f"largest $k$ allowed on {q['rj_top']} of the {q['n']}", f"is {q['rj_shift']:.2f} above",
              f"({q['rj_tv20']:.2f}, {q['rj_tv50']:.2f} and {q['rj_tv200']:.2f} at",
              f"reference's on {q['lap_at']} of the {q['n']} data sets", f"falls from {q['lap_tv20']:.2f} at",
              f"to {q['lap_tv50']:.2f} at $N = 50$ and {q['lap_tv200']:.2f} at $N = 200$"):
        assert s in closing, s


def test_bishops_example_is_quoted_from_the_saved_results():
    b = saved_grid()["Bishop's example"]
    r = b['reference']
    ti, ais = np.array(r['ti']), np.array(r['ais'])
    te, ae = np.hypot(r['ti_se'], r['ti_disc']), np.array(r['ais_se'])
    ref = softmax((ti / te ** 2 + ais / ae ** 2) / (1 / te ** 2 + 1 / ae ** 2))
    rj = np.r_[0.0, b['rjmcmc']][:7]
    assert ref.argmax() == 4 and b['vb_ard'] == [4, 4, 4] and b['settings'] == {'ti': {}, 'ais': {}}
    text = flat(prose(STEM))
    assert (f"agree within {(np.abs(ti - ais) / np.hypot(te, ae)).max():.1f} combined standard errors at every $k$, and "
            f"the reference puts {ref[4]:.2f} on the generating $k = 4$; Laplace ({softmax(b['laplace'][:7])[4]:.2f}), "
            f"the bound ({softmax(b['vb_bound'])[4]:.2f})") in text
    assert f"puts {(rj / rj.sum())[4]:.2f} there" in text


def test_exercises_1_and_2_print_what_their_solutions_say():
    "The folded solution cells of exercises 1 and 2, run, print the numbers their text quotes."
    from notebook_text import run, solution_blocks
    from vbfa_lit.evidence import laplace_evidence
    ns = dict(np=np, laplace_evidence=laplace_evidence, X_noise=np.random.default_rng(1).normal(size=(200, 8)))
    fit, occam = [np.array(l.split('[')[1].strip(' ]').split(), float)
                  for l in run(cell_with(STEM, "exercise 1's solution"), ns).splitlines()]
    text1, blocks1 = solution_blocks(STEM, 1)
    assert not blocks1 and 'gains about 22 nats' in text1 and 'loses about 41' in text1
    assert round(fit[-1]) == 22 and round(-occam[-1]) == 41 and np.all(np.diff(fit) > 0) and np.all(np.diff(occam) < 0)
    rates = [re.findall(r'in (\d+)%', l) for l in run(cell_with(STEM, "exercise 2's solution"), ns).splitlines()]
    assert rates == [['80', '50'], ['100', '100'], ['98', '100']]
    text2, _ = solution_blocks(STEM, 2)
    assert 'in half of the data sets, against 0.8' in text2 and 'With noise 0.1 both find $k = 5$ every time' in text2


def test_gibbs_conditionals_are_derived_on_the_page_and_checked_by_sympy():
    "The power posterior's three conditionals are written by hand (tagged 11.10-11.12, in order) and SymPy's read-off agrees; a wrong t fails."
    import sympy as sp
    from vbfa_lit.symbolic import GammaFactor, GaussianFactor, gamma_readoff, gaussian_readoff
    md = next(s for k, s in cells(STEM) if k == 'markdown' and s.startswith('### Sampling the power posterior'))
    tags = [md.index(f'\\tag{{11.{k}}}') for k in (10, 11, 12)]
    assert tags == sorted(tags) and '(12.42)' in md and 'kernel' in md and 'complete' in md
    assert r'\mathbf P_x = \mathbf I_k + t\tau\,\mathbf W^\top\mathbf W' in md
    assert r'\mathcal G\Big(a_\tau + \frac{tMN}{2},\ b_\tau + \frac t2\,' in md
    src = cell_with(STEM, 'SymPy reads Eqs. (11.10)-(11.12)')
    env = dict(sp=sp, GammaFactor=GammaFactor, GaussianFactor=GaussianFactor, gamma_readoff=gamma_readoff,
               gaussian_readoff=gaussian_readoff)
    small = src.replace('for M_ in (1, 2, 3) for N_ in (1, 2, 3) for k_ in (1, 2)', 'for M_ in (2,) for N_ in (2,) for k_ in (2,)')
    assert small != src
    assert '0 differences' in run(small, dict(env))
    for wrong in (('sp.eye(k_) + t * tau', 'sp.eye(k_) + tau'), ('(b_tau + t * S_ / 2)', '(b_tau + S_ / 2)')):
        assert wrong[0] in small
        with pytest.raises(AssertionError):
            run(small.replace(*wrong), dict(env))
