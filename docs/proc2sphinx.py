"""Turn nbdev's processed notebooks (`_proc/`) into a Sphinx/myst-nb source tree.

nbdev prepares notebooks for Quarto. Sphinx + myst-nb reading them as-is loses the page titles
(they live in a raw YAML front-matter cell), shows the `#|` directive lines, and docutils crashes
on the `---` that starts every `show_doc` output. The pure functions below fix exactly that:

- raw front matter -> a markdown cell with the page title (H1) and the description;
- `#| echo: false` -> the `remove-input` cell tag (also `output: false`, `include: false`);
- every remaining leading `#|` line is stripped from code cells;
- `show_doc` markdown loses its leading `---` and Quarto link attributes `{target="_blank" ...}`;
- links to other notebooks (`00_notation.ipynb`, `notation.html#x`, nbdev's doc links to the
  published site) point at the renamed local pages;
- each page is named by its `output-file` (`00_notation.ipynb` -> `notation.ipynb`).

Notebooks are handled as plain JSON dicts (nbformat 4), so every function is easy to test.
"""
from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path, PurePosixPath

import yaml

__all__ = ['parse_front_matter', 'title_markdown', 'split_directives', 'directive_tags',
           'clean_show_doc_markdown', 'numpydoc_markdown', 'escape_angles', 'signature_comments', 'rewrite_links', 'page_name', 'page_sort_key',
           'convert_notebook', 'convert_tree', 'toctree_markdown']

_FM_RE = re.compile(r'^\s*---\s*\n(.*?)\n\s*---\s*$', re.S)
_DIRECTIVE_RE = re.compile(r'^\s*#\|\s?(.*)$')


def _src(cell: dict) -> str:
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else s


def parse_front_matter(raw: str) -> dict | None:
    "The YAML mapping in a raw `---`-delimited front-matter cell, or None if `raw` is not one."
    m = _FM_RE.match(raw.strip() + '\n')
    if not m: return None
    try: d = yaml.safe_load(m.group(1))
    except yaml.YAMLError: return None
    return d if isinstance(d, dict) else None


# The page's own table of contents, at the top of the article: the site has no right-hand sidebar, so
# that code and equations get the full width (pydata-sphinx-theme hides a `contents` without this class).
PAGE_CONTENTS = ('```{contents} On this page\n:local:\n:depth: 1\n'
                 ':class: this-will-duplicate-information-and-it-is-still-useful-here\n```')


def title_markdown(fm: dict, contents: bool = False) -> str:
    "Markdown for the top of a page: the title as H1, the description as a paragraph, then (if asked) its contents."
    parts = [f"# {str(fm.get('title') or '').strip() or 'Untitled'}"]
    desc = str(fm.get('description') or '').strip()
    if desc: parts.append(desc)
    if contents: parts.append(PAGE_CONTENTS)
    return '\n\n'.join(parts)


def _n_sections(nb: dict) -> int:
    "Number of level-2 headings in the markdown cells of `nb`."
    return sum(line.startswith('## ') for c in nb.get('cells', []) if c['cell_type'] == 'markdown'
               for line in _src(c).splitlines())


def split_directives(source: str) -> tuple[dict, str]:
    "Split the leading `#| key: value` / `#| key value` lines off a code cell: ({key: value}, rest)."
    lines = source.splitlines()
    dirs, i = {}, 0
    while i < len(lines):
        m = _DIRECTIVE_RE.match(lines[i])
        if m:
            text = m.group(1).strip()  # `key: value` (Quarto) or `key value...` (nbdev)
            key, val = text.split(':', 1) if re.match(r'^[\w-]+\s*:', text) else (text.split(None, 1) + [''])[:2]
            if key.strip(): dirs[key.strip()] = val.strip()
        elif lines[i].strip(): break
        i += 1
    return dirs, '\n'.join(lines[i:])


def directive_tags(dirs: dict) -> list[str]:
    "myst-nb cell tags equivalent to Quarto's `echo`/`output`/`include` directives."
    false = {'false', 'False'}
    tags = []
    if dirs.get('include') in false: tags.append('remove-cell')
    if dirs.get('echo') in false: tags.append('remove-input')
    if dirs.get('output') in false: tags.append('remove-output')
    return tags


