"""Bayesian PPCA in the Householder parameterisation (`vbfa_lit.householder_ppca`): the likelihood from sufficient
statistics, the NumPyro model's prior (a prior-predictive check that catches a wrong density of the ordered singular
values), the diagnostics, a small posterior run, and bad input.

Statistical tests use fixed seeds and a false-alarm level ALPHA per test; MCMC draws are thinned to about one draw
per effective sample before a KS test, so the test's iid assumption holds approximately.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from vbfa_lit.householder_ppca import (SufficientStatistics, _log_likelihood, bulk_ess, householder_ppca,
                                       ppca_log_likelihood, sample_prior_W,
                                       split_rhat, sufficient_statistics)
from vbfa_lit.stiefel import householder_columns, haar_orthogonal, sample_stiefel

ALPHA = 1e-3
numpyro = pytest.importorskip('numpyro')


@pytest.fixture(autouse=True, scope='module')
def _jax_cache_in_a_directory_of_the_tests(request):
    """These tests keep JAX's compiled programs in a directory of their own, not in the user's cache: pytest's cache
    directory (.pytest_cache/, one per xdist worker), so that a later run loads them instead of compiling again. The
    tests of the cache itself use fresh temporary directories."""
    old = os.environ.get('VBFA_LIT_JAX_CACHE')
    worker = os.environ.get('PYTEST_XDIST_WORKER', 'main')
    os.environ['VBFA_LIT_JAX_CACHE'] = str(request.config.cache.mkdir(f'vbfa_lit_jax_{worker}'))
    yield
    if old is None: del os.environ['VBFA_LIT_JAX_CACHE']
    else: os.environ['VBFA_LIT_JAX_CACHE'] = old


# ------------------------------------------------------------------------------------------------ the likelihood
@pytest.mark.parametrize('N,M,D', [(2, 1, 1), (30, 4, 2), (300, 12, 5), (569, 30, 2)])
def test_likelihood_equals_dense_logpdf(N, M, D):
    rng = np.random.default_rng(N + M + D)
    X = 50 + rng.standard_normal((N, M)) * rng.uniform(0.1, 10, M)
    mu, s = X.mean(0) + rng.standard_normal(M), 0.4
    for W, orth in ((rng.standard_normal((M, D)), False),
                    (sample_stiefel(M, D, random_state=rng) * np.sort(rng.uniform(0.5, 4, D))[::-1], True)):
        dense = stats.multivariate_normal(mu, W @ W.T + s**2 * np.eye(M)).logpdf(X).sum()
        assert ppca_log_likelihood(X, W, s, mu) == pytest.approx(dense, rel=1e-11)
        assert _log_likelihood(W, np.float64(s**2), mu, sufficient_statistics(X), orthogonal=orth) == pytest.approx(dense, rel=1e-11)


def test_likelihood_batched_and_from_statistics():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    W, s, mu = rng.standard_normal((5, 3, 2)), rng.uniform(0.5, 1, 5), rng.standard_normal((5, 3))
    st = sufficient_statistics(X)
    assert isinstance(st, SufficientStatistics) and st.n == 40
    batched = ppca_log_likelihood(st, W, s, mu)
    single = [ppca_log_likelihood(X, W[i], s[i], mu[i]) for i in range(5)]
    np.testing.assert_allclose(batched, single, rtol=1e-13)


def test_jax_likelihood_and_map_agree_with_numpy():
    import jax.numpy as jnp
    rng = np.random.default_rng(2)
    X = rng.standard_normal((100, 6)) * 2 + 1
    vs = [rng.standard_normal(6 - q) for q in range(3)]
    for reflection in ('mezzadri', 'swap'):
        U_np = householder_columns(vs, reflection=reflection)
        U_j = np.asarray(householder_columns([jnp.asarray(v) for v in vs], xp=jnp, reflection=reflection))
        np.testing.assert_allclose(U_j, U_np, atol=1e-5)
    W, mu = U_np * [3.0, 2.0, 1.0], rng.standard_normal(6)
    st = sufficient_statistics(X)
    jst = SufficientStatistics(st.n, jnp.asarray(st.mean), jnp.asarray(st.cov))
    ll = _log_likelihood(W, np.float64(0.25), mu, st, orthogonal=True)
    ll_j = float(_log_likelihood(jnp.asarray(W), jnp.asarray(0.25), jnp.asarray(mu), jst, xp=jnp, orthogonal=True))
    assert ll_j == pytest.approx(ll, rel=1e-5)


# ------------------------------------------------------------------------------------------------- diagnostics
def test_split_rhat_and_bulk_ess():
    rng = np.random.default_rng(3)
    iid = rng.standard_normal((4, 1000, 3))
    r = split_rhat(iid)
    assert r.shape == (3,) and np.all(np.abs(r - 1) < 0.01)
    ess = bulk_ess(iid)
    assert np.all((ess > 3000) & (ess < 5500)), ess
    stuck = iid + np.arange(4)[:, None, None]           # chains centred at 0, 1, 2, 3
    assert np.all(split_rhat(stuck) > 1.5)
    ar = np.zeros((4, 1000))                             # AR(1), rho = 0.9: ESS about n (1 - rho) / (1 + rho)
    for t in range(1, 1000): ar[:, t] = 0.9 * ar[:, t - 1] + rng.standard_normal(4)
    assert 100 < bulk_ess(ar) < 400


# -------------------------------------------------------------------------------------- prior-predictive check
def thin(draws, n_keep):
    "Every k-th draw of each chain, flattened, so that about n_keep draws remain."
    C, N = draws.shape[:2]
    k = max(1, C * N // n_keep)
    return draws[:, ::k].reshape(-1, *draws.shape[2:])


def prior_pvalues(W_draws, rng):
    "KS p-values of the prior of W against iid N(0, 1), after thinning to about the effective sample size."
    n_eff = int(min(bulk_ess(W_draws[..., 0, 0]), bulk_ess(W_draws[..., -1, -1])))
    W = thin(W_draws, n_eff)
    M, D = W.shape[-2:]
    WR = W @ haar_orthogonal(D, size=len(W), random_state=rng)
    gauss = np.linalg.svd(rng.standard_normal((20_000, M, D)), compute_uv=False)
    sv = np.linalg.svd(W, compute_uv=False)
    return [stats.kstest(WR[:, 0, 0], 'norm').pvalue, stats.kstest(WR[:, -1, -1], 'norm').pvalue,
            stats.kstest(np.sum(W[:, 0] ** 2, -1), stats.chi2(D).cdf).pvalue,
            *[stats.ks_2samp(sv[:, q], gauss[:, q]).pvalue for q in range(D)]]


@pytest.mark.slow
@pytest.mark.parametrize('radius_concentration', [100.0, None])
def test_model_prior_is_the_iid_gaussian_prior(radius_concentration):
    W = sample_prior_W(5, 2, num_samples=3000, num_chains=2, random_state=0, radius_concentration=radius_concentration)
    p = prior_pvalues(W, np.random.default_rng(1))
    assert min(p) * len(p) > ALPHA, p


@pytest.mark.slow
def test_prior_check_rejects_a_density_without_the_jacobian():
    import jax.numpy as jnp
    M = 5
    wrong = lambda s: jnp.sum((M - 3) * jnp.log(s) - s**2 / 2) + jnp.log(s[0]**2 - s[1]**2)
    W = sample_prior_W(M, 2, num_samples=3000, num_chains=2, random_state=0, _sigma_log_kernel=wrong)
    p = prior_pvalues(W, np.random.default_rng(1))
    assert min(p) * len(p) < ALPHA, p


# -------------------------------------------------------------------------------------------- posterior runs
def synthetic(seed, N=150, M=5, sigma=(3.0, 1.0), noise_var=0.01):
    rng = np.random.default_rng(seed)
    W = sample_stiefel(M, len(sigma), random_state=rng) * np.array(sigma)
    X = rng.standard_normal((N, len(sigma))) @ W.T + np.sqrt(noise_var) * rng.standard_normal((N, M))
    return X, W


@pytest.fixture(scope='module')
def offset_run():
    """One posterior run that two tests read (compiling NUTS for a model is most of a run's cost): synthetic(0) at
    N = 2000 (M = 5, D = 2; N costs nothing, the likelihood is computed from the mean and covariance) shifted by an
    offset of 1e6, where float32 leaves a resolution of 0.06 against a noise sd of 0.1. Returns the data, the true W,
    the result, and JAX's x64 setting before and after the call."""
    jax = pytest.importorskip('jax')
    X, W_true = synthetic(0, N=2000)
    X = X + 1e6
    before = jax.config.jax_enable_x64
    res = householder_ppca(X, 2, num_warmup=200, num_samples=200, num_chains=2, random_state=0)
    return X, W_true, res, before, jax.config.jax_enable_x64


def test_small_posterior_run(offset_run):
    _, W_true, res, _, _ = offset_run
    s = res.samples
    assert s['W'].shape == (2, 200, 5, 2) and s['U'].shape == (2, 200, 5, 2)
    assert s['sigma'].shape == (2, 200, 2) and s['noise_std'].shape == (2, 200) and s['mu'].shape == (2, 200, 5)
    assert np.all(s['sigma'][..., 0] > s['sigma'][..., 1])
    np.testing.assert_allclose(np.swapaxes(s['U'], -1, -2) @ s['U'], np.broadcast_to(np.eye(2), (2, 200, 2, 2)), atol=1e-5)
    d = res.diagnostics()
    assert set(d) >= {'r_hat', 'ess_bulk', 'divergences', 'divergent_fraction', 'draws'}
    assert d['r_hat']['W'].shape == (5, 2) and d['ess_bulk']['mu'].shape == (5,)
    assert d['divergent_fraction'] < 0.05
    assert np.nanmax(d['r_hat']['sigma']) < 1.05 and np.nanmax(d['r_hat']['W']) < 1.05
    # the posterior covers the truth: sigma within 4 posterior sd (plus the data's own deviation), W W^T close
    sig = s['sigma'].reshape(-1, 2)
    assert np.all(np.abs(sig.mean(0) - [3.0, 1.0]) < 4 * sig.std(0) + 0.05)
    WWt = np.einsum('cnij,cnkj->ik', s['W'], s['W']) / 400
    assert np.abs(WWt - W_true @ W_true.T).max() < 1.0
    assert 'householder' in res.summary()


@pytest.mark.slow
def test_reproducible_with_a_seed():
    X, _ = synthetic(2)
    a, b = (householder_ppca(X, 1, num_warmup=50, num_samples=50, num_chains=2, random_state=7) for _ in range(2))
    np.testing.assert_array_equal(a.samples['W'], b.samples['W'])


@pytest.mark.slow
def test_standard_and_householder_agree_on_WWt():
    X, _ = synthetic(1)
    runs = {p: householder_ppca(X, 2, num_warmup=500, num_samples=500, num_chains=2, random_state=1, parameterisation=p)
            for p in ('householder', 'standard')}
    WWt = {p: np.einsum('cnij,cnkj->cnik', r.samples['W'], r.samples['W']).reshape(-1, 5, 5) for p, r in runs.items()}
    se = np.sqrt(sum(w.var(0) / 200 for w in WWt.values()))      # 200: a conservative effective sample size
    assert np.all(np.abs(WWt['householder'].mean(0) - WWt['standard'].mean(0)) < 5 * se)


# ------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize('X,match', [(np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]]), 'VBPCA'),
                                     (np.array([[1.0, np.inf], [2.0, 3.0], [0.0, 1.0]]), 'infinite'),
                                     (np.ones(5), '2-d'), (np.ones((1, 3)), 'at least 2 samples'),
                                     ([['a', 'b'], ['c', 'd']], 'expected numbers')])
