"""`nbdev-export`, keeping the modification time of every module whose text it leaves unchanged (it rewrites them all):
numba's cache of compiled kernels and Sphinx's incremental build go by that time, so an unchanged module rewritten made
the next test run compile every kernel again and the site build re-read every notebook."""
import os, subprocess, sys
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / 'vbfa_lit'

if __name__ == '__main__':
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in LIB.glob('*.py')}
    subprocess.run([Path(sys.executable).with_name('nbdev-export'), *sys.argv[1:]], check=True)
    for p, (text, mtime) in before.items():
        if p.exists() and p.read_bytes() == text: os.utime(p, ns=(p.stat().st_atime_ns, mtime))
