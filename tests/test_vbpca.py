"""Properties of the VBFA numeric core (`vbfa_lit.vbpca`, with both priors on W): every factor update
maximises the bound in its factor, the storage variants agree, the bound agrees with brute force,
and the fit loop is monotone. Gamma/Gaussian entropies and KLs are tested in test_notation.py."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from vbfa_lit.ard import ARD
from vbfa_lit.notation import gamma_moments
from vbfa_lit.vbpca import FixedAlpha, Posterior, Prior
from vbfa_lit.engine import ElboTerms, elbo, fit_vbfa, init_posterior, observed, sweep, sq_error, sum_tau_ww, sum_xx, update_mu, update_tau, update_W, update_X

RTOL = 1e-8  # relative tolerance on the bound: floating point only, not tuned


# ------------------------------------------------------------------------------------- helpers

def random_spd(rng, K, D):
    A = rng.standard_normal((K, D, D))
    return A @ A.transpose(0, 2, 1) / D + 0.1 * np.eye(D)


def random_problem(seed, M, N, D, missing, ard, shared, hyper=1e-5):
    "Data with a missing fraction, a prior, and a random (not optimal) q with per-row covariances."
    rng = np.random.default_rng(seed)
    Y = 2 * rng.standard_normal((M, N)) + 1
    mask = rng.random((M, N)) >= missing
    w = ARD(hyper, hyper) if ard else FixedAlpha(rng.uniform(0.1, 2))
    prior = Prior(beta=hyper, a_tau=hyper, b_tau=hyper, w=w)
    K = 1 if shared else M
    q = Posterior(X=rng.standard_normal((N, D)), Sx=random_spd(rng, N, D),
                  W=rng.standard_normal((M, D)), Sw=random_spd(rng, M, D),
                  mu=rng.standard_normal(M), vmu=rng.uniform(0.1, 2, M),
                  a_tau=rng.uniform(0.5, 5, K), b_tau=rng.uniform(0.5, 5, K),
                  a_alpha=rng.uniform(0.5, 5, D) if ard else None,
                  b_alpha=rng.uniform(0.5, 5, D) if ard else None)
    return Y, mask, prior, q


def apply_update(name, data, q, prior, shared):
    "q with one factor replaced by its VB update."
    tau = gamma_moments(q.a_tau, q.b_tau)[0]
    if name == 'X':
        X, Sx = update_X(data, q.W, sum_tau_ww(data, q.W, q.Sw, tau), q.mu, tau)
        return q._replace(X=X, Sx=Sx)
    if name == 'W':
        W, Sw = update_W(data, q.X, sum_xx(data, q.X, q.Sx), q.mu, tau, prior.w.moments(q)[0])
        return q._replace(W=W, Sw=Sw)
    if name == 'mu':
        mu, vmu = update_mu(data, q.W, q.X, tau, prior.beta)
        return q._replace(mu=mu, vmu=vmu)
    if name == 'tau':
        err = sq_error(data, q.W, q.Sw, q.X, q.Sx, sum_xx(data, q.X, q.Sx), q.mu, q.vmu)
        a, b = update_tau(err, data.n_row, prior.a_tau, prior.b_tau, shared)
        return q._replace(a_tau=a, b_tau=b)
    assert name == 'alpha'
    return prior.w.update(q)


def factors(ard):
    return ['X', 'W', 'mu', 'tau'] + (['alpha'] if ard else [])


PARAMS = {'X': [('X', 'mean'), ('Sx', 'cov')], 'W': [('W', 'mean'), ('Sw', 'cov')],
          'mu': [('mu', 'mean'), ('vmu', 'pos')], 'tau': [('a_tau', 'pos'), ('b_tau', 'pos')],
          'alpha': [('a_alpha', 'pos'), ('b_alpha', 'pos')]}


def perturb(value, kind, eps, E):
    "Move a parameter by eps along direction E, staying in its domain."
    if kind == 'mean':
        return value + eps * E
    if kind == 'pos':
        return value * np.exp(eps * E)
    A = np.eye(value.shape[-1]) + eps * E  # cov -> A cov A^T stays SPD, moves in every direction
    return A @ value @ A.transpose(0, 2, 1)


def full(q):
    "q with shared (1, D, D) covariances expanded to one per row."
    return q._replace(Sx=np.broadcast_to(q.Sx, (len(q.X),) + q.Sx.shape[1:]),
                      Sw=np.broadcast_to(q.Sw, (len(q.W),) + q.Sw.shape[1:]))


problems = st.fixed_dictionaries(dict(
    seed=st.integers(0, 2 ** 32 - 1), M=st.integers(2, 12), N=st.integers(2, 12),
    D=st.integers(1, 4), missing=st.sampled_from([0.0, 0.0, 0.1, 0.3, 0.6]),
    ard=st.booleans(), shared=st.booleans(), hyper=st.sampled_from([1e-5, 1e-2, 1.0]),
    sparse_storage=st.booleans()))


def setup(p):
    Y, mask, prior, q = random_problem(p['seed'], p['M'], p['N'], p['D'], p['missing'],
                                       p['ard'], p['shared'], p['hyper'])
    return observed(Y, mask, sparse_storage=p['sparse_storage']), prior, q


# ------------------------------------------------------------------------------ property tests

@settings(max_examples=200, deadline=None)
@given(problems)
def test_every_update_does_not_decrease_elbo(p):
    data, prior, q = setup(p)
    after = elbo(data, q, prior).total
    for name in factors(p['ard']) * 2:  # two rounds: the second starts from updated factors
        before = after                  # the bound of this q, computed after the previous update
        q = apply_update(name, data, q, prior, p['shared'])
        after = elbo(data, q, prior).total
        assert after >= before - RTOL * abs(before), (name, before, after)


@settings(max_examples=100, deadline=None)
@given(problems, st.sampled_from([1e-1, 1e-2]))
def test_updated_factor_is_the_maximiser(p, eps):
    data, prior, q = setup(p)
    rng = np.random.default_rng(p['seed'] + 1)
    for name in factors(p['ard']):
        q = apply_update(name, data, q, prior, p['shared'])
        best = elbo(data, q, prior).total
        for field, kind in PARAMS[name]:
            value = getattr(full(q), field)  # a shared covariance is perturbed row by row
            E = rng.standard_normal(value.shape)
            for sign in (1, -1):  # a nonzero gradient would raise L in one of the two directions
                moved = q._replace(**{field: perturb(value, kind, sign * eps, E)})
                assert elbo(data, moved, prior).total <= best + RTOL * abs(best), (name, field)


@settings(max_examples=100, deadline=None)
@given(problems)
def test_sparse_equals_dense_and_fast_path_equals_general(p):
    Y, mask, prior, q = random_problem(p['seed'], p['M'], p['N'], p['D'], p['missing'],
                                       p['ard'], p['shared'], p['hyper'])
    variants = [observed(Y, mask), observed(Y, mask, sparse_storage=True),
                observed(Y, mask, fast=False), observed(Y, mask, sparse_storage=True, fast=False)]
    results = []
    for data in variants:
        out = [elbo(data, q, prior)]
        for name in factors(p['ard']):
            q2 = apply_update(name, data, q, prior, p['shared'])
            out += [*full(q2), elbo(data, q2, prior)]
        results.append([np.asarray(v, float) for v in out if v is not None])
    for out in results[1:]:
        for a, b in zip(results[0], out):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('ard', [True, False])
def test_empty_rows_and_columns_keep_their_prior(ard):
    M, N, D = 6, 7, 3
    Y, mask, prior, q = random_problem(0, M, N, D, 0.2, ard, False)
    mask[2, :] = False
    mask[:, 4] = False
    data = observed(Y, mask)
    for name in ['X', 'W', 'mu', 'tau']:
        q = apply_update(name, data, q, prior, False)
    alpha = prior.w.moments(q)[0]  # the <alpha> the W update used
    np.testing.assert_allclose(q.X[4], 0, atol=1e-14)
    np.testing.assert_allclose(q.Sx[4], np.eye(D), atol=1e-14)
    np.testing.assert_allclose(q.W[2], 0, atol=1e-14)
    np.testing.assert_allclose(q.Sw[2], np.diag(1 / alpha), rtol=1e-12)
    assert q.mu[2] == 0 and q.vmu[2] == pytest.approx(1 / prior.beta, rel=1e-12)
    assert (q.a_tau[2], q.b_tau[2]) == (prior.a_tau, prior.b_tau)


# --------------------------------------------------------------- the bound against brute force

@pytest.mark.parametrize("missing", [0.3, 0.7])        # mostly observed: packed product; mostly missing: sample by sample
@pytest.mark.parametrize("csr", [False, True])
def test_sq_error_equals_direct_formula(missing, csr):
    Y, mask, prior, q = random_problem(3, 5, 6, 3, missing, True, False)
    data = observed(np.where(mask, Y, np.nan), sparse_storage=csr)
    direct = np.zeros(5)
    for m, n in zip(*np.nonzero(mask)):
        w, x, Sw, Sx = q.W[m], q.X[n], q.Sw[m], q.Sx[n]
        direct[m] += ((Y[m, n] - w @ x - q.mu[m]) ** 2 + w @ Sx @ w + x @ Sw @ x
                      + np.trace(Sw @ Sx) + q.vmu[m])
    got = sq_error(data, q.W, q.Sw, q.X, q.Sx, sum_xx(data, q.X, q.Sx), q.mu, q.vmu)
    np.testing.assert_allclose(got, direct, rtol=1e-12)


def mc_terms(Y, mask, q, prior, S, rng):
    "Monte-Carlo samples (S,) of each ELBO term, sampling q and using scipy.stats densities."
    (N, D), M = q.X.shape, q.W.shape[0]
    lx = np.linalg.cholesky(q.Sx)
    X = q.X + np.einsum('nij,snj->sni', lx, rng.standard_normal((S, N, D)))
    W = q.W + np.einsum('mij,smj->smi', np.linalg.cholesky(q.Sw), rng.standard_normal((S, M, D)))
    mu = q.mu + np.sqrt(q.vmu) * rng.standard_normal((S, M))
    tau = np.broadcast_to(rng.gamma(q.a_tau, 1 / q.b_tau, (S, len(q.a_tau))), (S, M))
    rows, cols = np.nonzero(mask)
    pred = np.einsum('sod,sod->so', W[:, rows], X[:, cols]) + mu[:, rows]
    loglik = stats.norm.logpdf(Y[rows, cols], pred, 1 / np.sqrt(tau[:, rows])).sum(1)
    x = sum(stats.multivariate_normal(np.zeros(D)).logpdf(X[:, n]).reshape(S)
            - stats.multivariate_normal(q.X[n], q.Sx[n]).logpdf(X[:, n]).reshape(S)
            for n in range(N))
    mu_t = (stats.norm.logpdf(mu, 0, 1 / np.sqrt(prior.beta))
            - stats.norm.logpdf(mu, q.mu, np.sqrt(q.vmu))).sum(1)
    if isinstance(prior.w, ARD):
        alpha = rng.gamma(q.a_alpha, 1 / q.b_alpha, (S, D))
        alpha_t = (stats.gamma.logpdf(alpha, prior.w.a_alpha, scale=1 / prior.w.b_alpha)
                   - stats.gamma.logpdf(alpha, q.a_alpha, scale=1 / q.b_alpha)).sum(1)
    else:
        alpha, alpha_t = np.full((S, D), prior.w.alpha), np.zeros(S)
    w = stats.norm.logpdf(W, 0, 1 / np.sqrt(alpha[:, None, :])).sum((1, 2))
    w -= sum(stats.multivariate_normal(q.W[m], q.Sw[m]).logpdf(W[:, m]).reshape(S)
             for m in range(M))
    t = rng.gamma(q.a_tau, 1 / q.b_tau, (S, len(q.a_tau)))
    tau_t = (stats.gamma.logpdf(t, prior.a_tau, scale=1 / prior.b_tau)
             - stats.gamma.logpdf(t, q.a_tau, scale=1 / q.b_tau)).sum(1)
    return ElboTerms(loglik, x, mu_t, w, alpha_t, tau_t)


@pytest.mark.parametrize('ard', [True, False])
@pytest.mark.parametrize('shared', [True, False])
def test_elbo_matches_monte_carlo(ard, shared):
    Y, mask, prior, q = random_problem(7, 4, 5, 2, 0.3, ard, shared, hyper=0.5)
    exact = elbo(observed(Y, mask), q, prior)
    samples = mc_terms(Y, mask, q, prior, 100_000, np.random.default_rng(11))
    for field, value, s in zip(exact._fields, exact, samples):
        if field == 'alpha' and not ard:
            assert value == 0
            continue
        se = s.std() / np.sqrt(len(s))
        # 5 standard errors: a false alarm has probability ~6e-7 per term (fixed seed anyway)
        assert abs(s.mean() - value) < 5 * se, (field, value, s.mean(), se)


# -------------------------------------------------------------------------------------- fit loop

@pytest.mark.parametrize('w', [ARD(), FixedAlpha()], ids=['ard', 'broad'])
@pytest.mark.parametrize('shared', [True, False], ids=['shared', 'per_feature'])
@pytest.mark.parametrize('engine', ['numpy', 'auto'])
def test_fit_is_monotone_and_reconstructs(w, shared, engine):
    rng = np.random.default_rng(5)
    M, N, D = 20, 60, 2
    Y = rng.standard_normal((M, D)) @ rng.standard_normal((D, N)) + 3 + 0.1 * rng.standard_normal((M, N))
    missing = rng.random((M, N)) < 0.2
    res = fit_vbfa(observed(np.where(missing, np.nan, Y)), D=4, prior=Prior(w=w), shared=shared,
                   rng=0, max_iter=300, engine=engine)
    L = np.array(res.elbo)
    assert np.all(np.diff(L) >= -RTOL * np.abs(L[1:]))
    assert res.terms.total == L[-1]
    rec = res.q.W @ res.q.X.T + res.q.mu[:, None]
    # noise sd 0.1, signal sd ~1.4: a fit that missed the subspace would be off by ~1
    assert np.sqrt(np.mean((rec - Y)[missing] ** 2)) < 0.2


@pytest.mark.parametrize('complete', [True, False])
def test_fit_with_fixed_alpha_never_changes_alpha(complete):
    "Every W update of the fit uses the fixed alpha (not the default, not a learned one)."
    rng = np.random.default_rng(2)
    M, N, D, alpha = 8, 15, 3, 0.37  # 0.37: neither FixedAlpha's default nor anything ARD would give
    Y = rng.standard_normal((M, 2)) @ rng.standard_normal((2, N)) + 0.3 * rng.standard_normal((M, N))
    if not complete:
        Y[rng.random((M, N)) < 0.25] = np.nan
    data, prior = observed(Y), Prior(w=FixedAlpha(alpha))
    history = []
    res = fit_vbfa(data, D, prior=prior, rng=1, max_iter=25, tol=0,
                   callback=lambda it, q, bound: history.append(q))
    assert len(history) == 25 and not res.converged
    for before, q in zip(history, history[1:]):
        assert q.a_alpha is None and q.b_alpha is None
        assert elbo(data, q, prior).alpha == 0
        np.testing.assert_array_equal(prior.w.moments(q)[0], np.full(D, alpha))
        # replay this sweep's W update (new X, previous mu and tau) with the fixed alpha
        tau = gamma_moments(before.a_tau, before.b_tau)[0]
        W, Sw = update_W(data, q.X, sum_xx(data, q.X, q.Sx), before.mu, tau, np.full(D, alpha))
        np.testing.assert_allclose(q.W, W, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(q.Sw, Sw, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('Y', [np.array([[1.0, np.nan], [np.nan, np.nan]]), np.array([[1.0, 1.0], [np.nan, 1.0]])])
def test_observed_values_without_spread_still_fit(Y):
    "One observed value, or all equal: the initial noise scale falls back to 1 instead of overflowing <tau>."
    data, prior = observed(Y), Prior(w=ARD())
    q = init_posterior(data, 1, prior, False, np.random.default_rng(0))
    assert np.all(np.isfinite(gamma_moments(q.a_tau, q.b_tau)[0]))
    for _ in range(3):
        q, terms = sweep(data, q, prior, False)
        assert np.isfinite(terms.total)


# (the batched Gaussian from a precision and the masked outer sums are tested in test_linalg.py)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e6])
@pytest.mark.parametrize("csr", [False, True])
def test_sq_error_keeps_its_digits_with_large_means(scale, csr):
    "Features with means up to 5e8 and residuals of size `scale`: the residual form agrees with the same quantity"
    " computed on centred values, to the rounding of the inputs themselves (eps 5e8 / scale). The expanded square"
    " y^2 - 2 y m + m^2 would be off by about eps (5e8)^2 / scale^2: every digit at scale 1e-3 and 1."
    import scipy.sparse as sparse
    Y, mask, prior, q = random_problem(11, 5, 8, 2, 0.3, False, False)
    offset = 1e8 * np.arange(1, 6)
    q = q._replace(mu=q.mu * scale + offset, W=q.W * scale)
    Yo = np.where(mask, Y * scale + offset[:, None], np.nan)
    data = observed(Yo, sparse_storage=csr)
    got = sq_error(data, q.W, q.Sw, q.X, q.Sx, sum_xx(data, q.X, q.Sx), q.mu, q.vmu)
    # the same quantity on the centred problem (offset removed from y and mu), where nothing cancels
    qc = q._replace(mu=q.mu - offset)
    datac = observed(np.where(mask, Y * scale, np.nan), sparse_storage=csr)
    ref = sq_error(datac, qc.W, qc.Sw, qc.X, qc.Sx, sum_xx(datac, qc.X, qc.Sx), qc.mu, qc.vmu)
    assert np.all(got >= 0)
    np.testing.assert_allclose(got, ref, rtol=max(1e-10, 50 * np.finfo(float).eps * offset.max() / scale))


@pytest.mark.parametrize("ard", [False, True])
@pytest.mark.parametrize("shared", [False, True])
def test_sweep_bound_equals_bound_recomputed_from_scratch(ard, shared):
    "The sweep hands the log-determinants of its Cholesky factorisations to the bound; recomputing agrees."
    Y, mask, prior, q = random_problem(5, 9, 30, 4, 0.25, ard, shared)
    data = observed(np.where(mask, Y, np.nan))
    q = init_posterior(data, 4, prior, shared, np.random.default_rng(0))
    for _ in range(3):
        q, terms = sweep(data, q, prior, shared)
        fresh = elbo(data, q, prior)
        np.testing.assert_allclose(np.array(terms), np.array(fresh), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("prior, name", [(Prior(beta=0.0), "prior.beta"), (Prior(a_tau=-1.0), "prior.a_tau"),
                                         (Prior(b_tau=np.inf), "prior.b_tau"),
                                         (Prior(w=FixedAlpha(np.nan)), "prior.w.alpha"),
                                         (Prior(w=ARD(1e-3, -2.0)), "prior.w.b_alpha"),
                                         (Prior(w=ARD("1", 1.0)), "prior.w.a_alpha")])
def test_fit_refuses_bad_hyperparameters_by_name(prior, name):
    Y = np.random.default_rng(0).standard_normal((5, 12))
    with pytest.raises(ValueError, match=name.replace('.', r'\.')):
        fit_vbfa(observed(Y), 2, prior, max_iter=3)


def test_fit_reports_numerical_breakdown():
    "Data at 1e200 overflow the squared errors: the fit stops with a clear error instead of iterating on NaN."
    Y = 1e200 * np.random.default_rng(1).standard_normal((6, 15))
    with pytest.raises(FloatingPointError, match="numerical breakdown"):
        with np.errstate(all='ignore'):
            fit_vbfa(observed(Y), 2, Prior(), max_iter=5)
