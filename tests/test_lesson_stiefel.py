"""Lesson 12 (the Stiefel manifold) as a reader sees it: its uniformity check run on the page (on fewer draws here,
same tolerances), a summary without an API list, and Figure 12.2 with three ticks per axis."""
import numpy as np

from notebook_text import cell_with, prose, section

STEM = '12_stiefel'


def test_runs_its_uniformity_check():
    from scipy import stats
    from vbfa_lit.stiefel import haar_orthogonal, sample_stiefel
    text = prose(STEM)
    summary = section(text, '## Summary', '## Exercises')
    assert '`' not in summary                               # no API list in the summary
    src = cell_with(STEM, 'O = haar_orthogonal(6, size=n_mc, random_state=11)')
    assert 'n_mc = 20_000' in src
    src = src.replace('n_mc = 20_000', 'n_mc = 5_000')           # the page's check on fewer draws, same tolerances
    ns = dict(np=np, stats=stats, haar_orthogonal=haar_orthogonal, sample_stiefel=sample_stiefel)
    exec(src, ns)
    assert abs(ns['pos'] - 0.5) < 4 * np.sqrt(0.25 / ns['n_mc']) and len(ns['z']) == 3
    assert r'P(\det\mathbf{U} = +1) = \tfrac12' in text



def test_figure_2_has_three_ticks_per_axis():
    code = cell_with(STEM, 'Figure 12.2:')
    assert 'xticks=[-1, 0, 1], yticks=[-1, 0, 1], zticks=[-1, 0, 1]' in code



def test_the_slides_are_introduced_with_a_citation_before_they_are_named():
    import re
    from notebook_text import flat
    text = flat(prose(STEM))
    first = text.index('the slides')
    intro = text[:first + 300]
    assert 'Nirwan & Bertschinger (2019)' in intro and 'ICML 2019' in intro and '(98_references.ipynb)' in intro
    assert re.search(r'"the slides" below', intro)


def test_the_reflection_and_mezzadris_step_are_derived_by_hand_and_tagged_in_order():
    import re
    text = prose(STEM)
    tags = [int(m) for m in re.findall(r'\\tag\{12\.(\d+)\}', text)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 6, tags
    assert r"= \mathbf{v} - \mathbf{h}" in text                            # P v = v - h, Eq. (12.3)
    step = section(text, '**The key step, by hand.**', 'Two remarks')
    assert r"\operatorname{diag}(1, \mathbf{K}\mathbf{O}')" in step and 'Eq. (12.4)' in step
