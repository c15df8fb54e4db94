"""Every exported update and the bound agree with their SymPy derivations (the lessons show the same checks)."""
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp

from vbfa_lit.ard import ARD, update_alpha
from vbfa_lit.notation import gamma_moments
from vbfa_lit.symbolic import evaluate, gamma_readoff, gaussian_readoff
from vbfa_lit.symbolic import mean_field, symbolic_elbo, symbolic_values, symbolic_vbfa
from vbfa_lit.vbpca import FixedAlpha, Prior, random_posterior
from vbfa_lit.engine import elbo, observed, sq_error, sum_tau_ww, sum_xx, update_mu, update_tau, update_W, update_X

M, N = 3, 3
OBSERVED = [(1, 1), (2, 1), (3, 1), (1, 2), (3, 2), (2, 3)]        # y_22, y_13, y_33 missing


def problem(D, noise, prior, seed):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(M, N))
    for m in range(1, M + 1):
        for n in range(1, N + 1):
            if (m, n) not in OBSERVED: Y[m - 1, n - 1] = np.nan
    shared, ard = noise == 'shared', prior == 'ard'
    pr = Prior(beta=0.5, a_tau=0.3, b_tau=0.7, w=ARD(0.4, 0.9) if ard else FixedAlpha(0.8))
    q = random_posterior(rng, M, N, D, shared, ard)
    model = symbolic_model(D, noise, prior)
    return Y, observed(Y), pr, q, model, symbolic_values(model, Y, q, pr)


@lru_cache(maxsize=None)
def symbolic_model(D, noise, prior):
    "The SymPy model of a case, built once (SymPy's expressions are immutable: every test of the case reads the same)."
    return symbolic_vbfa(M, N, D, observed=OBSERVED, noise=noise, prior=prior)


_MEAN_FIELDS, _READOFFS = {}, {}


def _key(f):
    "A factor's identity: its kind, name and size fix its symbols and moment symbols (`GaussianFactor`, `GammaFactor`)."
    return type(f).__name__, f.tex, len(f.vars)


def factor_mean_field(model, factor):
    """`mean_field(model, factor)` taken over the terms of the log joint that hold the factor's variables only, averaged
    over the factors those terms hold: the other terms average to constants of its optimum, which `mean_field` drops,
    and a factor absent from the terms leaves their expectation as it is, so the result is the same expression
    (`test_factor_mean_field_is_mean_field` compares the two) for a fraction of the SymPy work. Derived once per
    module for the same terms and factors: x_n, mu_m and tau hold the same terms with the broad and the ARD prior."""
    own = set(factor.vars)
    terms = sp.Add(*[t for t in sp.Add.make_args(model.log_joint) if t.free_symbols & own])
    held = [f for f in model.factors if f is factor or terms.free_symbols & set(f.vars)]
    key = (terms, _key(factor), frozenset(map(_key, held)))
    if key not in _MEAN_FIELDS:
        _MEAN_FIELDS[key] = mean_field(SimpleNamespace(factors=held, log_joint=terms), factor)
    return _MEAN_FIELDS[key]


def symbolic_gaussian(model, factor):
    "The Gaussian read-off of a factor's mean-field optimum, derived once per expression and factor (the costly part)."
    mf = factor_mean_field(model, factor)
    key = (mf, _key(factor))
    if key not in _READOFFS: _READOFFS[key] = gaussian_readoff(mf, factor)
    return _READOFFS[key]


def at(expr, vals):
    "`evaluate` given the values of the expression's own symbols (lambdify's work grows with the symbols it is given)."
    return evaluate(expr, {k: vals[k] for k in sp.sympify(expr).free_symbols})


CASES = [(D, noise, prior) for D in (1, 2, 3) for noise in ('per_feature', 'shared') for prior in ('broad', 'ard')]


def gaussian_from_derivation(model, factor, vals):
    r = symbolic_gaussian(model, factor)
    P, h = at(r.precision, vals), at(r.linear, vals).ravel()
    return np.linalg.solve(P, h), P


def gaussian_updates(data, pr, q, Sw_for_x=None, Sx_for_w=None, beta=None):
    "The exported Gaussian updates on one problem; the keyword arguments exist to plant mistakes."
    tau = gamma_moments(q.a_tau, q.b_tau)[0]
    X, Sx = update_X(data, q.W, sum_tau_ww(data, q.W, q.Sw if Sw_for_x is None else Sw_for_x, tau), q.mu, tau)
    W, Sw = update_W(data, q.X, sum_xx(data, q.X, q.Sx if Sx_for_w is None else Sx_for_w), q.mu, tau,
                     pr.w.moments(q)[0])
    mu, vmu = update_mu(data, q.W, q.X, tau, pr.beta if beta is None else beta)
    return X, Sx, W, Sw, mu, vmu


