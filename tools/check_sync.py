"""Fail when `vbfa_lit/` is not what `nbdev-export` makes of `nbs/`, or when a notebook is not clean.

Works on a scratch copy of the project, so the check never touches the working tree and does not
depend on git: run it with uncommitted changes and it still tells the truth about them.
"""
import difflib, filecmp, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def files(d: Path, pattern: str) -> dict:
    return {p.relative_to(d).as_posix(): p for p in sorted(d.rglob(pattern)) if '.ipynb_checkpoints' not in p.parts}


def compare(ours: Path, theirs: Path, pattern: str, what: str) -> list:
    a, b = files(ours, pattern), files(theirs, pattern)
    problems = [f"{what}: {ours.name}/{k} should not exist" for k in sorted(a.keys() - b.keys())]
    problems += [f"{what}: {ours.name}/{k} is missing" for k in sorted(b.keys() - a.keys())]
    for k in sorted(a.keys() & b.keys()):
        if not filecmp.cmp(a[k], b[k], shallow=False):
            diff = difflib.unified_diff(a[k].read_text().splitlines(), b[k].read_text().splitlines(),
                                        f"{ours.name}/{k}", f"expected {ours.name}/{k}", lineterm='', n=1)
            problems.append(f"{what}: {ours.name}/{k} differs\n" + '\n'.join(list(diff)[:40]))
    return problems


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copy(ROOT / 'pyproject.toml', tmp)
        shutil.copytree(ROOT / 'nbs', tmp / 'nbs', ignore=shutil.ignore_patterns('.ipynb_checkpoints'))
        shutil.copytree(ROOT / 'vbfa_lit', tmp / 'vbfa_lit', ignore=shutil.ignore_patterns('__pycache__'))
        for f in (tmp / 'vbfa_lit').glob('*.py'):
            if f.name != '__init__.py': f.unlink()   # exported modules must come from the notebooks alone
        for cmd in ('nbdev-export', 'nbdev-clean'):
            subprocess.run([str(BIN / cmd)], cwd=tmp, check=True, capture_output=True, text=True)
        problems = compare(ROOT / 'vbfa_lit', tmp / 'vbfa_lit', '*.py', 'out of sync with nbs/ (run nbdev-export)')
        problems += compare(ROOT / 'nbs', tmp / 'nbs', '*.ipynb', 'notebook not clean (run nbdev-clean)')
        problems += compare(ROOT / 'nbs', tmp / 'nbs', '*.yml', 'Quarto config out of date')
    for p in problems: print(p, file=sys.stderr)
    print('library in sync with notebooks; notebooks clean' if not problems else f'{len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
