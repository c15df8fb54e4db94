"""Lesson 06 (the estimator) as a reader sees it: one derivation taught (the predictive density of a row, by the
determinant lemma and Woodbury) and checked against SciPy and `score_samples`; the data's units shown on computed
examples and its summary sentence on them true; the manual parts on the package page (34); checks printed; exercise
4's solution printing the four standard deviations its text quotes."""
import re

import numpy as np

from notebook_text import cell_by_id, cell_with, cells, flat, is_exported, is_hidden, prose, run, shown_code

STEM = '06_estimator'


def test_the_manual_is_on_the_package_page():
    body = '\n'.join(s if k == 'markdown' else shown_code(s) for k, s in cells(STEM))
    assert '(34_package.ipynb)' in body
    pkg = '\n'.join(s for _, s in cells('34_package'))
    for item in ("storage='auto'", 'DegenerateDataWarning', 'set_params', 'MissingDataWarning', 'check_sparse',
                 'MovieLens-1M'):
        assert item in pkg, item
    for idea in ("## The data's units and what the priors mean in them", '## What happens to a missing entry'):
        assert idea in body, idea


def test_units_are_shown_on_computed_examples_and_the_printout_explained():
    cs = cells(STEM)
    start = next(i for i, (_, s) in enumerate(cs) if s.startswith("## The data's units"))
    end = next(i for i, (_, s) in enumerate(cs) if i > start and s.startswith('## '))
    shown = '\n'.join(shown_code(s) for k, s in cs[start:end] if k == 'code')
    assert 'fit_vbfa(' in shown and 'VBPCA(' in shown          # the raw model against the estimator, at several scales
    assert 'a * X_train + b' in shown                          # equivariance computed, not asserted in prose
    i = next(i for i, (_, s) in enumerate(cs) if 'X_units = ' in s)
    assert '10^8' in cs[i - 1][1] or '10^{8}' in cs[i - 1][1]


def test_the_predictive_density_is_a_stepped_derivation():
    md = prose(STEM)
    start = md.index('## The predictive density of a row')
    section = md[start:md.index('\n## ', start + 10)]
    for k in range(5, 9):                                                   # numbered displays, Eqs. (6.5)-(6.8)
        assert f'\\tag{{6.{k}}}' in section, k
    assert 'determinant lemma' in section and 'Woodbury identity' in section
    assert section.count('$$') >= 10                                       # five displayed equations


def _estimator_namespace():
    "The synthetic problem of lesson 06 and its default fit, as the lesson's cells define them."
    from scipy.stats import multivariate_normal
    from vbfa_lit.data import make_ppca
    from vbfa_lit.estimator import VBPCA
    ns = dict(np=np, multivariate_normal=multivariate_normal, make_ppca=make_ppca, VBPCA=VBPCA)
    run(cell_by_id(STEM, '1377e396'), ns)
    ns['vb'] = VBPCA(random_state=0).fit(ns['X_train'])
    return ns


def test_woodbury_cell_agrees_with_direct_scipy_and_score_samples():
    ns = _estimator_namespace()
    printed = run(cell_by_id(STEM, 'woodb4a1'), ns)
    lines = [l for l in printed.splitlines() if ':' in l]
    numbers = [[float(x) for x in re.findall(r'-?\d+\.\d{6,}', l)] for l in lines]
    pairs = [n for n in numbers if len(n) >= 2]
    assert len(pairs) == 3, printed                       # log-determinant, quadratic form, log density
    for n in pairs:
        assert max(n) - min(n) < 1e-9 * max(1.0, abs(n[0])), printed
    assert len(pairs[-1]) == 3                            # (6.2), SciPy, score_samples


def test_summary_sentence_on_units_reads_on_its_own_and_holds():
    md = prose(STEM)
    summary = md[md.index('## Summary'):md.index('## Exercises')]
    assert ('Fitted to the raw numbers, the rank-3 problem keeps all nine columns\n  when the data are scaled by '
            '$10^{-4}$, and a spurious fourth component when scaled by $10^4$') in summary
    # what it says, computed as the lesson's units cell computes it: the raw model keeps 9 columns at 1e-4, 4 at 1e4
    import vbfa_lit.engine as engine
    from vbfa_lit.ard import ARD, effective_components
    from vbfa_lit.data import make_ppca
    from vbfa_lit.transformations import transform_posterior
    from vbfa_lit.vbpca import Prior
    ns = dict(np=np, make_ppca=make_ppca)
    run(cell_by_id(STEM, '1377e396'), ns)
    X = ns['X_train']
    both = lambda data, q, prior: transform_posterior(data, q, prior, 'both')
    kept = {a: int(effective_components(engine.fit_vbfa(engine.observed(a * X.T), 9, Prior(w=ARD()), shared=True,
                                                        rng=0, transform=both).q).sum()) for a in (1e-4, 1e4)}
    assert kept == {1e-4: 9, 1e4: 4}, kept


