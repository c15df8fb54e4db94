"""Minka's Laplace evidence (`vbfa_lit.evidence`) against scikit-learn's implementation of the same formula
(`PCA(n_components='mle')`, a test dependency only), its k = 0 entry, and bad input."""
import numpy as np
import pytest

from vbfa_lit.evidence import Evidence, laplace_evidence

sk_pca = pytest.importorskip('sklearn.decomposition')
from sklearn.decomposition._pca import _assess_dimension  # noqa: E402


def _data(seed):
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(3, 12)), None
    n = int(rng.integers(d + 2, 400))
    k = int(rng.integers(0, d))
    scales = np.r_[rng.uniform(1.5, 6, k), np.ones(d - k)]
    basis, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return rng.normal(size=(n, d)) * scales @ basis.T + rng.normal(size=d) * 10


@pytest.mark.parametrize('seed', range(40))
def test_values_and_choice_match_sklearn(seed):
    X = _data(seed)
    n, d = X.shape
    ev = laplace_evidence(X)
    spectrum = sk_pca.PCA().fit(X).explained_variance_
    np.testing.assert_allclose(ev.log_evidence[1:], [_assess_dimension(spectrum, k, n) for k in range(1, d)], rtol=1e-10, atol=1e-8)
    assert np.argmax(ev.log_evidence[1:]) + 1 == sk_pca.PCA(n_components='mle').fit(X).n_components_


def test_eigenvalue_entry_point_equals_data_entry_point():
    X = _data(3)
    spectrum = sk_pca.PCA().fit(X).explained_variance_
    np.testing.assert_allclose(laplace_evidence(spectrum, n_samples=X.shape[0]).log_evidence, laplace_evidence(X).log_evidence)


def test_k_zero_is_the_isotropic_gaussian_and_wins_on_noise():
    lam, n = np.array([1.3, 1.1, 1.0, 0.9, 0.8]), 50
    ev = laplace_evidence(lam, n_samples=n)
    assert ev.log_evidence[0] == pytest.approx(-n * 5 / 2 * np.log(lam.mean()))
    X = np.random.default_rng(0).normal(size=(300, 6))
    assert laplace_evidence(X).log_evidence.argmax() == 0


def test_probabilities_and_units():
    X = _data(7)
    ev = laplace_evidence(X)
    assert isinstance(ev, Evidence) and ev.p.sum() == pytest.approx(1) and ev.k.tolist() == list(range(X.shape[1]))
    scaled = laplace_evidence(1e3 * X)
    np.testing.assert_allclose(scaled.p, ev.p, atol=1e-9)   # a rescaling adds the same constant to every log p(D | k)


@pytest.mark.parametrize('args, kwargs, match', [
    ((np.ones((1, 3)),), {}, 'at least 2 samples'),
    ((np.ones((5, 1)),), {}, 'at least 2 features'),
    ((np.where(np.eye(6, 3) > 0, np.nan, 1.0),), {}, 'VBPCA'),
    ((np.where(np.eye(6, 3) > 0, np.inf, 1.0),), {}, 'infinite'),
    (([3.0, 2.0, 1.0],), {}, 'n_samples'),
    (([3.0, 2.0, 1.0],), dict(n_samples=1), 'n_samples'),
    (([1.0, 2.0, 3.0],), dict(n_samples=10), 'sorted'),
    (([3.0, -1.0],), dict(n_samples=10), 'eigenvalues'),
    ((np.ones((4, 3)),), dict(n_samples=4), 'n_samples'),
    ((np.ones((2, 2, 2)),), {}, 'data'),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplace_evidence(*args, **kwargs)


@pytest.mark.parametrize('scale', [1e-300, 1e-150, 1e-16, 1.0, 1e16, 1e150, 1e300])
def test_units_do_not_change_the_choice(scale):
    # issue 20, item 3: a fixed floor of 1e-15 made nanometre-scale data choose k = 0
    base = laplace_evidence(np.array([10., 8, 6, 1.1, 1, .9]), 100)
    ev = laplace_evidence(np.array([10., 8, 6, 1.1, 1, .9]) * scale, 100)
    np.testing.assert_allclose(ev.p, base.p, rtol=1e-9, atol=1e-300)
    # a density of the data: multiplying the eigenvalues by c divides it by c^(N d / 2)
    np.testing.assert_allclose(ev.log_evidence - base.log_evidence, -100 * 6 / 2 * np.log(scale), rtol=1e-12)
    assert int(ev.p.argmax()) == 3


def test_data_units_do_not_change_the_choice():
    X = _data(5)
    for s in (1e-120, 1e-8, 1e8, 1e120):
        np.testing.assert_allclose(laplace_evidence(X * s).p, laplace_evidence(X).p, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize('spectrum', [[3., 1, 1, 1], [5., 5, 2, 1], [4., 2, 1, 1]])
def test_tied_eigenvalues_are_named_in_a_warning(spectrum):
    # issue 20, item 2: all-NaN p before; now the k whose kept eigenvalues are tied get p = 0, with a warning
    with pytest.warns(UserWarning, match=r'data: eigenvalues \d and \d are equal'):
        ev = laplace_evidence(spectrum, 50)
    assert np.all(np.isfinite(ev.p)) and abs(ev.p.sum() - 1) < 1e-12


def test_nothing_varies_is_refused():
    with pytest.raises(ValueError, match='data: every eigenvalue is 0'):
        laplace_evidence([0., 0, 0], 10)


def test_complex_data_refused():
    with pytest.raises(ValueError, match='^data: Complex'):
        laplace_evidence(np.random.default_rng(0).normal(size=(20, 3)) + 1j)
