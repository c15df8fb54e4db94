"""Reliability of the public functions beside `VBPCA` (issue 20): the Laplace evidence, the Stiefel samplers and the
density of ordered singular values, the seeded data generators, and the argument checks they share.

Each group draws random valid problems over scales 1e-150..1e150, offsets and every option, and checks: no error,
finite (or documented -inf) output, the documented shape, the input unmodified, and the answer unchanged by the data's
units where the model says so. A table of bad inputs per function expects an error naming the argument.
`RELIABILITY_API_N` sets the number of random problems per group (default 60).
RJMCMC and its exact posterior have their own suite (tests/test_reliability_rjmcmc.py); Householder PPCA's NUTS runs
are costly and are checked in tests/test_householder_ppca.py.
"""
import os

import numpy as np
import pytest

from vbfa_lit.data import make_gaussian_spectrum, make_low_rank, make_ppca
from vbfa_lit.evidence import laplace_evidence
from vbfa_lit.stiefel import haar_orthogonal, householder_to_stiefel, sample_stiefel, singular_value_logpdf
from vbfa_lit.validation import check_int, check_random_state, check_real

N = int(os.environ.get('RELIABILITY_API_N', 60))


def _scale(r): return 10.0 ** r.uniform(-150, 150)


@pytest.mark.parametrize('seed', range(N))
def test_laplace_evidence_on_random_data(seed):
    r = np.random.default_rng(seed)
    n, d = int(r.integers(2, 200)), int(r.integers(2, 12))
    k = int(r.integers(0, d))
    X = r.normal(size=(n, d)) * np.r_[r.uniform(1.5, 10, k), np.ones(d - k)] @ np.linalg.qr(r.normal(size=(d, d)))[0]
    X = X * _scale(r) + (10.0 ** r.uniform(0, 8) * r.normal(size=d) if r.random() < 0.4 else 0.0)
    kept = X.copy()
    try: ev = laplace_evidence(X)
    except ValueError as e:                               # a rank-deficient sample can tie two zero eigenvalues only
        assert str(e).startswith('data:'); return
    assert np.array_equal(X, kept)
    assert ev.k.shape == ev.p.shape == ev.log_evidence.shape == (d,)
    assert np.all(np.isfinite(ev.p)) and abs(ev.p.sum() - 1) < 1e-12 and not np.isnan(ev.log_evidence).any()
    # units: p is the same for X * c
    c = 2.0 ** r.integers(-60, 60)
    np.testing.assert_allclose(laplace_evidence(X * c).p, ev.p, atol=1e-9)


@pytest.mark.parametrize('call, error, name', [
    (lambda: laplace_evidence([[1.0, 2.0], [np.nan, 1.0]]), ValueError, 'data'),
    (lambda: laplace_evidence([[1.0, 2.0], [np.inf, 1.0]]), ValueError, 'data'),
    (lambda: laplace_evidence(np.ones((1, 3))), ValueError, 'data'),
    (lambda: laplace_evidence([1.0, 3.0], 20), ValueError, 'data'),
    (lambda: laplace_evidence([3.0, -1.0], 20), ValueError, 'data'),
    (lambda: laplace_evidence([3.0, 1.0]), ValueError, 'n_samples'),
    (lambda: laplace_evidence([3.0, 1.0], 1), ValueError, 'n_samples'),
    (lambda: laplace_evidence([3.0, 1.0], 2.5), TypeError, 'n_samples'),
    (lambda: laplace_evidence(np.ones((5, 2)), 5), ValueError, 'n_samples'),
    (lambda: laplace_evidence('abc'), TypeError, 'data'),
    (lambda: laplace_evidence(np.ones((4, 2)) * (1 + 1j)), ValueError, 'data'),
])
def test_laplace_evidence_bad_input(call, error, name):
    with pytest.raises(error, match=f'^{name}'): call()


