"""The worked solutions of the exercises of lessons 00, 01 and 03 compute what their text says (01c's are in test_ppca.py)."""
import warnings

import numpy as np
import pytest

from vbfa_lit.ard import ARD, effective_components
from vbfa_lit.data import make_bishop_example
from vbfa_lit.vbpca import FixedAlpha, Prior, fit_vbfa, observed, sweep

BISHOP = Prior(beta=1e-3, a_tau=1e-3, b_tau=1e-3, w=ARD(1e-3, 1e-3))


def _fit(T, prior=BISHOP):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return fit_vbfa(observed(T.T), D=9, prior=prior, shared=True, rng=0, max_iter=3000, tol=1e-8)


@pytest.fixture(scope='module')
def bishop_fit():
    T = make_bishop_example(random_state=1999).X
    return T, _fit(T)


def test_03_exercise_1_a_switched_off_column_stays_off(bishop_fit):
    T, fit = bishop_fit
    keep = effective_components(fit.q)
    q1, _ = sweep(observed(T.T), fit.q, BISHOP, True)
    off = ~keep
    assert off.sum() == 5
    assert np.abs(fit.q.W[:, off]).max() < 1e-8 * np.abs(fit.q.W[:, keep]).max()
    before, after = fit.q.b_alpha / fit.q.a_alpha, q1.b_alpha / q1.a_alpha
    np.testing.assert_allclose(after[off], before[off], rtol=1e-3)


def test_03_exercise_2_fewer_columns_at_N_20_four_at_N_50():
    kept20 = [int(effective_components(_fit(make_bishop_example(20, random_state=s).X).q).sum())
              for s in range(1999, 2004)]
    kept50 = [int(effective_components(_fit(make_bishop_example(50, random_state=s).X).q).sum())
              for s in range(1999, 2004)]
    assert kept20 == [3, 3, 2, 3, 3]
    assert kept50 == [4] * 5


def test_03_exercise_3_a_fixed_alpha_keeps_every_column(bishop_fit):
    T, _ = bishop_fit
    fb = _fit(T, Prior(beta=1e-3, a_tau=1e-3, b_tau=1e-3, w=FixedAlpha(1e-3)))
    sizes = np.sort(np.sum(fb.q.W**2, 0))[::-1]
    assert effective_components(fb.q).sum() == 9
    assert 8 < sizes[0] < 10 and 1 < sizes[-1] < 1.6


# --- lesson 00


def test_00_exercise_1_gamma_variance_from_kappa():
    import sympy as sp
    a, b = sp.symbols('a b', positive=True)
    eta1, eta2 = sp.symbols('eta1 eta2', real=True)
    kappa = sp.loggamma(eta1 + 1) - (eta1 + 1) * sp.log(-eta2)
    assert sp.simplify(sp.diff(kappa, eta2, 2).subs({eta1: a - 1, eta2: -b}) - a / b**2) == 0


def test_00_exercise_2_gamma_kl_stationary_only_at_the_prior():
    import sympy as sp
    a, b, a0, b0 = sp.symbols('a b a_0 b_0', positive=True)
    kl = ((a - a0) * sp.digamma(a) - sp.loggamma(a) + sp.loggamma(a0) + a0 * sp.log(b / b0) + a * (b0 - b) / b)
    db = sp.solve(sp.diff(kl, b), b)
    assert len(db) == 1 and sp.simplify(db[0] - a * b0 / a0) == 0
    da = sp.diff(kl, a).subs(b, db[0])
    assert sp.simplify(da - (a - a0) * (sp.polygamma(1, a) - 1 / a)) == 0
    from scipy.special import polygamma
    grid = np.logspace(-3, 4, 200)
    assert np.all(polygamma(1, grid) > 1 / grid)                    # psi'(a) > 1/a: a = a0 is the only root


def test_00_exercise_3_gaussian_kl_formula():
    from vbfa_lit.notation import gaussian_kl
    rng = np.random.default_rng(1)
    for _ in range(10):
        m, m0 = rng.normal(size=(2, 2))
        A, B = rng.normal(size=(2, 2, 2))
        S, S0 = A @ A.T + 2 * np.eye(2), B @ B.T + 2 * np.eye(2)
        P0 = np.linalg.inv(S0)
        formula = 0.5 * (np.trace(P0 @ S) + (m0 - m) @ P0 @ (m0 - m) - 2 + np.log(np.linalg.det(S0) / np.linalg.det(S)))
        np.testing.assert_allclose(gaussian_kl(m, S, m0, S0), formula, rtol=1e-12, atol=1e-14)


