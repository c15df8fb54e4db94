"""Lesson 07 (imputation) as a reader sees it: the predictive variance derived by hand before SymPy checks it, the
latent term's narrowing put down to Jensen's inequality, the coverage prose against the printout, the plots folded,
one notation for the variance of mu, and exercise 2's solution printing the coverages and factors its text quotes."""
import re

from notebook_text import cell_with, cells, flat, is_folded, output_of, prose

STEM = '07_imputation'


def test_the_latent_term_is_put_down_to_jensen():
    assert 'Jensen' in prose(STEM)


def test_coverage_prose_says_what_the_printout_shows_and_links_the_benchmarks():
    md = prose(STEM)
    assert 'worse' in md and r'\sqrt{' in md and 'held out' in md
    assert '33_benchmarks.ipynb#' in md


def test_plots_folded_and_one_notation_for_the_variance_of_mu():
    for k, s in cells(STEM):
        if k == 'code' and 'plt.subplots' in s:
            assert is_folded(s), s[:60]
    assert r'\tilde\mu_m' in prose(STEM)


def test_derives_the_variance_by_hand_before_the_sympy_check():
    cs = cells(STEM)
    sympy_cell = next(i for i, (k, s) in enumerate(cs) if k == 'code' and "sp.symbols('w1:3')" in s)
    before = flat(cs[sympy_cell - 1][1])
    assert r'\operatorname{Var}[\mathbf{w}^\top\mathbf{x}]' in before and 'SymPy checks this' in before
    assert r'\operatorname{tr}(\boldsymbol{\Sigma}_x\boldsymbol{\Sigma}_w)' in before


def test_plain_wording_broadcast_and_a_readable_figure():
    md = flat(prose(STEM))
    assert 'match the root mean square of the errors (0.986), which a few large errors inflate' in md
    assert 'median $|z|$ 0.615' in md
    codes = '\n'.join(s for k, s in cells(STEM) if k == 'code')
    assert 'np.broadcast_to(Sx_all' in codes
    fig = cell_with(STEM, 'Figure 7.1:')
    assert 'choice(hidden.sum(), 100, replace=False)' in fig and 'a random 100 of the 489 hidden entries' in md


def test_exercise_2_solution_prints_the_coverages_and_factors_it_quotes():
    md = prose(STEM)
    block = md[md.index('\n2. '):md.index('\n3. ')]
    out = output_of(STEM, 'ex07ex2c')                  # the solution's cell as it printed when the page's notebook ran
    printed = {m[0]: m[1:] for m in re.findall(r'(\w+) noise: 90% intervals hold (\d\.\d+) of the hidden values; '
                                                r'holdout factor c = (\d\.\d+)', out)}
    text = flat(block)
    assert printed['shared'][0] in text and printed['per_feature'][0] in text
    assert f"{printed['shared'][1]} shared, {printed['per_feature'][1]} per feature" in text
    assert float(printed['shared'][0]) < float(printed['per_feature'][0])

