"""The benchmarks appendix (10) read as a chapter: it opens with the cost of one sweep, names no issue, reads its
ratings section from the merged ratings run, and Figure 10.1's legend is in words and its caption says which series
coincide."""
import json
import re

import pytest

from notebook_text import ROOT, caption, cell_by_id, cell_with, cells, run

STEM = '10_benchmarks'
RATINGS_JSON = ROOT / 'benchmarks' / 'results' / 'bench_ratings.json'


def test_is_a_chapter_without_issue_numbers():
    cs = cells(STEM)
    assert cs[0][1].startswith('# How fast, and why')
    heads = [s.splitlines()[0] for k, s in cs if k == 'markdown' and s.startswith('## ')]
    assert '## The cost of one sweep' in heads and heads.index('## The cost of one sweep') < 3
    for _, s in cs:
        assert not re.search(r'\bissue', s, re.I), s[:200]     # neither said nor read from the JSON


@pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')
def test_has_a_ratings_section_read_from_the_results():
    cs = cells(STEM)
    heads = [s.splitlines()[0] for k, s in cs if k == 'markdown' and s.startswith('## ')]
    assert any('Surprise' in h and h.startswith('## 11.') for h in heads), heads
    ns = dict(display=lambda *a, **k: None)
    for cid in ('4756c98c', '4dd66f2e', '21b15d92', 'bbf4c8dd'):
        run(cell_by_id(STEM, cid), ns)
    printed = run(cell_by_id(STEM, 'bratg002'), ns)
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    assert f"{rows['vbpca_D20_sample_bias']['rmse']:.4f} against {rows['surprise_svdpp']['rmse']:.4f}" in printed
    assert f"{rows['surprise_svd']['fit_cpu_s']:.2f} s" in printed and 'load average' in printed
    assert '(04d_ratings.ipynb)' in cell_by_id(STEM, 'bratg001')
    glance = run(cell_by_id(STEM, '995909c5'), dict(ns, display=lambda t: print(t.data.to_string())))
    assert 'Surprise SVD' in glance


def test_figure_1_legend_in_words_and_the_coinciding_series_said():
    src = cell_with(STEM, 'Figure 10.1:')
    labels = eval(re.search(r'TOOL_LABELS = (\{.*?\})\n', src, re.S).group(1))
    tools = {'ours_fa', 'ours_pca', 'ours_fa_numba', 'ours_pca_numba', 'bayespy_fa', 'bayespy_fa_updates_only',
             'vbpca_py', 'vbpca_py_default'}
    assert set(labels) == tools and not any('_' in v for v in labels.values())
    assert 'label=TOOL_LABELS.get(tool, tool)' in src and 'legend(fontsize=10' in src
    assert 'their lines coincide' in caption(STEM, '10.1')
