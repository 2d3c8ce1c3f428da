"""The live preview of the selected pane, and the prompt bar under it.

The preview renders the pane's last capture through a pyte virtual screen, so
colours are the pane's own.  When the preview is smaller than the pane, the
bottom rows are shown: that is where Claude draws its prompts.

What reaches the terminal is kept to what changed, because over ssh every
byte is the user's: a new capture repaints only the cells that differ from
what is on screen (a spinner tick is a glyph and a digit, not the box), the
border only when its title changes, and at most ``max_fps`` times a second
(fewer over ssh).
"""

from __future__ import annotations

import os
import time

from rich.cells import cell_len
from rich.containers import Lines
from rich.style import Style
from rich.text import Text
from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from ...detect.approval import approval
from ...model import Agent
from ...screen.virtual import VirtualScreen
from ...shared.safe_text import clean


def over_ssh(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether headspace's terminal is (probably) at the other end of an ssh link.

    ssh sets these in the login shell; tmux copies ``SSH_CONNECTION`` into a
    session's environment when a client attaches over ssh (its default
    ``update-environment``), so a headspace started in that session sees it.
    """
    return any(environ.get(name) for name in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT"))


# One cell of a rendered row: its text, style, and whether it is the left
# (1) or right (2) half of a double-width character (0: neither).
_Cell = tuple[str, Style | None, int]


def _cells(strip: Strip) -> list[_Cell]:
    cells: list[_Cell] = []
    for segment in strip:
        if segment.control:
            continue
        style = segment.style
        for char in segment.text:
            width = cell_len(char)
            if width == 0 and cells:  # a combining mark belongs to the cell before it
                last = cells[-1]
                cells[-1] = (last[0] + char, last[1], last[2])
            elif width == 2:
                cells += [(char, style, 1), (char, style, 2)]
            else:
                cells.append((char, style, 0))
    return cells


def changed_span(before: Strip, after: Strip) -> tuple[int, int] | None:
    """The cells ``[start, end)`` where two rendered rows differ (text or style), or None.

    A double-width character is never cut in half: a span that starts or ends
    inside one is widened to cover it.
    """
    old, new = _cells(before), _cells(after)
    blank: _Cell = (" ", None, 0)
    size = max(len(old), len(new))
    old += [blank] * (size - len(old))
    new += [blank] * (size - len(new))
    start = next((x for x in range(size) if old[x] != new[x]), None)
    if start is None:
        return None
    end = next(x for x in range(size - 1, -1, -1) if old[x] != new[x]) + 1
    while start > 0 and 2 in (old[start][2], new[start][2]):
        start -= 1
    while end < size and 1 in (old[end - 1][2], new[end - 1][2]):
        end += 1
    return start, end


class PanePreview(Widget):
    DEFAULT_CSS = """
    PanePreview { height: 1fr; border: round $primary-darken-2; overflow: hidden; }
    PanePreview.-input { border: heavy $warning; border-title-color: $warning; border-title-style: bold; }
    """

    # Repaints a second, at most: a spinning pane must not turn the preview into a
    # CPU load, nor the link into a stream of frames.  Over ssh, fewer: Claude's
    # spinner moves several times a second, and every frame crosses the link.
    MAX_FPS = 4
    SSH_FPS = 2

    def __init__(self, *, max_fps: float | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_fps = max_fps or (self.SSH_FPS if over_ssh() else self.MAX_FPS)
        self._text: Text = Text("Select an agent to see its pane here.", style="dim")
        self._key: tuple | None = None
        self._screen: VirtualScreen | None = None
        self._pending: tuple | None = None
        self._last_paint = 0.0
        self._rows: list[Text] = []
        self._rows_size: Size | None = None
        self._strips: dict[int, Strip] = {}  # rows as drawn, by y (for the base style below)
        self._strips_style: Style | None = None
        self._title: str | None = None  # the border's title as set
        self._history: list[Text] | None = None  # the pane's history while scrolled back
        self._history_title = ""
        self.history_of: str | None = None  # the pane whose history is shown (None: live)
        self.back = 0  # lines scrolled back from the bottom of the history

    def show(self, title: str, ansi: str, width: int, height: int) -> None:
        """Show a capture; repaints are held to ``max_fps`` (the newest capture wins)."""
        key = (title, ansi, width, height)
        if key == self._key:
            return
        if self._history is not None:
            self._pending = key  # shown when back to live
            return
        wait = self._last_paint + 1 / self.max_fps - time.monotonic()
        if wait > 0 and self._key is not None and self._key[0] == title:
            if self._pending is None:
                self.set_timer(wait, self._paint_pending)
            self._pending = key
            return
        self._paint(key)

    def _paint_pending(self) -> None:
        if self._history is not None:
            return  # kept for the return to live
        key, self._pending = self._pending, None
        if key is not None and key != self._key:
            self._paint(key)

    def _paint(self, key: tuple) -> None:
        title, ansi, width, height = key
        self._key = key
        # What is painted is the newest capture: one held back for the pacing
        # timer is older, and a timer firing late (a busy loop) must not paint
        # it over this one.
        self._pending = None
        self._last_paint = time.monotonic()
        width, height = max(width, 1), max(height, 1)
        if self._screen is None or (self._screen.width, self._screen.height) != (width, height):
            self._screen = VirtualScreen(width, height)
        self._screen.load_capture(ansi)
        self._text = self._screen.to_rich()
        self._set_title(title)
        self._relayout()

    def _set_title(self, title: str) -> None:
        """Set the border's title; only a new one repaints (setting it repaints the whole box, border and all)."""
        if title != self._title:
            self._title = title
            self.border_title = Content(clean(title))  # a name is data, never markup

    # -- scrollback: the pane's history, frozen, until back to live -------------------
    def show_history(self, pane_id: str, title: str, ansi: str, width: int) -> None:
        """Show a capture with history (``capture-pane -S -N``), scrolled to its bottom; live captures wait."""
        lines = ansi.split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        screen = VirtualScreen(max(width, 1), max(len(lines), 1))
        screen.load_capture("\n".join(lines))
        self._history = list(screen.to_rich().split("\n", allow_blank=True))
        self.history_of = pane_id
        self._history_title = title
        self.back = 0
        self.scroll_history(0)

    @property
    def in_history(self) -> bool:
        return self._history is not None

    def scroll_history(self, pages: float) -> None:
        """Move ``pages`` pages back (positive) or forward (negative) through the history."""
        if self._history is None:
            return
        room = max(1, self.content_size.height)
        most = max(0, len(self._history) - room)
        self.back = max(0, min(most, self.back + int(pages * room)))
        self._set_title(f"{self._history_title} · history, {self.back} lines back · Esc: live")
        self._relayout()

    def live(self) -> None:
        """Back to the pane as it is now."""
        if self._history is None:
            return
        self._history = None
        self.history_of = None
        self.back = 0
        if self._key is not None:
            self._set_title(self._key[0])
        self._relayout()
        self._paint_pending()

    def waiting(self, title: str, message: str) -> None:
        """The pane ``title`` is selected, its screen not here yet: its title now, and ``message`` until ``show`` (painted at once then)."""
        if self._history is not None or (self._key is None and self._title == title):
            return  # its history is shown (it waits for live), or this is shown already
        self._key = None
        self._pending = None
        self._text = Text(message, style="dim")
        self._set_title(title)
        self._relayout()

    def clear(self, message: str) -> None:
        self._key = None
        self._pending = None
        self._history = None
        self.history_of = None
        self._text = Text(message, style="dim")
        self._set_title("")
        self._relayout()

    # -- drawing: the line API, so a spinner tick repaints one row, not the pane --
    def _layout(self) -> list[Text]:
        """The rows to show at the current size: trailing blanks dropped, gaps folded, cropped."""
        if self._history is not None:
            room = max(1, self.content_size.height)
            end = len(self._history) - self.back
            window = [row.copy() for row in self._history[max(0, end - room) : end]]
            for row in window:
                row.truncate(max(1, self.content_size.width), overflow="crop")
            return window
        rows = self._text.split("\n", allow_blank=True)
        # Trailing blank rows carry nothing; the bottom of the content is where prompts are.
        while len(rows) > 1 and not rows[-1].plain.strip():
            rows.pop()
        room = max(1, self.content_size.height)
        if len(rows) > room:
            # Claude's alternate screen leaves a tall blank gap between transcript
            # and input box; when space is short, fold it rather than lose content.
            rows = Lines(row for i, row in enumerate(rows) if row.plain.strip() or i == 0 or rows[i - 1].plain.strip())
        width = max(1, self.content_size.width)
        visible = rows[-room:]
        for row in visible:
            row.truncate(width, overflow="crop")  # a pane wider than the preview is cropped, never wrapped
        return visible

    def _relayout(self) -> None:
        """Recompute the rows; repaint only the cells that changed (everything, if the size changed)."""
        old, old_size = self._rows, self._rows_size
        self._rows = self._layout()
        self._rows_size = self.content_size
        if old_size != self.content_size or self._strips_style != self.rich_style:
            self._strips.clear()
            self.refresh()
            return
        for y in range(max(len(old), len(self._rows))):
            before = old[y] if y < len(old) else None
            after = self._rows[y] if y < len(self._rows) else None
            if before == after:
                continue  # its strip is still right
            drawn = self._strips.pop(y, None)
            if drawn is None:
                drawn = self._render_row(before)
            span = changed_span(drawn, self._strip(y))
            if span is not None:
                start, end = span
                self.refresh(Region(start, y, end - start, 1))

    def on_resize(self) -> None:
        self._relayout()

    def _render_row(self, row: Text | None) -> Strip:
        width = self.content_size.width
        base = self.rich_style
        if row is None:
            return Strip.blank(width, base)
        return Strip(list(row.render(self.app.console))).apply_style(base).crop_extend(0, width, base)

    def _strip(self, y: int) -> Strip:
        base = self.rich_style
        if base != self._strips_style:  # a new theme: every row again
            self._strips.clear()
            self._strips_style = base
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = self._render_row(self._rows[y] if y < len(self._rows) else None)
        return strip

    def render_line(self, y: int) -> Strip:
        return self._strip(y)


