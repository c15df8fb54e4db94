"""What a new user met when fitting ratings on the estimator's surface, each pinned by a test that failed before the
fix: `inverse_transform(transform(X))` of a model with a bias per sample left the biases out silently; a closed
`distributed.Client` hid its `ClosedClientError` behind an AttributeError from the clean-up; a dask array fitted
without a client skipped the memory check that the same data in memory get."""
import warnings

import numpy as np
import pytest

from vbfa_lit import VBPCA
import vbfa_lit.estimator as est_module

da = pytest.importorskip('dask.array')


def biased_rows(seed=0, N=80, M=12, sd_bias=5.0, missing=0.3):
    "Rank-2 rows with a bias of standard deviation `sd_bias` each, a fraction `missing` hidden; (X, X_full)."
    rng = np.random.default_rng(seed)
    full = (rng.normal(size=(N, 2)) @ rng.normal(size=(2, M)) + rng.normal(0, sd_bias, (N, 1))
            + 0.1 * rng.normal(size=(N, M)))
    hide = rng.random((N, M)) < missing
    hide[np.arange(N), rng.integers(0, M, N)] = False
    return np.where(hide, np.nan, full), full


def test_inverse_transform_of_a_biased_model_needs_the_rows_biases():
    "Without them it refuses, naming the argument; with them it reconstructs every entry as impute does."
    X, full = biased_rows()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(n_components=4, sample_bias=True, random_state=0).fit(X)
    Z = model.transform(X)
    with pytest.raises(ValueError, match='sample_bias'):
        model.inverse_transform(Z)                           # before the fix: the rows' biases silently left out
    rec = model.inverse_transform(Z, sample_bias=model.transform_bias(X))
    hidden = np.isnan(X)
    np.testing.assert_allclose(rec[hidden], model.impute(X)[hidden], rtol=1e-10, atol=1e-10)
    err = np.sqrt(np.mean((rec[hidden] - full[hidden]) ** 2))
    assert err < 0.5, err                                    # 5 before (the biases' s.d.)
    with pytest.raises(ValueError, match='sample_bias'):
        model.inverse_transform(Z, sample_bias=np.zeros(len(Z) + 1))
    plain = VBPCA(n_components=4, random_state=0).fit(full)
    with pytest.raises(ValueError, match='sample_bias'):
        plain.inverse_transform(plain.transform(full), sample_bias=np.zeros(len(full)))


def test_transform_bias_of_the_training_rows_is_close_to_the_fitted_biases():
    X, _ = biased_rows(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(n_components=4, sample_bias=True, random_state=0).fit(X)
    b = model.transform_bias(X)
    assert b.shape == (len(X),)
    assert np.max(np.abs(b - model.sample_bias_)) < 0.05 * np.std(model.sample_bias_)
    with pytest.raises(ValueError, match='sample_bias'):
        VBPCA(n_components=2, random_state=0).fit(np.nan_to_num(X)).transform_bias(X)


@pytest.mark.parametrize('when', ['before', 'during'])
def test_a_closed_client_shows_its_own_error(when):
    distributed = pytest.importorskip('distributed')
    X = da.from_array(np.random.default_rng(0).normal(size=(60, 8)), chunks=(20, 8))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=':0') as cluster:
        client = distributed.Client(cluster)
        if when == 'before': client.close()
        stop = lambda sweep, elbo: client.close() if sweep == 1 else None
        est = VBPCA(n_components=2, random_state=0, max_iter=50, tol=0, callback=stop if when == 'during' else None)
        with pytest.raises(distributed.client.ClosedClientError):       # before the fix: AttributeError
            est.fit(X, client=client)
        client.close()


def test_dask_array_without_client_gets_the_memory_check(monkeypatch):
    "The issue's case: 100 x 1000, 30% missing, n_components = 1000; refused on dask as in memory."
    monkeypatch.setattr(est_module, 'available_memory', lambda: int(4e9))
    rng = np.random.default_rng(0)
    X = np.where(rng.random((100, 1000)) < 0.3, np.nan, rng.normal(size=(100, 1000)))
    with pytest.raises(ValueError, match=r'n_components: .* needs about 52\.8 GB') as in_memory:
        VBPCA(n_components=1000).fit(X)
    with pytest.raises(ValueError, match=r'n_components: .* needs about 52\.8 GB') as on_dask:
        VBPCA(n_components=1000).fit(da.from_array(X, chunks=(50, 1000)))   # before: started, failed in NumPy
    assert str(on_dask.value) == str(in_memory.value)


def test_dask_array_without_client_within_memory_still_fits(monkeypatch):
    monkeypatch.setattr(est_module, 'available_memory', lambda: int(4e9))
    X, _ = biased_rows(seed=2, sd_bias=0.0)
    got = VBPCA(n_components=3, random_state=0, engine='numpy').fit(da.from_array(X, chunks=(40, 12)))
    ref = VBPCA(n_components=3, random_state=0, engine='numpy').fit(X)
    np.testing.assert_allclose(got.elbo_[-1], ref.elbo_[-1], rtol=1e-8)
