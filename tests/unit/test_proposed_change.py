"""The change a file edit would make, from the call itself (changes/proposed.py), and the file it reads (changes/current_file.py).

Every diff made here must be a true patch: its hunks, applied to the old
text, give the new one (``patched``), with the file's own line numbers
where the file was read and the snippet's where it was not.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from headspace_tui.changes.current_file import CAP, read_current, reader
from headspace_tui.changes.model import MAX_LINE_CHARS, MAX_LINES, Diff
from headspace_tui.changes.proposed import NOT_READ, is_file_edit, proposed
from headspace_tui.changes.unified import render

README = "# Parser\n\nThe parser reads tokens.\nIt builds a tree.\nIt reports errors.\n\n## Usage\n\nRun it.\n"


def files(**texts: str):
    """A ``read_file`` over ``texts`` (by path); any other path is missing."""

    def read(path: str) -> str:
        if path not in texts:
            raise FileNotFoundError(path)
        return texts[path]

    return read


def refusing(reason: str):
    def read(path: str) -> str:
        raise ValueError(reason)

    return read


def patched(old: str, diff: Diff) -> list[str]:
    """The lines of ``old`` with every hunk of the one file applied (checking each context and removed line against it)."""
    (f,) = diff.files
    lines = old.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    at = 0  # lines of old consumed
    for hunk in f.hunks:
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        out += lines[at:start]
        at = start
        for line in hunk.lines:
            if line.kind in (" ", "-"):
                assert lines[at].rstrip("\r") == line.text, (at, lines[at], line)
                assert line.old == at + 1
                at += 1
            if line.kind in (" ", "+"):
                out.append(line.text)
                assert line.new == len(out), (line, len(out))
    return out + lines[at:]


def kinds(diff: Diff) -> list[str]:
    return [f"{line.kind}{line.text}" for f in diff.files for h in f.hunks for line in h.lines]


# -- Edit -------------------------------------------------------------------------------------


def test_an_edit_of_a_readable_file_has_the_files_line_numbers_and_three_lines_of_context():
    diff = proposed("Edit", {"file_path": "/w/README.md", "old_string": "It builds a tree.\n", "new_string": "It builds a typed tree.\nIt keeps comments.\n"}, files(**{"/w/README.md": README}))
    assert diff is not None and diff.note == ""
    (f,) = diff.files
    assert (f.path, f.status, f.added, f.removed) == ("/w/README.md", "modified", 2, 1)
    (hunk,) = f.hunks
    assert hunk.header == "@@ -1,7 +1,8 @@"
    assert kinds(diff) == [" # Parser", " ", " The parser reads tokens.", "-It builds a tree.", "+It builds a typed tree.", "+It keeps comments.", " It reports errors.", " ", " ## Usage"]
    assert [(line.old, line.new) for line in hunk.lines][3:6] == [(4, 0), (0, 4), (0, 5)]
    assert patched(README, diff) == (README.replace("It builds a tree.\n", "It builds a typed tree.\nIt keeps comments.\n")).split("\n")[:-1]
    assert diff.summary() == "+2 −1 · 1 file"


def test_an_edit_deep_in_a_file_starts_its_hunk_at_its_line():
    text = "".join(f"line {n}\n" for n in range(1, 101))
    diff = proposed("Edit", {"file_path": "/f", "old_string": "line 50\n", "new_string": "line fifty\n"}, files(**{"/f": text}))
    (hunk,) = diff.files[0].hunks
    assert hunk.header == "@@ -47,7 +47,7 @@"
    assert patched(text, diff)[49] == "line fifty"


def test_an_edit_inside_a_line_shows_the_whole_line_changed():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "tree", "new_string": "forest"}, files(**{"/f": README}))
    assert "-It builds a tree." in kinds(diff) and "+It builds a forest." in kinds(diff)


def test_replace_all_changes_every_occurrence_and_far_apart_ones_are_separate_hunks():
    text = "x = 1\n" + "".join(f"pad {n}\n" for n in range(20)) + "x = 1\n"
    diff = proposed("Edit", {"file_path": "/f", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}, files(**{"/f": text}))
    f = diff.files[0]
    assert (f.added, f.removed, len(f.hunks)) == (2, 2, 2)
    assert [h.header for h in f.hunks] == ["@@ -1,4 +1,4 @@", "@@ -19,4 +19,4 @@"]
    assert patched(text, diff) == text.replace("x = 1", "x = 2").split("\n")[:-1]


def test_without_replace_all_an_old_text_found_twice_is_said_and_its_own_text_shown():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "a", "new_string": "b"}, files(**{"/f": "a\na\n"}))
    assert "the text to replace is in the file 2 times" in diff.note and "edit's own text" in diff.note
    assert kinds(diff) == ["-a", "+b"]


def test_an_old_text_not_in_the_file_now_is_said_and_numbered_from_the_snippet():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "gone\nstill\n", "new_string": "new\nstill\n"}, files(**{"/f": README}))
    assert diff.note.startswith("the text to replace is not in the file now")
    (hunk,) = diff.files[0].hunks
    assert hunk.header == "@@ -1,2 +1,2 @@" and kinds(diff) == ["-gone", "+new", " still"]


def test_an_unread_file_diffs_the_edits_own_text_and_says_the_file_was_not_read():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "a\nb\nc\n", "new_string": "a\nB\nc\n"})
    assert diff.note == f"{NOT_READ}: lines counted from the edit's own text"
    assert kinds(diff) == [" a", "-b", "+B", " c"]
    assert diff.files[0].hunks[0].header == "@@ -1,3 +1,3 @@"
    refused = proposed("Edit", {"file_path": "/f", "old_string": "a", "new_string": "b"}, refusing("/f is a named pipe"))
    assert refused.note.startswith(f"{NOT_READ} (/f is a named pipe)")


def test_a_multiline_edit_with_unicode_keeps_the_characters():
    old = "naïve café\n日本語\n"
    diff = proposed("Edit", {"file_path": "/f", "old_string": "日本語", "new_string": "日本語 🎌\nemoji ✓"}, files(**{"/f": old}))
    assert kinds(diff) == [" naïve café", "-日本語", "+日本語 🎌", "+emoji ✓"]


def test_a_crlf_file_is_matched_by_its_lines_and_shown_without_the_carriage_returns():
    text = "one\r\ntwo\r\nthree\r\n"
    diff = proposed("Edit", {"file_path": "/f", "old_string": "two\nthree", "new_string": "2\n3"}, files(**{"/f": text}))
    assert diff.note == "" and kinds(diff) == [" one", "-two", "-three", "+2", "+3"]
    direct = proposed("Edit", {"file_path": "/f", "old_string": "two\r\n", "new_string": "TWO\r\n"}, files(**{"/f": text}))
    assert kinds(direct) == [" one", "-two", "+TWO", " three"]
    assert all("\r" not in line.text for f in direct.files for h in f.hunks for line in h.lines)


def test_a_file_with_no_newline_at_its_end():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "last", "new_string": "final"}, files(**{"/f": "first\nlast"}))
    assert kinds(diff) == [" first", "-last", "+final"]
    added_end = proposed("Write", {"file_path": "/f", "content": "first\nlast\n"}, files(**{"/f": "first\nlast"}))
    assert kinds(added_end) == [" first", "-last", "+last"]  # the line's end is the change


def test_an_edit_with_no_old_text_creates_a_missing_file():
    diff = proposed("Edit", {"file_path": "/new.txt", "old_string": "", "new_string": "hello\nworld\n"}, files())
    assert diff.files[0].status == "added" and kinds(diff) == ["+hello", "+world"]
    assert diff.files[0].hunks[0].header == "@@ -0,0 +1,2 @@"


def test_an_edit_that_changes_nothing_says_so():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "tree", "new_string": "tree"}, files(**{"/f": README}))
    assert diff.files[0].hunks == () and "no change" in diff.note and diff.summary() == "+0 −0 · 1 file"


def test_a_binary_file_is_not_diffed():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "a", "new_string": "b"}, files(**{"/f": "a\x00b"}))
    assert diff.files[0].status == "binary" and diff.files[0].hunks == ()


# -- MultiEdit --------------------------------------------------------------------------------


def test_a_multiedit_applies_its_edits_in_turn():
    edits = [
        {"old_string": "tokens", "new_string": "runes"},
        {"old_string": "runes.", "new_string": "runes, one by one."},
        {"old_string": "Run it.", "new_string": "Run it twice.", "replace_all": True},
    ]
    diff = proposed("MultiEdit", {"file_path": "/w/README.md", "edits": edits}, files(**{"/w/README.md": README}))
    assert diff.note == ""
    expected = README.replace("tokens.", "runes, one by one.").replace("Run it.", "Run it twice.")
    assert patched(README, diff) == expected.split("\n")[:-1]
    assert (diff.added, diff.removed) == (2, 2)


def test_a_multiedit_not_read_shows_each_edit_as_its_own_hunk():
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": "c\nD", "replace_all": True}, "not an edit"]
    diff = proposed("MultiEdit", {"file_path": "/f", "edits": edits})
    assert [h.section for h in diff.files[0].hunks] == ["edit 1 of 2", "edit 2 of 2, every occurrence"]
    assert kinds(diff) == ["-a", "+b", " c", "-d", "+D"]


def test_a_multiedit_whose_second_edit_fails_says_which():
    edits = [{"old_string": "tokens", "new_string": "runes"}, {"old_string": "nowhere", "new_string": "x"}]
    diff = proposed("MultiEdit", {"file_path": "/f", "edits": edits}, files(**{"/f": README}))
    assert diff.note.startswith("edit 2's old text is not in the file now")


# -- Write ------------------------------------------------------------------------------------


def test_a_write_over_an_existing_file_is_its_diff_against_it():
    new = README.replace("## Usage", "## How to use it")
    diff = proposed("Write", {"file_path": "/w/README.md", "content": new}, files(**{"/w/README.md": README}))
    assert diff.files[0].status == "modified" and kinds(diff) == [" It builds a tree.", " It reports errors.", " ", "-## Usage", "+## How to use it", " ", " Run it."]
    assert patched(README, diff) == new.split("\n")[:-1]


def test_a_write_of_a_missing_file_is_added_whole():
    diff = proposed("Write", {"file_path": "/w/notes.txt", "content": "one\ntwo"}, files())
    f = diff.files[0]
    assert (f.status, f.added, f.removed, f.hunks[0].header) == ("added", 2, 0, "@@ -0,0 +1,2 @@")
    assert diff.note == ""


def test_a_write_not_read_shows_the_whole_content_and_says_why():
    diff = proposed("Write", {"file_path": "/w/x", "content": "a\nb\n"})
    assert diff.note == f"{NOT_READ}: the whole new content is shown" and kinds(diff) == ["+a", "+b"]
    same = proposed("Write", {"file_path": "/w/x", "content": "a\n"}, files(**{"/w/x": "a\n"}))
    assert same.files[0].hunks == () and "no change" in same.note


def test_a_write_of_an_empty_file_over_one_removes_every_line():
    diff = proposed("Write", {"file_path": "/f", "content": ""}, files(**{"/f": "a\nb\n"}))
    assert kinds(diff) == ["-a", "-b"] and diff.files[0].hunks[0].header == "@@ -1,2 +0,0 @@"


# -- NotebookEdit -----------------------------------------------------------------------------

NOTEBOOK = json.dumps({"cells": [{"id": "intro", "cell_type": "markdown", "source": ["# Title\n", "Some words"]}, {"id": "code1", "cell_type": "code", "source": "import os\nprint(os.getcwd())\n"}]})


def test_a_notebook_cell_replaced_is_its_source_before_and_after():
    diff = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "code1", "new_source": "import os\nprint(os.listdir())\n"}, files(**{"/n.ipynb": NOTEBOOK}))
    (hunk,) = diff.files[0].hunks
    assert hunk.section == "cell code1" and kinds(diff) == [" import os", "-print(os.getcwd())", "+print(os.listdir())"]


def test_a_notebook_cell_by_index_deleted_and_inserted():
    deleted = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "cell-0", "new_source": "", "edit_mode": "delete"}, files(**{"/n.ipynb": NOTEBOOK}))
    assert kinds(deleted) == ["-# Title", "-Some words"] and deleted.files[0].hunks[0].section == "cell cell-0 deleted"
    inserted = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "intro", "new_source": "x = 1", "edit_mode": "insert", "cell_type": "code"}, files(**{"/n.ipynb": NOTEBOOK}))
    assert kinds(inserted) == ["+x = 1"] and inserted.files[0].hunks[0].section == "new code after cell intro"


def test_a_notebook_not_read_or_without_the_cell_shows_the_new_source_and_says_why():
    unread = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "code1", "new_source": "y = 2"})
    assert kinds(unread) == ["+y = 2"] and unread.note == f"{NOT_READ}: the cell's new source is shown"
    missing = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "nope", "new_source": "y = 2"}, files(**{"/n.ipynb": NOTEBOOK}))
    assert missing.note.startswith("no cell nope in the notebook now")
    broken = proposed("NotebookEdit", {"notebook_path": "/n.ipynb", "cell_id": "code1", "new_source": "y", "edit_mode": "delete"}, files(**{"/n.ipynb": "{not json"}))
    assert broken.files[0].hunks == () and broken.note.startswith("the notebook is not JSON")


# -- not file edits, other families, hostile and huge input ---------------------------------------


@pytest.mark.parametrize("tool, tool_input", [("Bash", {"command": "rm -rf /"}), ("Read", {"file_path": "/f"}), ("Edit", {"old_string": "a"}), ("Edit", {"file_path": 3}), ("Write", "not a dict")])
def test_what_edits_no_file_has_no_diff(tool, tool_input):
    assert proposed(tool, tool_input, files()) is None


def test_the_other_families_edit_tools_read_the_same():
    assert is_file_edit("replace") and is_file_edit("edit") and not is_file_edit("Bash")
    gemini = proposed("replace", {"file_path": "/f", "old_string": "tree", "new_string": "graph"}, files(**{"/f": README}))
    opencode = proposed("edit", {"filePath": "/f", "oldString": "tree", "newString": "graph", "replaceAll": True}, files(**{"/f": README}))
    assert kinds(gemini) == kinds(opencode) and "+It builds a graph." in kinds(gemini)
    assert kinds(proposed("write", {"filePath": "/n", "content": "x"}, files())) == ["+x"]


def test_hostile_strings_are_kept_as_data():
    hostile = "\x1b]52;c;ZXZpbA==\x07[b]bold[/b] <script>alert(1)</script> \u202eevil\x00"
    diff = proposed("Edit", {"file_path": "/f[red]x", "old_string": "plain", "new_string": hostile})
    assert diff.files[0].path == "/f[red]x"
    assert kinds(diff) == ["-plain", f"+{hostile}"]  # exactly as it came: the front end makes it safe to show
    assert Diff.from_dict(json.loads(json.dumps(diff.to_dict()))) == diff


def test_a_form_feed_or_line_separator_does_not_split_a_line():
    diff = proposed("Edit", {"file_path": "/f", "old_string": "a", "new_string": "a\x0cb\u2028c"})
    assert kinds(diff) == ["-a", "+a\x0cb\u2028c"]


def test_a_huge_write_is_capped_with_its_counts_whole():
    content = "".join(f"row {n}\n" for n in range(50_000))
    diff = proposed("Write", {"file_path": "/big", "content": content}, files())
    f = diff.files[0]
    assert f.added == 50_000 and diff.added == 50_000
    assert sum(len(h.lines) for h in f.hunks) == MAX_LINES and f.more_lines == 50_000 - MAX_LINES


def test_a_huge_rewrite_stays_quick_and_true():
    old = "".join(f"old {n}\n" for n in range(20_000))
    new = "".join(f"new {n}\n" for n in range(20_000))
    diff = proposed("Write", {"file_path": "/big", "content": new}, files(**{"/big": old}))
    assert (diff.added, diff.removed) == (20_000, 20_000)
    assert diff.files[0].more_lines == 40_000 - MAX_LINES


def test_a_very_long_line_is_cut():
    diff = proposed("Write", {"file_path": "/min.js", "content": "x" * 100_000}, files())
    (line,) = diff.files[0].hunks[0].lines
    assert len(line.text) == MAX_LINE_CHARS + 1 and line.text.endswith("…")


def test_random_edits_are_true_patches():
    rng = random.Random(55)
    words = ["alpha", "beta", "gamma", "", "delta", "}", "{"]
    for _ in range(200):
        old_lines = [rng.choice(words) for _ in range(rng.randint(0, 40))]
        new_lines = list(old_lines)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(new_lines))
            if rng.random() < 0.5 and at < len(new_lines):
                del new_lines[at]
            else:
                new_lines.insert(at, rng.choice(words) + "!")
        old, new = "".join(f"{w}\n" for w in old_lines), "".join(f"{w}\n" for w in new_lines)
        diff = proposed("Write", {"file_path": "/r", "content": new}, files(**{"/r": old}))
        assert patched(old, diff) == new_lines, render(diff)


# -- reading the current file -------------------------------------------------------------------


def test_the_current_file_is_read_only_when_it_is_a_small_regular_file(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"caf\xc3\xa9 \xff\n")
    assert read_current(str(tmp_path / "a.txt")) == "café \ufffd\n"
    assert reader(str(tmp_path))("a.txt") == "café \ufffd\n"  # relative to the agent's folder
    with pytest.raises(FileNotFoundError):
        read_current(str(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="relative"):
        read_current("a.txt")
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ValueError, match="named pipe"):
        read_current(str(tmp_path / "pipe"))  # never blocks
    (tmp_path / "link").symlink_to(tmp_path / "a.txt")
    with pytest.raises(ValueError, match="symbolic link"):
        read_current(str(tmp_path / "link"))
    with open(tmp_path / "big", "wb") as big:
        big.truncate(CAP + 1)
    with pytest.raises(ValueError, match="limit"):
        read_current(str(tmp_path / "big"))
    diff = proposed("Write", {"file_path": str(tmp_path / "pipe"), "content": "x\n"}, reader())
    assert diff.note.startswith(f"{NOT_READ} (") and "named pipe" in diff.note
