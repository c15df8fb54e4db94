"""The data module (`vbfa_lit.data`): generators reproduce the lessons' data and their stated spectra; loaders
download (through pooch) from a local HTTP server on 127.0.0.1 serving files and fake archives built here, verify
checksums, refuse corrupted or cut-off downloads, answer from the cache without a request, and fail clearly when
offline."""
import gzip
import hashlib
import http.server
import io
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

import vbfa_lit.data as data
from vbfa_lit.data import (ChecksumError, DownloadError, check_random_state, fetch_file, get_data_home,
                           load_mnist, load_mnist_digit, load_movielens_100k, make_bishop_example,
                           make_gaussian_spectrum, make_householder_example, make_low_rank, make_luttinen_ilin,
                           make_minka_spectrum, make_ppca, make_zhang_set, read_idx)

GENERATORS = {
    'gaussian_spectrum': lambda rs: make_gaussian_spectrum([4.0, 2.0, 1.0], 50, missing=0.2, random_state=rs),
    'luttinen_ilin': lambda rs: make_luttinen_ilin('2', random_state=rs),
    'bishop': lambda rs: make_bishop_example(random_state=rs),
    'zhang': lambda rs: make_zhang_set(2, random_state=rs),
    'minka': lambda rs: make_minka_spectrum(3, random_state=rs),
    'householder': lambda rs: make_householder_example(random_state=rs),
    'low_rank': lambda rs: make_low_rank(30, 8, 2, offset='normal', missing=0.2, random_state=rs),
    'ppca': lambda rs: make_ppca(30, 8, [2.0, 1.0], mean='normal', missing=0.2, random_state=rs),
}


# ---------------------------------------------------------------- generators: seeds

@pytest.mark.parametrize('name', GENERATORS)
def test_generators_are_reproducible_and_seeded(name):
    from sklearn.utils import Bunch       # here, not at the top: the spawned processes below import this module
    make = GENERATORS[name]
    a, b, c = make(3), make(3), make(4)
    assert isinstance(a, Bunch) and a.X.ndim == 2
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(np.nan_to_num(a.X), np.nan_to_num(c.X))
    np.testing.assert_array_equal(make(np.random.default_rng(3)).X, a.X)        # a Generator = its seed
    r1, r2 = make(np.random.RandomState(5)), make(np.random.RandomState(5))      # legacy: a seed is drawn
    np.testing.assert_array_equal(r1.X, r2.X)


def test_a_generator_passed_in_is_advanced():
    g = np.random.default_rng(0)
    make_low_rank(10, 4, 1, random_state=g)
    h = np.random.default_rng(0)
    h.normal(size=(4, 1)); h.normal(size=(1, 10)); h.normal(size=(4, 10))
    assert g.random() == h.random()


@pytest.mark.parametrize('bad, error', [(-1, ValueError), (1.5, TypeError), ('seed', TypeError), (True, TypeError)])
def test_bad_random_state(bad, error):
    # one rule for the package (vbfa_lit.validation): the wrong kind of value is a TypeError, a negative seed a
    # ValueError, both naming the argument
    with pytest.raises(error, match='^random_state'): check_random_state(bad)


# ---------------------------------------------------------------- generators: the lessons' data, exactly

def test_luttinen_ilin_equals_paper_dataset():
    from vbfa_lit.convergence import paper_dataset
    for name in ('1', '2', '3', '200'):
        Y_train, Y_full, test = paper_dataset(name)
        d = make_luttinen_ilin(name, random_state=int(name))
        np.testing.assert_array_equal(d.X_full.T, Y_full)
        np.testing.assert_array_equal(d.test_mask.T, test)
        np.testing.assert_array_equal(d.X.T, Y_train)


def test_bishop_equals_the_ard_lesson():
    rng = np.random.default_rng(1999)                    # nbs/04_ard.ipynb, "Bishop's example"
    d, N = 10, 100
    basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
    T = (rng.normal(size=(N, d)) * np.array([5, 4, 3, 2] + [1] * 6)) @ basis.T
    np.testing.assert_array_equal(make_bishop_example(random_state=1999).X, T)


def test_low_rank_equals_the_vbpca_lesson_and_leaves_the_generator_where_it_did():
    rng = np.random.default_rng(0)                       # nbs/03_vbpca.ipynb, the toy problem
    M, N, D_true = 12, 80, 3
    Y_toy = rng.normal(size=(M, D_true)) @ rng.normal(size=(D_true, N)) * 1.5 + rng.normal(size=(M, 1)) + 0.3 * rng.normal(size=(M, N))
    held_out = rng.random((M, N)) < 0.2
    g = np.random.default_rng(0)
    d = make_low_rank(80, 12, 3, scale=1.5, offset='normal', noise_std=0.3, missing=0.2, random_state=g)
    np.testing.assert_array_equal(d.X_full.T, Y_toy)
    np.testing.assert_array_equal(d.test_mask.T, held_out)
    assert g.random() == rng.random()


