"""Where a family is named outside its own folder, and that the list only shrinks (issue 67: families own their knowledge).

``detect/family.py`` promises that a family's knowledge lives in its folder
(``detect/<name>/``); Codex's hook and the rules added branches on family
names elsewhere. This test reads every module (its code, not its docstrings
or comments) and finds each string that is a registered family's name. The
places below are what is left to move into the families' records; a new one
fails here, and one moved away fails too until its line is taken out, so the
list says where a family is named today.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from headspace_tui.detect import families, usage_kinds

PACKAGE = Path(families.__file__).resolve().parent.parent

# module → how many times a family's name is written in its code (not yet the family's own knowledge)
STILL_NAMED = {
    "model.py": 1,  # DEFAULT_FAMILY, the one default: the bottom layer, below the families (import contracts)
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (module, class and function): prose, not code."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def named_outside_their_folders() -> Counter:
    names = {family.name for family in families.FAMILIES}
    own = {PACKAGE / "detect" / name for name in names}
    found: Counter = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(folder in path.parents for folder in own) or path.name == "families.py":  # the registry lists them
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in prose:
                found[path.relative_to(PACKAGE).as_posix()] += 1
    return found


def test_the_six_families_are_what_is_searched():
    assert {family.name for family in families.FAMILIES} == {"claude", "codex", "gemini", "opencode", "copilot", "qwen"}


def test_a_family_is_named_only_where_the_list_says_and_no_more_often():
    found = named_outside_their_folders()
    grown = {module: count for module, count in found.items() if count > STILL_NAMED.get(module, 0)}
    assert not grown, f"a family named in code outside its folder (give the family's record the knowledge instead): {grown}"
    moved = {module: (count, found.get(module, 0)) for module, count in STILL_NAMED.items() if found.get(module, 0) < count}
    assert not moved, f"fewer names than listed (listed, found): take them out of STILL_NAMED: {moved}"


def test_the_probes_session_records_are_the_built_in_families_own():
    """The probe carries no registry and lists the records it reads (detect/usage_kinds.py): the same each family's record carries."""
    assert usage_kinds.KINDS == families.usage_kinds()
    assert all(name == kind.family for name, kind in usage_kinds.KINDS.items())
