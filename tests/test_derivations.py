"""Every exported update and the bound agree with their SymPy derivations (the lessons show the same checks)."""
import numpy as np
import pytest
import sympy as sp

from vbfa_lit.ard import ARD, update_alpha
from vbfa_lit.notation import gamma_moments
from vbfa_lit.symbolic import evaluate, gamma_readoff, gaussian_readoff
from vbfa_lit.vbpca import (FixedAlpha, Prior, elbo, mean_field, observed, random_posterior, sq_error, sum_tau_ww,
                            sum_xx, symbolic_elbo, symbolic_values, symbolic_vbfa, update_mu, update_tau, update_W,
                            update_X)

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
    model = symbolic_vbfa(M, N, D, observed=OBSERVED, noise=noise, prior=prior)
    return Y, observed(Y), pr, q, model, symbolic_values(model, Y, q, pr)


CASES = [(D, noise, prior) for D in (1, 2, 3) for noise in ('per_feature', 'shared') for prior in ('broad', 'ard')]


def gaussian_from_derivation(model, factor, vals):
    r = gaussian_readoff(mean_field(model, factor), factor)
    P, h = evaluate(r.precision, vals), evaluate(r.linear, vals).ravel()
    return np.linalg.solve(P, h), P


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_gaussian_updates_match_their_derivations(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=D)
    tau = gamma_moments(q.a_tau, q.b_tau)[0]
    X, Sx = update_X(data, q.W, sum_tau_ww(data, q.W, q.Sw, tau), q.mu, tau)
    W, Sw = update_W(data, q.X, sum_xx(data, q.X, q.Sx), q.mu, tau, pr.w.moments(q)[0])
    mu, vmu = update_mu(data, q.W, q.X, tau, pr.beta)
    for k, f in model.X.items():
        mean, P = gaussian_from_derivation(model, f, vals)
        np.testing.assert_allclose(X[k - 1], mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.linalg.inv(Sx[(k - 1) % len(Sx)]), P, rtol=1e-9)
    for k, f in model.W.items():
        mean, P = gaussian_from_derivation(model, f, vals)
        np.testing.assert_allclose(W[k - 1], mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.linalg.inv(Sw[(k - 1) % len(Sw)]), P, rtol=1e-9)
    for k, f in model.mu.items():
        mean, P = gaussian_from_derivation(model, f, vals)
        np.testing.assert_allclose([mu[k - 1], 1 / vmu[k - 1]], [mean[0], P[0, 0]], rtol=1e-9)


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_gamma_updates_match_their_derivations(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=10 + D)
    err = sq_error(data, q.W, q.Sw, q.X, sum_xx(data, q.X, q.Sx), q.mu, q.vmu)
    a, b = update_tau(err, data.n_row, pr.a_tau, pr.b_tau, noise == 'shared')
    taus = list(dict.fromkeys(model.tau.values()))
    derived = np.array([[float(evaluate(e, vals)) for e in gamma_readoff(mean_field(model, f), f)] for f in taus])
    np.testing.assert_allclose(np.column_stack([a, b]), derived, rtol=1e-9)
    if prior == 'ard':
        a, b = update_alpha(q.W, q.Sw, pr.w.a_alpha, pr.w.b_alpha)
        derived = np.array([[float(evaluate(e, vals)) for e in gamma_readoff(mean_field(model, f), f)]
                            for f in model.alpha.values()])
        np.testing.assert_allclose(np.column_stack([a, b]), derived, rtol=1e-9)


@pytest.mark.parametrize('D,noise,prior', CASES)
def test_bound_matches_its_derivation(D, noise, prior):
    Y, data, pr, q, model, vals = problem(D, noise, prior, seed=20 + D)
    assert elbo(data, q, pr).total == pytest.approx(symbolic_elbo(model, Y, q, pr), rel=1e-11, abs=1e-9)


def test_a_wrong_update_would_be_caught():
    "The comparison is sharp: a posterior mean off by 1e-6 fails it."
    Y, data, pr, q, model, vals = problem(2, 'per_feature', 'ard', seed=0)
    tau = gamma_moments(q.a_tau, q.b_tau)[0]
    X, _ = update_X(data, q.W, sum_tau_ww(data, q.W, q.Sw, tau), q.mu, tau)
    mean, _ = gaussian_from_derivation(model, model.X[2], vals)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(X[1] + 1e-6, mean, rtol=1e-9, atol=1e-12)
