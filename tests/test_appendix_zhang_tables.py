"""Lesson 10 ends at its exercises; its reproduction of Zhang et al.'s Tables 1 and 2 is the appendix page
`31_zhang_tables` ("Zhang et al.'s tables re-examined"): listed in the appendix, opening with what it checks and
why, carrying the moved sections, figures (numbered 6d.n) and sentences, and linked from lesson 10 and the index;
pure noise with and without the (q+1)! of the prior, and the recovered eigenvalues against the printed ones."""
import re

from notebook_text import NBS, cells, flat, is_hidden, prose
import proc2sphinx as p2s  # noqa: E402  (docs/ is on the path once notebook_text is imported)

PAGE = '31_zhang_tables'


def test_the_page_is_in_the_appendix_right_after_the_samplers_engine():
    assert PAGE in p2s.APPENDIX and PAGE not in p2s.LESSONS
    assert p2s.APPENDIX.index(PAGE) == p2s.APPENDIX.index('30_rjmcmc_engine') + 1
    assert p2s.lesson_number(PAGE) == '31'


def test_the_page_opens_with_what_it_checks_and_why_and_defines_what_it_uses():
    cs = cells(PAGE)
    assert cs[0][1].startswith("# Zhang et al.'s tables re-examined\n\n> ")
    description = cs[0][1].split('\n> ', 1)[1]
    assert '](' not in description and 'Table 1' in description and 'Table 2' in description
    opening = flat(cs[1][1])
    assert 'Table 1' in opening and 'Table 2' in opening and 'the model the paper states' in opening
    assert '[Lesson 10](10_rjmcmc.ipynb)' in opening
    # what the shown code uses is defined or linked before it is used
    for name in ('$(q+1)!$', '$Z = P(x_q < V < s)$', '`exact_posterior_q`', '`exact_posterior_mean`',
                 '`rjmcmc_pca_from_eigenvalues`', '`make_zhang_set`', '`sample_eigenvalues`', "prior='unordered'",
                 '10_rjmcmc.ipynb#birth-and-death', '10_rjmcmc.ipynb#the-sampler'):
        assert name in opening, name
    imports = next(s for k, s in cs if k == 'code' and not is_hidden(s))
    for name in ('exact_posterior_q', 'exact_posterior_mean', 'rjmcmc_pca_from_eigenvalues', 'make_zhang_set',
                 'sample_eigenvalues', 'effective_sample_size', 'plot_curves', 'optimize', 'Markdown'):
        assert name in imports, name


def test_the_page_carries_the_moved_sections_figures_and_sentences():
    text = prose(PAGE)
    heads = [line for line in text.splitlines() if line.startswith('#')]
    assert heads[:3] == ["# Zhang et al.'s tables re-examined", "## Table 1: the paper's Set 1", '## Table 2: Sets 2–4']
    for caption in ('*Figure 31.1: the exact $p(q = 4 \\mid \\mathcal{D})$', '*Figure 31.2: top, the first 300'):
        assert caption in text, caption
    code = '\n'.join(s for k, s in cells(PAGE) if k == 'code')
    assert "# Figure 31.1: p(4) against the gap" in code and "# Figure 31.2: the sampler at the recovered" in code
    said = flat(text)
    for s in ('at most 0.209 over 20 replicates', '$-3.1\\,\\%$ to $+4.8\\,\\%$', 'Widening $g_5 - g_6$ by 0.09',
              'the one out-of-sample test', 'mode 5 in 1 of 10', '**What Table 1 is consistent with.**',
              '**What Table 2 is consistent with.**'):
        assert s in said, s
    # the Set 4 replicates it reads back are its own file, and that file exists
    assert (NBS / 'figures' / '06d_table2.json').exists() and not (NBS / 'figures' / '06_table2.json').exists()


LEAKS = re.compile(r'tests/|test_\w+\.py|\.json\b|savefig|hidden cell|nbdev-test|--flags|(?<![\w.])_(run|sweep)\b',
                   re.I)