# `[text](url){target="_blank" style="..."}` -> `[text](url)`: Quarto attributes after a link.
_LINK_ATTR_RE = re.compile(r'(\]\([^()\s]*(?:\([^()]*\))?[^()\s]*\))\{[^{}\n]*\}')


# nbdev's `[source](<git_url>/blob/...)` line of a show_doc output (after the Quarto attributes are dropped)
_SOURCE_LINK_RE = re.compile(r'^[ \t]*\[source\]\([^)]*\)(\{[^}\n]*\})?[ \t]*\n?', re.M)


# show_doc of a NamedTuple defined in a lesson shows `def Name(*args, **kwargs)`: its fields are what a reader needs.
_ARGS_KWARGS_RE = re.compile(r'```python\ndef (\w+)\(\n\s*\*args, \*\*kwargs\n\):\n```')


def find_class(name: str):
    "The class `name` exported by some module of the package, or None."
    import importlib, pkgutil
    try: import vbfa_lit
    except ImportError: return None
    for m in pkgutil.iter_modules(vbfa_lit.__path__):
        try: mod = importlib.import_module(f'vbfa_lit.{m.name}')
        except ImportError: continue
        cls = getattr(mod, name, None)
        if isinstance(cls, type): return cls
    return None


def namedtuple_block(cls) -> str:
    "A `class Name(NamedTuple):` code block with the fields as they are written in the source, comments included."
    import inspect
    try: body = inspect.getsource(cls).splitlines()[1:]
    except (OSError, TypeError): body = []
    fields = [line.strip() for line in body if re.match(r'\s+\w+\s*:', line)]
    if not fields: fields = [f'{f}: {getattr(t, "__name__", t)}' for f, t in cls.__annotations__.items()]
    return '```python\nclass ' + cls.__name__ + '(NamedTuple):\n' + '\n'.join('    ' + f for f in fields) + '\n```'


def namedtuple_fields(md: str, lookup=find_class) -> str:
    """Replace show_doc's `def Name(*args, **kwargs)` of a class without its own signature (a NamedTuple, an exception,
    a dict subclass) by what the class is: a NamedTuple's fields, otherwise `class Name(Base)`."""
    def sub(m):
        cls = lookup(m.group(1))
        if cls is None: return m.group(0)
        if issubclass(cls, tuple) and hasattr(cls, '_fields'): return namedtuple_block(cls)
        bases = ', '.join(b.__name__ for b in cls.__bases__ if b is not object)
        return '```python\nclass ' + cls.__name__ + (f'({bases})' if bases else '') + '\n```'
    return _ARGS_KWARGS_RE.sub(sub, md)


_NUMPYDOC_RE = re.compile(r'^(Parameters|Returns)[ \t]*\n[ \t]*-{3,}[ \t]*$', re.M)


def _wrap_default(line: str, width: int = 100) -> list[str]:
    "A long `name:type=(a, b, ...)` parameter line broken after the commas of its default, aligned under it."
    if len(line) <= width or '=(' not in line: return [line]
    start = line.index('=(') + 2
    parts = re.split(r'(?<=,) (?=[\'"])', line[start:])
    if len(parts) < 2: return [line]
    return [line[:start] + parts[0]] + [' ' * start + p for p in parts[1:]]


def numpydoc_signature(md: str) -> str:
    """For a docstring with numpydoc sections, the signature without nbdev's docments comments (the Parameters and
    Returns sections below say the same, in full), long tuple defaults broken after their commas."""
    if not _NUMPYDOC_RE.search(md): return md
    out, in_sig, after_close, done = [], False, False, False
    for line in md.split('\n'):
        if line.startswith('```') and not done:
            if in_sig: done = True
            in_sig = line.strip() == '```python' and not in_sig
            out.append(line); continue
        if in_sig:
            if after_close: continue                                       # the return comment's continuation
            if line.lstrip().startswith('#'): continue                       # a wrapped parameter comment
            if re.match(r'^\)\s*(->[^#]*)?:', line): after_close = True
            code = re.sub(r'\s+#.*$', '', line)
            out += _wrap_default(code); continue
        out.append(line)
    return '\n'.join(out)


