"""Gaussian and Gamma helpers of `vbfa_lit.notation` against scipy.stats and Monte Carlo."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from vbfa_lit.notation import (gamma_entropy, gamma_expected_log_pdf, gamma_kl, gamma_moments,
                               gaussian_entropy, gaussian_expected_log_pdf, gaussian_kl,
                               gaussian_second_moment)

positive = st.floats(0.05, 50.0)


def random_spd(rng, D, size=()):
    A = rng.normal(size=size + (D, D))
    return A @ np.swapaxes(A, -1, -2) + 0.5 * np.eye(D)


@settings(max_examples=60, deadline=None)
@given(a=positive, b=positive)
def test_gamma_moments_and_entropy_match_scipy(a, b):
    dist = stats.gamma(a=a, scale=1 / b)
    mean, _ = gamma_moments(a, b)
    np.testing.assert_allclose(mean, dist.mean(), rtol=1e-12)
    np.testing.assert_allclose(gamma_entropy(a, b), dist.entropy(), rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(a=positive, b=positive, a0=positive, b0=positive)
def test_gamma_kl_nonnegative_and_zero_at_equality(a, b, a0, b0):
    assert gamma_kl(a, b, a0, b0) >= -1e-12
    assert abs(gamma_kl(a, b, a, b)) < 1e-10


def test_gamma_mean_log_and_kl_by_monte_carlo():
    rng = np.random.default_rng(1)
    a, b, a0, b0 = 3.5, 2.0, 1.2, 0.7
    samples = rng.gamma(a, 1 / b, size=200_000)
    _, mean_log = gamma_moments(a, b)
    log_ratio = stats.gamma.logpdf(samples, a, scale=1 / b) - stats.gamma.logpdf(samples, a0, scale=1 / b0)
    for estimate, exact in [(np.log(samples), mean_log), (log_ratio, gamma_kl(a, b, a0, b0))]:
        se = estimate.std(ddof=1) / np.sqrt(estimate.size)
        assert abs(estimate.mean() - exact) < 4 * se  # 4 standard errors: false alarm rate ~6e-5


def test_gamma_expected_log_pdf_is_prior_log_density_at_a_point_mass():
    # q concentrated at theta: <theta> = theta, <log theta> = log theta
    theta, a0, b0 = 1.7, 2.5, 0.8
    np.testing.assert_allclose(gamma_expected_log_pdf(a0, b0, theta, np.log(theta)),
                               stats.gamma.logpdf(theta, a0, scale=1 / b0), rtol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_gamma_rejects_bad_parameters_naming_them(bad):
    with pytest.raises(ValueError, match="`a`"):
        gamma_moments(bad, 1.0)
    with pytest.raises(ValueError, match="`b0`"):
        gamma_kl(1.0, 1.0, 1.0, bad)


@pytest.mark.parametrize("D", [1, 2, 3, 5])
def test_gaussian_entropy_and_kl_match_scipy_and_closed_form(D):
    rng = np.random.default_rng(D)
    m, m0 = rng.normal(size=(2, 4, D))
    S, S0 = random_spd(rng, D, (4,)), random_spd(rng, D, (4,))
    H = gaussian_entropy(S)
    kl = gaussian_kl(m, S, m0, S0)
    assert H.shape == kl.shape == (4,)
    for k in range(4):
        np.testing.assert_allclose(H[k], stats.multivariate_normal(m[k], S[k]).entropy(), rtol=1e-12)
        P0 = np.linalg.inv(S0[k])
        d = m0[k] - m[k]
        closed = 0.5 * (np.trace(P0 @ S[k]) + d @ P0 @ d - D
                        + np.linalg.slogdet(S0[k])[1] - np.linalg.slogdet(S[k])[1])
        np.testing.assert_allclose(kl[k], closed, rtol=1e-10)
    np.testing.assert_allclose(gaussian_kl(m, S, m, S), 0, atol=1e-10)


def test_gaussian_expected_log_pdf_by_monte_carlo():
    rng = np.random.default_rng(7)
    D = 3
    m, m0 = rng.normal(size=(2, D))
    S, S0 = random_spd(rng, D), random_spd(rng, D)
    x = rng.multivariate_normal(m, S, size=200_000)
    logp = stats.multivariate_normal(m0, S0).logpdf(x)
    se = logp.std(ddof=1) / np.sqrt(logp.size)
    assert abs(logp.mean() - gaussian_expected_log_pdf(m, S, m0, S0)) < 4 * se


def test_gaussian_second_moment_batched():
    rng = np.random.default_rng(3)
    m, S = rng.normal(size=(6, 2)), random_spd(rng, 2, (6,))
    expected = np.stack([S[k] + np.outer(m[k], m[k]) for k in range(6)])
    np.testing.assert_allclose(gaussian_second_moment(m, S), expected)


def test_gaussian_rejects_non_spd_covariance_naming_it():
    with pytest.raises(ValueError, match="`cov`"):
        gaussian_entropy(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="`cov0`"):
        gaussian_kl(np.zeros(2), np.eye(2), np.zeros(2), -np.eye(2))
