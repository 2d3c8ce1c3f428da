"""Tools a Claude dialog names only by what it shows (issue 42), read from real screens and matched to the hook's request.

The screens are in the corpus (``permission_glob_outside``, ``permission_grep_outside``,
``permission_notebook``; recorded on 2.0.31, 2.1.30, 2.1.160 and 2.1.330 at 80x24):

* a search outside the work dir is drawn "Read file" with ``Search(pattern: …, path: …)``
  under it, for Glob and Grep alike: the screen says ``Search``, the hook's request says which;
* a notebook edit whose header scrolled away asks "Do you want to make this edit to
  analysis.ipynb?", as an Edit would: the ``.ipynb`` file says NotebookEdit.
"""

from __future__ import annotations

import json

import pytest

from headspace_tui.detect.claude import classify_capture
from headspace_tui.hooks.calls import PendingCall, why_not
from tests.harness.record import PANES

SEARCHES = sorted(PANES.glob("claude-*/*/*/permission_g*_outside.json"))
NOTEBOOKS = sorted(PANES.glob("claude-*/*/*/permission_notebook.json"))


def _read(path):
    meta = json.loads(path.read_text())
    return meta, classify_capture(path.with_suffix(".ansi").read_text(), command=meta["pane_command"], version=meta["claude_version"])


def test_the_screens_are_recorded_on_old_and_new_versions():
    versions = {p.relative_to(PANES).parts[0] for p in SEARCHES + NOTEBOOKS}
    assert {"claude-2.0.31", "claude-2.1.30"} <= versions
    assert len(SEARCHES) >= 4 and len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", SEARCHES, ids=lambda p: str(p.relative_to(PANES)))
def test_a_search_outside_the_work_dir_is_a_search_with_its_arguments_and_matches_only_its_own_request(path):
    meta, seen = _read(path)
    pattern = "*.conf" if "glob" in path.stem else "Copyright"
    tool = "Glob" if "glob" in path.stem else "Grep"
    assert seen.tool == "Search"
    assert seen.prompt.detail == f'pattern: "{pattern}", path: "/usr/share/doc"'

    def call(name: str, **tool_input) -> PendingCall:
        return PendingCall(1, "%1", 0, "s", name, tool_input)

    assert why_not(call(tool, pattern=pattern, path="/usr/share/doc"), seen) == ""
    assert why_not(call("Glob" if tool == "Grep" else "Grep", pattern=pattern, path="/usr/share/doc"), seen) == ""  # drawn alike
    assert "not the one" in why_not(call(tool, pattern="*.py", path="/usr/share/doc"), seen)
    assert "not the one" in why_not(call(tool, pattern=pattern, path="/etc"), seen)
    assert "asks about Search" in why_not(call("Read", file_path="/usr/share/doc"), seen)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(PANES)))
def test_an_edit_to_a_notebook_is_notebook_edit(path):
    meta, seen = _read(path)
    assert (seen.tool, seen.prompt.detail) == ("NotebookEdit", "analysis.ipynb")
    request = PendingCall(1, "%1", 0, "s", "NotebookEdit", {"notebook_path": "/w/analysis.ipynb", "new_source": "x"})
    assert why_not(request, seen) == ""
