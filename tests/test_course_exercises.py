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
