"""The core stays free of the UI: only headspace_tui/app imports Textual.

detect/, screen/, model and actions must be usable (and testable) without a
terminal UI; this keeps that promise checkable.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "headspace_tui"
PURE = ("detect", "screen")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_app_imports_textual():
    offenders = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if "app" not in path.relative_to(PACKAGE).parts[:1] and "textual" in imported_modules(path)]
    assert offenders == []


def test_detect_and_screen_do_no_io_with_tmux():
    for folder in PURE:
        for path in (PACKAGE / folder).rglob("*.py"):
            if path.name == "status_files.py":
                continue  # reads Claude's status files by design; no tmux either
            assert not {"subprocess", "libtmux", "textual"} & imported_modules(path), path


def test_every_package_is_listed_for_the_wheel():
    """pyproject lists the packages (themes/ is mapped in): a new subpackage left out would be missing from a plain install."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(root).parts) for p in (root / "headspace_tui").rglob("__init__.py")}
    assert found | {"headspace_tui.themes"} == listed


def _layers() -> list[list[str]]:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layered,) = [c for c in contracts if c["type"] == "layers"]
    return [[name.strip() for name in layer.replace("|", ":").split(":")] for layer in layered["layers"]]


def _modules() -> set[str]:
    """Every module and package of headspace_tui, by its dotted name (the package itself and ``__main__`` aside)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = ("headspace_tui", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) > 1 and parts[-1] != "__main__":
            found.add(".".join(parts))
    return found


def test_every_module_is_in_a_layer():
    """A module in no layer is unconstrained: import-linter would let it import anything and be imported by anything.

    A layer names a module or a whole package; a package whose modules are
    layered one by one (``service``) is itself only a docstring.
    """
    placed = {name for layer in _layers() for name in layer}
    found = _modules()
    unplaced = [m for m in found if not any(m == p or m.startswith(p + ".") for p in placed) and not any(p.startswith(m + ".") for p in placed)]
    assert sorted(unplaced) == []
    assert sorted(placed - found) == []  # and no layer names a module that is gone
    split = [m for m in found if m not in placed and any(p.startswith(m + ".") for p in placed)]
    for package in split:  # its __init__ holds no code that could import around the layers
        init = PACKAGE.joinpath(*package.split(".")[1:], "__init__.py")
        assert [type(n) for n in ast.parse(init.read_text()).body] == [ast.Expr], init  # and no layer names a module that is gone


def test_the_app_is_kept_from_every_part_of_the_service_and_speaks_only_the_api():
    """A new module in service/ is behind the API from its first day.

    The app's contracts forbid the whole service package, the facade too
    (it holds a ``Facade``, api/facade.py; cli/launch.py builds the service
    and hands it over behind the same client), and every module of
    service/ sits in one of its layer packages (records, watching, acting),
    which the resident server and the page may not import either, or is
    one of the two that serve the API (facade.py, answer_wait.py).
    """
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    app = set().union(*(c["forbidden_modules"] for c in contracts if c["type"] == "forbidden" and "headspace_tui.app" in c["source_modules"]))
    watcher = {"headspace_tui.service", "headspace_tui.answering", "headspace_tui.tmux", "headspace_tui.hooks", "headspace_tui.remote", "headspace_tui.rules"}
    assert sorted(watcher - app) == []
    (front,) = [c for c in contracts if c["type"] == "forbidden" and {"headspace_tui.resident", "headspace_tui.web"} <= set(c["source_modules"])]
    layers = {"headspace_tui.service.records", "headspace_tui.service.watching", "headspace_tui.service.acting"}
    assert layers <= set(front["forbidden_modules"])
    service = [m for m in _modules() if m.startswith("headspace_tui.service.")]
    assert len(service) > 20, "no service modules found: this test reads the wrong tree"
    loose = sorted(m for m in service if m not in layers and not any(m.startswith(f"{layer}.") for layer in layers))
    assert loose == ["headspace_tui.service.answer_wait", "headspace_tui.service.facade"], f"a service module outside its layer packages: {loose}"


WATCHER = ("watching", "acting", "monitor", "fleet", "pane_watch", "discovery", "sessions", "in_use", "remote", "rules", "tmux")


@pytest.mark.parametrize("client", ["headspace_tui.resident.facade_client", "headspace_tui.resident.client", "headspace_tui.api.calls"])
def test_importing_a_client_loads_none_of_the_watcher(client):
    """A client of the resident service (the popup, the terminal UI, the command line) holds the API, not the service.

    Imported in a fresh interpreter: no monitor, fleet, pane watcher,
    discovery, remote host, rules or tmux module is loaded with it, so a
    client starts at the cost of what it uses (the in-process transport
    is handed a service built elsewhere: cli/launch.py).
    """
    code = f"import sys, {client}; print('\\n'.join(m for m in sys.modules if m.startswith('headspace_tui')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert client in loaded, "the import did not run: this test reads nothing"
    watcher = sorted(m for m in loaded if any(part in WATCHER for part in m.split(".")[1:]))
    assert watcher == [], f"{client} loads the watcher: {watcher}"
    assert "headspace_tui.service.facade" not in loaded


def test_one_error_from_the_service_with_its_kinds():
    """Every front end meets one ``ServiceError`` (api/errors.py), whichever path it asked by: no module defines another."""
    from headspace_tui.api import errors, facade
    from headspace_tui.resident import client, transport

    defined = sorted(
        f"{path.relative_to(PACKAGE)}:{node.name}"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and node.name in ("ServiceError", "Refused", "Lost", "ServerGone")
    )
    assert defined == ["api/errors.py:Lost", "api/errors.py:Refused", "api/errors.py:ServerGone", "api/errors.py:ServiceError"], defined
    assert all(issubclass(kind, errors.ServiceError) for kind in (errors.Refused, errors.Lost, errors.ServerGone))
    assert facade.ServiceError is errors.ServiceError and client.ServiceError is errors.ServiceError and transport.Refused is errors.Refused
