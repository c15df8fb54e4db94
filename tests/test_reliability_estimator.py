"""Reliability of `VBPCA` on data that looks like real data, not only on nice unit-scale problems.

A generator of random problems (scales 1e-6..1e6, offsets up to 1e8, columns of very different scale, constant
and duplicated columns, integer data, N < M, D up to 20, up to 90% missing in random, row and column patterns,
both priors, both noise models, every transformation setting) feeds hundreds of fits, each of which must:
not raise, never lower the bound (1e-9 relative), give finite attributes, and leave its input untouched.
A second group checks that the answer does not depend on the data's units.

`make test` runs `RELIABILITY_N` problems (default 240); for a larger run:

    RELIABILITY_N=3200 .venv/bin/python -m pytest tests/test_reliability.py -n 2 -q
    .venv/bin/python tests/test_reliability.py 3200        # a summary table instead of test results
"""
import os
import sys
import warnings

import numpy as np
import pytest

from vbfa_lit import VBPCA
from vbfa_lit.rjmcmc_fast import numba_available

N_PROBLEMS = int(os.environ.get('RELIABILITY_N', 240))
REL_TOL = 1e-9


def random_problem(seed: int):
    "A random data matrix (NaN = missing) and the VBPCA hyperparameters to fit it with."
    r = np.random.default_rng(seed)
    N = int(r.choice([3, 5, 8, 15, 30, 60, 120]))
    M = int(r.choice([1, 2, 3, 5, 8, 12, 20, 25]))
    rank = int(r.integers(0, min(N, M) + 1))
    noise = 10.0 ** r.uniform(-9, 0) if r.random() < 0.3 else 10.0 ** r.uniform(-2, 0.5)
    X = r.normal(size=(N, rank)) @ r.normal(size=(rank, M)) + noise * r.normal(size=(N, M))
    if r.random() < 0.4: X *= 10.0 ** r.uniform(-3, 3, size=M)            # columns of very different scale
    X *= 10.0 ** r.uniform(-6, 6)                                           # the data's units
    if r.random() < 0.4: X += 10.0 ** r.uniform(0, 8) * r.normal(size=M)    # large offsets
    if M > 1 and r.random() < 0.2: X[:, r.integers(M)] = X[:, r.integers(M)]          # a duplicated column
    if r.random() < 0.15: X[:, r.integers(M)] = 10.0 ** r.uniform(-3, 8)                # a constant column
    if r.random() < 0.15: X = np.round(X / np.abs(X).max() * 10.0 ** r.integers(1, 4))  # integer data
    pattern, frac = r.choice(['none', 'random', 'rows', 'cols', 'blocks']), r.uniform(0, 0.9)
    if pattern == 'random': X[r.random(X.shape) < frac] = np.nan
    elif pattern == 'rows':                                                 # chosen rows keep one value, or none
        keep = np.where(r.random(N) < 0.5, r.integers(M, size=N), -1)
        X[(r.random(N) < frac)[:, None] & (np.arange(M)[None, :] != keep[:, None])] = np.nan
    elif pattern == 'cols': X[:, r.random(M) < frac] = np.nan
    elif pattern == 'blocks': X[r.random(N)[:, None] < frac * r.random(M)[None, :]] = np.nan
    if np.count_nonzero(~np.isnan(X)) < 2: X[:2, 0] = [1.0, 2.0]
    params = dict(n_components=int(r.integers(1, min(M, 20) + 1)),
                  prior=str(r.choice(['ard', 'broad'])), noise=str(r.choice(['shared', 'per_feature'])),
                  transformations=str(r.choice(['both', 'translate', 'rotate', 'none'])),
                  max_iter=int(r.choice([30, 100, 300])), random_state=int(r.integers(1000)))
    return X, params


def check_fit(seed: int, engine: str = 'auto'):
    "Fit one random problem with the sweeps of `engine`; return a list of what went wrong (empty when nothing did)."
    X, params = random_problem(seed)
    params['engine'] = engine
    X0 = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try: model = VBPCA(**params).fit(X)
        except Exception as e: return [f"raised {type(e).__name__}: {e}"]
    problems = []
    if not np.array_equal(X, X0, equal_nan=True): problems.append("the input was modified")
    L = model.elbo_
    drops = np.diff(L) < -REL_TOL * np.abs(L[1:])
    if drops.any():
        worst = np.max((L[:-1] - L[1:]) / np.abs(L[1:]))
        problems.append(f"the bound decreased in {int(drops.sum())} sweep(s), worst by {worst:.3g} |L|")
    for name in ('elbo_', 'components_', 'mean_', 'noise_variance_', 'explained_variance_'):
        if not np.all(np.isfinite(getattr(model, name))): problems.append(f"{name} is not finite")
    Z = model.transform(X)
    if not np.all(np.isfinite(Z)): problems.append("transform(X) is not finite")
    return problems


@pytest.mark.parametrize('engine', ['numpy', 'numba'])
@pytest.mark.parametrize('seed', range(N_PROBLEMS))
def test_random_problem(seed, engine):
    "Every problem with both engines (the NumPy sweep, and the compiled one when numba is installed)."
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    problems = check_fit(seed, engine)
    assert not problems, f"problem {seed} {random_problem(seed)[1]} ({engine}): " + '; '.join(problems)


