"""Lesson 11 (VB PCA beyond one machine): what the page says holds. `sweep_traffic` counts the bytes a block's reduce
leaf and the broadcast really carry (the arrays the engine's map step makes and the Dask runner sends); any split of
the samples into blocks, and any number of threads, gives the same fit to rounding; the page's traffic numbers and
its exercises' solutions are what the code computes; the lesson sits in the reading order and on the front page."""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from vbfa_lit import VBPCA, ConvergenceWarning
from vbfa_lit.data import make_low_rank
from vbfa_lit.engine import fit_vbfa, init_posterior, map_latent, observed, row_blocks, sweep
from vbfa_lit.vbpca import Prior

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / 'nbs' / '11_beyond_one_machine.ipynb'
STEM = '11_beyond_one_machine'
RTOL = 1e-12   # rounding of a bound of ~1e4 summed in another order: measured 3e-15 to 7e-15 relative


def cells():
    return [(c['cell_type'], ''.join(c['source'])) for c in json.loads(NB.read_text())['cells']]


def problem(missing, N=90, M=12, seed=0):
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


@pytest.mark.parametrize('missing', [0.3, 0.0])
@pytest.mark.parametrize('D, B', [(2, 1), (4, 3), (7, 5)])
def test_sweep_traffic_counts_what_a_block_sends_and_what_is_broadcast(missing, D, B):
    from vbfa_lit.dask_runner import DaskRunner, _stats, _pack_sw, _PackedSw, sweep_traffic
    X = problem(missing)
    N, M = X.shape
    data = observed(X.T)
    # one noise precision per feature where entries are missing (ratings); one shared when nothing is: the cases in
    # which the formula's K (M covariances, or one) is what the sweep holds
    shared = data.complete
    q, _ = sweep(data, init_posterior(data, D, Prior(), shared, np.random.default_rng(0)), Prior(), shared)
    assert q.Sw.shape == ((1 if data.complete else M), D, D)
    tau = np.ones(M)                       # <tau_m> as the map receives it, one per feature
    parts = [map_latent(b, q, tau) for b in row_blocks(data, B)]
    assert len(parts) == B
    t = sweep_traffic(M, N, D, B, complete=data.complete)
    for p in parts:                      # what a leaf of the reduce sends: its arrays, x_term and N_b (8 bytes each)
        sent = sum(a.nbytes if isinstance(a, np.ndarray) else 8 for a in _stats(p, {}))   # XX_m packed, as sent
        assert sent == t['per_block']
    # the broadcast: the posterior as the runner strips it (q(W), <mu>) with Sigma_w packed as a client's runner
    # sends it, <tau>, then the new <W> and <mu>
    stripped = DaskRunner()._broadcast(q)
    stripped = stripped._replace(Sw=_pack_sw(stripped.Sw, 'key'))
    assert isinstance(stripped.Sw, np.ndarray if data.complete else _PackedSw)   # one shared covariance: whole
    Sw = stripped.Sw.P if isinstance(stripped.Sw, _PackedSw) else stripped.Sw
    carried = (sum(a.nbytes for a in stripped if isinstance(a, np.ndarray) and a is not Sw) + Sw.nbytes
               + tau.nbytes + q.W.nbytes + q.mu.nbytes)
    assert carried == t['broadcast']
    # what comes back to the client: the reduced sums, each block's (M,) errors and the latent means
    assert t['to_client'] == t['per_block'] + 8 * (B * M + N * D)


def test_any_split_into_blocks_gives_the_same_fit():
    Y = problem(0.3, N=200, M=15).T
    bounds = [fit_vbfa(observed(Y), 4, rng=0, max_iter=15, tol=0, n_blocks=B, engine='numpy').elbo for B in (1, 3, 7)]
    for b in bounds[1:]:
        np.testing.assert_allclose(b, bounds[0], rtol=RTOL, atol=0)


def test_threads_give_the_same_fit():
    X = problem(0.3, N=300, M=20, seed=1)
    fits = {}
    with pytest.warns(ConvergenceWarning):
        for n_jobs in (1, 2):
            fits[n_jobs] = VBPCA(n_components=5, n_jobs=n_jobs, max_iter=8, tol=0, random_state=0).fit(X)
    np.testing.assert_allclose(fits[2].elbo_, fits[1].elbo_, rtol=RTOL, atol=0)
    np.testing.assert_allclose(fits[2].components_, fits[1].components_, rtol=0, atol=1e-9)


def page_namespace():
    "The page's imports and its traffic cell (`shapes`, `per_sweep`), run."
    g = {}
    for kind, src in cells():
        if kind == 'code' and (src.startswith('#| code-fold: true\nimport json') or src.startswith('shapes = ')):
            exec(src, g)
    assert 'per_sweep' in g and 'shapes' in g
    return g


