"""Lessons 01c, 01, 02, 04a and 04b read as textbook chapters: one meaning per symbol, the method in the listings,
the prose true to the printouts, the estimator's manual on the package page."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

NBS = Path(__file__).parents[1] / 'nbs'


def _cells(name):
    return json.loads((NBS / name).read_text())['cells']


def _src(c):
    return ''.join(c['source'])


def _markdown(name):
    return '\n'.join(_src(c) for c in _cells(name) if c['cell_type'] == 'markdown')


def _shown_code(c):
    "What the site shows of a code cell: nothing when hidden, folded or exported as an API entry."
    s = _src(c)
    d = ' '.join(l for l in s.splitlines() if l.startswith('#|'))
    if any(k in d for k in ('hide', 'echo: false', 'code-fold: true', 'include: false', 'default_exp')): return ''
    if re.search(r'#\|\s*export(?!s)', d): return ''
    body = '\n'.join(l for l in s.splitlines() if not l.startswith('#|'))
    return re.sub(r'"""[\s\S]*?"""', '', body) if 'exports' in d else body


def _listing(name, function):
    "The shown lines of the `#| exports` cell that defines `function`."
    cell = next(c for c in _cells(name) if c['cell_type'] == 'code' and f'def {function}(' in _src(c))
    shown = _shown_code(cell)
    start = shown.index(f'def {function}(')
    nxt = re.search(r'\n(def |class )', shown[start + 1:])
    return shown[start:start + 1 + nxt.start()] if nxt else shown[start:]


# --- 01c


def test_01c_the_em_matrix_is_not_called_M():
    md = _markdown('01c_from_pca.ipynb')
    for before in re.findall(r'(.{0,9})\\mathbf\{M\}', md):     # only where PRML's name is given
        assert before.endswith(("PRML's $", 'call it $')), before
    assert r'\mathbf{B} = \mathbf{W}^\top\mathbf{W} + \sigma^2\mathbf{I}' in md
    assert re.search(r"PRML.s \$\\mathbf\{M\}\$", md), "say once that PRML's M is this matrix"


def test_01c_opens_with_a_prml_dictionary_linking_the_notation_page():
    cells = _cells('01c_from_pca.ipynb')
    first_heading = next(i for i, c in enumerate(cells) if _src(c).startswith('## '))
    top = '\n'.join(_src(c) for c in cells[:first_heading] if c['cell_type'] == 'markdown')
    assert 'PRML' in top and '(00_notation.ipynb)' in top
    for prml, course in ((r'\mathbf{z}_n', r'\mathbf{x}_n'), (r'\mathbf{x}_n', r'\mathbf{y}_n')):
        assert prml in top and course in top


@pytest.mark.parametrize('function', ['ppca_ml', 'ppca_log_likelihood'])
def test_01c_listings_show_the_method_not_the_argument_checks(function):
    body = _listing('01c_from_pca.ipynb', function)
    assert 'raise ' not in body and 'isinstance' not in body, body
    assert len([l for l in body.splitlines() if l.strip()]) <= 10, body


def test_01c_shows_the_scikit_learn_comparison_instead_of_citing_tests():
    text = '\n'.join(_src(c) for c in _cells('01c_from_pca.ipynb'))
    assert "package's tests" not in text and 'noise_variance_' in text and 'PCA(' in text


def test_01c_figure_5_one_colour_per_method_in_both_panels():
    cell = next(_src(c) for c in _cells('01c_from_pca.ipynb') if 'Figure 1c.5' in _src(c) and c['cell_type'] == 'code')
    vb = re.findall(r"draws_label='VB[^']*'", cell)
    assert vb and 'color=colour(3)' in cell.split("draws_label='VB")[0].rsplit('plot_histogram', 1)[1]
    assert 'set_color(colour(3))' in cell or "color=colour(3)" in cell.split('plot_grouped_bars')[1]
    caption = next(_src(c) for c in _cells('01c_from_pca.ipynb')
                   if c['cell_type'] == 'markdown' and _src(c).startswith('*Figure 1c.5'))
    assert '(blue' in caption and '(orange' in caption and 'both panels' in caption


def test_01c_figure_3_legend_is_legible():
    cell = next(_src(c) for c in _cells('01c_from_pca.ipynb') if 'plot_rotation_orbit(' in _src(c))
    assert re.search(r'legend\([^)]*fontsize=(9|10)', cell)


# --- 01


def test_01_cites_bishop_1999_and_prml_10_9():
    md = _markdown('01_symbolic.ipynb')
    assert 'Bishop (1999), eq. 13; PRML eq. 10.9' in md
    assert 'Bishop, eq. 13' not in md and 'the notation lesson' not in md


def test_01_no_raw_float_and_names_of_the_last_cell_are_introduced():
    cells = _cells('01_symbolic.ipynb')
    perturb = next(_src(c) for c in cells if 'largest gain from perturbing' in _src(c))
    assert re.search(r'\{worst:\.\de\}', perturb)
    last = next(_src(c) for c in cells if 'derived update vs the one of Figure 1.1' in _src(c))
    assert re.search(r'#.*step1.*Figure 1\.1', last)


# --- 02


def test_02_one_missing_share_taken_from_the_data():
    md = _markdown('02_vbpca.ipynb')
    assert '20%\nof the entries hidden' not in md and '20% of the entries hidden' not in md
    assert '(23% of its values missing)' not in md


def test_02_posterior_fields_are_shown_with_symbols_and_shapes():
    cell = next(c for c in _cells('02_vbpca.ipynb') if c['cell_type'] == 'code' and 'class Posterior(' in _src(c))
    shown = _shown_code(cell)
    assert 'class Posterior(NamedTuple)' in shown and 'class Prior' not in shown
    for field, shape in (('X', '(N, D)'), ('Sw', '(M, D, D)'), ('vmu', '(M,)'), ('a_tau', '(M,)')):
        assert re.search(rf'\n\s+{field}: .*# {re.escape(shape)}', shown), field


def test_02_engine_talk_is_one_sentence_and_its_check_is_gone():
    cells = _cells('02_vbpca.ipynb')
    text = '\n'.join(_src(c) for c in cells)
    assert "engine's sweep is the reference sweep" not in text and 'test suite' not in text
    assert 'packed triangles' not in _markdown('02_vbpca.ipynb')
    assert not any('sweep(data_check' in _src(c) for c in cells)
    engine = '\n'.join(_src(c) for c in _cells('02d_engine.ipynb'))
    assert 'reference_sweep' in engine          # 02d holds the engine-against-reference check


def test_02_exercise_5_is_two_questions():
    md = _markdown('02_vbpca.ipynb')
    ex = md[md.index('## Exercises'):]
    assert re.search(r'\n5\. Use `hessian_pattern` on `model.mu`', ex)
    assert re.search(r"\n6\. [\s\S]{0,200}q\(\\mathbf\{x\}_1\)", ex)


def test_02_summary_quantifies_not_converged():
    md = _markdown('02_vbpca.ipynb')
    summary = md[md.index('## Summary'):md.index('## Exercises')]
    assert 'nats short' in summary and 'held-out RMSE' in summary


def test_02_figure_3_title_has_no_sweep_count():
    cell = next(_src(c) for c in _cells('02_vbpca.ipynb') if 'Figure 2.3' in _src(c) and 'fit_vbfa' in _src(c))
    assert 'sweeps)' not in cell.split("axes[1].set_title(")[1].split('\n')[0]


# --- 04a


def test_04a_software_appendix_moved_to_the_package_page():
    md = _markdown('04a_estimator.ipynb')
    assert '## Appendix: the estimator as software' not in md
    assert '(99_package.ipynb)' in md
    pkg = '\n'.join(_src(c) for c in _cells('99_package.ipynb'))
    for item in ("storage='auto'", 'DegenerateDataWarning', 'set_params', 'MissingDataWarning', 'check_sparse',
                 'MovieLens-1M'):
        assert item in pkg, item


def test_04a_ratings_plumbing_is_folded_and_units_printout_explained():
    # the ratings section moved to lesson 04d: its figure and its sparse = dense check are folded there
    for c in _cells('04d_ratings.ipynb'):
        if c['cell_type'] == 'code' and ('plot_imputation(' in _src(c) or 'R_dense = ' in _src(c)):
            assert '#| code-fold: true' in _src(c), _src(c)[:60]
    cells = _cells('04a_estimator.ipynb')
    i = next(i for i, c in enumerate(cells) if 'X_units = ' in _src(c))
    assert '10^8' in _src(cells[i - 1]) or '10^{8}' in _src(cells[i - 1])


# --- 04b


def test_04b_coverage_prose_matches_the_printout():
    md = _markdown('04b_imputation.ipynb')
    assert 'Both curves lie close to the diagonal' not in md
    assert 'worse' in md and r'\sqrt{' in md and 'held out' in md
    assert '10_benchmarks.ipynb#' in md


def test_04b_plots_folded_and_one_notation_for_the_variance_of_mu():
    cells = _cells('04b_imputation.ipynb')
    for c in cells:
        if c['cell_type'] == 'code' and ('plt.subplots' in _src(c)):
            assert '#| code-fold: true' in _src(c), _src(c)[:60]
    md = _markdown('04b_imputation.ipynb')
    assert 'v_\\mu' not in md and r'\tilde\mu_m' in md
