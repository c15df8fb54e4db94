"""What every lesson page must have, checked on all of them (classes of defect, not particular sentences): figures
numbered in order and captioned right under them, every figure the prose names captioned, a code budget, nothing of
the project (test files, result files, build commands, issue numbers, private names) and no engineering record (dates,
machine loads, cache sizes) on the page, and the first shown import block folded. Read from the notebooks, which the
site renders cell by cell; which notebooks are lessons is the site's own list (docs/proc2sphinx.py's LESSONS). Every lesson page meets every check."""
import functools
import io
import re
import tokenize

import pytest

from notebook_text import APPENDIX, LESSONS, cells, on_page, prose, shown_cells, shown_lines

PAGES = [s for s in LESSONS if s != '98_references']           # the references page cites software by name
NUMBERED = [s for s in PAGES if s[0].isdigit()]                # pages with figures "Figure <chapter>.k"
NUMBER = r'(\d+[a-z]?)\.(\d+)'
TITLE = re.compile(r'Figure ' + NUMBER)
CAPTION = re.compile(r'^\*Figure ' + NUMBER + r':', re.M)
DRAWING = re.compile(r'plot_\w+\(|\.subplots\(|plt\.figure\(|Figure\(|^fig\w* *=', re.M)  # draws, or keeps a figure


# ---------------------------------------------------------------- figures

def figures(cs):
    """The figures of one page's cells `cs`: [(number, index of the drawing cell, whether the next markdown cell
    captions it)] for every code cell that draws and names its figure in a title, and [(number, index of the caption
    cell, whether the code cell before it draws)] for every caption."""
    titled, captions = [], []
    for i, (kind, src) in enumerate(cs):
        if kind == 'code' and not src.lstrip().startswith('#| export') and DRAWING.search(src):
            nxt = next((s for k, s in cs[i + 1:] if k == 'markdown'), '')
            caps = [m.groups() for m in CAPTION.finditer(nxt)]
            titled += [(n, i, n in caps) for n in dict.fromkeys(m.groups() for m in TITLE.finditer(src))]
        elif kind == 'markdown':
            prev = next((s for k, s in reversed(cs[:i]) if k == 'code'), '')
            captions += [(m.groups(), i, bool(DRAWING.search(prev))) for m in CAPTION.finditer(src)]
    return titled, captions


def check_figures(stem, cs):
    titled, captions = figures(cs)
    chapter = stem.split('_')[0].lstrip('0') or '0'
    for n, i, captioned in titled:
        assert captioned, f'{stem}: Figure {".".join(n)} (cell {i}) has no "*Figure {".".join(n)}: ...*" caption under it'
    for n, i, drawn in captions:
        assert n[0] == chapter, f'{stem}: cell {i} captions Figure {".".join(n)} (the chapter is {chapter})'
        assert drawn, f'{stem}: the caption of Figure {".".join(n)} (cell {i}) follows no cell that draws a figure'
    numbers = [int(n[1]) for n, _, _ in captions]
    assert numbers == list(range(1, len(numbers) + 1)), f'{stem}: figures numbered {numbers}'


@pytest.mark.parametrize('stem', NUMBERED)
def test_figures_are_numbered_in_order_and_captioned_under_them(stem):
    check_figures(stem, cells(stem))


def test_the_check_finds_a_missing_caption_and_a_skipped_number():
    "The check on a made-up lesson: a figure without its caption, and numbers that skip."
    cs = [('code', "plot_curves(x, y); ax.set_title('Figure 4.1: a')"), ('markdown', '*Figure 4.1: a.*'),
          ('code', "fig = plot_trace(q); fig.suptitle('Figure 4.3: b')"), ('markdown', 'Some text, no caption.')]
    assert figures(cs) == ([(('4', '1'), 0, True), (('4', '3'), 2, False)], [(('4', '1'), 1, True)])
    with pytest.raises(AssertionError, match='no "\\*Figure 4.3'):
        check_figures('04_x', cs)
    with pytest.raises(AssertionError, match='numbered \\[1, 3\\]'):
        check_figures('04_x', cs[:2] + [('code', 'plot_curves(x)'), ('markdown', '*Figure 4.3: b.*')])


@functools.cache
def captioned_figures():
    "Every 'Figure <chapter>.k' that has a caption on some page of the course, lessons and appendix."
    return {f'{m.group(1)}.{m.group(2)}' for s in LESSONS + APPENDIX for k, src in cells(s) if k == 'markdown'
            for m in CAPTION.finditer(src)}


def named_figures(text):
    return set(re.findall(r'Fig(?:ure|\.)\s+(\d+[a-z]?\.\d+)', text))


@pytest.mark.parametrize('stem', PAGES)
def test_every_figure_the_prose_names_has_its_caption(stem):
    "A 'Figure N.k' named in a page's prose is captioned '*Figure N.k:' (on chapter N's page): no stale numbers."
    missing = sorted(named_figures(prose(stem)) - captioned_figures())
    assert not missing, f'{stem} names figures that no page captions: {missing}'


