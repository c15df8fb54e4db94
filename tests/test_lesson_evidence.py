"""Lesson 11 (Laplace evidence) as a reader sees it: the bridge from Minka's evidence to PRML's Laplace
approximation with the integral of its step 4 written and checked, a sketch of Minka's Laplace step run on the page,
the N - 1 of the sample covariance moving the log evidence by nats (as printed), the set-4 mode at the true k the luck
of the draw, the excess components in noise put on the plug-in, and Figure 11.2 legible at the column width."""
import json

import matplotlib
import numpy as np

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

from notebook_text import MIN_PT, NBS, cell_with, cells, flat, prose, section, smallest_shown_pt  # noqa: E402

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
    assert 'keeps the prior of $q$ uniform' in summary



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
