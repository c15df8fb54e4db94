"""Lesson 05 is a lesson, and Luttinen & Ilin's grids are an appendix page: the grid sweeps (their figures, tables and
the code that draws them) live on `05a_convergence_experiments`, the lesson keeps the teaching (Figures 5.1-5.4),
opens with the answer in one computed number, links the appendix page, and says that lesson 04's Figure 4.2 is the
top left panel of its single-run figure."""
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
sys.path.insert(0, str(ROOT / 'docs'))
from proc2sphinx import APPENDIX, LESSONS, page_order  # noqa: E402
from notebook_text import cells, prose, flat

LESSON, PAGE = '05_convergence', '05a_convergence_experiments'
LINK = '(05a_convergence_experiments.ipynb)'
CAPTION = re.compile(r'^\*Figure (\d+[a-z]?)\.(\d+):', re.M)


def captions(stem):
    return [(m.group(1), int(m.group(2)), s) for k, s in cells(stem) if k == 'markdown' for m in CAPTION.finditer(s)]


def saved_curves():
    saved = json.loads((NBS / 'figures' / '05_full_results.json').read_text())
    return {(c['dataset'], c['prior'], c['D'], c['transform']): np.array(c['bound']) for c in saved['curves']}


# the moved figures, by a phrase of their captions
MOVED = {1: "The number of sweeps each run of the reduced grid needed to meet the paper's criterion",
         2: 'with the criterion 1 nat of the best bound found on the same data and model',
         3: 'for the larger grid: sweeps to 1 nat of the best bound against $D$',
         4: "As [lesson 05](05_convergence.ipynb)'s Figure 5.3 for the larger grid",
         5: 'The 200-dimensional problem'}


def test_the_appendix_page_is_listed_after_the_transformations_engine_and_linked_from_the_index():
    assert PAGE in APPENDIX and PAGE not in LESSONS
    assert APPENDIX.index(PAGE) == APPENDIX.index('04c_transformations_engine') + 1
    lessons, appendix = page_order(['05_convergence', PAGE, '04c_transformations_engine', 'index'])
    assert PAGE in appendix and PAGE not in lessons
    index = prose('index')
    para = next(p for p in index.split('\n\n') if p.startswith('**Appendix'))
    assert LINK in para


def test_the_appendix_page_has_a_title_and_carries_the_moved_figures_numbered_and_captioned():
    cs = cells(PAGE)
    assert cs[0][1].startswith("# Luttinen & Ilin's experiments, re-run\n\n> ")
    assert '](' not in cs[0][1].split('\n> ', 1)[1]                    # no links in the description line
    caps = captions(PAGE)
    assert [(ch, n) for ch, n, _ in caps] == [('5a', n) for n in range(1, 6)]
    for ch, n, text in caps:
        assert MOVED[n] in flat(text), n
        i = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and f'*Figure 5a.{n}:' in s)
        prev = next(s for k, s in reversed(cs[:i]) if k == 'code')
        assert re.search(r'fig2\(|plot_fig3\(', prev), n                 # drawn by the cell right above
    page = prose(PAGE)
    assert 'As Figure 5.' not in page and 'Figure 5.5' not in page    # cites its own numbers, or the lesson's by name
    code = '\n'.join(s for k, s in cs if k == 'code')
    for moved in ('def speedup_table', 'def check_faster', 'reproduce(full_grid()', 'keys_full'):
        assert moved in code, moved


def test_the_lesson_keeps_four_figures_numbered_without_gaps_and_none_of_the_grids():
    caps = captions(LESSON)
    assert [(ch, n) for ch, n, _ in caps] == [('5', n) for n in range(1, 5)]
    text = flat(prose(LESSON))
    for n, phrase in MOVED.items():
        assert phrase not in text, n
    for gone in ('Figure 5.5', 'Figure 5.6', 'Figure 5.7', 'Figure 5.9', '## Reproducing Luttinen', 'reduced grid'):
        assert gone not in text, gone
    code = '\n'.join(s for k, s in cells(LESSON) if k == 'code')
    for gone in ('def speedup_table', 'run_grid(', 'plot_fig2(', 'rows_full', 'Figure 5.5', 'dataset 1, D'):
        assert gone not in code, gone
    assert "## Why 1 nat, and not a relative tolerance" in prose(LESSON)


