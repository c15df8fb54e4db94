"""Write README.md from nbs/index.ipynb (executed, hidden cells and `#|` directives removed).

`python tools/readme.py` writes it; `python tools/readme.py --check` fails when README.md is stale.
"""
import argparse, re, sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
FOOTER = '\n<!-- Generated from nbs/index.ipynb by tools/readme.py: edit the notebook, not this file. -->\n'
_directive = re.compile(r'^\s*#\|.*$\n?', re.MULTILINE)


def is_hidden(cell) -> bool:
    return cell.cell_type == 'code' and re.search(r'^\s*#\|\s*(hide|default_exp)\b', cell.source, re.M) is not None


def render(nb_path: Path = ROOT / 'nbs' / 'index.ipynb', executed: bool = False) -> str:
    "README text from the notebook at `nb_path`; executed first unless `executed` (a copy the site build ran)."
    nb = nbformat.read(nb_path, as_version=4)
    if not executed:
        NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': str(nb_path.parent)}}).execute()
    nb.cells = [c for c in nb.cells if not is_hidden(c)]
    for c in nb.cells:
        if c.cell_type == 'code': c.source = _directive.sub('', c.source)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    return re.sub(r'\n{3,}', '\n\n', body).strip() + '\n' + FOOTER


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--check', action='store_true', help='fail if README.md is not up to date')
    parser.add_argument('--executed', type=Path, help="an executed copy of nbs/index.ipynb to read instead of running "
                        "the notebook (make test passes the site build's copy, so the index runs once)")
    args = parser.parse_args()
    if args.executed:
        src, copy = (ROOT / 'nbs' / 'index.ipynb'), args.executed
        if not copy.exists(): parser.error(f'{copy} does not exist: run the site build first')
        # the copy must be of the current notebook: same cells, whatever their outputs
        if [c.source for c in nbformat.read(copy, as_version=4).cells] != [c.source for c in nbformat.read(src, as_version=4).cells]:
            parser.error(f'{copy} is not a copy of the current {src.relative_to(ROOT)}: run the site build again')
        text = render(copy, executed=True)
    else:
        text = render()
    readme = ROOT / 'README.md'
    if args.check:
        if not readme.exists() or readme.read_text() != text:
            print('README.md is stale: run `make readme` (it is generated from nbs/index.ipynb)', file=sys.stderr)
            return 1
        print('README.md is up to date')
        return 0
    readme.write_text(text)
    print(f'wrote {readme}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
