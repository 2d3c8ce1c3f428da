"""What the keys' rules read off a Claude dialog: only the call the dialog's own box shows whole.

Screens are the recorded 2.1.330 ones (snapshots/panes), changed where the
red team changed what Claude draws: a one-line description of box-drawing
dashes (Claude draws it unbordered, one column in), a word longer than a
row that Claude cut at the pane's edge, a file whose name holds " create ".
"""

from __future__ import annotations

from pathlib import Path

from headspace_tui.detect.claude.screen import classify

PANES = Path(__file__).resolve().parents[2] / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "80x24"


def screen(name: str) -> list[str]:
    return (PANES / f"{name}.txt").read_text().split("\n")


def read(rows: list[str]):
    prompt = classify("\n".join(rows)).prompt
    assert prompt is not None
    return prompt


def test_the_recorded_dialog_is_read_whole():
    prompt = read(screen("permission_bash"))
    assert (prompt.tool, prompt.detail, prompt.whole) == ("Bash", "touch marker.txt && echo headspace-ok", True)


def test_a_description_of_dashes_is_text_not_the_dialogs_edge():
    rows = screen("permission_bash")
    at = rows.index(" Create a marker file")
    rows[at] = " " + "╌" * 40  # the call's description, as the model wrote it
    prompt = read(rows)
    assert (prompt.detail, prompt.whole) == ("touch marker.txt && echo headspace-ok", True)


def test_an_empty_box_is_never_filled_from_the_call_line_above_it():
    rows = screen("permission_bash")
    at = rows.index(" touch marker.txt && echo headspace-ok")
    rows[at] = ""  # the box drawn empty (or read so)
    prompt = read(rows)
    assert not prompt.whole  # whatever the row shows for it, the keys' rules never take it for the call


def test_a_word_cut_at_the_panes_edge_is_joined_without_a_blank():
    rows = screen("permission_bash")
    at = rows.index(" touch marker.txt && echo headspace-ok")
    word = "build/" + "a" * 100 + ".txt"
    first = " touch " + word
    rows[at : at + 1] = [first[:80], " " + first[80:]]  # Claude cut the long word at column 80 and went on one column in
    prompt = read(rows)
    assert prompt.detail == f"touch {word}" and prompt.whole


def test_a_file_name_with_blanks_is_not_read_from_the_title():
    rows = screen("permission_write")
    at = rows.index(" notes.txt")
    rows[at] = " a create b.txt"
    question = rows.index(" Do you want to create notes.txt?")
    rows[question] = " Do you want to create a create b.txt?"
    prompt = read(rows)
    assert prompt.detail == "a create b.txt" and not prompt.whole  # shown for what it is; never a call read whole
    whole = read(screen("permission_write"))
    assert (whole.tool, whole.detail, whole.whole) == ("Write", "notes.txt", True)
