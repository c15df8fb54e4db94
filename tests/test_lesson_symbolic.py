"""Lesson 02 (the symbolic machinery) as a reader sees it: the mean-field equation cited to Bishop (1999) and PRML,
symbols defined before they are used, Figure 2.1's caption naming the colour drawn, and exercise 3's Monte Carlo error
stated as measured."""
import re

import numpy as np

from notebook_text import cell_by_id, cells, prose

STEM = '02_symbolic'


def test_cites_bishop_1999_and_prml_10_9():
    assert 'Bishop (1999), eq. 13; PRML eq. 10.9' in prose(STEM)


def test_no_raw_float_and_names_of_the_last_cell_are_introduced():
    perturb = next(s for _, s in cells(STEM) if 'largest gain from perturbing' in s)
    assert re.search(r'\{worst:\.\de\}', perturb)
    last = next(s for _, s in cells(STEM) if 'derived update vs the one of Figure 2.1' in s)
    assert re.search(r'#.*step1.*Figure 2\.1', last)


def test_figure_1_1_caption_names_the_colour_drawn():
    from vbfa_lit.plots import colour
    assert ("plot_gaussian_ellipses(mean, np.diag(1 / np.diag(Lam)), ax=ax0, color=colour(3)"
            in cell_by_id(STEM, 'zz0cd001'))
    assert colour(3).upper() == '#D55E00'                 # Okabe-Ito vermillion, an orange
    assert '(orange' in cell_by_id(STEM, 'zz0md002')


def test_symbols_defined_before_use():
    text = '\n'.join(s for _, s in cells(STEM))
    for symbol, definition in ((r'\tilde\mu^{-1}', r'\mathcal{N}(\bar\mu, \tilde\mu)'),
                               (r'\check a_\tau', r'\mathcal{G}(\check a_\tau, \check b_\tau)')):
        assert text.index(definition) < text.index(symbol)


def test_exercise_3_states_the_monte_carlo_error_it_measures():
    rng = np.random.default_rng(0)
    e = np.exp(rng.normal(0.3, 0.5, 1_000_000))
    diff, se = e.mean() - np.exp(0.3 + 0.25 / 2), e.std(ddof=1) / np.sqrt(e.size)
    text = cells(STEM)[-2][1]
    assert f'{diff:.1e}'.replace('e-04', '') in text and f'{se:.1e}'.replace('e-04', '') in text
    assert f'{diff / se:.1f} standard' in text


def test_each_machine_read_off_follows_its_hand_derivation():
    """Every open cell that calls a read-off comes after a markdown cell that derives the same update by hand (a
    numbered display equation) and before the next one."""
    cs = cells(STEM)
    tags = [int(k) for k in re.findall(r'\\tag\{2\.(\d+)\}', prose(STEM))]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 8, tags
    for i, (kind, src) in enumerate(cs):
        if kind == 'code' and ('gaussian_readoff(' in src or 'gamma_readoff(' in src) and '#|' not in src \
                and 'def ' not in src:
            before = next(s for k, s in reversed(cs[:i]) if k == 'markdown')
            assert '\\tag{2.' in before, src[:80]
