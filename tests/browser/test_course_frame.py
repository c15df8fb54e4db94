"""The frame of the course on the built site, in a real browser (Debian's Chromium driven by Playwright).

- Every lesson page shows at most `CODE_BUDGET` unfolded code lines: the non-blank lines of its code blocks that are
  not folded inside a `<details>` (the code a reader meets without clicking) and are not printed output.
- No lesson page's prose carries an engineering record (`ENGINEERING`): a date, a time in UTC, a machine load or a
  file path; those belong to the appendix.
- No page of the site carries a listed leak of the project (`LEAKS`: test and results file paths, build commands,
  "hidden cell" or "closing note" talk, issue numbers), and no lesson page names a private function (`_name(` or a
  `_name` code span, dunders allowed) in its prose or its shown code.
- The sidebar labels carry the lesson numbers the text cites ("02 · ..."), in the reading order of `LESSONS`.
- The front page's map of methods is a figure whose boxes are links, each to an existing lesson page, and a click on
  one opens it.

Pages still over the budget, with a leak or with engineering in their prose are listed in `PENDING_BUDGET`,
`PENDING_LEAKS` and `PENDING_ENGINEERING` (page -> why), marked
`xfail(strict=True)`: once a page is fixed its test passes, the strict mark fails, and the entry must go. The
measured counts are printed (`pytest -s`). Needs `_site/` (the site build, `make site`).
"""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from nbdev.config import nbpath2html

ROOT = Path(__file__).resolve().parents[2]
NBS = ROOT / 'nbs'
sys.path[:0] = [str(ROOT / 'docs'), str(ROOT / 'tests')]
from notebook_text import page_order  # noqa: E402
from proc2sphinx import APPENDIX, LESSONS, REFERENCE, lesson_number  # noqa: E402

pytestmark = pytest.mark.browser

CODE_BUDGET = 60

# the project, as a reader must never meet it on a page: (pattern, what it is)
LEAKS = [
    (re.compile(r'\btests/[\w./-]*\.py\b'), 'a test file path'),
    (re.compile(r'\bfigures/[\w./-]*\.json\b'), 'a results file path'),
    (re.compile(r'\bfig\.savefig\('), 'fig.savefig( in code'),
    (re.compile(r'\bnbdev[-_]test\b'), 'the nbdev-test command'),
    (re.compile(r'\bmake site\b'), 'a build command (make site)'),
    (re.compile(r'--flags slow\b'), 'a build flag (--flags slow)'),
    (re.compile(r'\bhidden cell', re.I), '"hidden cell" talk'),
    (re.compile(r'\bclosing note', re.I), 'a "closing note"'),
    (re.compile(r'\bissues? #?\d+\b|\[issue', re.I), 'an issue number'),
    (re.compile(r'\bthe private\b', re.I), '"the private" (a private helper named in prose)'),
]
# what a lesson's prose must not carry: the record of a run on a machine
ENGINEERING = [
    (re.compile(r'\b(?:19|20)\d\d-\d\d-\d\d\b'), 'a date'),
    (re.compile(r'\b\d\d:\d\d(?::\d\d)? ?UTC\b|\bUTC\b'), 'a time in UTC'),
    (re.compile(r'\bload average\b|\bloadavg\b|\bmachine load\b|\bload (?:of )?\d', re.I), 'a machine load'),
    (re.compile(r'(?<![\w:/.])(?:~|/(?:work|home|tmp|usr|root|var))/[\w./-]+|\b[\w-]+/[\w./-]*\.(?:py|json|csv|npz|npy|'
                r'png|ipynb|txt|parquet)\b'), 'a file path'),
]
# a private name: `_name(` (also `obj._name(`) or a code span that is exactly `_name`; dunders (`__init__`) allowed,
# and so is a one-letter subscript in plain-text maths (`H~_n(v)`)
PRIVATE_CALL = re.compile(r'(?<!\w)_[A-Za-z][A-Za-z0-9_]+\(')
PRIVATE_SPAN = re.compile(r'_[A-Za-z][A-Za-z0-9_]+(\(\))?')
# a named tuple's public methods carry an underscore only to stay clear of its field names
NAMEDTUPLE_API = {'_replace', '_asdict', '_make', '_fields'}
# the front page is the course's, not the repository's
FRONT_PAGE_STATUS = ['make site', 'make test', 'Contributing', 'still being polished', 'CONTRIBUTING.md']

# Lesson pages still over the code budget or with a leak, measured on the built site (others are fixing them); each
# must leave its list when its page is fixed (the strict xfail fails then).
PENDING_BUDGET = {}   # every lesson page is within the budget
PENDING_ENGINEERING = {}   # no lesson's prose carries a date, a load or a file path
PENDING_LEAKS = {}    # no page carries a listed leak


# ---------------------------------------------------------------- what a page shows (pure functions of its HTML)

def _article(html: str):
    return _strip(BeautifulSoup(html, 'html.parser'))


