"""Reliability of the public functions beside `VBPCA` (issue 20): the Laplace evidence, the Stiefel samplers and the
density of ordered singular values, the seeded data generators, and the argument checks they share.

Each group draws random valid problems over scales 1e-150..1e150, offsets and every option, and checks: no error,
finite (or documented -inf) output, the documented shape, the input unmodified, and the answer unchanged by the data's
units where the model says so. A table of bad inputs per function expects an error naming the argument. Then
bad and degenerate input to the Laplace evidence (zero and tied eigenvalues), the Householder maps (any scale), the
MCMC diagnostics, the data helpers (downloads, IDX files, generators) and the widget panels: each gets a defined answer
or an error that names the argument.
`RELIABILITY_API_N` sets the number of random problems per group (default 60).
RJMCMC and its exact posterior have their own suite (tests/test_reliability_rjmcmc.py); Householder PPCA's NUTS runs
are costly and are checked in tests/test_householder_ppca.py.
"""
import gzip
import hashlib
import os
import struct
import warnings
from math import lgamma, log

import numpy as np
import pytest

from vbfa_lit.data import (fetch_file, make_bishop_example, make_gaussian_spectrum, make_low_rank, make_ppca, read_idx,
                           sample_covariance_eigenvalues)
from vbfa_lit.evidence import laplace_evidence
from vbfa_lit.householder_ppca import (bulk_ess, householder_ppca, ppca_log_likelihood, split_rhat,
                                       sufficient_statistics)
from vbfa_lit.stiefel import (haar_orthogonal, householder_matrix, householder_to_stiefel, sample_stiefel,
                              singular_value_logpdf)
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


# ---------------------------------------------------------------- bad and degenerate input: Laplace evidence, Householder maps, MCMC diagnostics, data helpers, widget panels

def _minka(lam, k, N):
    "Minka (2000) eqs. 30-31 written out with loops, for one k (k = 0: the isotropic Gaussian)."
    d = len(lam)
    v = sum(lam[k:]) / (d - k)
    if k == 0: return -N * d / 2 * log(v)
    pu = -k * log(2) + sum(lgamma((d - i + 1) / 2) - (d - i + 1) / 2 * log(np.pi) for i in range(1, k + 1))
    hat = list(lam[:k]) + [v] * (d - k)
    az = sum(log(N * (lam[i] - lam[j]) * (1 / hat[j] - 1 / hat[i])) for i in range(k) for j in range(i + 1, d))
    m = d * k - k * (k + 1) / 2
    return (pu - N / 2 * sum(log(x) for x in lam[:k]) - N * (d - k) / 2 * log(v) + (m + k) / 2 * log(2 * np.pi)
            - az / 2 - k / 2 * log(N))


# --- 1. a zero eigenvalue (constant, duplicated or collinear column) --------------------------------------------------

def _degenerate(kind, offset=0.0):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(200, 5)) @ rng.normal(size=(5, 5)) + offset
    extra = {'constant': np.full(200, 1.0 + offset), 'duplicated': Z[:, 0], 'collinear': Z[:, 0] + 2 * Z[:, 1]}[kind]
    return np.c_[Z, extra]


@pytest.mark.parametrize('kind', ['constant', 'duplicated', 'collinear'])
@pytest.mark.parametrize('offset', [0.0, 1e4])
def test_zero_eigenvalue_excludes_k_d_minus_1_with_a_warning(kind, offset):
    X = _degenerate(kind, offset)
    with pytest.warns(UserWarning, match=r'^data: X has 1 zero eigenvalue.*k = 5 .*undefined'):
        ev = laplace_evidence(X)
    assert ev.p[5] == 0 and ev.log_evidence[5] == -np.inf             # before: p[5] = 1.0, log-evidence +2735
    assert abs(ev.p.sum() - 1) < 1e-12 and np.all(np.isfinite(ev.log_evidence[:5]))
    # the other k: Minka's formula on the spectrum with the rounding residue of the zero eigenvalue set to 0
    lam, N = sample_covariance_eigenvalues(X, ddof=1)
    lam = np.r_[lam[:5], 0.0]
    np.testing.assert_allclose(ev.log_evidence[:5], [_minka(lam, k, N) for k in range(5)], rtol=1e-10)


