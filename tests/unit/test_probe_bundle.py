"""The probe's bundle (remote/bundle.py) runs on hosts that have only Python 3.9 and its standard library.

Its modules are sent as source and made importable in memory on the far
side, in the order listed: each one's headspace imports must be in the
bundle and come before it, everything else must be the standard library,
and the source must be Python 3.9 (syntax, and none of the newer standard
library names this project uses elsewhere).  A new import here breaks every
remote host, and no local test would notice.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from headspace_tui.remote.bundle import MIN_PYTHON, MODULES, PACKAGES

# Standard-library names newer than 3.9 (what a 3.11 habit reaches for first).
NEWER_THAN_39 = {
    "StrEnum": "enum.StrEnum is 3.11",
    "tomllib": "tomllib is 3.11",
    "Self": "typing.Self is 3.11",
    "TaskGroup": "asyncio.TaskGroup is 3.11",
    "ExceptionGroup": "ExceptionGroup is 3.11",
    "UTC": "datetime.UTC is 3.11",
    "TypeAlias": "typing.TypeAlias is 3.10",
    "ParamSpec": "typing.ParamSpec is 3.10",
    "pairwise": "itertools.pairwise is 3.10",
    "aiter": "aiter is 3.10",
    "anext": "anext is 3.10",
}
NEWER_KEYWORDS = {"slots": "dataclass(slots=) is 3.10", "kw_only": "dataclass(kw_only=) is 3.10", "strict": "zip(strict=) is 3.10"}


def source(name: str) -> tuple[str, Path]:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    path = Path(spec.origin)
    return path.read_text(encoding="utf-8"), path


def absolute(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.rsplit(".", node.level)[0]
    return f"{package}.{node.module}" if node.module else package


# Imports inside a function run only when it is called: these few are not
# the standard library, and each says why the probe is safe with it.
IN_FUNCTIONS = {
    ("headspace_tui.shared.proctree", "psutil"): "only where there is no /proc (macOS, BSD): such a host needs psutil for its python3 (README)",
    ("headspace_tui.detect.claude.process", "psutil"): "only where there is no /proc, as above",
}


def top_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run at import: the module's own, and those in its top-level if/try blocks."""
    found: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, (ast.If, ast.Try)):
            todo += [*node.body, *node.orelse, *getattr(node, "finalbody", []), *(h for handler in getattr(node, "handlers", []) for h in handler.body)]
    return found


def imports(name: str, *, at_import: bool = True) -> set[str]:
    """What ``name`` imports at import time (``at_import``), or anywhere in it."""
    tree = ast.parse(source(name)[0])
    found: set[str] = set()
    for node in top_level(tree) if at_import else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(name, node)
            # "from . import x" may name a module: count it as base.x when it is one.
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return found


@pytest.mark.parametrize("name", MODULES)
def test_a_bundled_module_imports_only_the_standard_library_and_earlier_bundled_modules(name):
    earlier = set(MODULES[: MODULES.index(name)])
    for imported in imports(name):
        top = imported.split(".")[0]
        if top == "headspace_tui":
            assert imported in earlier or imported in PACKAGES, f"{name} imports {imported}, which is not bundled before it"
        else:
            assert top == "__future__" or top in sys.stdlib_module_names, f"{name} imports {imported} at import: not the standard library"


@pytest.mark.parametrize("name", MODULES)
def test_what_a_bundled_function_imports_is_bundled_standard_or_explained(name):
    for imported in imports(name, at_import=False) - imports(name):
        top = imported.split(".")[0]
        if top == "headspace_tui":
            assert imported in MODULES or imported in PACKAGES, f"{name} imports {imported}, which is not bundled"
        elif top not in sys.stdlib_module_names:
            assert (name, top) in IN_FUNCTIONS, f"{name} imports {imported} in a function: not the standard library, and not explained"


@pytest.mark.parametrize("name", MODULES)
def test_a_bundled_module_is_python_39(name):
    text, path = source(name)
    tree = ast.parse(text, filename=str(path), feature_version=MIN_PYTHON)  # a SyntaxError names the line
    newer = []
    for node in ast.walk(tree):
        word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.alias):
            word = node.name.split(".")[-1]
        if word in NEWER_THAN_39:
            newer.append(f"line {node.lineno}: {NEWER_THAN_39[word]}")
        if isinstance(node, ast.keyword) and node.arg in NEWER_KEYWORDS:
            newer.append(f"line {node.lineno}: {NEWER_KEYWORDS[node.arg]}")
        if isinstance(node, ast.Match):
            newer.append(f"line {node.lineno}: match is 3.10")
    assert not newer, f"{name}: " + "; ".join(newer)


def test_every_bundled_package_is_declared():
    for name in MODULES:
        assert name.rpartition(".")[0] in PACKAGES, name
