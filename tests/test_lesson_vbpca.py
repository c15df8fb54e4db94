"""Lesson 02 (variational Bayesian PCA) as a reader sees it: the posterior's fields shown with their symbols and
shapes, the engine-against-reference check on the engine's page (02d), exercise 5 as two questions, and a summary
that quantifies what "not converged" costs."""
import re

from notebook_text import cells, prose, shown_code

STEM = '02_vbpca'


def test_posterior_fields_are_shown_with_symbols_and_shapes():
    shown = shown_code(next(s for k, s in cells(STEM) if k == 'code' and 'class Posterior(' in s))
    assert 'class Posterior(NamedTuple)' in shown and 'class Prior' not in shown
    for field, shape in (('X', '(N, D)'), ('Sw', '(M, D, D)'), ('vmu', '(M,)'), ('a_tau', '(M,)')):
        assert re.search(rf'\n\s+{field}: .*# {re.escape(shape)}', shown), field


def test_the_engine_against_reference_check_is_on_the_engine_page():
    assert 'reference_sweep' in '\n'.join(s for _, s in cells('02d_engine'))


def test_exercise_5_is_two_questions():
    ex = prose(STEM)[prose(STEM).index('## Exercises'):]
    assert re.search(r'\n5\. Use `hessian_pattern` on `model.mu`', ex)
    assert re.search(r"\n6\. [\s\S]{0,200}q\(\\mathbf\{x\}_1\)", ex)


def test_summary_quantifies_not_converged():
    md = prose(STEM)
    summary = md[md.index('## Summary'):md.index('## Exercises')]
    assert 'nats short' in summary and 'held-out RMSE' in summary