def test_low_rank_equals_the_ard_and_transformations_lessons():
    rng = np.random.default_rng(3)                       # nbs/04_ard.ipynb, the toy problem (rng continued there)
    Y = rng.normal(size=(15, 2)) @ rng.normal(size=(2, 60)) + 0.5 * rng.normal(size=(15, 60))
    Y[rng.random(Y.shape) < 0.2] = np.nan
    np.testing.assert_array_equal(make_low_rank(60, 15, 2, noise_std=0.5, missing=0.2, random_state=3).X.T, Y)
    rng = np.random.default_rng(5)                       # nbs/05_transformations.ipynb, Y_mid
    Y = rng.normal(size=(15, 2)) @ rng.normal(size=(2, 40)) + 2 + 0.3 * rng.normal(size=(15, 40))
    Y[rng.random(Y.shape) < 0.25] = np.nan
    np.testing.assert_array_equal(make_low_rank(40, 15, 2, offset=2.0, noise_std=0.3, missing=0.25, random_state=5).X.T, Y)


def test_ppca_equals_the_estimator_lesson_to_rounding():
    rng = np.random.default_rng(6)                       # nbs/06_estimator.ipynb, the worked example
    N, M, sigma = 100, 10, 0.3
    W_true = np.linalg.qr(rng.normal(size=(M, 3)))[0] * np.array([3.0, 2.0, 1.0]) * np.sqrt(M) / 2
    mu_true = rng.normal(size=M)
    X_full = rng.normal(size=(N, 3)) @ W_true.T + mu_true + sigma * rng.normal(size=(N, M))
    held_out = rng.random(X_full.shape) < 0.2
    d = make_ppca(100, 10, np.array([3.0, 2.0, 1.0]) * np.sqrt(10) / 2, noise_std=0.3, mean='normal', missing=0.2, random_state=6)
    np.testing.assert_allclose(d.X_full, X_full, rtol=0, atol=1e-13)   # same draws; the scales are multiplied in another order
    np.testing.assert_array_equal(d.test_mask, held_out)
    np.testing.assert_allclose(d.W, W_true, rtol=0, atol=1e-14)


# ---------------------------------------------------------------- generators: the stated spectra

def _z_eigen(X, components, ev):
    "Sample variance along each true axis minus the true one, in standard errors ev * sqrt(2 / N) (known mean)."
    S = np.einsum('ni,nj->ij', X, X) / len(X)
    var = np.einsum('ik,ij,jk->k', components, S, components)
    return (var - ev) / (ev * np.sqrt(2 / len(X)))


def test_stated_spectra():
    for name, (ev, N) in data.LUTTINEN_ILIN_SPECTRA.items():
        d = make_luttinen_ilin(name, random_state=0)
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(d.covariance)), np.sort(ev), rtol=1e-10)
        assert d.X.shape == (N, len(ev)) and abs(np.isnan(d.X).mean() - 0.2) < 1 / d.X.size
    np.testing.assert_array_equal(data.LUTTINEN_ILIN_SPECTRA['3'][0], np.arange(1, 51) ** 2)
    np.testing.assert_array_equal(data.LUTTINEN_ILIN_SPECTRA['200'][0][:20], np.arange(21, 1, -1) ** 2)
    assert data.LUTTINEN_ILIN_SPECTRA['200'][0].size == 200
    b = make_bishop_example(random_state=0)
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(b.covariance))[::-1], [25, 16, 9, 4] + [1] * 6, rtol=1e-12)
    assert b.n_components == 4 and b.noise_variance == 1.0
    for k, (var, N) in data.ZHANG_SETS.items():
        z = make_zhang_set(k, random_state=0)
        assert z.X.shape == (N, len(var)) and z.n_components == (4 if k == 1 else 5)
        np.testing.assert_array_equal(np.diag(z.covariance), var)
    assert [len(v) for v, _ in data.MINKA_SPECTRA.values()] == [10, 15, 100]
    assert [n for _, n in data.MINKA_SPECTRA.values()] == [100, 10, 60]


