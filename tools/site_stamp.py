"""Whether `_site/` was built from exactly the sources and packages that are here now.

    python tools/site_stamp.py check   # exit 0 when `_site/` is up to date (the stamp matches), 1 otherwise
    python tools/site_stamp.py write   # record the current sources after a successful build

The stamp is a SHA-256 over every file under `nbs/`, `vbfa_lit/`, `docs/` and `pyproject.toml` (paths and
contents), and the name and version of every installed distribution: a site built from these sources executed
every lesson with them, so `make test` need not build it again. Any change to a notebook, the package, the build
or an installed package makes the stamp stale and the next `make test` rebuilds.
"""
import hashlib
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAMP = ROOT / '_site' / '.sources.sha256'
SOURCES = ('nbs', 'vbfa_lit', 'docs', 'pyproject.toml')


def digest(root: Path = ROOT) -> str:
    "The SHA-256 of the sources under `root` and of the installed distributions."
    h = hashlib.sha256()
    for name in SOURCES:
        p = root / name
        files = sorted(f for f in p.rglob('*') if f.is_file()) if p.is_dir() else [p]
        for f in files:
            rel = f.relative_to(root)
            if '__pycache__' in rel.parts or '.ipynb_checkpoints' in rel.parts: continue
            h.update(str(rel).encode() + b'\0' + f.read_bytes() + b'\0')
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata['Name'])
    h.update('\n'.join(dists).encode())
    return h.hexdigest()


def main(argv) -> int:
    if argv[1:] == ['write']:
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(digest() + '\n')
        return 0
    if argv[1:] == ['check']:
        return 0 if STAMP.is_file() and STAMP.read_text().strip() == digest() else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
