"""The SymPy machinery of `vbfa_lit.symbolic`: expectations, read-offs and their refusals."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from vbfa_lit.symbolic import (GammaFactor, GaussianFactor, drop_constant, expectation,
                               gamma_readoff, gaussian_readoff)


@settings(max_examples=25, deadline=None)
@given(D=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_gaussian_readoff_recovers_a_random_quadratic_form(D, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(D, D)); Lam = A @ A.T + np.eye(D); h = rng.normal(size=D)
    v = GaussianFactor('v', D)
    expr = (-sp.Rational(1, 2) * (v.vector.T * sp.Matrix(Lam) * v.vector)[0]
            + (sp.Matrix(h).T * v.vector)[0] + sp.Symbol('c'))
    r = gaussian_readoff(expr, v)
    np.testing.assert_allclose(np.array(r.precision, dtype=float), Lam, rtol=1e-12)
    np.testing.assert_allclose(np.array(r.linear, dtype=float).ravel(), h, rtol=1e-12)
    np.testing.assert_allclose(np.array(r.mean(), dtype=float).ravel(), np.linalg.solve(Lam, h), rtol=1e-8)


@settings(max_examples=25, deadline=None)
@given(a=st.floats(0.1, 20), b=st.floats(0.1, 20))
def test_gamma_readoff_recovers_shape_and_rate(a, b):
    tau = GammaFactor(r'\tau')
    expr = (a - 1) * sp.log(tau.var) - b * tau.var + sp.Symbol('c')
    shape, rate = gamma_readoff(expr, tau)
    assert float(shape) == pytest.approx(a, rel=1e-12)
    assert float(rate) == pytest.approx(b, rel=1e-12)


def test_expectation_factorises_over_factors_and_uses_second_moments():
    x, w, tau = GaussianFactor('x', 2), GaussianFactor('w', 2), GammaFactor(r'\tau')
    expr = tau.var * x.vars[0] * x.vars[1] * w.vars[0] ** 2 + sp.log(tau.var) + x.vars[1]
    E = expectation(expr, [x, w, tau])
    expected = tau.mean * x.second[0, 1] * w.second[0, 0] + tau.mean_log + x.mean[1]
    assert sp.simplify(E - expected) == 0


def test_expectation_leaves_unlisted_variables_random():
    x, tau = GaussianFactor('x', 1), GammaFactor(r'\tau')
    E = expectation(tau.var * x.vars[0] ** 2, [tau])
    assert sp.simplify(E - tau.mean * x.vars[0] ** 2) == 0


def test_expectation_against_monte_carlo():
    rng = np.random.default_rng(11)
    x, tau = GaussianFactor('x', 2), GammaFactor(r'\tau')
    expr = tau.var * (1 - x.vars[0] + 2 * x.vars[1]) ** 2 - 3 * sp.log(tau.var) * 1
    m = np.array([0.3, -0.5]); S = np.array([[1.0, 0.3], [0.3, 0.5]]); a, b = 3.0, 1.5
    second = S + np.outer(m, m)
    from scipy.special import digamma
    values = {tau.mean: a / b, tau.mean_log: digamma(a) - np.log(b)}
    values.update({x.mean[i]: m[i] for i in range(2)})
    values.update({x.second[i, j]: second[i, j] for i in range(2) for j in range(2)})
    exact = float(expectation(expr, [x, tau]).subs(values))
    n = 400_000
    xs, ts = rng.multivariate_normal(m, S, n), rng.gamma(a, 1 / b, n)
    s = ts * (1 - xs[:, 0] + 2 * xs[:, 1]) ** 2 - 3 * np.log(ts)
    assert abs(s.mean() - exact) < 4 * s.std(ddof=1) / np.sqrt(n)


def test_drop_constant_keeps_only_terms_with_the_variables():
    x = GaussianFactor('x', 1)
    c = sp.Symbol('c')
    assert drop_constant(c + 2 * x.vars[0] + c * x.vars[0] ** 2, x.vars) == 2 * x.vars[0] + c * x.vars[0] ** 2


def test_refusals():
    x, tau = GaussianFactor('x', 1), GammaFactor(r'\tau')
    with pytest.raises(ValueError, match='not quadratic'):
        gaussian_readoff(x.vars[0] ** 3, x)
    with pytest.raises(ValueError, match='not of the form'):
        gamma_readoff(tau.var ** 2, tau)
    with pytest.raises(ValueError, match='not a polynomial'):
        expectation(sp.exp(x.vars[0]), [x])
    with pytest.raises(ValueError, match='degree 3'):
        expectation(x.vars[0] ** 3, [x])


def test_moment_symbols_of_subscripted_names_typeset_as_one_group():
    # SymPy's printer treats a bare `_1 ...` as a subscript running to the end of the name
    assert sp.latex(GammaFactor(r'\tau_1').mean) == r'\langle \tau_{1} \rangle'
    assert sp.latex(GaussianFactor(r'\mu_2').second[0]) == r'\langle {\mu_{2}}^{2} \rangle'
    assert sp.latex(GaussianFactor('x_n', 2).mean[1]) == r'\langle x_{n,2} \rangle'
