"""Fixtures for the real-browser tests of the docs site: a local HTTP server and Debian's Chromium.

`check_page` (also exposed as a fixture) loads one page in a fresh browser context and reports
everything the tests assert on: HTTP status, console/page errors, failed or external requests,
MathJax typesetting (and its error nodes), navigation links and images; and, read at the `load` event,
the page's HTML, its 'Next' links and its figure captions.

`site_page` (a session fixture) runs `check_page` once per page of the built site and keeps the report: every
module that reads a static page (test_site.py, test_course_frame.py, test_course_figures_present.py) reads it from
there instead of loading the page again. Tests that interact with a page (sliders, clicks, Voila) stay live.
"""
from __future__ import annotations

import functools
import http.server
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / '_site'
CHROMIUM = '/usr/bin/chromium'
# The proxy is a dead port: a request to any host but the loopback (which Chromium never proxies) fails at once, so a
# page's external request is reported (`PageReport.external_requests`) and goes nowhere.
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--proxy-server=127.0.0.1:9']
MATHJAX_TIMEOUT_MS = 30_000
# The wait for a page's images to finish (loaded or broken). It waits for exactly that, not for the network to go
# idle: Playwright's 'networkidle' (no request for 500 ms) once never came in 120 s on one page while the suite ran
# beside pytest on two cores (CI), whatever else the page was fetching; alone, a page loads in about 2 s.
IMAGES_TIMEOUT_MS = 60_000
# every image of the article has finished: loaded, or failed (then naturalWidth is 0); a lazy one is asked to load now
_IMAGES_DONE_JS = r'''() => {
  const imgs = [...document.querySelectorAll('article img')];
  imgs.forEach(e => { if (e.loading === 'lazy') e.loading = 'eager'; });
  return imgs.every(e => e.complete);
}'''


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass


@contextmanager
def serve(directory: Path):
    "Serve `directory` on 127.0.0.1 (a free port) from a thread; yields the base URL."
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f'http://127.0.0.1:{httpd.server_address[1]}/'
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)


@contextmanager
def launch_chromium():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try: yield browser
        finally: browser.close()


@dataclass
class PageReport:
    url: str
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    has_math: bool = False          # the served HTML contains math for MathJax
    mathjax_ok: bool | None = None  # MathJax started and finished typesetting (None: no math)
    mjx_containers: int = 0
    math_errors: list[str] = field(default_factory=list)  # mjx-merror texts, untypeset .math
    nav_links: list[str] = field(default_factory=list)    # absolute URLs in the left navigation, in order
    nav_captions: list[str] = field(default_factory=list) # the captions of the navigation's sections ("Lessons", ...)
    images: list[tuple[str, int]] = field(default_factory=list)  # (src, naturalWidth)
    artefacts: list[str] = field(default_factory=list)  # rendering slips in the page's text (see `text_artefacts`)
    overflow: list[str] = field(default_factory=list)   # equations, code blocks, tables wider than the text column
    # read at the `load` event, before MathJax is awaited (as a page loaded with wait_until='load' shows them)
    html: str = field(default='', repr=False)          # page.content()
    next_links: list[str] = field(default_factory=list)  # the href of every 'Next' link (a.right-next)
    captions: list[dict] = field(default_factory=list)   # every figure caption, as `CAPTIONS_JS` reports it
    page: object = field(default=None, repr=False, compare=False)  # the open page, for `SLIDER_PAGES` (else None)

    def problems(self) -> list[str]:
        "Everything wrong with the page; empty when it loaded cleanly and its math typeset."
        out = []
        if self.status != 200: out.append(f'HTTP status {self.status}')
        out += [f'console error: {m}' for m in self.console_errors]
        out += [f'page error: {m}' for m in self.page_errors]
        out += [f'failed request: {m}' for m in self.failed_requests]
        out += [f'external request: {m}' for m in self.external_requests]
        if self.has_math:
            if not self.mathjax_ok: out.append('MathJax did not start or finish typesetting')
            elif not self.mjx_containers: out.append('math in the page but no mjx-container')
        out += [f'broken TeX: {m}' for m in self.math_errors]
        out += [f'image not loaded: {s}' for s, w in self.images if not w]
        out += self.artefacts
        out += self.overflow
        return out


