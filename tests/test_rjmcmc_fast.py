"""The compiled RJMCMC sweep (`vbfa_lit.rjmcmc_fast`): whole chains equal to the NumPy sweep's for the same seed.

The q traces must be identical and every continuous value (l_j, sigma^2, tau, acceptance rates) equal to 1e-12
(relative), over seeds, both priors, with and without Z, vague and sharp hyperparameters, eigenvalues at extreme
scales, d = 2 (no moves) to 15, and one to eight chains (which share one random stream). numba is in the `dev`
extra, so these run in CI; without it they are skipped."""
import subprocess
import sys

import numpy as np
import pytest

numba = pytest.importorskip('numba', reason="numba (the optional 'fast' extra) is not installed")

import vbfa_lit.linalg as linalg
import vbfa_lit.rjmcmc_fast as fast
from vbfa_lit.rjmcmc import _run, default_eta, rjmcmc_pca, rjmcmc_pca_from_eigenvalues, sample_eigenvalues

SET1 = np.array([8.9580, 7.2862, 5.3011, 2.8964, 1.1012, 0.9876])
G15, N15 = sample_eigenvalues(np.random.default_rng(0).normal(size=(2000, 15))
                              * np.sqrt([10, 8, 6, 4, 2] + [0.1] * 10))


def both(g, n, n_sweeps, n_chains, seed, r=3.0, alpha=0.5, eta=None, burn_in=None, engines=('numpy', 'numba'), **kw):
    "The chains of each of `engines` (the NumPy sweep's and the compiled one's) from the same seed."
    eta = default_eta(g) if eta is None else eta
    burn_in = n_sweeps // 2 if burn_in is None else burn_in
    args = (g, float(n), n_sweeps, burn_in, r, alpha, eta, n_chains)
    return [_run(*args, np.random.default_rng(seed), False, engine=e, **kw) for e in engines]


def assert_same(a, b):
    np.testing.assert_array_equal(a[0], b[0])                       # q traces, exactly
    for x, y in zip(a[1:], b[1:]):                                  # l, sigma2, tau, birth / death rates
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
        ok = ~np.isnan(x)
        np.testing.assert_allclose(y[ok], x[ok], rtol=1e-12, atol=0)


CASES = {
    'set1-1chain': (SET1, 1000, 1200, 1, 0, {}),
    'set1-8chains': (SET1, 1000, 1200, 8, 1, {}),
    'set1-unordered': (SET1, 1000, 1200, 4, 2, dict(ordered=False)),
    'set1-no-z': (SET1, 1000, 1200, 3, 3, dict(include_z=False)),
    'set1-sharp': (SET1, 1000, 800, 3, 4, dict(r=1e4, alpha=50.0)),
    'set1-prior-only': (SET1, 0.0, 1200, 4, 5, {}),
    'd15-8chains': (G15, N15, 600, 8, 6, {}),
    'd15-unordered': (G15, N15, 600, 2, 7, dict(ordered=False)),
    'tiny-scale-vague': (G15 * 1e-200, N15, 600, 3, 8, dict(r=1e-3, alpha=1e-3)),
    'huge-scale-vaguer': (SET1 * 1e250, 20, 1000, 4, 9, dict(r=1e-4, alpha=1e-5)),
    'small-n': (SET1, 7, 1500, 3, 10, dict(eta=50.0)),
    'd2-no-moves': (np.array([2.0, 1.0]), 50, 500, 2, 11, {}),
    'd3-no-burn-in': (np.array([3.0, 1.5, 0.7]), 12, 700, 5, 12, dict(burn_in=0)),
}


@pytest.mark.parametrize('name', list(CASES))
def test_same_chain_for_the_same_seed(name):
    g, n, sweeps, chains, seed, kw = CASES[name]
    assert_same(*both(g, n, sweeps, chains, seed, **kw))


def test_chains_visit_several_q():
    "The equality above is not vacuous: the chains jump between models, with births and deaths accepted."
    b, = both(SET1, 1000, 3000, 4, 0, engines=('numba',))           # the compiled chains: the NumPy ones (above)
    assert len(np.unique(b[0])) >= 2 and np.all(b[4] > 0) and np.all(b[5] > 0)
    assert np.mean(b[0][:, 1:] != b[0][:, :-1]) > 0.01


