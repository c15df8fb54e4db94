"""Warnings are reported at the user's line, not at a line of the package (the methods run inside
`one_blas_thread`'s wrapper, where a fixed stacklevel pointed)."""
import warnings

import numpy as np

from vbfa_lit import VBPCA
from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues


def _caught(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        f()
    return w


def test_fit_warnings_point_at_the_caller():
    X = np.random.default_rng(0).normal(size=(50, 5))
    X[:, 2] = np.nan                                               # a column with no observed value
    w = _caught(lambda: VBPCA(max_iter=2).fit(X))
    assert {type(x.message).__name__ for x in w} >= {'ConvergenceWarning', 'MissingDataWarning'}
    assert all(x.filename == __file__ for x in w), [(x.filename, x.lineno) for x in w]


def test_rjmcmc_warning_points_at_the_caller():
    g = np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876])
    # r = 1e4: each chain stays near its start (the chain-disagreement warning)
    w = _caught(lambda: rjmcmc_pca_from_eigenvalues(g, 1000, r=1e4, n_sweeps=2000, burn_in=500, n_chains=8,
                                                    random_state=3))
    assert w and all(x.filename == __file__ for x in w), [(x.filename, x.lineno) for x in w]
