"""Luttinen & Ilin's grids re-run, the appendix page 28: listed after the transformations engine and linked from the
index, titled, carrying the figures moved out of lesson 09 (numbered 5a.n, each drawn by the cell above its caption)
and the code that draws them; its tables say what a missing or infinite entry means."""
import re

import numpy as np

from notebook_text import APPENDIX, LESSONS, captions, cells, flat, page_order, prose

PAGE = '28_convergence_experiments'
LINK = f'({PAGE}.ipynb)'
# the moved figures, by a phrase of their captions
MOVED = {1: "The number of sweeps each run of the reduced grid needed to meet the paper's criterion",
         2: 'with the criterion 1 nat of the best bound found on the same data and model',
         3: 'for the larger grid: sweeps to 1 nat of the best bound against $D$',
         4: "As [lesson 09](09_convergence.ipynb)'s Figure 9.4 for the larger grid",
         5: 'The 200-dimensional problem'}


def test_the_appendix_page_is_listed_after_the_transformations_engine_and_linked_from_the_index():
    assert PAGE in APPENDIX and PAGE not in LESSONS
    assert APPENDIX.index(PAGE) == APPENDIX.index('27_transformations_engine') + 1
    lessons, appendix = page_order(['09_convergence', PAGE, '27_transformations_engine', 'index'])
    assert PAGE in appendix and PAGE not in lessons
    index = prose('index')
    para = next(p for p in index.split('\n\n') if p.startswith('**Appendix'))
    assert LINK in para


def test_the_appendix_page_has_a_title_and_carries_the_moved_figures_numbered_and_captioned():
    cs = cells(PAGE)
    assert cs[0][1].startswith("# Luttinen & Ilin's experiments, re-run\n\n> ")
    assert '](' not in cs[0][1].split('\n> ', 1)[1]                    # no links in the description line
    caps = captions(PAGE)
    assert [(ch, n) for ch, n, _ in caps] == [('28', n) for n in range(1, 6)]
    for ch, n, text in caps:
        assert MOVED[n] in flat(text), n
        i = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and f'*Figure 28.{n}:' in s)
        prev = next(s for k, s in reversed(cs[:i]) if k == 'code')
        assert re.search(r'fig2\(|plot_fig3\(', prev), n                 # drawn by the cell right above
    code = '\n'.join(s for k, s in cs if k == 'code')
    for moved in ('def speedup_table', 'def check_faster', 'reproduce(full_grid()', 'keys_full'):
        assert moved in code, moved



def test_the_page_carries_the_larger_grid_and_the_lesson_links_it():
    assert LINK in prose('09_convergence')
    assert any(s.startswith('## A larger grid, compared with the paper') for k, s in cells(PAGE) if k == 'markdown')


def _speedup_table():
    "The table function of the grids' page (28), run from its own (folded) cell."
    from IPython.display import Markdown, display                  # noqa: F401 (the cell's namespace)
    from vbfa_lit.convergence import speedup
    cell = next(s for _, s in cells(PAGE) if 'def speedup_table' in s)
    ns = dict(np=np, speedup=speedup, rows=[], Markdown=Markdown, display=lambda *a: None)
    exec(cell.split('\nkeys = ')[0], ns)
    return ns['speedup_table']


def test_tables_say_what_a_missing_or_infinite_entry_means():
    row = lambda tr, it, sweeps, converged: dict(dataset='1', prior='ARD', D=5, transform=tr, it_paper=it, s_paper=it,
                                                 it_nat=it, s_nat=it, sweeps=sweeps, total_seconds=sweeps,
                                                 converged=converged)
    rows = [row(True, 10, 40, True), row(True, None, 30, True), row(True, 12, 40, True),   # one settled lower
            row(False, None, 250, False), row(False, None, 250, False), row(False, 200, 250, False)]  # cut off
    out = _speedup_table()(rows, [('1', 'ARD', 5)])
    assert '(?)' not in out and '?' not in out and '∞' not in out and '>' not in out.replace('<', '')
    assert '†' in out and '≥' in out
    assert 'never' in out.split('\n\n', 1)[1] and '†' in out.split('\n\n', 1)[1]   # the legend says what each means

