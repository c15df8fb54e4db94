"""The compiled masked outer sums after their speed-up: the block kernel `_k_block_sums` (four stored entries a pass)
and the one-pass sums of mean mean^T + covariance (no BLAS pass for the means without `split`), each equal to the NumPy
reference to 1e-12 relative, for rows with every number of entries modulo four, D from 1 to 100, NaN carried on."""
import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.linalg import masked_outer_sum, pack_upper
from vbfa_lit.rjmcmc_fast import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba (the optional 'fast' extra) is not installed")


def rel(a, b):
    "Largest difference relative to the largest entry of a."
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    return float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300))


def random_spd(rng, K, D):
    A = rng.standard_normal((K, D, D))
    return A @ A.transpose(0, 2, 1) / D + 0.1 * np.eye(D)


def rows_of_every_length(rng, K, lengths=range(10)):
    "A CSR mask whose row r holds lengths[r] entries at random columns, with random non-unit values."
    rows = [np.sort(rng.choice(K, n, replace=False)) for n in lengths]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    return sparse.csr_matrix((rng.uniform(0.5, 2.0, indptr[-1]), np.concatenate(rows), indptr),
                             shape=(len(rows), K))


@pytest.mark.parametrize('D', [1, 3, 100])
def test_block_sums_equal_the_packed_product(D):
    "`_k_block_sums` on one block of the triangle is the sparse product mask @ packed block, for 0..9 entries a row."
    import vbfa_lit.vbpca_fast as fast
    fast._compile()
    rng = np.random.default_rng(D)
    K = 40
    op = rows_of_every_length(rng, K)
    pk = np.empty((K, D * (D + 1) // 2))
    pack_upper(pk, rng.standard_normal((K, D)), random_spd(rng, K, D))
    i0, i1 = (0, D) if D < 100 else (10, 14)                 # a block of rows of the triangle
    first, nb = sum(D - i for i in range(i0)), sum(D - i for i in range(i0, i1))
    block = np.ascontiguousarray(pk[:, first:first + nb])
    C = np.full((op.shape[0], D, D), -7.0)
    csr = op.indptr.astype(np.int64), op.indices.astype(np.int64), op.data
    pos = op.indptr[:-1].astype(np.int64)
    none = C[:0]
    fast._k_block_sums(*csr, block, nb, i0, i1, np.empty(nb), C, none, 0, K, pos)
    ref = op @ block                                          # (R, nb)
    iu = np.triu_indices(D)
    got = C[:, iu[0], iu[1]][:, first:first + nb]
    assert rel(ref, got) < 1e-12
    assert np.all(C[:, iu[0], iu[1]][:, :first] == -7.0) and np.all(C[:, iu[0], iu[1]][:, first + nb:] == -7.0)
    assert np.array_equal(pos, op.indptr[1:])                 # every entry summed
    C2, pos = np.full_like(C, -7.0), op.indptr[:-1].astype(np.int64)
    for k0, k1 in ((0, 13), (13, 14), (14, K)):               # the items in three chunks: the same sums
        fast._k_block_sums(*csr, np.ascontiguousarray(block[k0:k1]), nb, i0, i1, np.empty(nb), C2, none, k0, k1, pos)
    assert rel(ref, C2[:, iu[0], iu[1]][:, first:first + nb]) < 1e-12
    # two sums in one pass: the packed items [block | 3 block] side by side, into C and a second output
    both = np.ascontiguousarray(np.concatenate([block, 3 * block], axis=1))
    for chunks in (((0, K),), ((0, 13), (13, 14), (14, K))):
        Ca, Cb, pos = np.full_like(C, -7.0), np.full_like(C, -5.0), op.indptr[:-1].astype(np.int64)
        for k0, k1 in chunks:
            fast._k_block_sums(*csr, both[k0:k1], nb, i0, i1, np.empty(2 * nb), Ca, Cb, k0, k1, pos)
        assert rel(ref, Ca[:, iu[0], iu[1]][:, first:first + nb]) < 1e-12
        assert rel(3 * ref, Cb[:, iu[0], iu[1]][:, first:first + nb]) < 1e-12
        assert np.all(Cb[:, iu[0], iu[1]][:, :first] == -5.0) and np.all(Cb[:, iu[0], iu[1]][:, first + nb:] == -5.0)


@pytest.mark.parametrize('D', [1, 2, 24, 25, 100])                 # split: one packed pass below D = 25, BLAS above
@pytest.mark.parametrize('shared', [False, True], ids=['own_cov', 'shared_cov'])
def test_outer_sums_equal_numpy_without_and_with_split(D, shared):
    "The compiled sum, means packed with the covariances (no split) and split (one pass of both, or BLAS), equals NumPy's."
    from vbfa_lit.vbpca_fast import _masked_outer_sum as compiled
    rng = np.random.default_rng(D + 7 * shared)
    K = 30
    op = rows_of_every_length(rng, K, list(range(10)) + [K])     # and a full row
    mean, cov, w = 10 * rng.standard_normal((K, D)), random_spd(rng, K, D), rng.uniform(0.1, 3, K)
    if shared: cov = cov[:1]
    a, b = masked_outer_sum(op, mean, cov, w), compiled(op, mean, cov, w)
    assert rel(a, b) < 1e-12
    np.testing.assert_array_equal(b, b.transpose(0, 2, 1))
    (a1, a2), (b1, b2) = masked_outer_sum(op, mean, cov, w, True), compiled(op, mean, cov, w, True)
    assert rel(a1, b1) < 1e-12 and rel(a2, b2) < 1e-12
    assert rel(b, b1) < 1e-12                                    # the two routes agree


def test_outer_sums_carry_nan_to_the_rows_that_see_it():
    "A NaN mean of item k makes NaN exactly the sums of the rows that store k, as in NumPy; other rows stay finite."
    from vbfa_lit.vbpca_fast import _masked_outer_sum as compiled
    rng = np.random.default_rng(5)
    D, K = 6, 25
    op = rows_of_every_length(rng, K)
    mean, cov = rng.standard_normal((K, D)), random_spd(rng, K, D)
    k = op.indices[op.indptr[7] + 2]                             # an item stored in row 7
    mean[k, 0] = np.nan
    hit = np.asarray((op[:, [k]] != 0).todense()).ravel()
    for split in (False, True):
        a, b = masked_outer_sum(op, mean, cov, None, split), compiled(op, mean, cov, None, split)
        a, b = (a[0], b[0]) if split else (a, b)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        assert np.isnan(b[hit]).any(axis=(1, 2)).all() and np.isfinite(b[~hit]).all()
        assert rel(a[~hit], b[~hit]) < 1e-12
