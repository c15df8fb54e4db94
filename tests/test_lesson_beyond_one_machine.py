"""Lesson 14 (VB PCA beyond one machine): what the page says holds. `sweep_traffic` counts the bytes a block's reduce
leaf and the broadcast really carry (the arrays the engine's map step makes and the Dask runner sends), and the page's
Eq. (14.8) is that count in numbers; any split of the samples into blocks, and any number of threads, gives the same
fit to rounding; the one-pass form of the squared errors loses digits as the page says and the engine's are the
residual form; its exercises' solutions print what their text gives; the lesson sits in the reading order and on the
front page. (The measurements of threads and workers are the benchmarks appendix's, tested there.)"""
import re

import numpy as np
import pytest

from vbfa_lit import VBPCA, ConvergenceWarning
from vbfa_lit.data import make_low_rank
from vbfa_lit.engine import fit_vbfa, init_posterior, map_latent, observed, row_blocks, sweep
from vbfa_lit.vbpca import Prior

from notebook_text import LESSONS, cells, flat, notebook_cells, prose, run, solutions

STEM = '14_beyond_one_machine'
RTOL = 1e-12   # rounding of a bound of ~1e4 summed in another order: measured 3e-15 to 7e-15 relative


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


@pytest.fixture(scope='module')
def page():
    "The page's open and folded code cells run in order (not the cluster cell), with what each printed, by cell id."
    import matplotlib
    matplotlib.use('Agg')
    g, printed = {}, {}
    for c in notebook_cells(STEM):
        src = ''.join(c['source'])
        if c['cell_type'] == 'code' and '#| eval: false' not in src:
            printed[c['id']] = run(src, g)
    return g, printed