def test_bad_data(X, match):
    with pytest.raises((ValueError, TypeError), match=match):
        householder_ppca(X, 1)
    with pytest.raises((ValueError, TypeError), match=match):
        sufficient_statistics(X)


@pytest.mark.parametrize('kw,exc,match', [(dict(n_components=4), ValueError, 'n_components'),
                                          (dict(n_components=0), ValueError, 'n_components'),
                                          (dict(n_components=1.5), TypeError, 'n_components'),
                                          (dict(n_components=1, parameterisation='givens'), ValueError, 'parameterisation'),
                                          (dict(n_components=1, reflection='qr'), ValueError, 'reflection'),
                                          (dict(n_components=1, num_chains=0), ValueError, 'num_chains'),
                                          (dict(n_components=1, num_samples=2.0), TypeError, 'num_samples'),
                                          (dict(n_components=1, noise_prior_scale=-1), ValueError, 'noise_prior_scale'),
                                          (dict(n_components=1, radius_concentration=0), ValueError, 'radius_concentration')])
def test_bad_arguments(kw, exc, match):
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(exc, match=match):
        householder_ppca(X, **kw)


def test_bad_likelihood_arguments():
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match='noise_std'): ppca_log_likelihood(X, np.ones((3, 1)), 0.0, np.zeros(3))
    with pytest.raises(ValueError, match='W'): ppca_log_likelihood(X, np.ones((4, 1)), 1.0, np.zeros(3))
    with pytest.raises(ValueError, match='mu'): ppca_log_likelihood(X, np.ones((3, 1)), 1.0, np.zeros(2))
    with pytest.raises(ValueError, match='D'): sample_prior_W(2, 3)


