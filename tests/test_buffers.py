"""The sweep's largest temporaries (the masked outer sums) are kept from one sweep to the next (`scratch_buffer`, a
`LocalRunner`'s per-block dicts): the fits they give are the fits without them, bit for bit, and nothing a sweep
returns is overwritten by the next."""
import numpy as np
import pytest
import scipy.sparse as sparse

from vbfa_lit.engine import LocalRunner, init_posterior, observed, row_blocks, sweep
from vbfa_lit.linalg import joined, scratch_buffer
from vbfa_lit.rjmcmc_fast import numba_available
from vbfa_lit.vbpca import Prior

FIELDS = ('X', 'Sx', 'W', 'Sw', 'mu', 'vmu', 'a_tau', 'b_tau')


def test_a_buffer_is_reused_for_a_request_no_larger_and_grown_for_a_larger_one():
    scratch = {}
    a = scratch_buffer(scratch, 'out', (4, 3, 3))
    b = scratch_buffer(scratch, 'out', (2, 3, 3))
    assert a.shape == (4, 3, 3) and b.shape == (2, 3, 3) and b.flags.c_contiguous and np.shares_memory(a, b)
    c = scratch_buffer(scratch, 'out', (5, 3, 3))
    assert c.shape == (5, 3, 3) and not np.shares_memory(a, c) and scratch['out'].size == 45
    assert not np.shares_memory(scratch_buffer(scratch, 'pk', (5, 3, 3)), c)                 # one buffer per key
    assert scratch_buffer(None, 'out', (2, 2)).shape == (2, 2)                              # None: kept nowhere


def _data(storage, rng, M=90, N=260):
    Y = rng.standard_normal((M, N)) + 3.0
    mask = rng.random((M, N)) < (0.05 if storage == 'sparse' else 0.6)
    mask[:, 0] = True                                                    # every feature seen
    if storage == 'sparse': return observed(sparse.csr_matrix(np.where(mask, Y, 0.0)), None, sparse_storage=True)
    return observed(np.where(mask, Y, 0.0), mask)


NO_NUMBA = pytest.mark.skipif(not numba_available(), reason='numba absent')
CASES = [pytest.param(e, s, j, b, D, marks=[NO_NUMBA] if e == 'numba' else [])
         for e in ('numpy', 'numba') for s in ('dense', 'sparse') for j, b in ((1, 1), (2, 3)) for D in (6, 70)
         if e == 'numba' or (s, j, D) == ('dense', 2, 6)]              # NumPy's kernels keep no buffers: one case


@pytest.mark.parametrize('engine, storage, n_jobs, n_blocks, D', CASES)   # D: the two Gaussian kernels (64 lanes)
def test_sweeps_that_keep_their_buffers_are_fresh_sweeps_bit_for_bit(engine, storage, n_jobs, n_blocks, D):
    rng = np.random.default_rng(D + n_blocks)
    data, prior = _data(storage, rng), Prior()
    blocks = row_blocks(data, n_blocks)
    q0 = init_posterior(data, D, prior, False, np.random.default_rng(1))
    kept, runner, q = [], LocalRunner(n_jobs), q0
    try:
        for _ in range(3):
            q, terms = sweep(data, q, prior, False, engine, blocks, runner)
            kept.append((q, {f: np.copy(getattr(q, f)) for f in FIELDS}))
        buffers = [{k: v for k, v in d.items()} for d in runner.buffers(blocks, D)[0]]
        q, _ = sweep(data, q, prior, False, engine, blocks, runner)           # a fourth sweep: no new buffer
        assert all(d[k] is b[k] for d, b in zip(runner.buffers(blocks, D)[0], buffers) for k in b)
        assert bool(buffers[0]) == (engine == 'numba')                   # NumPy's kernels keep none
    finally: runner.close()
    assert runner._scratch == []                                          # close lets them go
    fresh = q0
    for _ in range(3):                                                    # a new runner (no buffers) every sweep
        one = LocalRunner(n_jobs)
        try: fresh, fresh_terms = sweep(data, fresh, prior, False, engine, blocks, one)
        finally: one.close()
    for f in FIELDS: np.testing.assert_array_equal(getattr(kept[-1][0], f), getattr(fresh, f))
    assert terms == fresh_terms
    for q_then, copy in kept:                                             # what each sweep returned is untouched
        for f in FIELDS: np.testing.assert_array_equal(getattr(q_then, f), copy[f])


