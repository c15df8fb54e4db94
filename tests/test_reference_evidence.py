"""The reference log evidence (appendix 36): both estimators agree with the values known by quadrature (no components;
one component in two dimensions) and with each other within their reported errors, the VB bound of the same prior
stays below them, a wrong path or integrand is detected, seeds reproduce, and bad arguments are refused by name."""
import numpy as np
import pytest

import vbfa_lit.reference_evidence as re_
from vbfa_lit.ard import ARD
from vbfa_lit.engine import fit_vbfa, observed
from vbfa_lit.reference_evidence import (ReferenceEvidence, _log_evidence_2d, _log_evidence_noise,
                                         reference_log_evidence)
from vbfa_lit.vbpca import FixedAlpha, Prior

FAST = dict(n_temperatures=30, n_chains=8, n_sweeps=300, n_burn=100)
AIS = dict(method='ais', n_steps=5000, n_runs=32)


def err(r):
    "The error a check must allow: Monte-Carlo and (thermodynamic integration) discretisation, combined."
    return float(np.hypot(r.se, r.discretisation_error))


def noise(seed, M=4, N=30):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, M)) * rng.uniform(0.5, 3) + rng.normal(size=M) * 5      # (n_samples, n_features)


def one_component(seed, N=20):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(N, 1)) @ np.array([[2.0, 1.0]]) + 0.5 * rng.normal(size=(N, 2))
            + np.array([1.0, -2.0]))


@pytest.mark.parametrize('seed', [0, 1])
def test_no_components_matches_quadrature(seed):
    X = noise(seed)
    known = _log_evidence_noise(X.T, Prior())
    ti = reference_log_evidence(X, 0, random_state=seed, **FAST)
    ais = reference_log_evidence(X, 0, random_state=seed, **AIS)
    assert abs(ti.log_evidence - known) < 3 * err(ti), (ti, known)
    assert abs(ais.log_evidence - known) < 3 * err(ais), (ais, known)
    assert ti.se < 1 and ais.se < 1                       # informative, not a tolerance wide enough to pass anything
    assert ais.ess > 4                                    # enough runs carry weight for the delta-method error


def test_one_component_in_two_dimensions_matches_quadrature():
    """The grid need only be fine against the estimator's error (3 err, about 0.5 nat here): 81 x 81 x 41 points are
    within 1e-3 of 121 x 121 x 61 (3e-4 from it and from the default 161 x 161 x 81), for a twentieth of the work."""
    X = one_component(3)
    known = _log_evidence_2d(X.T, Prior(), 81, 41)
    assert abs(known - _log_evidence_2d(X.T, Prior(), 121, 61)) < 1e-3            # the grid has converged
    ti = reference_log_evidence(X, 1, random_state=5, **FAST)
    assert abs(ti.log_evidence - known) < 3 * err(ti), (ti, known)


def test_known_value_with_other_priors():
    prior = Prior(beta=0.1, a_tau=2.0, b_tau=0.5, w=FixedAlpha(0.5))
    X = noise(4, M=3, N=25) / 5
    known = _log_evidence_noise(X.T, prior)
    ti = reference_log_evidence(X, 0, prior, random_state=2, **FAST)
    assert abs(ti.log_evidence - known) < 3 * err(ti), (ti, known)


def test_estimators_agree_and_bound_is_below():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2)) @ rng.normal(size=(2, 4)) * 2 + rng.normal(size=(30, 4))
    ti = reference_log_evidence(X, 1, random_state=1, **FAST)
    ais = reference_log_evidence(X, 1, random_state=2, **AIS)
    assert abs(ti.log_evidence - ais.log_evidence) < 3 * np.hypot(err(ti), err(ais)), (ti, ais)
    bound = fit_vbfa(observed(X.T), 1, Prior(), shared=True, rng=0).elbo[-1]
    assert bound < ti.log_evidence + 3 * err(ti)