def test_missing_numpyro_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, 'numpyro', None)
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ImportError, match=r"vbfa_lit\[mcmc\]"):
        householder_ppca(X, 1)


def test_breast_cancer_loader():
    from vbfa_lit.data import load_breast_cancer          # the one loader (lesson 13 uses it standardised)
    d = load_breast_cancer(standardize=True)
    assert d.X.shape == (569, 30) and len(d.feature_names) == 30 and d.target.shape == (569,)
    np.testing.assert_allclose(d.X.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(d.X.std(0), 1, atol=1e-12)


def test_double_precision_inside_the_call_with_a_large_offset(offset_run):
    # issue 20, item 1: in float32 an offset of 1e6 gave noise_std 1.78 and sigma 2.87 (the data say 0.41, 0.93)
    X, _, res, before, after = offset_run
    N, M, D = len(X), 5, 2
    lam = np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1]
    noise_ml, sigma_ml = np.sqrt(lam[D:].mean()), np.sqrt(lam[:D] - lam[D:].mean())    # W = U sigma, ML PPCA
    assert after == before                                           # the caller's setting is left alone
    # posterior sd of noise_std is about noise / sqrt(2 N (M - D)) (0.0009 here), of sigma_q about sigma_q / sqrt(2 N)
    # (1.6 %): the tolerances are five of them (the Monte-Carlo error of the means, sd / sqrt(ESS), is a fifteenth of
    # one at the run's bulk ESS of about 300); float32 inside the call gives noise_std 1.27 and sigma 1.24, 0.56 here
    assert abs(res.samples['noise_std'].mean() - noise_ml) < 5 * noise_ml / np.sqrt(2 * N * (M - D))
    assert np.all(np.abs(res.samples['sigma'].reshape(-1, D).mean(0) / sigma_ml - 1) < 5 / np.sqrt(2 * N))


