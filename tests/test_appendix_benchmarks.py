"""The benchmarks appendix (10) read as a chapter: it opens with the cost of one sweep, names no issue, reads its
ratings section from the merged ratings run (saying that VB PCA led without the bias too and that the ratings come
from its own model family), Figure 33.1's legend is in words and its caption says which series coincide, and what
section 12 says of two threads, two workers and the fits at scale holds in the measurements it prints (moved here
from lesson 14, with the Amdahl exercise's answer as a range)."""
import json
import re

import pytest

from notebook_text import ROOT, caption, cell_by_id, cell_with, cells, flat, prose, run, solutions

STEM = '33_benchmarks'
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
    assert '(08_ratings.ipynb)' in cell_by_id(STEM, 'bratg001')
    glance = run(cell_by_id(STEM, '995909c5'), dict(ns, display=lambda t: print(t.data.to_string())))
    assert 'Surprise SVD' in glance


def test_figure_1_legend_in_words_and_the_coinciding_series_said():
    src = cell_with(STEM, 'Figure 33.1:')
    labels = eval(re.search(r'TOOL_LABELS = (\{.*?\})\n', src, re.S).group(1))
    tools = {'ours_fa', 'ours_pca', 'ours_fa_numba', 'ours_pca_numba', 'bayespy_fa', 'bayespy_fa_updates_only',
             'vbpca_py', 'vbpca_py_default'}
    assert set(labels) == tools and not any('_' in v for v in labels.values())
    assert 'label=TOOL_LABELS.get(tool, tool)' in src and 'legend(fontsize=10' in src
    assert 'their lines coincide' in caption(STEM, '33.1')


# ---------------------------------------------------------------- section 11: what the ratings comparison shows

@pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')
def test_the_ratings_prose_says_vb_pca_led_without_the_bias_and_the_data_are_its_own_family():
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    plain, svd, svdpp = (rows[c]['rmse'] for c in ('vbpca_D20', 'surprise_svd', 'surprise_svdpp'))
    assert plain < min(svd, svdpp) and rows['vbpca_D20_sample_bias']['rmse'] < plain
    shows = flat(cell_by_id(STEM, 'bratg003'))
    assert 'better than both Surprise methods already without the bias per user' in shows
    assert "VB PCA's own family" in shows and "VB PCA's own model family" in flat(cell_by_id(STEM, '18171408'))
    ns = dict(display=lambda *a, **k: None)
    for cid in ('4756c98c', '4dd66f2e', '21b15d92', 'bbf4c8dd'):
        run(cell_by_id(STEM, cid), ns)
    printed = run(cell_by_id(STEM, 'bratg002'), ns)
    assert f'without the bias per user: VB PCA {plain:.4f}, SVD {svd:.4f}, SVD++ {svdpp:.4f}' in flat(printed)
    assert 0.95 < ns['baseline_rmse'] < 0.99 and ns['baseline_rmse'] > max(svd, svdpp)   # biases alone: worst of all


# ---------------------------------------------------------------- section 12: threads and workers (from lesson 14)

CORES_JSON = ROOT / 'benchmarks' / 'results' / 'bench_cores.json'
CLUSTER_JSON = ROOT / 'benchmarks' / 'results' / 'bench_cluster.json'


def test_what_it_says_of_two_threads_holds_in_the_measurements_it_prints():
    md = flat(prose(STEM))
    assert 'Two threads gain less than twice' in md and 'less than twice' in cell_by_id(STEM, '18171408')
    cores = json.loads(CORES_JSON.read_text())
    by = {(r['rows'], r['n_jobs']): r for r in cores['summary']['rows']}
    for rows in ('users', 'items'):
        one, two = by[rows, 1], by[rows, 2]
        assert one['wall_s'] / two['wall_s'] < 2                    # less than twice
        assert two['cpu_s'] > one['cpu_s'] and two['cpu_s'] / 2 < two['wall_s']   # the two reasons the page gives