def test_joined_takes_the_slices_that_cover_an_array_as_that_array_and_copies_anything_else():
    whole = np.empty((10, 2, 2))                       # an array that owns its memory, as `LocalRunner.buffers` makes
    whole[:] = np.arange(40.0).reshape(10, 2, 2)
    pieces = [scratch_buffer({'S': whole[s:e].reshape(-1)}, 'S', (e - s, 2, 2)) for s, e in ((0, 3), (3, 3), (3, 10))]
    assert joined(pieces) is whole and joined(pieces, whole) is whole
    for other in (pieces[::-1], pieces[:2], [whole[:3], whole[4:]], [whole[::2], whole[1::2]],    # order, gaps, strides
                  [whole[:5].astype(np.float32), whole[5:].astype(np.float32)], [np.ones((2, 2, 2)), np.ones((1, 2, 2))]):
        got = joined(other)
        assert not any(np.shares_memory(got, p) for p in other)
        np.testing.assert_array_equal(got, np.concatenate(other))


@pytest.mark.parametrize('engine', ['numpy', pytest.param('numba', marks=NO_NUMBA)])
def test_two_threads_write_the_sweep_s_covariances_into_one_array_and_give_the_one_thread_sweep(engine, monkeypatch):
    """Two threads: q(w_m)'s covariances (`map_features(..., into=...)`) and q(x_n)'s (`LocalRunner.buffers`) are
    written into one array each, which is joined without a copy; the sweep equals one thread's, bit for bit."""
    import vbfa_lit.engine as engine_module
    joins = []
    def spy(pieces, whole=None):
        out = joined(pieces, whole)
        if out.ndim == 3: joins.append(out is pieces[0].base)      # the covariances: (K, D, D)
        return out
    monkeypatch.setattr(engine_module, 'joined', spy)
    rng = np.random.default_rng(3)
    data, prior = _data('sparse', rng), Prior()
    q0 = init_posterior(data, 6, prior, False, np.random.default_rng(1))
    got = {}
    for n_jobs in (1, 2):
        runner = LocalRunner(n_jobs)
        try: got[n_jobs], _ = sweep(data, q0, prior, False, engine, row_blocks(data, 2), runner)   # the same blocks
        finally: runner.close()
    for f in FIELDS: np.testing.assert_array_equal(getattr(got[2], f), getattr(got[1], f))
    # Sigma_x joined in both sweeps (two blocks), Sigma_w in the two threads' (one chunk of features each); the
    # compiled kernels write into the slices given, NumPy's make their own
    assert joins == [engine == 'numba'] * 3


def test_no_array_for_the_latent_covariances_when_nothing_is_missing():
    """Complete data keep one Sigma_x for every sample: no N x D x D array is made (at N = 10^6, D = 50: 20 GB). With
    entries missing, one block gets the whole array too (an array given back, `LocalRunner.give`, when there is one)."""
    Y = np.random.default_rng(0).standard_normal((5, 40))
    runner = LocalRunner(2)
    assert runner.buffers(row_blocks(observed(Y), 2), 3)[1] == [None, None]
    assert [d['S'].size for d in runner.buffers(row_blocks(observed(np.where(Y > 1, 0.0, Y), Y <= 1), 1), 3)[1]] \
        == [40 * 9]
    scratch, latent = runner.buffers(row_blocks(observed(np.where(Y > 1, 0.0, Y), Y <= 1), 2), 3)
    assert len(scratch) == 2 and [d['S'].size for d in latent] == [20 * 9, 20 * 9]
