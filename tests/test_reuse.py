"""A fit that owns its posteriors reuses the memory of the covariances each sweep replaces (`run_sweeps(reuse=True)`,
`LocalRunner.take` and `give`, the in-place rotation of `between_sweeps(in_place=True)`), as `VBPCA` runs its fits.

Large arrays asked of the operating system afresh every sweep cost page faults, and on the machine of the benchmarks
page (which hands memory freed for a few seconds back to its host) about 2 s a GB. These tests check that the reuse
gives the same fit bit for bit, that the arrays really are recycled, that nothing is handed out twice, and that a fit
without `reuse` leaves every posterior a callback kept untouched."""
import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.ard import ARD
from vbfa_lit.data import make_low_rank
from vbfa_lit.engine import (LocalRunner, fit_vbfa, init_posterior, kernel_set, observed, replaced_covariances,
                             row_blocks, run_sweeps)
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.transformations import between_sweeps, transform_posterior
from vbfa_lit.vbpca import Prior

NUMBA = pytest.mark.skipif(not numba_available(), reason='numba absent')
ENGINES = ['numpy', pytest.param('numba', marks=NUMBA)]
D = 20        # with the shapes below every Sigma_x and Sigma_w stack is over 1 MB (1 << 20 B), the least `give` keeps


def problem(N, M, missing=0.4, seed=0):
    return make_low_rank(N, M, 3, offset='normal', missing=missing, random_state=seed).X


def data_of(X, storage):
    if storage == 'dense': return observed(X.T)
    rows, cols = np.nonzero(~np.isnan(X))
    return observed(sparse.csr_matrix((X[rows, cols], (cols, rows)), shape=X.shape[::-1]))


def test_take_hands_back_what_give_kept_and_give_keeps_only_whole_unshared_large_arrays():
    runner = LocalRunner()
    big = np.empty((300, 25, 25))                      # 1.5 MB
    runner.give(big, np.empty((10, 25, 25)), big[:150], np.zeros((300, 25, 25), dtype=np.float32), 'not an array',
                None)                                  # too small, part of an array, not float64, not arrays: ignored
    assert runner.take((300, 25, 25)) is big
    assert runner.take((300, 25, 25)) is not big       # handed out once
    runner.give(big, big, big.reshape(300, 625))       # the same memory given three times: kept once
    assert runner.take((300, 25, 25)) is big and runner.take((300, 625)).base is None
    a, b = (np.empty((300, 25, 25)) for _ in range(2))
    runner.give(a, b)                                  # one of a shape
    assert runner.take(a.shape) is a and runner.take(a.shape) is not b
    runner.give(a)
    runner.close()                                     # closing lets them go
    assert runner.take(a.shape) is not a


def test_replaced_covariances_are_those_the_next_posterior_no_longer_holds():
    X = problem(60, 30)
    data = observed(X.T)
    q = init_posterior(data, 4, Prior(), False, np.random.default_rng(0))
    new = q._replace(Sx=q.Sx.copy())
    assert [id(a) for a in replaced_covariances(q, new)] == [id(q.Sx)]
    assert replaced_covariances(q, q) == []


@pytest.mark.parametrize('engine', ENGINES)
@pytest.mark.parametrize('n_jobs', [1, 2])
@pytest.mark.parametrize('storage', ['dense', 'sparse'])
@pytest.mark.parametrize('N, M', [(400, 350), (350, 400)])      # N < M: the rotation of Sigma_w is left to the sums
def test_reuse_gives_the_same_fit_bit_for_bit(engine, n_jobs, storage, N, M):
    """350 rows of D x D covariances (1.12 MB) are the fewest `give` keeps; 5 sweeps: the third and fourth write into
    the arrays of the first and second, the fifth into the third's, recycled a second time."""
    data = data_of(problem(N, M, seed=N), storage)
    fits = [fit_vbfa(data, D, Prior(w=ARD()), max_iter=5, tol=0, rng=1, engine=engine, n_jobs=n_jobs,
                     transform=between_sweeps('both', in_place=reuse), reuse=reuse) for reuse in (False, True)]
    np.testing.assert_array_equal(fits[1].elbo, fits[0].elbo)
    for a, b in zip(fits[1].q, fits[0].q):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


