"""The data and the models the comparisons share (imported inside the child processes only)."""
import numpy as np


def dataset1(seed, missing=0.2):
    """Luttinen & Ilin's dataset 1 in the papers' orientation, Y (M = 50 features, N = 200 samples), drawn by its one
    generator `vbfa_lit.data.make_luttinen_ilin('1')`: covariance U diag(25 x10, 1 x40) U^T with U Haar, means ~ N(0, 1),
    a `missing` fraction of the entries held out. Returns (Y_full, Y_with_nan, missing_mask, mean, cov)."""
    from vbfa_lit.data import make_luttinen_ilin
    d = make_luttinen_ilin('1', missing=missing, random_state=seed)
    return d.X_full.T, d.X.T, d.test_mask.T, d.mean, d.covariance


def dim200(seed):
    """The 200-dimensional case (Luttinen & Ilin Sec. 4.1) from `vbfa_lit.convergence.paper_dataset('200')`:
    M = 200, N = 2000, eigenvalues 21^2, ..., 2^2 then 1, 20% missing. Returns (Y_full, Y_with_nan, missing_mask)."""
    from vbfa_lit.convergence import paper_dataset
    Y_train, Y_full, test = paper_dataset('200', np.random.default_rng(seed))
    return Y_full, Y_train, test


def oracle_rmse(Y, miss, mean, cov):
    "RMSE of the true conditional mean E[y_miss | y_obs] under the generating Gaussian: the floor for any method."
    err = []
    for n in range(Y.shape[1]):
        m, o = miss[:, n], ~miss[:, n]
        if m.any():
            pred = mean[m] + cov[np.ix_(m, o)] @ np.linalg.solve(cov[np.ix_(o, o)], Y[o, n] - mean[o])
            err.append(Y[m, n] - pred)
    return float(np.sqrt(np.mean(np.concatenate(err) ** 2)))


def rmse(A, B, where): return float(np.sqrt(np.mean((A[where] - B[where]) ** 2)))