def clean_show_doc_markdown(md: str) -> str:
    "Drop the leading `---` rule and the Quarto link attributes from `show_doc` markdown; numpydoc sections as markdown."
    md = re.sub(r'\A\s*---[ \t]*\n\s*', '', md)
    md = md.replace('__main__.', '')            # classes defined in the lesson itself: their public name only
    md = _SOURCE_LINK_RE.sub('', md)            # the code is in the cell above; the project has no public repository
    return numpydoc_markdown(sphinx_roles(numpydoc_signature(signature_comments(_LINK_ATTR_RE.sub(r'\1', md)))))


def signature_comments(md: str) -> str:
    "nbdev wraps a long return comment of a show_doc signature onto lines without `#`: put the `#` back."
    out, in_sig, after_close = [], False, False
    for line in md.split('\n'):
        if line.startswith('```'):
            in_sig, after_close = line.strip() == '```python' and not in_sig, False
        elif in_sig and after_close and line.strip() and not line.lstrip().startswith('#'):
            line = '# ' + line
        elif in_sig and re.match(r'^\)\s*(->.*)?:', line):
            after_close = True
        out.append(line)
    return '\n'.join(out)


_SECTIONS = ('Parameters', 'Other Parameters', 'Returns', 'Yields', 'Raises', 'Warns', 'Attributes', 'Examples',
             'References', 'See Also', 'Notes')
_ENTRY_SECTIONS = ('Parameters', 'Other Parameters', 'Returns', 'Yields', 'Raises', 'Warns', 'Attributes')
_HTML_TAGS = {'a', 'b', 'i', 'em', 'strong', 'code', 'pre', 'br', 'p', 'div', 'span', 'table', 'tr', 'td', 'th',
              'thead', 'tbody', 'img', 'sup', 'sub', 'details', 'summary', 'hr', 'ul', 'ol', 'li', 'small'}


def escape_angles(text: str) -> str:
    "Escape `<` that would open an unknown HTML tag (`<tau>`, `<x^2>`): markdown would swallow it. Code spans stay."
    parts = re.split(r'(``.*?``|`[^`]*`)', text)
    esc = lambda p: re.sub(r'<(?!/?(?:%s)\b)' % '|'.join(_HTML_TAGS), r'\\<', p)
    return ''.join(p if p.startswith('`') else esc(p) for p in parts)


_ROLE = r':(?:py:)?(?:func|class|meth|attr|data|mod|obj|exc):'
_ROLE_RE = re.compile(_ROLE + r'`~?([^`]+)`')
_LINKED_ROLE_RE = re.compile(_ROLE + r'(\[`[^`]+`\]\([^()\s]*\))')      # nbdev linked it: :func:[`x`](/p.html#x)
_MATH_ROLE_RE = re.compile(r':math:`([^`]+)`')


def sphinx_roles(md: str) -> str:
    "Sphinx roles in docstrings as markdown: :func:`name` -> `name`, :math:`x` -> $x$ (the lesson pages are not reST)."
    return _MATH_ROLE_RE.sub(r'$\1$', _ROLE_RE.sub(r'`\1`', _LINKED_ROLE_RE.sub(r'\1', md)))


def numpydoc_markdown(md: str) -> str:
    """numpydoc sections (`Parameters` over a dashed rule, ...) as markdown a reader can scan: a bold heading, one
    bullet per entry (name, type, description), doctest examples as a code block. Prose outside code keeps its
    angle brackets. Fenced code blocks (the signature) are left alone."""
    lines, out, section, i, fence = md.split('\n'), [], None, 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith('```'):
            fence = not fence; out.append(line); i += 1; continue
        if fence: out.append(line); i += 1; continue
        if (line.strip() in _SECTIONS and i + 1 < len(lines) and re.fullmatch(r'-{3,}', lines[i + 1].strip())):
            section = line.strip()
            out += ['', f'**{section}**', '']
            i += 2
            continue
        if section in _ENTRY_SECTIONS and line.strip() and not line.startswith(' '):
            name, _, typ = line.partition(' : ')
            desc, i = [], i + 1
            while i < len(lines) and lines[i].startswith(' '):
                desc.append(lines[i].strip()); i += 1
            entry = f"- **`{name.strip()}`**" + (f" ({escape_angles(typ.strip())})" if typ.strip() else '')
            out.append(entry + (': ' + escape_angles(' '.join(desc)) if desc else ''))
            continue
        if section == 'Examples' and line.startswith('>>>'):
            block = []
            while i < len(lines) and lines[i].strip(): block.append(lines[i]); i += 1
            out += ['```pycon', *block, '```']
            continue
        out.append(escape_angles(line))
        i += 1
    return '\n'.join(out)