def test_prints_its_checks_and_imports_what_its_shown_code_uses():
    cs = cells(STEM)
    shown = [s for k, s in cs if k == 'code' and not is_hidden(s) and not is_exported(s)]
    assert any('np.diff(vb.elbo_).min()' in s and 'print(' in s for s in shown)       # "never decreased", printed
    units = next(i for i, (k, s) in enumerate(cs) if k == 'code' and 'fit_vbfa(observed(a * X_train.T)' in s)
    imports = '\n'.join(s for k, s in cs[:units] if k == 'code' and not is_hidden(s) and not is_exported(s)
                        and re.search(r'^(from|import) ', s, re.M))
    for name in ('import numpy as np', 'fit_vbfa', 'observed', 'Prior', 'ARD', 'effective_components',
                 'transform_posterior'):
        assert name in imports, name
    first_imports = next(s for k, s in cs if k == 'code' and 'from fastcore.test import' in s)
    assert not is_hidden(first_imports)


def test_exercise_4_prints_the_four_standard_deviations_it_quotes():
    from vbfa_lit.data import make_ppca
    from vbfa_lit.estimator import VBPCA, latent_posterior
    sim = make_ppca(100, 10, np.array([3.0, 2.0, 1.0]) * np.sqrt(10) / 2, noise_std=0.3, mean='normal', missing=0.2,
                    random_state=np.random.default_rng(6))
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.patches import Ellipse
    env = dict(np=np, latent_posterior=latent_posterior, X_train=sim.X, vb=VBPCA(random_state=0).fit(sim.X), plt=plt,
               Ellipse=Ellipse)
    out = run(cell_with(STEM, "exercise 4's solution"), env)
    lines = out.splitlines()
    assert lines[0].startswith('rows with 10 observed entries') and lines[1].startswith('rows with 4 observed entries')
    many, few = (np.array(re.findall(r'\d\.\d+', line.split('on average')[1]), float) for line in lines)
    md = flat(prose(STEM))
    assert f'{many[0]:.3f} and {many[1]:.3f} for the rows with all ten' in md
    assert f'{few[0]:.3f} and {few[1]:.3f} for the rows with four' in md and 'the folded cell below prints them' in md
    n_obs = (~np.isnan(sim.X)).sum(1)
    drawn = min(3, np.sum(n_obs == n_obs.max())) + min(3, np.sum(n_obs == n_obs.min()))
    assert len(env['ax'].patches) == drawn == 5                          # and draws the ellipses it asks for
    plt.close('all')


def test_every_exercise_that_computes_runs_on_the_page_with_its_output():
    "Exercises 1-4: a folded cell after each solution, none quoting code it does not run."
    import json
    from notebook_text import NBS
    nb = json.loads((NBS / f'{STEM}.ipynb').read_text())
    by_id = {c.get('id'): c for c in nb['cells']}
    for cid in ('ex06ex1c', 'ex06ex2c', 'ex06ex3c', '9a5f6523'):
        c = by_id[cid]
        assert '#| code-fold: true' in ''.join(c['source']), cid
    md = prose(STEM)
    assert '```python' not in md[md.index('## Exercises'):]                # no solution code that the page does not run


def test_the_lesson_opens_with_the_three_questions_and_keeps_no_attribute_table():
    md = prose(STEM)
    first = md[md.index('## '):md.index('*Figure 6.1')]
    for q in ('PCA with missing values', 'How many components?', 'How sure is a filled-in value?'):
        assert q in first, q
    for eq in ('Eq. (3.1)', 'Eq. (4.7)', 'Eq. (4.5)', 'Eq. (7.4)'):
        assert eq in first, eq
    assert '| `components_`' not in md and '|---|' not in md.split("## The data's units")[0]   # the API page has them
    assert 'api.html#vbfa_lit.estimator.VBPCA' in md