_TABLE_RULE = re.compile(r'\|\s*:?-{3,}:?\s*\|')


_NUMPY_REPR = re.compile(r'np\.(float|int|bool_?)\d*\(')
_DICT_DUMP = re.compile(r"^\{'[^']*': .{150,}", re.S)


def text_artefacts(text: str) -> list[str]:
    "What a reader should never see in a page's prose: markdown tables left as pipes, `__main__.` types, filler."
    out = []
    if _TABLE_RULE.search(text): out.append('a markdown table rendered as raw pipe text')
    if '__main__.' in text: out.append('a type shown as __main__.<name>')
    if 'Alias for field number' in text: out.append('namedtuple filler "Alias for field number"')
    m = re.search(r':(?:func|class|meth|attr|math|mod|exc):', text)
    if m: out.append(f'a Sphinx role left as text: {m.group(0)!r}')
    m = re.search(r'\$\$', text)
    if m: out.append(f'raw $$ left in the text: {text[max(0, m.start() - 30):m.end() + 50]!r}')
    m = re.search(r'\(\s*[\w./#-]+\.ipynb\s*\)', text)
    if m: out.append(f'a link left as text: {text[max(0, m.start() - 40):m.end()]!r}')
    out += [f'a Python warning printed on the page: {w!r}' for w in _warnings(text)]
    out += [f'a SymPy function name in the text: {f!r}' for f in _sympy_names(text)]
    return out


# "lesson 10", "lessons 03 and 05": a reference to a lesson in the prose, which must be a link to it
_LESSON_REF = re.compile(r'\b[Ll]essons?\s+\d\d[a-z]?\b')


def unlinked_references(text: str) -> list[str]:
    "References to lessons by number left as plain text (`text`: the prose with its links, code and pre removed)."
    return [f'a lesson named but not linked: {text[max(0, m.start() - 30):m.end() + 20]!r}'
            for m in _LESSON_REF.finditer(text)]


# `path.py:12: UserWarning: ...` as the warnings module prints it (a lesson that demonstrates the package's own
# warnings, caught and printed as 'ConvergenceWarning: ...', is content, not a leak)
_WARNING = re.compile(r'\.py:\d+: ([A-Z]\w*Warning: .{0,60})')
# SymPy's names where the papers write psi(a), log Gamma(a): the printer's \operatorname{polygamma}, or plain text
_SYMPY_NAMES = re.compile(r'\b(polygamma|loggamma|digamma|uppergamma|lowergamma)\s*(\}\s*)?(\{\s*)?(\\left)?\s*\(')


def _warnings(text: str) -> list[str]:
    return [m.group(1).strip() for m in _WARNING.finditer(text)]


def _sympy_names(text: str) -> list[str]:
    return [m.group(0) for m in _SYMPY_NAMES.finditer(text)]


def math_artefacts(tex: list[str]) -> list[str]:
    "What a reader should never see in typeset math: SymPy's function names, a symbol name split by SymPy's printer."
    out = []
    for t in tex:
        out += [f'a SymPy function name in the math: {f!r} in {t[:80]!r}' for f in _sympy_names(t)]
        # SymPy splits a symbol named '\langle x^2 \rangle' at '^' and prints x^{2 \rangle}: a closing angle
        # bracket inside a superscript or subscript group that never opened one
        m = re.search(r'[_^]\{[^{}]*\\rangle[^{}]*\}', t)
        if m and '\\langle' not in m.group(0): out.append(f'a symbol name split by SymPy: {m.group(0)!r} in {t[:80]!r}')
    return out


