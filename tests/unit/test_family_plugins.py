"""An agent family shipped as a package of its own is found through its entry point (issue 67: families may be loaded from entry points).

A throwaway "installed package" is written as pip would leave it: the module
(a copy of Quill, tests/unit/quill) and a ``*.dist-info`` folder whose
``entry_points.txt`` names its ``Family`` under ``headspace.families``.  The
real ``headspace`` command runs in a child process with that folder on its
path (as a package in the same environment would be), so the whole load is
the real one: importlib's metadata, the import, the registration.

* Without the package, ``classify --agent quill`` is refused; with it, Quill's
  screen is read by Quill's reader.
* A real tmux pane whose program is ``quill`` is listed by ``status --json``
  as Quill's, with the command it asks to run.
* Plug-ins that cannot load (a missing module or name, something that is not a
  family, a name already taken) are each left out with one line on stderr and
  in ``doctor``, never a traceback; the good one and the built-in families go on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.tmux import temp_server
from tests.harness.wait import poll
from tests.unit import quill

ASKING = "\x1b[1mquill\x1b[0m 0.1\n\nI will remove the build folder.\nAllow rm -rf build? (y) yes  (n) no\n"


def _installed(root: Path, points: dict[str, str]) -> Path:
    """A site folder holding the package ``quill_headspace`` and its dist-info, as ``pip install`` writes them."""
    site = root / "site"
    (site / "quill_headspace").mkdir(parents=True)
    shutil.copy(Path(quill.__file__), site / "quill_headspace" / "__init__.py")
    info = site / "quill_headspace-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: quill-headspace\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[headspace.families]\n" + "".join(f"{name} = {target}\n" for name, target in points.items()))
    return site


def _headspace(site: Path | None, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The real command in a child process; ``site`` on its path like a package installed beside headspace."""
    base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "PYTHONPATH")}
    if site is not None:
        base["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "headspace_tui", *args], capture_output=True, text=True, env={**base, **(env or {})}, timeout=60)


@pytest.fixture
def screen(tmp_path: Path) -> Path:
    path = tmp_path / "quill.txt"
    path.write_text(ASKING)
    return path


def test_without_its_package_the_family_is_unknown_and_with_it_its_screen_is_read_by_its_reader(tmp_path: Path, screen: Path):
    refused = _headspace(None, "classify", "--agent", "quill", str(screen))
    assert refused.returncode != 0 and "unknown agent 'quill'" in refused.stderr
    site = _installed(tmp_path, {"quill": "quill_headspace:FAMILY"})
    read = _headspace(site, "classify", "--agent", "quill", str(screen))
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith("permission") and "rm -rf build" in read.stdout, read.stdout
    assert read.stderr == ""


def test_a_pane_running_the_plugins_agent_is_listed_by_status_as_its_family(tmp_path: Path):
    site = _installed(tmp_path, {"quill": "quill_headspace:FAMILY"})
    program = tmp_path / "bin" / "quill"  # a script: its process is called quill, as Quill's binary would be
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nprintf '\\033[1mquill\\033[0m 0.1\\n\\nI will remove the build folder.\\nAllow rm -rf build? (y) yes  (n) no\\n'\nwhile :; do sleep 60; done\n")
    program.chmod(0o755)
    with temp_server("hs-plugin-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "q", "-x", "80", "-y", "24", str(program))
        poll(lambda: tmux.run("capture-pane", "-p", "-t", "q"), lambda shown: "Allow rm -rf build?" in shown)

        def rows(site: Path | None) -> list[dict]:
            done = _headspace(site, "-L", tmux.name, "status", "--json")
            assert done.returncode == 0, done.stderr
            return [json.loads(line) for line in done.stdout.splitlines()]

        assert rows(None) == []  # without the plug-in, a process nobody knows: not an agent
        (row,) = rows(site)
    assert (row["agent"], row["state"]) == ("quill", "permission")
    assert "rm -rf build" in json.dumps(row)


def test_plugins_that_cannot_load_are_each_left_out_in_one_line_and_the_rest_go_on(tmp_path: Path, screen: Path):
    site = _installed(
        tmp_path,
        {
            "quill": "quill_headspace:FAMILY",
            "absent": "quill_headspace:NO_SUCH_NAME",
            "elsewhere": "no_such_package_here:FAMILY",
            "plain": "quill_headspace:recognise",
            "taken": "headspace_tui.detect.claude:FAMILY",
        },
    )
    read = _headspace(site, "classify", "--agent", "quill", str(screen))
    assert read.returncode == 0 and read.stdout.startswith("permission"), read.stderr
    lines = read.stderr.splitlines()
    assert len(lines) == 4 and all(line.startswith("headspace: agent family plug-in ") for line in lines), read.stderr
    assert "Traceback" not in read.stderr
    said = dict(line.removeprefix("headspace: agent family plug-in ").split(" ", 1) for line in lines)
    assert set(said) == {"absent", "elsewhere", "plain", "taken"}
    assert "not an agent family's record" in said["plain"] and "'claude' is registered already" in said["taken"]
    assert "ModuleNotFoundError" in said["elsewhere"] and "AttributeError" in said["absent"]
    claude = _headspace(site, "classify", "--agent", "claude", str(screen))
    assert claude.returncode == 0 and claude.stdout.startswith("unknown"), claude.stderr  # the built-in Claude, not the one taken

    doctor = _headspace(site, "-L", "headspace-test-no-such-server", "doctor").stdout
    found = [line for line in doctor.splitlines() if "plug-in" in line and not line.lstrip().startswith("fix:")]
    assert len(found) == 5, doctor
    assert any(line.split()[0] == "ok" and "quill: agent family 'quill'" in line for line in found), doctor
    assert sum(line.split()[0] == "warn" for line in found) == 4, doctor
