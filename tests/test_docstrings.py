"""One docstring dialect for the whole package: numpydoc, read the same by `help()` and the site's API page.

Every public function, class and method of every module (`__all__`, plus the public methods a class defines) has
a docstring that numpydoc's parser (fastcore's copy of `numpydoc.docscrape`) reads without a warning, with a
`Parameters` section naming exactly the parameters of its signature (a class: of its constructor; a record type
such as a NamedTuple may list them, its fields, under `Attributes` instead), and no raw Sphinx role (`:func:`, `:math:`, ...) that
`help()` would print as is. The `Examples` sections are doctested by `test_docstring_examples_run`.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
import warnings

import pytest
from fastcore.docscrape import NumpyDocString

import vbfa_lit

MODULES = sorted(m.name for m in pkgutil.iter_modules(vbfa_lit.__path__) if not m.name.startswith('_'))
# modules whose public docstrings are not numpydoc yet (strict xfail: the mark must go once they are)
PENDING = set()
ROLE = re.compile(r':(?:py:)?(?:func|class|meth|attr|data|mod|obj|exc|math|ref|doc):`')


def public_callables(mod) -> list[tuple[str, object]]:
    "(qualified name, object) of the public functions and classes of `mod` and the public methods they define."
    out = []
    for name in getattr(mod, '__all__', []):
        obj = getattr(mod, name)
        if getattr(obj, '__module__', None) != mod.__name__: continue    # re-exported: checked where it is defined
        if inspect.isfunction(obj): out.append((name, obj))
        elif inspect.isclass(obj):
            out.append((name, obj))
            for k, v in vars(obj).items():
                if k.startswith('_'): continue
                f = v.__func__ if isinstance(v, (classmethod, staticmethod)) else v
                if inspect.isfunction(f): out.append((f'{name}.{k}', f))
    return out


def signature_names(obj) -> list[str]:
    "The parameter names a docstring must list (`self`/`cls` left out; `*args` as `args`)."
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return []
    return [p for p in sig.parameters if p not in ('self', 'cls') and not p.startswith('_')]  # `_x`: internal


def section_names(doc: str, section: str) -> list[str]:
    "The entry names of a numpydoc section (`name : type` lines at the section's indentation)."
    m = re.search(rf'^{section}\n-{{3,}}\n(.*?)(?=^\S[^\n]*\n-{{3,}}$|\Z)', doc, re.M | re.S)
    return [re.split(r'\s*:', line)[0].strip() for line in (m.group(1).splitlines() if m else [])
            if line.strip() and not line.startswith(' ')]


def docstring_problems(name: str, obj) -> list[str]:
    "What is wrong with the docstring of `obj` (empty when it is a complete numpydoc docstring)."
    doc = inspect.getdoc(obj) if not inspect.isclass(obj) else (obj.__doc__ and inspect.cleandoc(obj.__doc__))
    if not doc: return [f'{name}: no docstring']
    out = []
    m = ROLE.search(doc)
    if m: out.append(f'{name}: a raw Sphinx role {m.group(0)!r} (help() prints it as is)')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        try: parsed = NumpyDocString(doc)
        except Exception as e: return out + [f'{name}: numpydoc cannot read it: {e}']
    if inspect.isclass(obj) and issubclass(obj, BaseException): return out
    want = signature_names(obj)
    if not want: return out
    got = [n.strip().lstrip('*') for g in parsed['Parameters'] for n in g.split(',')]   # `x, y : float`: both
    if inspect.isclass(obj) and not got: got = section_names(doc, 'Attributes')  # a record: its fields
    missing, extra = [w for w in want if w not in got], [g for g in got if g not in want]
    if missing: out.append(f'{name}: parameters not in its Parameters section: {missing}')
    if extra: out.append(f'{name}: Parameters section names what the signature does not have: {extra}')
    return out


@pytest.mark.parametrize('module', [pytest.param(m, marks=pytest.mark.xfail(
    reason='vbpca: the sweep functions are numpydoc; 22 other public names (observed, Posterior, elbo, fit_vbfa, ...) still carry inline comments', strict=True)) if m in PENDING else m for m in MODULES])
def test_every_public_callable_has_a_numpydoc_docstring(module):
    mod = importlib.import_module(f'vbfa_lit.{module}')
    items = public_callables(mod)
    assert items or not getattr(mod, '__all__', None), f'vbfa_lit.{module}: nothing public found'
    problems = [p for name, obj in items for p in docstring_problems(f'{module}.{name}', obj)]
    assert not problems, '\n'.join(problems)


def test_the_check_reports_what_it_should():
    "The checker itself: each fault it looks for is reported, a complete docstring passes."
    def good(x, y=1):
        """Add.

        Parameters
        ----------
        x : ndarray of shape (n,)
            Values.
        y : int, default 1
            Offset.
        """
    def comments(x,  # (n,) values
                 y=1):
        "Add."
    def role(x):
        """See :func:`good` and :math:`x^2`.

        Parameters
        ----------
        x : float
        """
    def extra(x):
        """Add.

        Parameters
        ----------
        x : float
        z : float
        """
    assert docstring_problems('good', good) == []
    assert 'parameters not in its Parameters section' in docstring_problems('c', comments)[0]
    assert 'raw Sphinx role' in docstring_problems('r', role)[0]
    assert 'does not have' in docstring_problems('e', extra)[0]


def examples_of(module: str) -> list[doctest.DocTest]:
    mod = importlib.import_module(f'vbfa_lit.{module}')
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(mod, f'vbfa_lit.{module}', globs={}) if t.examples]


def test_docstrings_have_examples_to_run():
    "The doctest below runs something: the package's docstrings carry Examples sections."
    assert sum(len(examples_of(m)) for m in MODULES) >= 10


@pytest.mark.parametrize('module', MODULES)
def test_docstring_examples_run(module, tmp_path, monkeypatch):
    """Every `>>>` example in the module's docstrings runs and prints what it shows (numbers to the digits shown,
    `...` for what varies). Each docstring starts from the module's names (public and exported plumbing, not underscored ones) and
    nothing else: an example imports NumPy (or anything else it uses) itself."""
    pytest.importorskip('matplotlib')
    import matplotlib
    matplotlib.use('Agg')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path))     # never the user's cache
    mod = importlib.import_module(f'vbfa_lit.{module}')
    tests = examples_of(module)
    if not tests: pytest.skip(f'vbfa_lit.{module} has no docstring examples')
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for t in tests:
            t.globs = {k: v for k, v in vars(mod).items() if not k.startswith('_')}   # public and exported plumbing
            runner.run(t, out=out.append)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, ''.join(out)
