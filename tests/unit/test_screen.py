"""The virtual screen shows exactly what tmux captured, colours included.

The text checks run over the whole recorded corpus (every renderer, size and
scenario): if the emulator dropped, shifted or doubled a single character,
including wide and box-drawing ones, a row would differ from the ``.txt``
written at recording time.  The colour checks use cells whose escapes are
known from the recordings.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rich.color import Color
from rich.style import Style
from rich.text import Text

from headspace_tui.screen import VirtualScreen

PANES = Path(__file__).resolve().parents[2] / "snapshots" / "panes"
CORPUS = PANES / "claude-2.1.330"
CAPTURES = sorted(PANES.glob("claude-*/*/*/*.ansi"))  # every recorded version: each draws its own way
IDS = [str(path.relative_to(PANES).with_suffix("")).removeprefix("claude-") for path in CAPTURES]


def load(path: Path) -> tuple[VirtualScreen, list[str]]:
    """A screen loaded from one recording, and the recording's own text rows."""
    meta = json.loads(path.with_suffix(".json").read_text())
    width, height = meta["width"], meta["height"]
    rows = path.with_suffix(".txt").read_text().split("\n")
    if len(rows) == height + 1:
        assert rows[-1] == "", "only capture-pane's final newline may follow the last row"
        rows.pop()
    assert len(rows) == height
    screen = VirtualScreen(width, height)
    screen.load_capture(path.read_text())
    return screen, [row.rstrip() for row in rows]


def style_at(text: Text, offset: int) -> Style:
    """The combined style of the spans covering one character."""
    return sum((span.style for span in text.spans if span.start <= offset < span.end), Style())


def test_the_whole_corpus_is_found():
    assert len(CAPTURES) == len(list(PANES.glob("claude-*/*/*/*.json"))) >= 600


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_lines_match_the_recorded_text(path):
    screen, expected = load(path)
    assert screen.lines() == expected


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_rich_text_matches_the_recorded_text(path):
    screen, expected = load(path)
    rows = screen.to_rich().plain.split("\n")
    # Rows may keep trailing blanks that carry a background colour.
    assert [row.rstrip() for row in rows] == expected
    assert [line.plain for line in screen.to_rich_lines()] == rows


def test_256_colour_tab_keeps_its_colours():
    screen, _ = load(CORPUS / "alt" / "80x24" / "question_several_second.ansi")
    text = screen.to_rich()
    start = text.plain.index("☐ Features")
    # ESC[38;5;16m ESC[48;5;153m: pyte turns index 16 into 000000 and 153 into
    # afd7ff (the 6x6x6 cube: 153 - 16 = 137 = 3*36 + 4*6 + 5 -> af, d7, ff).
    for offset in range(start, start + len("☐ Features")):
        style = style_at(text, offset)
        assert style.bgcolor == Color.parse("#afd7ff")
        assert style.color == Color.parse("#000000")
    assert style_at(text, start - 2).bgcolor is None  # "Database " next to it is plain.


def test_bold_survives():
    screen, _ = load(CORPUS / "alt" / "80x24" / "question_several_second.ansi")
    text = screen.to_rich()
    # ESC[1m ESC[38;5;231m Which features should ship first?
    offset = text.plain.index("Which features should ship first?")
    style = style_at(text, offset)
    assert style.bold is True
    assert style.color == Color.parse("#ffffff")
    assert not style_at(text, text.plain.index("Pick Auth")).bold


def test_named_and_truecolour_values_map_to_rich():
    screen = VirtualScreen(20, 2)
    screen.load_capture("\x1b[31mr\x1b[93my\x1b[105mm\x1b[0m\x1b[33;44mb\x1b[38;2;1;2;3mt\n")
    text = screen.to_rich()
    assert style_at(text, 0).color == Color.parse("red")
    assert style_at(text, 1).color == Color.parse("bright_yellow")  # pyte: "brightbrown"
    assert style_at(text, 2).bgcolor == Color.parse("bright_magenta")  # pyte: "bfightmagenta"
    assert style_at(text, 3).color == Color.parse("yellow")  # pyte: "brown"
    assert style_at(text, 3).bgcolor == Color.parse("blue")
    assert style_at(text, 4).color == Color.parse("#010203")


def test_text_attributes_survive():
    screen = VirtualScreen(20, 1)
    screen.load_capture("\x1b[3mi\x1b[0;4mu\x1b[0;7mr\x1b[0;9ms\x1b[0;5mb\x1b[0mn")
    text = screen.to_rich()
    assert style_at(text, 0).italic and style_at(text, 1).underline
    assert style_at(text, 2).reverse and style_at(text, 3).strike
    assert style_at(text, 4).blink
    assert style_at(text, 5) == Style()


def test_equal_styles_become_one_span():
    screen = VirtualScreen(20, 1)
    screen.load_capture("\x1b[31mabc\x1b[31mdef\x1b[0m plain")
    text = screen.to_rich()
    assert text.plain == "abcdef plain"
    assert [(span.start, span.end) for span in text.spans] == [(0, 6)]