@pytest.mark.parametrize('seed', range(N))
def test_stiefel_on_random_problems(seed):
    r = np.random.default_rng(seed)
    M = int(r.integers(1, 40)); D = int(r.integers(1, M + 1))
    size = [None, 0, int(r.integers(1, 4)), (2, int(r.integers(0, 3)))][int(r.integers(4))]
    reflection = ['mezzadri', 'swap'][int(r.integers(2))]
    U = sample_stiefel(M, D, size=size, random_state=seed, reflection=reflection)
    shape = () if size is None else ((size,) if isinstance(size, int) else size)
    assert U.shape == shape + (M, D) and np.all(np.isfinite(U))
    if U.size: np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ U, np.broadcast_to(np.eye(D), shape + (D, D)), atol=1e-12)
    np.testing.assert_array_equal(U, sample_stiefel(M, D, size=size, random_state=seed, reflection=reflection))
    vs = [r.normal(size=M - q) * _scale(r) for q in range(D)]
    kept = [v.copy() for v in vs]
    V = householder_to_stiefel(vs, reflection=reflection)
    assert all(np.array_equal(a, b) for a, b in zip(vs, kept))
    np.testing.assert_allclose(V.T @ V, np.eye(D), atol=1e-12)
    np.testing.assert_allclose(V, householder_to_stiefel([v / np.abs(v).max() for v in vs], reflection=reflection), atol=1e-12)
    sigma = np.sort(np.abs(r.normal(size=D)) * 10.0 ** r.uniform(-150, 150))[::-1] + 0.0
    lp = singular_value_logpdf(sigma, M)
    assert not np.isnan(lp) and lp < np.inf
    assert haar_orthogonal(min(M, 8), random_state=seed).shape == (min(M, 8),) * 2


@pytest.mark.parametrize('call, error, name', [
    (lambda: sample_stiefel(3, 4), ValueError, 'D'), (lambda: sample_stiefel(0, 1), ValueError, 'M'),
    (lambda: sample_stiefel(3.0, 2), TypeError, 'M'), (lambda: sample_stiefel(3, 2, size=-1), ValueError, 'size'),
    (lambda: sample_stiefel(3, 2, random_state=-1), ValueError, 'random_state'),
    (lambda: sample_stiefel(3, 2, random_state=0.5), TypeError, 'random_state'),
    (lambda: sample_stiefel(3, 2, reflection='x'), ValueError, 'reflection'),
    (lambda: householder_to_stiefel([np.zeros(3)]), ValueError, r'vectors\[0\]'),
    (lambda: householder_to_stiefel([np.array([1.0, np.nan])]), ValueError, r'vectors\[0\]'),
    (lambda: singular_value_logpdf([], 3), ValueError, 'sigma'),
    (lambda: singular_value_logpdf([1.0, np.inf], 3), ValueError, 'sigma'),
    (lambda: singular_value_logpdf([2.0, 1.0], 1), ValueError, 'M'),
])
def test_stiefel_bad_input(call, error, name):
    with pytest.raises(error, match=f'^{name}'): call()


@pytest.mark.parametrize('seed', range(N))
def test_generators_on_random_arguments(seed):
    r = np.random.default_rng(seed)
    n, m = int(r.integers(1, 60)), int(r.integers(1, 12))
    k = int(r.integers(1, m + 1))
    missing = float(r.choice([0.0, 0.3, 0.9]))
    scale, offset = _scale(r), (10.0 ** r.uniform(0, 8) if r.random() < 0.5 else 0.0)
    a = make_low_rank(n, m, k, scale=scale, offset=offset, missing=missing, random_state=seed)
    b = make_low_rank(n, m, k, scale=scale, offset=offset, missing=missing, random_state=seed)
    for key in a:
        va, vb = a[key], b[key]
        if isinstance(va, np.ndarray): np.testing.assert_array_equal(va, vb)
    eig = np.sort(10.0 ** r.uniform(-2, 2, size=m))[::-1]
    g = make_gaussian_spectrum(eig, n, missing=missing, random_state=seed)
    assert g is not None
    p = make_ppca(n, m, np.sort(r.uniform(0.5, 3, k))[::-1], missing=missing, random_state=seed)
    assert p is not None


@pytest.mark.parametrize('call, error, name', [
    (lambda: make_low_rank(0, 3, 1), ValueError, 'n_samples'), (lambda: make_low_rank(5, 3, 1.5), TypeError, 'n_components'),
    (lambda: make_low_rank(5, 3, 1, missing=1.0), ValueError, 'missing'),
    (lambda: make_low_rank(5, 3, 1, random_state=-1), ValueError, 'random_state'),
    (lambda: make_gaussian_spectrum([1.0, -1.0], 10), ValueError, 'eigenvalues'),
    (lambda: check_int('k', 2.0, 0), TypeError, 'k'), (lambda: check_int('k', -1, 0), ValueError, 'k'),
    (lambda: check_real('x', np.nan), ValueError, 'x'), (lambda: check_real('x', '1'), TypeError, 'x'),
    (lambda: check_random_state('0'), TypeError, 'random_state'),
])
def test_generators_and_checks_bad_input(call, error, name):
    with pytest.raises(error, match=f'^{name}'): call()