def test_00_exercise_4_shape_for_one_percent():
    from scipy.optimize import brentq
    from scipy.special import digamma
    approx = -1 / (2 * np.log(0.99))
    exact = brentq(lambda a: np.exp(digamma(a)) / a - 0.99, 1, 1000)
    assert round(approx, 1) == 49.7 and round(exact, 1) == 49.9


# --- lesson 01


def test_01_exercise_1_known_mean_changes_only_the_second_moment():
    import sympy as sp
    from vbfa_lit.symbolic import GammaFactor, drop_constant, gamma_readoff
    N = 3
    ys = sp.symbols(f'y_1:{N + 1}', real=True)
    a0, b0, mu0 = sp.Symbol('a_0', positive=True), sp.Symbol('b_0', positive=True), sp.Symbol('mu_0', real=True)
    tau = GammaFactor(r'\tau'); t = tau.var
    log_joint = sum(sp.log(t) / 2 - t / 2 * (yn - mu0)**2 for yn in ys) + (a0 - 1) * sp.log(t) - b0 * t
    shape, rate = gamma_readoff(drop_constant(log_joint, [t, sp.log(t)]), tau)
    assert sp.simplify(shape - a0 - sp.Rational(N, 2)) == 0
    assert sp.simplify(rate - b0 - sum((yn - mu0)**2 for yn in ys) / 2) == 0


def test_01_exercise_2_vector_mean_decouples():
    import sympy as sp
    from vbfa_lit.symbolic import GammaFactor, GaussianFactor, drop_constant, expectation, gaussian_readoff
    N = 3
    beta = sp.Symbol('beta', positive=True)
    tau, mu = GammaFactor(r'\tau'), GaussianFactor(r'\mu', 2)
    t = tau.var
    Ys = sp.Matrix(2, N, lambda i, j: sp.Symbol(f'y_{{{i + 1},{j + 1}}}', real=True))
    lj = (sum(-t / 2 * ((Ys[:, n] - mu.vector).T * (Ys[:, n] - mu.vector))[0] for n in range(N))
          - beta / 2 * (mu.vector.T * mu.vector)[0] + N * sp.log(t))
    q = gaussian_readoff(drop_constant(expectation(lj, [tau]), mu.vars), mu)
    prec = beta + N * tau.mean
    assert sp.simplify(q.precision - prec * sp.eye(2)) == sp.zeros(2, 2)
    expected = sp.Matrix([tau.mean * sum(Ys[i, :]) / prec for i in range(2)])
    assert sp.simplify(q.mean() - expected) == sp.zeros(2, 1)


def test_01_exercise_3_lognormal_mean():
    # Monte-Carlo error of the mean of exp(s), s ~ N(0.3, 0.5^2), n = 1e6: sd(exp(s)) / 1000, about 7e-4; 4 sigma
    rng = np.random.default_rng(0)
    s = rng.normal(0.3, 0.5, 1_000_000)
    e = np.exp(s)
    assert abs(e.mean() - np.exp(0.3 + 0.25 / 2)) < 4 * e.std() / 1000
    from vbfa_lit.symbolic import GaussianFactor, expectation
    import sympy as sp
    mu = GaussianFactor(r'\mu')
    with pytest.raises(ValueError, match='not a polynomial'): expectation(sp.exp(mu.vars[0]), [mu])


def test_06_exercise_1_prior_on_q_with_and_without_the_factorial():
    import math
    from vbfa_lit.rjmcmc import exact_posterior_q
    g1 = [8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876]
    np.testing.assert_allclose(exact_posterior_q(g1, 1000, likelihood=False), 0.2, atol=1e-4)   # grid: 4e-5
    p_un = exact_posterior_q(g1, 1000, likelihood=False, prior='unordered')
    w = 1 / np.array([math.factorial(q + 1) for q in range(1, 6)])
    np.testing.assert_allclose(p_un, w / w.sum(), atol=1e-5)     # the quadrature grid: about 2e-6
# --- lesson 07


def test_07_exercise_1_one_sided_limits_of_H3():
    from vbfa_lit.stiefel import householder_matrix
    tail = np.array([0.6, -0.8])
    H_pos, H_neg = householder_matrix(np.r_[1e-12, tail]), householder_matrix(np.r_[-1e-12, tail])
    assert round(np.linalg.det(H_pos), 6) == 1.0 and round(np.linalg.det(H_neg), 6) == -1.0
    plane = np.linalg.qr(np.column_stack([np.r_[0.0, tail], [1.0, 0.0, 0.0]]))[0]
    normal = np.cross(plane[:, 0], plane[:, 1])
    np.testing.assert_allclose(H_pos @ H_neg @ plane, plane, atol=1e-10)
    np.testing.assert_allclose(H_pos @ H_neg @ normal, -normal, atol=1e-10)
    # n = 2: the two limits agree
    np.testing.assert_allclose(householder_matrix([1e-12, 1.0]), householder_matrix([-1e-12, 1.0]), atol=1e-10)


