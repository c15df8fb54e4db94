"""The fully factorised posterior (Raiko, Ilin & Karhunen 2007; lesson 15): no update lowers the bound on randomised
problems, D = 1 is lesson 03's sweep, and each coordinate's mean update is one Gauss-Seidel step on the full
posterior's linear system."""
import numpy as np
import pytest

from vbfa_lit.ard import ARD
from vbfa_lit.factorised import diagonal_covariances, factorised_q_w, factorised_q_x, factorised_sweep
from vbfa_lit.vbpca import Prior, random_posterior, reference_bound, reference_q_mu, reference_q_tau, reference_sweep


def diag(S): return diagonal_covariances(np.diagonal(S, axis1=1, axis2=2).copy())


def problem(seed, D=None):
    rng = np.random.default_rng(seed)
    M, N = rng.integers(1, 10), rng.integers(1, 14)
    D = rng.integers(1, 6) if D is None else D
    Y = rng.normal(size=(M, N)) * 10.0 ** rng.uniform(-3, 3) + rng.normal() * 10.0 ** rng.uniform(-3, 3)
    Y[rng.random((M, N)) < rng.uniform(0, 0.8)] = np.nan
    if seed % 5 == 0: Y[rng.integers(M)] = np.nan                 # a feature never observed
    if seed % 7 == 0: Y[:, rng.integers(N)] = np.nan              # a sample with no observation
    shared, ard = bool(seed % 3 == 0), bool(seed % 2 == 0)
    prior = Prior(w=ARD()) if ard else Prior()
    q = random_posterior(rng, M, N, D, shared=shared, ard=ard)
    return Y, q._replace(Sx=diag(q.Sx), Sw=diag(q.Sw)), prior, shared


@pytest.mark.parametrize('seed', range(200))
def test_no_update_lowers_the_bound(seed):
    Y, q, prior, shared = problem(seed)
    steps = [lambda q: factorised_q_x(Y, q), lambda q: factorised_q_w(Y, q, prior),
             lambda q: reference_q_mu(Y, q, prior), lambda q: reference_q_tau(Y, q, prior, shared), prior.w.update] * 4
    before = reference_bound(Y, q, prior)
    for i, step in enumerate(steps):
        q = step(q)
        after = reference_bound(Y, q, prior)
        assert np.isfinite(after)
        assert after >= before - 1e-10 * max(1.0, abs(before)), (i % 5, before, after)
        before = after


@pytest.mark.parametrize('seed', range(20))
def test_one_component_is_lesson_02s_sweep(seed):
    Y, q, prior, shared = problem(seed, D=1)
    for a, b in zip(factorised_sweep(Y, q, prior, shared), reference_sweep(Y, q, prior, shared)):
        if a is not None: np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('seed', range(20))
def test_the_update_of_x_is_gauss_seidel_on_the_full_system(seed):
    "Coordinate d's new mean solves row d of P x = h with coordinates < d new and > d old; its variance is 1 / P_dd."
    Y, q, prior, _ = problem(seed)
    O, (M, N), D = ~np.isnan(Y), Y.shape, q.W.shape[1]
    tau = np.broadcast_to(q.a_tau / q.b_tau, (M,))
    WW = np.einsum('md,me->mde', q.W, q.W) + q.Sw                        # <w_m w_m^T> (diagonal Sw)
    P = np.eye(D) + np.einsum('mn,m,mde->nde', O, tau, WW)
    h = (tau[:, None] * np.where(O, Y - q.mu[:, None], 0.0)).T @ q.W
    x = q.X.copy()
    for d in range(D):
        x[:, d] = (h[:, d] - np.einsum('ne,ne->n', np.delete(P[:, d, :], d, 1), np.delete(x, d, 1))) / P[:, d, d]
    new = factorised_q_x(Y, q)
    np.testing.assert_allclose(new.X, x, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(x).max()))
    np.testing.assert_allclose(np.diagonal(new.Sx, axis1=1, axis2=2), 1 / np.diagonal(P, axis1=1, axis2=2), rtol=1e-12)
    assert np.all(new.Sx[:, ~np.eye(D, dtype=bool)] == 0)                # still factorised


def test_the_factorised_variance_is_never_wider_than_the_full_marginal():
    "Exercise 1 of the lesson: 1 / P_dd <= (P^-1)_dd for the same moments of W."
    for seed in range(30):
        Y, q, prior, _ = problem(seed)
        full = reference_sweep(Y, q, prior)                            # any positive definite P will do
        P = np.linalg.inv(full.Sx)
        assert np.all(1 / np.diagonal(P, axis1=1, axis2=2) <= np.diagonal(full.Sx, axis1=1, axis2=2) * (1 + 1e-12))


def test_a_fit_reaches_the_full_fits_predictions_below_its_bound():
    rng = np.random.default_rng(0)
    M, N, D = 40, 30, 2
    Y = rng.normal(size=(M, D)) @ rng.normal(size=(N, D)).T + 0.3 * rng.normal(size=(M, N))
    Y[rng.random((M, N)) < 0.3] = np.nan
    q0, prior = random_posterior(rng, M, N, D, shared=True), Prior()
    q0 = q0._replace(Sx=diag(q0.Sx), Sw=diag(q0.Sw))
    qf, qv = q0, q0
    for _ in range(300):
        qf, qv = factorised_sweep(Y, qf, prior, True), reference_sweep(Y, qv, prior, True)
    assert reference_bound(Y, qf, prior) < reference_bound(Y, qv, prior)      # a smaller family, a lower bound
    O = ~np.isnan(Y)
    fit = lambda q: (q.W @ q.X.T + q.mu[:, None])[O]
    assert np.sqrt(np.mean((fit(qf) - fit(qv)) ** 2)) < 0.05 * np.nanstd(Y)