def test_the_lesson_links_the_appendix_page_where_the_grids_were_and_in_its_summary():
    md = [s for k, s in cells(LESSON) if k == 'markdown']
    where = next(s for s in md if s.startswith('## The learning curves of one problem'))
    summary = next(s for s in md if s.startswith('## Summary'))
    assert LINK in where and LINK in summary.split('## Exercises')[0]


def test_the_lesson_opens_with_the_answer_and_its_number_is_computed_from_the_saved_curves():
    cs = cells(LESSON)
    first = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and s.startswith('## '))
    assert cs[first][1].startswith('## The idea in one picture\n\n**The answer first.**')
    answer = flat(cs[first][1].split('\n\n')[1])
    curves = saved_curves()
    with_, without = curves['1', 'ARD', 30, True], curves['1', 'ARD', 30, False]
    best = max(with_.max(), without.max())
    reach = int(np.argmax(with_ >= best - 1)) + 1
    assert (with_ >= best - 1).any() and not (without >= best - 1).any()
    assert f'after {reach} sweeps' in answer and f'{best - without[-1]:.1f} nats short' in answer
    assert f'after {len(without)} sweeps' in answer
    printer = next(s for k, s in cs[first:] if k == 'code' and 'print(' in s)   # the first printout after it
    assert 'np.argmax(b_with >= best - 1) + 1' in printer and 'best - b_without[-1]' in printer


def test_the_single_run_figure_says_it_continues_lesson_04s_figure_4_2():
    from vbfa_lit.convergence import paper_dataset, run_config, make_prior
    caption = flat(next(s for _, n, s in captions(LESSON) if n == 3))
    assert "[lesson 04](04_transformations.ipynb)'s Figure 4.2" in caption and 'top left panel' in caption
    fig = next(s for k, s in cells(LESSON) if k == 'code' and 'same_y(plot_fig3(' in s)
    assert "fig.suptitle('Figure 5.3:" in fig                         # numbered in the image, as 5.1, 5.2 and 5.4 are
    # the claim: lesson 04 draws Figure 4.2 from the same two fits (data set 1, D = 30, ARD, seed 0)
    fig42 = next(s for k, s in cells('04_transformations') if k == 'code' and 'Figure 4.2' in s)
    assert "paper_dataset('1')" in fig42 and 'fit_vbfa(data1, 30, prior1, rng=0' in fig42
    runs = next(s for k, s in cells(LESSON) if k == 'code' and re.match(r'runs3 = \{', s))
    assert 'run_config(Y_tr, Y_full, test, 30, make_prior(prior), tr, seed=0' in runs
    # and they are the same fits: the first sweeps of run_config agree with the saved curves of lesson 05 and
    # with fit_vbfa called as lesson 04 calls it
    from vbfa_lit.ard import ARD
    from vbfa_lit.engine import fit_vbfa, observed
    from vbfa_lit.transformations import transform_posterior
    from vbfa_lit.vbpca import Prior
    Y_tr, Y_full, test = paper_dataset('1')
    both = lambda d, q, p: transform_posterior(d, q, p, 'both', latent_covariances=False)
    curves = saved_curves()
    for tr in (True, False):
        r = run_config(Y_tr, Y_full, test, 30, make_prior('ARD'), tr, seed=0, max_iter=6)
        f = fit_vbfa(observed(Y_tr), 30, Prior(w=ARD()), rng=0, max_iter=6, tol=0, transform=both if tr else None)
        np.testing.assert_allclose(r.bound, np.array(f.elbo), rtol=0, atol=1e-9)
        np.testing.assert_allclose(r.bound, curves['1', 'ARD', 30, tr][:6], rtol=0, atol=1e-6)  # saved rounded to 1e-6