@pytest.mark.parametrize('make', [
    lambda: make_gaussian_spectrum([9.0, 4.0, 1.0, 1.0, 0.25], 20000, random_mean=False, random_state=1),
    lambda: make_zhang_set(4, random_state=2),
    lambda: make_zhang_set(1, n_samples=20000, random_state=3),
    lambda: make_minka_spectrum(3, n_samples=4000, random_state=4),
    lambda: make_bishop_example(n_samples=20000, random_state=5),
    lambda: make_luttinen_ilin('1', random_state=6),
], ids=['custom', 'zhang4', 'zhang1', 'minka3', 'bishop', 'luttinen1'])
def test_sample_variances_along_the_true_axes(make):
    "Each standardised deviation is about N(0, 1); over up to 100 axes, |z| < 4.5 fails with probability < 1e-3."
    d = make()
    ev = np.diag(d.components.T @ d.covariance @ d.components) if 'components' in d else np.diag(d.covariance)
    U = d.components if 'components' in d else np.eye(len(ev))
    X = d.X_full if 'X_full' in d else d.X
    X = X - d.get('mean', 0)
    assert np.abs(_z_eigen(X, U, ev)).max() < 4.5


def test_luttinen_ilin_means_are_standard_normal_draws():
    d = make_luttinen_ilin('200', random_state=0)          # 200 means ~ N(0, 1); the sample means estimate them
    z = (d.X_full.mean(0) - d.mean) / np.sqrt(np.diag(d.covariance) / len(d.X_full))
    assert np.abs(z).max() < 4.5 and abs(d.mean.std() - 1) < 4 * np.sqrt(1 / 400)


def test_householder_example():
    h = make_householder_example(random_state=0)
    assert h.X.shape == (150, 5) and h.W.shape == (5, 2) and h.latent.shape == (150, 2)
    np.testing.assert_allclose(h.U.T @ h.U, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(h.W, compute_uv=False), [3.0, 1.0], rtol=1e-12)
    resid = h.X - h.latent @ h.W.T                          # the noise: variance 0.01, SE 0.01 sqrt(2 / 750)
    assert abs(resid.var() - 0.01) < 4.5 * 0.01 * np.sqrt(2 / resid.size)


def test_householder_U_is_uniform_on_the_stiefel_manifold():
    "First column of a uniform frame is uniform on the sphere: E[u_i^2] = 1/D and E[u_1] = 0 (no sign bias)."
    rng = np.random.default_rng(0)
    U = np.array([make_householder_example(n_samples=1, random_state=rng).U[:, 0] for _ in range(4000)])
    se_sq = np.sqrt((3 / (5 * 7) - 1 / 25) / 4000)         # Var(u_i^2) = 3/(D(D+2)) - 1/D^2 on the sphere
    assert np.abs((U ** 2).mean(0) - 1 / 5).max() < 4.5 * se_sq
    assert np.abs(U.mean(0)).max() < 4.5 * np.sqrt(1 / 5 / 4000)


@pytest.mark.parametrize('call, arg', [
    (lambda: make_gaussian_spectrum([1.0, -1.0], 10), 'eigenvalues'),
    (lambda: make_gaussian_spectrum([[1.0]], 10), 'eigenvalues'),
    (lambda: make_gaussian_spectrum([1.0, np.inf], 10), 'eigenvalues'),
    (lambda: make_gaussian_spectrum([1.0], 0), 'n_samples'),
    (lambda: make_gaussian_spectrum([1.0], 10, missing=1.0), 'missing'),
    (lambda: make_luttinen_ilin('4'), 'dataset'),
    (lambda: make_bishop_example(stds=[]), 'stds'),
    (lambda: make_bishop_example(n_samples=2.5), 'n_samples'),
    (lambda: make_zhang_set(5), 'set_number'),
    (lambda: make_zhang_set(1, n_samples=0), 'n_samples'),
    (lambda: make_minka_spectrum(0), 'experiment'),
    (lambda: make_householder_example(sigma=(3.0, 0.0)), 'sigma'),
    (lambda: make_householder_example(n_features=1), 'sigma'),
    (lambda: make_householder_example(noise_variance=-1), 'noise_variance'),
    (lambda: make_low_rank(10, 5, 0), 'n_components'),
    (lambda: make_low_rank(10, 5, 1, offset='uniform'), 'offset'),
    (lambda: make_low_rank(10, 5, 1, noise_std=np.nan), 'noise_std'),
    (lambda: make_ppca(10, 2, [1.0, 1.0, 1.0]), 'scales'),
    (lambda: make_ppca(10, 3, [1.0], mean=[1.0, 2.0]), 'mean'),
    (lambda: make_ppca(10, 3, [1.0], mean='zero'), 'mean'),
])
def test_bad_arguments_name_the_argument(call, arg):
    with pytest.raises((TypeError, ValueError), match=arg): call()     # TypeError for a float count (2.5)


