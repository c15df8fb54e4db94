"""The factorised posterior as the package runs it (appendix 35): the compiled and the NumPy pass equal lesson 15's
reference on randomised problems (dense and sparse input, empty rows and columns, any units), the bound is lesson
02's, threads change nothing, a fit never lowers its bound, and bad arguments are refused by name."""
import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.ard import ARD
from vbfa_lit.engine import observed
from vbfa_lit.factorised import factorised_sweep
from vbfa_lit.factorised_engine import BothWays, Diagonal, factorised_engine_sweep, fit_factorised
from vbfa_lit.linalg import numba_available
from vbfa_lit.vbpca import FixedAlpha, Prior, random_posterior, reference_bound

ENGINES = ['numpy'] + (['numba'] if numba_available() else [])


def case(seed):
    rng = np.random.default_rng(seed)
    M, N, D = rng.integers(1, 10), rng.integers(1, 14), rng.integers(1, 6)
    scale = 10.0 ** rng.uniform(-3, 3)
    Y = (rng.normal(size=(M, N)) + rng.normal()) * scale
    Y[rng.random((M, N)) < rng.uniform(0, 0.8)] = np.nan
    if seed % 5 == 0: Y[rng.integers(M)] = np.nan
    if seed % 7 == 0: Y[:, rng.integers(N)] = np.nan
    shared, ard = bool(seed % 3 == 0), bool(seed % 2 == 0)
    prior = Prior(w=ARD()) if ard else Prior(w=FixedAlpha(rng.uniform(1e-3, 10)))
    q = random_posterior(rng, M, N, D, shared=shared, ard=ard)
    vx, vw = (np.diagonal(S, axis1=1, axis2=2).copy() for S in (q.Sx, q.Sw))
    return Y, q._replace(Sx=Diagonal(vx), Sw=Diagonal(vw)), prior, shared


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('seed', range(100))
def test_the_sweep_is_lesson_15s_and_the_bound_lesson_02s(seed, engine):
    Y, q, prior, shared = case(seed)
    ref = factorised_sweep(Y, q._replace(Sx=q.Sx.full(), Sw=q.Sw.full()), prior, shared)
    data = observed(Y, sparse_storage=bool(seed % 2))                 # dense, or CSR holding the observed entries
    new, terms = factorised_engine_sweep(BothWays(data), q, prior, shared, engine)
    L = terms.total
    scale = lambda a: max(1.0, np.max(np.abs(a)))
    for a, b in [(new.X, ref.X), (new.W, ref.W), (new.Sx.full(), ref.Sx), (new.Sw.full(), ref.Sw), (new.mu, ref.mu),
                 (new.vmu, ref.vmu), (new.a_tau, ref.a_tau), (new.b_tau, ref.b_tau)]:
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * scale(b))
    Lref = reference_bound(Y, ref, prior)
    assert abs(L - Lref) <= 1e-9 * max(1.0, abs(Lref))


def test_threads_give_the_same_fit():
    if 'numba' not in ENGINES: pytest.skip('numba not installed')
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(60, 80)); Y[rng.random(Y.shape) < 0.6] = np.nan
    a, b = (fit_factorised(observed(Y), 4, Prior(w=ARD()), max_iter=20, tol=0, rng=0, engine='numba', n_jobs=j)
            for j in (1, 2))
    np.testing.assert_allclose(a.elbo, b.elbo, rtol=1e-12)
    np.testing.assert_allclose(a.q.W, b.q.W, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize('seed', range(10))
def test_a_fit_never_lowers_its_bound_in_any_units(seed):
    rng = np.random.default_rng(seed)
    M, N = rng.integers(5, 40), rng.integers(5, 40)
    Y = (rng.normal(size=(M, 2)) @ rng.normal(size=(N, 2)).T + rng.normal(size=(M, N))) * 10.0 ** rng.uniform(-4, 4)
    Y[rng.random((M, N)) < 0.5] = np.nan
    r = fit_factorised(observed(Y), 3, Prior(w=ARD()), shared=bool(seed % 2), max_iter=60, tol=0, rng=seed)
    assert np.all(np.isfinite(r.elbo))
    assert np.all(np.diff(r.elbo) >= -1e-10 * abs(r.elbo[-1]))


def test_sparse_and_dense_input_give_the_same_fit():
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(30, 40)) + 3; Y[rng.random(Y.shape) < 0.7] = np.nan
    m, n = np.nonzero(~np.isnan(Y))
    S = sparse.csr_matrix((Y[m, n], (m, n)), shape=Y.shape)
    a = fit_factorised(observed(Y), 3, max_iter=15, tol=0, rng=0)
    b = fit_factorised(observed(S), 3, max_iter=15, tol=0, rng=0)
    np.testing.assert_allclose(a.elbo, b.elbo, rtol=1e-12)


@pytest.mark.parametrize('kw, name', [(dict(D=0), 'D'), (dict(n_jobs=0), 'n_jobs'), (dict(engine='fast'), 'engine')])
def test_bad_arguments_are_refused_by_name(kw, name):
    Y = np.ones((3, 4))
    args = dict(D=2) | kw
    with pytest.raises(ValueError, match=name):
        fit_factorised(observed(Y), **args)
