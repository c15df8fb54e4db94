"""Lesson 06 ends at its exercises; its reproduction of Zhang et al.'s Tables 1 and 2 is the appendix page
`06d_zhang_tables` ("Zhang et al.'s tables re-examined"): listed in the appendix, opening with what it checks and
why, carrying the moved sections, figures (numbered 6d.n) and sentences, and linked from lesson 06 and the index.
Also Figure 6.1's caption: the precision axis read as variances, and the shaded band."""
import re
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
sys.path.insert(0, str(ROOT / 'docs'))
import proc2sphinx as p2s  # noqa: E402
from notebook_text import cells, prose, flat, is_hidden

PAGE = '06d_zhang_tables'


def test_the_page_is_in_the_appendix_right_after_the_samplers_engine():
    assert PAGE in p2s.APPENDIX and PAGE not in p2s.LESSONS
    assert p2s.APPENDIX.index(PAGE) == p2s.APPENDIX.index('06c_rjmcmc_engine') + 1
    assert p2s.lesson_number(PAGE) == '06d'


def test_the_page_opens_with_what_it_checks_and_why_and_defines_what_it_uses():
    cs = cells(PAGE)
    assert cs[0][1].startswith("# Zhang et al.'s tables re-examined\n\n> ")
    description = cs[0][1].split('\n> ', 1)[1]
    assert '](' not in description and 'Table 1' in description and 'Table 2' in description
    opening = flat(cs[1][1])
    assert 'Table 1' in opening and 'Table 2' in opening and 'the model the paper states' in opening
    assert '[Lesson 06](06_rjmcmc.ipynb)' in opening
    # what the shown code uses is defined or linked before it is used
    for name in ('$(q+1)!$', '$Z = P(x_q < V < s)$', '`exact_posterior_q`', '`exact_posterior_mean`',
                 '`rjmcmc_pca_from_eigenvalues`', '`make_zhang_set`', '`sample_eigenvalues`', "prior='unordered'",
                 '06_rjmcmc.ipynb#birth-and-death', '06_rjmcmc.ipynb#the-sampler'):
        assert name in opening, name
    imports = next(s for k, s in cs if k == 'code' and not is_hidden(s))
    for name in ('exact_posterior_q', 'exact_posterior_mean', 'rjmcmc_pca_from_eigenvalues', 'make_zhang_set',
                 'sample_eigenvalues', 'effective_sample_size', 'plot_curves', 'optimize', 'Markdown'):
        assert name in imports, name


def test_the_page_carries_the_moved_sections_figures_and_sentences():
    text = prose(PAGE)
    heads = [line for line in text.splitlines() if line.startswith('#')]
    assert heads[:3] == ["# Zhang et al.'s tables re-examined", "## Table 1: the paper's Set 1", '## Table 2: Sets 2–4']
    for caption in ('*Figure 6d.1: the exact $p(q = 4 \\mid \\mathcal{D})$', '*Figure 6d.2: top, the first 300'):
        assert caption in text, caption
    code = '\n'.join(s for k, s in cells(PAGE) if k == 'code')
    assert "'Figure 6d.1: p(4) against the gap" in code and "'Figure 6d.2: the sampler at the recovered" in code
    assert 'Figure 6.3' not in text + code and 'Figure 6.4' not in text + code and 'aside' not in text.lower()
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
    text = prose('06_rjmcmc')
    heads = [line for line in text.splitlines() if line.startswith('## ')]
    assert heads[-2:] == ['## Summary', '## Exercises'], heads
    assert 'aside' not in text.lower() and 'Figure 6.3' not in text and 'Figure 6.4' not in text
    code = '\n'.join(s for k, s in cells('06_rjmcmc') if k == 'code')
    assert 'table2' not in code and 'Figure 6.3' not in code
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


def test_figure_6_1_caption_reads_the_precision_axis_as_variances_and_names_the_band():
    src = next(s for k, s in cells('06_rjmcmc') if k == 'code' and 'b6 = [0, 1, 0.5' in s)
    caption = flat(next(s for k, s in cells('06_rjmcmc') if k == 'markdown' and s.startswith('*Figure 6.1:')))
    assert 'the variances $l_j = 1/x_j$ decrease from left to right' in caption
    assert 'shaded band, the interval $(x_4, s)$' in caption and '$\\mathcal{G}(r, \\tau)$' in caption
    from vbfa_lit.plots import plot_birth_state, plot_jump_moves
    printed = []
    ns = dict(plt=plt, plot_jump_moves=plot_jump_moves, plot_birth_state=plot_birth_state,
              print=lambda *a: printed.append(' '.join(map(str, a))))
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
    assert '$l_1 = 10$' in caption and f'$l_4 = {1 / ns["x6"][3]:.2f}$' in caption and '1/s = 1$' in caption
