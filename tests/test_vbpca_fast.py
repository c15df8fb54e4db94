"""The compiled VB sweep (`vbfa_lit.vbpca_fast`): each kernel and whole fits equal to the NumPy path to 1e-12.

The compiled `_masked_outer_sum` and `_gaussian_from_precision` must return what their namesakes in
`vbfa_lit.linalg` return, to 1e-12 relative to each array's largest entry, for dense and CSR masks, D from 1 to
above the chunked kernel's limit, with and without weights, means, `split` and a shared covariance; whole fits
(`fit_vbfa`, `VBPCA` on dense and on sparse input with ``missing_values='unstored'``) must agree sweep by sweep.
`engine` is checked by name, and ``engine='numpy'`` must never import numba. numba is in the `dev` extra, so these
run in CI; without it the comparisons are skipped (the import test still runs).
"""
import subprocess
import sys

import warnings

import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit import VBPCA
from vbfa_lit.ard import ARD
from vbfa_lit.linalg import gaussian_from_precision, masked_outer_sum
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.vbpca import FixedAlpha, Prior
from vbfa_lit.engine import fit_vbfa, init_posterior, observed, sweep

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba (the optional 'fast' extra) is not installed")


def rel(a, b):
    "Largest difference relative to the largest entry of a."
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    return float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300))


def random_spd(rng, K, D):
    A = rng.standard_normal((K, D, D))
    return A @ A.transpose(0, 2, 1) / D + 0.1 * np.eye(D)


# ------------------------------------------------------------------------------------------- kernels

@needs_numba
@pytest.mark.parametrize('D', [1, 2, 7, 10, 31, 64, 65, 90])
@pytest.mark.parametrize('csr', [False, True], ids=['dense', 'csr'])
@pytest.mark.parametrize('density', [0.05, 0.8])
def test_masked_outer_sum_equals_numpy(D, csr, density):
    from vbfa_lit.vbpca_fast import _masked_outer_sum as compiled
    rng = np.random.default_rng(D + 100 * csr + int(10 * density))
    R, K = 23, 57
    mask = (rng.random((R, K)) < density).astype(float)
    mask[3] = 0.0                                                   # an empty row
    op = sparse.csr_matrix(mask) if csr else mask
    mean, cov, weight = 1e3 * rng.standard_normal((K, D)), random_spd(rng, K, D), rng.uniform(0.01, 5, K)
    for c in (cov, cov[:1]):
        for w in (weight, None):
            for m, split in ((mean, False), (mean, True), (None, False)):
                a, b = masked_outer_sum(op, m, c, w, split), compiled(op, m, c, w, split)
                for x, y in zip(*((a, b) if split else ((a,), (b,)))):
                    assert rel(x, y) < 1e-12
                    np.testing.assert_array_equal(y, y.transpose(0, 2, 1))          # exactly symmetric


@needs_numba
@pytest.mark.parametrize('shared', [False, True], ids=['own_cov', 'shared_cov'])
def test_masked_outer_sum_blocks_cover_the_triangle(shared):
    """Blocks of the CSR kernel smaller than the triangle (several per row of it, or one row each) and chunks of the
    items (one item, 7, and all; rows whose entries span several chunks, rows with none in a chunk, empty rows)
    change nothing, with and without split."""
    import vbfa_lit.vbpca_fast as fast
    rng = np.random.default_rng(3)
    D, R, K = 40, 30, 200
    op = sparse.random(R, K, density=0.1, random_state=4, format='csr')
    op.data[:] = 1.0
    op.data[op.indptr[5]:op.indptr[6]] = 0.0; op.eliminate_zeros()             # an empty row
    mean, cov = rng.standard_normal((K, D)), random_spd(rng, 1 if shared else K, D)
    w = rng.uniform(0.5, 2.0, K)
    ref = masked_outer_sum(op, mean, cov, w, True)
    csr = op.indptr.astype(np.int64), op.indices.astype(np.int64), op.data
    fast._compile()
    for block in (1, D + 3, 5 * D):
        for chunk in (1, 7, K):
            out, out_cov = np.empty((R, D, D)), np.empty((R, D, D))
            for fused in (False, True):                    # split: the means by BLAS, or both sums in one pass
                out, out_cov = np.empty((R, D, D)), np.empty((R, D, D))
                fast._k_outer_sums(*csr, mean, cov, w, block, chunk, out, out_cov, fused)
                assert rel(ref[0], out) < 1e-12 and rel(ref[1], out_cov) < 1e-12
                np.testing.assert_array_equal(out_cov, out_cov.transpose(0, 2, 1))
            out0 = np.empty((R, D, D))
            fast._k_outer_sums(*csr, mean, cov, w, block, chunk, out0, out_cov[:0], True)
            assert rel(ref[0], out0) < 1e-12


