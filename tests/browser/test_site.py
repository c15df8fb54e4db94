"""The built docs site in a real browser: Debian's Chromium driven by Playwright.

Needs `_site/` (`make site`: Sphinx with myst-nb, docs/conf.py). Every page is found by
walking the left navigation from index.html and loaded in a fresh browser context, once a session (`site_page` in
conftest.py: the other modules read the same reports).
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import sys

import pytest
from nbdev.config import nbpath2html

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'tests'))
from notebook_text import page_order  # noqa: E402  the one list of pages the site follows

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NBS = ROOT / 'nbs'


def notebooks() -> list[Path]:
    "The course notebooks in reading order (index, the lessons, then the appendix), as the site shows them."
    nbs = {p.stem: p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.'))}
    lessons, appendix = page_order(nbs)
    return [nbs[s] for s in lessons + appendix]


def page_of(nb: Path) -> str:
    "The page nbdev names for notebook `nb` (`00_notation.ipynb` -> `notation.html`)."
    return nbpath2html(nb).name


def has_display_math(nb: Path) -> bool:
    cells = json.loads(nb.read_text(encoding='utf-8'))['cells']
    md = '\n'.join(''.join(c['source']) for c in cells if c['cell_type'] == 'markdown')
    return '$$' in md or '\\begin{' in md


@pytest.fixture(scope='module')
def crawl(site_url, site_page):
    "Every page reachable through the navigation from index.html: {path: PageReport} (`check_page`, once a session)."
    site_page.prefetch([page_of(nb) for nb in notebooks()] + ['api.html'])   # the pages the walk will meet, at once
    reports, queue = {}, [site_url + 'index.html']
    while queue:
        url = queue.pop(0)
        path = urlsplit(url).path.lstrip('/') or 'index.html'
        if path in reports: continue
        assert url == site_url + path, url
        reports[path] = rep = site_page(path)
        queue += [u for u in rep.nav_links if u.startswith(site_url) and u.endswith('.html')]
    return reports


def test_every_notebook_has_a_page_in_the_navigation(crawl):
    assert notebooks(), f'no notebooks in {NBS}'
    missing = [f'{nb.name} -> {page_of(nb)}' for nb in notebooks() if page_of(nb) not in crawl]
    assert not missing, f'notebooks without a page reachable from index.html: {missing}; reached {sorted(crawl)}'
    assert 'api.html' in crawl, 'the API reference page is not in the navigation'


def test_navigation_follows_notebook_order(crawl, site_url):
    nav = [urlsplit(u).path.lstrip('/') for u in crawl['index.html'].nav_links]
    lessons = [p for p in nav if p in {page_of(nb) for nb in notebooks()}]
    assert lessons == [page_of(nb) for nb in notebooks()]
    assert nav[-1] == 'api.html', f'the API reference should close the appendix: {nav}'


def test_next_follows_the_lessons_then_the_appendix(crawl, site_page):
    "Each page's 'Next' link leads to the following page of the reading order, the last appendix page to the API."
    order = [page_of(nb) for nb in notebooks()] + ['api.html']
    wrong = []
    for here, there in zip(order, order[1:]):
        hrefs = site_page(here).next_links        # the page as loaded once for the session (`check_page`)
        assert len(hrefs) <= 1, f'{here}: {len(hrefs)} Next links {hrefs}'
        got = urlsplit(hrefs[0] or '').path.split('/')[-1] if hrefs else None
        if got != there: wrong.append(f'{here}: Next -> {got}, expected {there}')
    assert not wrong, wrong


def test_the_sidebar_has_lessons_then_an_appendix(crawl):
    "The left navigation is captioned: the lessons, then the appendix (engineering pages and the API)."
    captions = crawl['index.html'].nav_captions
    assert captions == ['Lessons', 'Appendix'], captions


def test_index_table_lists_lessons_then_appendix():
    """The index's lesson table follows the sidebar's order (the reference chapters, notation and references, are a table
    of their own after it): one row per notebook, lessons first."""
    cells = json.loads((NBS / 'index.ipynb').read_text(encoding='utf-8'))['cells']
    md = '\n'.join(''.join(c['source']) for c in cells if c['cell_type'] == 'markdown')
    import re
    rows = [m.group(1) for m in re.finditer(r'^\| *\[[^\]]*\]\((\d\d\w*)\.ipynb\)', md, re.M)]
    listed = [nb.stem for nb in notebooks() if nb.stem != 'index']
    reference = ['00_notation', '98_references']
    lessons = [s for s in rows if s not in reference]
    assert lessons == [s for s in listed if s in lessons], f'index rows {rows} are not in the site order {listed}'
    assert rows[len(lessons):] == reference, rows
    # the appendix pages are one paragraph of links after the tables ("Appendix: ..."), in the same order
    tail = md[md.rfind('Appendix'):]
    linked = list(dict.fromkeys(m.group(1) for m in re.finditer(r'\]\((\d\d\w*)\.ipynb\)', tail)))
    rest = [s for s in linked if s not in rows]
    assert rest == [s for s in listed if s in rest], f'index links {rest} are not in the site order {listed}'
    missing = set(listed) - set(rows) - set(rest)
    assert not missing, f'notebooks missing from the index: {sorted(missing)}'


def test_every_page_loads_cleanly(crawl):
    bad = {path: rep.problems() for path, rep in crawl.items() if rep.problems()}
    assert not bad, json.dumps(bad, indent=1)


def test_display_math_is_typeset(crawl):
    with_math = [nb for nb in notebooks() if has_display_math(nb)]
    assert with_math, 'no notebook has display math ($$ or \\begin{...}): is the course missing its equations?'
    for nb in with_math:
        rep = crawl[page_of(nb)]
        assert rep.has_math and rep.mathjax_ok, f'{page_of(nb)}: math not handed to MathJax'
        assert rep.mjx_containers > 0, f'{page_of(nb)}: no mjx-container after MathJax finished'
        assert not rep.math_errors, f'{page_of(nb)}: broken TeX {rep.math_errors}'


def test_no_dollar_sign_is_left_beside_math(crawl):
    "A display $$ inside a paragraph is half-parsed by MyST: a stray $ beside a math span, and the text after it set as math."
    stray = {path: html.count('$<span class="math') for path in crawl
             if (html := (ROOT / '_site' / path).read_text(encoding='utf-8')).count('$<span class="math')}
    assert not stray, f'pages with a $ left beside a math span (put blank lines around $$ ... $$): {stray}'


def test_a_figure_loads(crawl):
    images = [(path, src, w) for path, rep in crawl.items() for src, w in rep.images]
    figures = [x for x in images if '/_images/' in x[1]]
    assert figures, f'no notebook figure (_images/*.png) on any page; images seen: {images}'
    assert all(w > 0 for _, _, w in figures), f'figures that did not load: {[x for x in figures if not x[2]]}'
