"""Lesson 01 (from PCA to probabilistic PCA) as a reader sees it: PRML's symbols translated at the top, its listings
the method without the argument checks, the scikit-learn comparison run on the page, figures whose legends and
captions say what is drawn, and exercise solutions that print the numbers their text states."""
import re

import numpy as np
import pytest

from notebook_text import caption, cell_with, cells, flat, listing, prose, run, solution_blocks
from notebook_text import notebook_cells as cells_as_stored

STEM = '01_from_pca'


def test_the_em_matrix_is_not_called_M():
    md = prose(STEM)
    for before in re.findall(r'(.{0,9})\\mathbf\{M\}', md):     # only where PRML's name is given
        assert before.endswith(("PRML's $", 'call it $')), before
    assert r'\mathbf{B} = \mathbf{W}^\top\mathbf{W} + \sigma^2\mathbf{I}' in md
    assert re.search(r"PRML.s \$\\mathbf\{M\}\$", md), "say once that PRML's M is this matrix"


def test_opens_with_a_prml_dictionary_linking_the_notation_page():
    cs = cells(STEM)
    first_heading = next(i for i, (_, s) in enumerate(cs) if s.startswith('## '))
    top = '\n'.join(s for k, s in cs[:first_heading] if k == 'markdown')
    assert 'PRML' in top and '(00_notation.ipynb)' in top
    for prml, course in ((r'\mathbf{z}_n', r'\mathbf{x}_n'), (r'\mathbf{x}_n', r'\mathbf{y}_n')):
        assert prml in top and course in top


@pytest.mark.parametrize('function', ['ppca_ml', 'ppca_log_likelihood'])
def test_listings_show_the_method_not_the_argument_checks(function):
    body = listing(STEM, function)
    assert 'raise ' not in body and 'isinstance' not in body, body
    assert len([l for l in body.splitlines() if l.strip()]) <= 10, body


def test_shows_the_scikit_learn_comparison():
    text = '\n'.join(s for _, s in cells(STEM))
    assert 'noise_variance_' in text and 'PCA(' in text


def test_figure_5_one_colour_per_method_in_both_panels():
    src = next(s for k, s in cells(STEM) if 'Figure 1.5' in s and k == 'code')
    vb = re.findall(r"draws_label='VB[^']*'", src)
    assert vb and 'color=colour(3)' in src.split("draws_label='VB")[0].rsplit('plot_histogram', 1)[1]
    assert 'set_color(colour(3))' in src or "color=colour(3)" in src.split('plot_grouped_bars')[1]
    cap = caption(STEM, '1.5')
    assert '(blue' in cap and '(orange' in cap and 'both panels' in cap


def test_figure_3_legend_is_legible_and_its_caption_says_what_circles_and_colours_are():
    assert re.search(r'legend\([^)]*fontsize=(9|10)', cell_with(STEM, 'plot_rotation_orbit('))
    text = flat(prose(STEM))
    assert 'each grey circle is one row of' in text and 'each colour is one rotation angle' in text


def test_exercises_print_the_numbers_their_text_states():
    from vbfa_lit.data import make_ppca
    from vbfa_lit.ppca import ppca_log_likelihood, ppca_ml
    Y6 = make_ppca(200, 6, [2.5, 1.5], noise_std=0.7, random_state=1).X
    fit = ppca_ml(Y6, 2)
    ns = dict(np=np, Y6=Y6, fit=fit, best=ppca_log_likelihood(Y6, fit.W, fit.sigma2, fit.mean),
              ppca_log_likelihood=ppca_log_likelihood)
    outs = {}
    for n in (1, 2, 3):
        text, (code,) = solution_blocks(STEM, n)
        outs[n] = (text, run(code, ns))
    assert outs[1][1].count('2.025582') == 3 and 'all three are 2.025582' in outs[1][0]
    assert 'change of the log-likelihood: 0.0e+00' in outs[2][1] and 'changes by 0.0e+00' in outs[2][0]
    ratios = re.findall(r'divided by sigma\^2 ([\d.]+)', outs[3][1])
    assert ratios == ['1.32', '1.88', '1.96', '1.97'] and '(1.32, 1.88, 1.96, 1.97' in outs[3][0]