@needs_numba
def test_item_chunks_are_taken_when_the_items_exceed_the_cache(monkeypatch):
    "A chunk budget below one item's packed block gives one item a chunk; the sums are NumPy's."
    import vbfa_lit.vbpca_fast as fast
    rng = np.random.default_rng(8)
    D, R, K = 6, 50, 90
    op = sparse.random(R, K, density=0.2, random_state=9, format='csr')
    op.data[:] = 1.0
    mean, cov = rng.standard_normal((K, D)), random_spd(rng, K, D)
    ref = masked_outer_sum(op, mean, cov, None, True)
    seen = []
    kernel = fast._k_outer_sums
    fast._compile()
    monkeypatch.setattr(fast, '_k_outer_sums', lambda *a: seen.append(a[7]) or kernel(*a))
    monkeypatch.setattr(fast, '_CHUNK_BYTES', 8)
    monkeypatch.setattr(fast, '_CHUNK_MIN_ENTRIES', 0)
    for D_split in (0, 100):                                    # split by BLAS, and in one packed pass
        monkeypatch.setattr(fast, '_SPLIT_BY_BLAS_MIN_D', D_split)
        out = fast._masked_outer_sum(op, mean, cov, split=True)
        assert rel(ref[0], out[0]) < 1e-12 and rel(ref[1], out[1]) < 1e-12
    assert seen and set(seen) == {1}
    unsorted = op.copy()                                        # a CSR matrix whose rows' items are not sorted
    for r in range(R):
        s, e = unsorted.indptr[r], unsorted.indptr[r + 1]
        unsorted.indices[s:e] = unsorted.indices[s:e][::-1].copy()
    unsorted.has_sorted_indices = False
    out = fast._masked_outer_sum(unsorted, mean, cov, split=True)
    assert rel(ref[0], out[0]) < 1e-12 and rel(ref[1], out[1]) < 1e-12


def test_chunks_hold_enough_of_a_rows_entries():
    """The items a chunk: the bytes' rule where rows have many entries a chunk (a Netflix block at D = 15), more
    items where it would leave a row a few (MovieLens-25M's shape at D = 50), never more than the items."""
    import vbfa_lit.vbpca_fast as fast
    per_chunk = lambda R, K, nnz, chunk: nnz / R * min(chunk, K) / K     # a row's entries a chunk, on average
    R, K, nnz = 120_000, 17_770, 19_000_000                     # users x films, D = 15: the whole triangle a block
    assert fast._chunk_items(R, K, nnz, 120) == fast._CHUNK_BYTES // (8 * 120)
    assert fast._chunk_items(K, R, nnz, 120) == fast._CHUNK_BYTES // (8 * 120)     # films x users
    for R, K in ((40_000, 59_047), (59_047, 40_000)):            # MovieLens-25M's shape, D = 50
        chunk = fast._chunk_items(R, K, 6_200_000, 512)
        assert chunk > fast._CHUNK_BYTES // (8 * 512)
        assert per_chunk(R, K, 6_200_000, chunk) >= fast._CHUNK_MIN_ENTRIES
    assert fast._chunk_items(5, 7, 3, 10) == 7 and fast._chunk_items(5, 7, 0, 10) == 7     # at most every item
    assert fast._chunk_items(3, 0, 0, 5) == 1


