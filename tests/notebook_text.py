"""Reading the lesson notebooks as text, for the course tests: their cells, their prose, whitespace folded."""
import json
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
