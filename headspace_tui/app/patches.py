"""The app's three process-wide patches of Textual's internals: what each relies on, whether it applied.

Each patch (in textual_private.py, with its reason) replaces a method of a
Textual class for the whole process.  It is written against the code of
the Textual that pyproject pins (``PINNED``); here each one names the
definitions it relies on, with a fingerprint of their source as checked,
and says whether it is in effect.  ``headspace doctor`` applies them (in
its own process, as the app does) and says of each: applied, or why not;
and whether the installed Textual is the one they were checked against.
tests/unit/test_private_patches.py fails when the fingerprints or the
behaviour the patches assume change: an upgrade is a decision, checked
here.

This module imports no Textual until asked (``check``, ``apply_all``), so
doctor can import it cheaply.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PINNED = {"textual": "8.2.8", "rich": "15.0.0"}  # pyproject's exact pins (a test keeps the two equal)


@dataclass(frozen=True)
class Patch:
    name: str
    what: str  # what it does, in a few words
    relies_on: tuple[tuple[str, str, str], ...]  # (module, qualified name, fingerprint of its source in the pinned Textual)
    apply: Callable[[], None]
    applied: Callable[[], bool]


def _private() -> object:
    from . import textual_private

    return textual_private


def _flag(module: str, qualname: str, flag: str) -> Callable[[], bool]:
    """Whether the method named is the patch's own (which marks itself with ``flag``)."""

    def applied() -> bool:
        owner: object = importlib.import_module(module)
        for part in qualname.split("."):
            owner = getattr(owner, part, None)
        return bool(getattr(owner, flag, False))

    return applied


PATCHES = (
    Patch(
        "styles cache",
        "StylesCache.get_inner_outer cached on its two colours, not on each widget's StylesCache",
        (("textual._styles_cache", "StylesCache.get_inner_outer", "2ba0aa0fae0502f8"),),
        lambda: _private().unpin_styles_caches(),  # type: ignore[attr-defined]
        _flag("textual._styles_cache", "StylesCache.get_inner_outer", "headspace_unpinned"),
    ),
    Patch(
        "strips",
        "a Strip that is its own crop or division is not kept in its own cache",
        (
            ("textual.strip", "Strip.crop_extend", "b6f4c02572981290"),
            ("textual.strip", "Strip.divide", "1eeb4257b2520648"),
            ("textual.cache", "FIFOCache.set", "e2cbe81f42edb275"),
        ),
        lambda: _private().strips_free_themselves(),  # type: ignore[attr-defined]
        _flag("textual.strip", "Strip.crop_extend", "headspace_acyclic"),
    ),
    Patch(
        "LRU cache clear",
        "a cleared LRUCache unlinks its ring, freed at once",
        (
            ("textual.cache", "LRUCache.clear", "e5be4b08d3c1dece"),
            ("textual.cache", "LRUCache.set", "5a0f6cd841cb43e9"),
        ),
        lambda: _private().lru_caches_free_on_clear(),  # type: ignore[attr-defined]
        _flag("textual.cache", "LRUCache.clear", "headspace_unlinks"),
    ),
)


def apply_all() -> None:
    """Apply every patch (each leaves Textual as it is when the names it needs are gone); once is enough, again does nothing."""
    for patch in PATCHES:
        patch.apply()


@cache
def fingerprint(module: str, qualname: str) -> str:
    """The first 16 hex digits of the SHA-256 of a definition's source (decorators included), read from its module's file.

    Read from the file, not from the live object, so a patch applied in
    this process does not change it.  "" when the definition is not there.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    source = Path(spec.origin).read_text(encoding="utf-8")
    body: list[ast.stmt] = ast.parse(source).body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == part), None)
        if node is None:
            return ""
        body = node.body
    assert node is not None and node.end_lineno is not None
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    text = "\n".join(source.splitlines()[first - 1 : node.end_lineno])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def changed(patch: Patch) -> list[str]:
    """The definitions ``patch`` relies on whose source is not the one it was checked against."""
    return [qualname for module, qualname, expected in patch.relies_on if fingerprint(module, qualname) != expected]


def installed(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def check(patch: Patch) -> tuple[bool, str]:
    """Apply ``patch`` (in this process) and say: (fine, what) — applied to the pinned Textual as checked, or why not."""
    patch.apply()
    version = installed("textual")
    differs = changed(patch)
    if not patch.applied():
        why = f"Textual changed {', '.join(differs)}" if differs else "the names it needs are not where it expects them"
        return False, f"not applied: {why} (Textual {version}; checked against {PINNED['textual']})"
    if version != PINNED["textual"]:
        return False, f"applied, but Textual {version} is not the pinned {PINNED['textual']}: patch {patch.name!r} not checked against it"
    if differs:
        return False, f"applied, but Textual {version} changed {', '.join(differs)} since the patch was checked: re-check it"
    return True, f"applied to Textual {version}: {patch.what}"