class PromptBar(Static):
    """What the selected agent waits for, with the keys that answer it."""

    DEFAULT_CSS = """
    PromptBar { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    """

    _shown: Text | None = None

    def show_agent(self, agent: Agent | None, keys: dict[str, str]) -> None:
        """Show what ``agent`` waits for; the same text again repaints nothing."""
        text = prompt_bar_text(agent, keys)
        if text != self._shown:
            self._shown = text
            self.update(text)

    def show_input(self, target: str, pane_id: str, leave: str) -> None:
        """Input mode: where the keys go and how to leave (instead of the agent's prompt)."""
        text = Text()
        text.append(" INPUT ", style="bold reverse")
        text.append("  your keys go to ")
        text.append(f"{clean(target)} ({clean(pane_id)})", style="bold")
        text.append(f" as you type · {leave} leaves\n")
        text.append("not forwarded: other Ctrl keys, Shift+Tab, Alt and function keys", style="dim")
        if text != self._shown:
            self._shown = text
            self.update(text)


def _key_name(key: str) -> str:
    return {"escape": "Esc", "enter": "Enter", "slash": "/", "question_mark": "?"}.get(key, key)


def prompt_bar_text(agent: Agent | None, keys: dict[str, str]) -> Text:
    if agent is None:
        return Text("No agent selected.", style="dim")
    obs = agent.observation
    prompt = obs.prompt
    text = Text()
    text.append(f"{clean(agent.target)}  ", style="bold")
    if prompt is not None and prompt.options and prompt.kind != "starting":
        text.append(clean(prompt.title) + "\n", style="bold")
        yes, no = approval(prompt), prompt.no
        if yes is not None and prompt.kind in ("permission", "plan"):
            text.append(f"[{_key_name(keys['approve'])}] → ", style="bold green")
            text.append(f"{clean(yes.describe())}   ")
            if yes.widens:
                text.append("(asks first)   ", style="bold red")
        if no is not None:
            text.append(f"[{_key_name(keys['deny'])}] ", style="bold red")
            text.append(f"{clean(no.label)}   ")
        elif prompt.deny_key:
            text.append(f"[{_key_name(keys['deny'])}] ", style="bold red")
            text.append(f"No ({prompt.deny_key})   ")
        text.append("\n")
        for option in prompt.options:
            if option.key:
                text.append(f"[{option.key}] ", style="bold")
                if option.ticked is not None:  # a multi-select box: the digit toggles it
                    text.append("[✔] " if option.ticked else "[ ] ", style="bold green" if option.ticked else "dim")
                text.append(f"{clean(option.label)}  ")
        if prompt.multi_select or prompt.review:
            text.append(f"[{_key_name(keys['submit'])}] ", style="bold")
            text.append("submit every answer" if prompt.review else ("submit the ticked" if prompt.last_page else "next question"))
        if prompt.free_text:
            text.append(f"[{_key_name(keys['reply'])}] ", style="bold")
            text.append("type your own answer")
        return text
    if obs.state.value in ("idle", "input", "error"):
        if prompt is not None and prompt.kind == "input":
            text.append(clean(prompt.title) + "\n", style="bold")
        text.append(f"[{_key_name(keys['reply'])}] ", style="bold")
        text.append("reply   ")
        text.append(f"[{_key_name(keys['nudge'])}] ", style="bold")
        text.append("nudge")
        return text
    if obs.state.value == "working":
        text.append(f"working — [{_key_name(keys['interrupt'])}] interrupt", style="dim")
        return text
    if prompt is not None and prompt.kind == "starting":
        text.append(f"{clean(prompt.title)} — answer it in the pane ([{_key_name(keys['jump'])}] jump)", style="dim")
        return text
    text.append(obs.state.value, style="dim")
    return text
