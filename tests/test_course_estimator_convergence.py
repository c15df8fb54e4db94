"""The estimator lesson (04a), the convergence lesson (05) and the benchmarks chapter (10) read as course pages:
a code budget, no project or private names on the page, the manual parts out of the lesson's body, the paper's
reproduction as a marked aside, tables that say what a missing entry means, no issue numbers."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

NBS = Path(__file__).resolve().parents[1] / 'nbs'


def cells(name):
    return json.loads((NBS / name).read_text())['cells']


def text(cell):
    return ''.join(cell['source'])


def directives(cell):
    return ' '.join(l for l in text(cell).splitlines() if l.startswith('#|'))


def shown_code(cell):
    """The lines of a code cell the built page shows unfolded ('' for hidden, folded or exported cells)."""
    if cell['cell_type'] != 'code': return ''
    d = directives(cell)
    if any(k in d for k in ('hide', 'echo: false', 'code-fold: true', 'include: false', 'default_exp')): return ''
    if re.search(r'#\|\s*export(?!s)', d): return ''
    body = '\n'.join(l for l in text(cell).splitlines() if not l.startswith('#|'))
    if 'exports' in d: body = re.sub(r'"""[\s\S]*?"""', '', body)
    return body


def shown_lines(name):
    return sum(1 for c in cells(name) for l in shown_code(c).splitlines() if l.strip())


def page_text(name):
    "Markdown and unfolded code of a page, in order."
    return '\n'.join(text(c) if c['cell_type'] == 'markdown' else shown_code(c) for c in cells(name))


def test_04a_within_code_budget():
    assert shown_lines('04a_estimator.ipynb') <= 150


@pytest.mark.parametrize('name', ['04a_estimator.ipynb', '05_convergence.ipynb', '05a_convergence_experiments.ipynb',
                                  '10_benchmarks.ipynb'])
def test_no_private_names_or_project_talk_on_the_page(name):
    page = page_text(name)
    assert not re.search(r'(?<![\w.])_[A-Za-z]\w*', '\n'.join(shown_code(c) for c in cells(name))), \
        'a private name in shown code'
    for leak in ('hidden cell', 'closing note', 'test dependency', 'tests/', 'figures/', '--flags', '[issue'):
        assert leak not in page, leak


def test_04a_manual_parts_leave_the_lesson_body():
    body = page_text('04a_estimator.ipynb')
    manual = page_text('99_package.ipynb')           # the manual parts live on the package page
    for part in ('## Warnings and errors', '## Checking the input', 'set_params', 'MissingDataWarning',
                 "storage='auto'"):
        assert part not in body, part
    assert 'set_params' in manual and 'DegenerateDataWarning' in manual and '(99_package.ipynb)' in body
    for idea in ("## The data's units and what the priors mean in them", '## What happens to a missing entry'):
        assert idea in body, idea


def test_04a_units_are_shown_on_computed_examples():
    cs = cells('04a_estimator.ipynb')
    start = next(i for i, c in enumerate(cs) if text(c).startswith("## The data's units"))
    end = next(i for i, c in enumerate(cs) if i > start and text(c).startswith('## '))
    shown = '\n'.join(shown_code(c) for c in cs[start:end])
    assert 'fit_vbfa(' in shown and 'VBPCA(' in shown          # the raw model against the estimator, at several scales
    assert 'a * X_train + b' in shown                          # equivariance computed, not asserted in prose


def test_05_vb_cost_is_defined_where_first_used():
    md = [text(c) for c in cells('05_convergence.ipynb') if c['cell_type'] == 'markdown']
    first = next(m for m in md if 'VB cost' in m)
    assert re.search(r'VB cost\*? is the paper.s name for the negative\s+lower bound', first), first


def test_05_reproduction_is_an_appendix_page_linked_from_the_lesson():
    md = [text(c) for c in cells('05_convergence.ipynb') if c['cell_type'] == 'markdown']
    assert not any(m.startswith('## Reproducing Luttinen & Ilin') for m in md)
    assert any('(05a_convergence_experiments.ipynb)' in m for m in md)
    page = [text(c) for c in cells('05a_convergence_experiments.ipynb') if c['cell_type'] == 'markdown']
    assert any(m.startswith('## A larger grid, compared with the paper') for m in page)


def _speedup_table():
    "The table function of the grids' page (05a), run from its own (folded) cell."
    from IPython.display import Markdown, display                  # noqa: F401 (the cell's namespace)
    from vbfa_lit.convergence import speedup
    cell = next(text(c) for c in cells('05a_convergence_experiments.ipynb') if 'def speedup_table' in text(c))
    ns = dict(np=np, speedup=speedup, rows=[], Markdown=Markdown, display=lambda *a: None)
    exec(cell.split('\nkeys = ')[0], ns)
    return ns['speedup_table']


def test_05_tables_say_what_a_missing_or_infinite_entry_means():
    row = lambda tr, it, sweeps, converged: dict(dataset='1', prior='ARD', D=5, transform=tr, it_paper=it, s_paper=it,
                                                 it_nat=it, s_nat=it, sweeps=sweeps, total_seconds=sweeps,
                                                 converged=converged)
    rows = [row(True, 10, 40, True), row(True, None, 30, True), row(True, 12, 40, True),   # one settled lower
            row(False, None, 250, False), row(False, None, 250, False), row(False, 200, 250, False)]  # cut off
    out = _speedup_table()(rows, [('1', 'ARD', 5)])
    assert '(?)' not in out and '?' not in out and '∞' not in out and '>' not in out.replace('<', '')
    assert '†' in out and '≥' in out
    assert 'never' in out.split('\n\n', 1)[1] and '†' in out.split('\n\n', 1)[1]   # the legend says what each means


def test_10_is_a_chapter_without_issue_numbers_or_verdicts():
    cs = cells('10_benchmarks.ipynb')
    assert text(cs[0]).startswith('# How fast, and why')
    heads = [text(c).splitlines()[0] for c in cs if c['cell_type'] == 'markdown' and text(c).startswith('## ')]
    assert '## The cost of one sweep' in heads and heads.index('## The cost of one sweep') < 3
    for c in cs:
        assert not re.search(r'\bissue', text(c), re.I), text(c)[:200]     # neither said nor read from the JSON
        if c['cell_type'] == 'code':
            assert "'met'" not in text(c) and "met_time" not in text(c) and 'verdict' not in text(c)