class Counting(LocalRunner):
    "Counts the arrays `take` hands back instead of making."
    def __init__(self, n_jobs=1):
        super().__init__(n_jobs)
        self.reused = 0
    def take(self, shape):
        self.reused += bool(self._spare.get(tuple(shape)))
        return super().take(shape)


@NUMBA                                   # (the compiled kernels write their covariances where they are told)
@pytest.mark.parametrize('n_jobs', [1, 2])
def test_reuse_recycles_the_covariances_every_sweep(n_jobs):
    data = data_of(problem(700, 350, seed=3), 'sparse')
    prior = Prior(w=ARD())
    addresses = []
    def callback(it, q, bound):          # keeps addresses only, not the posterior
        addresses.append((q.Sx.__array_interface__['data'][0], q.Sw.__array_interface__['data'][0]))
    runner = Counting(n_jobs)
    blocks = row_blocks(data, n_jobs)
    q = init_posterior(data, D, prior, False, np.random.default_rng(0))
    try:
        run_sweeps(data, q, prior, False, kernel_set('numba'), blocks, runner, max_iter=10, tol=0, callback=callback,
                   transform=between_sweeps('both', in_place=True), reuse=True)
        # from the third sweep on, Sigma_x and Sigma_w come from the arrays given back: two of each, in turn
        assert runner.reused >= 2 * 8
        assert len({a for a, _ in addresses[2:]}) <= 2 and len({b for _, b in addresses[2:]}) <= 2
    finally: runner.close()


@pytest.mark.parametrize('engine', ENGINES)
def test_without_reuse_a_posterior_a_callback_kept_stays_as_it_was(engine):
    data = data_of(problem(700, 350, seed=4), 'dense')
    kept = []
    def callback(it, q, bound): kept.append((q, [np.array(a, copy=True) for a in (q.Sx, q.Sw)]))
    fit_vbfa(data, D, Prior(w=ARD()), max_iter=6, tol=0, rng=0, engine=engine, callback=callback,
             transform=between_sweeps('both'))
    for q, (Sx, Sw) in kept:
        np.testing.assert_array_equal(q.Sx, Sx)
        np.testing.assert_array_equal(q.Sw, Sw)


@pytest.mark.parametrize('latent_covariances', [False, True])
def test_the_rotation_in_place_is_the_rotation_into_new_arrays(latent_covariances):
    data = observed(problem(300, 80, seed=5).T)
    q = fit_vbfa(data, 6, Prior(w=ARD()), max_iter=5, tol=0, rng=2, engine='numpy').q
    own = q._replace(Sx=q.Sx.copy(), Sw=q.Sw.copy())
    ref, gain = transform_posterior(data, q, Prior(w=ARD()), 'both', latent_covariances=latent_covariances)
    got, gain2 = transform_posterior(data, own, Prior(w=ARD()), 'both', latent_covariances=latent_covariances,
                                     in_place=True)
    assert gain > 0 and gain2 == gain
    assert got.Sw is own.Sw and got.Sx is own.Sx              # written into the arrays it was given
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize('with_mu, with_b', [(True, False), (False, False), (True, True)])
def test_shifted_values_into_a_kept_buffer_are_the_same_values(with_mu, with_b):
    """`shifted` writes y_mn - <mu_m> (- <b_n>) into the buffer of its `scratch` (as `update_X` passes a block's
    kept dict): the same values bit for bit as into new memory, the same buffer on the next call."""
    from vbfa_lit.engine import shifted
    data = data_of(problem(120, 40, seed=6), 'sparse')
    rng = np.random.default_rng(0)
    mu = rng.standard_normal(40) if with_mu else None
    b = rng.standard_normal(120) if with_b else None
    ref = shifted(data, mu, b)
    scratch = {}
    got = shifted(data, mu, b, scratch)
    np.testing.assert_array_equal(got.toarray(), ref.toarray())
    assert np.shares_memory(got.data, scratch['v'])
    again = shifted(data, mu, b, scratch)
    assert np.shares_memory(again.data, got.data)
    np.testing.assert_array_equal(again.toarray(), ref.toarray())
