"""The precomputed sliders inside the lessons, on the built static site (no kernel): Figure 4.1 of the ARD lesson
(the projected variance of one column) and Figure 5.1 of the transformations lesson (sweep by sweep). Moving each
slider with the keyboard must swap the figure and the readout, and fetch nothing."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# page -> the slider's label (each frame's alt text is 'label = value')
LESSON_SLIDERS = {'ard.html': 'projected variance / noise threshold', 'transformations.html': 'sweeps'}


@pytest.mark.parametrize('page_name', sorted(LESSON_SLIDERS))
def test_lesson_slider_changes_the_figure(site_page, site_dir, page_name):
    assert (site_dir / page_name).is_file(), f'{site_dir / page_name} not found: the lesson has no page'
    page, rep = site_page.live(page_name)     # the page as the session's page check loaded it (1280 px wide)
    errors, requests = rep.page_errors, []    # its page errors, since it started loading
    try:
        # after load, moving the slider fetches nothing (MathJax may still load a font of its own, lazily, as the
        # page scrolls to the slider: that is the page's typesetting, not the slider)
        page.on('request', lambda r: '/_static/mathjax/' in r.url or requests.append(r.url))
        sliders = page.locator('.vbfa-static-slider')
        assert sliders.count() == 1, f'{page_name}: expected one precomputed slider, found {sliders.count()}'
        s = sliders.first
        s.scroll_into_view_if_needed()
        visible = lambda: s.locator('.vbfa-frames img:visible')
        assert visible().count() == 1
        assert LESSON_SLIDERS[page_name] in visible().get_attribute('alt')
        seen = set()
        rng = s.locator('input[type=range]')
        rng.focus()
        rng.press('Home')                                          # the first value, then step right twice
        for _ in range(3):
            assert visible().count() == 1
            img = visible()
            seen.add((img.get_attribute('src'), s.locator('output').inner_text(),
                      s.locator('.vbfa-caption').inner_text()))
            assert img.evaluate('i => i.naturalWidth') > 500, 'the frame is too small to read'
            box = img.bounding_box()
            assert box and box['width'] > 400, f'{page_name}: the figure is drawn {box} wide at 1280 px'
            rng.press('ArrowRight')
        srcs, outs, caps = zip(*seen)
        assert len(set(srcs)) == 3, f'{page_name}: moving the slider did not change the figure'
        assert len(set(outs)) == 3, f'{page_name}: the readout did not change'
        assert len(set(caps)) == 3, f'{page_name}: the summary line did not change'
        assert not errors, errors
        assert not requests, f'moving the slider made requests: {requests}'
    finally:
        page.close()   # its context, shared with the other pages checked, closes with the session
