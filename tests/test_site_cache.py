"""The site's notebook cache under Sphinx's `-j 2`: processes that cache notebooks at the same time lose none of them
(jupyter-cache alone deletes a record another process adds during its truncation, and the build fails)."""
import subprocess, sys, textwrap

from notebook_text import ROOT

# The race needs jupyter-cache and nbformat, not jsonschema's check of the "iri" format: its optional module
# rfc3987_syntax builds a grammar when imported (about 2 CPU-s, half of this test), so the script does without it
# (jsonschema skips that one format check when the module cannot be imported).
RACE = textwrap.dedent('''
    import sys; sys.modules['rfc3987_syntax'] = None
    import multiprocessing as mp, nbformat as nbf
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    sys.path.insert(0, sys.argv[2]); import proc2sphinx; proc2sphinx.serialise_cache_writes()
    def cache_many(who):
        cache, lost = get_cache(sys.argv[1]), 0
        for i in range(25):
            nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(f'x = {who * 1000 + i}', execution_count=1)])
            try: cache.cache_notebook_bundle(CacheBundleIn(nb, f'/nb/{who}_{i}.ipynb'))
            except KeyError: lost += 1
        return lost
    if __name__ == '__main__':
        get_cache(sys.argv[1]).db
        with mp.get_context('fork').Pool(4) as pool: lost = pool.map(cache_many, range(4))
        cache = get_cache(sys.argv[1])
        print(sum(lost), len(cache.list_cache_records()), sum(1 for r in cache.list_cache_records() if cache.get_cache_bundle(r.pk)))
''')

def test_four_processes_caching_at_once_keep_every_notebook(tmp_path):
    (tmp_path / 'race.py').write_text(RACE)
    out = subprocess.run([sys.executable, str(tmp_path / 'race.py'), str(tmp_path / 'cache'), str(ROOT / 'docs')],
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert out == ['0', '100', '100'], f'KeyErrors, records, readable notebooks: {out}'