def test_what_it_says_of_two_workers_holds_in_the_measurements_it_prints():
    "Amdahl's bound on the page is the one-worker run's rest plus half its computing, and the prose's claims hold."
    cluster = json.loads(CLUSTER_JSON.read_text())
    sc = cluster['summary'].get('scaling')
    if sc is None: pytest.skip('the cluster benchmark was run before it recorded the task stream')
    md = flat(prose(STEM))
    assert "Amdahl's law" in md and 'stays below even that bound' in md
    assert sc['best_2_s'] == pytest.approx(sc['rest_1_s'] + sc['compute_1_s'] / 2)
    assert sc['speedup'] < sc['best_speedup'] < 1.7                    # below the bound, and the bound below the aim
    assert sc['compute_2_s'] > sc['compute_1_s'] and sc['transfer_2_s'] > 0   # "a little longer in all", "wait"
    assert 'even the computing alone does not halve' in md and 'the waits at the median round trip' in md
    assert sc['compute_speedup'] < 2 and sc['waits_per_sweep'] == 2                  # "each of a sweep's two waits"
    assert sc['waits_at_median_s'] > sc['rest_for_target_s']                       # "already take longer"
    rows = {r['case']: r for r in cluster['summary']['rows']}
    gain = lambda shape: rows[f'{shape}_1worker']['sweep_wall_s'] / rows[f'{shape}_2workers']['sweep_wall_s']
    assert 'the second worker gains more' in md and gain('netflix_D15') > gain('ml1m_D20')
    assert '*Figure 33.5:' in prose(STEM) and 'Figure 33.5:' in cell_by_id(STEM, 'bclu0007')


def test_what_it_says_of_the_fits_at_scale_is_computed():
    "The sizes of the triangles against the cache, and the lower rate of the map's sums at MovieLens-25M's shape."
    import numpy as np
    cluster = json.loads(CLUSTER_JSON.read_text())
    md = flat(prose(STEM))
    assert '(17,770 triangles of 120 numbers, 17 MB)' in md and 'fit in the 32 MiB cache that the two cores' in md
    assert cluster['machine']['last_cache'] == dict(level=3, bytes=32 << 20, shared='0-1')     # as printed
    assert '59,047 triangles of 1,275 numbers (600 MB, eighteen times the cache)' in md
    assert round(17_770 * 120 * 8 / 1e6) == 17 and round(59_047 * 1275 * 8 / 1e8) == 6
    assert round(59_047 * 1275 * 8 / 2 ** 25) == 18 and 162_541 // 2 > 59_047          # "the users' ... more still"
    assert 15 * 16 // 2 == 120 and 50 * 51 // 2 == 1275 and round(1275 * 8 / 1e3) == 10  # "10 KB apiece"
    assert '100 instead of 1,275 at $D = 50$' in md and 2 * 50 == 100                 # factorised: 2D a side

    def rate(case):                                     # as printed: the median over the runs of the map's computing
        run_ = cluster['cases'][case]
        D, busy = run_['D'], np.median([r['worker_compute_by_task_s']['map_latent'] for r in run_.get('rounds', [run_])])
        return 2 * run_['n_ratings'] * D * (D + 1) / 2 / busy
    assert 'run at a lower rate there' in md and rate('ml25m_D50_2workers') < rate('netflix_D15_2workers')


