"""The reader's findings on lessons 06, 06a, 06d, index, 01c, 07, 03 and Figure 10.1 of the benchmarks page, mended:
the (q+1)! keeps the prior of q uniform (dropping it is a prior 1/(q+1)! towards small q; the excess components in
noise are the plug-in's), solutions print the numbers their text states, and the figures' ticks, panels and legends
are legible."""
import math
import re
from pathlib import Path

import numpy as np
from notebook_text import cells, run

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'


def prose(stem):
    return ' '.join('\n'.join(s for k, s in cells(stem) if k == 'markdown').split())


def solution_blocks(stem, number):
    "The prose and the code blocks of exercise `number`'s folded solution."
    md = '\n'.join(s for k, s in cells(stem) if k == 'markdown')
    ex = md[md.index('## Exercises'):]
    start = ex.index(f'\n{number}. ')
    sol = ex[ex.index('<summary>Solution', start):]
    sol = sol[:sol.index('</details>')]
    return ' '.join(re.sub(r'```python\n.*?```', '', sol, flags=re.S).split()), re.findall(r'```python\n(.*?)```', sol, re.S)


# --- 1. the (q+1)! framing, 06a and 06d


def test_no_page_says_the_factorial_favours_more_components():
    for stem in ('06a_evidence', '06d_zhang_tables', '06_rjmcmc'):
        text = prose(stem)
        assert 'pushes the same way' not in text and "the rest is the ordering's" not in text, stem
        for sentence in re.split(r'(?<=[.:])\s', text):
            if '(q+1)!' in sentence and re.search(r'favours|adds about', sentence):
                assert 'not' in sentence, (stem, sentence)


def test_06a_summary_puts_the_excess_on_the_plug_in_and_the_factorial_keeps_p_q_uniform():
    text = prose('06a_evidence')
    summary = text[text.index('## Summary'):text.index('## Exercises')]
    assert 'no Occam factor for them: with few samples it favours too many components' in summary
    assert 'keeps the prior of $q$ uniform' in summary


def test_06d_pure_noise_separates_the_uniform_prior_from_a_prior_towards_small_q():
    text = prose('06d_zhang_tables')
    assert 'With the correctly normalised prior (uniform in $q$) pure noise is given 8–9 components' in text
    assert 'a prior $p(q) \\propto 1/(q+1)!$, which pulls the mode down to 3–6 but not to 1' in text
    code = next(s for k, s in cells('06d_zhang_tables') if k == 'code' and 'modes_without =' in s)
    # the page checks the ranges it quotes and prints the prior that dropping the factorial amounts to
    assert 'assert min(modes_with) >= 8 and 1 < min(modes_without) and max(modes_without) <= 6' in code
    assert 'math.factorial(q + 1) for q in range(1, 10)' in code


# --- 2. lesson 06


def test_06_ks_table_shows_both_ends_of_a_narrow_interval():
    code = next(s for k, s in cells('06_rjmcmc') if k == 'code' and 'KS p-value' in s)
    lo_spec, hi_spec = re.search(r'\(\{lo_(:[^}]*)\}, \{hi_(:[^}]*)\}\)', code).groups()
    assert format(50000.0, lo_spec[1:]) != format(50000.001, hi_spec[1:])
    assert format(1e-200, lo_spec[1:]) == '1e-200' and format(np.inf, hi_spec[1:]) == 'inf'


def test_06_greens_ratio_names_zhangs_equation_and_the_general_ratio_comes_before_its_check():
    src = cells('06_rjmcmc')
    text = prose('06_rjmcmc')
    assert "Green's ratio (Zhang et al., eq. 9)" in text and "Green's ratio (9)" not in text
    general = next(i for i, (k, s) in enumerate(src) if k == 'markdown' and 'R = \\Big(\\frac{v}{s}\\Big)^{N/2}' in s)
    check = next(i for i, (k, s) in enumerate(src) if k == 'code' and 'def log_R_general' in s)
    assert general == check - 1
    assert sum('R = \\Big(\\frac{v}{s}\\Big)^{N/2}' in s for _, s in src) == 1


