"""Lesson 03 (variational Bayesian PCA) as a reader sees it: the posterior's fields with their symbols and shapes in a
folded cell, the engine-against-reference check on the engine's page (25), exercise 5 as two questions, and a summary
that quantifies what "not converged" costs."""
import re

from notebook_text import caption, cell_with, cells, flat, is_folded, prose, shown_code

STEM = '03_vbpca'


def test_posterior_fields_are_folded_with_symbols_and_shapes():
    "The storage of the posterior is on the page, folded (not open code), each field with its symbol and shape."
    src = next(s for k, s in cells(STEM) if k == 'code' and 'class Posterior(' in s)
    assert is_folded(src) and not shown_code(src)
    assert 'class Posterior(NamedTuple)' in src and 'class Prior' not in src
    for field, shape in (('X', '(N, D)'), ('Sw', '(M, D, D)'), ('vmu', '(M,)'), ('a_tau', '(M,)')):
        assert re.search(rf'\n\s+{field}: .*# {re.escape(shape)}', src), field


def test_the_engine_against_reference_check_is_on_the_engine_page():
    assert 'reference_sweep' in '\n'.join(s for _, s in cells('25_engine'))


def test_exercise_5_is_two_questions():
    ex = prose(STEM)[prose(STEM).index('## Exercises'):]
    assert re.search(r'\n5\. Use `hessian_pattern` on `model.mu`', ex)
    assert re.search(r"\n6\. [\s\S]{0,200}q\(\\mathbf\{x\}_1\)", ex)


def test_summary_quantifies_not_converged():
    md = prose(STEM)
    summary = md[md.index('## Summary'):md.index('## Exercises')]
    assert 'nats short' in summary and 'held-out RMSE' in summary


def test_equations_are_numbered_in_order_and_every_citation_resolves():
    "Display equations carry \\tag{2.k}, k = 1, 2, ... in order; every 'Eq. (2.k)' in the prose names one of them."
    md = prose(STEM)
    tags = [int(k) for k in re.findall(r'\\tag\{3\.(\d+)\}', md)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 20, tags
    cited = {int(k) for k in re.findall(r'Eq\. \(3\.(\d+)\)', md)}
    assert cited <= set(tags), sorted(cited - set(tags))
    assert not re.search(r'Eqs?\. 2\.\d|Eqs\. \(', md)              # one citation form: Eq. (2.k)


def test_every_update_is_derived_by_hand_and_checked_by_sympy():
    "Each update section derives its factor in display math and is followed by a SymPy check of that equation."
    cs = cells(STEM)
    for heading, eq in ((r'## $q(\mathbf{x}_n)$', 8), (r'## $q(\mathbf{w}_m)$', 10), (r'## $q(\mu_m)$', 12),
                        (r'## $q(\tau_m)$', 14), ('## The lower bound', 18)):
        i = next(i for i, (k, s) in enumerate(cs) if k == 'markdown' and s.startswith(heading))
        assert rf'\tag{{3.{eq}}}' in cs[i][1], heading
        check = next(s for k, s in cs[i + 1:] if k == 'code')
        assert 'SymPy agrees with Eq. (3.' in check and f'Eq. (3.{eq})' in check and 'assert' in check, heading


def test_exercise_7_the_expanded_rate_agrees_near_zero_and_loses_every_digit_far_from_it():
    import numpy as np
    from notebook_text import cell_by_id, run, solution_blocks
    text, _ = solution_blocks(STEM, 7)                              # the prose of the solution
    printed = run(cell_by_id(STEM, 'sol03007'), {'np': np})          # its code, a folded cell inside the solution
    (r0, e0), (r8, e8) = [tuple(map(float, m)) for m in
                          re.findall(r'Eq\. \(3\.16\) gives ([\d.e+-]+), the expanded form ([\d.e+-]+)', printed)]
    assert abs(r0 - e0) < 1e-9 * r0                               # equal in exact arithmetic
    assert abs(r8 - e8) > 0.1 * r8                                 # far from zero the expanded form fails
    assert f'({r8:.1f})' in text and f'gives {e8:.0f}' in text    # the prose quotes what the code prints


def test_q_alpha_is_derived_once_in_lesson_04_and_cited_here():
    "The ARD update is derived on the ARD page (its Eq. (4.7)); this page cites it instead of deriving it again."
    md = prose(STEM)
    assert not re.search(r'^## \$q\(\\alpha', md, re.M) and 'q^\\ast(\\alpha_d)' not in md
    assert 'Eq. (4.7)' in md and '(04_ard.ipynb)' in md
    ard = prose('04_ard')
    assert '\\tag{4.7}' in ard and re.search(r'^## Deriving \$q\(\\alpha_d\)\$', ard, re.M)


def test_the_first_sweeps_huge_gains_are_explained_and_the_figure_starts_after_them():
    "Sweep 1 undoes the overconfident start (order 1e6 nats): the prose says why, the left panel starts after sweep 1."
    md = flat(prose(STEM))
    assert '10^6' in md and 'large precision times large errors' in md
    src = cell_with(STEM, 'Figure 3.3:')
    assert 'plot_update_sequence(bounds[4:]' in src and 'symlog' not in src
    assert 'sweep 1' in flat(caption(STEM, '3.3'))
