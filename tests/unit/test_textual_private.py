"""Textual's private API is used in one module of the app, each use with its reason.

A Textual upgrade breaks private names first (``App._driver``,
``App._keymap``, ``DataTable._row_render_cache``, ``Screen._binding_chain``
...).  Where Textual has a public call the app uses it; what has none is
``headspace_tui/app/textual_private.py``: small functions, each saying why,
and the private hooks the app must override listed there by name
(``OVERRIDES``) with the reason.  So an upgrade is checked in one place.

This reads every other module of ``headspace_tui/app`` and fails on:

* an attribute whose name is a private name of a Textual class (one
  leading underscore), whatever it is read from (``self.app._keymap``,
  ``toasts[0]._notification``);
* a method defined with such a name (an override of a private hook, or a
  name that shadows Textual's own) unless ``OVERRIDES`` lists it;
* an import from a private Textual module (``textual.widgets._toast``).

The private names are read from Textual itself: every class the app's
modules import from Textual, the classes it is built from, and a few the
app reaches through others (a toast, a rack, a binding map); each class's
members and the ``self._name`` attributes its own code assigns.  So a name
Textual adds in an upgrade is caught without touching this test.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from functools import cache
from pathlib import Path

import textual
import textual.app
import textual.binding
import textual.dom
import textual.message_pump
import textual.screen
import textual.widget
import textual.widgets
from textual.widgets._toast import Toast, ToastRack  # this test may: it names what the app must not

import headspace_tui.app

APP = Path(headspace_tui.app.__file__).parent
PRIVATE_MODULE = APP / "textual_private.py"
# Reached through others, never imported by name by the app's modules (outside textual_private.py).
ALSO = (
    textual.app.App,
    textual.screen.Screen,
    textual.screen.ModalScreen,
    textual.widget.Widget,
    textual.dom.DOMNode,
    textual.message_pump.MessagePump,
    textual.widgets.DataTable,
    textual.widgets.Static,
    textual.binding.BindingsMap,
    Toast,
    ToastRack,
)


def _modules() -> list[Path]:
    return sorted(p for p in APP.rglob("*.py") if p != PRIVATE_MODULE)


def _imported_textual_classes() -> set[type]:
    """Every class an app module imports from Textual (``from textual.x import Y``)."""
    found: set[type] = set()
    for path in [*_modules(), PRIVATE_MODULE]:
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "textual":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    value = getattr(module, alias.name, None)
                    if isinstance(value, type):
                        found.add(value)
    return found


@cache
def _own_private_attributes(cls: type) -> frozenset[str]:
    """The ``self._name`` attributes a Textual class's own code assigns (instance attributes ``dir`` does not see).

    Kept per class: reading a class's source parses its whole module, and
    every app class built on the same Textual bases asks again.
    """
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return frozenset()
    names = set()
    for node in ast.walk(ast.parse(inspect.cleandoc("\n" + source) if source[:1].isspace() else source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return frozenset(names)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@cache
def textual_private_names() -> frozenset[str]:
    """Every private name (one leading underscore) of the Textual classes the app uses, and of the classes they are built from."""
    names: set[str] = set()
    for cls in {*_imported_textual_classes(), *ALSO}:
        for base in cls.__mro__:
            if not base.__module__.startswith("textual"):
                continue
            names.update(name for name in vars(base) if _private(name))
            names.update(name for name in _own_private_attributes(base) if _private(name))
    return frozenset(names)


def _listed_overrides() -> set[str]:
    """The names in textual_private.OVERRIDES (hooks the app must override in its own classes)."""
    if not PRIVATE_MODULE.exists():
        return set()
    module = importlib.import_module("headspace_tui.app.textual_private")
    return set(getattr(module, "OVERRIDES", {}))


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(APP.parent.parent).with_suffix("").parts)


def _class_private_names(module: object, name: str) -> frozenset[str]:
    """The private names of the Textual classes a class of the app is built from (none for a class that is not Textual's)."""
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        return frozenset()
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith("textual"):
            names.update(n for n in vars(base) if _private(n))
            names.update(n for n in _own_private_attributes(base) if _private(n))
    return frozenset(names)


def private_uses(path: Path, names: frozenset[str], overrides: set[str]) -> list[str]:
    """Where ``path`` uses Textual's private API: "line: what".

    ``self._name`` and ``def _name`` in a class count when a Textual class it
    is built from has that name (a class of the app's own, such as a Rich
    renderable, has its own private names); any other ``x._name`` counts when
    any Textual class has it, except on a module (``os._exit``); so does a
    string naming one (``getattr(node, "_closing")``, a list of cache names
    set by ``setattr``).
    """
    tree = ast.parse(path.read_text())
    module = importlib.import_module(_module_name(path))
    modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    found: list[str] = []
    seen: set[int] = set()

    def check_attribute(node: ast.Attribute, own: frozenset[str] | None) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.attr in overrides and _is_super_call(node):
            return  # an override listed in textual_private calling Textual's own
        if isinstance(node.value, ast.Name) and node.value.id == "self" and own is not None:
            if node.attr in own:
                found.append(f"{node.lineno}: self.{node.attr}")
        elif isinstance(node.value, ast.Name) and node.value.id in modules:
            return
        elif node.attr in names:
            found.append(f"{node.lineno}: .{node.attr}")

    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        own = _class_private_names(module, cls.name)
        for node in ast.walk(cls):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in cls.body and node.name in own and node.name not in overrides:
                found.append(f"{node.lineno}: def {node.name}")
            elif isinstance(node, ast.Attribute):
                check_attribute(node, own)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            check_attribute(node, None)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (node.value in names or (node.value.startswith("__") and not node.value.endswith("__") and node.value.isidentifier())):
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "textual":
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def _is_super_call(node: ast.Attribute) -> bool:
    return isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "super"


def test_the_names_are_read_from_textual() -> None:
    """The names this test looks for are Textual's (so that it can fail): the ones the app once used among them."""
    names = textual_private_names()
    assert {"_driver", "_keymap", "_binding_chain", "_modal_binding_chain", "_bindings", "_unnotify", "_notification", "_row_render_cache", "_on_click", "_handle_exception"} <= names


def test_only_textual_private_uses_textual_private_api() -> None:
    names = textual_private_names()
    overrides = _listed_overrides()
    found = {str(path.relative_to(APP)): uses for path in _modules() if (uses := private_uses(path, names, overrides))}
    assert found == {}, f"Textual's private API outside textual_private.py (move it there, with its reason): {found}"


def test_every_listed_override_is_private_textual_api() -> None:
    """``OVERRIDES`` lists only private hooks of Textual's (not a way to let any name through)."""
    assert PRIVATE_MODULE.exists()
    assert _listed_overrides() <= textual_private_names()
