"""The ``d`` screen: what the selected agent changed, this turn or since it started, and remarks on it sent back as one prompt.

The diff comes from ``fetch(scope)`` (the service's ``changes``: git runs
there), awaited in a worker so that a slow git or a slow service is
a "loading…" line, never a frozen screen; ``t`` asks for the other scope,
``r`` asks again.  On the left the files (status, path, +/-), on the right
every file's diff in one scroll with a line cursor; ``]``/``[`` (or
``n``/``p``, or Enter on a file) jump between files.

Remarks: ``m`` anchors a range at the cursor and ``m`` again (or ``c`` on
one line) asks for the remark; ``x`` takes back the one under the cursor.
``s`` sends every remark on this agent as one prompt (changes/remarks.py)
through ``send``, the reply's own path (``Typing.send_text``), so it meets
the same refusals; the remarks are cleared once the agent took it, and
kept, with the reason in one line, when it did not.  They belong to the
agent, not to this screen (``remarks`` is the main screen's list for it):
closing the view keeps them for the next ``d``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...changes.model import Diff, failed
from ...changes.remarks import Remark, prompt
from ...shared.safe_text import clean
from ..widgets.diff_body import DiffBody
from ..widgets.diff_lines import Row, file_label, rows_of

SCOPES = {"turn": "this turn", "start": "since it started"}
Fetch = Callable[[str], Awaitable[Diff]]  # scope ("turn" or "start") -> the diff, awaited (the facade's coroutine: git runs in the service)
Send = Callable[[str, Callable[[str], None], Callable[[bool, str], None]], None]  # text, its refusal ("" when it went), how it went


class DiffScreen(ModalScreen[None]):
    """What ``target``'s agent changed (``fetch``), its remarks (``remarks``, kept by the caller) and their sending (``send``)."""

    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > Vertical { width: 100%; height: 100%; border: round $primary; background: $surface; }
    DiffScreen #title { height: 1; padding: 0 1; }
    DiffScreen #panes { height: 1fr; }
    DiffScreen #files { width: 30%; max-width: 50; height: 1fr; border: none; border-right: solid $primary-muted; }
    DiffScreen #empty { height: 1fr; padding: 1 2; color: $text-muted; }
    DiffScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    DiffScreen #status.-warning { color: $warning; }
    DiffScreen #remark { display: none; }
    DiffScreen #remark.-open { display: block; }
    """
    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("q", "close", "close", show=False),
        Binding("t", "scope", "this turn / since it started"),
        Binding("r", "refresh", "refresh"),
        Binding("right_square_bracket,n", "step_file(1)", "next file"),
        Binding("left_square_bracket,p", "step_file(-1)", "previous file"),
        Binding("m", "mark", "mark lines"),
        Binding("c", "remark", "remark"),
        Binding("x,delete", "unremark", "take back a remark", show=False),
        Binding("s", "send", "send remarks"),
    ]

    def __init__(self, target: str, pane_id: str, fetch: Fetch, send: Send, remarks: list[Remark], *, scope: str = "turn") -> None:
        super().__init__()
        self.target = target
        self.pane_id = pane_id
        self.fetch = fetch
        self.send = send
        self.remarks = remarks  # this agent's, kept by the main screen between openings: changed in place
        self.scope = scope
        self.diff: Diff | None = None  # the one shown (None while the first is loading)
        self.loading = False
        self.sending = ""  # the prompt on its way, until its report
        self._on_their_way: list[Remark] = []  # the remarks it carries (one added meanwhile is not cleared with them)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="title")
            with Horizontal(id="panes"):
                yield OptionList(id="files")
                yield DiffBody(id="diff")
            yield Static(id="empty")
            yield Static(id="status")
            yield Input(placeholder="your remark on the marked lines: Enter keeps it, Esc drops it", id="remark")

    def on_mount(self) -> None:
        self._show_title()
        self.load()

    # -- fetching ---------------------------------------------------------------------
    def load(self) -> None:
        """Fetch the diff of ``scope``, off the UI loop; "loading…" until it comes."""
        self.loading = True
        self._show_title()
        if self.diff is None:
            self._empty("loading…")
        self._say("loading…")
        self._fetch(self.scope, self.app.current_theme.dark if self.app.current_theme else True)

    @work(exclusive=True, group="diff", exit_on_error=False, description="the agent's changes")
    async def _fetch(self, scope: str, dark: bool) -> None:
        """Awaited, never waited on in a thread: a second ``t`` or ``r`` cancels the first, which holds nothing."""
        try:
            diff = await self.fetch(scope)
        except Exception as exc:  # noqa: BLE001 - a failed fetch is said on the screen, never a crash
            diff = failed(f"could not read the changes: {exc}")
        rows = await asyncio.to_thread(rows_of, diff, dark)  # syntax colouring: in a thread, not on the UI loop
        self._fetched(scope, diff, rows)

    def _fetched(self, scope: str, diff: Diff, rows: list[Row]) -> None:
        if scope != self.scope or not self.is_running:
            return  # the user asked for the other scope meanwhile: its own fetch follows
        self.loading = False
        self.diff = diff
        files = self.query_one("#files", OptionList)
        files.clear_options()
        files.add_options(Option(file_label(f)) for f in diff.files)
        if diff.more_files:
            files.add_option(Option(Text(f"… {diff.more_files} more files", style="dim italic"), disabled=True))
        body = self.query_one(DiffBody)
        body.show(rows, [f.path for f in diff.files], self.remarks)
        if diff.error:
            self._empty(Text(clean(diff.error), style="bold"))
        elif diff.empty:
            self._empty(Text.assemble(f"no change {SCOPES[scope]}", (f" ({clean(diff.note)})" if diff.note else "", "dim")))
        else:
            self._panes()
            files.highlighted = 0
            body.focus()
        self._show_title()
        self._say(self._hint())

    def _panes(self) -> None:
        self.query_one("#panes").display = True
        self.query_one("#empty").display = False

    def _empty(self, what: Text | str) -> None:
        """Instead of the files and lines: why there are none (loading, an error, no change)."""
        self.query_one("#panes").display = False
        empty = self.query_one("#empty", Static)
        empty.display = True
        empty.update(what if isinstance(what, Text) else Text(what))

    # -- what it says -------------------------------------------------------------------
    def _show_title(self) -> None:
        diff = self.diff
        parts: list[tuple[str, str] | str] = [("Changes of ", "bold"), (clean(self.target), "bold"), " · ", (SCOPES[self.scope], "bold")]
        if diff is not None and not self.loading and diff.summary():
            parts += [" · ", diff.summary()]
        if diff is not None and not self.loading and diff.note and not diff.empty:
            parts += [" · ", (clean(diff.note), "dim")]
        if self.remarks:
            parts += [" · ", (f"{len(self.remarks)} remark{'s' if len(self.remarks) != 1 else ''} (s sends)", "italic")]
        self.query_one("#title", Static).update(Text.assemble(*parts))

    def _hint(self) -> str:
        other = SCOPES["start" if self.scope == "turn" else "turn"]
        return f"t: {other} · ] [: files · m m: mark lines, c: remark, x: take back · s: send remarks · r: refresh · Esc: close"

    def _say(self, line: str, *, warning: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.set_class(warning, "-warning")
        status.update(Text(clean(line, 500)))

    # -- keys ---------------------------------------------------------------------------
    def action_close(self) -> None:
        """Esc: the remark being typed, then the marked range, then the screen."""
        remark = self.query_one("#remark", Input)
        if remark.has_class("-open"):
            self._close_remark()
            return
        body = self.query_one(DiffBody)
        if body.mark_start is not None:
            body.mark_start = None
            body.refresh()
            self._say(self._hint())
            return
        self.dismiss(None)

    def action_scope(self) -> None:
        self.scope = "start" if self.scope == "turn" else "turn"
        self.load()

    def action_refresh(self) -> None:
        self.load()

    def action_step_file(self, step: int) -> None:
        self.query_one(DiffBody).step_file(step)

    @on(OptionList.OptionSelected, "#files")
    def _file_chosen(self, event: OptionList.OptionSelected) -> None:
        body = self.query_one(DiffBody)
        body.jump_file(event.option_index)
        body.focus()

    @on(DiffBody.CursorMoved)
    def _cursor_moved(self, event: DiffBody.CursorMoved) -> None:
        files = self.query_one("#files", OptionList)
        if 0 <= event.file < files.option_count and files.highlighted != event.file:
            files.highlighted = event.file

    def action_mark(self) -> None:
        """``m``: anchor a range at the cursor; ``m`` again: a remark on the lines from the anchor to here."""
        body = self.query_one(DiffBody)
        if body.mark_start is None:
            if body.current is None or body.current.line is None:
                self._say("m marks a line of the diff: move to one first", warning=True)
                return
            body.mark_start = body.cursor
            body.refresh()
            self._say("marking: move to the last line, then m (or c); Esc drops the mark")
            return
        self.action_remark()

    def action_remark(self) -> None:
        """``c``: a remark on the marked lines (or the cursor's line)."""
        if self.diff is None or self.loading:
            return
        marked = self.query_one(DiffBody).marked()
        if marked is None:
            self._say("a remark is on lines of one file: move the cursor onto them", warning=True)
            return
        remark = self.query_one("#remark", Input)
        remark.value = ""
        remark.add_class("-open")
        remark.focus()
        file, lines = marked
        self._say(f"remark on {clean(self.diff.files[file].path)}, {len(lines)} line{'s' if len(lines) != 1 else ''}")

    @on(Input.Submitted, "#remark")
    def _remark_typed(self, event: Input.Submitted) -> None:
        event.stop()
        body = self.query_one(DiffBody)
        marked = body.marked()
        text = event.value.strip()
        if marked is not None and text and self.diff is not None:
            file, lines = marked
            self.remarks.append(Remark(self.diff.files[file].path, tuple(lines), text))
        body.mark_start = None
        self._close_remark()
        self.show_remarks()

    def _close_remark(self) -> None:
        remark = self.query_one("#remark", Input)
        remark.remove_class("-open")
        remark.value = ""
        self.query_one(DiffBody).focus()
        self._say(self._hint())

    def action_unremark(self) -> None:
        remark = self.query_one(DiffBody).current_remark
        if remark is None:
            self._say("no remark here to take back", warning=True)
            return
        self.remarks.remove(remark)
        self.show_remarks()

    def show_remarks(self) -> None:
        """The remarks as they are now: their rows, marks and count."""
        self.query_one(DiffBody).set_remarks(self.remarks)
        self._show_title()

    # -- sending ------------------------------------------------------------------------
    def action_send(self) -> None:
        """``s``: every remark on this agent, as one prompt, through the reply's path."""
        if self.sending:
            self._say("the remarks are on their way; wait for their report", warning=True)
            return
        if not self.remarks:
            self._say("no remarks to send: m marks lines, c adds a remark", warning=True)
            return
        text = prompt(self.remarks)
        self.sending = text
        self._on_their_way = list(self.remarks)
        self._say(f"sending {len(self.remarks)} remark{'s' if len(self.remarks) != 1 else ''}…")
        self.send(text, self._sent, self.reported)

    def _sent(self, refusal: str) -> None:
        if refusal and self.sending:
            self.sending = ""
            self._refused(refusal)

    def reported(self, delivered: bool, text: str) -> None:
        """How the remarks' prompt went: the remarks are cleared once the agent took it, kept (and the reason said) when not."""
        sent, self.sending = self.sending, ""
        if delivered and sent:
            # The agent's list: cleared of what was sent even if this screen was closed meanwhile.
            self.remarks[:] = [remark for remark in self.remarks if remark not in self._on_their_way]
        if not self.is_running:
            return
        if delivered:
            self.show_remarks()
            self._say(f"sent: {clean(text)}")
        else:
            self._refused(text)

    def _refused(self, reason: str) -> None:
        if self.is_running:
            self._say(f"not sent: {reason}; the remarks are kept (s tries again)", warning=True)