def test_07_exercise_2_uniform_entries_are_not_uniform_directions():
    from scipy import stats
    from vbfa_lit.stiefel import householder_to_stiefel
    rng = np.random.default_rng(0)
    for D in (2, 3, 30):
        cube = householder_to_stiefel([rng.uniform(-1, 1, size=(20_000, D - q)) for q in range(2)])
        gauss = householder_to_stiefel([rng.normal(size=(20_000, D - q)) for q in range(2)])
        beta = stats.beta(0.5, (D - 1) / 2).cdf
        assert stats.kstest(cube[:, 0, 0] ** 2, beta).pvalue < 1e-6
        assert stats.kstest(gauss[:, 0, 0] ** 2, beta).pvalue > 1e-4


def test_07_exercise_3_the_lengths_of_the_vectors_do_not_matter():
    from vbfa_lit.stiefel import householder_to_stiefel
    rng = np.random.default_rng(1)
    vs = [rng.normal(size=7 - q) for q in range(3)]
    scaled = [v * s for v, s in zip(vs, rng.uniform(0.01, 100, size=3))]
    np.testing.assert_allclose(householder_to_stiefel(scaled), householder_to_stiefel(vs), atol=1e-13)
    D, Q = 7, 3
    assert (D * Q - Q * (Q - 1) // 2) - (D * Q - Q * (Q + 1) // 2) == Q


def test_07_exercise_4_Q_1_is_chi_D():
    from scipy import stats
    from vbfa_lit.stiefel import singular_value_logpdf
    s = np.linspace(0.05, 6, 50)[:, None]
    err = max(np.abs(singular_value_logpdf(s, D) - stats.chi(D).logpdf(s[:, 0])).max() for D in (1, 2, 5, 30))
    assert err < 1e-10


# --- lesson 08


def _ring():
    from vbfa_lit.stiefel import sample_stiefel
    rng = np.random.default_rng(0)
    W = sample_stiefel(5, 2, random_state=rng) * np.array([3.0, 1.0])
    X = rng.standard_normal((150, 2)) @ W.T + 0.1 * rng.standard_normal((150, 5))
    return W, X


def test_08_exercise_1_only_the_signs_are_left():
    from vbfa_lit.householder_ppca import ppca_log_likelihood
    W0, X0 = _ring()
    signed_perms = [np.diag(s) @ P for P in (np.eye(2), np.eye(2)[::-1]) for s in ((1, 1), (1, -1), (-1, 1), (-1, -1))]

    def svd_form(W):
        n = np.linalg.norm(W, axis=0)
        return abs(W[:, 0] @ W[:, 1]) < 1e-12 and n[0] > n[1]
    kept = [R for R in signed_perms if svd_form(W0 @ R)]
    assert len(kept) == 4 and all(np.allclose(np.abs(R), np.eye(2)) for R in kept)
    t = 0.3
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    ref = ppca_log_likelihood(X0, W0, 0.1, X0.mean(0))
    assert max(abs(ppca_log_likelihood(X0, W0 @ R, 0.1, X0.mean(0)) - ref) for R in signed_perms + [rot]) < 1e-8
    assert not svd_form(W0 @ rot)


def test_08_exercise_2_align_signs_before_rhat():
    from vbfa_lit.householder_ppca import split_rhat
    W_ring, _ = _ring()
    rng = np.random.default_rng(0)
    draws = W_ring + 0.05 * rng.standard_normal((4, 500, 5, 2))
    draws[2:, :, :, 1] *= -1
    aligned = draws * np.sign(np.einsum('cndq,dq->cnq', draws, W_ring))[:, :, None, :]
    gram = np.einsum('cndq,cneq->cnde', draws, draws)
    assert np.nanmax(split_rhat(draws)) > 1.5
    assert np.nanmax(split_rhat(aligned)) < 1.02 and np.nanmax(split_rhat(gram)) < 1.02


def test_08_exercise_3_half_normal_sigma_shrinks_the_entries():
    from scipy import stats
    from vbfa_lit.stiefel import haar_orthogonal, sample_stiefel
    rng = np.random.default_rng(3)
    n = 20_000
    sigma_hn = -np.sort(-np.abs(rng.standard_normal((n, 2))), axis=-1)
    WR = (sample_stiefel(5, 2, size=n, random_state=rng) * sigma_hn[:, None, :]) @ haar_orthogonal(2, size=n, random_state=rng)
    e = WR[:, 0, 0]
    se = e.var() * np.sqrt(2 / n) * 2          # generous: the entry is heavier-tailed than a Gaussian
    assert abs(e.var() - 0.2) < 4 * se
    assert stats.kstest(e, 'norm').pvalue < 1e-10


def test_08_exercise_4_same_statistics_same_likelihood():
    from scipy import stats
    from vbfa_lit.householder_ppca import ppca_log_likelihood
    from vbfa_lit.stiefel import haar_orthogonal
    W_ring, X_ring = _ring()
    rng = np.random.default_rng(4)
    N = len(X_ring)
    ones = np.ones((N, 1)) / np.sqrt(N)
    B = np.linalg.qr(np.hstack([ones, rng.standard_normal((N, N - 1))]))[0][:, 1:]
    O = ones @ ones.T + B @ haar_orthogonal(N - 1, random_state=rng) @ B.T
    X2 = X_ring.mean(0) + O @ (X_ring - X_ring.mean(0))
    dense = lambda X: stats.multivariate_normal(X_ring.mean(0), W_ring @ W_ring.T + 0.01 * np.eye(5)).logpdf(X).sum()
    assert np.abs(X2 - X_ring).max() > 0.5
    assert abs(dense(X2) - dense(X_ring)) < 1e-8 * abs(dense(X_ring))
    assert abs(ppca_log_likelihood(X2, W_ring, 0.1, X_ring.mean(0)) - dense(X_ring)) < 1e-8 * abs(dense(X_ring))


# --- lesson 06a


def _fit_term(lam, N):
    d = len(lam)
    return np.array([-N / 2 * np.sum(np.log(lam[:k])) - N * (d - k) / 2 * np.log(lam[k:].mean()) for k in range(d)])


def test_06a_exercise_1_fit_rises_occam_falls_on_noise():
    from vbfa_lit.evidence import laplace_evidence
    X_noise = np.random.default_rng(1).normal(size=(200, 8))
    lam = np.linalg.eigvalsh(np.cov(X_noise.T))[::-1]
    fit = _fit_term(lam, len(X_noise))
    ev = laplace_evidence(X_noise)
    occam = ev.log_evidence - fit
    assert np.all(np.diff(fit) > 0) and np.all(np.diff(occam) < 0)
    assert 20 < fit[-1] - fit[0] < 24 and -43 < occam[-1] - occam[0] < -39
    assert ev.log_evidence.argmax() == 0


def test_06a_exercise_2_bic_drops_the_weak_component_more_often():
    from vbfa_lit.evidence import laplace_evidence

    def bic(X):
        N, d = X.shape
        lam = np.linalg.eigvalsh(np.cov(X.T))[::-1]
        k = np.arange(d); m = d * k - k * (k + 1) / 2
        return _fit_term(lam, N) - (m + k) / 2 * np.log(N)
    rates = {}
    for noise, n in [(1.0, 100), (0.1, 100), (1.0, 1000)]:
        variances = np.array([10, 8, 6, 4, 2] + [noise] * 5)
        picks = np.array([[laplace_evidence(X).log_evidence.argmax(), bic(X).argmax()]
                          for rep in range(40)
                          for rng in [np.random.default_rng(1000 + rep)]
                          for X in [rng.normal(size=(n, 10)) * np.sqrt(variances)
                                    @ np.linalg.qr(rng.normal(size=(10, 10)))[0].T]])
        rates[noise, n] = (picks == 5).mean(0)
    lap, b = rates[1.0, 100]
    assert 0.7 <= lap <= 0.95 and 0.3 <= b <= 0.6 and b < lap
    assert rates[0.1, 100].tolist() == [1.0, 1.0] and min(rates[1.0, 1000]) >= 0.95


def test_06a_exercise_3_units_shift_the_evidence_not_p():
    from vbfa_lit.evidence import laplace_evidence
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 10)) * np.sqrt([10, 8, 6, 4, 2] + [1] * 5)
    ev1, ev2 = laplace_evidence(X), laplace_evidence(1000 * X)
    shift = ev2.log_evidence - ev1.log_evidence
    assert np.ptp(shift) < 1e-6 * abs(shift[0])
    np.testing.assert_allclose(shift[0], -X.size * np.log(1000), rtol=1e-9)
    np.testing.assert_allclose(ev2.p, ev1.p, atol=1e-12)
