"""Uniform samples on O(M) and on the Stiefel manifold (`vbfa_lit.stiefel`), and the density of the ordered
singular values of a Gaussian matrix.

Statistical tests use fixed seeds and a significance level ALPHA for each test; the tolerance of every
mean is a multiple of its Monte-Carlo standard error, so a failure means a wrong distribution, not bad luck
(the chance of a false alarm is ALPHA per test). `test_the_uniformity_tests_can_fail` runs the same tests on
the QR sampler without the sign fix, which is not uniform, and checks that they reject it.
"""
import tracemalloc

import numpy as np
import pytest
from scipy import integrate, stats

from vbfa_lit.stiefel import (haar_orthogonal, householder_matrix, householder_to_stiefel, sample_stiefel,
                              singular_value_logpdf)

ALPHA = 1e-3   # false-alarm probability of each statistical test
Z = stats.norm.isf(ALPHA / 2)   # two-sided z bound for a mean compared with its standard error


def orthonormality_error(U):
    D = U.shape[-1]
    return np.abs(np.swapaxes(U, -1, -2) @ U - np.eye(D)).max()


# ----------------------------------------------------------------------------------------- shapes, orthonormality
REFLECTIONS = ['mezzadri', 'swap']


@pytest.mark.parametrize('reflection', REFLECTIONS)
@pytest.mark.parametrize('M,D', [(1, 1), (2, 1), (2, 2), (5, 3), (100, 100), (500, 20), (2000, 1), (2000, 10)])
def test_orthonormal_columns(M, D, reflection):
    U = sample_stiefel(M, D, random_state=M + D, reflection=reflection)
    assert U.shape == (M, D)
    assert orthonormality_error(U) < 1e-12


@pytest.mark.parametrize('M', [1, 2, 7, 60])
def test_haar_is_orthogonal_batched(M):
    U = haar_orthogonal(M, size=(3, 2), random_state=M)
    assert U.shape == (3, 2, M, M)
    assert orthonormality_error(U) < 1e-12
    assert np.abs(U @ np.swapaxes(U, -1, -2) - np.eye(M)).max() < 1e-12


@pytest.mark.slow
def test_haar_is_orthogonal_large():
    assert orthonormality_error(haar_orthogonal(2000, random_state=0)) < 1e-12


