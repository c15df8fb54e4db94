"""Lesson 08 (Householder PPCA) as a reader sees it: the Householder index is not the sample index, its figures are
drawn at the column width with legible fonts, and it says why R-hat is near 1 for chains that wander round a ring."""
import json
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

from notebook_text import COLUMN_IN, MIN_PT, NBS, cell_with, cells, flat, prose, section, smallest_shown_pt  # noqa: E402

STEM = '08_householder_ppca'


def test_householder_index_is_not_the_sample_index():
    block = next(s for k, s in cells(STEM) if k == 'markdown' and s.startswith('## The model'))
    assert r'i = M, \dots, M-D+1' in block


def test_figure_4_is_legible_at_the_column_width():
    from vbfa_lit.plots import plot_interval_rows
    src = cell_with(STEM, "fig.suptitle('Figure 8.4:")
    ax_saved = json.loads((NBS / 'figures' / '08_breast_cancer.json').read_text())['axes']
    exec(src, dict(np=np, plt=plt, plot_interval_rows=plot_interval_rows, ax_saved=ax_saved))
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')



def test_figure_1_is_legible_at_the_column_width():
    from scipy import stats
    from vbfa_lit.plots import plot_curves, plot_rotation_orbit
    from vbfa_lit.stiefel import sample_stiefel
    src = cell_with(STEM, "fig.suptitle('Figure 8.1:")
    exec(src, dict(np=np, plt=plt, stats=stats, sample_stiefel=sample_stiefel, plot_rotation_orbit=plot_rotation_orbit,
                   plot_curves=plot_curves))
    try: assert smallest_shown_pt(plt.gcf()) >= MIN_PT
    finally: plt.close('all')


@pytest.mark.parametrize('figure', ['Figure 8.2:', 'Figure 8.3:'])
def test_figures_2_and_3_are_drawn_at_the_column_width(figure):
    src = cell_with(STEM, f"fig.suptitle(f'{figure}" if figure == 'Figure 8.2:' else
                    f"fig.suptitle('{figure}")
    widths = [float(w) for w in re.findall(r'figsize=\(([\d.]+),', src)]
    sizes = [float(s) for s in re.findall(r'legend\([^)]*fontsize=([\d.]+)', src)]
    assert widths and max(widths) <= COLUMN_IN and sizes and min(sizes) >= 9


def test_says_why_r_hat_is_near_1_for_the_wandering_chains():
    text = flat(prose(STEM))
    para = section(text, '*Figure 8.3:', '## ')
    assert r'$\hat R$ compares the chains' in para and 'centre of a ring rather than a loading' in para
    src = cell_with(STEM, "fig.suptitle('Figure 8.3:")
    assert 'visited' in src and 'off_centre' in src