@needs_numba
@pytest.mark.parametrize('D', [1, 2, 5, 10, 30, 64, 65, 100])
@pytest.mark.parametrize('K', [1, 33, 70])
def test_gaussian_from_precision_equals_numpy(D, K):
    "Both compiled kernels (chunks of factors up to D = 64, row by row above), chunks not filled, one shared P."
    from vbfa_lit.vbpca_fast import _gaussian_from_precision as compiled
    rng = np.random.default_rng(D * K)
    P, h = random_spd(rng, K, D) * 10.0 ** rng.uniform(-3, 3, (K, 1, 1)), rng.standard_normal((K, D))
    for x, y in zip(gaussian_from_precision(P, h), compiled(P, h)):
        assert rel(x, y) < 1e-12
    H = rng.standard_normal((9, D))                                  # one precision shared by 9 linear terms
    for x, y in zip(gaussian_from_precision(P[:1], H), compiled(P[:1], H)):
        assert rel(x, y) < 1e-12
    scale, diag = rng.uniform(0.1, 10, K), rng.uniform(0, 3, D)      # scale_k P_k + diag(diag), formed in the kernel
    ref = gaussian_from_precision(scale[:, None, None] * P + np.diag(diag), h)
    for x, y in zip(ref, compiled(P, h, scale=scale, diag=diag)):
        assert rel(x, y) < 1e-12
    iu = np.triu_indices(D)                                          # the packed upper rows `packed=True` gives
    for x, y in zip(compiled(P, h, scale=scale, diag=diag), compiled(P[:, iu[0], iu[1]], h, scale=scale, diag=diag)):
        assert np.array_equal(x, y)                                  # the same numbers in the same order: equal


@needs_numba
@pytest.mark.parametrize('D', [1, 4, 30])
def test_masked_outer_sum_packed_is_the_upper_triangle(D):
    "With packed=True a dense mask's sums come back as the upper triangles, row by row; a sparse one's unpacked."
    from vbfa_lit.vbpca_fast import _masked_outer_sum as compiled
    rng = np.random.default_rng(D)
    R, K = 17, 23
    op, mean, cov, w = (rng.random((R, K)) < 0.7).astype(float), rng.standard_normal((K, D)), random_spd(rng, K, D), \
        rng.uniform(0.5, 2, K)
    full, iu = compiled(op, mean, cov, w), np.triu_indices(D)
    assert np.array_equal(compiled(op, mean, cov, w, packed=True), full[:, iu[0], iu[1]])
    sparse_op = (rng.random((R, K)) < 0.05).astype(float)             # below _DENSE_MIN: the CSR kernel, (R, D, D)
    assert np.array_equal(compiled(sparse_op, mean, cov, w, packed=True), compiled(sparse_op, mean, cov, w))


@needs_numba
@pytest.mark.parametrize('D', [3, 70])
def test_not_positive_definite_is_refused_like_numpy(D):
    "A negative pivot raises NumPy's LinAlgError; a NaN goes through to the results, as in NumPy."
    from vbfa_lit.vbpca_fast import _gaussian_from_precision as compiled
    rng = np.random.default_rng(0)
    P = random_spd(rng, 5, D)
    P[3, D - 1, D - 1] = -1e3
    with pytest.raises(np.linalg.LinAlgError):
        gaussian_from_precision(P, np.ones((5, D)))
    with pytest.raises(np.linalg.LinAlgError, match='not positive definite'):
        compiled(P, np.ones((5, D)))
    P[3, D - 1, D - 1] = np.nan
    for mean, S, logdet in (gaussian_from_precision(P, np.ones((5, D))), compiled(P, np.ones((5, D)))):
        assert np.isnan(S[3]).any() and np.isnan(logdet[3])
        assert np.all(np.isfinite(np.delete(S, 3, axis=0)))


@needs_numba
@pytest.mark.parametrize('offset', [0.0, 1e3])
@pytest.mark.parametrize('M, N', [(30, 70), (70, 30)], ids=['by_sample', 'by_feature'])
def test_residual_ss_equals_numpy(offset, M, N):
    """The compiled squared residuals of CSR data, read sample by sample (more samples than features) or feature by
    feature; dense data keep NumPy's (the same function)."""
    from vbfa_lit.engine import residual_ss
    from vbfa_lit.vbpca_fast import compiled_kernels, _residual_ss_csr
    rng = np.random.default_rng(5)
    Y = problem(5, M, N, 0.7) + offset
    W, X, mu = rng.standard_normal((M, 4)), rng.standard_normal((N, 4)), rng.standard_normal(M) + offset
    dense, csr = observed(Y), observed(Y, sparse_storage=True)
    ref = residual_ss(dense, W, X, mu)
    assert rel(ref, residual_ss(csr, W, X, mu, kernels=compiled_kernels())) < 1e-12
    assert rel(ref, _residual_ss_csr(csr.Y, W, X, mu)) < 1e-12                 # without the transpose
    assert rel(ref, _residual_ss_csr(csr.Y, W, X, mu, YT=csr.YT)) < 1e-12


