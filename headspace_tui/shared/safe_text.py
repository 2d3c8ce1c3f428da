"""Outside text as display text: the one place it is made safe to show.

Everything headspace shows was written by someone else: tmux session and
window names, pane folders and titles, Claude's prompts and replies, hook
events, transcripts, error messages.  Two things go wrong when such text is
shown as it is:

* **control characters reach the terminal.**  A folder named
  ``x_\\e]52;c;…\\e\\\\`` writes to the user's clipboard, changes the window
  title, or asks the terminal a question whose answer arrives as keystrokes.
  So every C0 and C1 control character, DEL, and the bidirectional overrides
  that reorder what the eye sees are replaced by a visible placeholder (the
  Unicode "control pictures": ESC shows as ␛, BEL as ␇).
* **it is parsed as markup.**  Textual and Rich read ``[b]``, ``[/]`` and
  ``[red]`` in plain strings; a session named ``a[/b]`` then crashes the app.
  So outside text only ever travels as ``rich.text.Text`` (or Textual
  ``Content``) built from ``clean``ed strings, never as a markup string.

``clean`` is for one-line places (a table cell, a title, a toast);
``clean_block`` keeps newlines for multi-line places (the why view).
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 controls, DEL, C1 controls; bidi embeddings, overrides and isolates; and
# the line/paragraph separators that break a one-line cell.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_BLOCK_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
REPLACEMENT = "\ufffd"
MAX_LENGTH = 10_000  # no display place needs more; a 50 MB name stays 10 KB


def _picture(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in "\t\n\r":
        return " "
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟, ␛ for ESC
    if code == 0x7F:
        return "\u2421"  # ␡
    return REPLACEMENT  # C1 controls, bidi controls, separators


def clean(value: object, limit: int = MAX_LENGTH) -> str:
    """``value`` as one line of safe display text: no control characters, at most ``limit`` long.

    Tabs and line breaks become spaces; every other control character a
    visible placeholder.  ``None`` is the empty string.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _UNSAFE.sub(_picture, text)


def clean_block(value: object, limit: int = MAX_LENGTH) -> str:
    """Like ``clean``, but newlines are kept (for multi-line display)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _BLOCK_UNSAFE.sub(_picture, text.replace("\r\n", "\n"))


def safe(value: object, style: str = "", limit: int = MAX_LENGTH) -> Text:
    """Outside text as a Rich ``Text``: cleaned, and never read as markup."""
    return Text(clean(value, limit), style=style)


def cleaned(text: Text, *, block: bool = False) -> Text:
    """A ``Text`` built from outside pieces, its characters cleaned and its styles kept.

    Each unsafe character is replaced by exactly one character, so the
    style spans still line up.
    """
    out = text.copy()
    plain = text.plain
    out.plain = (_BLOCK_UNSAFE if block else _UNSAFE).sub(_picture, plain)
    return out


def is_clean(text: str) -> bool:
    """True when ``text`` carries nothing ``clean`` would replace (newlines aside)."""
    return _BLOCK_UNSAFE.search(text) is None