def movielens_like(seed, n_users=943, n_movies=1682, n_ratings=100_000, rank=5):
    """A MovieLens-100k-sized rating matrix (users x movies, NaN where missing): 100,000 positions uniformly
    without replacement (6.3% observed), ratings 1..5 from a rank-5 structure plus noise, rounded and clipped."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(n_users * n_movies, n_ratings, replace=False)
    u, m = np.unravel_index(idx, (n_users, n_movies))
    A, B = rng.standard_normal((n_users, rank)) / 2, rng.standard_normal((n_movies, rank)) / 2
    r = np.clip(np.rint(3.5 + np.sum(A[u] * B[m], 1) + 0.5 * rng.standard_normal(n_ratings)), 1, 5)
    Y = np.full((n_users, n_movies), np.nan)
    Y[u, m] = r
    return Y


def prior(kind='ard'):
    "Luttinen & Ilin's broad hyperparameters (1e-5) with ARD, or the broad prior FixedAlpha(1e-3) on W."
    from vbfa_lit.vbpca import Prior, FixedAlpha
    from vbfa_lit.ard import ARD
    return Prior(1e-5, 1e-5, 1e-5, w=ARD(1e-5, 1e-5) if kind == 'ard' else FixedAlpha(1e-3))


class Ours:
    """One chain of our sweeps; `step()` is one `sweep`: q(X), q(W), q(mu), q(tau), q(alpha), then the full bound, with
    the NumPy sweep of lesson 03 (engine='numpy') or the compiled one of 02c (engine='numba')."""
    def __init__(self, Yo, D, shared, seed, sparse_storage=False, kind='ard', engine='numpy'):
        from vbfa_lit.engine import observed, init_posterior
        self.data, self.prior, self.shared = observed(Yo, sparse_storage=sparse_storage), prior(kind), shared
        self.engine = engine
        self.q = init_posterior(self.data, D, self.prior, shared, np.random.default_rng(seed))
        self.bound = None

    def step(self):
        from vbfa_lit.engine import sweep
        self.q, terms = sweep(self.data, self.q, self.prior, self.shared, self.engine)
        self.bound = terms.total

    def recon(self): return self.q.W @ self.q.X.T + self.q.mu[:, None]

    @staticmethod
    def blas():
        "The package's one-thread limit, as `fit_vbfa` holds it around its sweeps (enter it around timed steps)."
        from vbfa_lit.linalg import _threadpool_controller
        return _threadpool_controller().limit(limits=1, user_api='blas')


class BayesPyFA:
    """Our model from BayesPy nodes: y_mn ~ N(w_m^T x_n + mu_m, 1/tau_m), x_n ~ N(0, I), w_m ~ N(0, diag(alpha)^-1),
    alpha_d ~ G(1e-5, 1e-5), mu_m ~ N(0, 1e5), tau_m ~ G(1e-5, 1e-5); missing values through the mask.
    `step()` is `Q.update(repeat=1)`: X, W, mu, tau, alpha (our order), then the lower bound, which BayesPy
    always computes; `step(bound=False)` calls the node updates only. `init` (our initial posterior) starts every
    factor from our state, so that without rotation BayesPy traces our bound; otherwise W is random."""
    def __init__(self, Yo, D, seed, shared=False, init=None):
        import bayespy.nodes as bn
        from bayespy.inference import VB
        np.random.seed(seed)  # BayesPy's initialize_from_random draws from NumPy's global generator
        M, N = Yo.shape
        mask = ~np.isnan(Yo)
        self.alpha = bn.Gamma(1e-5, 1e-5, plates=(D,), name='alpha')
        self.W = bn.GaussianARD(0, self.alpha, shape=(D,), plates=(M, 1), name='W')
        self.X = bn.GaussianARD(0, 1, shape=(D,), plates=(1, N), name='X')
        self.mu = bn.GaussianARD(0, 1e-5, plates=(M, 1), name='mu')
        self.tau = bn.Gamma(1e-5, 1e-5, plates=() if shared else (M, 1), name='tau')
        self.Y = bn.GaussianARD(bn.Add(bn.Dot(self.W, self.X), self.mu), self.tau, name='Y')
        self.Y.observe(np.where(mask, Yo, 0.0), mask=mask)
        if init is None:
            self.W.initialize_from_random()
        else:
            self.W.initialize_from_parameters(init.W[:, None, :], 1.0)
            self.mu.initialize_from_parameters(init.mu[:, None], 1.0)
            self.tau.initialize_from_parameters(init.a_tau[:, None], init.b_tau[:, None])
            self.alpha.initialize_from_parameters(init.a_alpha, init.b_alpha)
        self.Q = VB(self.Y, self.X, self.W, self.mu, self.tau, self.alpha)
        self.nodes = [self.X, self.W, self.mu, self.tau, self.alpha]

    def step(self, bound=True):
        if bound: self.Q.update(repeat=1, verbose=False)
        else:
            for node in self.nodes: node.update()

    @property
    def bound(self): return float(self.Q.L[self.Q.iter - 1])

    def recon(self):
        W, X, mu = self.W.get_moments()[0][:, 0], self.X.get_moments()[0][0], self.mu.get_moments()[0]
        return W @ X.T + mu.reshape(-1, 1)


def vbpca_options(rotate, record_cost, maxiters, seed, fixed, threads=1):
    """vbpca-py's `pca_full` keywords, its hyperparameters at their defaults. `fixed=True` runs exactly `maxiters`
    iterations (every stopping rule off); otherwise its own stopping rules apply."""
    opts = dict(maxiters=maxiters, rotate2pca=rotate, record_cost=record_cost, verbose=0, random_state=seed,
                num_cpu=threads)
    if fixed: opts.update(rmsstop=None, cfstop=None, minangle=0.0, convergence_criteria={'angle': False})
    return opts


def first_reaching(trace, level):
    "1-based index of the first value >= level, or None."
    return next((i + 1 for i, v in enumerate(trace) if v >= level), None)


def thin(trace, n=60):
    "A log-spaced subsample [(1-based iteration, value)] of a long trace, for the JSON."
    idx = np.unique(np.round(np.geomspace(1, len(trace), n)).astype(int))
    return [[int(i), float(trace[i - 1])] for i in idx]
