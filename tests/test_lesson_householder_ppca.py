"""Lesson 13 (Householder PPCA) as a reader sees it: the Householder index is not the sample index, its figures are
drawn at the column width with legible fonts, and it says why R-hat is near 1 for chains that wander round a ring."""
import json
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

from notebook_text import COLUMN_IN, MIN_PT, NBS, cell_with, cells, flat, prose, section, smallest_shown_pt  # noqa: E402

STEM = '13_householder_ppca'


def test_householder_index_is_not_the_sample_index():
    block = next(s for k, s in cells(STEM) if k == 'markdown' and s.startswith('## The model'))
    assert r'i = M, \dots, M-D+1' in block


def test_figure_4_is_legible_at_the_column_width():
    from vbfa_lit.plots import colour
    src = cell_with(STEM, "# Figure 13.4:")
    ax_saved = json.loads((NBS / 'figures' / '08_breast_cancer.json').read_text())['axes']
    ns = dict(np=np, plt=plt, colour=colour, ax_saved=ax_saved)
    exec(cell_with(STEM, 'def plot_interval_rows('), ns)          # the page's own (folded) figure function
    exec(src, ns)
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')



def test_figure_1_is_legible_at_the_column_width():
    from scipy import stats
    from vbfa_lit.plots import plot_curves, plot_rotation_orbit
    from vbfa_lit.stiefel import sample_stiefel
    src = cell_with(STEM, "# Figure 13.1:")
    exec(src, dict(np=np, plt=plt, stats=stats, sample_stiefel=sample_stiefel, plot_rotation_orbit=plot_rotation_orbit,
                   plot_curves=plot_curves))
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')


@pytest.mark.parametrize('figure', ['Figure 13.2:', 'Figure 13.3:'])
def test_figures_2_and_3_are_drawn_at_the_column_width(figure):
    src = cell_with(STEM, f'# {figure}')
    widths = [float(w) for w in re.findall(r'figsize=\(([\d.]+),', src)]
    sizes = [float(s) for s in re.findall(r'legend\([^)]*fontsize=([\d.]+)', src)]
    assert widths and max(widths) <= COLUMN_IN and sizes and min(sizes) >= 9


def test_says_why_r_hat_is_near_1_for_the_wandering_chains():
    text = flat(prose(STEM))
    para = section(text, '*Figure 13.3:', '## ')
    assert r'$\hat R$ compares the chains' in para and 'centre of a ring rather than a loading' in para
    src = cell_with(STEM, "# Figure 13.3:")
    assert 'visited' in src and 'off_centre' in src



def test_the_slides_are_introduced_with_a_citation_before_they_are_named():
    text = flat(prose(STEM))
    first = text.index('the slides')
    intro = text[:first + 300]
    assert 'Nirwan & Bertschinger (2019)' in intro and 'ICML 2019' in intro and '(98_references.ipynb)' in intro


def test_the_densities_are_derived_by_hand_and_checked_by_sympy():
    text = prose(STEM)
    tags = [int(m) for m in re.findall(r'\\tag\{13\.(\d+)\}', text)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 7, tags
    hand = section(text, '### The densities, by hand', 'SymPy computes the Jacobians')
    for piece in (r'd\mathbf{v} = r^{i-1}\,dr\,d\boldsymbol{\omega}', r'- (i-1)\log\lVert\mathbf{v}_i\rVert',
                  r'\operatorname{vol}\mathcal{V}_{M,D}', r"\prod_{q<q'}(\sigma_q^2 - \sigma_{q'}^2)",
                  r'\mathbf{W}\mathbf{R} \overset{d}{=} \mathbf{G}'):
        assert piece in hand, piece
    import sympy as sp
    out = io_run(cell_with(STEM, 'def jacobian_det('), {'sp': sp, 'np': np})
    assert out.startswith('SymPy agrees with Eq. (13.2)') and 'to ' in out


def test_p_sigma_is_restated_where_it_is_used():
    text = flat(prose(STEM))
    restated = r'\log p(\boldsymbol{\sigma}) = -\frac12\sum_q\sigma_q^2 + (M-D)\sum_q\log\sigma_q'
    assert text.count(restated) >= 2
    nuts = section(text, '## Posterior sampling with NUTS', 'The model\'s log density')
    assert restated in nuts


def test_the_prior_check_is_folded_and_says_its_threshold_and_why():
    from notebook_text import is_folded
    src = cell_with(STEM, 'def sample_sigma_grid(')
    assert is_folded(src) and "print(f'derived density: smallest of its five p-values" in src
    text = flat(prose(STEM))
    check = section(text, '### Prior-predictive check', '*Figure 13.2:')
    assert 'below $10^{-3}$' in check and '1 - (1 - 10^{-3})^5' in check
    assert 'passes all five tests at the threshold $10^{-3}$' in text


def test_the_ring_paragraph_quotes_no_number_the_printout_does_not_give():
    text = flat(prose(STEM))
    para = section(text, '*Figure 13.3:', '## ')
    src = cell_with(STEM, "# Figure 13.3:")
    for number in re.findall(r'(?<![\w.])0\.\d+', para):
        assert False, f'the paragraph quotes {number}, which depends on the run'
    assert 'of the radius' in src


def io_run(code, ns):
    "What `code` prints, run in namespace `ns`."
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf): exec(code, ns)
    return buf.getvalue()