def test_two_zero_eigenvalues_from_eigenvalues():
    with pytest.warns(UserWarning, match=r'^data: 2 eigenvalues are 0.*k = 2, 3 .*undefined'):
        ev = laplace_evidence([4.0, 1.0, 0.0, 0.0], 30)
    assert list(ev.p[2:]) == [0, 0] and np.all(np.isinf(ev.log_evidence[2:]))
    np.testing.assert_allclose(ev.log_evidence[:2], [_minka([4.0, 1.0, 0.0, 0.0], k, 30) for k in range(2)],
                               rtol=1e-12)


# --- 2. tied eigenvalues ----------------------------------------------------------------------------------------------

def test_ties_among_discarded_eigenvalues_leave_the_other_k_defined():
    from sklearn.decomposition._pca import _assess_dimension
    lam, N = np.array([10.0, 8.0, 6.0, 1.0, 1.0, 0.9]), 100
    with pytest.warns(UserWarning, match=r'^data: eigenvalues 4 and 5 are equal.*k = 4, 5 .*undefined'):
        ev = laplace_evidence(lam, N)                                  # before: ValueError for any tie
    assert np.all(ev.log_evidence[4:] == -np.inf) and np.all(ev.p[4:] == 0)
    expected = [_minka(lam, 0, N)] + [_assess_dimension(lam, k, N) for k in range(1, 4)]
    np.testing.assert_allclose(ev.log_evidence[:4], expected, rtol=1e-12)
    np.testing.assert_allclose(ev.log_evidence[:4], [_minka(lam, k, N) for k in range(4)], rtol=1e-12)
    assert abs(ev.p.sum() - 1) < 1e-12 and ev.log_evidence.argmax() == 3


@pytest.mark.parametrize('spectrum, defined', [([3.0, 1, 1, 1], 2), ([5.0, 5, 2, 1], 1), ([4.0, 2, 1, 1], 3),
                                               ([6.0, 4, 4, 4, 1], 2)])
def test_only_k_whose_kept_eigenvalues_are_tied_are_undefined(spectrum, defined):
    # a tie inside the kept eigenvalues (k = 2 for [5, 5, 2, 1]) is as flat as a split one: excluded too
    with pytest.warns(UserWarning, match='^data: eigenvalues'):
        ev = laplace_evidence(spectrum, 50)
    assert np.all(np.isfinite(ev.log_evidence[:defined])) and np.all(ev.log_evidence[defined:] == -np.inf)
    np.testing.assert_allclose(ev.log_evidence[:defined], [_minka(spectrum, k, 50) for k in range(defined)],
                               rtol=1e-12)
    assert np.all(ev.p[defined:] == 0) and abs(ev.p.sum() - 1) < 1e-12


