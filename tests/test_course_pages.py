"""Every figure of a lesson is numbered in order and captioned right under it (STYLE.md: "Every figure is drawn through
`vbfa_lit.plots`, numbered and captioned"). Read from the notebooks, which the site renders cell by cell: a figure's
number is in its drawing cell (a title or suptitle "Figure 5.2: ..."), its caption is the italic paragraph
"*Figure 5.2: ...*" of the next markdown cell."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'docs'))
from proc2sphinx import LESSONS  # noqa: E402

LESSON_NBS = [s for s in LESSONS if s[0].isdigit() and s not in ('98_references',)]
NUMBER = r'(\d+[a-z]?)\.(\d+)'
TITLE = re.compile(r'Figure ' + NUMBER)
CAPTION = re.compile(r'^\*Figure ' + NUMBER + r':', re.M)
DRAWING = re.compile(r'plot_\w+\(|\.subplots\(|plt\.figure\(|Figure\(|^fig\w* *=', re.M)  # draws, or keeps a figure


def cells(stem):
    nb = json.loads((ROOT / 'nbs' / f'{stem}.ipynb').read_text())
    return [(c['cell_type'], ''.join(c['source'])) for c in nb['cells']]


def figures(stem):
    """The figures of one lesson: [(number, index of the drawing cell, whether the next markdown cell captions it)]
    for every code cell that draws and names its figure in a title, and [(number, index of the caption cell,
    whether the code cell before it draws)] for every caption."""
    cs, titled, captions = cells(stem), [], []
    for i, (kind, src) in enumerate(cs):
        if kind == 'code' and not src.lstrip().startswith('#| export') and DRAWING.search(src):
            nxt = next((s for k, s in cs[i + 1:] if k == 'markdown'), '')
            caps = [m.groups() for m in CAPTION.finditer(nxt)]
            titled += [(n, i, n in caps) for n in dict.fromkeys(m.groups() for m in TITLE.finditer(src))]
        elif kind == 'markdown':
            prev = next((s for k, s in reversed(cs[:i]) if k == 'code'), '')
            captions += [(m.groups(), i, bool(DRAWING.search(prev))) for m in CAPTION.finditer(src)]
    return titled, captions


@pytest.mark.parametrize('stem', LESSON_NBS)
def test_figures_are_numbered_in_order_and_captioned_under_them(stem):
    titled, captions = figures(stem)
    chapter = stem.split('_')[0].lstrip('0') or '0'
    for n, i, captioned in titled:
        assert captioned, f'{stem}: Figure {".".join(n)} (cell {i}) has no "*Figure {".".join(n)}: ...*" caption under it'
    for n, i, drawn in captions:
        assert n[0] == chapter, f'{stem}: cell {i} captions Figure {".".join(n)} (the chapter is {chapter})'
        assert drawn, f'{stem}: the caption of Figure {".".join(n)} (cell {i}) follows no cell that draws a figure'
    numbers = [int(n[1]) for n, _, _ in captions]
    assert numbers == list(range(1, len(numbers) + 1)), f'{stem}: figures numbered {numbers}'


def test_the_check_finds_a_missing_caption_and_a_skipped_number(tmp_path, monkeypatch):
    "The check on a made-up lesson: a figure without its caption, and numbers that skip."
    nb = dict(cells=[dict(cell_type='code', source="plot_curves(x, y); ax.set_title('Figure 3.1: a')"),
                     dict(cell_type='markdown', source='*Figure 3.1: a.*'),
                     dict(cell_type='code', source="fig = plot_trace(q); fig.suptitle('Figure 3.3: b')"),
                     dict(cell_type='markdown', source='Some text, no caption.')])
    (tmp_path / 'nbs').mkdir()
    (tmp_path / 'nbs' / '03_x.ipynb').write_text(json.dumps(nb))
    monkeypatch.setattr(sys.modules[__name__], 'ROOT', tmp_path)
    assert figures('03_x') == ([(('3', '1'), 0, True), (('3', '3'), 2, False)], [(('3', '1'), 1, True)])
    with pytest.raises(AssertionError, match='no "\\*Figure 3.3'):
        test_figures_are_numbered_in_order_and_captioned_under_them('03_x')