@pytest.mark.parametrize('kwargs, error, name', [
    (dict(target_accept_prob=0.0), ValueError, 'target_accept_prob'),
    (dict(target_accept_prob=1.5), ValueError, 'target_accept_prob'),
    (dict(target_accept_prob='x'), TypeError, 'target_accept_prob'),
    (dict(dense_mass='no'), TypeError, 'dense_mass'),
    (dict(noise_prior_scale=np.inf), ValueError, 'noise_prior_scale'),
    (dict(noise_prior_scale=-1.0), ValueError, 'noise_prior_scale'),
    (dict(radius_concentration=np.inf), ValueError, 'radius_concentration'),
    (dict(random_state=-1), ValueError, 'random_state'),
    (dict(num_samples=0), ValueError, 'num_samples'),
])
def test_bad_arguments_are_named_before_any_sampling(kwargs, error, name):
    # issue 20, items 9 and 10: these were accepted, or failed inside JAX/NumPyro with a message naming nothing
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(error, match=f'^{name}'):
        householder_ppca(X, 1, num_warmup=2, num_samples=kwargs.pop('num_samples', 2), **kwargs)


@pytest.fixture(scope='module')
def one_draw_without_cache():
    """One run of the smallest sampler (30 x 3, D = 1, 5 warm-up iterations, one chain, one draw) with JAX's cache
    directory unset and VBFA_LIT_JAX_CACHE=off, which three tests read (its compilation is most of its cost): the
    diagnostics of a single draw, that 'off' runs without a persistent cache, and that another data set of the same
    shape reuses its compiled program (so do the runs of those tests). Returns the result and JAX's cache directory
    after the call."""
    import jax
    saved = jax.config.jax_compilation_cache_dir
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv('VBFA_LIT_JAX_CACHE', 'off')
        jax.config.update('jax_compilation_cache_dir', None)
        try:
            X = np.random.default_rng(0).normal(size=(30, 3))
            r = householder_ppca(X, 1, num_warmup=5, num_samples=1, num_chains=1, random_state=0)
            return r, jax.config.jax_compilation_cache_dir
        finally: jax.config.update('jax_compilation_cache_dir', saved)


