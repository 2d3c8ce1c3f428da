"""The service facade is a wall for attributes too, not only for imports.

import-linter keeps a front end from importing the service's insides, but
an attribute walks straight past it: ``self.service.answerer.answer(...)``
imports nothing.  A second front end (the resident service's clients, a
web page) must be able to do all a front end does through the facade's
own methods, with plain data in and out, so none may hold the answerer,
the typist, the fleet, a monitor, a store or a desk.

This reads every module of every front end and fails on any attribute of
the service object (a name ``service``, or an attribute ``….service``) that
is private, that the ``Service`` class does not have, or that holds one of
the service's live parts.  The members are read from the class itself (and
from a built service, for the attributes ``__init__`` sets), so a new facade
method is allowed without touching this test.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import time
from pathlib import Path

import pytest

import headspace_tui
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import TmuxServer

# Every front end's package (a new front end adds its line here): the TUI, the command line (which builds a Service), the resident service's server, the web page.
FRONT_ENDS = ("headspace_tui.app", "headspace_tui.cli", "headspace_tui.resident", "headspace_tui.web")

ROOT = Path(headspace_tui.__file__).parent.parent
PLAIN = (bool, int, float, str, bytes, tuple, frozenset, type(None))


def _plain(value: object) -> bool:
    """Data a socket could carry (or a clock): not one of the service's live parts."""
    if isinstance(value, PLAIN) or isinstance(value, enum.Enum):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__dataclass_params__.frozen  # type: ignore[attr-defined]
    return inspect.isroutine(value)  # the clock


def _members() -> tuple[set[str], set[str]]:
    """The facade's public members, and those of them that hold a live part of the service."""
    service = Service.build(TmuxServer(socket_name="headspace-wall-unused"), live=False, journal=Journal(None), hooks=False)
    attributes = {name: value for name, value in vars(service).items() if not name.startswith("_")}
    public = {name for name in dir(Service) if not name.startswith("_")} | set(attributes)
    live = {name for name, value in attributes.items() if not _plain(value)}
    return public, live


PUBLIC, LIVE = _members()


@dataclasses.dataclass
class _Unfrozen:
    changes: int = 0


def _names_for_the_service(tree: ast.AST) -> set[str]:
    """What the service is called in a module: ``service``, and any name it is given (``svc = self.service``, ``svc: Service``)."""
    names = {"service"}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None and ast.unparse(node.annotation).strip("'\"") in ("Service", "Service | None"):
            names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation).strip("'\"") in ("Service", "Service | None"):
            names.add(_said(node.target).rpartition(".")[2])
    grew = True
    while grew:  # an alias of an alias
        grew = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _is_service(node.value, names):
                for target in node.targets:
                    name = _said(target).rpartition(".")[2]
                    if isinstance(target, (ast.Name, ast.Attribute)) and name not in names:
                        names.add(name)
                        grew = True
    return names


def _is_service(node: ast.expr, names: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in names) or (isinstance(node, ast.Attribute) and node.attr in names)


def _said(node: ast.expr) -> str:
    return ast.unparse(node)


def reaches(source: str) -> list[str]:
    """Each place ``source`` goes past the facade, as ``line: code: why``."""
    found = []
    tree = ast.parse(source)
    names = _names_for_the_service(tree)

    def judge(at: ast.AST, name: str, shown: str) -> None:
        if name.startswith("_"):
            why = "a private part of the service"
        elif name not in PUBLIC:
            why = "not a member of the facade (Service)"
        elif name in LIVE:
            why = "holds a live part of the service; ask the facade instead"
        else:
            return
        found.append(f"{at.lineno}: {shown}: {why}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_service(node.value, names):
            judge(node, node.attr, _said(node))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2 and _is_service(node.args[0], names)
        ):
            name = node.args[1]
            judge(node, name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "_by a computed name", _said(node))
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def front_end_modules() -> list[Path]:
    return sorted(p for package in FRONT_ENDS for p in (ROOT / package.replace(".", "/")).rglob("*.py"))


def test_the_check_sees_a_reach_past_the_facade():
    """The checker itself: each way past the wall is caught, and a facade method is not."""
    assert "jump" in PUBLIC and "subscribe" in PUBLIC and "config" in PUBLIC  # methods and plain attributes
    caught = reaches(
        "self.service.answerer.answer(agent, intent)\n"  # 1: a live part (or no member at all)
        "service._answerer.answer(agent, intent)\n"  # 2: private
        "self.app.service.nothing_like_this\n"  # 3: not a member
        "getattr(self.service, '_typist')\n"  # 4: private, by getattr
        "self.service.jump(agent)\n"  # fine: a facade method
        "self.service.config.layout\n"  # fine: plain data
        "svc = self.app.service\n"
        "svc.answerer\n"  # 8: under another name
        "def ask(door: Service) -> None:\n"
        "    door._typist\n"  # 10: a parameter that is the service
    )
    assert [line.split(":")[0] for line in caught] == ["1", "2", "3", "4", "8", "10"], caught
    for name in LIVE:
        assert reaches(f"x = self.service.{name}\n"), name


def test_what_counts_as_a_live_part():
    """A socket could carry a frozen record, a string, a flag; not the journal, a server, or a record that can change under you."""
    assert _plain(Config()) and _plain("x") and _plain(None) and _plain(time.time)
    assert not _plain(Journal(None)) and not _plain(TmuxServer(socket_name="headspace-wall-unused")) and not _plain(_Unfrozen())


def test_the_facade_hands_out_no_live_part_as_an_attribute():
    """Its answerer, typist, fleet, journal and servers are its own (``_``-named); what a front end may read is plain."""
    assert not LIVE, f"Service attributes that hold a live part: {sorted(LIVE)}"


def test_front_ends_ask_the_facade_and_never_reach_past_it():
    modules = front_end_modules()
    assert any(p.name == "main_screen.py" for p in modules)  # the walk finds the app
    found = [f"{p.relative_to(ROOT)}:{line}" for p in modules for line in reaches(p.read_text(encoding="utf-8"))]
    assert not found, "front ends reach past the service facade:\n" + "\n".join(found)


@pytest.mark.parametrize("package", FRONT_ENDS)
def test_every_front_end_package_exists(package):
    assert (ROOT / package.replace(".", "/") / "__init__.py").is_file()
