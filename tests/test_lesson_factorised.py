"""Lesson 15 (the factorised posterior) as a reader sees it: full against factorised on the same ratings with the
estimator (sweeps to converge, the bound reached, the calibration of impute's error bars) and the rescaling that is
left of the rotation, each number of the prose printed by the cell beside it."""
import re
import warnings

import numpy as np

from notebook_text import cell_by_id, cells, flat, notebook_cells, shown_lines
from notebook_text import output_of

STEM = '15_factorised'


def _run(ids):
    "Run the lesson's code cells `ids` in order (the namespace values a test reads that no cell prints); the namespace."
    import contextlib
    import io

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    ns = {}
    for c in notebook_cells(STEM):
        if c['id'] not in ids: continue
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter('ignore')
            exec(compile(''.join(c['source']).replace('plt.show()', ''), c['id'], 'exec'), ns)
    plt.close('all')
    return ns


def numbers(text):
    "The decimal numbers and percentages of a text, equation and figure numbers left out."
    return set(re.findall(r'\d+\.\d+%?', re.sub(r'\(15\.\d+\)|Figure 15\.\d+', '', text)))


def _number(pattern, text):
    "The number that `pattern`'s group matches in `text`."
    return float(re.search(pattern, text).group(1))


def test_the_estimator_comparison_and_the_rescaling_print_the_numbers_of_the_prose():
    # what the cells printed when the page's notebook ran (the site build's run of this very code, else a run now)
    printed = {cid: output_of(STEM, cid) for cid in ('fac15e02', 'fac15e05', 'fac15m01', 'c1c0b0b3', 'fac15e08',
                                                       '471374cc')}
    for prose_id, cid in (('fac15e03', 'fac15e02'), ('fac15e06', 'fac15e05'), ('9ed6e9d3', 'fac15m01'),
                          ('fac15e07', 'c1c0b0b3')):
        text = cell_by_id(STEM, prose_id)
        missing = {n for n in numbers(text) if n not in printed[cid]}
        assert not missing, (prose_id, missing, printed[cid])
    runs = {m[1].strip(): (int(m[2]), float(m[3]))                     # estimator: (n_iter_, elbo_[-1]) as printed
            for m in re.finditer(r'^(.+?): +(\d+) sweeps, bound +(\S+),', printed['fac15e02'], re.M)}
    assert set(runs) == {'full, with the rotation', 'full, without', 'factorised'}, printed['fac15e02']
    sweeps = {name: n for name, (n, _) in runs.items()}
    said = flat(cell_by_id(STEM, 'fac15e03'))
    assert f"({sweeps['factorised']} against {sweeps['full, without']})" in said
    assert f"in {sweeps['full, with the rotation']}." in said
    assert re.search(r'ends (\d+) nats below', printed['fac15e02']).group(1) + ' nats below' in said
    full, fact = runs['full, with the rotation'], runs['factorised']
    assert fact[1] < full[1]                                          # the smaller family reaches a lower bound
    assert full[0] < runs['full, without'][0]                         # the rotation saves sweeps
    gain = _number(r'the bound rises by (\S+) nats', printed['fac15e05'])
    moved = _number(r'W X\^T changes by (\S+)$', printed['fac15e05'].splitlines()[0])
    assert gain > 0 and moved < 1e-10                                 # the rescaling: a gain, the same predictions
    # the cells whose namespace values below are not printed (the settled bound, Eq. (15.9)'s ratios, two functions)
    ns = _run({'2b27d296', 'c259d2e0', '471374cc', '129c35e9', 'd285b785', 'fac15m01', 'fac15m03', 'fac15m05'})
    # Figure 15.1 is drawn from the full fit at its optimum (the rotation after each sweep, until the bound settles)
    assert ns['new'] - ns['last'] < 1e-4 and ns['new'] > ns['bounds']['full'][-1]
    assert 'converged.X[n' in cell_by_id(STEM, 'd5e8b3fc') and 'at the optimum' in cell_by_id(STEM, 'aa695513')
    # the predictions worked out by hand: Eq. (15.8) is non-negative (Hadamard) and bounds the gap the sweeps leave,
    # Eq. (15.9)'s ratio lies in (0, 1], and the Gauss-Seidel fraction of (15.10) is rho^2 for D = 2
    assert ns['loss_x'] > 0 and ns['loss_w'] > 0
    assert 0 < ns['bounds']['full'][-1] - ns['bounds']['factorised'][-1] < ns['loss_x'] + ns['loss_w']
    assert np.all((ns['ratio'] > 0) & (ns['ratio'] <= 1 + 1e-12))
    rho = -0.6
    P2 = np.array([[2.0, -rho * np.sqrt(2.0 * 3.0)], [-rho * np.sqrt(2.0 * 3.0), 3.0]])
    assert np.isclose(ns['gauss_seidel_rate'](P2), rho ** 2)
    assert np.isclose(ns['kl_min'](np.linalg.inv(P2)[None])[0], -0.5 * np.log(1 - rho ** 2))
    # exercise 3: the balance at the best scale is M - N for every component (printed to 6 decimals)
    balance = np.array(re.search(r'after the rescaling: \[([^\]]*)\]', printed['fac15e08']).group(1).split(), float)
    assert balance.size == ns['D'] and np.allclose(balance, ns['M'] - ns['N'])
    assert f"M - N = {ns['M'] - ns['N']}" in printed['fac15e08']


def test_the_lesson_says_what_the_issue_of_the_section_asks_and_keeps_its_code_folded():
    md = flat('\n'.join(s for k, s in cells(STEM) if k == 'markdown'))
    for phrase in ('sweeps to converge', '`impute`', 'When to choose which'.lower(), 'what is left of the rotation'):
        assert phrase.lower() in md.lower(), phrase
    for cid in ('fac15e02', 'fac15e05'):
        assert cell_by_id(STEM, cid).startswith('#| code-fold: true')
    assert shown_lines(STEM) <= 60