def test_stiefel_never_forms_a_D_by_D_matrix():
    "M = 20000, D = 3: a M x M matrix would need 3.2 GB; the sampler should need a few times M D numbers."
    tracemalloc.start()
    U = sample_stiefel(20_000, 3, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert orthonormality_error(U) < 1e-12
    assert peak < 50 * 20_000 * 3 * 8, peak


def test_size_shapes_and_batch_equals_single():
    vecs = [np.random.default_rng(0).standard_normal((4, 6 - q)) for q in range(3)]
    batched = householder_to_stiefel(vecs)
    singles = np.stack([householder_to_stiefel([v[i] for v in vecs]) for i in range(4)])
    np.testing.assert_allclose(batched, singles, atol=1e-14)
    assert sample_stiefel(5, 2, size=0, random_state=0).shape == (0, 5, 2)
    assert sample_stiefel(5, 2, size=3, random_state=0).shape == (3, 5, 2)
    assert sample_stiefel(5, 2, size=(2, 3), random_state=0).shape == (2, 3, 5, 2)


@pytest.mark.parametrize('reflection', REFLECTIONS)
def test_map_equals_explicit_product_of_reflections(reflection):
    rng = np.random.default_rng(3)
    for M, D in [(3, 3), (6, 2), (9, 5)]:
        vecs = [rng.standard_normal(M - q) for q in range(D)]
        P = np.eye(M)
        for v in vecs:
            H = np.eye(M)
            H[M - len(v):, M - len(v):] = householder_matrix(v, reflection=reflection)
            P = P @ H
        np.testing.assert_allclose(householder_to_stiefel(vecs, reflection=reflection), P[:, :D], atol=1e-13)
        # only the directions matter
        np.testing.assert_allclose(householder_to_stiefel([3.7 * v for v in vecs], reflection=reflection), P[:, :D],
                                   atol=1e-13)
        np.testing.assert_allclose(householder_to_stiefel([v[None] for v in vecs], reflection=reflection)[0], P[:, :D],
                                   atol=1e-13)


def test_swap_reflection_is_continuous_across_v1_zero_and_stable_near_e1():
    rng = np.random.default_rng(6)
    v5, v4 = rng.standard_normal(5), rng.standard_normal(4)
    plus, minus = np.r_[1e-10, v5[1:]], np.r_[-1e-10, v5[1:]]
    jump = lambda ref: np.abs(householder_to_stiefel([plus, v4], reflection=ref)
                              - householder_to_stiefel([minus, v4], reflection=ref)).max()
    assert jump('swap') < 1e-8
    assert jump('mezzadri') > 0.1      # the signed reflection jumps (n = 5 >= 3)
    for eps in (1e-4, 1e-8, 1e-12):    # near the ray v = c e_1 the result stays orthonormal
        U = householder_to_stiefel([np.r_[1.0, eps * v5[1:]], v4], reflection='swap')
        assert orthonormality_error(U) < 1e-12
    assert np.array_equal(householder_matrix([2.0, 0.0, 0.0], reflection='swap'), np.eye(3))


def test_householder_matrix_properties():
    rng = np.random.default_rng(4)
    for n in (1, 2, 5, 30):
        for v in (rng.standard_normal(n), -np.abs(rng.standard_normal(n)), np.r_[0.0, rng.standard_normal(n - 1)]):
            if not np.any(v): continue
            H = householder_matrix(v)
            np.testing.assert_allclose(H @ H.T, np.eye(n), atol=1e-13)
            np.testing.assert_allclose(H, H.T, atol=1e-15)
            np.testing.assert_allclose(H @ v, np.r_[np.linalg.norm(v), np.zeros(n - 1)], atol=1e-13)


# ----------------------------------------------------------------------------------------------- reproducibility
def test_reproducible_with_a_seed():
    a = sample_stiefel(30, 4, size=5, random_state=42)
    np.testing.assert_array_equal(a, sample_stiefel(30, 4, size=5, random_state=42))
    np.testing.assert_array_equal(a, sample_stiefel(30, 4, size=5, random_state=np.random.default_rng(42)))
    assert not np.array_equal(a, sample_stiefel(30, 4, size=5, random_state=43))
    np.testing.assert_array_equal(haar_orthogonal(6, random_state=1), haar_orthogonal(6, random_state=1))
    r1 = sample_stiefel(8, 2, random_state=np.random.RandomState(0))
    r2 = sample_stiefel(8, 2, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(r1, r2)
    g = np.random.default_rng(5)
    assert not np.array_equal(sample_stiefel(8, 2, random_state=g), sample_stiefel(8, 2, random_state=g))


# ---------------------------------------------------------------------------------------------- uniformity: O(M)
def qr_without_sign_fix(M, D, size, rng):
    return np.linalg.qr(rng.standard_normal((size, M, D)))[0]


def haar_checks(U, reference):
    "p-values / z-scores of the O(M) checks; `reference` are scipy.stats.ortho_group draws."
    n, M = U.shape[0], U.shape[-1]
    # two-sample KS of entries, at three positions (Bonferroni over them)
    ks = min(stats.ks_2samp(U[:, i, j], reference[:, i, j]).pvalue for i, j in [(0, 0), (M - 1, 0), (1, M - 1)]) * 3
    det_sign = stats.binomtest(int(np.sum(np.linalg.det(U) > 0)), n, 0.5).pvalue
    tr, tr2 = np.trace(U, axis1=-2, axis2=-1), np.trace(U @ U, axis1=-2, axis2=-1)
    z_tr = tr.mean() / (tr.std(ddof=1) / np.sqrt(n))
    z_tr2 = (tr2.mean() - 1) / (tr2.std(ddof=1) / np.sqrt(n))
    return ks, det_sign, z_tr, z_tr2


@pytest.mark.parametrize('reflection', REFLECTIONS)
@pytest.mark.parametrize('M', [2, 3, 6])
def test_haar_on_O_M(M, reflection):
    n = 4000
    U = sample_stiefel(M, M, size=n, random_state=100 + M, reflection=reflection)
    ref = stats.ortho_group.rvs(M, size=n, random_state=200 + M)
    ks, det_sign, z_tr, z_tr2 = haar_checks(U, ref)
    assert ks > ALPHA, ks
    assert det_sign > ALPHA, det_sign
    assert abs(z_tr) < Z and abs(z_tr2) < Z, (z_tr, z_tr2)


# ----------------------------------------------------------------------------------------- uniformity: V_{M,D}
@pytest.mark.parametrize('reflection', REFLECTIONS)
@pytest.mark.parametrize('M,D', [(2, 1), (3, 2), (10, 3), (50, 5)])
def test_first_entry_squared_is_beta(M, D, reflection):
    "U[0, 0] is the first coordinate of a uniform point of the sphere: U[0, 0]**2 ~ Beta(1/2, (M-1)/2)."
    U = sample_stiefel(M, D, size=5000, random_state=M * D, reflection=reflection)
    assert stats.kstest(U[:, 0, 0] ** 2, stats.beta(0.5, (M - 1) / 2).cdf).pvalue > ALPHA
    # and the sign of U[0, 0] is a fair coin
    assert stats.binomtest(int(np.sum(U[:, 0, 0] > 0)), 5000, 0.5).pvalue > ALPHA


def invariance_pvalue(sampler, M, D, n, seed):
    "Two-sample KS of entries of R U against U for a fixed orthogonal R (a rotation and a reflection)."
    rng = np.random.default_rng(seed)
    R = stats.ortho_group.rvs(M, random_state=seed)
    U, V = sampler(M, D, n, rng), sampler(M, D, n, rng)
    RU = R @ U
    positions = [(0, 0), (M - 1, D - 1), (M // 2, 0)]
    return min(stats.ks_2samp(RU[:, i, j], V[:, i, j]).pvalue for i, j in positions) * len(positions)


@pytest.mark.parametrize('reflection', REFLECTIONS)
@pytest.mark.parametrize('M,D', [(3, 2), (8, 3)])
def test_left_multiplication_leaves_distribution_unchanged(M, D, reflection):
    sampler = lambda M, D, n, rng: sample_stiefel(M, D, size=n, random_state=rng, reflection=reflection)
    assert invariance_pvalue(sampler, M, D, 4000, seed=M) > ALPHA


def test_the_uniformity_tests_can_fail():
    "QR without the sign fix is not uniform: the same tests (same sizes) reject it."
    rng = np.random.default_rng(0)
    U = qr_without_sign_fix(3, 2, 4000, rng)
    assert stats.binomtest(int(np.sum(U[:, 0, 0] > 0)), 4000, 0.5).pvalue < ALPHA
    assert invariance_pvalue(qr_without_sign_fix, 3, 2, 4000, seed=3) < ALPHA
    ks, *_ = haar_checks(qr_without_sign_fix(3, 3, 4000, rng), stats.ortho_group.rvs(3, size=4000, random_state=1))
    assert ks < ALPHA


# ------------------------------------------------------------------------------------ ordered singular values
def test_singular_value_logpdf_known_cases():
    s = np.linspace(0.1, 4, 7)[:, None]
    # D = 1: the chi distribution with M degrees of freedom
    for M in (1, 2, 5):
        np.testing.assert_allclose(singular_value_logpdf(s, M), stats.chi(M).logpdf(s[:, 0]), rtol=1e-12)
    # outside the ordered region
    assert singular_value_logpdf([1.0, 2.0], 3) == -np.inf
    assert singular_value_logpdf([1.0, 1.0], 3) == -np.inf
    assert singular_value_logpdf([1.0, -0.5], 3) == -np.inf
    assert singular_value_logpdf(np.array([[2.0, 1.0], [1.0, 2.0]]), 3).shape == (2,)


@pytest.mark.parametrize('M,D', [(2, 2), (4, 2), pytest.param(3, 3, marks=pytest.mark.slow)])
def test_singular_value_density_integrates_to_one(M, D):
    f = lambda *s: np.exp(singular_value_logpdf(np.array(s[::-1]), M))
    bounds = [lambda *outer: (0, outer[0])] * (D - 1) + [(0, 12.0)]
    total = integrate.nquad(f, bounds, opts={'epsabs': 1e-8, 'epsrel': 1e-8})[0]
    assert total == pytest.approx(1, abs=1e-6)


def marginal_cdfs_d2(M, top=10.0, m=2001):
    "Marginal CDFs of sigma_1 and sigma_2 (D = 2) by integrating the exported density on a grid."
    g = np.linspace(0, top, m)
    g[0] = 1e-300                      # the density is positive at sigma_2 = 0 when M = D; keep that edge
    S1, S2 = np.meshgrid(g, g, indexing='ij')
    p = np.exp(singular_value_logpdf(np.stack([S1, S2], -1), M))         # zero off the ordered region
    p1 = integrate.trapezoid(p, g, axis=1)                                # density of sigma_1
    p2 = integrate.trapezoid(p, g, axis=0)                                # density of sigma_2
    c1, c2 = (integrate.cumulative_trapezoid(q, g, initial=0) for q in (p1, p2))
    return (lambda t: np.interp(t, g, c1)), (lambda t: np.interp(t, g, c2))


@pytest.mark.parametrize('M', [2, 3, 7])
def test_simulated_singular_values_follow_the_density(M):
    n = 5000
    sv = np.linalg.svd(np.random.default_rng(M).standard_normal((n, M, 2)), compute_uv=False)
    cdf1, cdf2 = marginal_cdfs_d2(M)
    assert cdf1(10.0) == pytest.approx(1, abs=1e-4)   # the grid integration is accurate enough for the test
    p = min(stats.kstest(sv[:, 0], cdf1).pvalue, stats.kstest(sv[:, 1], cdf2).pvalue) * 2
    assert p > ALPHA, p


@pytest.mark.slow
def test_singular_value_density_q3_moments():
    "D = 3, M = 4: E[sigma_1] and E[sigma_3] by quadrature against the mean of simulated singular values."
    M, n = 4, 20_000
    sv = np.linalg.svd(np.random.default_rng(11).standard_normal((n, M, 3)), compute_uv=False)
    bounds = [lambda *outer: (0, outer[0])] * 2 + [(0, 10.0)]
    for q in (0, 2):
        f = lambda *s: np.array(s[::-1])[q] * np.exp(singular_value_logpdf(np.array(s[::-1]), M))
        exact = integrate.nquad(f, bounds, opts={'epsabs': 1e-5, 'epsrel': 1e-5})[0]   # << the MC error, ~5e-3
        z = (sv[:, q].mean() - exact) / (sv[:, q].std(ddof=1) / np.sqrt(n))
        assert abs(z) < Z, (q, z)


def test_wrong_order_of_the_density_is_detected():
    "The KS test above is able to fail: the density without the Jacobian (sigma^(M-D-1)) is rejected."
    M, n = 3, 5000
    sv = np.linalg.svd(np.random.default_rng(1).standard_normal((n, M, 2)), compute_uv=False)
    g = np.linspace(0, 10, 2001)
    S1, S2 = np.meshgrid(g, g, indexing='ij')
    ok = S1 > S2
    wrong = np.where(ok, np.exp(-(S1**2 + S2**2) / 2) * (S1 * S2) ** (M - 3) * (S1**2 - S2**2), 0)
    c1 = integrate.cumulative_trapezoid(integrate.trapezoid(wrong, g, axis=1), g, initial=0)
    assert stats.kstest(sv[:, 0], lambda t: np.interp(t, g, c1 / c1[-1])).pvalue < ALPHA


# ------------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize('M,D,exc,word', [(3, 4, ValueError, 'D'), (3, 0, ValueError, 'D'), (0, 1, ValueError, 'M'),
                                          (-2, 1, ValueError, 'M'), (3.0, 2, TypeError, 'M'), (3, 2.5, TypeError, 'D'),
                                          ('3', 2, TypeError, 'M'), (True, 1, TypeError, 'M')])
def test_bad_sizes(M, D, exc, word):
    with pytest.raises(exc, match=word):
        sample_stiefel(M, D)


def test_bad_input_messages():
    with pytest.raises(ValueError, match='M'): haar_orthogonal(0)
    with pytest.raises(TypeError, match='M'): haar_orthogonal(2.0)
    with pytest.raises(ValueError, match='size'): sample_stiefel(3, 2, size=-1)
    with pytest.raises(TypeError, match='size'): sample_stiefel(3, 2, size=1.5)
    with pytest.raises(TypeError, match='random_state'): sample_stiefel(3, 2, random_state='seed')
    with pytest.raises(ValueError, match='reflection'): sample_stiefel(3, 2, reflection='givens')
    with pytest.raises(ValueError, match='reflection'): householder_to_stiefel([[1.0, 2.0]], reflection='qr')
    with pytest.raises(ValueError, match='nonzero'): householder_to_stiefel([[0.0, 0.0, 0.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match='nonzero'): householder_to_stiefel([np.ones((2, 3)), np.array([[1.0, 1], [0, 0]])])
    with pytest.raises(ValueError, match='length'): householder_to_stiefel([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match='finite'): householder_to_stiefel([[1.0, np.nan]])
    with pytest.raises(ValueError, match='at least one'): householder_to_stiefel([])
    with pytest.raises(ValueError, match='nonzero'): householder_matrix([0.0, 0.0])
    with pytest.raises(ValueError, match='M'): singular_value_logpdf([3.0, 2.0, 1.0], 2)
    with pytest.raises(ValueError, match='finite'): singular_value_logpdf([np.inf, 1.0], 3)


@pytest.mark.parametrize('scale', [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_householder_to_stiefel_depends_on_directions_only(scale):
    # issue 20, item 8: norms of 1e-300 were refused as zero, at 1e300 U was not orthogonal (or NaN)
    vs = [np.array([3.0, 0.0, 4.0]), np.array([1.0, -2.0])]
    ref = householder_to_stiefel(vs)
    for reflection in ('mezzadri', 'swap'):
        U = householder_to_stiefel([v * scale for v in vs], reflection=reflection)
        np.testing.assert_allclose(U.T @ U, np.eye(2), atol=1e-14)
        if reflection == 'mezzadri': np.testing.assert_allclose(U, ref, atol=1e-14)


def test_singular_value_logpdf_far_in_the_tail_is_minus_inf_not_nan():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert singular_value_logpdf([1e200, 1.0], 3) == -np.inf
        assert np.isfinite(singular_value_logpdf([1e10, 1.0], 3))   # log(s1^2 - s2^2) without overflow
    assert sample_stiefel(5, 2, size=0).shape == (0, 5, 2)