def _strip(soup):
    "The article of a parsed page without its scripts, styles, pictures and TeX (changes `soup`)."
    art = soup.find('article') or soup.find(attrs={'role': 'main'}) or soup
    for e in art.find_all(['script', 'style', 'svg', 'mjx-container']): e.decompose()
    for e in art.find_all(class_='math'): e.decompose()      # TeX (x_n(t)) is not a name
    return art


def _is_output(e) -> bool:
    return any(c in ('cell_output', 'output') for p in e.parents for c in (p.get('class') or []))


@functools.lru_cache(maxsize=None)
def _analysis(html: str) -> tuple[list, list, list, list, str]:
    "(`code_blocks`, `leaks`, `private_names`, `article_links`, `prose`) of a page from one parse of its HTML (parsing takes seconds)."
    soup = BeautifulSoup(html, 'html.parser')
    links = [a['href'] for a in soup.select('article a[href]')]   # the whole page's, before anything is removed
    art = _strip(soup)
    blocks = [(sum(1 for l in pre.get_text().splitlines() if l.strip()), pre.find_parent('details') is not None,
               pre.get_text()) for pre in art.find_all('pre') if not _is_output(pre)]
    text = art.get_text(' ')
    leaked = [f'{what}: {text[max(0, m.start() - 40):m.end() + 40]!r}'.replace('\n', ' ')
              for pat, what in LEAKS for m in pat.finditer(text)]
    found = [f'code span `{c.get_text()}`' for c in art.find_all('code')
             if PRIVATE_SPAN.fullmatch(c.get_text().strip()) and not _is_output(c)
             and c.get_text().strip().rstrip('()') not in NAMEDTUPLE_API]
    shown = [t for _, folded, t in blocks if not folded]
    for pre in art.find_all('pre'): pre.decompose()           # prose: the article without its code blocks
    for block in shown + [art.get_text(' ')]:
        found += [f'{m.group(0)} in {block[max(0, m.start() - 30):m.end() + 20]!r}'.replace('\n', ' ')
                  for m in PRIVATE_CALL.finditer(block) if m.group(0)[:-1] not in NAMEDTUPLE_API]
    for e in art.find_all(class_=['cell_output', 'output']): e.decompose()     # prose: no printed output either
    return blocks, leaked, found, links, art.get_text(' ')


def code_blocks(html: str) -> list[tuple[int, bool, str]]:
    "(non-blank lines, folded, text) of every code block (`<pre>`, printed output excluded) in the page's article."
    return list(_analysis(html)[0])


def shown_code_lines(html: str) -> int:
    "The non-blank code lines a reader sees without unfolding anything: code blocks outside every `<details>`."
    return sum(n for n, folded, _ in code_blocks(html) if not folded)


def leaks(html: str) -> list[str]:
    "Every listed leak (`LEAKS`) in the page's article: prose, code (folded or not) and printed output."
    return list(_analysis(html)[1])


def private_names(html: str) -> list[str]:
    "Private names (`_name(`, a `_name` code span) in the page's prose and unfolded code (dunders are fine)."
    return list(_analysis(html)[2])


def prose(html: str) -> str:
    "The article's text without its code blocks, printed output, pictures and TeX."
    return _analysis(html)[4]


def engineering(html: str) -> list[str]:
    "Every engineering record (`ENGINEERING`) in the page's prose, with its context."
    text = prose(html)
    return [f'{what}: {text[max(0, m.start() - 40):m.end() + 40]!r}'.replace('\n', ' ')
            for pat, what in ENGINEERING for m in pat.finditer(text)]


def article_links(html: str) -> list[str]:
    "The href of every link in the page's `<article>` elements (as `soup.select('article a[href]')` finds them)."
    return list(_analysis(html)[3])


@functools.lru_cache(maxsize=None)
def _soup(html: str) -> BeautifulSoup:
    "The whole page, parsed once (read it, never change it: the same object serves every test)."
    return BeautifulSoup(html, 'html.parser')


# ---------------------------------------------------------------- the pages

def _notebooks() -> dict[str, Path]:
    return {p.stem: p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.'))}


def page_of(stem: str) -> str:
    return nbpath2html(_notebooks()[stem]).name


def lesson_stems() -> list[str]:
    "The lessons in reading order (the index and the reference chapters left out)."
    lessons, _ = page_order(_notebooks())
    return [s for s in lessons if s != 'index' and s not in REFERENCE]


def site_pages() -> list[str]:
    lessons, appendix = page_order(_notebooks())
    return [page_of(s) for s in lessons + appendix] + ['api.html']


def _marked(pages, pending):
    return [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=pending[p])) if p in pending else p
            for p in pages]


@pytest.fixture(scope='module')
def rendered(site_page):
    "The HTML of each page after the browser loaded it (at its `load` event): loaded once a session (`site_page`)."
    site_page.prefetch(site_pages())     # several pages load at once
    def get(name: str) -> str:
        rep = site_page(name)
        assert rep.status == 200, f'{name}: HTTP {rep.status}'
        return rep.html
    return get


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize('page', _marked([page_of(s) for s in lesson_stems()], PENDING_BUDGET))
def test_lesson_page_shows_at_most_the_code_budget(page, rendered):
    html = rendered(page)
    n = shown_code_lines(html)
    folded = sum(k for k, f, _ in code_blocks(html) if f)
    print(f'\n{page}: {n} unfolded code lines ({folded} folded)')
    assert n <= CODE_BUDGET, f'{page} shows {n} unfolded code lines, the budget is {CODE_BUDGET}'


