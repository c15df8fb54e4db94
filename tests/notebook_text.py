"""Reading the lesson notebooks as text, for the course tests: their cells and prose, whitespace folded, which cells
the page hides or folds, and a cell's code run for what it prints."""
import contextlib
import io
import json
import re
import warnings
from pathlib import Path

NBS = Path(__file__).resolve().parents[1] / 'nbs'


def cells(stem):
    "The cells of nbs/<stem>.ipynb as (cell_type, source) pairs."
    return [(c['cell_type'], ''.join(c['source'])) for c in json.loads((NBS / f'{stem}.ipynb').read_text())['cells']]


def prose(stem):
    "The markdown cells of nbs/<stem>.ipynb, joined."
    return '\n'.join(s for k, s in cells(stem) if k == 'markdown')


def flat(text):
    "Whitespace runs folded to one space (sentences that wrap across lines compare as one line)."
    return ' '.join(text.split())


def is_hidden(src):
    "Whether a code cell's source hides it from the page (`#| hide` or `#| echo: false`)."
    return bool(re.search(r'^#\|\s*(hide|echo:\s*false)\s*$', src, re.M))


def is_folded(src):
    "Whether a code cell's source folds it on the page (`#| code-fold: true`)."
    return bool(re.search(r'^#\|\s*code-fold:\s*true\s*$', src, re.M))


def cell_with(stem, text):
    "The one code cell of nbs/<stem>.ipynb that contains `text` (fails if none or several do)."
    hits = [s for k, s in cells(stem) if k == 'code' and text in s]
    assert len(hits) == 1, (stem, text, len(hits))
    return hits[0]


def run(code, env):
    "Execute `code` in the namespace `env` (warnings silenced) and return what it printed."
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter('ignore')
        exec(code, env)
    return out.getvalue()