_LINK_RE = re.compile(r'(\]\()([^()\s#]*)(#[^()\s]*)?(\))')
# nbdev links a name inside a double-backtick span (``elbo``), leaving `[`elbo`](/vbpca.html#elbo)` as literal code
_LINK_IN_CODE_RE = re.compile(r'`(\[`[A-Za-z0-9_.]+`\]\([^()\s]*\))`')
# nbdev's doc link to a private name ([`_tril_inv`](/linalg.html#_tril_inv)): the site documents public names only
_PRIVATE_DOC_LINK_RE = re.compile(r'\[(`_[A-Za-z0-9_.]*`)\]\([^()\s]*#_[A-Za-z0-9_.]*\)')


def _make_id(anchor: str) -> str:
    "The HTML id docutils gives a heading or show_doc rubric (`gamma_kl` -> `gamma-kl`)."
    from docutils.nodes import make_id
    return make_id(anchor)


def rewrite_links(md: str, pages: dict[str, str], site_urls: tuple[str, ...] = ()) -> str:
    """Point markdown links at the pages of the built site.

    `pages` maps both notebook stems (`00_notation`) and output stems (`notation`) to the page
    name (`notation`). `[x](00_notation.ipynb#a_b)`, `[x](notation.html#a_b)`, `[x](/notation.html)`
    and nbdev's doc links under one of `site_urls` (`https://host/pkg/notation.html#a_b`) become
    `[x](notation.html#a-b)`: a plain relative URL (conf.py sets `myst_all_links_external`) with
    the anchor as docutils writes ids. nbdev's doc links to private names (`_helper`), which no page
    documents, become plain code. Other links are left alone.
    """
    md = _PRIVATE_DOC_LINK_RE.sub(r'\1', md)
    md = _LINK_IN_CODE_RE.sub(r'\1', md)
    def sub(m):
        url, anchor = m.group(2), m.group(3) or ''
        for base in site_urls:
            if base and url.startswith(base.rstrip('/') + '/'): url = url[len(base.rstrip('/')) + 1:]; break
        if not url and anchor: return f'{m.group(1)}#{_make_id(anchor[1:])}{m.group(4)}'
        if re.match(r'^[a-z][a-z0-9+.-]*:', url, re.I): return m.group(0)
        p = PurePosixPath(url.lstrip('/'))
        if p.suffix not in ('.ipynb', '.html', '.md') or p.stem not in pages: return m.group(0)
        anchor = f'#{_make_id(anchor[1:])}' if len(anchor) > 1 else ''
        return f'{m.group(1)}{pages[p.stem]}.html{anchor}{m.group(4)}'
    return _LINK_RE.sub(sub, md)


def page_name(nb_path: str | Path, fm: dict | None) -> str:
    "Page stem for a notebook: its front matter's `output-file` stem, else the notebook stem."
    out = (fm or {}).get('output-file')
    return PurePosixPath(str(out)).stem if out else Path(nb_path).stem


def page_sort_key(nb_stem: str) -> tuple:
    "Navigation order: `index` first, then notebook names sorted (00_, 01_, 02_, 03_, 03a_, ...)."
    return (nb_stem != 'index', nb_stem)


def _is_show_doc_output(out: dict) -> bool:
    md = out.get('data', {}).get('text/markdown')
    return md is not None and _src({'source': md}).lstrip().startswith('---')