def output_artefacts(outputs: list[str]) -> list[str]:
    "What a reader should never see in a cell's printed output: numpy scalar reprs, long raw dict dumps, warnings."
    out = []
    for o in outputs:
        out += [f'a Python warning printed on the page: {w!r}' for w in _warnings(o)]
        m = _NUMPY_REPR.search(o)
        if m: out.append(f'numpy scalar repr in an output: {o[max(0, m.start() - 40):m.end() + 40]!r}')
        if _DICT_DUMP.match(o.strip()): out.append(f'a raw dict dump as an output: {o.strip()[:80]!r}')
        if '*args, **kwargs' in o: out.append(f'a signature shown as (*args, **kwargs): {o.strip()[:60]!r}')
        m = re.match(r'\s*(Text\(-?[\d.]+, -?[\d.]+, |\[?<matplotlib\.)', o)   # a matplotlib call's value, printed
        if m: out.append(f'a matplotlib repr printed as an output: {o.strip()[:60]!r}')
        if is_signature_block(o): out.append(f'an API entry (show_doc signature block) on the page: {o.strip()[:60]!r}')
    return out


# nbdev's show_doc block: `def name(` or `class Name(` and its parameters up to the closing `):` and nothing after it
# (code that carries a method is shown with its body, in an input cell; the API entry belongs on api.html)
_SIGNATURE = re.compile(r'(?:async\s+)?(?:def|class)\s+\w+\s*(?:\((?:[^()]|\([^()]*\))*\))?\s*(?:->[^\n:]*)?:?'
                        r'(?:\s*#[^\n]*)?')


def is_signature_block(text: str) -> bool:
    "Is `text` (a printed output) a signature alone, as nbdev's show_doc prints an exported function or class?"
    lines = [l for l in text.strip().splitlines() if l.strip() and not l.strip().startswith('#')]
    body = '\n'.join(re.sub(r'\s+#.*$', '', l) for l in lines)
    return bool(lines) and _SIGNATURE.fullmatch(body) is not None


# Everything in the main column must fit it: typeset display equations (their TeX is read from
# MathJax's list of typeset items), code blocks and printed outputs (<pre>), tables and images.
_OVERFLOW_JS = '''() => {
  const a = document.querySelector('article') || document.querySelector('[role="main"]'); if (!a) return [];
  for (const d of a.querySelectorAll('details')) d.open = true;   // folded code and solutions must fit too
  const col = a.getBoundingClientRect(), out = [], slack = 2;
  const wide = r => r.width > col.width + slack || r.right > col.right + slack;
  const items = (window.MathJax && MathJax.startup && MathJax.startup.document)
      ? [...MathJax.startup.document.math] : [];
  for (const it of items) {
    const e = it.typesetRoot;
    if (!e || e.getAttribute('display') !== 'true' || !a.contains(e)) continue;
    const m = e.querySelector('mjx-math') || e, r = m.getBoundingClientRect();
    if (wide(r)) out.push(`equation ${Math.round(r.width)} px wide in a ${Math.round(col.width)} px column: `
                          + String(it.math).replace(/\\s+/g, ' ').trim().slice(0, 90));
  }
  for (const e of a.querySelectorAll('pre')) {
    if (e.scrollWidth > e.clientWidth + slack) {
      const line = e.innerText.split('\\n').reduce((x, y) => y.length > x.length ? y : x, '');
      out.push(`code block ${e.scrollWidth} px wide in ${e.clientWidth} px: ${line.trim().slice(0, 90)}`);
    }
  }
  for (const e of a.querySelectorAll('table, img')) {
    const box = e.closest('.pst-scrollable-table-container') || e, r = box.getBoundingClientRect();
    if (wide(r) || (e.tagName === 'TABLE' && box.scrollWidth > box.clientWidth + slack))
      out.push(`${e.tagName.toLowerCase()} ${Math.round(e.getBoundingClientRect().width)} px wide in a `
               + `${Math.round(col.width)} px column: ${(e.innerText || e.getAttribute('src') || '').slice(0, 60)}`);
  }
  return out;
}'''


# TeX that MathJax rejected (<mjx-merror>) or never typeset: Sphinx puts every formula in an
# element of class "math"; MathJax leaves the TeX as plain text there when it cannot find the
# closing delimiter, e.g. in `$$\frac{1}{$$` the `\]` hides inside the open brace.
_MATH_ERRORS_JS = '''() => [
  ...[...document.querySelectorAll('mjx-merror')].map(
      e => 'MathJax error: ' + (e.getAttribute('data-mjx-error') || e.textContent)),
  ...[...document.querySelectorAll('.math')].filter(e => !e.querySelector('mjx-container')).map(
      e => 'not typeset: ' + e.textContent.trim().slice(0, 200)),
]'''