_DERIVED = {}


def derived_gaussians(model, vals):
    """(mean, precision) of every Gaussian factor's read-off at `vals`, evaluated once per model and problem (the
    mutants below compare four sets of updates against the same derivation): {factor id: (mean, P)}."""
    key = (id(model), tuple(sorted((str(k), float(v)) for k, v in vals.items())))
    if key not in _DERIVED:
        _DERIVED[key] = {id(f): gaussian_from_derivation(model, f, vals)
                         for fs in (model.X, model.W, model.mu) for f in fs.values()}
    return _DERIVED[key]


def derivation_gaps(model, vals, X, Sx, W, Sw, mu, vmu):
    "Largest relative gap between each updated factor (mean, precision) and the SymPy read-off: {factor: gap}."
    rel = lambda a, b: float(np.max(np.abs(np.asarray(a) - b) / (1e-12 + np.abs(b))))
    derived = derived_gaussians(model, vals)
    gaps = {}
    for name, factors, mean_, cov in (('x', model.X, X, Sx), ('w', model.W, W, Sw)):
        for k, f in factors.items():
            mean, P = derived[id(f)]
            gaps[f'{name}_{k}'] = max(rel(mean_[k - 1], mean), rel(np.linalg.inv(cov[(k - 1) % len(cov)]), P))
    for k, f in model.mu.items():
        mean, P = derived[id(f)]
        gaps[f'mu_{k}'] = max(rel(mu[k - 1], mean[0]), rel(1 / vmu[k - 1], P[0, 0]))
    return gaps


@pytest.mark.parametrize('noise,prior', [('per_feature', 'ard'), ('shared', 'broad')])
def test_factor_mean_field_is_mean_field(noise, prior):
    """The shortcut the tests below take gives `mean_field`'s own expression, for a factor of each kind (x_n, w_m, mu_m,
    tau, alpha_d) of a D = 2 model, with the noise shared or per feature."""
    model = symbolic_model(2, noise, prior)
    kinds = [model.X, model.W, model.mu, model.tau, model.alpha]
    for f in [next(iter(k.values())) for k in kinds if k]:
        assert sp.expand(factor_mean_field(model, f) - mean_field(model, f)) == 0, f


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_gaussian_updates_match_their_derivations(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=D)
    gaps = derivation_gaps(model, vals, *gaussian_updates(data, pr, q))
    assert max(gaps.values()) < 1e-9, gaps


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_gamma_updates_match_their_derivations(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=10 + D)
    err = sq_error(data, q.W, q.Sw, q.X, q.Sx, sum_xx(data, q.X, q.Sx), q.mu, q.vmu)
    a, b = update_tau(err, data.n_row, pr.a_tau, pr.b_tau, noise == 'shared')
    taus = list(dict.fromkeys(model.tau.values()))
    derived = np.array([[float(at(e, vals)) for e in gamma_readoff(factor_mean_field(model, f), f)] for f in taus])
    np.testing.assert_allclose(np.column_stack([a, b]), derived, rtol=1e-9)
    if prior == 'ard':
        a, b = update_alpha(q.W, q.Sw, pr.w.a_alpha, pr.w.b_alpha)
        derived = np.array([[float(at(e, vals)) for e in gamma_readoff(factor_mean_field(model, f), f)]
                            for f in model.alpha.values()])
        np.testing.assert_allclose(np.column_stack([a, b]), derived, rtol=1e-9)


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_bound_matches_its_derivation(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=20 + D)
    assert elbo(data, q, pr).total == pytest.approx(symbolic_elbo(model, Y, q, pr), rel=1e-11, abs=1e-9)


MUTANTS = {  # plausible derivation mistakes, each planted in the inputs of the real exported updates
    'missing entries read as observed zeros': dict(data=lambda Y: observed(np.nan_to_num(Y))),
    '<w w^T> without the covariance of q(w)': dict(kw=lambda q: dict(Sw_for_x=0 * q.Sw)),
    '<x x^T> without the covariance of q(x)': dict(kw=lambda q: dict(Sx_for_w=0 * q.Sx)),
    'the prior precision of mu dropped': dict(kw=lambda q: dict(beta=0.0)),
}


@pytest.mark.parametrize('mutant', list(MUTANTS))
def test_a_wrong_update_would_be_caught(mutant):
    "Each planted mistake moves some factor far from its derivation, so the checks above would fail on it."
    Y, data, pr, q, model, vals = problem(2, 'per_feature', 'ard', seed=0)
    m = MUTANTS[mutant]
    data = m['data'](Y) if 'data' in m else data
    gaps = derivation_gaps(model, vals, *gaussian_updates(data, pr, q, **m.get('kw', lambda q: {})(q)))
    assert max(gaps.values()) > 1e-3, gaps