# ---------------------------------------------------------------- a local HTTP server

class _Server:
    "Serves `files` (path -> bytes) on 127.0.0.1 and counts the requests per path."
    def __init__(self):
        self.files, self.requests, self.truncate = {}, {}, set()
        outer = self
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests[self.path] = outer.requests.get(self.path, 0) + 1
                body = outer.files.get(self.path)
                if body is None:
                    self.send_error(404); return
                self.send_response(200)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body[:len(body) // 2] if self.path in outer.truncate else body)
            def log_message(self, *args): pass
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.httpd.server_address[1]}'
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
    def close(self):
        self.httpd.shutdown(); self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def _idx(arr):
    code = {np.uint8: 8}[arr.dtype.type]
    raw = bytes([0, 0, code, arr.ndim]) + b''.join(int(n).to_bytes(4, 'big') for n in arr.shape) + arr.tobytes()
    return gzip.compress(raw, mtime=0)


def _sha(b): return 'sha256:' + hashlib.sha256(b).hexdigest()


@pytest.fixture
def fake_mnist(server, monkeypatch):
    "A tiny MNIST (24 train and 10 test images, labels cycling 0-9) on the server, its checksums patched in."
    rng = np.random.default_rng(0)
    files = {}
    for prefix, n in (('train', 24), ('t10k', 10)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        files[f'{prefix}-images-idx3-ubyte.gz'] = (_idx(images), images)
        files[f'{prefix}-labels-idx1-ubyte.gz'] = (_idx(labels), labels)
    for name, (blob, _) in files.items(): server.files[f'/mnist/{name}'] = blob
    monkeypatch.setattr(data, 'MNIST_FILES', {name: _sha(blob) for name, (blob, _) in files.items()})
    return {name: arr for name, (_, arr) in files.items()}


def _ml100k(lines, with_items=True):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w') as z:
        z.writestr('ml-100k/u.data', ''.join(f'{u}\t{i}\t{r}\t{t}\n' for u, i, r, t in lines))
        if with_items: z.writestr('ml-100k/u.item', 'x|Toy Story (1995)|...\n2|GoldenEye (1995)|\n3|Four Rooms (1995)|\n')
    return buf.getvalue()


RATINGS = [(1, 1, 5, 874965758), (1, 3, 3, 876893171), (2, 2, 4, 888550871), (3, 3, 1, 878542960)]


@pytest.fixture
def fake_movielens(server, monkeypatch):
    blob = _ml100k(RATINGS)
    server.files['/ml/ml-100k.zip'] = blob
    monkeypatch.setattr(data, 'MOVIELENS_100K_SHA256', _sha(blob))
    return blob


# ---------------------------------------------------------------- loaders

def test_mnist_download_then_cache_hit(server, fake_mnist, tmp_path):
    m = load_mnist(data_home=tmp_path, mirrors=[server.url + '/mnist/'])
    np.testing.assert_array_equal(m.images, fake_mnist['train-images-idx3-ubyte.gz'])
    np.testing.assert_array_equal(m.target, fake_mnist['train-labels-idx1-ubyte.gz'])
    assert sorted(server.requests.values()) == [1, 1]
    again = load_mnist(data_home=tmp_path, mirrors=[server.url + '/mnist/'])          # from the cache
    np.testing.assert_array_equal(again.images, m.images)
    assert sorted(server.requests.values()) == [1, 1]
    t = load_mnist('test', data_home=tmp_path, mirrors=[server.url + '/mnist/'])
    assert t.images.shape == (10, 28, 28)
    assert sorted(p.name for p in (tmp_path / 'mnist').iterdir()) == sorted(fake_mnist)   # no temporary files left


def test_mnist_digit(server, fake_mnist, tmp_path):
    mirrors = [server.url + '/mnist/']
    d = load_mnist_digit(5, n=2, data_home=tmp_path, mirrors=mirrors)
    np.testing.assert_array_equal(d.index, [5, 15])                                 # the first two 5s
    np.testing.assert_array_equal(d.X, fake_mnist['train-images-idx3-ubyte.gz'][[5, 15]].reshape(2, -1) / 255)
    assert d.X.shape == (2, 784) and 0 <= d.X.min() and d.X.max() <= 1
    s1 = load_mnist_digit(5, n=2, shuffle=True, random_state=1, data_home=tmp_path, mirrors=mirrors)
    s2 = load_mnist_digit(5, n=2, shuffle=True, random_state=1, data_home=tmp_path, mirrors=mirrors)
    np.testing.assert_array_equal(s1.index, s2.index)
    assert set(s1.index) <= {5, 15}
    with pytest.raises(ValueError, match='n'): load_mnist_digit(5, n=3, data_home=tmp_path, mirrors=mirrors)
    with pytest.raises(ValueError, match='digit'): load_mnist_digit(10, data_home=tmp_path, mirrors=mirrors)
    with pytest.raises(ValueError, match='subset'): load_mnist('validation', data_home=tmp_path, mirrors=mirrors)


def test_mnist_falls_back_to_the_next_mirror(server, fake_mnist, tmp_path):
    m = load_mnist(data_home=tmp_path, mirrors=[server.url + '/gone/', server.url + '/mnist/'])
    assert m.images.shape == (24, 28, 28)
    assert server.requests['/gone/train-images-idx3-ubyte.gz'] == 1


def test_corrupted_download_is_refused_and_leaves_nothing(server, fake_mnist, tmp_path):
    good = server.files['/mnist/train-images-idx3-ubyte.gz']
    server.files['/mnist/train-images-idx3-ubyte.gz'] = good[:-1] + bytes([good[-1] ^ 1])   # one bit flipped
    with pytest.raises(ChecksumError, match='checksum'):
        load_mnist(data_home=tmp_path, mirrors=[server.url + '/mnist/'])
    assert not any(p.name.startswith('train-images') or p.suffix == '.part' for p in (tmp_path / 'mnist').iterdir())


def test_cut_off_download_leaves_nothing(server, fake_movielens, tmp_path):
    server.truncate.add('/ml/ml-100k.zip')
    with pytest.raises(DownloadError, match='cut off') as e:
        load_movielens_100k(data_home=tmp_path, urls=[server.url + '/ml/ml-100k.zip'])
    assert not isinstance(e.value, ChecksumError)                                     # seen as cut off, not as corrupt
    assert list((tmp_path / 'movielens').iterdir()) == []


def test_corrupt_cached_copy_is_replaced(server, fake_movielens, tmp_path):
    url = [server.url + '/ml/ml-100k.zip']
    (tmp_path / 'movielens').mkdir()
    (tmp_path / 'movielens' / 'ml-100k.zip').write_bytes(b'not a zip')
    with pytest.raises(ChecksumError, match='deleted'):
        load_movielens_100k(data_home=tmp_path, urls=url, download=False)
    assert not (tmp_path / 'movielens' / 'ml-100k.zip').exists()
    (tmp_path / 'movielens' / 'ml-100k.zip').write_bytes(b'not a zip')
    load_movielens_100k(data_home=tmp_path, urls=url)
    assert server.requests['/ml/ml-100k.zip'] == 1
    assert (tmp_path / 'movielens' / 'ml-100k.zip').read_bytes() == fake_movielens


def test_movielens(server, fake_movielens, tmp_path):
    url = [server.url + '/ml/ml-100k.zip']
    ml = load_movielens_100k(data_home=tmp_path, urls=url)
    assert ml.ratings.shape == (3, 3)
    expected = np.full((3, 3), np.nan)
    for u, i, r, _ in RATINGS: expected[u - 1, i - 1] = r
    np.testing.assert_array_equal(ml.ratings, expected)
    np.testing.assert_array_equal(np.c_[ml.user_id, ml.item_id, ml.rating, ml.timestamp], RATINGS)
    assert ml.item_titles[1] == 'GoldenEye (1995)'
    load_movielens_100k(data_home=tmp_path, urls=url)
    assert server.requests['/ml/ml-100k.zip'] == 1                                  # cache hit: no request


def test_movielens_refuses_a_malformed_archive(server, monkeypatch, tmp_path):
    for name, blob, msg in (('dup', _ml100k(RATINGS + [(1, 1, 2, 0)]), 'more than once'),
                            ('text', _ml100k([(1, 'one', 5, 0)]), 'tab-separated')):
        server.files[f'/{name}/ml-100k.zip'] = blob
        monkeypatch.setattr(data, 'MOVIELENS_100K_SHA256', _sha(blob))
        with pytest.raises(ValueError, match=msg):
            load_movielens_100k(data_home=tmp_path / name, urls=[server.url + f'/{name}/ml-100k.zip'])


def test_offline_without_a_cache_is_a_clear_error(tmp_path, fake_mnist):
    dead = _Server(); url = dead.url; dead.close()                                   # nothing listens there now
    with pytest.raises(DownloadError, match='no cached copy') as e:
        fetch_file('f.bin', url + '/f.bin', 'sha256:' + '0' * 64, data_home=tmp_path, timeout=5)
    assert 'VBFA_LIT_DATA' in str(e.value) and url in str(e.value)
    with pytest.raises(DownloadError, match='no cached copy'):
        load_mnist(data_home=tmp_path, mirrors=[url + '/mnist/'])
    with pytest.raises(FileNotFoundError, match='download=False'):
        load_mnist(data_home=tmp_path, download=False)


def test_fetch_file_downloads_once_then_answers_from_the_cache(server, tmp_path):
    server.files['/f.txt'] = b'spectrum'
    first = fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum'), subdir='sub', data_home=tmp_path)
    assert first == tmp_path / 'sub' / 'f.txt' and first.read_bytes() == b'spectrum'
    again = fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum'), subdir='sub', data_home=tmp_path)
    assert again == first and server.requests == {'/f.txt': 1}                      # cache hit: no second request
    assert fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum'), subdir='sub', data_home=tmp_path,
                      download=False) == first
    assert sorted(p.name for p in (tmp_path / 'sub').iterdir()) == ['f.txt']       # no temporary file left


