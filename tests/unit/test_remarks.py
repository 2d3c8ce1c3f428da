"""Remarks on a diff and the one prompt that carries them (changes/remarks.py): what the agent reads, and that it is safe to type."""

from __future__ import annotations

from headspace_tui.changes.model import DiffLine
from headspace_tui.changes.remarks import QUOTED_LINES, Remark, describe, prompt, where
from headspace_tui.changes.unified import parse


def test_the_prompt_quotes_lines_without_control_characters_or_tabs():
    turn = parse("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1,1 @@\n+\tgo\x1b[2J\x03 now\n")
    remark = Remark("x", turn.files[0].hunks[0].lines, "fix\x1b[31m\nthis")
    text = prompt([remark])
    assert text == "A remark on your changes: x line 1: `+    go␛[2J␃ now` → fix␛[31m this"
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text) and "\n" not in text


def test_lines_are_named_by_their_numbers_now_and_removed_ones_by_their_old_numbers():
    added, context, removed = DiffLine("+", "a", 0, 7), DiffLine(" ", "b", 4, 8), DiffLine("-", "c", 5, 0)
    assert where(Remark("f", (added,), "")) == "line 7"
    assert where(Remark("f", (added, context, removed), "")) == "lines 7-8"
    assert where(Remark("f", (removed, DiffLine("-", "d", 6, 0)), "")) == "removed lines 5-6"


def test_several_remarks_are_numbered_in_one_prompt_and_a_long_quote_is_cut_and_says_so():
    many = tuple(DiffLine("+", f"line {n}", 0, n) for n in range(1, QUOTED_LINES + 4))
    first, second = Remark("a.py", many, "split this"), Remark("b/c.md", (DiffLine("-", "old", 3, 0),), "why gone?")
    text = prompt([first, second])
    assert text.startswith("Remarks on your changes (2): 1) a.py lines 1-15: `+line 1` ")
    assert f"`+line {QUOTED_LINES}` (+3 more lines) → split this 2) b/c.md removed line 3: `-old` → why gone?" in text
    assert f"line {QUOTED_LINES + 1}`" not in text
    assert describe(second) == "b/c.md removed line 3: `-old` → why gone?"
    assert prompt([]) == ""
