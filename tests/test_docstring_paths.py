"""Every project module path that a docstring, comment or doc names exists (none points at a module that moved).

What is checked, and how (nothing is imported, so this runs in a few seconds without JAX):

- Where: the docstrings (module, class, function) and ``#`` comments of every ``.py`` file under
  ``runtime/``, ``gateway/``, ``pallas_kernels/``, ``tools/``, ``scripts/`` and ``tests/``, and all of README.md,
  ``docs/**/*.md`` and ``data/**/README.md``. Code itself is not scanned: there a dotted name is as often an
  attribute of a variable called ``gateway``, and an import that names a missing module fails on its own.
- Dotted names: ``DOTTED`` below, a top-level package name followed by one or more ``.identifier``, e.g.
  ``runtime.core.kv_sizing.blocks_for_budget`` or the target of ``python -m gateway.advise``. It must not be
  preceded by a word character, ``.``, ``/`` or ``-`` (so ``my_runtime.api``, ``configs/gateway.yaml`` and
  ``http://gateway.local`` do not count) nor followed by ``/``, ``-``, ``@`` or ``:<digit>`` (host names).
  Each part starts with a letter or ``_``, so version numbers stop the match and a sentence's full stop is
  left out, and a name with a part that is a file extension (``gateway.yaml``, ``gateway.yaml.example``) is
  a file name, not a module.
- A dotted name resolves when its longest module prefix is a file (``x/y.py``, ``x/y/__init__.py``, or a
  directory: a namespace package) and each remaining part is a name that the module defines at top level
  (``def``, ``class``, assignment, import; inside ``if``/``try`` too), followed through ``from .m import X``
  re-exports; one more part may name a member of a class (a method, a class-level or ``self.`` attribute).
- File paths: ``FILE_PATH`` below, ``runtime/quant/kv.py``-style paths under a project directory ending in
  a source or doc extension, must exist. Globs and placeholders (``test_*.py``, ``<name>.py``) are skipped.

The failure lists every unresolved name as ``file:line: name``.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "gateway", "pallas_kernels", "tools", "scripts", "tests")
DOTTED = re.compile(r"(?<![\w./-])(?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+(?![\w/@-]|:\d)")
FILE_DIRS = (*PACKAGES, "docs", "configs")
FILE_PATH = re.compile(
    r"(?<![\w./-])(?:" + "|".join(FILE_DIRS) + r")/[\w./-]*\.(?:py|md|yaml|yml|sh|toml)(?![\w*<>{}/-])"
)
EXTENSIONS = {"py", "md", "yaml", "yml", "json", "jsonl", "toml", "txt", "log", "sh", "csv", "html", "png", "svg"}
EXTENSIONS |= {"gguf", "onnx", "npz", "npy", "pt", "bin", "safetensors", "lock", "db", "cfg", "ini", "js", "css"}

# Names known to be stale in files a change may not touch yet, as "path:line: name" (empty: a stale name is
# fixed where it stands; an entry here is a debt with a line number, so moving lines fails it).
EXPECTED_STALE: set[str] = set()


@dataclass(frozen=True)
class Stale:
    path: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}"


# --- what a module defines ---------------------------------------------------------------------------------


def module_file(dotted: str, root: Path = ROOT) -> Path | None:
    """The file (or namespace-package directory) of a module path, or None."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() else None


@dataclass
class Namespace:
    names: set[str]
    classes: dict[str, set[str]]  # class name -> its members
    reexports: dict[str, tuple[str, str]]  # name -> (module, name) it was imported from


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [name for elt in node.elts for name in _targets(elt)]
    return []


def _class_members(cls: ast.ClassDef) -> set[str]:
    members = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(node.name)
        elif isinstance(node, ast.Assign):
            members.update(name for target in node.targets for name in _targets(target))
        elif isinstance(node, ast.AnnAssign):
            members.update(_targets(node.target))
    for node in ast.walk(cls):  # self.x = ... in any method
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                members.add(node.attr)
    return members


def _absolute(path: Path, node: ast.ImportFrom, root: Path) -> str:
    """The absolute module an ``from ... import`` in ``path`` reads from."""
    if not node.level:
        return node.module or ""
    package = path.parent.relative_to(root).parts
    package = package[: len(package) - (node.level - 1)]
    return ".".join((*package, *([node.module] if node.module else [])))


@functools.cache
def namespace(path: Path, root: Path = ROOT) -> Namespace:
    """Top-level names of a module file, from its AST (statements under if/try/with count as top level)."""
    ns = Namespace(set(), {}, {})
    if path.is_dir():
        return ns
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            ns.names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            ns.names.add(node.name)
            ns.classes[node.name] = _class_members(node)
        elif isinstance(node, ast.Assign):
            ns.names.update(name for target in node.targets for name in _targets(target))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            ns.names.update(_targets(node.target))
        elif isinstance(node, ast.Import):
            ns.names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(path, node, root)
            for alias in node.names:
                ns.names.add(alias.asname or alias.name)
                ns.reexports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", []))
            pending.extend(getattr(node, "finalbody", []))
            pending.extend(stmt for handler in getattr(node, "handlers", []) for stmt in handler.body)
    return ns