def test_fetch_file_refuses_a_wrong_checksum(server, tmp_path):
    server.files['/f.txt'] = b'changed on the server'
    with pytest.raises(ChecksumError, match=r'^f\.txt: the download had the wrong checksum and was deleted') as e:
        fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum'), data_home=tmp_path)
    assert server.url + '/f.txt' in str(e.value) and 'changed or damaged' in str(e.value)
    assert list(tmp_path.iterdir()) == []                                             # nothing kept


def test_fetch_file_goes_where_the_data_home_says(server, monkeypatch, tmp_path):
    server.files['/f.txt'] = b'spectrum'
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path / 'env'))
    assert fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum')) == tmp_path / 'env' / 'f.txt'
    assert fetch_file('f.txt', server.url + '/f.txt', _sha(b'spectrum'), data_home=tmp_path / 'arg').exists()
    assert server.requests == {'/f.txt': 2} and (tmp_path / 'arg' / 'f.txt').read_bytes() == b'spectrum'


def test_fetch_file_with_md5_and_bad_checksums(tmp_path):
    src = tmp_path / 'src.txt'; src.write_bytes(b'hello')
    md5 = 'md5:' + hashlib.md5(b'hello').hexdigest()
    assert fetch_file('hello.txt', src.as_uri(), md5, data_home=tmp_path / 'c').read_bytes() == b'hello'
    for bad in ('abc', 'sha1:' + '0' * 40, 'sha256:' + '0' * 63, 'md5:' + 'g' * 32, None):
        with pytest.raises(ValueError, match='checksum'): fetch_file('x', src.as_uri(), bad, data_home=tmp_path)
    with pytest.raises(ValueError, match='urls'): fetch_file('x', [], md5, data_home=tmp_path)


