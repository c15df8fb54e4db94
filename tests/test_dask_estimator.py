"""VBPCA on Dask input: a dask array chunked by rows (dense with NaN, or SciPy sparse chunks with
missing_values='unstored') is fitted block by block where its chunks live, never gathered on the client, and gives the
in-memory fit (the bound to 1e-8 relative, every learned attribute); transform, impute and score_samples give lazy dask
arrays chunked like the input, predict_entries the in-memory numbers; a table of ratings (pandas, dask, Parquet)
becomes such an array through `dask_runner.ratings_matrix`; a LocalCluster of processes gives the same fit; bad input
is refused by name; `import vbfa_lit` does not import dask."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sparse

da = pytest.importorskip('dask.array')
dd = pytest.importorskip('dask.dataframe')
distributed = pytest.importorskip('distributed')
import dask
import pandas as pd

from vbfa_lit import VBPCA, VBPCAImputer
from vbfa_lit.data import make_low_rank
from vbfa_lit.dask_runner import ratings_matrix, resolve_client

RTOL = 1e-8     # the bound; the fits agree to rounding (about 1e-15 relative measured)
SAME = 1e-9     # the learned attributes, relative (measured differences about 1e-14)


def problem(missing=0.3, N=240, M=20, seed=0):
    "Samples x features with NaN where missing: a low-rank signal with offsets and noise."
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


def as_csr(X):
    "The observed entries of X as a CSR matrix (unstored = missing)."
    rows, cols = np.nonzero(~np.isnan(X))
    return sparse.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)


def triples(X):
    "The observed entries of X as a shuffled table of (row, col, value)."
    rows, cols = np.nonzero(~np.isnan(X))
    return pd.DataFrame({'row': rows, 'col': cols, 'value': X[rows, cols]}).sample(frac=1, random_state=0)


@pytest.fixture
def never_gathered(monkeypatch):
    "Fail if a dask array is turned into one NumPy array on the client (what reading Dask input whole would do)."
    def refuse(self, *args, **kwargs): raise AssertionError(f"a dask array of shape {self.shape} was gathered whole")
    monkeypatch.setattr(da.Array, '__array__', refuse)


def assert_same_fit(got, ref):
    """The bound after every sweep to RTOL relative; every learned attribute to rounding. Of the columns ARD switched
    off only the loadings (near 0) are compared: their axes, hence their explained variances and alpha_, are the
    directions of near-zero loadings, which rounding decides (two in-memory fits with other blocks differ there too)."""
    np.testing.assert_allclose(got.elbo_, ref.elbo_, rtol=RTOL, atol=0)
    for name in ('n_components_', 'n_iter_', 'converged_', 'n_features_in_', 'n_effective_components_'):
        assert getattr(got, name) == getattr(ref, name), name
    np.testing.assert_array_equal(got.effective_components_, ref.effective_components_)
    on = ref.effective_components_
    close = lambda a, b, name: np.testing.assert_allclose(a, b, rtol=0, atol=SAME * np.abs(b).max(), err_msg=name)
    for name in ('components_', 'mean_', 'noise_variance_', 'center_', 'scale_'):
        close(getattr(got, name), getattr(ref, name), name)
    for name in ('explained_variance_', 'explained_variance_ratio_', 'alpha_'):
        close(getattr(got, name)[on], getattr(ref, name)[on], name)
    close(got.posterior_.X[:, on], ref.posterior_.X[:, on], 'posterior_.X')


def assert_lazy_like(out, X, ncols):
    "A dask array chunked as X's rows, with ncols columns (None: one value a row)."
    assert isinstance(out, da.Array)
    assert out.chunks == ((X.chunks[0], (ncols,)) if ncols is not None else (X.chunks[0],))


@pytest.mark.parametrize('kw', [dict(),                                              # ARD, shared noise, both
                                dict(noise='per_feature', prior='broad', transformations='rotate',
                                     n_components=3, storage='sparse', progress=True)],
                         ids=['ard-shared', 'broad-per-feature'])
def test_dense_dask_fit_and_predictions_equal_in_memory(kw, never_gathered):
    X = problem(0.3)
    settings = dict(random_state=1, engine='numpy', **kw)
    ref = VBPCA(**settings).fit(X)
    Xd = da.from_array(X, chunks=(70, 20))                                   # four chunks of rows: 70, 70, 70, 30
    graphs = []
    with dask.callbacks.Callback(start_state=lambda dsk, state: graphs.append(len(dsk))):
        got = VBPCA(**settings).fit(Xd)
    # after the chunks are read and checked, every computation (the scale's sums, the standardised blocks, each
    # sweep's steps) is one flat graph of one task per block: nothing accumulates from sweep to sweep
    assert set(graphs[1:]) == {4} and len(graphs) > 2 * got.n_iter_, graphs
    assert got.converged_ and got.n_iter_ > 5
    assert_same_fit(got, ref)

    Z = got.transform(Xd)
    assert_lazy_like(Z, Xd, got.n_components_)
    np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=0, atol=SAME * np.abs(ref.transform(X)).max())
    logp = got.score_samples(Xd)
    assert_lazy_like(logp, Xd, None)
    np.testing.assert_allclose(logp.compute(), ref.score_samples(X), rtol=1e-10)
    assert got.score(Xd) == pytest.approx(ref.score(X), rel=1e-10)
    filled, std = got.impute(Xd, return_std=True)
    for out, want in zip((filled, std, got.impute(Xd)), (*ref.impute(X, return_std=True), ref.impute(X))):
        assert_lazy_like(out, Xd, 20)
        np.testing.assert_allclose(out.compute(), want, rtol=1e-10, atol=1e-12)
    rows, cols = np.array([0, 239, 100, 71, 5]), np.array([3, 0, 19, 7, 3])          # chunks 0, 3, 1, 1, 0
    for a, b in zip(got.predict_entries(Xd, rows, cols, return_std=True),
                    ref.predict_entries(X, rows, cols, return_std=True)):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_sparse_chunks_fit_equal_the_in_memory_sparse_fit(never_gathered):
    X = problem(0.6, N=200, M=30, seed=2)
    csr = as_csr(X)
    settings = dict(random_state=0, engine='numpy', missing_values='unstored', noise='per_feature', n_components=5)
    ref = VBPCA(**settings).fit(csr)
    Xd = da.from_array(csr, chunks=(60, 10), asarray=False)                  # 4 row chunks, 3 column chunks (joined)
    assert sparse.issparse(Xd._meta)
    got = VBPCA(**settings).fit(Xd)
    assert_same_fit(got, ref)
    Z = got.transform(Xd)
    assert_lazy_like(Z, da.from_array(csr, chunks=(60, 30), asarray=False), got.n_components_)
    np.testing.assert_allclose(Z.compute(), ref.transform(csr), rtol=0, atol=SAME * np.abs(ref.transform(csr)).max())
    np.testing.assert_allclose(got.score_samples(Xd).compute(), ref.score_samples(csr), rtol=1e-10)
    rows, cols = np.array([199, 0, 61]), np.array([0, 29, 4])
    np.testing.assert_allclose(got.predict_entries(Xd, rows, cols), ref.predict_entries(csr, rows, cols), rtol=1e-10)
    with pytest.raises(TypeError, match='predict_entries'): got.impute(Xd)          # as for in-memory sparse input


def test_ratings_table_pandas_dask_and_parquet_fit_equal_the_matrix(tmp_path):
    X = problem(0.7, N=150, M=25, seed=3)
    settings = dict(random_state=2, engine='numpy', missing_values='unstored', n_components=5, tol=1e-4)
    ref = VBPCA(**settings).fit(as_csr(X))
    df = triples(X)
    tables = {'pandas': (df, dict(n_rows=150, n_cols=25, n_blocks=3)),
              'dask': (dd.from_pandas(df, npartitions=4), dict(n_rows=150, n_cols=25))}
    R = ratings_matrix(dd.from_pandas(df, npartitions=2))             # the shape from the largest indices: one pass
    assert R.shape == X.shape and R.npartitions == 2
    assert (R.compute() != as_csr(X)).nnz == 0
    try:
        import pyarrow  # noqa: F401
        df.to_parquet(tmp_path / 'ratings.parquet')
        tables['parquet'] = (dd.read_parquet(tmp_path / 'ratings.parquet'), dict(n_rows=150, n_cols=25, n_blocks=4))
    except ImportError:
        warnings.warn("pyarrow is not installed: the Parquet case is skipped")
    for name, (table, kw) in tables.items():
        R = ratings_matrix(table, **kw)
        assert R.shape == (150, 25) and sparse.issparse(R._meta), name
        assert_same_fit(VBPCA(**settings).fit(R), ref)
    assert 'parquet' in tables or pytest.skip("pyarrow is not installed: the Parquet case was not run")


def test_local_cluster_of_processes_default_client_same_fit(process_cluster):
    X = problem(0.3, seed=4)
    settings = dict(random_state=3, engine='numpy', noise='per_feature', n_components=6, tol=1e-4)
    ref = VBPCA(**settings).fit(X)
    Xd = da.from_array(X, chunks=(60, 20))
    assert resolve_client() is None                                          # no client: the threaded scheduler
    with distributed.Client(process_cluster) as client:                     # two worker processes (conftest.py)
        client.wait_for_workers(2, timeout=120)
        assert resolve_client() is client                                    # Dask's default client
        with distributed.get_task_stream(client) as stream:
            got = VBPCA(**settings).fit(Xd)                                  # on the default client
        ran = {t['key'][0] if isinstance(t['key'], tuple) else t['key'] for t in stream.data}
        assert any(k.startswith('map_latent') for k in ran), sorted(ran)[:5]  # the sweeps ran on the workers
        assert_same_fit(got, ref)
        np.testing.assert_allclose(got.transform(Xd).compute(), ref.transform(X), rtol=0,
                                   atol=SAME * np.abs(ref.transform(X)).max())
        with pytest.warns(Warning, match='max_iter=3'):
            short = VBPCA(**dict(settings, max_iter=3)).fit(Xd, client=client)    # the client given explicitly
        np.testing.assert_allclose(short.elbo_, ref.elbo_[:3], rtol=RTOL, atol=0)
    assert resolve_client() is None


def test_bad_dask_input_and_options_are_refused_by_name():
    X = problem(0.3)
    Xd = da.from_array(X, chunks=(80, 20))
    Xs = da.from_array(as_csr(X), chunks=(80, 20), asarray=False)
    with pytest.raises(TypeError, match="missing_values='unstored'"): VBPCA().fit(Xs)
    Xinf = X.copy(); Xinf[130, 4] = np.inf
    with pytest.raises(ValueError, match=r'X: contains 1 infinite value\(s\).*rows from 80'):
        VBPCA(max_iter=2).fit(da.from_array(Xinf, chunks=(80, 20)))
    with pytest.raises(ValueError, match='compute_chunk_sizes'): VBPCA().fit(Xd[Xd[:, 0] > 0])
    with pytest.raises(ValueError, match='at least 2 samples'): VBPCA().fit(Xd[:1])
    with pytest.raises(ValueError, match='no observed value'): VBPCA().fit(da.full((10, 3), np.nan, chunks=5))
    with pytest.raises(TypeError, match='client: only used when X is a dask array'): VBPCA().fit(X, client=object())
    with pytest.raises(TypeError, match='client: expected a distributed.Client'): VBPCA().fit(Xd, client='tcp://x:1')
    with pytest.raises(ValueError, match='Complex'): VBPCA().fit(Xd.astype(complex))
    model = VBPCA(random_state=0, max_iter=3, engine='numpy')
    with pytest.warns(Warning): model.fit(Xd)
    with pytest.raises(ValueError, match='X has 19 features'): model.transform(Xd[:, 1:])
    with pytest.raises(ValueError, match="set_output: transform='pandas'"):
        model.set_output(transform='pandas').transform(Xd)
    with pytest.raises(ValueError, match="set_output"): model.impute(Xd)
    model.set_output(transform='default')
    with pytest.raises(ValueError, match='rows: indices must lie in'): model.predict_entries(Xd, [240], [0])
    with pytest.raises(TypeError, match='X: a dask Array is read chunk by chunk'): VBPCAImputer().fit(Xd)
    with pytest.raises(TypeError, match=r'to_dask_array\(lengths=True\)'):
        VBPCA().fit(dd.from_pandas(pd.DataFrame(X), npartitions=2))


@pytest.mark.parametrize('change, error, message', [
    (lambda df: df.rename(columns={'value': 'rating'}), ValueError, "expected columns ['row', 'col', 'value']"),
    (lambda df: df.assign(row=df.row.astype(float)), TypeError, "'row' must hold integers"),
    (lambda df: df.assign(row=df.row + 1), ValueError, "'row' must lie in [0, 240)"),
    (lambda df: df.assign(col=df.col - 1), ValueError, "'col' must lie in [0, 20)"),
    (lambda df: pd.concat([df, df[:1]]), ValueError, 'is given twice'),
    (lambda df: df.assign(value=np.where(np.arange(len(df)) == 5, np.nan, df.value)), ValueError,
     "'value' must be finite"),
])
def test_bad_ratings_tables_are_refused_by_name(change, error, message):
    table = change(triples(problem(0.3)))
    with pytest.raises(error) as err:
        VBPCA(missing_values='unstored', max_iter=1).fit(ratings_matrix(table, 240, 20, n_blocks=3))
    assert message in str(err.value)
    with pytest.raises(TypeError, match='df: expected a pandas or dask DataFrame'): ratings_matrix(problem(0.3))
    with pytest.raises(ValueError, match='n_blocks'): ratings_matrix(triples(problem(0.3)), n_blocks=0)


def test_sample_bias_dask_fit_refused_by_name_and_new_rows_as_in_memory():
    X = make_low_rank(120, 8, 2, offset=3.0, missing=0.2, random_state=3).X
    X = X + np.random.default_rng(0).normal(size=(len(X), 1))          # a bias per row
    Xd = da.from_array(X, chunks=(40, 8))
    with pytest.raises(ValueError, match='sample_bias'):
        VBPCA(3, sample_bias=True).fit(Xd)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        m = VBPCA(3, sample_bias=True, random_state=0, max_iter=200).fit(X)
    np.testing.assert_allclose(m.transform(Xd).compute(), m.transform(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.impute(Xd).compute(), m.impute(X), rtol=1e-10)
    np.testing.assert_allclose(m.score_samples(Xd).compute(), m.score_samples(X), rtol=1e-10)