def test_public_sampler_engines_agree():
    # 1200 and 1100 sweeps: the compiled sweep's blocks of 1000 (`_FAST_BLOCK`), a whole one and a part one, each
    kw = dict(n_sweeps=1200, burn_in=400, n_chains=3, random_state=21)
    a = rjmcmc_pca_from_eigenvalues(SET1, 1000, engine='numpy', **kw)
    b = rjmcmc_pca_from_eigenvalues(SET1, 1000, engine='numba', **kw)
    c = rjmcmc_pca_from_eigenvalues(SET1, 1000, engine='auto', **kw)
    assert_same((a.q, a.l, a.sigma2, a.tau), (b.q, b.l, b.sigma2, b.tau))
    np.testing.assert_array_equal(b.q, c.q)
    X = np.random.default_rng(3).normal(size=(300, 5)) * np.array([3.0, 2.0, 1.0, 1.0, 1.0])
    x = rjmcmc_pca(X, n_sweeps=1100, burn_in=300, n_chains=2, random_state=4, engine='numpy')
    y = rjmcmc_pca(X, n_sweeps=1100, burn_in=300, n_chains=2, random_state=4, engine='numba', progress=True)
    assert_same((x.q, x.l, x.sigma2, x.tau), (y.q, y.l, y.sigma2, y.tau))


def test_blocks_do_not_change_the_chain(monkeypatch):
    "The kernel runs in blocks of sweeps (progress updates between them); the block size must not matter."
    import vbfa_lit.rjmcmc as rj
    ref, = both(G15, N15, 700, 2, 13, engines=('numba',))             # the NumPy sweep has no blocks
    monkeypatch.setattr(rj, '_FAST_BLOCK', 7)
    assert_same(ref, *both(G15, N15, 700, 2, 13, engines=('numba',)))


def test_engine_argument():
    assert fast.check_engine('auto') == 'numba' and fast.check_engine('numpy') == 'numpy'
    for bad in ('fortran', None, 1, 'NUMBA'):
        with pytest.raises(ValueError, match='engine'):
            rjmcmc_pca_from_eigenvalues(SET1, 1000, n_sweeps=20, burn_in=10, engine=bad)


def test_engine_numba_without_numba(monkeypatch):
    monkeypatch.setattr(linalg, 'numba_available', lambda: False)     # where the engine's choice is made
    assert fast.check_engine('auto') == 'numpy'
    with pytest.raises(ImportError, match=r"vbfa_lit\[fast\]"):
        rjmcmc_pca_from_eigenvalues(SET1, 1000, n_sweeps=20, burn_in=10, engine='numba')


def test_kernel_is_cached_on_disk():
    "After one compiled run, a new process loads the machine code from numba's cache instead of compiling."
    both(SET1, 1000, 20, 1, 0)
    code = ("import os, numpy as np; os.environ['NUMBA_DEBUG_CACHE'] = '1'\n"
            "from vbfa_lit.rjmcmc import rjmcmc_pca_from_eigenvalues as f\n"
            "f([3.0, 2.0, 1.0], 100, n_sweeps=20, burn_in=10, engine='numba', random_state=0)\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**__import__('os').environ, 'NUMBA_DEBUG_CACHE': '1'})
    log = out.stdout + out.stderr
    assert 'data loaded from' in log and '_k_sweeps' in log
    assert 'data saved to' not in log, log[-2000:]


def test_the_numpy_sampler_runs_the_kernels_on_its_rare_entries(monkeypatch):
    """The NumPy path's rejection sampler and log-space tail mass are the kernels themselves (one copy of that
    arithmetic): compiled, or as plain Python (their `py_func`), the same draws and masses from the same seed."""
    import vbfa_lit.rjmcmc as rj
    a, lo, hi = np.array([3.0, 0.5, 500.0, 3.0, 2.0]), np.array([800.0, 1e-5, 400.0, 0.5, 50.0]), \
        np.array([810.0, 1e-4, 401.0, 4.0, np.inf])
    run = lambda: (rj.truncated_gamma(a, 1.0, lo, hi, np.random.default_rng(0)), rj.log_gamma_mass(a, lo, hi))
    fast._compile()
    names, calls = ('_k_reject', '_k_log_gamma_mass'), []
    compiled_kernels = {name: getattr(fast, name) for name in names}
    for name, k in compiled_kernels.items():
        monkeypatch.setattr(fast, name, lambda *args, k=k, name=name: calls.append(name) or k(*args))
    compiled = run()
    assert set(calls) == set(names)                                       # the tails went through the kernels
    for name, k in compiled_kernels.items(): monkeypatch.setattr(fast, name, k.py_func)
    python = run()
    assert np.all((lo <= compiled[0]) & (compiled[0] <= hi))
    np.testing.assert_allclose(python[0], compiled[0], rtol=1e-13)
    np.testing.assert_allclose(python[1], compiled[1], rtol=1e-13)
