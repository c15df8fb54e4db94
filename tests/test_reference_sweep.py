"""The engine's sweep equals lesson 03's reference implementation (`reference_sweep`, `reference_bound`).

Per sweep, to 1e-10 relative in the bound and in every posterior moment, on random problems: every storage of the
observed values (a dense mask, the sparse mask, CSR/CSC/COO matrices of the observed entries), shared and
per-feature noise, ARD and the broad prior, complete data and up to 70% missing, both kernel sets, one block of
samples or several. Whole fits with the transformations are the same for any number of blocks. The package's import
graph has no circle.
"""
import numpy as np
import pytest
from scipy import sparse

from vbfa_lit.ard import ARD
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.vbpca import FixedAlpha, Prior, reference_bound, reference_sweep
from vbfa_lit.engine import init_posterior, observed, sweep, elbo, fit_vbfa, row_blocks

STORAGES = ('mask', 'sparse_mask', 'csr', 'csc', 'coo')


def problem(seed):
    r = np.random.default_rng(seed)
    M, N, D = int(r.integers(3, 15)), int(r.integers(5, 40)), int(r.integers(1, 6))
    Y = r.normal(size=(M, 3)) @ r.normal(size=(3, N)) + 0.3 * r.normal(size=(M, N)) + 5 * r.normal(size=(M, 1))
    Y[r.random(Y.shape) < r.choice([0.0, 0.3, 0.7])] = np.nan
    Y[:, 0], Y[0, :] = 1.0, 2.0              # no empty row or column
    return Y, D, bool(r.integers(2)), Prior(w=ARD() if r.integers(2) else FixedAlpha())


def stored(Y, storage):
    "The observations of Y (M, N) in one of the storages `observed` takes."
    O = ~np.isnan(Y)
    if storage in ('mask', 'sparse_mask'): return observed(Y, mask=O, sparse_storage=storage == 'sparse_mask')
    coo = sparse.coo_matrix((Y[O], np.nonzero(O)), shape=Y.shape)
    return observed({'csr': coo.tocsr(), 'csc': coo.tocsc(), 'coo': coo}[storage])


def relative_difference(q, terms, q_ref, L_ref):
    worst = abs(terms.total / L_ref - 1)
    for a, b in zip(q, q_ref):
        if b is None: continue
        worst = max(worst, np.abs(np.broadcast_to(a, b.shape) - b).max() / np.abs(b).max())
    return worst


@pytest.mark.parametrize('n_blocks', [1, 4])
@pytest.mark.parametrize('engine', ['numpy', 'numba'])
@pytest.mark.parametrize('storage', STORAGES)
@pytest.mark.parametrize('seed', range(6))
def test_sweep_equals_reference(seed, storage, engine, n_blocks):
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    Y, D, shared, prior = problem(seed)
    if storage not in ('mask', 'sparse_mask') and not np.isnan(Y).any(): storage = 'mask'   # nothing unstored
    data = stored(Y, storage)
    blocks = row_blocks(data, n_blocks)
    assert len(blocks) == min(n_blocks, Y.shape[1])
    q = q_ref = init_posterior(data, D, prior, shared, np.random.default_rng(seed))
    for it in range(10):
        q, terms = sweep(data, q, prior, shared, engine, blocks)
        q_ref = reference_sweep(Y, q_ref, prior, shared)
        assert relative_difference(q, terms, q_ref, reference_bound(Y, q_ref, prior)) < 1e-10, (seed, storage, it)


def test_reference_bound_is_elbo():
    "`reference_bound` is the package's `elbo` on a random, deliberately non-optimal posterior too."
    Y, D, shared, prior = problem(3)
    data = observed(Y, mask=~np.isnan(Y))
    q = reference_sweep(Y, init_posterior(data, D, prior, shared, np.random.default_rng(0)), prior, shared)
    q = q._replace(X=q.X + 0.3, mu=q.mu - 1.0, b_tau=2 * q.b_tau)
    assert abs(elbo(data, q, prior).total / reference_bound(Y, q, prior) - 1) < 1e-12