def test_complex_data_and_one_draw(one_draw_without_cache):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match='^X: Complex'): householder_ppca(X + 1j, 1)
    res, _ = one_draw_without_cache
    assert res.samples['W'].shape == (1, 1, 3, 1)
    d = res.diagnostics()                                            # was a ZeroDivisionError
    assert np.all(np.isnan(d['r_hat']['sigma'])) and d['draws'] == 1


def test_a_second_data_set_of_the_same_shape_compiles_nothing(one_draw_without_cache):
    """The data's statistics are arguments of the compiled sampler, not constants in it: other data of the same shape
    and the same settings run the program the fixture compiled (in this process, with or without a persistent cache),
    and the draws follow the new data (100 away from the fixture's)."""
    first, _ = one_draw_without_cache
    X2 = np.random.default_rng(1).normal(size=(30, 3)) + 100
    r = householder_ppca(X2, 1, num_warmup=5, num_samples=1, num_chains=1, random_state=0)
    assert first.compilations > 0 and r.compilations == 0 and r.compile_seconds == 0
    assert np.all(np.abs(r.samples['mu'] - X2.mean(0)) < 10)          # not the fixture's data (mean about 0)


# ------------------------------------------------------------------------------------------------ compilation cache
_CHILD = """
import json, os, sys, numpy as np, jax
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith('cache_hits') else None)
from vbfa_lit.householder_ppca import householder_ppca
X = np.random.default_rng(int(os.environ['SEED'])).normal(size=(30, 3))
r = householder_ppca(X, 1, num_warmup=5, num_samples=5, num_chains=1, random_state=0)
d = r.diagnostics()
print(json.dumps(dict(compile_seconds=d['compile_seconds'], sampling_seconds=d['sampling_seconds'], seconds=d['seconds'],
                      compilations=r.compilations, cache_dir=r.cache_dir, hits=len(hits),
                      after=jax.config.jax_compilation_cache_dir)))
"""


