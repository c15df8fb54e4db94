"""`make test` skips the site build only when `_site/` was built from exactly the sources and packages here."""
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location('site_stamp', ROOT / 'tools' / 'site_stamp.py')
site_stamp = importlib.util.module_from_spec(spec); spec.loader.exec_module(site_stamp)


def tree(tmp_path):
    for rel, text in {'nbs/01_a.ipynb': '{}', 'vbfa_lit/a.py': 'x = 1\n', 'docs/conf.py': '', 'pyproject.toml': '',
                      'vbfa_lit/__pycache__/a.cpython-311.pyc': 'bytes', 'README.md': 'not a source'}.items():
        p = tmp_path / rel; p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text)
    return tmp_path


def test_any_change_to_a_source_changes_the_digest(tmp_path):
    root = tree(tmp_path)
    d0 = site_stamp.digest(root)
    assert site_stamp.digest(root) == d0
    (root / 'vbfa_lit/__pycache__/a.cpython-311.pyc').write_text('other')      # caches are not sources
    (root / 'README.md').write_text('changed')                                  # nor is the README
    assert site_stamp.digest(root) == d0
    for rel in ('nbs/01_a.ipynb', 'vbfa_lit/a.py', 'docs/conf.py', 'pyproject.toml'):
        p = root / rel; old = p.read_text(); p.write_text(old + ' ')
        assert site_stamp.digest(root) != d0, rel
        p.write_text(old)
    (root / 'nbs/02_b.ipynb').write_text('{}')                                  # a new notebook
    assert site_stamp.digest(root) != d0


def test_makefile_builds_the_site_unless_the_stamp_matches():
    make = (ROOT / 'Makefile').read_text()
    rule = make.split('\nsite-build:', 1)[1].split('\n\n', 1)[0]
    assert 'site_stamp.py check' in rule and 'docs/build_site.py' in rule and 'site_stamp.py write' in rule
    assert rule.index('rm -f _site/.sources.sha256') < rule.index('docs/build_site.py') < rule.index('write')


def test_check_and_write_on_the_repository(tmp_path, monkeypatch):
    monkeypatch.setattr(site_stamp, 'STAMP', tmp_path / '.sources.sha256')
    assert site_stamp.main(['x', 'check']) == 1                                 # no stamp: build
    assert site_stamp.main(['x', 'write']) == 0
    assert site_stamp.main(['x', 'check']) == 0                                 # just written: up to date
    site_stamp.STAMP.write_text('0' * 64 + '\n')
    assert site_stamp.main(['x', 'check']) == 1                                 # another build's stamp: stale
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'site_stamp.py')], capture_output=True, text=True)
    assert r.returncode == 2 and 'check' in r.stderr
