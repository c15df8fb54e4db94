"""Lesson 05 (the transformations) as a reader sees it: Figure 5.1 a precomputed slider, and Figure 5.2 the same
transformed fit that lesson 09 saved, so both pages count the same sweep against the same best bound."""
import inspect
import json
import re

import numpy as np

from notebook_text import NBS, cell_with, cells, flat, prose

STEM = '05_transformations'


def test_figure_4_1_is_a_precomputed_slider():
    assert any('figure_slider(' in s for k, s in cells(STEM) if k == 'code' and 'Figure 5.1:' in s)


def test_04_figure_4_2_runs_the_transformed_fit_as_lesson_05_saved_it():
    fig42 = cell_with(STEM, "Figure 5.2: dataset 1")
    both = re.search(r"'both': fit_vbfa\(data1, 30, prior1, rng=0, max_iter=(\d+), tol=([0-9.e-]+)", fig42)
    saved = json.loads((NBS / 'figures' / '05_full_results.json').read_text())
    row = next(r for r in saved['rows']
               if (r['dataset'], r['prior'], r['D'], r['seed'], r['transform']) == ('1', 'ARD', 30, 0, True))
    from vbfa_lit.convergence import run_config
    assert int(both.group(1)) == row['max_iter'] and float(both.group(2)) == inspect.signature(run_config).parameters['tol'].default
    # so its best bound is lesson 09's L*, and both pages count the same sweep
    curves = {c['transform']: np.array(c['bound']) for c in saved['curves']
              if (c['dataset'], c['prior'], c['D']) == ('1', 'ARD', 30)}
    best = max(c.max() for c in curves.values())
    assert row['it_nat'] == int(np.argmax(curves[True] > best - 1)) + 1
    caption = flat(prose('09_convergence'))
    assert 'at sweep 212' in caption and row['sweeps'] == 212



def test_exercise_solutions_run_on_the_page_and_print_what_their_text_says():
    "Exercises 1 and 4 answer with folded code cells inside their folds, whose printout the reader sees."
    md = prose(STEM)
    assert '```python' not in md[md.index('## Exercises'):]
    cs = cells(STEM)
    for n, name in ((1, 'optimal_translation('), (4, 'rotation_paper(')):
        i = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and f'\n{n}. ' in '\n' + s
                 and s.rfind('<summary>Solution') > s.rfind('</details>'))       # the fold opens here ...
        kind, code = cs[i + 1]
        assert kind == 'code' and '#| code-fold: true' in code and name in code and 'print(' in code, n
        assert cs[i + 2][0] == 'markdown' and cs[i + 2][1].startswith('</details>'), n   # ... and closes after it
    text4 = flat(md[md.index('\n4. Replace'):])
    assert r'$4 \times 10^{-4}$' in text4 and '$-830$' in text4   # the values test_course_exercises checks


def test_side_material_is_folded_and_q_alpha_is_cited_from_lesson_04():
    "The broad prior's limit alpha -> 0 sits in a Details box; the rotated q(alpha_d) names the ARD lesson's Eq. (4.7)."
    md = prose(STEM)
    broad = md[md.index(r'## The broad-prior variant'):md.index('## The PCA basis')]
    opened = broad.index('<details><summary>Details')
    assert opened < broad.index(r'\tag{5.18}') < broad.index('</details>')
    assert 'Eq. (4.7)' in md and '(04_ard.ipynb)' in md