# ---------------------------------------------------------------- the code budget

@pytest.mark.parametrize('stem', PAGES)
def test_a_page_shows_at_most_150_code_lines(stem):
    assert shown_lines(stem) <= 150, f'{stem}: {shown_lines(stem)} unfolded code lines on the page'


@pytest.mark.parametrize('stem', PAGES)
def test_a_lesson_shows_at_most_60_code_lines(stem):
    assert shown_lines(stem) <= 60, f'{stem}: {shown_lines(stem)} unfolded code lines on the page'


# ---------------------------------------------------------------- nothing of the project on the page

LEAKS = re.compile(r"tests/|test_\w+\.py|\.json\b|figures/|savefig|hidden cell|hidden on this page|cells hidden|"
                   r"closing note|nbdev|--flags|test suite|package's tests|test dependency|\[issue|\bissue \d", re.I)
# appendix pages that are read as chapters and held to the same rule
CHAPTERS = PAGES + ['28_convergence_experiments', '31_zhang_tables', '33_benchmarks']


def leaks(text):
    return sorted({m.group(0) for m in LEAKS.finditer(text)})


@pytest.mark.parametrize('stem', CHAPTERS)
def test_the_prose_and_shown_code_name_nothing_of_the_project(stem):
    found = leaks(prose(stem) + '\n' + '\n'.join(shown_cells(stem)))
    if stem == '33_benchmarks': found = [f for f in found if f != '.json']     # the benchmarks name their results
    assert not found, f'{stem}: the page names {found}'


@pytest.mark.parametrize('stem', PAGES)
def test_folded_code_names_nothing_of_the_project_either(stem):
    found = leaks('\n'.join(s for k, s in on_page(stem) if k == 'code'))
    assert not found, f'{stem}: the folded code names {found}'


def private_names(src):
    "Names with one leading underscore in Python source (a private function or module; `_replace` is NamedTuple's)."
    src = '\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('%', '!')))
    toks = tokenize.generate_tokens(io.StringIO(src).readline)
    return [t.string for t in toks if t.type == tokenize.NAME and t.string.startswith('_') and t.string != '_'
            and not (t.string.startswith('__') and t.string.endswith('__')) and t.string != '_replace']


@pytest.mark.parametrize('stem', CHAPTERS)
def test_no_private_name_in_shown_code_or_in_the_prose(stem):
    names = [n for body in shown_cells(stem) for n in private_names(body)]
    names += re.findall(r'`(?<![\w.])(_[A-Za-z]\w*)', prose(stem))
    assert not names, f'{stem}: {names}'


def test_the_checks_find_what_they_look_for():
    assert named_figures('as Figure 9.9 shows, and Fig. 6.2') == {'9.9', '6.2'} and '9.9' not in captioned_figures()
    assert leaks('see tests/test_ppca.py, figures/fig5.json; savefig; nbdev_test; as [issue 12] said') == [
        '.json', '[issue', 'figures/', 'nbdev', 'savefig', 'test_ppca.py', 'tests/']
    assert private_names('q = engine._sweep(q)\nfrom x import _run\n_helper(1)') == ['_sweep', '_run', '_helper']
    assert private_names('q = q._replace(X=0)\nclass A:\n    def __init__(self): x = "_no"  # _no') == []
    assert ENGINEERING.findall('measured 2026-11-27 03:23 UTC, load average 0.9; loadavg; the 32 MiB cache') == [
        '2026-11-27', 'UTC', 'load average', 'loadavg', 'MiB cache']


# ---------------------------------------------------------------- no engineering record in a lesson

ENGINEERING = re.compile(r"\b(?:19|20)\d\d-\d\d-\d\d\b|\bUTC\b|load average|loadavg|\bload \d|\['date'\]|"
                         r"\bMiB cache\b|last_cache", re.I)


@pytest.mark.parametrize('stem', PAGES)
def test_a_lesson_carries_no_dates_machine_loads_or_cache_sizes(stem):
    "Neither in its prose nor in what its code (shown or folded) prints."
    found = [m.group(0) for k, s in on_page(stem) for m in ENGINEERING.finditer(s)]
    assert not found, f'{stem}: {found}'


# ---------------------------------------------------------------- the first code a lesson shows

def _directives(source: str) -> str:
    return ' '.join(line for line in source.splitlines() if line.startswith('#|'))


@pytest.mark.parametrize('stem', LESSONS)
def test_a_lesson_opens_with_its_idea_not_an_import_block(stem):
    "The first code a lesson shows (not exported, not hidden) is an import block: it is folded behind a toggle."
    for kind, src in cells(stem):
        if kind != 'code': continue
        d = _directives(src)
        if 'default_exp' in d or 'export' in d or 'exporti' in d or 'hide' in d or 'echo: false' in d: continue
        body = [l.strip() for l in src.splitlines() if l.strip() and not l.startswith('#')]
        if body and all(l.startswith(('import ', 'from ')) or not l[0].isalpha() or l.endswith((',', ')'))
                        for l in body):
            assert 'code-fold: true' in d, (stem, src[:200])
        return