def test_06_exercise_1_prints_the_values_its_text_states():
    from vbfa_lit.rjmcmc import exact_posterior_q
    text, (code,) = solution_blocks('06_rjmcmc', 1)
    assert not re.search(r'#\s*(\[|about)', code)                 # no comments standing in for outputs
    out = run(code, {'np': np, 'math': math, 'exact_posterior_q': exact_posterior_q})
    assert out.count('[0.2 0.2 0.2 0.2 0.2]') == 1 and out.count('[0.6963 0.2321 0.058  0.0116 0.0019]') == 2
    assert 'largest difference 2e-06' in out
    assert 'prints 0.2 for every $q$' in text and '0.6963, 0.2321, 0.058, 0.0116, 0.0019' in text and '2e-06' in text


# --- 3. 06d


def test_06d_recovered_eigenvalues_within_one_samples_scatter_and_table_2_at_one_precision():
    text = prose('06d_zhang_tables')
    assert 'slightly different' not in text
    assert "within one sample's scatter of the printed ones ($-3.1\\,\\%$ to $+4.8\\,\\%$" in text
    code = next(s for k, s in cells('06d_zhang_tables') if k == 'code' and 'def summary(P, q=5)' in s)
    assert "np.median(P[:, q - 1]):.3f" in code and ':.2f' not in code


# --- 4. index


def test_index_map_arrows_are_the_logical_order_and_the_reference_rows_are_named():
    text = prose('index')
    assert 'the arrows give the logical order' in text and 'the arrows give the reading order' not in text
    assert '| [notation reference](00_notation.ipynb) |' in text and '[00](00_notation.ipynb)' not in text
    assert '| [references](98_references.ipynb) |' in text


# --- 5. 01c


def test_01c_exercises_print_the_numbers_their_text_states():
    from vbfa_lit.data import make_ppca
    from vbfa_lit.ppca import ppca_log_likelihood, ppca_ml
    Y6 = make_ppca(200, 6, [2.5, 1.5], noise_std=0.7, random_state=1).X
    fit = ppca_ml(Y6, 2)
    ns = dict(np=np, Y6=Y6, fit=fit, best=ppca_log_likelihood(Y6, fit.W, fit.sigma2, fit.mean),
              ppca_log_likelihood=ppca_log_likelihood)
    outs = {}
    for n in (1, 2, 3):
        text, (code,) = solution_blocks('01c_from_pca', n)
        assert not re.search(r'#\s*(three equal|0 up to|falls in)', code)
        outs[n] = (text, run(code, ns))
    assert outs[1][1].count('2.025582') == 3 and 'all three are 2.025582' in outs[1][0]
    assert 'change of the log-likelihood: 0.0e+00' in outs[2][1] and 'changes by 0.0e+00' in outs[2][0]
    ratios = re.findall(r'divided by sigma\^2 ([\d.]+)', outs[3][1])
    assert ratios == ['1.32', '1.88', '1.96', '1.97'] and '(1.32, 1.88, 1.96, 1.97' in outs[3][0]


def test_01c_figure_3_caption_says_circles_are_rows_and_colours_angles():
    text = prose('01c_from_pca')
    assert 'each grey circle is one row of' in text and 'each colour is one rotation angle' in text


# --- 6.-8. figures


def test_07_figure_2_has_three_ticks_per_axis():
    code = next(s for k, s in cells('07_stiefel') if k == 'code' and "Figure 7.2:" in s)
    assert 'xticks=[-1, 0, 1], yticks=[-1, 0, 1], zticks=[-1, 0, 1]' in code


def test_03_figure_2_hinton_panels_the_same_size_and_a_10_pt_key():
    code = next(s for k, s in cells('03_ard') if k == 'code' and "Figure 3.2:" in s)
    assert 'width_ratios=[1, 1, 1.1]' in code and "layout='constrained'" in code
    assert 'fontsize=10, title_fontsize=10' in code and 'tight_layout' not in code


def test_10_figure_1_legend_in_words_and_the_coinciding_series_said():
    code = next(s for k, s in cells('10_benchmarks') if k == 'code' and "Figure 10.1:" in s)
    labels = eval(re.search(r'TOOL_LABELS = (\{.*?\})\n', code, re.S).group(1))
    tools = {'ours_fa', 'ours_pca', 'ours_fa_numba', 'ours_pca_numba', 'bayespy_fa', 'bayespy_fa_updates_only',
             'vbpca_py', 'vbpca_py_default'}
    assert set(labels) == tools and not any('_' in v for v in labels.values())
    assert 'label=TOOL_LABELS.get(tool, tool)' in code and 'legend(fontsize=10' in code
    caption = next(s for k, s in cells('10_benchmarks') if k == 'markdown' and s.startswith('*Figure 10.1:'))
    assert 'their lines coincide' in caption and '`ours_' not in caption
