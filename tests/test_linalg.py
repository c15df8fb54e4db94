"""The numerical machinery of the VB updates (`vbfa_lit.linalg`, appendix 22): the batched Gaussian from a
precision on both inversion paths, the triangular solves, the masked outer sums on both packing paths and
both mask storages, and the shared-batch helpers. Every check is against plain NumPy on the same input."""

import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.linalg import (SMALL_D, _cholesky_inverse, diagonal_sum, gaussian_from_precision,
                             masked_outer_sum, trace_product, _tril_inv, _tril_solve, weighted_sum)


def random_spd(rng, K, D):
    A = rng.standard_normal((K, D, D))
    return A @ A.transpose(0, 2, 1) / D + 0.1 * np.eye(D)


# ------------------------------------------------------------------------- the batched SPD inverse

@pytest.mark.parametrize("D", [1, 2, 10, 16, 17, 40])
@pytest.mark.parametrize("K", [1, 7])
def test_gaussian_from_precision_matches_lapack_on_both_paths(D, K):
    "Small D inverts the Cholesky factors in NumPy, large D with LAPACK's dpotri: both equal inv, solve and slogdet."
    rng = np.random.default_rng(D * 10 + K)
    P = random_spd(rng, K, D) * rng.uniform(0.01, 100)
    h = rng.standard_normal((K, D))
    mean, S, logdet = gaussian_from_precision(P, h)
    test_tol = 1e-10 * np.linalg.cond(P).max()
    np.testing.assert_allclose(S, np.linalg.inv(P), rtol=0, atol=test_tol * np.abs(np.linalg.inv(P)).max())
    np.testing.assert_array_equal(S, S.transpose(0, 2, 1))               # symmetric by construction
    np.testing.assert_allclose(mean, np.linalg.solve(P, h[..., None])[..., 0], rtol=0,
                               atol=test_tol * np.abs(mean).max())
    np.testing.assert_allclose(logdet, -np.linalg.slogdet(P)[1], rtol=1e-12, atol=1e-10)
    assert (D > SMALL_D) == (D in (17, 40))        # both code paths are exercised


def test_gaussian_from_precision_shares_one_precision_between_many_means():
    rng = np.random.default_rng(3)
    P, h = random_spd(rng, 1, 4), rng.standard_normal((9, 4))
    mean, S, logdet = gaussian_from_precision(P, h)
    assert mean.shape == (9, 4) and S.shape == (1, 4, 4) and logdet.shape == (1,)
    np.testing.assert_allclose(mean, h @ np.linalg.inv(P[0]), rtol=1e-10)


@pytest.mark.parametrize("D", [3, 20, 40])
def test_mean_from_the_covariance_has_the_forward_error_of_triangular_solves(D):
    "A precision I + w diag(1e12, 1e-3) w^T (a column whose noise precision blew up, cond ~ 1e13): against a"
    " 60-digit solution, the mean S h from the Cholesky covariance is as accurate as two triangular solves."
    mpmath = pytest.importorskip('mpmath')
    mpmath.mp.dps = 60
    for seed in range(3):
        rng = np.random.default_rng(100 * D + seed)
        w = rng.standard_normal((D, 2))
        P = (np.eye(D) + w @ np.diag([1e12, 1e-3]) @ w.T)[None]
        h = (P[0] @ rng.standard_normal(D))[None]
        exact = np.array(mpmath.lu_solve(mpmath.matrix(P[0].tolist()), mpmath.matrix(h[0].tolist())).tolist(),
                         dtype=float).ravel()
        mean, S, _ = gaussian_from_precision(P, h)
        L = np.linalg.cholesky(P)
        solves = _tril_solve(L, _tril_solve(L, h), transpose=True)[0]
        err = lambda x: np.linalg.norm(x - exact) / np.linalg.norm(exact)
        cond = np.linalg.cond(P[0])
        assert err(mean[0]) <= 4 * err(solves) + cond * 1e-16, (seed, err(mean[0]), err(solves))
        assert err(mean[0]) <= 100 * cond * np.finfo(float).eps