# ---- Larger, nastier problems fitted for 300 sweeps: the bound must rise (up to its rounding)

N_LONG = int(os.environ.get('RELIABILITY_LONG_N', 10))
REPRO = os.path.join(os.path.dirname(__file__), 'data', 'elbo_decrease.npz')


def long_problem(seed: int):
    """A larger random problem, fitted for 300 sweeps whatever the bound does (tol=0): exactly or nearly noiseless,
    or noisy, low-rank data, duplicated and constant columns, integer data, nothing to 80% missing at random, by rows or by
    columns; both priors, both noise models, every transformation setting."""
    r = np.random.default_rng(10_000 + seed)
    N, M = int(r.integers(40, 200)), int(r.integers(8, 45))
    rank = int(r.integers(1, min(N, M) // 2 + 1))
    noise = r.choice([0.0, 10.0 ** r.uniform(-12, -4), 10.0 ** r.uniform(-2, 0)], p=[0.25, 0.25, 0.5])
    X = r.normal(size=(N, rank)) @ r.normal(size=(rank, M)) + noise * r.normal(size=(N, M))
    if r.random() < 0.3: X[:, r.integers(M)] = X[:, r.integers(M)]
    if r.random() < 0.2: X[:, r.integers(M)] = 3.0
    if r.random() < 0.2: X = np.round(X * 10.0 ** r.integers(0, 3))
    pattern, frac = r.choice(['none', 'random', 'rows', 'cols']), r.uniform(0, 0.8)
    if pattern == 'random': X[r.random(X.shape) < frac] = np.nan
    elif pattern == 'rows': X[(r.random(N) < frac)[:, None] & (r.random((N, M)) < 0.7)] = np.nan
    elif pattern == 'cols': X[(r.random(M) < frac)[None, :] & (r.random((N, M)) < 0.7)] = np.nan
    params = dict(n_components=int(r.integers(2, min(M, 20) + 1)), prior=str(r.choice(['ard', 'broad'])),
                  noise=str(r.choice(['shared', 'per_feature'])),
                  transformations=str(r.choice(['both', 'translate', 'rotate', 'none'])), max_iter=300, tol=0.0,
                  random_state=int(r.integers(1000)))
    return X, params


def rounding_allowance(model) -> float:
    """How far rounding alone can move the computed bound: eps * sum over the Gaussian factors of D cond(Sigma).

    The bound is evaluated with explicit covariances; a covariance stored in float64 holds its small eigenvalues
    with an absolute error of about eps ||Sigma||, a relative error eps cond(Sigma) in each of its D directions,
    and each direction carries a term of order one nat (its log-determinant, and the trace terms that balance it).
    On nearly noiseless data cond(Sigma) reaches 1e12 and this is about 1e-6 of the bound."""
    q, total = model.posterior_, 0.0
    for S, K in ((q.Sx, len(q.X)), (q.Sw, len(q.W))):
        c = np.linalg.cond(S)
        total += (c.sum() if len(S) > 1 else K * c[0]) * S.shape[-1]
    return np.finfo(float).eps * total


def bound_drops(X, params, engine):
    "The largest decrease of the bound over the fit, and what rounding allows (1e-9 |L| plus `rounding_allowance`)."
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(**params, engine=engine).fit(X)
    L = model.elbo_
    return float(np.max(L[:-1] - L[1:], initial=0.0)), REL_TOL * np.abs(L).max() + rounding_allowance(model)


@pytest.mark.parametrize('engine', ['numpy', 'numba'])
@pytest.mark.parametrize('seed', range(N_LONG))
def test_long_fit_bound_rises(seed, engine):
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    X, params = long_problem(seed)
    drop, allowed = bound_drops(X, params, engine)
    assert drop <= allowed, f"problem {seed} {params} ({engine}): the bound fell by {drop:.3g} (allowed {allowed:.3g})"


@pytest.mark.parametrize('engine', ['numpy', 'numba'])
@pytest.mark.parametrize('case', [0, 1])
def test_bound_decrease_reproducers(case, engine):
    """The two problems on which the bound fell after the sweep rework (the means computed as Sigma h from the
    explicit covariance, not by triangular solves): by 1.6e3 nats (1.8e-2 |L|, 890 times the rounding allowance)
    and by 0.37 nats (12 times); now within a third of it."""
    if engine == 'numba' and not numba_available(): pytest.skip("numba (the optional 'fast' extra) is not installed")
    import json
    d = np.load(REPRO)
    drop, allowed = bound_drops(d[f'Y{case}'], json.loads(str(d[f'kw{case}'])), engine)
    assert drop <= allowed, f"the bound fell by {drop:.3g} (allowed {allowed:.3g})"


# ---- The answer does not depend on the data's units

def rank3(seed=0, N=150, M=9, missing=0.1):
    "Rank-3 data of unit size with 10% missing: the issue's example."
    r = np.random.default_rng(seed)
    W = np.linalg.qr(r.normal(size=(M, 3)))[0] * [3.0, 2.0, 1.5]
    X = r.normal(size=(N, 3)) @ W.T + 0.3 * r.normal(size=(N, M))
    X[r.random(X.shape) < missing] = np.nan
    return X


@pytest.mark.parametrize('scale', [1e-6, 1e-2, 1.0, 1e4, 1e7])
@pytest.mark.parametrize('offset', [0.0, 1e6, 1e8])
@pytest.mark.parametrize('noise', ['shared', 'per_feature'])
def test_equivariance(scale, offset, noise):
    "fit(a X + b) is fit(X) in the new units: same components kept, same relative error, bound shifted by -|O| log a."
    X = rank3()
    b = offset * np.random.default_rng(1).normal(size=X.shape[1])
    ref = VBPCA(noise=noise, random_state=0).fit(X)
    new = VBPCA(noise=noise, random_state=0).fit(scale * X + b)
    assert ref.n_effective_components_ == 3 and new.n_effective_components_ == 3
    n_obs = np.count_nonzero(~np.isnan(X))
    # Offsets of 1e8 in data of size 1e-6 keep only a few digits of X itself: compare to what float64 can hold.
    eps = 1e-9 + 10 * np.finfo(float).eps * np.max(np.abs(b)) / scale
    assert abs(new.elbo_[-1] - (ref.elbo_[-1] - n_obs * np.log(scale))) <= max(1e-6, 1e3 * eps) * abs(ref.elbo_[-1])
    np.testing.assert_allclose(new.noise_variance_, scale ** 2 * np.asarray(ref.noise_variance_), rtol=max(1e-6, 1e3 * eps))
    tight = max(1e-6, 1e3 * eps)
    # The kept components are determined by the data; the switched-off ones point anywhere (a flat direction of the
    # bound, where rounding decides) and carry only noise: with per-feature noise their explained variance
    # u^T diag(psi) u depends on that direction, so they are not compared.
    np.testing.assert_allclose(new.explained_variance_[:3], scale ** 2 * ref.explained_variance_[:3], rtol=tight)
    np.testing.assert_allclose(new.components_[:3], scale * ref.components_[:3], rtol=0, atol=tight * scale * np.abs(ref.components_).max())
    fill = lambda m, X: m.inverse_transform(m.transform(X))
    mask = ~np.isnan(X)
    err_ref = np.linalg.norm((fill(ref, X) - X)[mask]) / np.linalg.norm((X - np.nanmean(X, 0))[mask])
    err_new = np.linalg.norm((fill(new, scale * X + b) - (scale * X + b))[mask]) / np.linalg.norm((scale * X - scale * np.nanmean(X, 0))[mask])
    assert abs(err_new - err_ref) <= 1e-6 + 1e3 * eps


@pytest.mark.parametrize('scale', [1e-140, 1e140])
def test_extreme_scales(scale):
    "Data whose squares are near the ends of float64's range: no overflow or underflow in centring and scaling."
    X = rank3()
    ref, new = VBPCA(random_state=0).fit(X), VBPCA(random_state=0).fit(scale * X)
    assert new.n_effective_components_ == 3
    np.testing.assert_allclose(new.noise_variance_ / scale ** 2, ref.noise_variance_, rtol=1e-6)


@pytest.mark.parametrize('scale', [1e-200, 1e200])
def test_scales_beyond_float64_variances_are_refused_by_name(scale):
    with pytest.raises(ValueError, match='X: the observed values vary on a scale'):
        VBPCA().fit(scale * rank3())


def test_issue_minimal_cases():
    "The three minimal cases of the issue: each fits, and the bound never decreases."
    r = np.random.default_rng(0)
    Y = (r.normal(size=(50, 1)) @ r.normal(size=(1, 22)) + 0.003 * r.normal(size=(50, 22))) * 1e-3
    cases = [(Y, dict(n_components=17, prior='broad', transformations='none', random_state=0, max_iter=300))]
    r = np.random.default_rng(0)
    Y = (r.normal(size=(77, 1)) @ r.normal(size=(1, 3)) + 0.002 * r.normal(size=(77, 3))) * [0.02, 1, 500]
    cases.append((Y, dict(n_components=3, random_state=0)))
    cases.append((np.array([[72704092, 72704092], [72704094, 72704094]]), dict(n_components=2, noise='per_feature', random_state=306)))
    for Y, params in cases:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            L = VBPCA(**params).fit(Y).elbo_
        assert np.all(np.diff(L) >= -REL_TOL * np.abs(L[1:])), params


if __name__ == '__main__':                     # a summary over many problems: python tests/test_reliability.py 3200
    n = int(sys.argv[1]) if len(sys.argv) > 1 else N_PROBLEMS
    from collections import Counter
    kinds, examples = Counter(), {}
    for seed in range(n):
        for p in check_fit(seed):
            kind = p.split(':')[0].split(' in ')[0]
            kinds[kind] += 1
            examples.setdefault(kind, (seed, p))
    print(f"{n} problems")
    for kind, count in kinds.most_common(): print(f"{count:6d}  {kind}    e.g. problem {examples[kind][0]}: {examples[kind][1]}")