def test_read_idx_checks_the_header(tmp_path):
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    good = tmp_path / 'a.gz'; good.write_bytes(_idx(arr))
    np.testing.assert_array_equal(read_idx(good), arr)
    short = tmp_path / 'b.gz'; short.write_bytes(gzip.compress(gzip.decompress(_idx(arr))[:-1]))
    with pytest.raises(ValueError, match='header'): read_idx(short)
    bad = tmp_path / 'c.gz'; bad.write_bytes(gzip.compress(b'\x01\x02\x08\x01' + bytes(8)))
    with pytest.raises(ValueError, match='magic'): read_idx(bad)


def test_published_checksums_are_well_formed():
    for c in list(data.MNIST_FILES.values()) + list(data.MNIST_MD5.values()) + [data.MOVIELENS_100K_SHA256, data.MOVIELENS_100K_MD5]:
        data._check_checksum(c)
    assert set(data.MNIST_FILES) == set(data.MNIST_MD5)


# ---------------------------------------------------------------- the cache directory

def test_cache_directory_rules(monkeypatch, tmp_path):
    import pooch
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path / 'env'))
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))
    assert get_data_home(tmp_path / 'arg') == tmp_path / 'arg'                      # the argument, then the variable
    assert get_data_home('~/mine') == tmp_path / 'home' / 'mine'
    assert get_data_home() == tmp_path / 'env'
    monkeypatch.setenv('VBFA_LIT_DATA', '')                                          # empty: not set
    assert get_data_home() == Path(pooch.os_cache('vbfa_lit'))                      # then the platform's, by pooch
    if sys.platform.startswith('linux'):
        assert get_data_home() == tmp_path / 'xdg' / 'vbfa_lit'
        monkeypatch.delenv('XDG_CACHE_HOME')
        assert get_data_home() == tmp_path / 'home' / '.cache' / 'vbfa_lit'


