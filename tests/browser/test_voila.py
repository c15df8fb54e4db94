"""The widget panels in a real browser: each notebook of `nbs/experiments/` served by Voila on 127.0.0.1 and driven
by Debian's Chromium through Playwright (a slider moved with the keyboard, a toggle clicked); and the precomputed
sliders of the static site (`_site/widgets.html`), which need no kernel.

The plotted output is an `ipywidgets.Image`: a test reads the bytes behind the `<img>` and asserts they change.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((ROOT / 'nbs' / 'experiments').glob('*.ipynb'))
VOILA = Path(sys.executable).parent / 'voila'
START_TIMEOUT_S = 120        # Voila start-up, kernel start and the panel's first fit
UPDATE_TIMEOUT_MS = 90_000   # one panel update (fit, figure and PNG) on a loaded machine
POLL_MS = 100              # a wait checks its condition every 100 ms, not at every animation frame
ERROR_MARKERS = ('Traceback', 'Kernel error', 'Error:', 'input error', 'Exception')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def voila_server(tmp_path_factory):
    """One Voila server for the experiments directory on 127.0.0.1 (a free port), as `make experiments` runs it: each
    notebook is a page of it (/voila/render/<name>.ipynb) with a kernel of its own. Yields the server's URL and its log
    file; stops Voila after the module. (A server per notebook started four Jupyter servers for the same pages.)"""
    port = free_port()
    env = {**os.environ, 'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
           'JUPYTER_PLATFORM_DIRS': '1'}
    log_path = tmp_path_factory.mktemp('voila') / 'voila.log'
    log = open(log_path, 'w')
    directory = ROOT / 'nbs' / 'experiments'
    proc = subprocess.Popen([str(VOILA), '--no-browser', f'--port={port}', '--Voila.ip=127.0.0.1', str(directory)],
                            cwd=directory, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f'http://127.0.0.1:{port}/'
    try:
        t_end = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f'voila exited with {proc.returncode}: {log_path.read_text()[-2000:]}')
            try:
                with socket.create_connection(('127.0.0.1', port), timeout=1): break
            except OSError:
                if time.monotonic() > t_end: pytest.fail(f'voila did not listen on {url} within {START_TIMEOUT_S} s')
                time.sleep(0.3)
        yield url, log_path
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope='module')
def voila_pages(browser, voila_server):
    """The Voila page of every experiment notebook, all asked for at once (each in a browser context of its own): Voila
    streams a page while its kernel runs the notebook, so the four kernels start and make their first fits side by side
    while the tests take the pages one by one. {notebook stem: (page, its page errors)}; a test closes its page's
    context when it ends (Voila then stops the kernel), the fixture any left."""
    opened, contexts = {}, []
    try:
        for nb in EXPERIMENTS:
            ctx = browser.new_context(viewport={'width': 1280, 'height': 900})
            contexts.append(ctx)
            page, errors = ctx.new_page(), []
            page.on('pageerror', lambda e, errors=errors: errors.append(str(e)))
            page.goto(voila_server[0] + 'voila/render/' + nb.name, wait_until='commit', timeout=START_TIMEOUT_S * 1000)
            opened[nb.stem] = page, errors
        yield opened
    finally:
        for ctx in contexts: ctx.close()


IMG_BYTES_JS = '''async (img) => { const r = await fetch(img.src); const b = new Uint8Array(await r.arrayBuffer());
  let s = 0; for (let i = 0; i < b.length; i++) s = (s * 31 + b[i]) >>> 0; return [img.src, b.length, s]; }'''


def image_state(page):
    "(src, byte length, checksum) of the panel's figure."
    return tuple(page.locator('img.widget-image').first.evaluate(IMG_BYTES_JS))


def wait_for_new_image(page, before, what):
    t0 = time.perf_counter()
    page.wait_for_function('''(src) => { const i = document.querySelector('img.widget-image');
                                          return i && i.src && i.src !== src; }''', arg=before[0],
                           timeout=UPDATE_TIMEOUT_MS, polling=POLL_MS)
    page.wait_for_function('''() => [...document.querySelectorAll('.widget-html')]
                                      .some(e => /updated in|input error/.test(e.textContent))''',
                           timeout=UPDATE_TIMEOUT_MS, polling=POLL_MS)
    after = image_state(page)
    assert after[1:] != before[1:], f'{what}: a new image URL but the same PNG bytes'
    return after, time.perf_counter() - t0


def page_problems(page, page_errors) -> list[str]:
    text = page.locator('body').inner_text()
    bad = [m for m in ERROR_MARKERS if m in text]
    return [f'page shows {m!r}' for m in bad] + [f'page error: {e}' for e in page_errors]


@pytest.mark.parametrize('name', [p.stem for p in EXPERIMENTS])
def test_experiment_in_voila(voila_pages, name, tmp_path):
    page, page_errors = voila_pages[name]       # asked for with the others; its kernel may be running already
    try:
        page.wait_for_load_state('load', timeout=START_TIMEOUT_S * 1000)
        page.wait_for_selector('img.widget-image', timeout=START_TIMEOUT_S * 1000)
        page.wait_for_function('''() => { const i = document.querySelector('img.widget-image');
                                          return i && i.naturalWidth > 100; }''', timeout=UPDATE_TIMEOUT_MS, polling=POLL_MS)
        assert not page_problems(page, page_errors)
        first = image_state(page)
        page.screenshot(path=str(tmp_path / f'{name}-0.png'))

        # a slider: focus the first handle (N, the number of samples) and press ArrowRight
        handle = page.locator('.widget-slider .noUi-handle').first
        readout = page.locator('.widget-slider .widget-readout').first
        value0 = readout.inner_text()
        handle.focus()
        handle.press('ArrowRight')
        after_slider, t_slider = wait_for_new_image(page, first, 'slider')
        assert readout.inner_text() != value0
        # a toggle: click the first toggle button (rotation/translation)
        page.locator('button.widget-toggle-button').first.click()
        after_toggle, t_toggle = wait_for_new_image(page, after_slider, 'toggle')
        page.screenshot(path=str(tmp_path / f'{name}-1.png'), full_page=True)
        shots = os.environ.get('VBFA_SCREENSHOTS')
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f'voila-{name}.png'), full_page=True)
        print(f'{name}: update after slider {t_slider:.1f} s, after toggle {t_toggle:.1f} s')
        problems = page_problems(page, page_errors)
        assert not problems, problems
    finally:
        page.context.close()


# ---------------------------------------------------------------- the precomputed sliders of the static site

def test_static_site_sliders(site_page, site_dir):
    "On `_site/widgets.html` each precomputed slider swaps its image when moved, with no request to any server."
    page_html = site_dir / 'widgets.html'
    assert page_html.is_file(), f'{page_html} not found: the widgets lesson has no page'
    page, rep = site_page.live('widgets.html')   # the page as the session's page check loaded it
    requests = []
    # its page errors and console errors since it started loading (the page check's listeners go on listening)
    errors = lambda: rep.page_errors + [e for e in rep.console_errors if 'favicon' not in e]
    try:
        page.on('request', lambda r: requests.append(r.url))        # after load: moving a slider fetches nothing
        sliders = page.locator('.vbfa-static-slider')
        assert sliders.count() >= 2, 'expected one precomputed slider per panel'
        for i in range(sliders.count()):
            s = sliders.nth(i)
            visible = lambda: s.locator('.vbfa-frames img:visible')
            assert visible().count() == 1
            src0, out0 = visible().get_attribute('src'), s.locator('output').inner_text()
            assert src0.startswith('data:image/png;base64,')
            s.locator('input[type=range]').focus()
            s.locator('input[type=range]').press('ArrowRight')
            assert visible().count() == 1
            assert visible().get_attribute('src') != src0, f'slider {i}: the image did not change'
            assert s.locator('output').inner_text() != out0, f'slider {i}: the readout did not change'
            assert visible().evaluate('i => i.naturalWidth') > 100
        assert not errors(), errors()
        assert not requests, f'moving a slider made requests: {requests}'
    finally:
        page.close()   # its context, shared with the other pages checked, closes with the session
