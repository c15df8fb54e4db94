"""What importing the package loads: the package and its light modules load no optional or heavy dependency (SymPy,
JAX, NumPyro, Dask, numba, ipywidgets, pooch) until a user asks for what needs it; fits with the NumPy engine never load
numba, in-memory fits never load Dask, and Dask input is recognised once Dask is imported.

One fresh interpreter checks every claim, one after the other: modules only accumulate in `sys.modules`, so a module
that loaded a forbidden dependency on its own loads it here too (each check is at least as strict as in an interpreter
of its own), and the output names the step that loaded it. Starting one interpreter instead of seven saves their
start-up (each imports NumPy, SciPy, scikit-learn and the package)."""
import json
import subprocess
import sys
import textwrap

# (what the step does, the modules it imports, the modules that must not be loaded after it)
STEPS = [
    # the top-level names load their modules on first use: the package alone, its engine (what a Dask worker runs) and
    # its data generators load neither scikit-learn nor what scikit-learn loads (pandas, scipy.stats)
    ('import vbfa_lit', ('vbfa_lit',), ('sympy', 'ipywidgets', 'jax', 'dask', 'numba', 'pooch', 'fastcore', 'sklearn')),
    ('import vbfa_lit.linalg (NumPy and SciPy only)', ('vbfa_lit.linalg',), ('sympy', 'jax', 'numpyro', 'numba', 'dask')),
    ('import vbfa_lit.engine', ('vbfa_lit.engine',), ('sklearn', 'pandas', 'scipy.stats', 'numba')),
    # pooch (and requests) load only when a file is fetched, scikit-learn (its Bunch) when a generator returns
    ('import vbfa_lit.data', ('vbfa_lit.data',), ('pooch', 'requests', 'sympy', 'jax', 'numpyro', 'sklearn', 'pandas')),
    ('import the RJMCMC modules', ('vbfa_lit.rjmcmc', 'vbfa_lit.rjmcmc_fast'), ('numba', 'llvmlite')),
    ('import vbfa_lit.plots', ('vbfa_lit.plots',), ('ipywidgets',)),
]

CHILD = textwrap.dedent("""
    import importlib, json, sys, warnings
    warnings.simplefilter('ignore')
    steps, report = json.loads(sys.argv[1]), []
    def check(step, forbidden):
        report.append((step, sorted(m for m in forbidden if m in sys.modules)))
    for step, modules, forbidden in steps:
        for m in modules: importlib.import_module(m)
        check(step, forbidden)
    import numpy as np
    import scipy.sparse as sparse
    import vbfa_lit
    from vbfa_lit import VBPCA
    from vbfa_lit.vbpca import Prior
    from vbfa_lit.engine import fit_vbfa, observed
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((8, 30)); Y[rng.random(Y.shape) < 0.3] = np.nan
    fit_vbfa(observed(Y), 3, Prior(), max_iter=5, engine='numpy')
    fit_vbfa(observed(Y, sparse_storage=True), 3, Prior(), max_iter=5, engine='numpy')
    VBPCA(engine='numpy', max_iter=5).fit(Y.T)
    check('fits with the NumPy engine (dense, sparse, VBPCA)', ('numba',))
    X = np.random.default_rng(0).normal(size=(30, 4))
    vbfa_lit.VBPCA(engine='numpy', random_state=0).fit(X).transform(X)
    check('an in-memory fit and transform', ('dask', 'distributed'))
    try:
        import dask.array as da
    except ImportError:
        dask = None
    else:                                  # Dask input is recognised once Dask is imported
        model = vbfa_lit.VBPCA(engine='numpy', random_state=0).fit(da.from_array(X, chunks=10))
        dask = isinstance(model.transform(da.from_array(X, chunks=10)), da.Array)
    print(json.dumps(dict(report=report, dask=dask)))
""")


def test_imports_load_only_what_is_needed():
    out = subprocess.run([sys.executable, '-c', CHILD, json.dumps(STEPS)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(res['report']) == len(STEPS) + 2
    assert all(not loaded for _, loaded in res['report']), [r for r in res['report'] if r[1]]
    assert res['dask'] in (True, None)     # None: Dask is not installed (the optional 'dask' extra)