@pytest.mark.parametrize('scale', [2.0 ** -900, 1e-150, 1.0, 1e150, 2.0 ** 900])
def test_tie_tolerance_is_relative(scale):
    eps = np.finfo(float).eps
    spectrum = np.array([3.0, 1.0 + 2 * eps, 1.0, 0.5]) * scale           # tied up to rounding
    with pytest.warns(UserWarning, match='eigenvalues 2 and 3 are equal'):
        ev = laplace_evidence(spectrum, 40)
    assert np.all(ev.p[2:] == 0)
    with pytest.warns(UserWarning, match='eigenvalues 2 and 3 are equal'):
        base = laplace_evidence(np.array([3.0, 1.0 + 2 * eps, 1.0, 0.5]), 40)
    np.testing.assert_allclose(ev.p, base.p, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ev = laplace_evidence(np.array([3.0, 1.0 + 1e-9, 1.0, 0.5]) * scale, 40)    # distinct: every k defined
    assert np.all(np.isfinite(ev.log_evidence))


# --- 3. masked arrays -------------------------------------------------------------------------------------------------

def _masked():
    X = np.random.default_rng(0).normal(size=(30, 4))
    Xm = np.ma.masked_array(X.copy(), mask=np.zeros(X.shape, bool))
    Xm.mask[3, 1] = True
    Xm.data[3, 1] = 1e6                                                 # the hidden value must not be used
    return X, Xm


@pytest.mark.parametrize('call, name', [
    (lambda X: laplace_evidence(X), 'data'),
    (lambda X: sample_covariance_eigenvalues(X), 'X'),
    (lambda X: sufficient_statistics(X), 'X'),
    (lambda X: ppca_log_likelihood(X, np.ones((4, 1)), 1.0, np.zeros(4)), 'X'),
    (lambda X: householder_ppca(X, 1, num_warmup=1, num_samples=1, num_chains=1), 'X'),
    (lambda X: laplace_evidence(np.ma.masked_array([3.0, 2.0, 1.0], mask=[0, 1, 0]), 10), 'data'),
])
def test_masked_entries_are_refused_by_name(call, name):
    X, Xm = _masked()
    with pytest.raises(ValueError, match=rf'^{name}: a masked array with 1 masked entr.*VBPCA'):
        call(Xm)


def test_masked_array_without_masked_entries_is_its_data():
    X, Xm = _masked()
    Xm.mask[3, 1] = False
    Xm.data[3, 1] = X[3, 1]
    np.testing.assert_array_equal(sample_covariance_eigenvalues(Xm)[0], sample_covariance_eigenvalues(X)[0])
    np.testing.assert_array_equal(sufficient_statistics(Xm).cov, sufficient_statistics(X).cov)
    np.testing.assert_array_equal(laplace_evidence(Xm).p, laplace_evidence(X).p)
    Xm.mask[3, 1] = True
    with pytest.raises(ValueError, match='masked'):
        sample_covariance_eigenvalues(Xm)


# --- 4. Householder reflections at any scale; complex input -----------------------------------------------------------

@pytest.mark.parametrize('v', [[1e200, 1e200], [3e154, 1e154, 1.0], [1e-170, 1e-170], [1e-160, 3e-161],
                               [-1e300, 1e300, 5e299], [5e-324, 0.0], [0.0, -1e308, 1e308]])
@pytest.mark.parametrize('reflection', ['mezzadri', 'swap'])
def test_householder_matrix_is_exact_at_any_scale(v, reflection):
    v = np.array(v)
    with warnings.catch_warnings():
        warnings.simplefilter('error')                                  # no overflow or invalid-value warning
        H = householder_matrix(v, reflection=reflection)
    n = v.size
    assert np.abs(H @ H.T - np.eye(n)).max() < 4 * np.finfo(float).eps * n
    u = v / np.max(np.abs(v)); u = u / np.linalg.norm(u)
    np.testing.assert_allclose(H[:, 0], u, atol=1e-15)
    U = householder_to_stiefel([v, np.ones(n - 1)] if n > 1 else [v], reflection=reflection)
    np.testing.assert_allclose(U[:, 0], H[:, 0], atol=1e-15)


@pytest.mark.parametrize('k', [-1000, -600, 600, 1000])
def test_householder_matrix_scaled_by_a_power_of_two_is_unchanged(k):
    v = np.random.default_rng(2).normal(size=5)
    for reflection in ('mezzadri', 'swap'):
        np.testing.assert_array_equal(householder_matrix(v * 2.0 ** k, reflection=reflection),
                                      householder_matrix(v, reflection=reflection))


@pytest.mark.parametrize('call, name', [
    (lambda: householder_matrix([1 + 1j, 2.0]), 'v'),
    (lambda: householder_matrix(np.array([1.0, 2.0], dtype=complex)), 'v'),
    (lambda: householder_to_stiefel([[1 + 1j, 2.0, 3.0], [1.0, 2.0]]), r'vectors\[0\]'),
    (lambda: householder_to_stiefel([np.ones(3), np.ones(2, dtype=complex)]), r'vectors\[1\]'),
])
def test_complex_input_is_a_type_error_naming_the_argument(call, name):
    with pytest.raises(TypeError, match=rf'^{name}: .*complex'):
        call()


# --- 5. MCMC diagnostics ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('f', [split_rhat, bulk_ess])
@pytest.mark.parametrize('x, error', [(np.zeros(10), ValueError), (np.zeros((0, 10)), ValueError),
                                      (np.zeros((2, 0)), ValueError), ('ab', TypeError),
                                      (np.ones((2, 3)) * 1j, TypeError),
                                      (np.r_[np.zeros((1, 8)), np.full((1, 8), np.nan)], ValueError)])
def test_diagnostics_bad_shapes_name_x(f, x, error):
    if f is bulk_ess: pytest.importorskip('numpyro')
    with pytest.raises(error, match='^x: '):
        f(x)


def test_diagnostics_of_constant_draws():
    pytest.importorskip('numpyro')
    x = np.zeros((2, 10, 3))
    x[0, :, 1], x[1, :, 1] = 0.0, 1.0                                   # entry 1: each chain stuck at its own value
    x[:, :, 2] = np.random.default_rng(0).normal(size=(2, 10))          # entry 2: moves
    with warnings.catch_warnings():
        warnings.simplefilter('error')                                  # no RuntimeWarning from 0 / 0
        r, ess = split_rhat(x), bulk_ess(x)
    assert np.isnan(r[0]) and r[1] == np.inf and np.isfinite(r[2])      # constant: undefined, as ArviZ and Stan
    assert np.isnan(ess[0]) and np.isfinite(ess[2])
    assert np.isnan(split_rhat(np.full((4, 100), 3.5))) and np.isnan(bulk_ess(np.full((4, 100), 3.5)))


# --- 6. data helpers --------------------------------------------------------------------------------------------------

def _source(tmp_path):
    src = tmp_path / 'src.txt'
    src.write_bytes(b'hello')
    return src.as_uri(), 'sha256:' + hashlib.sha256(b'hello').hexdigest()


@pytest.mark.parametrize('download', [True, False])
def test_fetch_file_data_home_or_subdir_that_is_a_file(tmp_path, download):
    url, sha = _source(tmp_path)
    (tmp_path / 'afile').write_text('x')
    with pytest.raises(ValueError, match='^data_home: .*is a file'):
        fetch_file('src.txt', url, sha, data_home=tmp_path / 'afile', download=download)
    (tmp_path / 'home').mkdir(); (tmp_path / 'home' / 'sub').write_text('x')
    with pytest.raises(ValueError, match='^subdir: .*is a file'):
        fetch_file('src.txt', url, sha, data_home=tmp_path / 'home', subdir='sub', download=download)


@pytest.mark.parametrize('download', [True, False])
def test_fetch_file_target_that_is_a_directory(tmp_path, download):
    url, sha = _source(tmp_path)
    (tmp_path / 'home' / 'sub' / 'src.txt').mkdir(parents=True)
    with pytest.raises(ValueError, match='^filename: .*is a directory'):
        fetch_file('src.txt', url, sha, data_home=tmp_path / 'home', subdir='sub', download=download)


@pytest.mark.parametrize('urls', [None, b'file:///tmp/x', 3, [b'file:///tmp/x']])
def test_fetch_file_urls_of_the_wrong_type(tmp_path, urls):
    _, sha = _source(tmp_path)
    with pytest.raises(TypeError, match='^urls: expected a URL string or a sequence of them'):
        fetch_file('src.txt', urls, sha, data_home=tmp_path)


def _idx(path, header, body=b''):
    path.write_bytes(bytes(header) + body)
    return path


def test_read_idx_huge_declared_shape(tmp_path):
    p = _idx(tmp_path / 'big.idx', [0, 0, 8, 4] + list(struct.pack('>4I', *[2 ** 31] * 4)))
    with pytest.raises(ValueError, match=r'big\.idx: the header says shape \(2147483648, 2147483648, '
                                         rf'2147483648, 2147483648\) \({2 ** 124} bytes\), but the file holds 0 bytes'):
        read_idx(p)


def test_read_idx_truncated_header(tmp_path):
    p = _idx(tmp_path / 'short.idx', [0, 0, 8, 3] + list(struct.pack('>I', 2)))
    with pytest.raises(ValueError, match=r'short\.idx: truncated header: rank 3 needs 12 bytes of sizes, '
                                         r'the file has 4'):
        read_idx(p)


@pytest.mark.parametrize('content, what', [(b'not gzip at all', 'not a gzip file'),
                                           (gzip.compress(bytes([0, 0, 8, 1, 0, 0, 0, 3]) + b'abc', mtime=0)[:-6],
                                            'damaged or truncated gzip file')], ids=['not-gzip', 'truncated-gzip'])
def test_read_idx_bad_gzip(tmp_path, content, what):
    p = tmp_path / 'bad.idx.gz'
    p.write_bytes(content)
    with pytest.raises(ValueError, match=rf'bad\.idx\.gz: {what}'):
        read_idx(p)


def test_read_idx_good_file_still_reads(tmp_path):
    p = tmp_path / 'ok.idx.gz'
    p.write_bytes(gzip.compress(bytes([0, 0, 8, 2]) + struct.pack('>2I', 2, 3) + bytes(range(6))))
    np.testing.assert_array_equal(read_idx(p), np.arange(6, dtype=np.uint8).reshape(2, 3))
    with pytest.raises(ValueError, match=r'ok2\.idx: the header says shape \(2, 4\) \(8 bytes\), but the file '
                                         r'holds 6 bytes'):
        read_idx(_idx(tmp_path / 'ok2.idx', [0, 0, 8, 2] + list(struct.pack('>2I', 2, 4)), bytes(range(6))))


@pytest.mark.parametrize('stds', [(1e300, 1.0), (1e160, 1.0), (1e-200, 1e-170), (1.0, 1e-170)])
def test_make_bishop_example_refuses_stds_whose_squares_overflow_or_underflow(stds):
    with pytest.raises(ValueError, match=r'^stds: .*squares'):
        make_bishop_example(stds=stds, random_state=0)
    d = make_bishop_example(stds=(1e100, 1e-100), random_state=0)
    assert np.all(np.isfinite(d.X)) and np.all(np.isfinite(d.covariance)) and d.n_components == 1


def test_make_low_rank_more_components_than_features():
    with pytest.raises(ValueError, match=r'^n_components: expected an integer <= n_features = 3, got 5'):
        make_low_rank(10, 3, 5)
    assert make_low_rank(10, 3, 3, random_state=0).W.shape == (3, 3)


# --- 7. widgets -------------------------------------------------------------------------------------------------------

def test_widget_arguments_are_checked_by_name():
    pytest.importorskip('ipywidgets')
    from vbfa_lit.widgets import (ARDPruningPanel, HouseholderPanel, RJMCMCPanel, VBPCAConvergencePanel, figure_png,
                                  rjmcmc_data, static_slider)
    with pytest.raises(TypeError, match='^N: expected an integer'):
        rjmcmc_data(N=None)
    with pytest.raises(TypeError, match='^N: expected an integer'):
        rjmcmc_data(N=100.5)
    with pytest.raises(TypeError, match='^seed: expected an integer'):
        rjmcmc_data(seed='1')
    with pytest.raises(ValueError, match='^dataset: expected one of'):
        rjmcmc_data(dataset=['Set 1'])
    for cls in (VBPCAConvergencePanel, ARDPruningPanel, RJMCMCPanel, HouseholderPanel):
        with pytest.raises(ValueError, match='^dpi: expected an integer >= 1'):
            cls(dpi=0)
        with pytest.raises(TypeError, match='^dpi: expected an integer'):
            cls(dpi=80.0)
    with pytest.raises(ValueError, match='^dpi: expected an integer >= 1'):
        static_slider(HouseholderPanel, 'n', [50], dpi=0)
    with pytest.raises(ValueError, match='^font_size: expected a finite number > 0'):
        static_slider(HouseholderPanel, 'n', [50], font_size=0)
    from matplotlib.figure import Figure
    with pytest.raises(ValueError, match='^dpi: expected an integer >= 1'):
        figure_png(Figure(), dpi=-3)