def test_the_amdahl_exercise_gives_a_range_not_a_number():
    "Exercise 4: k near the pole 1/1.7, so k +- 0.01 and the three runs give a wide range, which the solution says."
    text = flat(solutions(STEM)[3])
    ns = dict(display=lambda *a, **k: None)
    for cid in ('4756c98c', '4dd66f2e', '21b15d92'):
        run(cell_by_id(STEM, cid), ns)
    out = run(re.search(r'```python\n(.*?)```', solutions(STEM)[3], re.S).group(1), ns).splitlines()
    k, ranged = out[0].split(' ', 1)
    low, mid, high = eval(ranged)
    assert round(float(k), 2) == 0.56 and 'k$ is 0.56' in text and round(mid) == 9 and 'about 9 times' in text
    assert (round(low), round(high)) == (7, 16) and 'from about 7 to 16 times' in text
    runs = sorted(float(x) for x in out[1:])
    assert [round(x, -1) if x > 15 else round(x) for x in runs] == [6, 9, 20] and 'about 6, 9 and 20 times' in text
    assert 'between 6 and 20 million ratings' in text and 'about 9 million ratings' not in text


# ---------------------------------------------------------------- sections 11b and 11c: real ratings, the factorised posterior

MOVIELENS_JSON = ROOT / 'benchmarks' / 'results' / 'bench_movielens.json'
FACTORISED_JSON = ROOT / 'benchmarks' / 'results' / 'bench_factorised.json'


def _page_namespace():
    ns = dict(display=lambda *a, **k: None)
    for cid in ('4756c98c', '4dd66f2e', '21b15d92'):
        run(cell_by_id(STEM, cid), ns)
    return ns


@pytest.mark.skipif(not MOVIELENS_JSON.exists(), reason='the MovieLens-100k benchmark has not been run')
def test_real_movielens_section_prints_every_method_and_each_target_with_its_verdict():
    summary = json.loads(MOVIELENS_JSON.read_text())['summary']
    shown = []
    ns = dict(_page_namespace(), display=lambda t: shown.append(t.data))
    printed = run(cell_by_id(STEM, 'bml10002'), ns)
    methods = set(shown[0]['method'])
    assert {'Surprise BaselineOnly', 'Surprise SVD', 'Surprise SVD++'} <= methods
    assert sum('VBPCARecommender' in m for m in methods) == 2                   # both orientations
    assert {'held-out RMSE', 'fit CPU s'} <= set(shown[0].columns)
    assert set(shown[0]['set']) == {r.get('dataset', 'MovieLens-100k') for r in summary['rows']}
    for t in summary['targets']:
        assert f"{t['target']}: {t['measured']} ({'met' if t['met'] else 'not met'})" in flat(printed)


@pytest.mark.skipif(not FACTORISED_JSON.exists(), reason='the factorised benchmark has not been run')
def test_factorised_section_prints_the_targets_from_the_run():
    bench = json.loads(FACTORISED_JSON.read_text())
    summary = bench['summary']
    shown = []
    ns = dict(_page_namespace(), display=lambda t: shown.append(t.data))
    printed = flat(run(cell_by_id(STEM, 'bfac0002'), ns))
    big = next(r for r in summary['rows'] if r['case'] == 'ml25m_factorised_D50_2threads')
    verdict = lambda ok: 'met' if ok else 'not met'
    assert (f"{big['wall_s']:.2f} s a sweep against the 15 s asked ({verdict(big['wall_s'] <= 15)})" in printed
            and verdict(big['wall_s'] <= 15) == verdict(summary['met_ml25m']))
    assert f"peak memory {big['peak_gb']:.2f} GB against 4 GB ({verdict(big['peak_gb'] <= 4)})" in printed
    quarter = {r['posterior']: r['wall_s'] for r in summary['rows'] if 'quarter' in r['case']}
    assert f"takes {quarter['full'] / quarter['factorised']:.1f} times" in printed
    assert 'about four times' in cell_by_id(STEM, 'bfac0003') and round(quarter['full'] / quarter['factorised']) == 4
    assert len(shown[0]) == len(summary['rows']) and bench['date'] in printed
    nf = next((r for r in summary['rows'] if r['case'].startswith('netflix')), None)
    if nf:
        assert (f"{nf['wall_s']:.1f} s a sweep against the 3 s asked ({verdict(summary['met_netflix'])})" in printed
                and f"peak {nf['peak_gb']:.2f} GB a worker against 4 GB" in printed)
