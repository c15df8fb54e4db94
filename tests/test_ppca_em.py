"""EM for probabilistic PCA (`vbfa_lit.ppca.ppca_em`, lesson 01): it never lowers the likelihood, reaches the
closed-form maximum at its own measured linear rate, and names the argument of bad input."""
import numpy as np
import pytest
from scipy.linalg import subspace_angles

from vbfa_lit.data import make_ppca
from vbfa_lit.ppca import ppca_log_likelihood, ppca_ml

PROBLEMS = [(200, 6, [2.5, 1.5]), (80, 10, [3.0, 2.0, 1.5]), (300, 5, [2.0])]


def _problem(i):
    n, m, scales = PROBLEMS[i]
    X = make_ppca(n, m, scales, noise_std=0.7, random_state=i).X
    ml = ppca_ml(X, len(scales))
    return X, len(scales), ml, ppca_log_likelihood(X, ml.W, ml.sigma2, ml.mean)


@pytest.mark.parametrize('i', range(len(PROBLEMS)))
def test_em_never_lowers_the_log_likelihood(i):
    from vbfa_lit.ppca import ppca_em
    X, D, _, best = _problem(i)
    for seed in range(3):
        ll = ppca_em(X, D, max_iter=300, tol=0, random_state=seed).log_likelihood
        # rounding of a sum of N M terms of size ~|ll|: 1e-12 relative is far above it, far below any real step
        assert np.diff(ll).min() >= -1e-12 * abs(best)
        assert ll.max() <= best + 1e-9 * abs(best)            # nothing beats the closed-form maximum


@pytest.mark.parametrize('i', range(len(PROBLEMS)))
def test_em_converges_to_the_closed_form_at_its_measured_rate(i):
    """EM converges linearly: the log-likelihood's increments shrink by a factor rho per iteration, so the distance
    left to the limit after an increment delta is delta rho / (1 - rho). If the limit is the closed-form maximum, that
    prediction equals the measured distance to it; the rate drifts by < 0.1% per iteration (measured), so 5% is wide.
    A limit elsewhere (another stationary point, a wrong M-step) would miss by orders of magnitude."""
    from vbfa_lit.ppca import ppca_em
    X, D, ml, best = _problem(i)
    ll = ppca_em(X, D, max_iter=400, tol=0, random_state=i).log_likelihood
    d = np.diff(ll)
    t = int(np.argmax(best - ll[1:] < 1e-6))                 # well above rounding (~1e-10 here), in the linear phase
    rho = d[t] / d[t - 1]
    predicted, measured = d[t] * rho / (1 - rho), best - ll[t + 1]
    assert 0 < rho < 1 and abs(measured / predicted - 1) < 0.05
    # run to rounding: the same subspace and noise variance as the closed form
    fit = ppca_em(X, D, max_iter=2000, tol=1e-15, random_state=i)
    assert np.degrees(subspace_angles(fit.W, ml.W)).max() < 1e-5
    # |d sigma2| ~ sqrt(2 gap / curvature), curvature N M / (2 sigma^4); gap after tol 1e-15 is < 1e-11 nats
    assert abs(fit.sigma2 - ml.sigma2) < 10 * np.sqrt(2e-11 * 2 * ml.sigma2**2 / X.size)
    np.testing.assert_allclose(fit.W @ fit.W.T, ml.W @ ml.W.T, atol=1e-5 * np.abs(ml.W).max()**2)


def test_em_bad_input_names_the_argument():
    from vbfa_lit.ppca import ppca_em
    X = _problem(0)[0]
    for kw, err, word in [(dict(n_components=6), ValueError, 'n_components'),
                          (dict(n_components=1.5), TypeError, 'n_components'),
                          (dict(n_components=2, max_iter=0), ValueError, 'max_iter'),
                          (dict(n_components=2, tol=-1.0), ValueError, 'tol'),
                          (dict(n_components=2, tol=np.nan), ValueError, 'tol')]:
        with pytest.raises(err, match=word): ppca_em(X, **kw)
    bad = X.copy(); bad[0, 0] = np.nan
    with pytest.raises(ValueError, match='finite'): ppca_em(bad, 2)
    with pytest.raises(ValueError, match='variance'): ppca_em(np.ones((5, 3)), 1)
    assert 'iterations=' in repr(ppca_em(X, 2, max_iter=3, random_state=0))
