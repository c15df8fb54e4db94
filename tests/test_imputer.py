"""`VBPCAImputer` (lesson 07): the scikit-learn transformer protocol (check_estimator, clone, Pipeline, set_output,
feature names), bad input naming its argument, input never modified, and the calibration of its intervals with
tolerances from the number of held-out entries (binomial standard errors). The exercises of lesson 07 are checked
at the end."""
import numpy as np
import pytest
from scipy.stats import norm

from vbfa_lit import VBPCA, VBPCAImputer

sklearn = pytest.importorskip('sklearn')
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks


def _data(seed=0, n=300, m=10, rank=3, missing=0.2):
    "Low-rank Gaussian data with per-feature noise, large offsets and unequal scales; some entries hidden."
    r = np.random.default_rng(seed)
    X = (r.normal(size=(n, rank)) @ r.normal(size=(rank, m)) + r.normal(size=(n, m)) * r.uniform(0.3, 1.0, m))
    X = X * r.uniform(0.5, 20, m) + 100 * r.normal(size=m)
    hidden = r.random(X.shape) < missing
    return X, np.where(hidden, np.nan, X), hidden


# --- scikit-learn's own checks ----------------------------------------------------------------------------------
# Every check of check_estimator runs on the default imputer; none is excluded (scikit-learn itself skips
# check_array_api_input unless SCIPY_ARRAY_API=1, as for VBPCA in test_estimator.py). (As for VBPCA, scikit-learn warns that
# the class does not inherit from BaseEstimator: the package implements the protocol without importing scikit-learn.)
# calibrate='holdout' is not run through check_estimator: its fit refuses data with fewer than 30 observed entries to
# hold out (a ValueError naming `holdout`), which many of the checks' tiny data sets are; it is tested below.
@pytest.mark.filterwarnings('ignore::UserWarning')
@parametrize_with_checks([VBPCAImputer()])
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


@pytest.fixture(scope='module')
def fitted():
    "The default imputer fitted once on `_data()`, for the tests that only read it (its fit is deterministic)."
    return VBPCAImputer(random_state=0).fit(_data()[1])


def test_transform_fills_missing_keeps_observed_and_matches_vbpca_impute(fitted):
    X, Xm, hidden = _data()
    imp = fitted
    filled, std = imp.transform(Xm, return_std=True)
    assert filled.shape == Xm.shape and not np.isnan(filled).any()
    assert np.array_equal(filled[~hidden], Xm[~hidden]) and np.all(std[~hidden] == 0) and np.all(std[hidden] > 0)
    ref, ref_std = VBPCA(noise='per_feature', random_state=0).fit(Xm).impute(Xm, return_std=True)
    np.testing.assert_array_equal(filled, ref)
    np.testing.assert_array_equal(std, ref_std)
    assert imp.calibration_factor_ == 1.0 and imp.n_holdout_ == 0
    np.testing.assert_array_equal(imp.fit_transform(Xm), filled)
    # new rows: each from its own observed entries
    X2, Xm2, h2 = _data(seed=1)
    f2 = imp.transform(Xm2)
    assert np.array_equal(f2[~h2], Xm2[~h2]) and not np.isnan(f2).any()


def test_float32_kept(fitted):
    X, Xm, hidden = _data()
    out, std = fitted.transform(Xm.astype(np.float32), return_std=True)
    assert out.dtype == np.float32 and std.dtype == np.float32


def test_params_clone_repr():
    imp = VBPCAImputer(n_components=3, calibrate='holdout', random_state=1)
    assert imp.get_params()['calibrate'] == 'holdout' and imp.get_params()['n_components'] == 3
    c = clone(imp)
    assert c is not imp and c.get_params() == imp.get_params()
    assert repr(imp) == "VBPCAImputer(calibrate='holdout', n_components=3, random_state=1)"   # sorted, as VBPCA
    assert imp.set_params(holdout=0.2) is imp and imp.holdout == 0.2
    with pytest.raises(ValueError, match='Invalid parameter'): imp.set_params(noies='shared')


