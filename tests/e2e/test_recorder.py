"""The recorder's one command works end to end against the real binary."""

from __future__ import annotations

import json

import pytest

from tests.harness import record

pytestmark = pytest.mark.e2e


def test_recorder_writes_the_three_files_for_a_screen(claude_binary, tmp_path):
    status = record.main(["--only", "permission_write", "--sizes", "80x24", "--renderers", "inline", "--jobs", "1", "--out", str(tmp_path)])
    assert status == 0
    folder = tmp_path / "inline" / "80x24"
    meta = json.loads((folder / "permission_write.json").read_text())
    assert meta["expected"] == {"state": "permission", "tool": "Write", "detail": "notes.txt"}
    assert meta["alternate_on"] is False and meta["pane_command"] == "claude"
    text = (folder / "permission_write.txt").read_text()
    assert "notes.txt" in text and "1. Yes" in text
    assert (folder / "permission_write.txt").read_text() == record.plain_text((folder / "permission_write.ansi").read_text())