def resolves(dotted: str, root: Path = ROOT) -> bool:
    """Whether ``dotted`` is a module path, optionally followed by names defined in that module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]), root)
        if path is not None:
            return _attributes_resolve(path, parts[cut:], root, depth=0)
    return False


def _attributes_resolve(path: Path, attrs: list[str], root: Path, depth: int) -> bool:
    if not attrs:
        return True
    ns = namespace(path, root)
    head, rest = attrs[0], attrs[1:]
    if head in ns.reexports and depth < 5:  # follow `from .spec import StructuredSpec` to where it is defined
        source, name = ns.reexports[head]
        if source.split(".")[0] in PACKAGES:
            sub = module_file(f"{source}.{name}", root)  # `from . import spec` imports a module
            if sub is not None:
                return _attributes_resolve(sub, rest, root, depth + 1)
            origin = module_file(source, root)
            if origin is not None:
                return _attributes_resolve(origin, [name, *rest], root, depth + 1)
    if head not in ns.names:
        return False
    if not rest:
        return True
    return head in ns.classes and len(rest) == 1 and rest[0] in ns.classes[head]


# --- where names are mentioned -----------------------------------------------------------------------------


def _docstring_owners(body: list[ast.stmt]):
    """Class and function nodes at any depth, walking statements only (a full ast.walk costs seconds here)."""
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _docstring_owners(getattr(node, field, []))


def python_prose(source: str) -> list[tuple[int, str]]:
    """(line number, text) of every docstring line and comment of a Python source that mentions a name."""
    lines = source.splitlines()
    if not any(DOTTED.search(line) or FILE_PATH.search(line) for line in lines):
        return []
    prose: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in (tree, *_docstring_owners(tree.body)):
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            prose.extend((n, lines[n - 1]) for n in range(first.lineno, (first.end_lineno or first.lineno) + 1))
    # Tokenizing is the slow part: only when a name follows a "#" on some line.
    if any("#" in line and _after_hash(line) for line in lines):
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                prose.append((token.start[0], token.string))
    return prose


def _after_hash(line: str) -> bool:
    tail = line[line.index("#") :]
    return bool(DOTTED.search(tail) or FILE_PATH.search(tail))


def stale_names(rel: str, prose: list[tuple[int, str]], root: Path = ROOT) -> list[Stale]:
    """The dotted names and file paths in ``prose`` that do not resolve under ``root``."""
    found = []
    for line_no, text in prose:
        for match in DOTTED.finditer(text):
            name = match.group()
            if EXTENSIONS.intersection(name.split(".")[1:]):  # gateway.yaml, gateway.yaml.example
                continue
            if not resolves(name, root):
                found.append(Stale(rel, line_no, name))
        for match in FILE_PATH.finditer(text):
            if not (root / match.group()).exists():
                found.append(Stale(rel, line_no, match.group()))
    return sorted(set(found), key=lambda s: (s.path, s.line, s.name))


def scanned_files(root: Path = ROOT) -> list[Path]:
    files = [p for package in PACKAGES for p in (root / package).rglob("*.py")]
    files = [p for p in files if "__pycache__" not in p.parts]
    files += [root / "README.md", *(root / "docs").rglob("*.md"), *(root / "data").rglob("README.md")]
    return sorted(p for p in files if p.is_file())


def scan(root: Path = ROOT, files: list[Path] | None = None) -> list[Stale]:
    stale = []
    for path in scanned_files(root) if files is None else files:
        text = path.read_text(encoding="utf-8")
        prose = python_prose(text) if path.suffix == ".py" else list(enumerate(text.splitlines(), start=1))
        stale += stale_names(str(path.relative_to(root)), prose, root)
    return stale


# --- tests -------------------------------------------------------------------------------------------------


def test_every_dotted_name_in_docstrings_and_docs_resolves():
    stale = [s for s in scan() if str(s) not in EXPECTED_STALE]
    if stale:
        pytest.fail("names of modules or attributes that do not exist:\n" + "\n".join(map(str, stale)), pytrace=False)


def test_the_checker_reports_a_planted_stale_name():
    planted = (
        '"""Sizes come from runtime.core.kv_sizing.blocks_for_budget, the cache from gateway.cache.verify.\n\n'
        "Moved: runtime.no_such_module and gateway.cache.verify.NoSuchThing; see runtime/quant/gone.py.\n"
        '"""\n\n\n'
        "def f(gateway):\n"
        '    """Checks with gateway.cache.verify.Verifier.offer."""\n'
        "    return gateway.url  # code is not prose: only this comment's gateway.usage_sync counts\n"
    )
    assert [str(s) for s in stale_names("runtime/planted.py", python_prose(planted))] == [
        "runtime/planted.py:3: gateway.cache.verify.NoSuchThing",
        "runtime/planted.py:3: runtime.no_such_module",
        "runtime/planted.py:3: runtime/quant/gone.py",
        "runtime/planted.py:9: gateway.usage_sync",
    ]
    doc = [
        (1, "Run `python -m runtime.replay` or `python -m runtime.no_replay`; `runtime.api.EngineConfig.kv_dtype`."),
        (2, "Not names: jax 0.10.2, my_runtime.api, http://gateway.local:8000/v1, configs/gateway.yaml"),
        (3, "Globs and placeholders: tests/test_*.py, runtime/<room>/x.py, gateway.yaml.example"),
    ]
    assert [str(s) for s in stale_names("docs/PLANTED.md", doc)] == ["docs/PLANTED.md:1: runtime.no_replay"]