# The TeX source of every formula MathJax typeset (typeset math has no readable text of its own)
_MATH_TEX_JS = '''() => (window.MathJax && MathJax.startup && MathJax.startup.document)
    ? [...MathJax.startup.document.math].map(it => String(it.math)) : []'''


# For each figure caption (a paragraph of the article that starts "Figure X.Y:"): its number, what the element right
# before it is, and that element's images as (src, naturalWidth).
CAPTIONS_JS = r'''() => {
  const a = document.querySelector('article'); if (!a) return [];
  const out = [];
  for (const p of a.querySelectorAll('p')) {
    const m = p.textContent.trim().match(/^Figure (\d+[a-z]?\.\d+)\s*:/);
    if (!m) continue;
    const prev = p.previousElementSibling;
    const imgs = prev ? [...prev.querySelectorAll('img')] : [];
    out.push({figure: m[1], before: prev ? prev.tagName.toLowerCase() + '.' + [...prev.classList].join('.') : 'nothing',
              images: imgs.map(e => [(e.getAttribute('src') || '').slice(0, 60), e.complete ? e.naturalWidth : 0])});
  }
  return out;
}'''


def _strip_fragment(url: str) -> str:
    s = urlsplit(url)
    return urlunsplit((s.scheme, s.netloc, s.path, s.query, ''))


# What a page shows at its `load` event, kept by a listener that an init script adds before any script of the page
# runs (so it is the first of the page's `load` listeners): the page's HTML (as `page.content()` serialises it), its
# 'Next' links and its figure captions. The report is read from there however late the test gets to the page.
_AT_LOAD_JS = '''window.addEventListener('load', () => {
  const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
  window.__vbfaAtLoad = {
    html: doctype + (document.documentElement ? document.documentElement.outerHTML : ''),
    next: [...document.querySelectorAll('a.right-next')].map(e => e.getAttribute('href')),
    captions: (''' + CAPTIONS_JS + ''')(),
  };
});'''
# A page's load, MathJax and images wait on the machine (and on the other pages loading beside it)
LOAD_TIMEOUT_MS = 90_000
# pages loaded at the same time, each in a context of its own: their waits (network, MathJax, images) overlap
PARALLEL_PAGES = 4
# a wait for a condition in a page checks it every POLL_MS, not at every animation frame (which keeps each page
# drawing frames, 60 a second, while it waits)
POLL_MS = 100


def _open_page(ctx, url: str):
    "Start loading `url` in a new page of `ctx`, with every listener `check_page` reports from: (rep, page)."
    rep = PageReport(url)
    origin = urlsplit(url).netloc
    page = ctx.new_page()
    try:
        # A request that leaves the origin is recorded here, from the page's own listener (so it is this page's); the
        # browser cannot send it anywhere (CHROMIUM_ARGS: every host but the loopback goes to a dead proxy), so it
        # fails and is reported once, as external. (No `route`: Playwright turns the HTTP cache off and stops every
        # request for a round trip to its driver once a context or page has one.)
        def request(r):
            s = urlsplit(r.url)
            if s.scheme in ('http', 'https') and s.netloc != origin and r.url not in rep.external_requests:
                rep.external_requests.append(r.url)   # once: Chromium retries a request its proxy refused
        page.on('request', request)
        # the browser's own request for /favicon.ico (the site declares no icon) is not the page's: its 404 is left out
        # (with a `route`, as before, Chromium never logged it)
        favicon = urlunsplit(('http', origin, '/favicon.ico', '', ''))
        page.on('console', lambda m: m.type == 'error' and m.location.get('url') != favicon
                and rep.console_errors.append(f'{m.text} ({m.location.get("url")})'))
        page.on('pageerror', lambda e: rep.page_errors.append(str(e)))
        page.on('requestfailed', lambda r: r.url not in rep.external_requests
                and rep.failed_requests.append(f'{r.url}: {r.failure}'))
        page.on('response', lambda r: r.status >= 400 and rep.failed_requests.append(f'{r.url}: HTTP {r.status}'))
        resp = page.goto(url, wait_until='commit', timeout=LOAD_TIMEOUT_MS)   # the rest loads while others are read
        rep.status = resp.status if resp else None
    except BaseException:
        page.close()
        raise
    return rep, page


