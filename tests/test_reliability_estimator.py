"""Reliability of `VBPCA` and `VBPCAImputer` on data that looks like real data, not only on nice unit-scale problems.

A generator of random problems (scales 1e-6..1e6, offsets up to 1e8, columns of very different scale, constant
and duplicated columns, integer data, N < M, D up to 20, up to 90% missing in random, row and column patterns,
both priors, both noise models, every transformation setting; the learned prior of the means, the bias per sample and
the fully factorised posterior on part of them) feeds hundreds of fits, each of which must:
not raise, never lower the bound (1e-9 relative), give finite attributes, and leave its input untouched.
A second group checks that the answer does not depend on the data's units. A third gives awkward input its defined
answer: a default n_components that fits the data's shape, a memory and time estimate checked before a fit
allocates, and clear errors (or correct numbers) for dates, int8 duplicates, huge rows, non-bool flags, sparse input
to `impute`, float32 NaN, uint64 indices, sparse DataFrames, a dominating prior, a one-column holdout and a missing
polars.

`make test` runs `RELIABILITY_N` problems (default 240) for at most `RELIABILITY_SWEEPS` sweeps (default 30: see
`GRID_SWEEPS`), each with one of the two engines (the NumPy sweep and the
compiled one, in turn: `tests/test_vbpca_fast.py` tests them equal on the same data); for a larger run, every problem
with both engines:

    RELIABILITY_N=3200 RELIABILITY_BOTH_ENGINES=1 RELIABILITY_SWEEPS=300 .venv/bin/python -m pytest tests/test_reliability_estimator.py -n 2 -q
    .venv/bin/python tests/test_reliability_estimator.py 3200        # a summary table instead of test results
"""
import functools
import os
import sys
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sparse

import vbfa_lit.estimator as estimator
from vbfa_lit import VBPCA, VBPCAImputer, DegenerateDataWarning
from vbfa_lit.rjmcmc_fast import numba_available

N_PROBLEMS = int(os.environ.get('RELIABILITY_N', 240))
# The grid's fits stop after at most this many sweeps (the drawn max_iter, 30, 100 or 300, when smaller; 300 with
# RELIABILITY_SWEEPS=300). A wrong factor update or transformation lowers the bound where the factors move, and they
# move most in the first sweeps; every sweep runs the drawn transformations. Over the 420 fits of the grid at their
# full max_iter (32,844 sweeps, 2.7 times the 12,195 of the capped grid) no sweep lowered the bound at all, not even
# within the tolerance. The late sweeps, where rounding on nearly noiseless data can lower it, are the long fits' part
# below (300 sweeps, tol=0, and the same finiteness checks).
GRID_SWEEPS = int(os.environ.get('RELIABILITY_SWEEPS', 30))
REL_TOL = 1e-9
ENGINES = ('numpy', 'numba') if numba_available() else ('numpy',)


def cases(seeds):
    """(seed, engine) for the i-th of `seeds`: the engines in turn (every engine with RELIABILITY_BOTH_ENGINES=1), so
    that each meets every kind of problem and the fits cost half."""
    both = os.environ.get('RELIABILITY_BOTH_ENGINES') == '1'
    return [(s, e) for i, s in enumerate(seeds) for e in (ENGINES if both else (ENGINES[i % len(ENGINES)],))]


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


def not_finite(model):
    "The fitted attributes that hold a value that is not finite."
    return [f"{name} is not finite" for name in ('elbo_', 'components_', 'mean_', 'noise_variance_', 'explained_variance_')
            if not np.all(np.isfinite(getattr(model, name)))]


def check_fit(seed: int, engine: str = 'auto', **extra):
    """Fit one random problem with the sweeps of `engine` (and the hyperparameters `extra`); return a list of what went
    wrong (empty when nothing did)."""
    X, params = random_problem(seed)
    params.update(engine=engine, **extra)
    params['max_iter'] = min(params['max_iter'], GRID_SWEEPS)
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
    problems += not_finite(model)
    Z = model.transform(X)
    if not np.all(np.isfinite(Z)): problems.append("transform(X) is not finite")
    return problems


@pytest.mark.parametrize('seed,engine', cases(range(N_PROBLEMS)))
def test_random_problem(seed, engine):
    "Every problem, with the NumPy sweep or the compiled one (`cases`)."
    problems = check_fit(seed, engine)
    assert not problems, f"problem {seed} {random_problem(seed)[1]} ({engine}): " + '; '.join(problems)


