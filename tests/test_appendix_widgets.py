"""The widgets appendix (09) as a reader sees it: exercise 3 puts the spread of the panel's estimates on independent
chains."""
from notebook_text import prose


def test_exercise_3_says_the_chains_are_independent():
    text = prose('09_widgets')
    ex3 = text[text.index('In panel 3, choose Set 1'):text.index('4. In panel 3')]
    assert 'independent' in ex3
