"""Lesson 08 (ratings) as a reader sees it: the ratings section of the estimator lesson lives here, with its plumbing
folded; the early stop and the fit time against Surprise's SVD given in the numbers of the merged ratings run; three
exercises with hints and solutions; figures that say what they encode; the clash of the two b's said."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from notebook_text import ROOT, cell_by_id, cell_with, cells, flat, is_folded, prose, run

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
def test_early_stop_is_given_in_numbers():
    import matplotlib.pyplot as plt
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    full, early = rows['vbpca_D20_sample_bias'], rows['vbpca_D20_sample_bias_tol1e-3']
    printed = run(cell_by_id(STEM, 'rt000043'), _bench_namespace())
    plt.close('all')
    for r in (full, early):
        assert f"{r['rmse']:.4f}" in printed and f"{r['fit_cpu_s']:.2f} s CPU" in printed
    last = printed.strip().splitlines()[-2:]
    assert 'tol=1e-3' in last[0] and f"{early['n_iter']} sweeps instead of {full['n_iter']}" in last[0]
    assert f"held-out RMSE {early['rmse']:.4f} instead of {full['rmse']:.4f}" in last[1]
    assert 'fourth decimal' in cell_by_id(STEM, 'rt000044')
    assert abs(early['rmse'] - full['rmse']) < 5e-4            # what "the fourth decimal" says


@needs_ratings
def test_04d_and_10_say_what_the_ratings_run_shows_of_the_fit_time():
    "The prose's words on the fit time against SVD's hold in the merged run: about ten times, and a little less."
    summary = json.loads(RATINGS_JSON.read_text())['summary']
    rows = {r['case']: r for r in summary['rows']}
    svd = rows['surprise_svd']['fit_cpu_s']
    full = rows['vbpca_D20_sample_bias']['fit_cpu_s'] / svd
    early = rows['vbpca_D20_sample_bias_tol1e-3']['fit_cpu_s'] / svd
    assert 7 < full < 14 and 0.85 < early < 1                           # "about ten times"; "a little less"
    early_target = next(t for t in summary['targets'] if 'tol = 1e-3' in t['target'])
    assert early_target['met'] and early_target['paired_ratio'] < 1     # "by the medians and by the paired rounds"
    prose_04d = cell_by_id(STEM, 'rt000044')
    assert 'about ten times the CPU time' in prose_04d and 'a little less' in prose_04d
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