@pytest.mark.parametrize('seed,engine', cases(range(0, N_PROBLEMS, 4)))
def test_random_problem_learned_mean(seed, engine):
    """A quarter of the problems again with the learned prior of the feature means (lesson 08), every other one with a
    bias per sample as well."""
    extra = dict(mean_prior='learned', sample_bias=seed % 8 == 0)
    problems = check_fit(seed, engine, **extra)
    assert not problems, f"problem {seed} {random_problem(seed)[1]} {extra} ({engine}): " + '; '.join(problems)



@pytest.mark.parametrize('seed,engine', cases(range(0, N_PROBLEMS, 2)))
def test_random_problem_factorised(seed, engine):
    """Half of the problems again under the fully factorised posterior (lesson 15): the same checks, the bound never
    falling among them (the transformations setting drawn is accepted and not run: the rotation would leave the
    family)."""
    problems = check_fit(seed, engine, posterior='factorised')
    assert not problems, f"problem {seed} {random_problem(seed)[1]} factorised ({engine}): " + '; '.join(problems)


@pytest.mark.parametrize('seed', range(4))
def test_the_factorised_fits_are_factorised(seed):
    "The fits above do run the factorised posterior: every covariance of q(x_n) and q(w_m) diagonal."
    X, params = random_problem(seed)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        q = VBPCA(**dict(params, posterior='factorised')).fit(X).posterior_
    for S in (q.Sx, q.Sw):
        assert S.shape[-1] == S.shape[-2] and np.all(S[..., ~np.eye(S.shape[-1], dtype=bool)] == 0)

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


