"""Unit tests of vbfa_lit.convergence: the artificial datasets of Luttinen & Ilin (Sec. 4.1) and the convergence criteria."""
import numpy as np
import pytest

from vbfa_lit.data import LUTTINEN_ILIN_SPECTRA as PROFILES
from vbfa_lit.stiefel import haar_orthogonal
from vbfa_lit.convergence import (Config, iterations_to, luttinen_ilin_dataset,
                                  nat_criterion, paper_criterion, paper_dataset, run_one, speedup, summarize)


# ---------------------------------------------------------------- datasets

@pytest.mark.parametrize('name, M, N', [('1', 50, 200), ('2', 50, 200), ('3', 50, 200), ('200', 200, 2000)])
def test_paper_dataset_shapes_and_missing_fraction(name, M, N):
    Y_train, Y_full, test = paper_dataset(name)
    assert Y_train.shape == Y_full.shape == test.shape == (M, N)
    assert test.dtype == bool and test.sum() == round(0.2 * M * N)         # exactly 20% held out
    np.testing.assert_array_equal(np.isnan(Y_train), test)                 # NaN exactly at the test entries
    np.testing.assert_array_equal(Y_train[~test], Y_full[~test])
    assert np.all(np.isfinite(Y_full))


def test_profiles_match_the_paper():
    ev1, ev2, ev3, ev200 = (PROFILES[k][0] for k in ('1', '2', '3', '200'))
    np.testing.assert_array_equal(np.sort(ev1)[::-1][:11], [25] * 10 + [1])
    np.testing.assert_array_equal(np.sort(ev2)[::-1][:11], [121, 100, 81, 64, 49, 36, 25, 16, 9, 4, 1])
    np.testing.assert_array_equal(np.sort(ev3), np.arange(1, 51) ** 2)
    assert len(ev200) == 200 and PROFILES['200'][1] == 2000
    np.testing.assert_array_equal(ev200[:21], np.r_[np.arange(21, 1, -1) ** 2, 1])
    assert np.all(ev200[20:] == 1) and all(len(PROFILES[k][0]) == 50 and PROFILES[k][1] == 200 for k in '123')


def test_same_seed_same_data_and_other_seed_other_data():
    a, b, c = paper_dataset('1'), paper_dataset('1'), paper_dataset('1', rng=7)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[1], c[1])


@pytest.mark.parametrize('name', ['1', '2', '3'])
def test_sample_covariance_trace_within_monte_carlo_error(name):
    "E[tr S] = tr(Sigma); for Gaussian data Var[tr S] = 2 tr(Sigma^2) / (n - 1). Fixed seed, 4 standard deviations."
    ev = PROFILES[name][0]
    n = 20000
    _, Y, _ = luttinen_ilin_dataset(ev, n, rng=11)
    S = np.cov(Y)
    sd = np.sqrt(2 * np.sum(ev ** 2) / (n - 1))
    assert abs(np.trace(S) - ev.sum()) < 4 * sd


def test_sample_eigenvalues_approach_the_targets():
    """Dataset 1 (ten 25s, forty 1s): the bulk of the sample spectrum lies within the Marchenko-Pastur edges
    (1 +- sqrt(M/n))^2, and the ten spikes within 25 (1 +- sqrt(10/n))^2 widened by 3 standard errors of a spike,
    25 * sqrt(2/n) each; a wrong spectrum or a missing square root fails by far more."""
    ev, n = PROFILES['1'][0], 40000
    _, Y, _ = luttinen_ilin_dataset(ev, n, rng=3)
    lam = np.sort(np.linalg.eigvalsh(np.cov(Y)))[::-1]
    M = len(ev)
    lo, hi = (1 - np.sqrt(M / n)) ** 2, (1 + np.sqrt(M / n)) ** 2
    assert lo * 0.98 < lam[10:].min() and lam[10:].max() < hi * 1.02
    spread, se = np.sqrt(10 / n), 3 * np.sqrt(2 / n)
    assert 25 * ((1 - spread) ** 2 - se) < lam[:10].min() and lam[:10].max() < 25 * ((1 + spread) ** 2 + se)


def test_means_are_standard_normal():
    "The feature means mu_m ~ N(0, 1): over 200 features, their average and variance within 4 standard errors."
    _, Y, _ = luttinen_ilin_dataset(np.ones(200), 20000, rng=5)
    mu = Y.mean(1)                                   # sample-mean error sd 1/sqrt(20000) is negligible
    assert abs(mu.mean()) < 4 / np.sqrt(200)
    assert abs(mu.var(ddof=1) - 1) < 4 * np.sqrt(2 / 199)


def test_haar_orthogonal_is_orthogonal_and_unbiased():
    rng = np.random.default_rng(0)
    Qs = np.array([haar_orthogonal(3, method='qr', random_state=rng) for _ in range(4000)])
    np.testing.assert_allclose(Qs[0] @ Qs[0].T, np.eye(3), atol=1e-12)
    # Haar: every entry has mean 0 and variance 1/3 (sd of the mean of 4000 draws: sqrt(1/3/4000) ~ 0.009)
    assert np.abs(Qs.mean(0)).max() < 4 * np.sqrt(1 / 3 / 4000)
    # (plain QR without the sign fix fails this: its Q has entries with mean about -0.5)


