"""Every figure of the built site is on its page, and the section headings look like headings, in a real browser.

- Every figure caption (a paragraph that starts "Figure X.Y:") has its picture right before it: the cell just above
  the caption shows at least one image (the figure, or the frames of a precomputed slider), and every one of those
  images has loaded (`naturalWidth > 0`). A figure cell that stored no output leaves a caption under nothing.
- A section heading (h2) is not drawn as a link: its text is not underlined and not in the colour of the links in
  the prose, while the link to the table of contents it carries still works.
- Every lesson's "Symbols" line links the notation page's boxed PRML dictionary; the front page lists the appendix
  in one paragraph, not as table rows; the Hinton diagram's ticks and key are at least 9 pt.

Needs `_site/` (the site build, `make site`).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from nbdev.config import nbpath2html

ROOT = Path(__file__).resolve().parents[2]
NBS = ROOT / 'nbs'
sys.path.insert(0, str(ROOT / 'tests'))
from notebook_text import page_order  # noqa: E402

pytestmark = pytest.mark.browser


def _pages() -> list[str]:
    "Every notebook page of the site, in reading order (lessons, reference chapters, appendix)."
    nbs = {p.stem: p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.'))}
    lessons, appendix = page_order(nbs)
    return [nbpath2html(nbs[s]).name for s in lessons + appendix]


# For each caption: its number, what the element right before it is, and its images as (src, naturalWidth); read by
# `check_page` at the page's `load` event (conftest.py), so that each page is loaded once a session.
from conftest import CAPTIONS_JS as _CAPTIONS_JS  # noqa: E402,F401


def caption_problems(captions: list[dict]) -> list[str]:
    "What is wrong with the figures of one page (`captions` as `_CAPTIONS_JS` reports them): empty when every one shows."
    bad = []
    for c in captions:
        if not c['images']: bad.append(f"Figure {c['figure']}: no image before its caption (before it: {c['before']})")
        bad += [f"Figure {c['figure']}: image {src!r} not loaded" for src, w in c['images'] if not w]
    return bad


def test_caption_problems_sees_a_missing_and_an_unloaded_image():
    ok = {'figure': '3.1', 'before': 'div.cell', 'images': [['data:image/png', 640]]}
    assert caption_problems([ok]) == []
    assert caption_problems([{**ok, 'images': []}]) == ['Figure 3.1: no image before its caption (before it: div.cell)']
    assert caption_problems([{**ok, 'images': [['a.png', 640], ['b.png', 0]]}]) == ["Figure 3.1: image 'b.png' not loaded"]


@pytest.fixture(scope='module')
def page_without_math(browser):
    "A page whose MathJax is not loaded: the headings do not need it, and typesetting a long page takes seconds."
    p = browser.new_page(viewport={'width': 1280, 'height': 900})
    p.route('**/mathjax/**', lambda r: r.abort())
    yield p
    p.close()


def test_every_figure_caption_has_its_image(site_page, site_dir):
    bad, n = [], 0
    names = [name for name in _pages()
             if re.search(r'Figure \d+[a-z]?\.\d+', (site_dir / name).read_text(encoding='utf-8'))]
    site_page.prefetch(names)        # several pages load at once
    for name in names:
        rep = site_page(name)        # loaded once a session; captions read at the `load` event (it waits for images)
        assert rep.status == 200, f'{name}: HTTP {rep.status}'
        captions = rep.captions
        n += len(captions)
        bad += [f'{name}: {b}' for b in caption_problems(captions)]
    print(f'\n{n} figure captions checked')
    assert n >= 40, f'only {n} figure captions found on the site: is the caption pattern still "Figure X.Y:"?'
    assert not bad, '\n'.join(bad)


# The computed style of a lesson's first section heading's text and of the first link in its prose.
_HEADING_JS = r'''() => {
  const a = document.querySelector('article');
  const h = [...a.querySelectorAll('section > h2')][0];
  const text = h.querySelector('a.toc-backref') || h;
  const link = a.querySelector('p a.reference, li a.reference');
  const st = e => { const s = getComputedStyle(e); return {line: s.textDecorationLine, color: s.color}; };
  return {heading: h.textContent.replace('#', '').trim(), text: st(text), h2: st(h), link: link ? st(link) : null,
          backref: (h.querySelector('a.toc-backref') || {}).hash || ''};
}'''


@pytest.mark.parametrize('name', ['ard.html', 'index.html'])
def test_headings_are_not_drawn_as_links(page_without_math, site_url, name):
    page = page_without_math
    page.goto(site_url + name, wait_until='load')
    s = page.evaluate(_HEADING_JS)
    print(f"\n{name} {s['heading']!r}: text {s['text']}, h2 {s['h2']}, prose link {s['link']}")
    assert s['link'] is not None, f'{name}: no link in the prose to compare with'
    assert 'underline' not in s['text']['line'], f"{name}: heading {s['heading']!r} is underlined"
    assert s['text']['color'] != s['link']['color'], f"{name}: heading {s['heading']!r} has the links' colour"
    assert s['text']['color'] == s['h2']['color'], f"{name}: heading {s['heading']!r} is not in the headings' colour"
    if s['backref']:  # the heading still leads back to the page's contents
        assert page.locator(s['backref']).count() == 1, s['backref']


# ---------------------------------------------------------------- the frame around the lessons (the pages' HTML)

def _lessons_and_appendix() -> tuple[list[str], list[str]]:
    from proc2sphinx import REFERENCE
    nbs = {p.stem: p for p in NBS.glob('*.ipynb') if not p.name.startswith(('_', '.'))}
    lessons, appendix = page_order(nbs)
    return ([nbpath2html(nbs[s]).name for s in lessons if s != 'index' and s not in REFERENCE],
            [nbpath2html(nbs[s]).name for s in appendix])


def _soup(site_dir, name):
    from bs4 import BeautifulSoup
    return BeautifulSoup((site_dir / name).read_text(encoding='utf-8'), 'html.parser')


def _article(site_dir, name):
    "The HTML text of the page's article: from its first `<article` to its last `</article>`."
    html = (site_dir / name).read_text(encoding='utf-8')
    return html[html.find('<article'):html.rfind('</article>')] if '<article' in html else ''


def test_every_lesson_links_the_prml_dictionary(site_dir):
    "Each lesson's Symbols line leads a reader of PRML to the notation page's boxed dictionary, which exists."
    from proc2sphinx import PRML_ANCHOR
    notation = _soup(site_dir, 'notation.html')
    box = notation.find(id=PRML_ANCHOR)
    assert box is not None, f'notation.html has no #{PRML_ANCHOR}'
    quote = box.find('blockquote')
    assert quote is not None and r'\mathbf{z}_n' in quote.get_text(), 'no boxed dictionary (PRML z_n) under the heading'
    lessons, _ = _lessons_and_appendix()
    # the link searched in the text of the page's <article> (html.parser took 0.8 s a page, 12 of this test's 13 s)
    link = re.compile(r'<a\s[^>]*\bhref="notation\.html#' + re.escape(PRML_ANCHOR) + '"')
    missing = [p for p in lessons if not link.search(_article(site_dir, p))]
    assert not missing, f'lessons without a link to the PRML dictionary: {missing}'


def test_front_page_folds_the_appendix_into_one_paragraph(site_dir):
    "The front page lists the engineering pages in one paragraph, not as table rows beside the lessons."
    art = _soup(site_dir, 'index.html').find('article')
    _, appendix = _lessons_and_appendix()
    rows = [tr for tr in art.find_all('tr') if any(a.get('href', '').split('#')[0] in appendix for a in tr.find_all('a'))]
    assert not rows, f'{len(rows)} table rows on the front page link appendix pages'
    para = [p for p in art.find_all('p') if p.get_text(' ', strip=True).startswith('Appendix: how the package is built')]
    assert len(para) == 1, 'no paragraph "Appendix: how the package is built" on the front page'
    linked = [a.get('href', '').split('#')[0] for a in para[0].find_all('a')]
    assert set(appendix) <= set(linked), f'appendix pages not linked from it: {sorted(set(appendix) - set(linked))}'
    order = [h for h in dict.fromkeys(linked) if h in appendix]
    assert order == appendix, f'the appendix paragraph does not follow the sidebar order: {order}'


def test_hinton_ticks_and_key_are_legible():
    "The Hinton diagram's tick labels and key are drawn at 9 pt or more (the lessons show it at the column width)."
    import matplotlib
    matplotlib.use('Agg')
    import numpy as np
    from vbfa_lit.plots import hinton
    ax = hinton(np.array([[1.0, -0.25, 0.5], [0.0, 0.5, -1.0]]))
    ax.figure.canvas.draw()
    sizes = [t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    leg = ax.get_legend()
    sizes += [t.get_fontsize() for t in leg.get_texts()] + [leg.get_title().get_fontsize()]
    assert min(sizes) >= 9, sorted(set(sizes))