def test_environment_variable_directs_the_download(server, fake_movielens, monkeypatch, tmp_path):
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path / 'mine'))
    load_movielens_100k(urls=[server.url + '/ml/ml-100k.zip'])
    assert (tmp_path / 'mine' / 'movielens' / 'ml-100k.zip').exists()


# ---------------------------------------------------------------- scikit-learn's bundled data; light import

def test_sklearn_loaders():
    pytest.importorskip('sklearn')
    d, c = data.load_digits(), data.load_breast_cancer(standardize=True)
    assert d.X.shape == (1797, 64) and d.images.shape == (1797, 8, 8) and set(d.target) == set(range(10))
    assert c.X.shape == (569, 30) and len(c.feature_names) == 30
    np.testing.assert_allclose(c.X.mean(0), 0, atol=1e-12); np.testing.assert_allclose(c.X.std(0), 1, rtol=1e-12)


def test_downloads_without_pooch_say_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, 'pooch', None)
    with pytest.raises(ImportError, match='pip install pooch'):
        fetch_file('f.txt', 'file:///nonexistent', _sha(b'z'), data_home=tmp_path)
    assert get_data_home(tmp_path) == tmp_path                                      # an explicit home needs no pooch


def test_one_random_state_rule_across_modules():
    # issue 20, item 11: a legacy RandomState(0) gave different streams in different modules
    from vbfa_lit.stiefel import sample_stiefel
    from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues
    from vbfa_lit.validation import check_random_state as one_rule
    import vbfa_lit.estimator, vbfa_lit.rjmcmc, vbfa_lit.stiefel, vbfa_lit.data
    for mod in (vbfa_lit.estimator, vbfa_lit.rjmcmc, vbfa_lit.stiefel, vbfa_lit.data):
        assert mod.check_random_state is one_rule
    a = sample_stiefel(4, 2, random_state=np.random.RandomState(0))
    b = sample_stiefel(4, 2, random_state=one_rule(np.random.RandomState(0)))
    np.testing.assert_array_equal(a, b)
    seq = np.random.SeedSequence(3)
    np.testing.assert_array_equal(sample_stiefel(4, 2, random_state=seq), sample_stiefel(4, 2, random_state=np.random.default_rng(3)))
    with pytest.raises(ValueError, match='^random_state'):
        rjmcmc_pca_from_eigenvalues([3.0, 2.0, 1.0], 50, n_sweeps=10, burn_in=5, random_state=-1)


# ---------------------------------------------------------------- fetch_file under stress

def _fetch_in_child(args):
    home, url, checksum = args
    try: return data.fetch_file('blob.bin', url, checksum, data_home=home).read_bytes() == b'x' * 200000
    except Exception as e: return repr(e)


def test_processes_starting_from_a_corrupt_cache_all_succeed(tmp_path):
    # before: 3 of 80 failed with FileNotFoundError (one process deleted the file another was hashing)
    import multiprocessing as mp
    payload = b'x' * 200000
    src = tmp_path / 'src.bin'; src.write_bytes(payload)
    results = []
    with mp.get_context('spawn').Pool(4) as pool:
        for round_ in range(6):
            home = tmp_path / f'home{round_}'; home.mkdir()
            (home / 'blob.bin').write_bytes(b'corrupt')
            results += pool.map(_fetch_in_child, [(str(home), src.as_uri(), _sha(payload))] * 4)
    assert results == [True] * len(results)


class _Slow(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        import time
        self.send_response(200)
        if self.path == '/slow': self.end_headers()
        else: self.end_headers()
        try:
            for _ in range(200):                                   # no Content-Length
                self.wfile.write(b'y' * (1 << 16) if self.path == '/big' else b'y'); self.wfile.flush()
                if self.path == '/slow': time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError): pass


@pytest.fixture
def slow_server():
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Slow)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{srv.server_address[1]}'
    srv.shutdown()


def test_timeout_bounds_the_whole_download(slow_server, tmp_path):
    # a byte every 0.1 s never trips a per-read timeout; the download as a whole is stopped
    with pytest.raises(data.DownloadError, match='longer than timeout'):
        data.fetch_file('f', slow_server + '/slow', _sha(b'z'), data_home=tmp_path, timeout=0.5)
    assert not any(tmp_path.iterdir()) or not list(tmp_path.glob('**/*.part'))


def test_a_known_size_stops_an_oversized_stream(slow_server, tmp_path):
    with pytest.raises(data.DownloadError, match="more than the file's 1000 bytes"):
        data.fetch_file('f', slow_server + '/big', _sha(b'z'), data_home=tmp_path, size=1000)
    assert not list(tmp_path.glob('**/*.part'))


