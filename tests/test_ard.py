"""The ARD prior (`vbfa_lit.ard`): q(alpha) against its direct formula, and the number of components
it keeps on a clearly low-rank problem. Its place in the bound (update never decreases L, is the
maximiser, matches Monte Carlo) is tested with the rest of the model in test_vbpca.py."""
import numpy as np
import pytest

from vbfa_lit.ard import ARD, effective_components, update_alpha
from vbfa_lit.vbpca import Prior
from vbfa_lit.engine import fit_vbfa, observed


@pytest.mark.parametrize('shared_cov', [True, False])
def test_update_alpha_equals_direct_formula(shared_cov):
    rng = np.random.default_rng(4)
    M, D, a0, b0 = 7, 3, 0.3, 0.8
    W = rng.standard_normal((M, D))
    A = rng.standard_normal((1 if shared_cov else M, D, D))
    Sw = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(D)
    a, b = update_alpha(W, Sw, a0, b0)
    for d in range(D):
        ww = sum(W[m, d] ** 2 + Sw[m % len(Sw), d, d] for m in range(M))  # sum_m <w_md^2>
        assert a[d] == pytest.approx(a0 + M / 2, rel=1e-15)
        assert b[d] == pytest.approx(b0 + ww / 2, rel=1e-12)


@pytest.mark.parametrize('shared', [True, False], ids=['shared', 'per_feature'])
@pytest.mark.parametrize('missing', [0.0, 0.2])
def test_effective_components_finds_the_true_rank(shared, missing):
    "Three directions with sd 5, 4, 3 times the noise sd (Bishop's example made plainer), D = 6: ARD keeps 3."
    rng = np.random.default_rng(0)
    M, N, rank, D = 12, 200, 3, 6
    sd = 10.0  # noise sd; not 1, so that <tau> and 1/<tau> (or a missing scale) cannot be confused
    basis, _ = np.linalg.qr(rng.standard_normal((M, M)))
    Y = sd * (basis[:, :rank] @ np.diag([5.0, 4.0, 3.0]) @ rng.standard_normal((rank, N))
              + rng.standard_normal((M, N)) + 2)
    Y[rng.random((M, N)) < missing] = np.nan
    res = fit_vbfa(observed(Y), D, prior=Prior(w=ARD()), shared=shared, rng=0, max_iter=5000, tol=1e-8)
    assert res.converged  # judged at the fixed point, not mid-way through the pruning
    tol = 1e-2
    keep = effective_components(res.q, tol)
    assert keep.sum() == rank, keep
    # not a close call: the quantity effective_components thresholds (sum_m <w_md^2> over
    # sum_m 1/<tau_m>) is >= 10 tol for every kept column and <= tol / 10 for every pruned one
    s = np.sum(res.q.W ** 2, 0) + np.diagonal(np.broadcast_to(res.q.Sw, (M, D, D)).sum(0))
    ratio = s / np.sum(np.broadcast_to(res.q.b_tau / res.q.a_tau, (M,)))
    assert ratio[keep].min() >= 10 * tol and ratio[~keep].max() <= tol / 10, ratio