def _child(env):
    # XLA's backend without optimisation passes, as the benchmark's smoke run: the test is about the cache, not the
    # programs' speed (both processes use the same flags, which are part of the cache's keys)
    xla = ' '.join(filter(None, (os.environ.get('XLA_FLAGS'), '--xla_backend_optimization_level=0')))
    out = subprocess.run([sys.executable, '-c', _CHILD], capture_output=True, text=True,
                         env={**os.environ, 'XLA_FLAGS': xla, **env})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_new_process_loads_the_compiled_programs_from_the_cache(tmp_path):
    """The first process compiles and fills the cache; a second, new process, with other data of the same shape, finds
    every program there (the data are the programs' arguments, not constants in them)."""
    cache = tmp_path / 'jax'
    first = _child({'VBFA_LIT_JAX_CACHE': str(cache), 'SEED': '0'})
    files = sorted(p.name for p in cache.iterdir())
    assert first['cache_dir'] == str(cache) and len(files) > 0
    assert first['compilations'] > 0 and 0 < first['compile_seconds'] <= first['seconds']
    assert first['sampling_seconds'] == pytest.approx(first['seconds'] - first['compile_seconds'])
    assert first['after'] is None                                    # the caller's JAX setting is back
    second = _child({'VBFA_LIT_JAX_CACHE': str(cache), 'SEED': '1'})
    # (a cold process finds a few programs it compiled itself moments before; a warm one finds them all)
    assert second['hits'] > first['hits'] and second['hits'] >= len(files)
    assert second['compilations'] > 0 and np.isfinite(second['compile_seconds'])
    assert sorted(p.name for p in cache.iterdir()) == files          # nothing compiled anew


@pytest.mark.filterwarnings('ignore:All-NaN slice:RuntimeWarning')    # summary() of one draw: its R-hat is NaN
def test_cache_directory_and_restored_jax_settings(tmp_path, monkeypatch, request, one_draw_without_cache):
    import jax
    from vbfa_lit.householder_ppca import jax_cache_dir
    monkeypatch.delenv('VBFA_LIT_JAX_CACHE', raising=False)
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))
    assert jax_cache_dir() == tmp_path / 'xdg' / 'vbfa_lit' / 'jax'
    monkeypatch.setenv('VBFA_LIT_JAX_CACHE', 'OFF')
    assert jax_cache_dir() is None
    monkeypatch.setenv('VBFA_LIT_JAX_CACHE', str(tmp_path / 'mine'))
    assert jax_cache_dir() == tmp_path / 'mine'
    # a directory the user set in JAX is used, and every setting the call changes is put back
    names = ('jax_compilation_cache_dir', 'jax_persistent_cache_min_compile_time_secs',
             'jax_persistent_cache_min_entry_size_bytes')
    saved = {k: getattr(jax.config, k) for k in names}
    try:
        # the user's directory: one that lasts, like a user's, in pytest's cache (the run below has the settings and
        # the data's shape of the fixture's, whose compiled program it reuses)
        user_dir = request.config.cache.mkdir(f"vbfa_lit_jax_user_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}")
        user = {'jax_compilation_cache_dir': str(user_dir), 'jax_persistent_cache_min_compile_time_secs': 5.0,
                'jax_persistent_cache_min_entry_size_bytes': 123}
        for k, v in user.items(): jax.config.update(k, v)
        X = np.random.default_rng(0).normal(size=(30, 3))
        r = householder_ppca(X, 1, num_warmup=5, num_samples=1, num_chains=1, random_state=0)
        assert r.cache_dir == str(user_dir)
        assert {k: getattr(jax.config, k) for k in names} == user
        assert not (tmp_path / 'mine').exists()
        d = r.diagnostics()
        assert 0 <= d['compile_seconds'] <= d['seconds'] and 'compiling' in r.summary()
        # VBFA_LIT_JAX_CACHE=off with no directory set in JAX: no persistent cache (the fixture's run)
        r, after = one_draw_without_cache
        assert r.cache_dir is None and after is None
    finally:
        for k, v in saved.items(): jax.config.update(k, v)
