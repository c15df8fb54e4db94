"""What a new user met on the scikit-learn surface (the house issue's findings), each pinned by a test that failed
before the fix: the memory estimate of complete data, n_jobs in scikit-learn's conventions, the imputer's advice for
sparse input, the reach of float64, numeric text, the "more components" warning, and the per-sweep callback."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

from vbfa_lit import VBPCA, VBPCAImputer
from vbfa_lit.estimator import ConvergenceWarning, fit_cost, _resolve_jobs
from vbfa_lit.linalg import usable_cores


def low_rank(n, m, k, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, k)) @ rng.normal(size=(k, m)) + noise * rng.normal(size=(n, m))


def test_complete_data_memory_estimate_counts_one_shared_covariance():
    "250,000 x 60 complete data at the default D = 50 need about 1 GB (measured 1.1 GB), not 30 GB."
    nbytes, _ = fit_cost(250_000, 60, 50, complete=True)
    assert 0.5e9 < nbytes < 2e9
    assert fit_cost(250_000, 60, 50)[0] > 20e9                       # with missing entries: a covariance a row


def test_complete_data_estimate_matches_tracemalloc():
    import tracemalloc
    X = np.random.default_rng(1).normal(size=(4000, 40))
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        VBPCA(n_components=20, max_iter=3, transformations='none', random_state=0).fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    est = fit_cost(4000, 40, 20, complete=True)[0]
    assert 0.4 < peak / est < 1.5, (peak, est)


def test_default_fit_of_large_complete_data_is_not_refused(monkeypatch):
    """The memory check alone (the fit itself is stopped by the callback after its first sweep). The finding's
    250,000 x 60 with 4 GB available, scaled down 25 times in both (10,000 x 60, 0.16 GB): the estimate with a
    covariance a row (1.2 GB) still refuses it, as the finding's 30.6 GB refused 4 GB; the shared one (0.05 GB)
    does not."""
    import vbfa_lit.estimator as est_module
    monkeypatch.setattr(est_module, 'available_memory', lambda: int(4e9 / 25))
    X = np.random.default_rng(0).normal(size=(250_000 // 25, 60))
    est = VBPCA(random_state=0, callback=lambda sweep, elbo: True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        est.fit(X)
    assert est.n_iter_ == 1
    per_row = lambda N, M, D, n_obs=None, dense=True, complete=False: fit_cost(N, M, D, n_obs, dense)   # the finding's
    monkeypatch.setattr(est_module, 'fit_cost', per_row)
    with pytest.raises(ValueError, match='needs about 1.2'):                          # this size still shows it
        VBPCA(random_state=0).fit(X)


@pytest.mark.parametrize('n_jobs, expected', [(1, 1), (-1, 'cores'), (64, 'cores'), (10 ** 6, 'cores')])
def test_n_jobs_follows_scikit_learn_and_is_capped(n_jobs, expected):
    cores = usable_cores()
    assert _resolve_jobs(n_jobs) == (cores if expected == 'cores' else expected)
    X = low_rank(60, 8, 2)
    VBPCA(n_components=3, n_jobs=n_jobs, random_state=0).fit(X)      # no message about n_components


def test_negative_n_jobs_count_from_the_cores_as_joblib_does():
    cores = usable_cores()
    assert _resolve_jobs(-2) == max(cores - 1, 1)                    # all but one
    assert _resolve_jobs(-(cores + 5)) == 1                          # never fewer than one thread


def test_n_jobs_zero_is_refused():
    with pytest.raises(ValueError, match='^n_jobs: expected a positive number'):
        VBPCA(n_jobs=0).fit(low_rank(30, 5, 2))


def test_imputer_refuses_sparse_without_advising_an_argument_it_lacks():
    X = sparse.random(30, 6, density=0.5, format='csr', random_state=0)
    with pytest.raises(TypeError, match='VBPCAImputer') as info:
        VBPCAImputer().fit(X)
    assert "VBPCA(missing_values='unstored')" in str(info.value)   # the class that takes it, named
    assert 'VBPCAImputer(missing_values' not in str(info.value)


def test_values_whose_square_float64_holds_are_fitted():
    X = low_rank(100, 6, 2) * 2e150                                  # its square 4e300 is finite
    est = VBPCA(random_state=0).fit(X)
    assert np.isfinite(est.noise_variance_) and est.n_effective_components_ == 2


def test_values_whose_square_overflows_are_refused_with_the_reason():
    with pytest.raises(ValueError, match='rescale X'):
        VBPCA().fit(low_rank(100, 6, 2) * 2e155)


@pytest.mark.parametrize('make', [lambda X: X.astype(str),
                                  lambda X: pd.DataFrame(X).astype(str),
                                  lambda X: pd.DataFrame(X).astype('string')])
def test_numeric_text_is_refused_in_every_container(make):
    X = low_rank(20, 4, 1)
    with pytest.raises(TypeError, match='X'):
        VBPCA().fit(make(X))


def test_default_fit_warns_when_ard_switches_off_almost_nothing():
    X = low_rank(300, 120, 80)                                       # rank 80 > the default cap of 50
    with pytest.warns(UserWarning, match='may hold more components'):
        VBPCA(random_state=0).fit(X)


def test_default_fit_is_quiet_when_ard_has_room():
    X = low_rank(300, 120, 10)
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)
        est = VBPCA(random_state=0).fit(X)
    assert est.n_effective_components_ == 10


def test_callback_sees_every_sweep_and_its_bound():
    seen = []
    est = VBPCA(random_state=0, callback=lambda sweep, elbo: seen.append((sweep, elbo))).fit(low_rank(80, 6, 2))
    assert [s for s, _ in seen] == list(range(est.n_iter_))
    np.testing.assert_allclose([e for _, e in seen], est.elbo_, rtol=1e-12)


def test_callback_returning_true_stops_without_a_convergence_warning():
    with warnings.catch_warnings():
        warnings.simplefilter('error', ConvergenceWarning)
        est = VBPCA(random_state=0, callback=lambda sweep, elbo: sweep == 2).fit(low_rank(80, 6, 2))
    assert est.n_iter_ == 3 and not est.converged_


def test_parameters_come_from_scikit_learn():
    est = VBPCA(n_components=3, prior='broad')
    assert clone(est).get_params() == est.get_params()
    assert repr(est) == "VBPCA(n_components=3, prior='broad')"
    with pytest.raises(ValueError, match="'prior' parameter of VBPCA"):
        VBPCA(prior='wide').fit(low_rank(30, 5, 2))
    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