def test_the_pages_traffic_formula_is_the_engines_count(page):
    "Eq. (14.8) as the page codes it, against `sweep_traffic` (bytes of float64) on shapes the page does not use."
    from vbfa_lit.dask_runner import sweep_traffic
    g, printed = page
    for M, N, D, B in [(7, 50, 1, 1), (300, 9_000, 4, 5), (1_000, 20, 33, 12)]:
        t = sweep_traffic(M, N, D, B)
        assert B * (t['broadcast'] + t['per_block']) + t['to_client'] == 8 * (
            g['traffic'](M, D, B) + t['per_block'] // 8 + N * D)
    n = len(g['cases'])
    assert f"agrees with the package's own count in {n} of {n} cases" in printed['b11c0010']
    md = flat(prose(STEM))
    assert r'T = B\Big[M D(D+1) + 4MD + 4M + D^2 + 2\Big]' in prose(STEM) and r'led by $B\,M\,D(D+1)$' in md
    assert 'B M D^2 / 2' not in md


def test_the_split_fits_agree_as_printed(page):
    g, printed = page
    assert max(abs(L / g['bounds'][0] - 1) for L in g['bounds']) < RTOL
    assert g['gap_fits'] < RTOL and 'give the in-memory fit' in printed['b11c0005']


def test_what_it_says_of_the_one_pass_form_is_what_it_prints(page):
    "The residual form stays accurate under a shift; the one-pass form loses digits like c^2 (the prose's claims)."
    g, printed = page
    rel = {}
    for c in (1e4, 1e6):
        two, one = g['squared_errors'](g['X'].T + c, g['q']._replace(mu=g['q'].mu + c))
        rel[c] = (np.max(abs(two / g['e'] - 1)), np.max(abs(one / g['e'] - 1)))
    assert rel[1e4][0] < 1e-10 and 1e-7 < rel[1e4][1] < 1e-4          # "lost about ten of its sixteen digits"
    assert rel[1e6][0] < 1e-8 and 1e-3 < rel[1e6][1] < 0.5            # "nearly all"
    assert 30 < rel[1e6][1] / rel[1e4][1] < 3e5                       # grows like c^2 (1e4 = 100^2)
    assert 'SymPy agrees with Eq. (14.6) and Eq. (14.11)' in printed['b11c0015']
    assert 'with Eq. (14.9) exactly for D = 1..3, N_m = 1..3: 0 differences' in printed['b11c0015']
    # the engine's squared errors are Eq. (14.6)
    from vbfa_lit.engine import observed, sq_error, sum_xx
    q, Y = g['q'], g['X'].T
    d = observed(Y)
    np.testing.assert_allclose(sq_error(d, q.W, q.Sw, q.X, q.Sx, sum_xx(d, q.X, q.Sx), q.mu, q.vmu), g['e'], rtol=1e-10)


def test_exercise_solutions_print_the_numbers_their_text_gives(page):
    "Each solution's folded cell (run on the page) prints the numbers its text quotes."
    g, printed = page
    s1, s2, s3, s4, s5 = solutions(STEM)
    T, ratio, lead = map(float, re.search(r'([\d.]+) billion numbers a sweep, (\d+) times .* is ([\d.]+) billion',
                                          printed['b11c0031']).groups())
    assert 'About 2.6 billion' in s1 and T == 2.6 and 'about 104 times' in s1 and ratio == 104
    assert '2.4 billion' in s1 and lead == 2.4
    assert g['T'] == g['traffic'](59_047, 50, 16) and round(g['T'] / 1e9, 1) == 2.6
    (r,) = map(float, re.search(r'moves (\d+) times more', printed['b11c0033']).groups())
    assert 'about 27 times more' in s2 and r == 27
    fractions = [int(x) for x in re.findall(r'saves (\d+)%', printed['b11c0035'])]
    assert 'About 10%, 41% and 47%' in s3 and fractions == [10, 41, 47]
    out = printed['b11c0037'].splitlines()
    sigma, c_star = map(float, re.search(r'sigma = ([\d.]+), .* = ([\d.e+]+)', out[0]).groups())
    assert round(sigma, 1) == 0.3 and 1.5e7 < c_star < 2.5e7 and r'2 \times 10^7' in s4
    one = [float(re.search(r'of Eq. \(14.11\) ([\d.e+-]+)', l).group(1)) for l in out[1:]]
    assert len(one) == 4 and all(30 < b / a < 3e3 for a, b in zip(one, one[1:]))   # "a hundredfold for every tenfold c"
    assert 0.3 < one[2] < 30                                                   # "of order one at c = 10^7"
    rounds, full, ratio, one_go, waits = map(float, re.search(
        r'factorised in rounds: (\d+) million numbers a sweep; full, Eq. \(14.8\): (\d+) million \(([\d.]+) times more\);'
        r' cross products in one go: (\d+) million; waits a sweep: (\d+) against 2', printed['b11c0039']).groups())
    assert (rounds, full, one_go, waits) == (43, 392, 210, 52) and round(ratio) == 9
    assert all(w in s5 for w in ('about 43 million', 'about 392 million', 'nine', 'about 210 million', '52 a sweep'))


def test_the_lesson_is_in_the_reading_order_and_on_the_front_page():
    assert LESSONS.index(STEM) == LESSONS.index('13_householder_ppca') + 1
    table = next(s for k, s in cells('index') if s.startswith('## The lessons'))
    assert f'[14]({STEM}.ipynb)' in table


def test_the_page_numbers_its_figures_and_equations_and_leaves_the_cluster_to_the_appendix():
    src = cells(STEM)
    md = prose(STEM)
    assert src[0][1].startswith('# VB PCA beyond one machine\n\n> ') and '](' not in src[0][1].split('\n')[2]
    for n in (1, 2):
        assert f'*Figure 14.{n}:' in md
    assert '*Figure 14.3' not in md
    tags = [int(t) for t in re.findall(r'\\tag\{14\.(\d+)\}', md)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 9
    cited = {int(t) for t in re.findall(r'Eqs?\. \(14\.(\d+)', md)}
    assert cited <= set(tags)
    # the cluster set-up (client, addresses, file paths) is the Dask appendix's, linked from the lesson
    assert not [s for k, s in src if k == 'code' and ('Client(' in s or '#| eval: false' in s)]
    assert '.parquet' not in md and 'tcp://' not in md and '](26_dask.ipynb)' in md
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
