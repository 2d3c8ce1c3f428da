"""No import circle in headspace, type-only imports and imports inside functions included.

The main screen's mixins cast up into the app and imported it for the cast's
type (``if TYPE_CHECKING: from ..main import HeadspaceApp``), and input mode
and the typing mixin imported each other: circles that the type checker
hides and that made each part need the whole.  The parts now talk up through
messages and are called down into, so the app's modules form no circle; this
reads every import statement of headspace_tui/app (inside ``if
TYPE_CHECKING`` and functions too) and fails on a circle.  The same over the
whole package: the remote host and its answer channel imported each other
(inside functions), and so did the guarded send and the multi-select steps
(``keys`` and ``multi``: their shared ground is ``answering/pane_io.py`` now).
"""

from __future__ import annotations

import ast
from pathlib import Path

import headspace_tui
import headspace_tui.app

PACKAGE = Path(headspace_tui.__file__).parent
APP = Path(headspace_tui.app.__file__).parent


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The ``modules`` ``path`` imports (``from .x import y`` counts ``x``, and ``x.y`` when that is a module)."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            candidates = {module} | {f"{module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            candidates = {alias.name for alias in node.names}
        else:
            continue
        found |= {c for c in candidates if c in modules and c != name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                each = stack.pop()
                group.append(each)
                if each == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_circles_are_found() -> None:
    """The check finds a circle (so that it can fail)."""
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_app_has_no_import_circle() -> None:
    paths = sorted(APP.rglob("*.py"))
    modules = {_name(p) for p in paths}
    graph = {_name(p): imports_of(p, modules) for p in paths}
    assert circles(graph) == []


def test_headspace_has_no_import_circle() -> None:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_name(p) for p in paths}
    graph = {_name(p): imports_of(p, modules) for p in paths}
    assert circles(graph) == []