def test_feature_names_and_pandas_output(fitted):
    pd = pytest.importorskip('pandas')
    X, Xm, hidden = _data()
    df = pd.DataFrame(Xm, columns=[f'f{i}' for i in range(Xm.shape[1])], index=np.arange(len(Xm)) + 7)
    imp = VBPCAImputer(random_state=0).set_output(transform='pandas').fit(df)
    out, std = imp.transform(df, return_std=True)
    assert list(out.columns) == list(df.columns) and list(out.index) == list(df.index)
    assert list(std.columns) == list(df.columns)
    assert list(imp.get_feature_names_out()) == list(df.columns)
    assert list(fitted.get_feature_names_out()) == [f'x{i}' for i in range(10)]              # fitted on an array
    with pytest.raises(ValueError, match='input_features'): imp.get_feature_names_out(['a', 'b'])


def test_in_a_pipeline_before_a_model():
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    X, Xm, hidden = _data(n=200)
    y = X[:, 0] + X[:, 1]                        # a target that the filled features predict
    pipe = make_pipeline(VBPCAImputer(random_state=0), Ridge())
    r2 = cross_val_score(pipe, Xm, y, cv=3).mean()
    assert r2 > 0.9
    assert clone(pipe).fit(Xm, y).predict(Xm).shape == (200,)


def test_input_unmodified():
    pd = pytest.importorskip('pandas')
    X, Xm, hidden = _data()
    keep = Xm.copy()
    imp = VBPCAImputer(calibrate='holdout', random_state=0).fit(Xm)
    imp.transform(Xm, return_std=True)
    np.testing.assert_array_equal(Xm, keep)
    df = pd.DataFrame(Xm); dkeep = df.copy()
    VBPCAImputer(random_state=0).fit(df).transform(df)
    pd.testing.assert_frame_equal(df, dkeep)


@pytest.mark.parametrize('kwargs, exc, match', [
    (dict(calibrate='yes'), ValueError, r"^The 'calibrate' parameter of VBPCAImputer"),
    (dict(calibrate=True), ValueError, r"^The 'calibrate' parameter of VBPCAImputer"),
    (dict(holdout=0.7), ValueError, r"^The 'holdout' parameter of VBPCAImputer must be a float in the range \(0.0, 0.5\]"),
    (dict(holdout=0.0), ValueError, r"^The 'holdout' parameter"),
    (dict(holdout='a'), TypeError, r"^The 'holdout' parameter"),
    (dict(noise='diag'), ValueError, r"^The 'noise' parameter of VBPCAImputer"),
    (dict(n_components=0), ValueError, r"^The 'n_components' parameter of VBPCAImputer"),
])
def test_bad_hyperparameters_name_the_argument(kwargs, exc, match):
    X, Xm, hidden = _data(n=50)
    with pytest.raises(exc, match=match):
        VBPCAImputer(**kwargs).fit(Xm)


def test_bad_data_names_the_argument():
    X, Xm, hidden = _data(n=50)
    bad = Xm.copy(); bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r'^X: contains 1 infinite'): VBPCAImputer().fit(bad)
    with pytest.raises(ValueError, match=r'^X: expected a 2-d'): VBPCAImputer().fit(Xm[:, 0])
    imp = VBPCAImputer(random_state=0).fit(Xm)
    with pytest.raises(ValueError, match='X has 3 features'): imp.transform(Xm[:, :3])
    with pytest.raises(TypeError, match=r'^return_std'): imp.transform(Xm, return_std='yes')
    with pytest.raises(Exception, match='fit'): VBPCAImputer().transform(Xm)
    # too few observed entries to hold out: the error names `holdout`
    with pytest.raises(ValueError, match=r'^holdout: .* at least 30'):
        VBPCAImputer(calibrate='holdout', random_state=0).fit(Xm[:20, :5])


def test_holdout_scales_the_mean_field_std_and_nothing_else():
    X, Xm, hidden = _data()
    plain = VBPCAImputer(random_state=3).fit(Xm)
    cal = VBPCAImputer(calibrate='holdout', random_state=3).fit(Xm)
    f0, s0 = plain.transform(Xm, return_std=True)
    f1, s1 = cal.transform(Xm, return_std=True)
    np.testing.assert_array_equal(f0, f1)
    np.testing.assert_allclose(s1, cal.calibration_factor_ * s0, rtol=1e-12)
    obs = int((~hidden).sum())
    # about 10% of the observed entries are held out: binomial s.e. sqrt(obs * 0.1 * 0.9)
    assert abs(cal.n_holdout_ - 0.1 * obs) < 4 * np.sqrt(obs * 0.09)
    assert 0.5 < cal.calibration_factor_ < 2