# ---------------------------------------------------------------------------------------- whole fits

def problem(seed, M, N, missing):
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((M, 3)) @ rng.standard_normal((3, N)) + 5 + 0.3 * rng.standard_normal((M, N))
    Y[rng.random((M, N)) < missing] = np.nan
    return Y


@needs_numba
@pytest.mark.parametrize('storage', ['dense', 'csr'])
@pytest.mark.parametrize('w', [ARD(), FixedAlpha()], ids=['ard', 'broad'])
@pytest.mark.parametrize('shared', [True, False], ids=['shared', 'per_feature'])
@pytest.mark.parametrize('missing', [0.0, 0.2, 0.9])
def test_fit_equals_numpy_sweep_by_sweep(storage, w, shared, missing):
    data = observed(problem(1, 17, 40, missing), sparse_storage=storage == 'csr')
    kw = dict(prior=Prior(w=w), shared=shared, max_iter=25, tol=0, rng=2)
    a, b = fit_vbfa(data, 6, engine='numpy', **kw), fit_vbfa(data, 6, engine='numba', **kw)
    assert rel(a.elbo, b.elbo) < 1e-12
    for x, y in zip(a.q, b.q):
        if x is not None: assert rel(x, y) < 1e-12
    assert np.all(np.diff(b.elbo) >= -1e-9 * np.abs(b.elbo[1:]))                 # the bound never decreases


@needs_numba
@pytest.mark.parametrize('seed, missing', [(3, 0.5), (4, 0.9), (5, 0.75)])
def test_fit_with_item_chunks_equals_numpy_and_the_bound_never_falls(seed, missing, monkeypatch):
    """Whole fits with the compiled sums taken one item a chunk (as a block of many items is), on random problems
    with offsets of 1e3, features on scales from 1e-2 to 1e2, a rank-4 signal and heavy missingness: the fit is
    NumPy's sweep by sweep and its bound never falls, with the transformations and two blocks."""
    import vbfa_lit.vbpca_fast as fast
    from vbfa_lit.transformations import transform_posterior
    monkeypatch.setattr(fast, '_CHUNK_BYTES', 8)
    monkeypatch.setattr(fast, '_CHUNK_MIN_ENTRIES', 0)
    rng = np.random.default_rng(seed)
    M, N = 23, 60
    Y = (rng.standard_normal((M, 4)) @ rng.standard_normal((4, N)) + 0.5 * rng.standard_normal((M, N)))
    Y = Y * 10.0 ** rng.uniform(-2, 2, (M, 1)) + 1e3 * rng.standard_normal((M, 1))
    Y[rng.random((M, N)) < missing] = np.nan
    data = observed(Y, sparse_storage=True)
    both = lambda d, q, pr: transform_posterior(d, q, pr, 'both')
    kw = dict(prior=Prior(w=ARD()), shared=False, max_iter=30, tol=0, rng=seed, transform=both, n_blocks=2)
    a, b = fit_vbfa(data, 6, engine='numpy', **kw), fit_vbfa(data, 6, engine='numba', **kw)
    assert rel(a.elbo, b.elbo) < 1e-10
    assert np.all(np.diff(b.elbo) >= -1e-9 * np.abs(b.elbo[1:]))