# --- derived by hand, numbered, and what the figures and exercises promise

def test_equations_numbered_in_order_and_cited():
    md = prose(STEM)
    tags = [int(k) for k in re.findall(r'\\tag\{1\.(\d+)\}', md)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 11, tags
    cited = re.sub(r'\\tag\{1\.\d+\}', '', md)
    for k in (2, 5, 6, 7, 9, 10, 11):                        # the prose cites them as Eq. (1c.k)
        assert f'(1.{k})' in cited, k


def test_em_is_derived_before_sympy_checks_it():
    md = flat(prose(STEM))
    assert 'complete the square' in md and 'complete-data log-likelihood' in md
    src = cell_with(STEM, 'def em_differences(')
    assert 'code-fold: true' in src and 'sp.hessian(' in src and 'SymPy agrees with Eqs. (1.7)' in src


def test_saddles_are_shown_by_the_hessian_not_only_by_likelihoods():
    src = cell_with(STEM, 'def curvature_signs(')
    assert 'hessian(' in src and "'a saddle'" in src and 'r[3][0] > 0 and r[3][1] > 0' in src


def test_figure_1c_1_draws_the_axis_its_title_names():
    src = cell_with(STEM, 'Figure 1.1:')
    assert 'axline(' in src and "PCA's first axis" in src and '(dotted line)' in caption(STEM, '1.1')


def test_figure_1c_4_y_axis_reaches_iteration_0():
    src = cell_with(STEM, 'Figure 1.4:')
    assert re.search(r'ylim=\(ll\[0\]', src), 'the left panel must show the start, iteration 0'


def test_exercise_names_are_defined_in_open_cells():
    from notebook_text import shown_cells
    shown = '\n'.join(shown_cells(STEM))
    for name in ('Y6', 'fit', 'best'):                    # the names the solutions use
        assert re.search(rf'^{name} = ', shown, re.M), name


def test_the_reader_of_the_site_builds_outputs_matches_only_the_code_it_ran(tmp_path):
    "`executed` reads the site build's run only for the same code and library: any change misses the cache."
    from notebook_text import CACHE, cached_run, site_notebook
    nb = site_notebook(STEM)
    stored = [c['id'] for c in cells_as_stored(STEM) if c['cell_type'] == 'code' and 'default_exp' not in
              ''.join(c['source'])]
    assert [c['id'] for c in nb.cells if c['cell_type'] == 'code'] == stored      # the conversion keeps cell ids
    code = [c for c in nb.cells if c['cell_type'] == 'code']
    changed = site_notebook(STEM)
    target = next(c for c in changed.cells if c['cell_type'] == 'code' and 'print(' in c['source'])
    target['source'] = target['source'].replace('print(', 'print(1, ', 1)           # a cell's code changed
    other_library = site_notebook(STEM)
    first = next(c for c in other_library.cells if c['cell_type'] == 'code')
    first['metadata']['vbfa_lit_key'] = '0' * 64                                    # the library changed
    assert first['metadata'] != code[0]['metadata']
    if (CACHE / 'global.db').exists():                                              # a site is built: it matches
        assert cached_run(site_notebook(STEM)) is not None
    assert cached_run(changed) is None and cached_run(other_library) is None
    assert cached_run(site_notebook(STEM), tmp_path) is None                        # no cache there


def test_without_a_site_build_the_reader_runs_the_notebook_in_a_kernel(tmp_path):
    "The fallback: no cache in `tmp_path`, so the page's notebook runs now and prints what the build's run printed."
    from notebook_text import CACHE, cached_run, executed, site_notebook
    stem, cid = '23_validation', '4df547f9'
    fresh = executed(stem, cache=tmp_path)
    said = ''.join(o['text'] for o in fresh[cid] if o['output_type'] == 'stream')
    assert said.startswith('one stream per RandomState seed'), said
    if (CACHE / 'global.db').exists():
        built = cached_run(site_notebook(stem))
        assert [o.get('text') for o in next(c for c in built.cells if c.get('id') == cid).outputs] \
            == [o.get('text') for o in fresh[cid]]