@pytest.mark.parametrize('kwargs, match', [
    (dict(eigenvalues=[1.0, -1.0], n_samples=10), 'eigenvalues'), (dict(eigenvalues=[], n_samples=10), 'eigenvalues'),
    (dict(eigenvalues=[[1.0]], n_samples=10), 'eigenvalues'), (dict(eigenvalues=[1.0, np.inf], n_samples=10), 'eigenvalues'),
    (dict(eigenvalues=[1.0], n_samples=0), 'n_samples'), (dict(eigenvalues=[1.0], n_samples=2.5), 'n_samples'),
    (dict(eigenvalues=[1.0], n_samples=10, missing=1.0), 'missing'), (dict(eigenvalues=[1.0], n_samples=10, missing=-0.1), 'missing')])
def test_bad_input(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match): luttinen_ilin_dataset(**kwargs)   # TypeError: n_samples=2.5
    with pytest.raises(ValueError, match='name'): paper_dataset('4')


# ---------------------------------------------------------------- criteria

def test_iterations_to_edge_cases():
    assert iterations_to([], 0.0) is None
    assert iterations_to([1.0], 1.0) == 1                       # reaching the target exactly counts
    assert iterations_to([1.0], 1.0 + 1e-12) is None
    assert iterations_to([-5.0, -3.0, -4.0, -1.0], -3.5) == 2   # the first hit, even if the curve later dips
    assert iterations_to(np.array([-np.inf, np.nan, 0.0]), -1.0) == 3   # -inf and NaN never reach a target
    assert iterations_to([0.0, 1.0], -np.inf) == 1


def test_paper_criterion_on_hand_made_curves():
    # L_inf = -1000: within 1e-3 relative means L >= -1001
    curve = [-2000.0, -1010.0, -1001.5, -1000.9, -1000.0]
    assert paper_criterion(curve) == 4
    assert paper_criterion(curve, rtol=1e-2) == 2
    assert paper_criterion(curve, converged=-900.0) is None      # a converged value above the curve is never reached
    assert paper_criterion([-7.0]) == 1                          # a one-sweep run has converged at once
    assert paper_criterion([]) is None
    # positive bounds: the relative tolerance uses |L_inf|
    assert paper_criterion([10.0, 999.0, 1000.0]) == 2


def test_nat_criterion_on_hand_made_curves():
    curve = [-50.0, -12.0, -10.9, -10.0]
    assert nat_criterion(curve, best=-10.0) == 3
    assert nat_criterion(curve, best=-10.0, nats=0.05) == 4
    assert nat_criterion(curve, best=-5.0) is None


def test_summarize_and_speedup_on_fake_runs():
    from vbfa_lit.convergence import Run
    def run(curve, converged=True):
        h = np.array(curve, float)
        return Run(h, h * 0, h * 0, np.arange(1, len(h) + 1) * 0.5, converged)
    cfgs = [Config('1', 'ARD', 3, s, tr, 10) for tr in (True, False) for s in (0, 1)]
    with_ = [run([-100, -10, -2, -2]), run([-100, -3, -2.5, -2])]          # reach best - 1 = -3 at 3 and 2
    # without, cut off by the cap while still climbing: their totals (6 sweeps, 3 s) are lower bounds
    cut = [run([-100, -90, -50, -20, -10, -5], False), run([-100, -80, -60, -40, -20, -5], False)]
    rows = summarize(cfgs, with_ + cut)
    assert {r['best'] for r in rows} == {-2.0}
    assert [r['it_nat'] for r in rows] == [3, 2, None, None]
    s = speedup(rows, '1', 'ARD', 3)
    w, wo, ratio, flag = s['it_nat']
    assert (w, wo, flag) == (2.5, 6.0, '>') and ratio == pytest.approx(6 / 2.5)
    assert s['s_nat'][:2] == (1.25, 3.0)
    with pytest.raises(ValueError): speedup(rows, '2', 'ARD', 3)
    # without, converged at a worse optimum: they never get there (inf), and no cut-off flag
    s = speedup(summarize(cfgs, with_ + [run(c.bound, True) for c in cut]), '1', 'ARD', 3)
    assert s['it_nat'][1:] == (np.inf, np.inf, '')
    # a transformed run that settles at a worse optimum is flagged '?', whatever its sweep count
    worse = run([-100, -5, -5], True)
    s = speedup(summarize(cfgs, [worse, with_[1]] + cut), '1', 'ARD', 3)
    assert s['it_nat'][0] == np.inf and s['it_nat'][3] == '?'


def test_run_one_records_a_non_decreasing_curve():
    r = run_one(Config('1', 'broad', 4, 0, True, 15))
    assert len(r.bound) == len(r.rmse_train) == len(r.rmse_test) == len(r.seconds) <= 15
    assert np.all(np.diff(r.bound) >= -1e-9 * np.abs(r.bound[1:]))
    assert np.all(np.diff(r.seconds) > 0) and np.all(r.rmse_test > 0)
