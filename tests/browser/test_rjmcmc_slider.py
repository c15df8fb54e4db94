"""The reversible-jump lesson's precomputed slider (Figure 10.2, one chain sweep by sweep) on the static site: moving it
swaps the frame and the readout in the browser, with no kernel and no request to any server."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def lesson_page(site_dir):
    "The built page of lesson 10 (its notebook's default_exp, rjmcmc)."
    page = site_dir / 'rjmcmc.html'
    assert page.is_file(), f'{page} not found: the reversible-jump lesson has no page'
    return page.name


def test_rjmcmc_slider_steps_through_the_chain(site_page, site_dir):
    name = lesson_page(site_dir)
    page, rep = site_page.live(name)          # the page as the session's page check loaded it (1280 px wide)
    requests = []
    # its page errors and console errors since it started loading (the page check's listeners go on listening)
    errors = lambda: rep.page_errors + [e for e in rep.console_errors if 'favicon' not in e]
    try:
        # once MathJax has typeset the page and its fonts are in (it fetches them as it typesets, after `load`),
        # moving the slider fetches nothing
        page.wait_for_function('() => window.MathJax && MathJax.startup && MathJax.startup.promise', timeout=60_000,
                               polling=100)
        page.evaluate('async () => { await MathJax.startup.promise; await document.fonts.ready; }')
        # the page is long loaded (the page check waited for its images): a request still open from then (Playwright's
        # 'networkidle' once never came on a loaded page) is not one the slider makes; the listener below sees new ones
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try: page.wait_for_load_state('networkidle', timeout=5_000)
        except PlaywrightTimeout: pass
        page.on('request', lambda r: requests.append(r.url))
        sliders = page.locator('.vbfa-static-slider')
        assert sliders.count() == 1, 'expected the one precomputed slider of Figure 10.2'
        s = sliders.first
        frames = s.locator('.vbfa-frames img')
        assert frames.count() == 41, 'expected 41 frames: the start and 40 sweeps'
        # wide enough to hit one sweep with a mouse: at least 5 px a position
        width = s.locator('input[type=range]').evaluate('i => i.clientWidth')
        assert width >= 5 * frames.count(), f'the slider is {width} px wide for {frames.count()} positions'
        visible = lambda: s.locator('.vbfa-frames img:visible')
        seen = set()
        out0 = s.locator('output').inner_text()
        assert 'sweep 40' in s.locator('.vbfa-caption').inner_text(), 'the slider should open on the last sweep'
        s.locator('input[type=range]').focus()
        for step in range(5):
            assert visible().count() == 1
            src = visible().get_attribute('src')
            assert src.startswith('data:image/png;base64,') and src not in seen, f'step {step}: frame not new'
            seen.add(src)
            assert visible().evaluate('i => i.naturalWidth') > 100
            s.locator('input[type=range]').press('ArrowLeft')
        assert s.locator('output').inner_text() != out0, 'the readout did not change'
        assert 'sweep 35' in s.locator('.vbfa-caption').inner_text()
        # the frame fits the page column at 1280 px: not scaled below 80 % of its own width
        shown, natural = visible().evaluate('i => [i.clientWidth, i.naturalWidth]')
        assert shown >= 0.8 * natural, (shown, natural)
        assert not errors(), errors()
        assert not requests, f'moving the slider made requests: {requests}'
    finally:
        page.close()   # its context, shared with the other pages checked, closes with the session