def test_the_pages_traffic_claims_are_what_the_code_computes():
    g = page_namespace()
    ratio = {name: g['per_sweep'](M, N, 15, 8) / (12 * n) for name, (M, N, n) in g['shapes'].items()}
    prose = '\n'.join(s for k, s in cells() if k == 'markdown')
    assert 'about a third of the size of the Netflix ratings' in prose and 0.3 < ratio['Netflix'] < 0.37
    assert 'more than six times\nthe MovieLens-1M ratings' in prose and 6 < ratio['MovieLens-1M'] < 7
    # what a block sends packed, M D(D+5)/2 numbers (XX's upper triangles, YX, mX), against whole matrices
    assert r'M D(D+5)/2' in prose and r'M D(D+2)' in prose


def solutions():
    return re.findall(r'<details><summary>Solution</summary>(.*?)</details>',
                      '\n'.join(s for k, s in cells() if k == 'markdown'), re.S)


def run_solution(text, g, capsys):
    capsys.readouterr()                    # what ran before (the page's table)
    exec(re.search(r'```python\n(.*?)```', text, re.S).group(1), g)
    return [float(x) for x in capsys.readouterr().out.split()]


def test_exercise_solutions_print_the_numbers_their_text_gives(capsys):
    g = page_namespace()
    s1, s2, s3, s4 = solutions()
    total, ratings = run_solution(s1, g, capsys)
    assert '21.5 GB' in s1 and round(total, 1) == 21.5 and '0.3 GB' in s1 and round(ratings, 1) == 0.3
    assert '19.3 GB' in s1 and round(16 * 2 * 59_047 * (50 * 51 / 2) * 8 / 1e9, 1) == 19.3
    ratings_per_block, blocks = run_solution(s2, g, capsys)
    assert round(ratings_per_block, -2) == 75_800 and 'about 75,800' in s2 and 'about 1,300 blocks' in s2
    assert 1_250 < blocks < 1_350
    packed, full, saving = run_solution(s3, g, capsys)
    assert '21.3 MB instead of 36.3 MB' in s3 and (round(packed, 1), round(full, 1)) == (21.3, 36.3)
    assert 'a saving of 41%' in s3 and round(100 * saving) == 41
    g['cluster'] = json.loads((ROOT / 'benchmarks' / 'results' / 'bench_cluster.json').read_text())   # as the page
    k, times, millions = run_solution(s4, g, capsys)
    assert 'k$ is 0.56' in ' '.join(s4.split()) and round(k, 2) == 0.56 and k < 1 / 1.7 and round(1 / 1.7, 2) == 0.59
    assert 'about nine times' in s4 and round(times) == 9 and 'about 9 million ratings' in s4 and round(millions) == 9


def test_the_lesson_is_in_the_reading_order_and_on_the_front_page():
    sys.path.insert(0, str(ROOT / 'docs'))
    from proc2sphinx import LESSONS
    assert LESSONS.index(STEM) == LESSONS.index('08_householder_ppca') + 1
    index = json.loads((ROOT / 'nbs' / 'index.ipynb').read_text())
    table = next(''.join(c['source']) for c in index['cells'] if ''.join(c['source']).startswith('## The lessons'))
    assert f'[11]({STEM}.ipynb)' in table


def test_the_page_numbers_its_figures_and_keeps_the_cluster_code_unexecuted():
    src = cells()
    prose = '\n'.join(s for k, s in src if k == 'markdown')
    assert src[0][1].startswith('# VB PCA beyond one machine\n\n> ') and '](' not in src[0][1].split('\n')[2]
    for n in (1, 2, 3):
        assert f'*Figure 11.{n}:' in prose
    cluster = [s for k, s in src if k == 'code' and 'Client(' in s]
    assert cluster and all(s.startswith('#| eval: false') for s in cluster)
    assert 'not executed here: it needs a cluster' in prose
    # every code line the page shows fits the column
    assert max(len(l) for k, s in src if k == 'code' for l in s.splitlines()) <= 118


def test_each_sweep_submits_the_same_number_of_tasks(monkeypatch):
    "The page: the task graph does not grow, each sweep submits the same few tasks per block (threaded scheduler)."
    da = pytest.importorskip('dask.array')
    import vbfa_lit.dask_runner as dr
    runners, counts = [], []
    init = dr.DaskRunner.__init__
    monkeypatch.setattr(dr.DaskRunner, '__init__', lambda self, *a, **k: (init(self, *a, **k), runners.append(self))[0])
    X = problem(0.3, N=120, M=10)
    dr.fit_vbfa_dask(da.from_array(X, chunks=(30, 10)), 3, max_iter=6, tol=0, rng=0,
                     callback=lambda it, q, L: counts.append(runners[-1].submitted))
    per_sweep = np.diff(counts)
    assert len(per_sweep) == 5 and (per_sweep == per_sweep[0]).all() and per_sweep[0] == 2 * 4, per_sweep