@pytest.mark.parametrize('kind', ['none', 'translate', 'rotate', 'both'])
@pytest.mark.parametrize('seed', range(3))
def test_blocks_give_the_same_fit(seed, kind):
    "Whole fits with each transformation setting: any number of blocks of samples gives the one-block fit."
    from vbfa_lit.transformations import transform_posterior
    Y, D, shared, prior = problem(10 + seed)
    data = stored(Y, 'csr' if seed == 1 and np.isnan(Y).any() else 'mask')
    transform = None if kind == 'none' else (lambda d, q, p: transform_posterior(d, q, p, kind))
    settings = [dict(n_blocks=1), dict(n_blocks=3), dict(n_blocks=Y.shape[1]), dict(n_jobs=2)]   # n_jobs: threads
    fits = [fit_vbfa(data, D, prior, shared, max_iter=25, tol=0, rng=seed, transform=transform, engine='numpy', **k)
            for k in settings]
    # the bound and what the fit predicts; single moments may drift along directions the bound does not determine
    # (switched-off components, equal variances), as between the two kernel sets
    predict = lambda q: q.W @ q.X.T + q.mu[:, None]
    for fit in fits[1:]:
        np.testing.assert_allclose(fit.elbo, fits[0].elbo, rtol=1e-10)
        np.testing.assert_allclose(predict(fit.q), predict(fits[0].q), rtol=0, atol=1e-8 * np.abs(Y[~np.isnan(Y)]).max())
        np.testing.assert_allclose(fit.q.b_tau, fits[0].q.b_tau, rtol=1e-8)


def test_reference_factor_updates_compose_the_sweep():
    "`reference_sweep` is its four factor updates and the prior's update, in order."
    from vbfa_lit.vbpca import reference_q_x, reference_q_w, reference_q_mu, reference_q_tau
    Y, D, shared, prior = problem(4)
    q = init_posterior(observed(Y), D, prior, shared, np.random.default_rng(1))
    by_hand = prior.w.update(reference_q_tau(Y, reference_q_mu(Y, reference_q_w(Y, reference_q_x(Y, q), prior),
                                                                prior), prior, shared))
    for a, b in zip(reference_sweep(Y, q, prior, shared), by_hand):
        if b is not None: np.testing.assert_array_equal(a, b)


def test_row_blocks_refuses_a_bad_count():
    Y, D, shared, prior = problem(0)
    with pytest.raises(ValueError, match='n_blocks'):
        fit_vbfa(observed(Y), D, prior, shared, n_blocks=0)
    with pytest.raises(TypeError, match='n_blocks'):
        fit_vbfa(observed(Y), D, prior, shared, n_blocks=2.5)
    with pytest.raises(ValueError, match='n_jobs'):
        fit_vbfa(observed(Y), D, prior, shared, n_jobs=0)


@pytest.mark.parametrize('engine', ['numpy', 'numba'])
def test_threads_give_the_one_thread_sweep(engine):
    "Blocks mapped in two threads: the same sweep as the same blocks one after another, bit for bit."
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    from vbfa_lit.engine import LocalRunner
    Y, D, shared, prior = problem(7)
    data = observed(Y)
    blocks = row_blocks(data, 4)
    q = init_posterior(data, D, prior, shared, np.random.default_rng(0))
    runner = LocalRunner(2)
    try:
        a, ta = sweep(data, q, prior, shared, engine, blocks, runner)
        assert runner._pool is not None                                     # the threads did run
    finally: runner.close()
    b, tb = sweep(data, q, prior, shared, engine, blocks)
    assert ta.total == tb.total
    for x, y in zip(a, b):
        if y is not None: np.testing.assert_array_equal(x, y)


def _imports(path):
    "The vbfa_lit modules a module imports, at its top or inside functions."
    import ast
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ''
            if node.level == 1: found.add(mod.split('.')[0] if mod else None)
            elif mod.startswith('vbfa_lit.'): found.add(mod.split('.')[1])
            if (node.level == 1 and not mod) or mod == 'vbfa_lit':       # from . import x / from vbfa_lit import x
                found |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split('.')[1] for a in node.names if a.name.startswith('vbfa_lit.')}
    return found - {None}


def test_the_import_graph_has_no_circle():
    "No module of the package imports a module that imports it, directly or through others (lazy imports count)."
    from pathlib import Path
    import vbfa_lit
    root = Path(vbfa_lit.__file__).parent
    modules = {p.stem: p for p in root.glob('*.py') if p.stem not in ('__init__', '_modidx')}
    graph = {m: _imports(p) & set(modules) for m, p in modules.items()}
    assert graph['engine'] >= {'vbpca', 'vbpca_fast', 'linalg'}       # the graph is read, not empty
    state, cycle = {}, []

    def visit(m, path):
        state[m] = 'open'
        for n in sorted(graph[m]):
            if state.get(n) == 'open': cycle.append(path + [n]); return
            if n not in state: visit(n, path + [n])
            if cycle: return
        state[m] = 'done'

    for m in sorted(graph):
        if m not in state and not cycle: visit(m, [m])
    assert not cycle, ' -> '.join(cycle[0])


def test_the_circle_check_finds_a_circle(tmp_path):
    "The check above is not vacuous: two modules that import each other are found."
    (tmp_path / 'a.py').write_text('from .b import f\n')
    (tmp_path / 'b.py').write_text('def f():\n    from vbfa_lit.a import g\n')
    assert _imports(tmp_path / 'a.py') == {'b'} and _imports(tmp_path / 'b.py') == {'a'}