@pytest.mark.parametrize('page', _marked(site_pages(), PENDING_LEAKS))
def test_no_page_carries_the_project(page, rendered):
    html = rendered(page)
    found = leaks(html)
    if page in {page_of(s) for s in lesson_stems()}: found += private_names(html)
    assert not found, f'{page}: ' + '\n  '.join(found)


@pytest.mark.parametrize('page', _marked([page_of(s) for s in lesson_stems()], PENDING_ENGINEERING))
def test_no_lesson_prose_carries_dates_loads_or_file_paths(page, rendered):
    found = engineering(rendered(page))
    assert not found, f'{page}: ' + '\n  '.join(found)


def test_sidebar_labels_carry_the_lesson_numbers(rendered, site_url):
    "Each lesson's sidebar label starts with the number the text cites ('02 · ...'), in the reading order."
    soup = _soup(rendered('index.html'))
    nav = [(urlsplit(a['href']).path.split('/')[-1], ' '.join(a.get_text().split()))
           for a in soup.select('nav.bd-docs-nav a[href]')]
    labels = dict(nav)
    lessons, appendix = page_order(_notebooks())
    wrong = []
    for s in lessons[1:] + appendix:
        n, label = lesson_number(s), labels.get(page_of(s))
        if label is None: wrong.append(f'{page_of(s)} is not in the sidebar')
        elif n and not label.startswith(f'{n} · '): wrong.append(f'{page_of(s)}: label {label!r} does not start with {n!r}')
    assert not wrong, wrong
    order = [p for p, _ in nav if p in {page_of(s) for s in lessons}]
    assert order == [page_of(s) for s in lessons[1:]], order
    # the notation opens the course as a reference chapter, then PCA; the references close the lessons
    assert order[:3] == [page_of('00_notation'), page_of('01_from_pca'), page_of('02_symbolic')], order
    assert order[-1] == page_of('98_references'), order
    title = _soup(rendered(page_of('03_vbpca'))).find('h1').get_text(' ', strip=True)
    assert title.startswith('03 · '), title


def test_every_lesson_links_the_notation_reference(rendered):
    notation = page_of('00_notation')
    missing = [page_of(s) for s in lesson_stems()
               if not [h for h in article_links(rendered(page_of(s))) if h.startswith(notation)]]  # a[href^=notation]
    assert not missing, f'lessons without a link to {notation}: {missing}'


# the methods the map must show, each linking to the lesson that teaches it
MAP_LESSONS = ['01_from_pca', '04_ard', '03_vbpca', '05_transformations', '11_evidence', '10_rjmcmc',
               '13_householder_ppca']


def test_front_page_map_links_every_method_to_its_lesson(rendered, browser, site_url):
    soup = _soup(rendered('index.html'))
    svg = soup.select_one('svg#method-map')
    assert svg is not None, 'no map of methods (svg#method-map) on the front page'
    hrefs = [a.get('href') or a.get('xlink:href') for a in svg.find_all('a')]
    targets = {urlsplit(h).path for h in hrefs}
    missing = [f'{h} (no such page)' for h in sorted(targets) if not (ROOT / '_site' / h).is_file()]
    assert not missing, missing
    assert {page_of(s) for s in MAP_LESSONS} <= targets, f'map links {sorted(targets)}'
    page = browser.new_page()
    try:                                        # a click on a box opens its lesson
        page.goto(site_url + 'index.html')
        box = page.locator(f'svg#method-map a[href="{page_of("10_rjmcmc")}"]').first
        box.scroll_into_view_if_needed()
        with page.expect_navigation(wait_until='commit'):   # the lesson's URL is committed: it opened (its own
            box.click()                                     # load and checks are the site crawl's)
        assert urlsplit(page.url).path.endswith(page_of('10_rjmcmc')), page.url
    finally:
        page.close()


def test_front_page_is_the_course_not_the_repository(rendered):
    soup = _soup(rendered('index.html'))
    art = soup.find('article') or soup
    text = art.get_text(' ')
    assert not [s for s in FRONT_PAGE_STATUS if s in text], [s for s in FRONT_PAGE_STATUS if s in text]
    linked = {urlsplit(a['href']).path for a in art.select('table a[href]')}
    anywhere = {urlsplit(a['href']).path for a in art.select('a[href]')}   # the appendix: one paragraph of links
    lessons, appendix = page_order(_notebooks())
    unlinked = ([page_of(s) for s in lessons[1:] if page_of(s) not in linked]
                + [page_of(s) for s in appendix if page_of(s) not in anywhere])
    assert not unlinked, f'pages the front page does not link (lessons: in its table): {unlinked}'