def bound_drops(X, params, engine, fitted=None):
    """The largest decrease of the bound over the fit, and what rounding allows (1e-9 |L| plus `rounding_allowance`);
    the fitted model goes into the list `fitted` if one is given."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = VBPCA(**params, engine=engine).fit(X)
    if fitted is not None: fitted.append(model)
    L = model.elbo_
    return float(np.max(L[:-1] - L[1:], initial=0.0)), REL_TOL * np.abs(L).max() + rounding_allowance(model)


@pytest.mark.parametrize('seed,engine', cases(range(N_LONG)))
def test_long_fit_bound_rises(seed, engine):
    "300 sweeps, the bound never falling and the fitted attributes finite after them (the late sweeps of the grid)."
    X, params = long_problem(seed)
    fitted = []
    drop, allowed = bound_drops(X, params, engine, fitted)
    assert drop <= allowed, f"problem {seed} {params} ({engine}): the bound fell by {drop:.3g} (allowed {allowed:.3g})"
    assert not not_finite(fitted[0]), (seed, params, engine, not_finite(fitted[0]))



@pytest.mark.parametrize('seed,engine', cases(range(N_LONG)))
def test_long_fit_bound_rises_factorised(seed, engine):
    "The larger, nastier problems under the fully factorised posterior: 300 sweeps, the bound never falling."
    X, params = long_problem(seed)
    fitted = []
    drop, allowed = bound_drops(X, dict(params, posterior='factorised'), engine, fitted)
    assert drop <= allowed, (f"problem {seed} {params} factorised ({engine}): the bound fell by {drop:.3g} "
                             f"(allowed {allowed:.3g})")
    assert not not_finite(fitted[0]), (seed, params, engine, not_finite(fitted[0]))

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


@functools.lru_cache(maxsize=None)
def rank3_fit(noise):
    "The fit of `rank3()` in its own units that the rescaled fits are compared with: one fit a noise model, shared."
    return VBPCA(noise=noise, random_state=0).fit(rank3())


@pytest.mark.parametrize('scale', [1e-6, 1e-2, 1.0, 1e4, 1e7])
@pytest.mark.parametrize('offset', [0.0, 1e6, 1e8])
@pytest.mark.parametrize('noise', ['shared', 'per_feature'])
def test_equivariance(scale, offset, noise):
    "fit(a X + b) is fit(X) in the new units: same components kept, same relative error, bound shifted by -|O| log a."
    X = rank3()
    b = offset * np.random.default_rng(1).normal(size=X.shape[1])
    ref = rank3_fit(noise)                                              # read only: no test changes it
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
    ref, new = rank3_fit('shared'), VBPCA(random_state=0).fit(scale * X)    # 'shared': the default noise
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


# ---------------------------------------------------------------- VBPCA and VBPCAImputer on awkward input: the default size, the memory and time estimate, clear errors

def low_rank(N=60, M=8, D=3, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=(N, D)) @ r.normal(size=(D, M)) + 0.1 * r.normal(size=(N, M))


def quiet_fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return est.fit(X)


# -- A: the default n_components, the memory and time estimate

def test_default_n_components_fits_the_shape():
    from vbfa_lit.estimator import default_components, fit_cost
    assert default_components(943, 1682) == 50                           # MovieLens-100k: not 1681
    assert default_components(100, 10) == 9 and default_components(5, 30) == 4 and default_components(2, 1) == 1
    # MovieLens-100k with the default: well under a GB (with D = 1681 it was hundreds of GB)
    assert fit_cost(943, 1682, 50, 100_000, dense=False)[0] < 1e9 < fit_cost(943, 1682, 1681, 100_000, dense=False)[0]
    S = sparse.random(60, 120, density=0.3, random_state=0, format='csr')
    assert quiet_fit(VBPCA(missing_values='unstored', max_iter=1, random_state=0), S).n_components_ == 50
    assert quiet_fit(VBPCA(max_iter=1, random_state=0), low_rank(N=20, M=30)).n_components_ == 19
    assert quiet_fit(VBPCA(max_iter=1, random_state=0), low_rank(N=60, M=8)).n_components_ == 7   # as before
    assert 'min(n_samples - 1, n_features - 1, 50)' in ' '.join(VBPCA.__doc__.split())


def test_a_fit_that_cannot_fit_in_memory_is_refused_before_it_allocates(monkeypatch):
    # 200 x 300 with D = 150: about 0.5 GB estimated; pretend only 100 MB are available
    monkeypatch.setattr(estimator, 'available_memory', lambda: 100e6, raising=False)
    S = sparse.random(200, 300, density=0.1, random_state=0, format='csr')
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r'^n_components: a fit with n_components = 150 on 200 x 300 data needs '
                                             r'about 0\.5\d* GB .* 0\.1 GB are available'):
            VBPCA(150, missing_values='unstored', max_iter=1).fit(S)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6                                                    # refused before the covariances exist


def test_a_long_fit_warns_and_suggests_progress(monkeypatch):
    monkeypatch.setattr(estimator, 'SWEEP_FLOPS_PER_SECOND', 1e2, raising=False)    # a very slow machine
    X = low_rank()
    with pytest.warns(UserWarning, match=r'may take about .* progress=True'):
        quiet = VBPCA(max_iter=2, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', estimator.ConvergenceWarning)
            quiet.fit(X)
    with warnings.catch_warnings():                                      # with the bar on, nothing to suggest
        warnings.simplefilter('error', UserWarning)
        warnings.simplefilter('ignore', estimator.ConvergenceWarning)
        VBPCA(max_iter=2, random_state=0, progress=True).fit(X)


@pytest.mark.parametrize('kind', ['sparse', 'dense'])
def test_fit_cost_memory_is_within_its_stated_factor_of_the_measured_peak(kind):
    # the docstring states a measured peak of 0.45 to 1.2 times the estimate; the NumPy engine measured 0.8 to 1.2
    from vbfa_lit.estimator import fit_cost
    r = np.random.default_rng(1)
    N, M, D = 300, 200, 60
    if kind == 'sparse':
        X = sparse.random(N, M, density=0.3, random_state=1, format='csr', data_rvs=lambda k: r.normal(size=k))
        est, n_obs = VBPCA(D, missing_values='unstored', max_iter=2, tol=0, random_state=0, engine='numpy'), X.nnz
    else:
        X = r.normal(size=(N, M))
        X[r.random((N, M)) < 0.3] = np.nan
        est, n_obs = VBPCA(D, max_iter=2, tol=0, random_state=0, engine='numpy'), int((~np.isnan(X)).sum())
    tracemalloc.start()
    try:
        quiet_fit(est, X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    ratio = peak / fit_cost(N, M, D, n_obs, dense=(kind == 'dense'))[0]
    assert 0.45 <= ratio <= 1.2, ratio


def test_available_memory_reads_something_or_none():
    from vbfa_lit.estimator import available_memory
    avail = available_memory()
    assert avail is None or (isinstance(avail, int) and avail > 0)


def test_all_default_columns_effective_says_the_data_may_hold_more(monkeypatch):
    # the cap lowered to 3 so that a small rank-5 problem reaches it (a real one needs more than 50 components)
    monkeypatch.setattr(estimator, 'DEFAULT_MAX_COMPONENTS', 3, raising=False)
    X = low_rank(N=200, M=10, D=5)
    with pytest.warns(UserWarning, match=r'kept 3 of the 3 columns of the default n_components \(at most 3\)'):
        est = VBPCA(random_state=0).fit(X)
    assert est.n_components_ == est.n_effective_components_ == 3
    with warnings.catch_warnings():                                      # an explicit n_components: no warning
        warnings.simplefilter('error')
        VBPCA(3, random_state=0).fit(X)


# -- B: dates are not numbers

@pytest.mark.parametrize('column', [pd.date_range('2020-01-01', periods=30),
                                    pd.to_timedelta(np.arange(30), 'D'),
                                    pd.date_range('2020-01-01', periods=30, tz='UTC')])
def test_a_date_or_duration_column_is_refused_by_name(column):
    df = pd.DataFrame(low_rank(N=30, M=3), columns=['a', 'b', 'c']).assign(when=column)
    with pytest.raises(TypeError, match=r"^X: column 'when' holds .*(datetime|timedelta).* not numbers"):
        VBPCA().fit(df)


# -- C: the low items

def test_int8_duplicates_are_summed_in_float64():
    rows, cols = np.array([0, 0, 1, 2, 3, 0, 1, 2, 3]), np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    vals = np.array([100, 100, 3, 5, 7, 9, 2, 4, 1])
    S8 = sparse.coo_matrix((vals.astype(np.int8), (rows, cols)), shape=(4, 2))
    S64 = sparse.coo_matrix((vals.astype(float), (rows, cols)), shape=(4, 2))
    a = quiet_fit(VBPCA(missing_values='unstored', max_iter=5, random_state=0), S8)
    b = quiet_fit(VBPCA(missing_values='unstored', max_iter=5, random_state=0), S64)
    np.testing.assert_allclose(a.center_, [(200 + 3 + 5 + 7) / 4, (9 + 2 + 4 + 1) / 4])
    np.testing.assert_array_equal(a.mean_, b.mean_)


def test_huge_rows_give_numbers_not_nan():
    X = low_rank()
    est = quiet_fit(VBPCA(random_state=0), X)
    with warnings.catch_warnings():
        warnings.simplefilter('error')                                   # no overflow warnings either
        scores = est.score_samples(X[:3] * 1e200)
    assert np.all(scores == -np.inf), scores                              # density 0 in float64: -inf, not NaN
    # the fitted-units computation agrees with the data-units formula where both hold
    from scipy.stats import multivariate_normal
    C = est.components_.T @ est.components_ + est.noise_variance_ * np.eye(X.shape[1])
    np.testing.assert_allclose(est.score_samples(X[:5]), multivariate_normal(est.mean_, C).logpdf(X[:5]), rtol=1e-10)
    assert np.all(np.isfinite(est.score_samples(X[:5] * 1e100)))          # large but representable: a number
    row = np.full((1, X.shape[1]), 1e300)
    row[0, 0] = np.nan
    filled, std = est.impute(row, return_std=True)
    assert np.isfinite(std[0, 0]) and std[0, 0] > 1e290 and np.isfinite(filled[0, 0])
    mean, sd = est.predict_entries(row, [0], [0], return_std=True)
    assert np.isfinite(sd[0]) and sd[0] == pytest.approx(std[0, 0])


def test_huge_sparse_rows_score_minus_inf_not_nan():
    S = sparse.random(60, 8, density=0.6, random_state=3, format='csr')
    S.data = S.data * 5 + 1
    est = quiet_fit(VBPCA(missing_values='unstored', random_state=0), S)
    big = S[:3].copy()
    big.data = big.data * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert np.all(est.score_samples(big) == -np.inf)


@pytest.mark.parametrize('bad', ['no', 1, None, 0.0])
def test_return_std_must_be_a_bool(bad):
    X = low_rank()
    X[0, 0] = np.nan
    est = quiet_fit(VBPCA(random_state=0), X)
    with pytest.raises(TypeError, match=r'^return_std: expected True or False'):
        est.impute(X, return_std=bad)
    with pytest.raises(TypeError, match=r'^return_std: expected True or False'):
        est.predict_entries(X, [0], [0], return_std=bad)
    assert len(est.impute(X, return_std=np.True_)) == 2 and len(est.predict_entries(X, [0], [0], np.True_)) == 2
    with pytest.raises(TypeError, match=r"^The 'progress' parameter of VBPCA"):    # progress was checked already
        VBPCA(progress='yes').fit(X)


def test_impute_on_sparse_input_points_to_predict_entries():
    S = sparse.random(60, 8, density=0.6, random_state=3, format='csr')
    est = quiet_fit(VBPCA(missing_values='unstored', random_state=0), S)
    with pytest.raises(TypeError, match=r'^X: sparse input needs predict_entries\(X, rows, cols\) .*impute would fill'):
        est.impute(S)


def test_missing_values_accepts_any_nan_scalar():
    X = low_rank()
    X[0, 0] = np.nan
    ref = quiet_fit(VBPCA(random_state=0), X)
    for nan in (np.float32('nan'), np.float64('nan'), float('nan'), np.float16('nan')):
        np.testing.assert_array_equal(quiet_fit(VBPCA(missing_values=nan, random_state=0), X).elbo_, ref.elbo_)


def test_index_errors_print_the_real_value():
    X = low_rank()
    est = quiet_fit(VBPCA(random_state=0), X)
    with pytest.raises(ValueError, match=r'^rows: indices must lie in \[0, 60\), got range \[9223372036854775808, '
                                         r'9223372036854775808\]'):
        est.predict_entries(X, np.array([2 ** 63], dtype=np.uint64), np.array([0], dtype=np.uint64))


def test_a_sparse_dataframe_reads_unstored_as_missing():
    S = sparse.random(40, 6, density=0.5, random_state=4, format='csr')
    S.data = S.data * 4 + 1
    df = pd.DataFrame.sparse.from_spmatrix(S, columns=list('abcdef'))
    a = quiet_fit(VBPCA(missing_values='unstored', random_state=0), df)
    b = quiet_fit(VBPCA(missing_values='unstored', random_state=0), S)
    np.testing.assert_array_equal(a.elbo_, b.elbo_)
    assert list(a.feature_names_in_) == list('abcdef')
    np.testing.assert_allclose(a.transform(df), b.transform(S))
    # under missing_values=nan the unstored zeros are neither read as zeros nor guessed at
    with pytest.raises(TypeError, match=r"^X: column 'a' is a pandas SparseDtype column whose unstored entries are 0"):
        VBPCA().fit(df)
    # a sparse column whose unstored entries are NaN is read as missing in either mode
    dn = df.astype(pd.SparseDtype(float, np.nan))
    assert quiet_fit(VBPCA(random_state=0, max_iter=3), dn).n_features_in_ == 6


def test_a_dominating_prior_is_not_blamed_on_duplicated_columns():
    with pytest.warns(DegenerateDataWarning) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', estimator.ConvergenceWarning)
            VBPCA(b_tau=1e300, random_state=0, max_iter=20).fit(low_rank())
    text = ' '.join(str(w.message) for w in caught)
    assert 'set by its prior' in text and 'lower b_tau' in text and 'duplicated' not in text, text


def test_holdout_on_one_column_gives_the_real_reason_before_any_fit(monkeypatch):
    "No entry of one column can be held out, whatever is drawn: the error comes before the first fit, not after it."
    def no_fit(self, X, y=None): raise AssertionError('VBPCA.fit was called')
    monkeypatch.setattr(VBPCA, 'fit', no_fit)
    X = np.random.default_rng(5).normal(size=(500, 1))
    with pytest.raises(ValueError, match=r'^holdout: .*single column') as info:
        VBPCAImputer(calibrate='holdout', random_state=0).fit(X)
    assert 'raise holdout' not in str(info.value)
    few = np.random.default_rng(5).normal(size=(20, 5))          # at most 20 x 5 = 100 entries, and 29 are observed
    few[np.random.default_rng(6).permutation(100).reshape(20, 5) >= 29] = np.nan
    with pytest.raises(ValueError, match=r'^holdout: .* at least 30'): VBPCAImputer(calibrate='holdout').fit(few)


def test_set_output_polars_says_polars_is_missing(monkeypatch):
    X = low_rank()
    fitted = [quiet_fit(VBPCA(random_state=0), X), quiet_fit(VBPCAImputer(random_state=0), X)]
    monkeypatch.setitem(sys.modules, 'polars', None)                      # `import polars` raises ImportError
    for est in fitted:
        with pytest.raises(ImportError, match='polars'):
            est.set_output(transform='polars').transform(X)


if __name__ == '__main__':                     # a summary over many problems: python tests/test_reliability_estimator.py 3200
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