def test_gaussian_from_precision_refuses_an_indefinite_precision():
    P = np.array([[[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(np.linalg.LinAlgError):
        gaussian_from_precision(P, np.ones((1, 2)))


@pytest.mark.parametrize("D", [1, 4, 16, 17, 30, 33, 64, 100])
@pytest.mark.parametrize("K", [1, 5, 70])
def test_tril_inv_equals_lapack_on_every_path(D, K, monkeypatch):
    "Substitution (D <= SMALL_D, in blocks of factors when K is large) and the recursive blocked form (above):"
    " L^-1 equal to LAPACK's dtrtri on each factor, and P^-1 to dpotri, to 1e-12 relative to the largest entry."
    from scipy.linalg import lapack
    import vbfa_lit.linalg as linalg
    monkeypatch.setattr(linalg, '_INV_BATCH', 32)            # K = 70: the covariance in three blocks
    rng = np.random.default_rng(D * 100 + K)
    P = random_spd(rng, K, D)
    L = np.linalg.cholesky(P)
    Li = _tril_inv(L)
    ref = np.stack([lapack.dtrtri(l, lower=1)[0] for l in L])
    np.testing.assert_allclose(Li, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert np.all(np.triu(Li, 1) == 0)                                    # exactly lower triangular
    S = _cholesky_inverse(L)
    ref_S = np.stack([lapack.dpotri(l, lower=1)[0] for l in L])
    ref_S = np.tril(ref_S) + np.tril(ref_S, -1).transpose(0, 2, 1)
    np.testing.assert_allclose(S, ref_S, rtol=0, atol=1e-12 * np.abs(ref_S).max())
    np.testing.assert_array_equal(S, S.transpose(0, 2, 1))


@pytest.mark.parametrize("D, K", [(1, 4), (3, 1), (3, 4)])
def test_tril_inv_leaves_its_input_untouched(D, K):
    "For D = 1 or K = 1 the transposed factor is contiguous; the inverse must still work on a copy."
    L = np.linalg.cholesky(random_spd(np.random.default_rng(D + K), K, D))
    before = L.copy()
    _tril_inv(L)
    np.testing.assert_array_equal(L, before)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("shared", [False, True])
def test_tril_solve_equals_numpy(transpose, shared):
    rng = np.random.default_rng(7)
    L = np.linalg.cholesky(random_spd(rng, 1 if shared else 6, 5))
    b = rng.standard_normal((6, 5))
    A = np.broadcast_to(L.transpose(0, 2, 1) if transpose else L, (6, 5, 5))
    np.testing.assert_allclose(_tril_solve(L, b, transpose=transpose),
                               np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------- masked outer sums

@pytest.mark.parametrize("D", [3, 16, 17, 24])
@pytest.mark.parametrize("shared_cov", [False, True])
@pytest.mark.parametrize("csr", [False, True])
def test_masked_outer_sum_equals_brute_force_on_both_paths(D, shared_cov, csr):
    "Both ways of packing the upper triangle (fancy indexing for small D, row by row above) give the same sums."
    rng = np.random.default_rng(D)
    R, K = 7, 11
    op = (rng.random((R, K)) < 0.6).astype(float)
    mean, weight = rng.standard_normal((K, D)), rng.uniform(0.5, 2, K)
    cov = random_spd(rng, 1 if shared_cov else K, D)
    second = mean[:, :, None] * mean[:, None, :] + cov                  # (K, D, D), cov broadcast when shared
    expected = np.einsum('rk,k,kij->rij', op, weight, second)
    got = masked_outer_sum(sparse.csr_matrix(op) if csr else op, mean, cov, weight)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(masked_outer_sum(op, mean, cov), np.einsum('rk,kij->rij', op, second), rtol=1e-12)


@pytest.mark.parametrize("D", [3, 20])
@pytest.mark.parametrize("fancy", [False, True])
@pytest.mark.parametrize("csr", [False, True])
def test_masked_outer_sum_split_and_packing_paths(D, fancy, csr, monkeypatch):
    "Both packings (fancy indexing, forced off or on; row by row) and `split`, which returns the sums of the"
    " second moments and of the covariances alone from one product, equal the brute-force sums to 1e-12."
    import vbfa_lit.linalg as linalg
    monkeypatch.setattr(linalg, '_PACK_FANCY_MAX', 1 << 30 if fancy else 0)
    rng = np.random.default_rng(D + 2 * fancy + csr)
    op = (rng.random((6, 13)) < 0.7).astype(float)
    mean, cov, weight = rng.standard_normal((13, D)), random_spd(rng, 13, D), rng.uniform(0.5, 2, 13)
    op_ = sparse.csr_matrix(op) if csr else op
    second = np.einsum('rk,kij->rij', op, mean[:, :, None] * mean[:, None, :] + cov)
    covs = np.einsum('rk,kij->rij', op, cov)
    both, only_cov = masked_outer_sum(op_, mean, cov, split=True)
    np.testing.assert_allclose(both, second, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(only_cov, covs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(masked_outer_sum(op_, mean, cov, weight),
                               np.einsum('rk,k,kij->rij', op, weight, mean[:, :, None] * mean[:, None, :] + cov),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(masked_outer_sum(op_, None, cov), covs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shared_cov", [False, True])
def test_masked_outer_sum_of_covariances_alone(shared_cov):
    "mean=None sums the covariances only; a shared covariance becomes a weighted count per row."
    rng = np.random.default_rng(11)
    op = (rng.random((5, 8)) < 0.5).astype(float)
    cov, weight = random_spd(rng, 1 if shared_cov else 8, 3), rng.uniform(0.5, 2, 8)
    expected = np.einsum('rk,k,kij->rij', op, weight, np.broadcast_to(cov, (8, 3, 3)))
    np.testing.assert_allclose(masked_outer_sum(op, None, cov, weight), expected, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------- shared-batch helpers

def test_shared_batch_helpers_equal_the_explicit_batch():
    rng = np.random.default_rng(5)
    w, S = rng.uniform(size=6), random_spd(rng, 6, 3)
    full = np.broadcast_to(S[:1], S.shape)
    np.testing.assert_allclose(weighted_sum(w, S[:1]), np.tensordot(w, full, 1), rtol=1e-14)
    np.testing.assert_allclose(weighted_sum(w, S), np.tensordot(w, S, 1), rtol=1e-14)
    np.testing.assert_allclose(diagonal_sum(S[:1], 6), np.einsum('kdd->d', full), rtol=1e-14)
    np.testing.assert_allclose(trace_product(S, S[::-1]), [np.trace(a @ b) for a, b in zip(S, S[::-1])], rtol=1e-12)


# ------------------------------------------------------------------------- the module boundary

def test_no_module_imports_another_modules_private_names():
    "Shared helpers have public names in the module that owns them (linalg for the numerics): no `from .x import _y`."
    import ast
    import pathlib
    import vbfa_lit
    bad = []
    for path in sorted(pathlib.Path(vbfa_lit.__file__).parent.glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or '').startswith('vbfa_lit')):
                bad += [f'{path.name}: {a.name} from {node.module}' for a in node.names
                        if a.name.startswith('_') and not a.name.startswith('__')]
    assert not bad, bad


def test_one_blas_thread_limits_inside_and_restores_after():
    from threadpoolctl import threadpool_info, threadpool_limits
    from vbfa_lit.linalg import one_blas_thread
    from vbfa_lit import VBPCA
    blas = lambda: [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']
    if not blas(): pytest.skip('no BLAS library visible to threadpoolctl')
    seen = []
    with threadpool_limits(limits=2, user_api='blas'):                # the user's own setting
        one_blas_thread(lambda: seen.append(blas()))()
        assert blas() == [2] * len(blas())                            # restored after the call
        # the estimator's methods are wrapped: a fit sees one thread
        import vbfa_lit.estimator as est
        orig, calls = est.fit_blocks, []
        def spy(*a, **k):
            seen.append(blas()); calls.append(1)
            return orig(*a, **k)
        est.fit_blocks = spy
        try: VBPCA(n_components=2, max_iter=5, random_state=0).fit(np.random.default_rng(0).normal(size=(20, 4)))
        finally: est.fit_blocks = orig
        assert calls, 'the fit ran its sweeps through estimator.fit_blocks'
        assert blas() == [2] * len(blas())
    assert seen and all(s == [1] * len(s) for s in seen)


# ------------------------------------------------------------------------- packed triangles and back

@pytest.mark.parametrize("D", [1, 2, 5, 30])
@pytest.mark.parametrize("K", [1, 4, 700])           # 700 x 30^2: the row-by-row packing path
def test_unpack_upper_inverts_pack_upper_exactly_into_a_given_buffer(D, K):
    "The symmetric matrices come back bit for bit, into `out` when given (no copy in between), and bad `out` is named."
    from vbfa_lit.linalg import pack_upper, unpack_upper
    S = random_spd(np.random.default_rng(D + K), K, D)
    P = pack_upper(np.empty((K, D * (D + 1) // 2)), None, S)
    np.testing.assert_array_equal(unpack_upper(P), S)
    out = np.full((K, D, D), np.nan)
    assert unpack_upper(P, out) is out
    np.testing.assert_array_equal(out, S)
    with pytest.raises(ValueError, match='out: expected a C-contiguous array'):
        unpack_upper(P, np.empty((K, D, D + 1)))
    if D > 1:                                         # (a 1 x 1 matrix's every view is contiguous)
        with pytest.raises(ValueError, match='out: expected a C-contiguous array'):
            unpack_upper(P, np.empty((K, D, 2 * D))[:, :, ::2])


def test_unpack_upper_names_a_width_that_is_no_triangle():
    from vbfa_lit.linalg import unpack_upper
    with pytest.raises(ValueError, match='packed: 4 entries a row'):
        unpack_upper(np.zeros((3, 4)))
