"""The repository checks behind `make test` fail when they should: library drift, unclean notebooks, a README without its two commands."""
import json, shutil, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path):
    "A scratch copy of the parts of the project that tools/check_sync.py looks at."
    for d in ('nbs', 'vbfa_lit', 'tools'):
        shutil.copytree(ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns('__pycache__', '.ipynb_checkpoints'))
    shutil.copy(ROOT / 'pyproject.toml', tmp_path)
    return tmp_path


def check_sync(project):
    return subprocess.run([sys.executable, 'tools/check_sync.py'], cwd=project, capture_output=True, text=True)


def test_check_sync_passes_on_the_repository_as_it_is(project):
    r = check_sync(project)
    assert r.returncode == 0, r.stderr


def test_check_sync_fails_on_each_of_three_faults_and_names_each(project):
    "Three faults planted in one copy (check_sync reports every problem it finds, so one run checks all three)."
    # the library edited by hand
    mod = project / 'vbfa_lit' / 'notation.py'
    mod.write_text(mod.read_text().replace('return a / b, digamma(a) - np.log(b)', 'return a / b, digamma(a)'))
    # an exported module without a notebook
    (project / 'vbfa_lit' / 'orphan.py').write_text('x = 1\n')
    # an unclean notebook: what a Jupyter session leaves behind
    nb_path = project / 'nbs' / '00_notation.ipynb'
    nb = json.loads(nb_path.read_text())
    nb['metadata']['widgets'] = {'state': {}}
    nb['cells'][0]['metadata']['scrolled'] = True
    nb_path.write_text(json.dumps(nb, indent=1))
    r = check_sync(project)
    assert r.returncode == 1
    assert 'vbfa_lit/notation.py differs' in r.stderr
    assert 'orphan.py should not exist' in r.stderr
    assert 'notebook not clean' in r.stderr and 'nbs/00_notation.ipynb differs' in r.stderr
    assert r.stdout.strip() == '3 problem(s)', (r.stdout, r.stderr)        # each fault found, and nothing else


def test_readme_opens_with_the_two_commands():
    readme = (ROOT / 'README.md').read_text()
    assert readme.startswith('# vbfa_lit')
    opening = readme.split("\n## ")[0]
    assert 'make site' in opening and 'make test' in opening
