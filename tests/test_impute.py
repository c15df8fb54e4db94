"""`VBPCA.impute`: missing entries filled with their posterior predictive mean and standard deviation under the
fitted (mean-field) q; observed entries unchanged. The calibration study against IterativeImputer and KNNImputer
(issue 22) is not here yet."""
import numpy as np
import pytest

from vbfa_lit import VBPCA
from vbfa_lit.estimator import latent_posterior


def _data(seed=0, n=150, m=8, missing=0.2):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 3)) @ r.normal(size=(3, m)) * 5 + 100 * r.normal(size=m) + r.normal(size=(n, m))
    Xm = X.copy(); Xm[r.random(X.shape) < missing] = np.nan
    return X, Xm


def test_observed_entries_unchanged_and_missing_filled():
    X, Xm = _data()
    kept = Xm.copy()
    est = VBPCA(noise='per_feature', random_state=0).fit(Xm)
    filled, std = est.impute(Xm, return_std=True)
    assert np.array_equal(np.isnan(Xm), np.isnan(kept)) and np.array_equal(Xm[~np.isnan(Xm)], kept[~np.isnan(kept)])
    obs = ~np.isnan(Xm)
    assert np.array_equal(filled[obs], Xm[obs]) and not np.isnan(filled).any()
    assert np.all(std[obs] == 0) and np.all(std[~obs] > 0)
    # the filled values are predictions of the hidden ones: far better than the column means
    err = np.sqrt(np.mean((filled - X)[~obs] ** 2))
    base = np.sqrt(np.mean((np.nanmean(Xm, 0) - X)[~obs] ** 2))
    assert err < 0.5 * base
    # the same model on new rows: the predictive of a new row comes from its own observed entries
    X2, Xm2 = _data(seed=1)
    f2 = est.impute(Xm2)
    assert np.array_equal(f2[~np.isnan(Xm2)], Xm2[~np.isnan(Xm2)])


def test_predictive_std_matches_monte_carlo_under_q():
    # draw w_m, x_n, mu_m, tau_m from the fitted factors and the noise, and compare the variance of y_mn
    X, Xm = _data(seed=2, n=60, m=5, missing=0.3)
    est = VBPCA(n_components=3, noise='per_feature', random_state=0).fit(Xm)
    _, std = est.impute(Xm, return_std=True)
    q, r = est.posterior_, np.random.default_rng(0)
    n, m = map(int, np.argwhere(np.isnan(Xm))[0])
    Z, Sx = latent_posterior((Xm - est.center_) / est.scale_, q)
    S_x = Sx[n] if len(Sx) > 1 else Sx[0]
    S_w = q.Sw[m] if len(q.Sw) > 1 else q.Sw[0]
    K = 400000
    w = r.multivariate_normal(q.W[m], S_w, size=K)
    x = r.multivariate_normal(Z[n], S_x, size=K)
    mu = q.mu[m] + np.sqrt(q.vmu[m]) * r.normal(size=K)
    a, b = np.broadcast_to(q.a_tau, (Xm.shape[1],))[m], np.broadcast_to(q.b_tau, (Xm.shape[1],))[m]
    tau = r.gamma(a, 1 / b, size=K)
    y = (w * x).sum(1) + mu + r.normal(size=K) / np.sqrt(tau)
    sd_mc = est.scale_ * y.std()
    # the sample sd of K draws has relative standard error about sqrt((kurtosis - 1) / (4 K)) < 0.01 here
    assert abs(sd_mc / std[n, m] - 1) < 0.01


def test_impute_pandas_output_and_bad_input():
    pd = pytest.importorskip('pandas')
    X, Xm = _data(seed=3)
    df = pd.DataFrame(Xm, columns=[f'f{i}' for i in range(Xm.shape[1])], index=np.arange(len(Xm)) + 10)
    est = VBPCA(random_state=0).set_output(transform='pandas').fit(df)
    out = est.impute(df)
    assert list(out.columns) == list(df.columns) and list(out.index) == list(df.index)
    with pytest.raises(ValueError, match='features'): est.impute(Xm[:, :3])
    with pytest.raises(Exception, match='fit'): VBPCA().impute(Xm)
