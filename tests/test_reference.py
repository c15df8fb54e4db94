"""The package's sweep equals lesson 02's reference implementation (`reference_sweep`, `reference_bound`).

Per sweep, to 1e-10 relative in the bound and in every posterior moment, on random problems: every storage of the
observed values (a dense mask, the sparse mask, CSR/CSC/COO matrices of the observed entries), shared and
per-feature noise, ARD and the broad prior, complete data and up to 70% missing, both engines.
"""
import numpy as np
import pytest
from scipy import sparse

from vbfa_lit.ard import ARD
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.vbpca import (FixedAlpha, Prior, init_posterior, observed, reference_bound, reference_sweep, sweep,
                            elbo)

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


@pytest.mark.parametrize('engine', ['numpy', 'numba'])
@pytest.mark.parametrize('storage', STORAGES)
@pytest.mark.parametrize('seed', range(6))
def test_sweep_equals_reference(seed, storage, engine):
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    Y, D, shared, prior = problem(seed)
    if storage not in ('mask', 'sparse_mask') and not np.isnan(Y).any(): storage = 'mask'   # nothing unstored
    data = stored(Y, storage)
    q = q_ref = init_posterior(data, D, prior, shared, np.random.default_rng(seed))
    for it in range(10):
        q, terms = sweep(data, q, prior, shared, engine)
        q_ref = reference_sweep(Y, q_ref, prior, shared)
        assert relative_difference(q, terms, q_ref, reference_bound(Y, q_ref, prior)) < 1e-10, (seed, storage, it)


def test_reference_bound_is_elbo():
    "`reference_bound` is the package's `elbo` on a random, deliberately non-optimal posterior too."
    Y, D, shared, prior = problem(3)
    data = observed(Y, mask=~np.isnan(Y))
    q = reference_sweep(Y, init_posterior(data, D, prior, shared, np.random.default_rng(0)), prior, shared)
    q = q._replace(X=q.X + 0.3, mu=q.mu - 1.0, b_tau=2 * q.b_tau)
    assert abs(elbo(data, q, prior).total / reference_bound(Y, q, prior) - 1) < 1e-12