def _z(seed, **kw):
    X, Xm, hidden = _data(seed=seed, n=400, m=12, rank=3, missing=0.25)
    imp = VBPCAImputer(random_state=seed, **kw).fit(Xm)
    mean, std = imp.transform(Xm, return_std=True)
    return (X - mean)[hidden] / std[hidden]


SEEDS = range(5)
# The hidden entries of one column share that column's estimated noise and loadings, so they are not independent
# trials: the independent replicates are the data sets (seeds). The tolerance is 3 standard errors of the mean over
# seeds, from their spread, and never below the binomial standard error of all the entries pooled.
@pytest.fixture(scope='module')
def z_plain(): return [_z(s) for s in SEEDS]


@pytest.fixture(scope='module')
def z_holdout(): return [_z(s, calibrate='holdout') for s in SEEDS]


def _within(per_seed, target, binomial_var, n):
    per_seed = np.asarray(per_seed)
    se = max(per_seed.std(ddof=1) / np.sqrt(len(per_seed)), np.sqrt(binomial_var / n))
    return abs(per_seed.mean() - target) < 3 * se, (per_seed.round(4), target, se)


@pytest.mark.parametrize('level', [0.5, 0.8, 0.9, 0.95])
def test_coverage_on_data_from_the_model(z_plain, level):
    "On data drawn from the model, mean-field intervals hold their nominal share (5 data sets, about 1,200 each)."
    q = norm.ppf(0.5 + level / 2)
    ok, info = _within([np.mean(np.abs(z) <= q) for z in z_plain], level, level * (1 - level),
                       sum(map(len, z_plain)))
    assert ok, info


def test_calibrated_intervals_on_data_from_the_model(z_holdout):
    "After calibrate='holdout': the mean square of the standardised errors is 1 and 90% intervals hold 90%."
    z2 = np.concatenate(z_holdout) ** 2
    ok, info = _within([np.mean(z ** 2) for z in z_holdout], 1.0, z2.var(), len(z2))
    assert ok, info
    ok, info = _within([np.mean(np.abs(z) <= norm.ppf(0.95)) for z in z_holdout], 0.9, 0.09, len(z2))
    assert ok, info


# --- the exercises of lesson 07 ----------------------------------------------------------------------------------
def _std_wine():
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler
    return StandardScaler().fit_transform(load_wine().data)


def test_04b_exercise_1_half_hidden():
    from vbfa_lit.estimator import latent_posterior
    X = _std_wine()
    hid = np.random.default_rng(0).random(X.shape) < 0.5
    Xm = np.where(hid, np.nan, X)
    m20 = VBPCA(noise='per_feature', random_state=0).fit(np.where(np.random.default_rng(0).random(X.shape) < 0.2,
                                                                   np.nan, X))
    m = VBPCA(noise='per_feature', random_state=0).fit(Xm)
    f, s = m.impute(Xm, return_std=True)
    assert m.n_effective_components_ < m20.n_effective_components_
    cover = np.mean(np.abs(f - X)[hid] <= norm.ppf(0.95) * s[hid])
    assert abs(cover - 0.9) < 3 * np.sqrt(0.09 / hid.sum())
    # the parameter terms of (7.4) stay a small share of the predictive variance
    q = m.posterior_
    Z, Sx = latent_posterior((Xm - m.center_) / m.scale_, q)
    n, k = np.nonzero(hid)
    Sw = np.broadcast_to(q.Sw, (len(q.W),) + q.Sw.shape[-2:])[k]
    param = np.einsum('kd,kde,ke->k', Z[n], Sw, Z[n]) + np.einsum('kde,ked->k', Sx[n], Sw) + q.vmu[k]
    total = (s[hid] / m.scale_) ** 2
    assert np.mean(param / total) < 0.1


def test_04b_exercise_2_shared_noise_covers_less_on_breast_cancer():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    X = StandardScaler().fit_transform(load_breast_cancer().data)
    hid = np.random.default_rng(0).random(X.shape) < 0.2
    Xm = np.where(hid, np.nan, X)
    cover = {}
    for noise in ['shared', 'per_feature']:
        f, s = VBPCA(noise=noise, random_state=0).fit(Xm).impute(Xm, return_std=True)
        cover[noise] = np.mean(np.abs(f - X)[hid] <= norm.ppf(0.95) * s[hid])
    se = np.sqrt(0.09 / hid.sum())
    assert cover['per_feature'] - cover['shared'] > 2 * se, cover