@pytest.mark.parametrize('kwargs, name', [
    (dict(subdir='../../up'), 'subdir'), (dict(subdir='/etc'), 'subdir'), (dict(filename='a/b.txt'), 'filename'),
    (dict(filename='..'), 'filename'), (dict(timeout=0), 'timeout'), (dict(timeout=-1), 'timeout'),
    (dict(size=0), 'size')])
def test_fetch_arguments_named(tmp_path, kwargs, name):
    args = dict(filename='f.txt', urls='file:///nonexistent', checksum=_sha(b'z'), data_home=tmp_path)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f'^{name}'):
        data.fetch_file(args.pop('filename'), args.pop('urls'), args.pop('checksum'), **args)
    assert not (tmp_path.parent / 'up').exists()


def test_package_mirrors_are_https():
    assert all(u.startswith('https://') for u in data.MNIST_MIRRORS)


def test_one_table_of_named_spectra():
    from vbfa_lit.data import (LUTTINEN_ILIN_SPECTRA, MINKA_SPECTRA, SPECTRA, ZHANG_SETS, make_minka_spectrum,
                               make_zhang_set)
    assert {f for f, _ in SPECTRA} == {'luttinen_ilin', 'minka', 'zhang'}
    for fam, view in (('luttinen_ilin', LUTTINEN_ILIN_SPECTRA), ('minka', MINKA_SPECTRA), ('zhang', ZHANG_SETS)):
        assert all(view[k] is SPECTRA[fam, k] for k in view) and len(view) == sum(f == fam for f, _ in SPECTRA)
    assert ZHANG_SETS[2][0] == MINKA_SPECTRA[1][0] and ZHANG_SETS[4][0] == MINKA_SPECTRA[2][0]
    # Zhang's Set 2 and Minka's experiment 1 are one spectrum: the same seed draws the same data
    np.testing.assert_array_equal(make_zhang_set(2, random_state=5).X, make_minka_spectrum(1, random_state=5).X)
    with pytest.raises(ValueError, match='set_number'): make_zhang_set([1])


def test_sample_covariance_eigenvalues_divisors_and_range():
    from vbfa_lit.data import sample_covariance_eigenvalues
    X = np.random.default_rng(0).normal(size=(50, 4)) * [3.0, 2.0, 1.0, 0.5] + 7.0
    g0, N = sample_covariance_eigenvalues(X)
    g1, _ = sample_covariance_eigenvalues(X, ddof=1)
    np.testing.assert_allclose(g0, np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1], rtol=1e-12)
    np.testing.assert_allclose(g1, np.linalg.eigvalsh(np.cov(X.T))[::-1], rtol=1e-12)
    assert N == 50
    for c in (2.0 ** 500, 2.0 ** -500):                                # exact at any power-of-two scale
        np.testing.assert_array_equal(sample_covariance_eigenvalues(X * c)[0], g0 * c * c)
    for bad, match in ((X[:, :1], 'at least 2 features'), (X[:1], 'at least 2 samples'), (X * 1e160, 'floating'),
                       (np.where(np.eye(50, 4) > 0, np.nan, X), 'NaN'), (X + 1j, 'Complex'), (X[0], '2-d')):
        with pytest.raises(ValueError, match=match): sample_covariance_eigenvalues(bad)
    with pytest.raises(ValueError, match='ddof'): sample_covariance_eigenvalues(X, ddof=2)


def test_haar_sampler_is_the_one_behind_the_data():
    from vbfa_lit.stiefel import haar_orthogonal, sample_stiefel
    d = make_gaussian_spectrum([3.0, 2.0, 1.0], 10, random_state=4)
    np.testing.assert_array_equal(d.components, haar_orthogonal(3, method='qr', random_state=4))
    h = make_householder_example(random_state=2)
    rng = np.random.default_rng(2); rng.standard_normal((150, 2))       # the latent X is drawn first
    np.testing.assert_array_equal(h.U, sample_stiefel(5, 2, method='qr', random_state=rng))
    U = sample_stiefel(6, 3, size=4000, method='qr', random_state=0)
    np.testing.assert_allclose(np.einsum('...ji,...jk->...ik', U[0:1], U[0:1])[0], np.eye(3), atol=1e-12)
    assert np.abs(U.mean(0)).max() < 4 * np.sqrt(1 / 6 / 4000)      # Haar: every entry has mean 0, variance 1/6
    with pytest.raises(ValueError, match='method'): sample_stiefel(3, 2, method='svd')
