"""Lessons 04a (the estimator) and 04d (ratings) and the benchmarks chapter: 04a teaches one derivation (the predictive
density of a row, by the determinant lemma and Woodbury) and leaves ratings to 04d; the figures of both pages are
numbered without gaps; 04d's early-stopping claim and the benchmarks chapter's ratings section print their numbers."""
import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
RATINGS_JSON = ROOT / 'benchmarks' / 'results' / 'bench_ratings.json'


def cells(name):
    return json.loads((NBS / name).read_text())['cells']


def text(cell):
    return ''.join(cell['source'])


def cell(name, cid):
    return next(text(c) for c in cells(name) if c.get('id') == cid)


def markdown(name):
    return '\n'.join(text(c) for c in cells(name) if c['cell_type'] == 'markdown')


def run(source, ns):
    "Execute a notebook cell's source in `ns`, returning what it printed."
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, '<cell>', 'exec'), ns)
    return out.getvalue()


def figure_numbers(name, prefix):
    "Every 'Figure <prefix>.k' a page mentions, and the numbers that have a caption ('*Figure <prefix>.k:')."
    everything = '\n'.join(text(c) for c in cells(name))
    said = {int(k) for k in re.findall(rf'Fig(?:ure|\.) {re.escape(prefix)}\.(\d+)', everything)}
    captioned = {int(k) for k in re.findall(rf'^\*Figure {re.escape(prefix)}\.(\d+):', markdown(name), re.M)}
    return said, captioned


@pytest.mark.parametrize('name, prefix, count', [('04a_estimator.ipynb', '4a', 2), ('04d_ratings.ipynb', '4d', 4)])
def test_figures_numbered_without_gaps_each_captioned(name, prefix, count):
    said, captioned = figure_numbers(name, prefix)
    assert said == captioned == set(range(1, count + 1)), (said, captioned)


def test_04a_ratings_section_is_in_04d_not_in_04a():
    a = '\n'.join(text(c) for c in cells('04a_estimator.ipynb'))
    assert '## Ratings' not in a and 'rng_r' not in a and 'predict_entries(R_train' not in a
    assert '(04d_ratings.ipynb)' in markdown('04a_estimator.ipynb')      # 04a points the reader there
    d = '\n'.join(text(c) for c in cells('04d_ratings.ipynb'))
    assert "missing_values='unstored'" in markdown('04d_ratings.ipynb')
    assert 'return_std=True' in d and 'plot_imputation(' in d               # the predictions with their error bars
    assert 'sparse_fit.elbo_, dense.elbo_' in d                             # the sparse = dense check
    assert d.count("plot_matrix(") == 1                                    # one picture of the stored matrix, not two


def test_04a_predictive_density_is_a_stepped_derivation():
    md = markdown('04a_estimator.ipynb')
    start = md.index('## The predictive density of a row')
    section = md[start:md.index('\n## ', start + 10)]
    for k in range(1, 5):
        assert f'(4a.{k})' in section, k
    assert 'determinant lemma' in section and 'Woodbury identity' in section
    assert section.count('$$') >= 10                                       # five displayed equations


def _estimator_namespace():
    "The synthetic problem of lesson 04a and its default fit, as the lesson's cells define them."
    from scipy.stats import multivariate_normal
    from vbfa_lit.data import make_ppca
    from vbfa_lit.estimator import VBPCA
    ns = dict(np=np, multivariate_normal=multivariate_normal, make_ppca=make_ppca, VBPCA=VBPCA)
    run(cell('04a_estimator.ipynb', '1377e396'), ns)
    ns['vb'] = VBPCA(random_state=0).fit(ns['X_train'])
    return ns


def test_04a_woodbury_cell_agrees_with_direct_scipy_and_score_samples():
    ns = _estimator_namespace()
    printed = run(cell('04a_estimator.ipynb', 'woodb4a1'), ns)
    lines = [l for l in printed.splitlines() if ':' in l]
    numbers = [[float(x) for x in re.findall(r'-?\d+\.\d{6,}', l)] for l in lines]
    pairs = [n for n in numbers if len(n) >= 2]
    assert len(pairs) == 3, printed                       # log-determinant, quadratic form, log density
    for n in pairs:
        assert max(n) - min(n) < 1e-9 * max(1.0, abs(n[0])), printed
    assert len(pairs[-1]) == 3                            # (4a.2), SciPy, score_samples


def test_04a_summary_sentence_on_units_reads_on_its_own_and_holds():
    md = markdown('04a_estimator.ipynb')
    summary = md[md.index('## Summary'):md.index('## Exercises')]
    assert ('Fitted to the raw numbers, the rank-3 problem keeps all nine columns\n  when the data are scaled by '
            '$10^{-4}$, and a spurious fourth component when scaled by $10^4$') in summary
    assert 'Fitted as it comes' not in md
    # what it says, computed as the lesson's units cell computes it: the raw model keeps 9 columns at 1e-4, 4 at 1e4
    import vbfa_lit.engine as engine
    from vbfa_lit.ard import ARD, effective_components
    from vbfa_lit.transformations import transform_posterior
    from vbfa_lit.vbpca import Prior
    ns = dict(np=np)
    from vbfa_lit.data import make_ppca
    ns['make_ppca'] = make_ppca
    run(cell('04a_estimator.ipynb', '1377e396'), ns)
    X = ns['X_train']
    both = lambda data, q, prior: transform_posterior(data, q, prior, 'both')
    kept = {a: int(effective_components(engine.fit_vbfa(engine.observed(a * X.T), 9, Prior(w=ARD()), shared=True,
                                                        rng=0, transform=both).q).sum()) for a in (1e-4, 1e4)}
    assert kept == {1e-4: 9, 1e4: 4}, kept