def stray_list_items(md: str) -> list[str]:
    "Lines of running text that start with '+ ' (Markdown makes them list items: '+ const' became a bullet)."
    out, fence, math = [], False, False
    for line in md.split('\n'):
        s = line.strip()
        if s.startswith('```'): fence = not fence
        elif not fence and s.startswith('$$') and s.count('$$') == 1: math = not math
        elif not fence and not math and re.match(r'\+\s', s): out.append(s[:80])
    return out


@pytest.mark.parametrize('stem', LESSONS + APPENDIX)
def test_no_line_of_running_text_starts_with_a_plus(stem):
    assert stray_list_items(prose(stem)) == []


def test_the_plus_check_finds_a_wrapped_plus_and_ignores_math_and_code():
    assert stray_list_items('density $a$\n+ const, so') == ['+ const, so']
    assert stray_list_items('$$\na\n+ b\n$$\n```\n+ c\n```\n+ d in words') == ['+ d in words']


@pytest.mark.parametrize('stem', PAGES)
def test_the_summary_comes_before_the_exercises(stem):
    text = prose(stem)
    heads = [line for line in text.split('\n') if line in ('## Summary', '## Exercises')]
    assert heads in ([], ['## Summary'], ['## Exercises'], ['## Summary', '## Exercises']), heads


TITLE_NUMBER = re.compile(r"""(?<![#\w])f?r?f?['"]Figure \d+\.\d+:""")


@pytest.mark.parametrize('stem', LESSONS + APPENDIX)
def test_a_figure_is_numbered_by_its_caption_not_inside_its_image(stem):
    "A title drawn in the image starts with its text: the caption under the figure carries 'Figure N.k' (once)."
    code = '\n'.join(s for k, s in cells(stem) if k == 'code')
    assert not TITLE_NUMBER.findall(code)


def test_the_title_check_finds_a_numbered_title_and_leaves_comments_alone():
    assert TITLE_NUMBER.findall("fig.suptitle(f'Figure 4.1: one column')") and TITLE_NUMBER.findall("'Figure 2.1: x'")
    assert not TITLE_NUMBER.findall("# Figure 4.1: one column\nax.set_title('one column')")


def display_math_without_blank_line(md: str) -> list[str]:
    "Lines opening a $$ display right under text: Markdown then keeps it in the paragraph and the math is not typeset."
    out, lines, fence, math = [], md.split('\n'), False, False
    for j, line in enumerate(lines):
        s = line.strip()
        if s.startswith('```'): fence = not fence
        elif fence: continue
        elif s.startswith('$$') and not math:
            if j and lines[j - 1].strip(): out.append(f'{lines[j - 1].strip()[-40:]} | {s[:40]}')
            math = s.count('$$') == 1
        elif math and s.endswith('$$'): math = False
    return out


@pytest.mark.parametrize('stem', LESSONS + APPENDIX)
def test_a_display_equation_stands_in_its_own_paragraph(stem):
    assert [b for k, s in cells(stem) if k == 'markdown' for b in display_math_without_blank_line(s)] == []


def test_the_display_check_finds_math_glued_to_text():
    assert display_math_without_blank_line('as updated:\n$$\na\n$$\nThe sums') == ['as updated: | $$']
    assert display_math_without_blank_line('as updated:\n\n$$\na\n$$\n\nThe sums') == []


# ---------------------------------------------------------------- exercises

@pytest.mark.parametrize('stem', PAGES)
def test_a_solution_cell_sits_inside_its_fold(stem):
    """A folded code cell that runs a solution comes before the `</details>` that closes it: a closed block followed by
    the code would show the code's answer on the page while the solution is folded."""
    cs = cells(stem)
    outside = []
    for i, (kind, src) in enumerate(cs[:-1]):
        nxt_kind, nxt = cs[i + 1]
        opened, closed = src.rfind('<details>'), src.rfind('</details>')
        if (kind == 'markdown' and closed > opened >= 0 and 'Solution' in src[opened:opened + 40]
                and nxt_kind == 'code' and '#| code-fold: true' in nxt):
            outside.append(nxt.splitlines()[1][:60] if len(nxt.splitlines()) > 1 else nxt[:60])
    assert not outside, f'{stem}: solution code after its closed fold: {outside}'


@pytest.mark.parametrize('stem', PAGES + APPENDIX)
def test_a_fold_title_names_no_lesson_by_number(stem):
    """A `<summary>` is raw HTML, which the site's linker does not read: "lesson 05" there would be the only unlinked
    mention of a lesson on the page (the browser check fails it). Name the idea, or link the lesson in the fold's text."""
    titles = [t for kind, src in cells(stem) if kind == 'markdown'
              for t in re.findall(r'<summary>(.*?)</summary>', src, re.S)]
    named = [t for t in titles if re.search(r'\b(?:[Ll]essons?|[Aa]ppendix) \d\d\b', t)]
    assert not named, f'{stem}: fold titles naming a lesson: {named}'