def test_the_page_carries_no_project_and_fits_the_column():
    shown = [(k, s) for k, s in cells(PAGE) if k == 'markdown' or not is_hidden(s)]
    assert not [m.group(0) for _, s in shown for m in LEAKS.finditer(s)]
    wide = [line for k, s in cells(PAGE) if k == 'code' for line in s.splitlines() if len(line) > 118]
    assert not wide, wide


def test_lesson_06_ends_at_its_exercises_and_links_the_page():
    text = prose('10_rjmcmc')
    heads = [line for line in text.splitlines() if line.startswith('## ')]
    assert heads[-2:] == ['## Summary', '## Exercises'], heads
    link = f"[Zhang et al.'s tables re-examined]({PAGE}.ipynb)"
    summary = text[text.index('## Summary'):text.index('## Exercises')]
    assert link in summary and link in text[:text.index('## The idea')]
    # at most one sentence of the Summary is about the tables, and it says where its evidence is
    about = [s for s in re.split(r'(?<=[.;])\s+(?=[A-Z-])', flat(summary)) if 'Table' in s]
    assert len(about) == 1 and link in about[0], about
    assert '0.8666' in about[0]


def test_the_index_links_the_page_in_its_appendix_paragraph():
    md = '\n'.join(s for k, s in cells('index') if k == 'markdown')
    para = md[md.index('**Appendix'):]
    assert f']({PAGE}.ipynb)' in para.split('\n\n')[0]


def test_pure_noise_separates_the_uniform_prior_from_a_prior_towards_small_q():
    text = flat(prose(PAGE))
    assert 'With the correctly normalised prior (uniform in $q$) pure noise is given 8–9 components' in text
    assert 'a prior $p(q) \\propto 1/(q+1)!$, which pulls the mode down to 3–6 but not to 1' in text
    code = next(s for k, s in cells(PAGE) if k == 'code' and 'modes_without =' in s)
    # the page checks the ranges it quotes and prints the prior that dropping the factorial amounts to
    assert 'assert min(modes_with) >= 8 and 1 < min(modes_without) and max(modes_without) <= 6' in code
    assert 'math.factorial(q + 1) for q in range(1, 10)' in code


def test_recovered_eigenvalues_within_one_samples_scatter_and_table_2_at_one_precision():
    text = flat(prose(PAGE))
    assert "within one sample's scatter of the printed ones ($-3.1\\,\\%$ to $+4.8\\,\\%$" in text
    code = next(s for k, s in cells(PAGE) if k == 'code' and 'def summary(P, q=5)' in s)
    assert "np.median(P[:, q - 1]):.3f" in code



def test_two_exercises_with_hints_and_folded_solutions_that_print_what_the_solutions_quote():
    import numpy as np
    from vbfa_lit.rjmcmc import exact_posterior_mean
    from notebook_text import cell_with, is_folded, run
    text = prose(PAGE)
    ex = text[text.index('## Exercises'):]
    assert len(re.findall(r'^\d\. \*\*', ex, re.M)) == 2
    assert ex.count('<summary>Hint</summary>') == 2 and ex.count('<summary>Solution</summary>') == 2
    first, second = cell_with(PAGE, "exercise 1's solution"), cell_with(PAGE, "exercise 2's solution")
    assert is_folded(first) and is_folded(second)
    g, n = np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]), 1000
    ns = dict(np=np, g_set1=g, l3_floor=500 * g[2] / 502,
              exact_means1={q: exact_posterior_mean(g, n, q) for q in (4, 5)})
    out = run(second, ns)
    said = flat(ex)
    for q, tau in ((4, '7.72'), (5, '6.24')):
        assert f'q = {q}: exact E[l_3 | q]' in out and f'= {tau}' in out and tau in said
    # the page defines V before eta = 1.2/V uses it
    opening = flat(cells(PAGE)[1][1])
    assert opening.index('where $V$ is a scale of the data') < opening.index('$Z = P(x_q < V < s)$')