def convert_notebook(nb: dict, pages: dict[str, str], site_urls: tuple[str, ...] = ()) -> dict:
    "A copy of processed notebook `nb` that Sphinx/myst-nb renders like nbdev's Quarto site."
    nb = copy.deepcopy(nb)
    contents = _n_sections(nb) >= 3
    cells = []
    for cell in nb.get('cells', []):
        src = _src(cell)
        if cell['cell_type'] == 'raw':
            fm = parse_front_matter(src)
            if fm is not None:
                cells.append({'cell_type': 'markdown', 'id': 'page-title', 'metadata': {}, 'source': title_markdown(fm, contents)})
                continue
        if cell['cell_type'] == 'markdown':
            cell['source'] = rewrite_links(src, pages, site_urls)
        if cell['cell_type'] == 'code':
            dirs, body = split_directives(src)
            cell['source'] = body
            tags = cell.setdefault('metadata', {}).setdefault('tags', [])
            tags.extend(t for t in directive_tags(dirs) if t not in tags)
            if not tags: del cell['metadata']['tags']
            for out in cell.get('outputs', []):
                if _is_show_doc_output(out):
                    md = namedtuple_fields(clean_show_doc_markdown(_src({'source': out['data']['text/markdown']})))
                    out['data']['text/markdown'] = rewrite_links(md, pages, site_urls)
        cells.append(cell)
    if nb.get('nbformat', 4) == 4 and nb.get('nbformat_minor', 0) >= 5:  # ids are required
        for i, c in enumerate(cells): c.setdefault('id', f'cell-{i}')
    nb['cells'] = cells
    return nb


def toctree_markdown(docs: list[str]) -> str:
    "A hidden MyST toctree listing `docs` in order (the book theme shows it as the left navigation)."
    return '```{toctree}\n:hidden:\n:maxdepth: 1\n\n' + '\n'.join(docs) + '\n```'


def _front_matter(nb: dict) -> dict | None:
    for c in nb.get('cells', []):
        if c['cell_type'] == 'raw':
            fm = parse_front_matter(_src(c))
            if fm is not None: return fm
    return None


_SKIP_ASSETS = {'_quarto.yml', 'nbdev.yml', 'styles.css', 'sidebar.yml', '_brand.yml'}


def convert_tree(proc: Path, dest: Path, extra_docs: list[str] = (), site_urls: tuple[str, ...] = ()) -> list[dict]:
    """Convert every notebook in `proc` into `dest` and copy the other assets (images, data).

    The `index` page gets a hidden toctree of all pages (in notebook-name order) followed by
    `extra_docs` (e.g. the API reference). Returns one dict per page in navigation order:
    `{'notebook': '00_notation', 'page': 'notation', 'title': 'Notation'}`. Links under one of
    `site_urls` (the published site, where nbdev points symbol links) become local links.
    """
    proc, dest = Path(proc), Path(dest)
    if dest.exists(): shutil.rmtree(dest)
    dest.mkdir(parents=True)
    nbs = sorted((p for p in proc.rglob('*.ipynb') if not any(s.startswith('.') for s in p.parts)),
                 key=lambda p: page_sort_key(p.relative_to(proc).with_suffix('').as_posix()))
    loaded = {p: json.loads(p.read_text(encoding='utf-8')) for p in nbs}
    fms = {p: _front_matter(nb) or {} for p, nb in loaded.items()}
    names = {p: (p.relative_to(proc).parent / page_name(p, fms[p])).as_posix() for p in nbs}
    seen = list(names.values())
    dupes = sorted({n for n in seen if seen.count(n) > 1})
    if dupes: raise ValueError(f'two notebooks map to the same page name(s): {dupes}')
    if 'index' not in seen: raise ValueError(f'no notebook in {proc} produces the index page')
    pages = {}
    for p in nbs: pages[p.stem] = pages[PurePosixPath(names[p]).name] = PurePosixPath(names[p]).name
    for p in nbs:
        nb = convert_notebook(loaded[p], pages, site_urls)
        if names[p] == 'index':
            toc = [names[q] for q in nbs if names[q] != 'index'] + list(extra_docs)
            nb['cells'].append({'cell_type': 'markdown', 'id': 'page-toctree', 'metadata': {},
                               'source': toctree_markdown(toc)})
        out = dest / f'{names[p]}.ipynb'
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    for f in proc.rglob('*'):
        r = f.relative_to(proc)
        if (f.is_dir() or f.suffix == '.ipynb' or f.name in _SKIP_ASSETS
                or any(s.startswith('.') for s in r.parts)): continue
        (dest / r).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest / r)
    return [{'notebook': p.relative_to(proc).with_suffix('').as_posix(), 'page': names[p],
             'title': str(fms[p].get('title') or names[p])} for p in nbs]