def test_ard_prior_runs_and_agrees():
    X = noise(8, M=3, N=25)
    prior = Prior(w=ARD(1.0, 1.0))
    ti = reference_log_evidence(X, 1, prior, random_state=0, **FAST)
    ais = reference_log_evidence(X, 1, prior, random_state=1, **AIS)
    assert abs(ti.log_evidence - ais.log_evidence) < 3 * np.hypot(err(ti), err(ais)), (ti, ais)


def test_wrong_temperature_is_detected(monkeypatch):
    """Sampling every rung from the posterior (t = 1) integrates E_1[l] > log p(Y): the known-value check catches it."""
    X = noise(0)
    known = _log_evidence_noise(X.T, Prior())
    sweep = re_._gibbs_sweep
    monkeypatch.setattr(re_, '_gibbs_sweep', lambda rng, Y, s, ss, t, prior: sweep(rng, Y, s, ss, np.ones_like(t), prior))
    bad = reference_log_evidence(X, 0, random_state=0, **FAST)
    assert bad.log_evidence - known > 3 * err(bad)


def test_wrong_integrand_is_detected(monkeypatch):
    """An integrand off by one nat (a dropped normalising constant) moves both estimators out of their errors."""
    X = noise(1)
    known = _log_evidence_noise(X.T, Prior())
    log_lik = re_._log_lik
    monkeypatch.setattr(re_, '_log_lik', lambda ss, n, prior: log_lik(ss, n, prior) + 1.0)
    for method in ('ti', 'ais'):
        bad = reference_log_evidence(X, 0, method=method, n_steps=1000, random_state=0, **FAST)
        assert abs(bad.log_evidence - known) > 2 * err(bad), (method, bad, known)


def test_reproducible_with_random_state():
    X = noise(2, N=20)
    kw = dict(n_temperatures=6, n_sweeps=20, n_burn=5)
    a, b = (reference_log_evidence(X, 1, random_state=3, **kw) for _ in range(2))
    assert a.log_evidence == b.log_evidence and np.array_equal(a.per_run, b.per_run)
    c = reference_log_evidence(X, 1, random_state=4, **kw)
    assert c.log_evidence != a.log_evidence
    g = np.random.default_rng(9)
    assert reference_log_evidence(X, 0, method='ais', n_steps=20, random_state=g, progress=True).method == 'ais'
    r = reference_log_evidence(X, 1, random_state=np.random.RandomState(0), **kw)
    assert isinstance(r, ReferenceEvidence) and r.mean_log_lik.shape == (7,) and 'log_evidence=' in repr(r)


@pytest.mark.parametrize('kwargs, exc, match', [
    (dict(X=np.zeros(5)), ValueError, 'X: expected a 2-d'),
    (dict(X=np.full((4, 2), np.nan)), ValueError, 'X: contains NaN'),
    (dict(X=np.array([[1.0, np.inf], [0.0, 1.0]])), ValueError, 'X: contains 1 infinite'),
    (dict(X=np.array([['a', 'b'], ['c', 'd']])), TypeError, 'X: expected numbers'),
    (dict(X=np.ones((1, 3))), ValueError, 'X: expected at least 2 samples'),
    (dict(n_components=4), ValueError, 'n_components: expected at most n_features = 3'),
    (dict(n_components=-1), ValueError, 'n_components'),
    (dict(n_components=1.5), TypeError, 'n_components'),
    (dict(method='nested'), ValueError, 'method'),
    (dict(n_temperatures=5), ValueError, 'n_temperatures: expected an even'),
    (dict(n_chains=1), ValueError, 'n_chains'),
    (dict(n_runs=1, method='ais'), ValueError, 'n_runs'),
    (dict(prior=dict(beta=1.0)), TypeError, 'prior: expected a vbfa_lit.vbpca.Prior'),
    (dict(prior=Prior(w=ARD())), ValueError, 'prior: draws of W'),
    (dict(random_state='seed'), TypeError, 'random_state'),
])
def test_bad_arguments(kwargs, exc, match):
    args = dict(X=noise(0, M=3, N=10), n_components=1, n_temperatures=2, n_sweeps=2, n_burn=0, n_steps=2)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        reference_log_evidence(args.pop('X'), args.pop('n_components'), **args)