def _bench_namespace():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import vbfa_lit
    from vbfa_lit.plots import colour, plot_curves
    return dict(np=np, json=json, Path=Path, plt=plt, vbfa_lit=vbfa_lit, plot_curves=plot_curves, colour=colour)


@pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')
def test_04d_early_stop_is_given_in_numbers():
    import matplotlib.pyplot as plt
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    full, early = rows['vbpca_D20_sample_bias'], rows['vbpca_D20_sample_bias_tol1e-3']
    printed = run(cell('04d_ratings.ipynb', 'rt000043'), _bench_namespace())
    plt.close('all')
    for r in (full, early):
        assert f"{r['rmse']:.4f}" in printed and f"{r['fit_cpu_s']:.2f} s CPU" in printed
    last = printed.strip().splitlines()[-2:]
    assert 'tol=1e-3' in last[0] and f"{early['n_iter']} sweeps instead of {full['n_iter']}" in last[0]
    assert f"held-out RMSE {early['rmse']:.4f} instead of {full['rmse']:.4f}" in last[1]
    prose = cell('04d_ratings.ipynb', 'rt000044')
    assert 'no visible cost' not in prose and 'fourth decimal' in prose
    assert abs(early['rmse'] - full['rmse']) < 5e-4            # what "the fourth decimal" says


@pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')
def test_10_has_a_ratings_section_read_from_the_results():
    from IPython.display import display       # noqa: F401 (the page's namespace)
    cs = cells('10_benchmarks.ipynb')
    heads = [text(c).splitlines()[0] for c in cs if c['cell_type'] == 'markdown' and text(c).startswith('## ')]
    assert any('Surprise' in h and h.startswith('## 11.') for h in heads), heads
    ns = dict(display=lambda *a, **k: None)
    for cid in ('4756c98c', '4dd66f2e', '21b15d92', 'bbf4c8dd'):
        run(cell('10_benchmarks.ipynb', cid), ns)
    printed = run(cell('10_benchmarks.ipynb', 'bratg002'), ns)
    rows = {r['case']: r for r in json.loads(RATINGS_JSON.read_text())['summary']['rows']}
    assert f"{rows['vbpca_D20_sample_bias']['rmse']:.4f} against {rows['surprise_svdpp']['rmse']:.4f}" in printed
    assert f"{rows['surprise_svd']['fit_cpu_s']:.2f} s" in printed and 'load average' in printed
    assert "'met'" not in cell('10_benchmarks.ipynb', 'bratg002')
    assert '(04d_ratings.ipynb)' in cell('10_benchmarks.ipynb', 'bratg001')
    glance = run(cell('10_benchmarks.ipynb', '995909c5'), dict(ns, display=lambda t: print(t.data.to_string())))
    assert 'Surprise SVD' in glance


def test_04d_has_three_exercises_with_hints_and_solutions_and_its_figures_say_what_they_encode():
    md = markdown('04d_ratings.ipynb')
    exercises = re.findall(r'^\d\. \*\*', md, re.M)
    assert len(exercises) >= 3
    assert md.count('<summary>Hint</summary>') >= 3 and md.count('<summary>Solution</summary>') >= 3
    codes = '\n'.join(text(c) for c in cells('04d_ratings.ipynb') if c['cell_type'] == 'code')
    assert '1 components' not in md and 'component{"s" * (k != 1)}' in codes
    fig1, fig2 = (next(text(c) for c in cells('04d_ratings.ipynb') if f'Figure 4d.{k}:' in text(c)
                       and c['cell_type'] == 'code') for k in (1, 2))
    assert 'colorbar' in fig1 and 'user_bias' in fig1                  # a colour bar; rows sorted by planted bias
    assert 'colorbar' in fig2 and 'n_train' in fig2                    # coloured by each user's ratings
    assert 'shrunk overall' in md and 'slope' in md


@pytest.mark.skipif(not RATINGS_JSON.exists(), reason='the ratings benchmark has not been run')
def test_04d_and_10_say_what_the_ratings_run_shows_of_the_fit_time():
    "The prose's words on the fit time against SVD's hold in the merged run: about ten times, and a little less."
    run = json.loads(RATINGS_JSON.read_text())['summary']
    rows = {r['case']: r for r in run['rows']}
    svd = rows['surprise_svd']['fit_cpu_s']
    full = rows['vbpca_D20_sample_bias']['fit_cpu_s'] / svd
    early = rows['vbpca_D20_sample_bias_tol1e-3']['fit_cpu_s'] / svd
    assert 7 < full < 14 and 0.85 < early < 1                           # "about ten times"; "a little less"
    early_target = next(t for t in run['targets'] if 'tol = 1e-3' in t['target'])
    assert early_target['met'] and early_target['paired_ratio'] < 1     # "by the medians and by the paired rounds"
    prose_04d = cell('04d_ratings.ipynb', 'rt000044')
    assert 'about ten times the CPU time' in prose_04d and 'a little less' in prose_04d
    prose_10 = ' '.join(text(c) for c in cells('10_benchmarks.ipynb') if c.get('id') in ('bratg003', '18171408'))
    assert 'only by the fit stopped at `tol=1e-3`' in prose_10 and 'about ten times' in prose_10
