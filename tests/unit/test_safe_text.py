"""Outside text shown safely: no control character reaches the terminal, nothing is read as markup."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from headspace_tui.shared.safe_text import clean, clean_block, cleaned, is_clean, safe

HOSTILE = "x_\x1b]52;c;SEVMTE8=\x1b\\_\x1b]0;TITLE\x07_\x1b[5n_\x9b31m_\u202egnp.exe"


def test_every_control_character_becomes_a_visible_placeholder():
    shown = clean(HOSTILE)
    assert is_clean(shown)
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown and "\u202e" not in shown
    assert "␛]52;c;SEVMTE8=␛\\_␛]0;TITLE␇_␛[5n" in shown  # the text stays readable, the escapes visible
    assert len(shown) == len(HOSTILE)  # one for one: styles built over it stay aligned


@pytest.mark.parametrize("code", [*range(0x20), 0x7F, *range(0x80, 0xA0)])
def test_each_control_code(code):
    assert is_clean(clean(f"a{chr(code)}b"))


def test_one_line_and_block():
    assert clean("a\nb\tc\r\n") == "a b c  "
    assert clean_block("a\nb\x1b") == "a\nb␛"


def test_markup_is_just_text():
    for name in ("a[/b]", "fix [/] bug", "[bold red]x", "use arr[/] ok"):
        text = safe(name)
        assert isinstance(text, Text) and text.plain == name
        console = Console(file=io.StringIO(), width=80, color_system=None)
        console.print(text)  # a markup string like these raises MarkupError when parsed
        assert name in console.file.getvalue()


def test_cleaned_keeps_styles_aligned():
    text = Text("state ")
    text.append("evil\x1b[2Jname", style="bold")
    out = cleaned(text)
    assert out.plain == "state evil␛[2Jname"
    assert [(s.start, s.end, str(s.style)) for s in out.spans] == [(6, 18, "bold")]


def test_huge_text_is_capped():
    assert len(clean("x" * 1_000_000)) == 10_000