def test_coloured_trailing_blanks_stay_plain_ones_go():
    screen = VirtualScreen(10, 2)
    screen.load_capture("ab\x1b[44m   \x1b[0m\ncd   ")
    rows = screen.to_rich().plain.split("\n")
    assert rows == ["ab   ", "cd"]
    assert screen.lines() == ["ab", "cd"]


def test_wide_characters_take_no_extra_space():
    screen = VirtualScreen(20, 2)
    screen.load_capture("日本語 ok\n\x1b[32m漢字\x1b[0mx\n")
    assert screen.lines() == ["日本語 ok", "漢字x"]
    text = screen.to_rich()
    assert text.plain == "日本語 ok\n漢字x"
    assert style_at(text, text.plain.index("字")).color == Color.parse("green")
    assert style_at(text, text.plain.index("x")) == Style()


def test_a_trailing_newline_does_not_scroll():
    screen = VirtualScreen(10, 3)
    screen.load_capture("one\ntwo\nthree\n")
    assert screen.lines() == ["one", "two", "three"]
    assert screen.cursor == (5, 2)


def test_a_taller_capture_keeps_its_last_rows_and_their_colours():
    screen = VirtualScreen(10, 3)
    screen.load_capture("\x1b[1mrow0\n" + "\n".join(f"row{i}" for i in range(1, 8)) + "\n")
    assert screen.lines() == ["row5", "row6", "row7"]
    assert style_at(screen.to_rich(), 0).bold  # ESC[1m scrolled off but its effect did not.


def test_a_wider_capture_is_clipped_not_wrapped():
    screen = VirtualScreen(11, 3)
    screen.load_capture("x" * 30 + "\n" + "日" * 6 + "\nlast\n")
    assert screen.lines() == ["x" * 11, "日" * 5, "last"]


def test_feed_is_incremental():
    screen = VirtualScreen(10, 3)
    screen.feed("hel")
    screen.feed("lo\r\n\x1b[3")
    screen.feed("1mred")
    assert screen.lines() == ["hello", "red", ""]
    assert style_at(screen.to_rich(), len("hello\n")).color == Color.parse("red")
    assert screen.cursor == (3, 1)


def test_load_capture_forgets_what_came_before():
    screen = VirtualScreen(10, 2)
    screen.feed("old stuff\x1b[31m\x1b[")  # Ends inside an escape.
    screen.load_capture("new")
    assert screen.lines() == ["new", ""]
    assert screen.to_rich().spans == []


def test_resize():
    screen = VirtualScreen(10, 3)
    screen.load_capture("aaaaaaaaaa\nbbb\nccc")
    screen.resize(5, 2)
    assert (screen.width, screen.height) == (5, 2)
    assert screen.lines() == ["bbb", "ccc"]
    screen.resize(8, 4)
    assert screen.lines() == ["bbb", "ccc", "", ""]
    with pytest.raises(ValueError):
        screen.resize(0, 4)


@pytest.mark.parametrize(
    "junk",
    [
        "\x1b",
        "\x1b[",
        "\x1b[38;5",
        "\x1b[38;5;999m",
        "\x1b[38;2;999;999;999mx",
        "\x1b[48;2mx",
        "\x1b]0;title",
        "\x1b[?3hwide?",
        "\x1b[?5hreverse screen",
        "\x1b[999999999;999999999H*",
        "\x1b[99999L\x1b[99999M\x1b[99999@\x1b[99999P\x1b[99999X",
        "\x1b[5;2r\x1b[99S\x1b[99T",
        "\x00\x07\x08\t\x0b\x0c\x0e\x0f\x7f\x9b",
        "\x1b[1;2;3A\x1b[²m",  # Too many parameters; a digit int() rejects.
    ],
)
def test_junk_does_not_raise(junk):
    screen = VirtualScreen(12, 4)
    screen.load_capture(junk)
    screen.feed(junk)
    assert len(screen.lines()) == 4
    assert (screen.width, screen.height) == (12, 4)
    screen.to_rich()
    screen.to_rich_lines()


def test_a_malformed_sequence_is_skipped_and_the_rest_still_drawn():
    screen = VirtualScreen(10, 1)
    screen.load_capture("a\x1b[1;2;3Ab\x1b[²mc")  # pyte raises on both escapes by itself.
    assert screen.lines() == ["abc"]


def test_random_bytes_do_not_raise():
    rng = random.Random(1)
    screen = VirtualScreen(30, 6)
    alphabet = "\x1b[;?0123456789mHJKABCDr\n\r\t ab日"
    for _ in range(300):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(80))).decode("utf-8", "replace")
        junk += "".join(rng.choice(alphabet) for _ in range(rng.randrange(80)))
        screen.load_capture(junk)
        screen.feed(junk)
        assert len(screen.lines()) == 6
        assert len(screen.to_rich().plain.split("\n")) == 6