def _read_page(rep: PageReport, page, keep: bool = False) -> PageReport:
    """Wait for the page `_open_page` started to load, typeset and show its images; fill `rep`; close the page
    (`keep`: leave it open, as `rep.page`, for a test that goes on to use the page; closed anyway on an error)."""
    try:
        at_load = page.wait_for_function('() => window.__vbfaAtLoad', timeout=LOAD_TIMEOUT_MS, polling=POLL_MS).json_value()
        rep.html = html = at_load['html']
        rep.next_links = at_load['next']
        rep.captions = at_load['captions']
        rep.has_math = 'class="math' in html  # Sphinx wraps every formula in class="math ..."
        if rep.has_math:
            try:
                page.wait_for_function('() => window.MathJax && MathJax.startup && MathJax.startup.promise',
                                       timeout=MATHJAX_TIMEOUT_MS, polling=POLL_MS)
                page.evaluate('() => MathJax.startup.promise')
                rep.mathjax_ok = True
            except Exception as e:  # playwright's TimeoutError or a rejected promise
                rep.mathjax_ok = False
                rep.page_errors.append(f'MathJax: {e}'.splitlines()[0])
        rep.mjx_containers = page.locator('mjx-container').count()
        rep.math_errors = page.evaluate(_MATH_ERRORS_JS)
        # prose only: printed output and code (<pre>) may show pipes on purpose
        rep.artefacts = text_artefacts(page.evaluate(
            "() => { const a = document.querySelector('article') || document.querySelector('[role=\"main\"]');"
            " if (!a) return '';"
            " const c = a.cloneNode(true); c.querySelectorAll('pre').forEach(e => e.remove()); return c.innerText; }"))
        rep.artefacts += unlinked_references(page.evaluate(
            "() => { const a = document.querySelector('article') || document.querySelector('[role=\"main\"]');"
            " if (!a) return '';"
            " const c = a.cloneNode(true); c.querySelectorAll('pre, a, code').forEach(e => e.remove());"
            " return c.innerText; }"))
        rep.artefacts += output_artefacts(page.eval_on_selector_all(
            'div.output pre, div.cell_output pre', 'els => els.map(e => e.innerText)'))
        rep.artefacts += math_artefacts(page.evaluate(_MATH_TEX_JS))
        rep.overflow = page.evaluate(_OVERFLOW_JS)
        hrefs = page.eval_on_selector_all('nav.bd-docs-nav a[href]', 'els => els.map(e => e.getAttribute("href"))')
        rep.nav_links = list(dict.fromkeys(_strip_fragment(urljoin(rep.url, h)) for h in hrefs))
        rep.nav_captions = page.eval_on_selector_all('nav.bd-docs-nav p.caption', 'els => els.map(e => e.innerText.trim())')
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try: page.wait_for_function(_IMAGES_DONE_JS, timeout=IMAGES_TIMEOUT_MS, polling=POLL_MS)
        except PlaywrightTimeout: pass  # an image still loading is reported below as not loaded (width 0), by its src
        rep.images = [tuple(x) for x in page.eval_on_selector_all(
            'article img', 'els => els.map(e => [e.currentSrc || e.src, e.complete ? e.naturalWidth : 0])')]
        if keep: rep.page = page
    except BaseException:
        keep = False
        raise
    finally:
        if not keep: page.close()
    return rep


def new_check_context(browser):
    "A browser context for `check_pages`: every page of it runs `_AT_LOAD_JS` before its own scripts."
    ctx = browser.new_context()
    ctx.add_init_script(_AT_LOAD_JS)
    return ctx


