"""Lesson 08 (ratings) as a reader sees it: the ratings section of the estimator lesson lives here, with its plumbing
folded; the early stop given in the numbers of the merged ratings run (its times on the benchmarks page only); three
exercises with hints and solutions; figures that say what they encode; the clash of the two b's said."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from notebook_text import ROOT, cell_by_id, cell_with, cells, flat, is_folded, output_of, prose, run

STEM = '08_ratings'
RATINGS_JSON = ROOT / 'benchmarks' / 'results' / 'bench_ratings.json'
needs_ratings = pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')


def test_the_ratings_section_is_here_with_its_plumbing_folded():
    assert '(08_ratings.ipynb)' in prose('06_estimator')      # 04a points the reader here
    d = '\n'.join(s for _, s in cells(STEM))
    assert "missing_values='unstored'" in prose(STEM)
    assert 'return_std=True' in d and 'plot_imputation(' in d               # the predictions with their error bars
    assert 'sparse_fit.elbo_, dense.elbo_' in d                             # the sparse = dense check
    assert d.count("plot_matrix(") == 1                                    # one picture of the stored matrix, not two
    for k, s in cells(STEM):
        if k == 'code' and ('plot_imputation(' in s or 'R_dense = ' in s):
            assert is_folded(s), s[:60]


def _bench_namespace():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import vbfa_lit
    from vbfa_lit.plots import colour, plot_curves
    return dict(np=np, json=json, Path=Path, plt=plt, vbfa_lit=vbfa_lit, plot_curves=plot_curves, colour=colour)


@needs_ratings
def test_early_stop_is_given_in_numbers_and_the_times_are_left_to_the_benchmarks_page():
    import matplotlib.pyplot as plt
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    full, early = rows['vbpca_D20_sample_bias'], rows['vbpca_D20_sample_bias_tol1e-3']
    printed = run(cell_by_id(STEM, 'rt000043'), _bench_namespace())   # run now: it reads a results file, which the
    plt.close('all')                                                   # site build's cache key does not cover
    for r in rows.values():
        assert f"{r['rmse']:.4f}" in printed
    last = printed.strip().splitlines()[-1]
    assert 'tol=1e-3' in last and f"{early['n_iter']} sweeps instead of {full['n_iter']}" in last
    assert f"held-out RMSE {early['rmse']:.4f} instead of {full['rmse']:.4f}" in last
    said = flat(cell_by_id(STEM, 'rt000044'))
    assert 'fourth decimal' in said and f"{early['n_iter']} sweeps instead of {full['n_iter']}" in said
    assert abs(early['rmse'] - full['rmse']) < 5e-4            # what "the fourth decimal" says
    missing = set(re.findall(r'\d\.\d{4}', said)) - set(re.findall(r'\d\.\d{4}', printed))
    assert not missing, missing                                 # the RMSEs of the prose are the run's
    for text in (prose(STEM), printed):                         # timings of a machine belong to the benchmarks page
        assert 'CPU' not in text and not re.search(r'\d s\b', text)


@needs_ratings
def test_the_benchmarks_page_says_what_the_ratings_run_shows_of_the_fit_time():
    "The benchmarks page's words on the fit time against SVD's hold in the merged run: about ten times, and a little less."
    summary = json.loads(RATINGS_JSON.read_text())['summary']
    rows = {r['case']: r for r in summary['rows']}
    svd = rows['surprise_svd']['fit_cpu_s']
    full = rows['vbpca_D20_sample_bias']['fit_cpu_s'] / svd
    early = rows['vbpca_D20_sample_bias_tol1e-3']['fit_cpu_s'] / svd
    assert 7 < full < 14 and 0.85 < early < 1                           # "about ten times"; "a little less"
    early_target = next(t for t in summary['targets'] if 'tol = 1e-3' in t['target'])
    assert early_target['met'] and early_target['paired_ratio'] < 1     # "by the medians and by the paired rounds"
    prose_10 = ' '.join(cell_by_id('33_benchmarks', cid) for cid in ('bratg003', '18171408'))
    assert 'only by the fit stopped at `tol=1e-3`' in prose_10 and 'about ten times' in prose_10


def test_three_exercises_with_hints_and_solutions_and_figures_that_say_what_they_encode():
    md = prose(STEM)
    assert len(re.findall(r'^\d\. \*\*', md, re.M)) >= 3
    assert md.count('<summary>Hint</summary>') >= 3 and md.count('<summary>Solution</summary>') >= 3
    codes = '\n'.join(s for k, s in cells(STEM) if k == 'code')
    assert 'component{"s" * (k != 1)}' in codes
    fig1, fig2 = (next(s for kind, s in cells(STEM) if f'Figure 8.{n}:' in s and kind == 'code') for n in (1, 2))
    assert 'colorbar' in fig1 and 'user_bias' in fig1                  # a colour bar; rows sorted by planted bias
    assert 'colorbar' in fig2 and 'n_train' in fig2                    # coloured by each user's ratings
    assert 'shrunk overall' in md and 'slope' in md


def test_figure_4d_3_legend_uses_the_captions_words():
    fig = cell_with(STEM, 'Figure 8.3:')
    labels = re.search(r'labels=\((.*?)\)\)', fig).group(1)
    caption = flat(next(s for k, s in cells(STEM) if k == 'markdown' and s.startswith('*Figure 8.3:')))
    for word in re.findall(r'''["']([^"']+)["']''', labels):
        assert word in caption, word


def test_warns_about_the_two_bs_and_runs_exercise_1_once():
    md = flat(prose(STEM))
    assert 'Mind one clash of letters: $b_n$' in md and 'are the rates of Gamma distributions' in md
    assert "the means reach the joint posterior's, as for any Gaussian under mean field; exercise 2)" in md
    assert 'predict_entries(empty' not in md                        # the solution's code is not shown twice
    solution = cell_with(STEM, "exercise 1's solution")
    assert 'print(' in solution and 'predict_entries(empty' in solution



# ---------------------------------------------------------------- ratings as they come: the front door, Figure 8.5

def _rmse_and_se():
    "The lesson's `rmse_and_se`, taken from its folded cell."
    src = cell_by_id(STEM, 'rt000079')
    ns = dict(np=np)
    exec(src[src.index('def rmse_and_se'):src.index('\n\n', src.index('def rmse_and_se'))], ns)
    return ns['rmse_and_se']


def test_the_error_bars_come_from_resampling_the_items():
    rmse_and_se = _rmse_and_se()
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(40), 5)
    same = np.ones((2, 200))                                       # every squared error 1: nothing to resample
    (a, b), se, se_diff = rmse_and_se(same, groups)
    assert a == b == 1 and np.allclose(se, 0) and se_diff == 0
    by_item = np.repeat(rng.gamma(2.0, 1.0, 40), 5)                # errors that differ by item, not within it
    sq = np.stack([by_item, by_item])
    _, se, se_diff = rmse_and_se(sq, groups)
    assert se[0] > 0.05 and se_diff == 0                           # the spread between items; paired: no difference
    # with 40 items the bootstrap s.e. of the RMSE is near the delta method's
    item_rmse = np.sqrt(np.bincount(groups, by_item) / 5)
    delta = np.std(item_rmse ** 2, ddof=1) / np.sqrt(40) / (2 * np.sqrt(by_item.mean()))
    assert abs(se[0] / delta - 1) < 0.2


def test_ratings_as_they_come_shows_the_front_door_and_the_shrinkage():
    from notebook_text import shown_code
    heads = [s.splitlines()[0] for k, s in cells(STEM) if k == 'markdown' and s.startswith('## ')]
    assert '## Ratings as they come' in heads and heads.index('## Ratings as they come') < heads.index('## Summary')
    door = cell_by_id(STEM, 'rtrac003')
    shown = shown_code(door)
    assert 'VBPCARecommender(' in shown and '.fit(ratings[train])' in shown and 'return_std=True' in shown
    assert "pd.DataFrame({'user'" in shown                         # triples, as a DataFrame
    fig = cell_by_id(STEM, 'rtrac006')
    assert is_folded(fig) and 'Figure 8.5:' in fig
    assert 'axhspan(level - spread, level + spread' in fig and 'axhline(level' in fig    # centre and spread marked
    assert 'n_train[items]' in fig                                  # against the training count
    cap = flat(cell_by_id(STEM, 'rtrac007'))
    assert cap.startswith('*Figure 8.5:') and 'never rated' in cap and 'Eq. (8.10)' in cap


def test_the_numbers_of_ratings_as_they_come_are_the_ones_printed():
    "The prose's numbers (predictions, shrinkage, the cold start with its error bars) are printed by the cells."
    # as the page's notebook printed them (the site build's run of this very code, else a run now)
    out = {cid: output_of(STEM, cid) for cid in ('rtrac002', 'rtrac003', 'rtrac004', 'rtrac006', 'rtrac009')}
    cited = r'Eqs?\. \(8\.\d+\)(-\(8\.\d+\))?|Figures? 8\.\d+'                # equation and figure numbers
    numbers = lambda text: set(re.findall(r'\d+\.\d+', re.sub(cited, '', text)))
    for prose_id, cid in (('rtrac005', 'rtrac004'), ('rtrac007', 'rtrac006'), ('rtrac010', 'rtrac009')):
        missing = numbers(cell_by_id(STEM, prose_id)) - numbers(out[cid])
        assert not missing, (prose_id, missing, out[cid])
    assert '30 items each' in out['rtrac002'] and '(12 s.e.)' in out['rtrac009']
    assert '12, 4 and 3 standard errors' in cell_by_id(STEM, 'rtrac010')
    for s in ('(4 s.e.)', '(3 s.e.)'):
        assert s in out['rtrac009']
    # the shrinkage the figure shows: items never rated sit at the learned level, rarely rated ones near it
    level = re.search(r'^learned level (\d\.\d\d) ', out['rtrac006']).group(1)        # printed as f"{level:.2f}"
    assert level in out['rtrac004'].splitlines()[-1]
    assert float(re.search(r'an item rated once keeps a median (\S+) of its distance', out['rtrac006']).group(1)) < 0.5
    fig = cell_by_id(STEM, 'rtrac006')                                  # the printed names are the figure's values
    assert "print(f'learned level {level:.2f}" in fig and 'median {pull:.2f} of its distance' in fig


# ---------------------------------------------------------------- the main example: a bias structure that shows

def test_the_main_example_shows_the_bias_and_its_numbers_are_the_ones_printed():
    "On the lesson's generated ratings the bias per user is worth several standard errors and ARD keeps the taste's rank."
    ids = ('rt000003', 'rt000004', 'rt000005', 'rt000007', 'rt000007p1', 'rt000008', 'rt000008p1', 'rt000009',
           'rt000039', 'rt000061', 'rt000040', 'rt000051')
    out = {cid: output_of(STEM, cid) for cid in ids}     # as the page's notebook printed them (the build's run or now)
    numbers = lambda text: set(re.findall(r'\d+\.\d+', re.sub(r'Eqs?\. \(8\.\d+\)|Figures? 8\.\d+', '', text)))
    for prose_id, cids in (('rt000010', ('rt000009',)), ('rt000060', ('rt000039', 'rt000061')),
                           ('rt000041', ('rt000040',)), ('rt000053', ('rt000051',))):
        printed = ''.join(out[c] for c in cids) + cell_by_id(STEM, 'rt000008')   # or the open call's parameters
        missing = numbers(cell_by_id(STEM, prose_id)) - numbers(printed)
        assert not missing, (prose_id, missing, printed)
    kept = {m[1] == 'True': int(m[2]) for m in re.finditer(r'sample_bias=(True|False) *: held-out RMSE \S+, (\d+) '
                                                              r'components? kept', out['rt000039'])}
    assert kept[True] == 3 and kept[False] > kept[True]            # the taste's rank, and one more without the bias
    # the bias's gain is well beyond the noise: the paired difference's mean over its standard error, as printed
    assert 'se = diff.std() / np.sqrt(len(diff))' in cell_by_id(STEM, 'rt000061')
    assert float(re.search(r', (\S+) standard errors', out['rt000061']).group(1)) > 4
    assert 'corr = np.corrcoef(learned, small.user_bias)[0, 1]' in cell_by_id(STEM, 'rt000040')
    corr = re.search(r'correlation of the learned and planted user biases (\S+);', out['rt000040']).group(1)
    assert float(corr) > 0.95


@needs_ratings
@pytest.mark.skipif(not RATINGS_JSON.with_name('bench_movielens.json').exists(), reason='no real-ratings run')
def test_the_orientation_paragraph_quotes_the_real_ratings_run():
    import matplotlib.pyplot as plt
    ns = _bench_namespace()               # run now, not read from the site build: the run is in a results file that
    run(cell_by_id(STEM, 'rt000043'), ns)  # the cache's key (the code and the library) does not cover
    printed = run(cell_by_id(STEM, 'rt08real'), ns)
    plt.close('all')
    said = cell_by_id(STEM, 'rt08orient')
    assert set(re.findall(r'\d\.\d{4}', said)) <= set(re.findall(r'\d\.\d{4}', printed))
    rows = json.loads(RATINGS_JSON.with_name('bench_movielens.json').read_text())['summary']['rows']
    for name in {r['dataset'] for r in rows}:                     # "the same error to the fourth decimal"
        door = [r['rmse'] for r in rows if r['dataset'] == name and r['label'].startswith('VBPCARecommender')]
        assert len(door) == 2 and abs(door[0] - door[1]) < 5e-4