@needs_numba
def test_one_sweep_equals_from_a_random_posterior():
    "From a posterior with per-row covariances everywhere (not the initial shared ones)."
    from vbfa_lit.vbpca import random_posterior
    rng = np.random.default_rng(7)
    Y = problem(7, 12, 30, 0.3)
    data, prior = observed(Y), Prior(w=ARD())
    q = random_posterior(rng, 12, 30, 5, ard=True)
    a, b = sweep(data, q, prior, False, 'numpy'), sweep(data, q, prior, False, 'numba')
    assert rel(a[1], b[1]) < 1e-12
    for x, y in zip(a[0], b[0]): assert (x is None and y is None) or rel(x, y) < 1e-12


@needs_numba
@pytest.mark.parametrize('sparse_input', [False, True], ids=['nan', 'unstored'])
def test_vbpca_engines_agree(sparse_input):
    "The estimator, with its transformations between sweeps, on dense input and on sparse input (unstored = missing)."
    X = problem(3, 60, 8, 0.3).T                                     # (n_samples, n_features)
    if sparse_input:
        obs = ~np.isnan(X)
        X = sparse.csr_matrix((X[obs], np.nonzero(obs)), shape=X.shape)
    kw = dict(random_state=0, max_iter=40, missing_values='unstored' if sparse_input else np.nan)
    with warnings.catch_warnings():                                   # max_iter may be reached: not the point here
        warnings.simplefilter('ignore')
        a, b = VBPCA(engine='numpy', **kw).fit(X), VBPCA(engine='numba', **kw).fit(X)
    assert a.n_iter_ == b.n_iter_
    assert rel(a.elbo_, b.elbo_) < 1e-12
    for name in ('components_', 'mean_', 'noise_variance_', 'alpha_'):
        assert rel(getattr(a, name), getattr(b, name)) < 1e-10, name


# --------------------------------------------------------------------------------------- the engine

def test_engine_is_checked_by_name():
    data = observed(problem(0, 6, 10, 0.2))
    with pytest.raises(ValueError, match='engine'):
        fit_vbfa(data, 2, engine='fortran')
    with pytest.raises(ValueError, match='engine'):
        VBPCA(engine='fast').fit(problem(0, 6, 10, 0.2).T)
    q = init_posterior(data, 2, Prior(), False, np.random.default_rng(0))
    with pytest.raises(ValueError, match='engine'):
        sweep(data, q, Prior(), False, engine='fortran')
    complete = observed(np.random.default_rng(1).standard_normal((6, 10)))
    with pytest.raises(ValueError, match='engine'):                   # refused on complete data too
        sweep(complete, init_posterior(complete, 2, Prior(), False, np.random.default_rng(0)), Prior(), False,
              engine='fortran')


def test_without_numba_auto_is_numpy_and_numba_says_how_to_install(monkeypatch):
    import vbfa_lit.linalg as linalg                                  # where the engine's choice is made
    data = observed(problem(0, 6, 10, 0.2))
    ref = fit_vbfa(data, 2, max_iter=5, tol=0, rng=0, engine='numpy')
    monkeypatch.setattr(linalg, 'numba_available', lambda: False)
    auto = fit_vbfa(data, 2, max_iter=5, tol=0, rng=0, engine='auto')
    assert auto.elbo == ref.elbo                                      # the NumPy sweep, bit for bit
    with pytest.raises(ImportError, match=r"vbfa_lit\[fast\]"):
        fit_vbfa(data, 2, engine='numba')
    with pytest.raises(ImportError, match=r"vbfa_lit\[fast\]"):
        VBPCA(engine='numba').fit(problem(0, 6, 10, 0.2).T)


@needs_numba
def test_kernels_are_cached_on_disk():
    "After one compiled fit, a new process loads the machine code from numba's cache instead of compiling."
    fit_vbfa(observed(problem(0, 6, 10, 0.2)), 2, max_iter=2, engine='numba')
    code = ("import numpy as np\n"
            "from vbfa_lit.engine import fit_vbfa, observed\n"
            "Y = np.random.default_rng(0).standard_normal((6, 10)); Y[0, :3] = np.nan\n"
            "fit_vbfa(observed(Y), 2, max_iter=2, engine='numba')\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**__import__('os').environ, 'NUMBA_DEBUG_CACHE': '1'})
    log = out.stdout + out.stderr
    assert 'data loaded from' in log and '_k_gaussians_lanes' in log and '_k_pack' in log
    assert 'data saved to' not in log, log[-2000:]