def check_pages(browser, urls, parallel: int = PARALLEL_PAGES, keep=frozenset()) -> list[PageReport]:
    """`check_page` of each of `urls`, up to `parallel` pages loading at once: while one page is read, the next ones
    load, typeset and fetch their images. The pages are tabs of one fresh browser context (they share its HTTP cache:
    the theme's and MathJax's files are fetched once a call, not once a page); each page reports only what it did
    itself (its own listeners). The context is closed at the end, unless a page of `keep` stays open
    (`PageReport.page`): then the caller closes each such page and, at last, `page.context`."""
    out, opened = [], []
    ctx = new_check_context(browser)
    def read_first():
        rep, page = opened.pop(0)
        out.append(_read_page(rep, page, keep=rep.url in keep))
    ok = False
    try:
        for url in urls:
            opened.append(_open_page(ctx, url))
            if len(opened) >= parallel: read_first()
        while opened: read_first()
        ok = True
    finally:
        if not ok or not any(rep.page is not None for rep in out): ctx.close()
    return out


def check_page(browser, url: str) -> PageReport:
    "Load `url` in a fresh context of `browser` and report what it did (see `PageReport`)."
    return check_pages(browser, [url])[0]


@pytest.fixture(scope='session')
def site_dir() -> Path:
    if not (SITE / 'index.html').is_file():
        pytest.fail(f'{SITE}/index.html not found: run make site first '
                    '(Sphinx with myst-nb: docs/conf.py)', pytrace=False)
    return SITE


@pytest.fixture(scope='session')
def site_url(site_dir):
    with serve(site_dir) as url: yield url


@pytest.fixture(scope='session')
def browser():
    with launch_chromium() as b: yield b


# The pages whose precomputed sliders a test moves after the page check (test_lesson_sliders.py, test_rjmcmc_slider.py,
# test_voila.py): the session keeps each open once it is checked (loaded, typeset, its images in), and the slider test
# takes it from there (`SitePages.live`) instead of loading and typesetting the page a second time.
SLIDER_PAGES = ('ard.html', 'transformations.html', 'rjmcmc.html', 'widgets.html')


class SitePages:
    "`check_page` of the pages of the built site, each loaded once a session: site_pages('ard.html') -> PageReport."
    def __init__(self, browser, site_url: str):
        self.browser, self.site_url, self.reports, self.contexts = browser, site_url, {}, []

    def prefetch(self, names) -> None:
        "Load every page of `names` not loaded yet, several at once (`check_pages`)."
        todo = [n for n in dict.fromkeys(names) if n not in self.reports]
        reps = check_pages(self.browser, [self.site_url + n for n in todo],
                           keep={self.site_url + n for n in SLIDER_PAGES})
        for n, rep in zip(todo, reps): self.reports[n] = rep
        self.contexts += [r.page.context for r in reps if r.page is not None][:1]   # the one context of `check_pages`

    def __call__(self, name: str) -> PageReport:
        self.prefetch([name])
        return self.reports[name]

    def live(self, name: str):
        """The open page of `name` (one of `SLIDER_PAGES`), as the page check left it: loaded, its math typeset, its
        images in; and its report. Each is handed out once (the test that takes it moves its slider and closes the page;
        its context, shared with the other pages checked with it, is closed at the end of the session)."""
        assert name in SLIDER_PAGES, name
        rep = self(name)
        page = rep.page
        assert page is not None, f'{name}: its page was handed out already'
        rep.page = None
        return page, rep

    def close(self) -> None:
        for ctx in self.contexts: ctx.close()


@pytest.fixture(scope='session')
def site_page(browser, site_url):
    """`check_page` of a page of the built site, loaded once per session: site_page('ard.html') -> PageReport;
    `site_page.prefetch(names)` loads the pages a test is about to read, several at once."""
    pages = SitePages(browser, site_url)
    yield pages
    pages.close()


@pytest.fixture(name='check_page', scope='session')
def check_page_fixture():
    return check_page


@pytest.fixture(name='check_pages', scope='session')
def check_pages_fixture():
    return check_pages


@pytest.fixture(name='serve', scope='session')
def serve_fixture():
    return serve
