"""The main screen: agent table, live preview, prompt bar, one-key answers.

It owns its keys, its layout breakpoints and its widgets, and decides in
``check_action`` (through ``policy.key_allowed``, the one table every front
end shares) which keys the selected agent allows; the footer shows only
those.  Everything it shows comes from the service it is handed (its events
arrive as messages, posted here by the app), and every answer goes to the
service's answerer, which reports back how it went.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.geometry import Offset
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ...config import Config
from ...config import default_path as default_config_path
from ...model import Agent
from ...safe_text import clean
from ...service import Intent, IntentKind, Report, Service, ServiceError, key_allowed, live_keys
from ..guard import ui_handler as _handler
from ..messages import AgentChanged, AgentRemoved, PaneCaptured, ProblemChanged
from ..widgets.agent_table import AgentTable
from ..widgets.footer import KeysFooter
from ..widgets.preview import PanePreview, PromptBar
from ..widgets.summary import SummaryLine, empty_text, summary_text
from .batch import BatchApproveScreen
from .help import HelpScreen, help_rows
from .reply import ReplyScreen
from .timeline import TimelineScreen
from .why import WhyScreen

if TYPE_CHECKING:
    from ..main import HeadspaceApp

SIDE_BY_SIDE_MIN_WIDTH = 140
TABLE_ONLY_BELOW = 18

log = logging.getLogger(__name__)


class FilterInput(Input):
    """The ``/`` filter; Esc clears and closes it (and never reaches an agent)."""

    BINDINGS = [Binding("escape", "close", "close filter")]

    def action_close(self) -> None:
        self.value = ""
        cast(MainScreen, self.screen).close_filter()


class MainScreen(Screen):
    """The app's default screen (table, preview, prompt bar): its keys, its layout, its answers."""

    # Each binding's tooltip is its line on the help screen (generated from these, so the two agree).
    BINDINGS = [
        Binding("y", "approve", "approve", id="approve", tooltip="approve: choose the first 'Yes' of a permission or plan"),
        Binding("n", "deny", "deny", id="deny", tooltip="deny: choose the 'No' option (found by its label)"),
        Binding("r", "reply", "reply", id="reply", tooltip="reply with free text at Claude's input box"),
        Binding("c", "nudge", "nudge", id="nudge", tooltip="nudge an idle agent (the configured text, default 'continue')"),
        Binding("x", "interrupt", "interrupt", id="interrupt", tooltip="interrupt a working agent (sends Esc to its pane)"),
        Binding(
            "A",
            "approve_all",
            "approve all",
            id="approve_all",
            tooltip="batch: approve every waiting request identical to this one, through Claude's hook, after a list to confirm",
        ),
        *[Binding(str(n), f"option('{n}')", f"option {n}", show=False, tooltip="pick that option of a numbered menu") for n in range(1, 10)],
        Binding("enter", "jump", "jump", id="jump", tooltip="jump: switch your tmux client to the agent's pane (or print the attach command)"),
        # Esc is every TUI user's "close this": it never reaches an agent.
        Binding("escape", "close_overlay", "close", show=False, tooltip="close the filter, a window, or the scrolled-back preview"),
        Binding("question_mark", "help", "help", id="help", tooltip="this help"),
        Binding("q", "quit", "quit", id="quit", tooltip="quit"),
        Binding("slash", "filter", "filter", id="filter", tooltip="filter the table by target, folder, state or text"),
        Binding("e", "why", "why", id="why", tooltip="why: every source's verdict, its age and evidence"),
        Binding("t", "timeline", "timeline", id="timeline", show=False, tooltip="timeline: the agent's states, commands and outcomes"),
        Binding("l", "toggle_layout", "layout", id="toggle_layout", show=False, tooltip="preview beside or under the table"),
        Binding("left_square_bracket", "scroll_back", "history", id="scroll_back", show=False, tooltip="preview: a page back through the pane's history (tmux scrollback)"),
        Binding("right_square_bracket", "scroll_forward", "forward", id="scroll_forward", show=False, tooltip="preview: a page forward (at the bottom: live again)"),
    ]
    # Side by side from SIDE_BY_SIDE_MIN_WIDTH columns (with the layout on "auto");
    # below TABLE_ONLY_BELOW rows, the table alone (the preview needs height to help).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (SIDE_BY_SIDE_MIN_WIDTH, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TABLE_ONLY_BELOW, "-tall")]

    # What drives the display: the hosts' problem (the summary line and the
    # empty state) and the layout setting (the body's class).
    problem: reactive[str | None] = reactive(None, init=False)
    layout_mode: reactive[str] = reactive("auto", init=False)

    def __init__(self, service: Service, config: Config) -> None:
        super().__init__()
        self.service = service
        self.config = config
        self.clock = service.clock
        self.set_reactive(MainScreen.layout_mode, config.layout)
        self._keys_for: frozenset[str] | None = None  # the agent keys the footer shows

    @property
    def headspace(self) -> HeadspaceApp:
        return cast("HeadspaceApp", self.app)

    def restyle(self) -> None:
        """The theme changed (or the table is new): rows in the theme's state colours."""
        self.table.restyle(self.headspace.state_styles, self.headspace.warning_style)

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self.query_one("#filter", FilterInput).cursor_blink = False
        self.service.answerer.subscribe(self._answer_reported)
        self.restyle()
        self._apply_layout()
        self._refresh_summary()
        if not self.service.live:
            self.problem = None
        self.set_interval(1.0, self._tick)
        self.table.focus()
        self._park_cursor()

    def set_layout(self, mode: str) -> None:
        self.layout_mode = mode

    def compose(self) -> ComposeResult:
        yield SummaryLine(id="summary")
        yield FilterInput(placeholder="filter: target, folder, state…", id="filter")
        with Container(id="body"):
            with Vertical(id="left"):
                yield AgentTable(id="agents", clock=self.clock)
                yield Static(id="empty")
            with Vertical(id="right"):
                yield PanePreview(id="preview")
                yield PromptBar(id="prompt")
        yield KeysFooter()

    @property
    def table(self) -> AgentTable:
        return self.query_one(AgentTable)

    @_handler
    def on_agent_changed(self, message: AgentChanged) -> None:
        agent = message.agent
        self.table.upsert(agent)
        self._refresh_summary()
        if agent.pane_id == self.table.selected_pane_id:
            self._refresh_prompt_bar()
            self._refresh_keys()
        elif self.service.focused is None:
            self._selection_changed()

    @_handler
    def on_agent_removed(self, message: AgentRemoved) -> None:
        self.table.remove_agent(message.pane_id)
        self._refresh_summary()
        self._selection_changed()

    @_handler
    def on_problem_changed(self, message: ProblemChanged) -> None:
        self.problem = message.problem

    def watch_problem(self) -> None:
        self._refresh_summary()

    def watch_layout_mode(self) -> None:
        self._apply_layout()

    def _refresh_summary(self) -> None:
        agents = self.table.agents
        self.query_one("#summary", SummaryLine).show(summary_text(agents.values(), self.problem, self.service.waited_today(agents, self.clock())))
        empty = self.query_one("#empty", Static)
        empty.display = not agents
        if not agents:
            empty.update(empty_text(self.problem))

    @_handler
    def _tick(self) -> None:
        self.table.tick()
        self._refresh_summary()

    # -- selection, preview, prompt bar -----------------------------------------------
    def selected_agent(self) -> Agent | None:
        pane_id = self.table.selected_pane_id
        return self.table.agents.get(pane_id) if pane_id else None

    @on(DataTable.RowHighlighted)
    @_handler
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.query(AgentTable):  # a highlight from a table already taken down (shutting down)
            return
        self._selection_changed()

    def _selection_changed(self) -> None:
        agent = self.selected_agent()
        preview = self.query_one(PanePreview)
        if preview.history_of is not None and (agent is None or agent.pane_id != preview.history_of):
            preview.live()  # another agent: its pane as it is now
        self.service.focus(agent.pane_id if agent else None)
        self._refresh_prompt_bar()
        self._refresh_preview()
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        """The footer offers the keys the selected agent allows: rebuild it only when those change.

        (A footer rebuild restyles every key; on each update it cost about
        2% of a core at 50 busy agents.)
        """
        live = live_keys(self.selected_agent())
        if live != self._keys_for:
            self._keys_for = live
            self.refresh_bindings()

    @_handler
    def on_pane_captured(self, message: PaneCaptured) -> None:
        """The monitor read a pane that changed: repaint the preview if it is the one shown."""
        if message.pane_id == self.table.selected_pane_id:
            self._refresh_preview()

    def _refresh_prompt_bar(self) -> None:
        self.query_one(PromptBar).show_agent(self.selected_agent(), self.config.keys)

    def _refresh_preview(self) -> None:
        preview = self.query_one(PanePreview)
        agent = self.selected_agent()
        if agent is None:
            preview.clear("No agent selected.")
            return
        screen = self.service.screen(agent.pane_id)
        if screen is None:
            return
        preview.show(f"{agent.target} ({agent.pane_id})", screen.ansi, screen.width, screen.height)

    # -- layout ----------------------------------------------------------------
    def _apply_layout(self) -> None:
        """``auto`` follows the main screen's breakpoint classes (-wide / -narrow) in the stylesheet."""
        body = self.query_one("#body")
        for mode in ("auto", "side", "stacked"):
            body.set_class(self.layout_mode == mode, mode)

    def action_toggle_layout(self) -> None:
        body = self.query_one("#body")
        side = body.has_class("side") or (body.has_class("auto") and self.has_class("-wide"))
        self.layout_mode = "stacked" if side else "side"

    # -- which keys are live ----------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Agent keys only where they can do something for the selected agent (``policy.key_allowed``; the footer shows only those)."""
        if not self.is_running:
            return True
        try:
            agent = self.selected_agent()
        except Exception:  # noqa: BLE001 - the main screen is still being built
            return True
        return key_allowed(action, agent)

    # -- filter and help ----------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#filter", FilterInput)
        box.display = True
        box.cursor_blink = True
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.table.set_filter(event.value)
        self._selection_changed()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    def close_filter(self) -> None:
        box = self.query_one("#filter", FilterInput)
        box.display = False
        box.cursor_blink = False  # a hidden input must not keep a blink timer busy
        self._park_cursor()
        self.table.set_filter("")
        self.table.focus()
        self._selection_changed()

    def _park_cursor(self) -> None:
        """Put the terminal's (hidden) cursor in the top-right corner.

        Textual leaves it where the filter input last had it, bottom-left; a
        terminal or tool that draws the cursor anyway shows a stray glyph there.
        """
        self.app.cursor_position = Offset(max(0, self.size.width - 1), 0)

    def action_why(self) -> None:
        agent = self.selected_agent()
        if agent is None or not self._keys_live():
            return
        now = self.clock()
        explanation, channel = self.service.why(agent, now)
        self.app.push_screen(WhyScreen(agent, explanation, now, self.headspace.state_styles, channel))

    def action_timeline(self) -> None:
        agent = self.selected_agent()
        if agent is None or not self._keys_live():
            return
        self.app.push_screen(TimelineScreen(agent, self.service.timeline(agent), self.headspace.state_styles))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(help_rows(self), str(self.headspace.config_path or default_config_path())))

    # -- answering -------------------------------------------------------------------
    def _keys_live(self) -> bool:
        """Agent keys act only on the main screen with the table focused (not while typing a filter)."""
        return self.app.screen is self and not isinstance(self.focused, Input)

    def action_approve(self) -> None:
        self._act(Intent(IntentKind.APPROVE))

    def action_deny(self) -> None:
        self._act(Intent(IntentKind.DENY))

    def action_option(self, number: str) -> None:
        self._act(Intent(IntentKind.OPTION, option=number))

    def action_nudge(self) -> None:
        self._act(Intent(IntentKind.NUDGE, text=self.config.nudge_text))

    def action_interrupt(self) -> None:
        self._act(Intent(IntentKind.INTERRUPT))

    def _target(self) -> Agent | None:
        """The agent a key acts on, or None (and why) when keys must not act now."""
        if not self._keys_live():
            return None
        agent = self.selected_agent()
        if agent is None:
            self.notify("No agent selected.", severity="warning")
        return agent

    def action_reply(self) -> None:
        agent = self._target()
        if agent is None:
            return
        seen = agent.observation
        question = seen.prompt.title if seen.prompt and seen.prompt.kind == "input" else ""

        def done(text: str | None) -> None:
            if not text:
                return
            refusal = self.service.answerer.answer(agent, Intent(IntentKind.TEXT, text=text), seen=seen)
            if refusal:
                self.notify(clean(f"{agent.target}: {refusal}; reply not sent"), severity="warning", markup=False)

        self.app.push_screen(ReplyScreen(agent.target, question), done)

    def action_close_overlay(self) -> None:
        """Esc on the main screen: close the filter if it is open, else end the scrollback; never a key to an agent."""
        if self.query_one("#filter", FilterInput).display:
            self.close_filter()
        else:
            self.action_preview_live()

    # -- the preview's scrollback ---------------------------------------------------------
    HISTORY_LINES = 2000

    def action_scroll_back(self) -> None:
        preview = self.query_one(PanePreview)
        if preview.in_history:
            preview.scroll_history(1)
            return
        agent = self.selected_agent()
        width = self.service.width(agent.pane_id) if agent else None
        if agent is None or width is None:
            return
        self._fetch_history(agent.pane_id, f"{agent.target} ({agent.pane_id})", width)

    @work(group="history", exclusive=True, exit_on_error=False)
    async def _fetch_history(self, pane_id: str, title: str, width: int) -> None:
        """The pane with its tmux history, through the session's control client."""
        try:
            ansi = await self.service.history(pane_id, self.HISTORY_LINES)
        except ServiceError as exc:
            self.notify(clean(f"cannot read the history of {title}: {exc}"), severity="warning", markup=False)
            return
        self._show_history(pane_id, title, ansi, width)

    @_handler
    def _show_history(self, pane_id: str, title: str, ansi: str, width: int) -> None:
        if pane_id != self.table.selected_pane_id:
            return  # the user moved on meanwhile
        preview = self.query_one(PanePreview)
        preview.show_history(pane_id, title, ansi, width)
        preview.scroll_history(1)

    def action_scroll_forward(self) -> None:
        preview = self.query_one(PanePreview)
        if not preview.in_history:
            return
        if preview.back == 0:
            self.action_preview_live()
        else:
            preview.scroll_history(-1)

    def action_preview_live(self) -> None:
        self.query_one(PanePreview).live()

    def _act(self, intent: Intent) -> None:
        agent = self._target()
        if agent is None:
            return
        refusal = self.service.answerer.answer(agent, intent)
        if refusal:
            self.notify(clean(f"{agent.target}: {refusal}; nothing sent"), severity="warning", markup=False)

    def action_approve_all(self) -> None:
        """Approve every waiting request identical to the selected one, after a list the user confirms."""
        agent = self._target()
        if agent is None:
            return
        pairs, reason = self.service.answerer.batch(agent)
        if reason:
            self.notify(clean(f"{agent.target}: {reason}"), severity="warning", markup=False)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.notify(clean(self.service.answerer.approve_batch(pairs)), markup=False)

        self.app.push_screen(BatchApproveScreen(pairs), done)

    @_handler
    def _answer_reported(self, report: Report) -> None:
        """How an answer went, in one line; after one that landed, the selection moves on like an inbox."""
        self.notify(clean(report.text), severity=report.severity, markup=False)  # type: ignore[arg-type]
        if report.move_on and report.pane_id == self.table.selected_pane_id:
            self._next_waiting(after=report.pane_id)

    def _next_waiting(self, *, after: str) -> None:
        """Like an inbox: once an agent is answered, select the next one that needs you (if any)."""
        for pane_id in self.table.order:
            agent = self.table.agents[pane_id]
            if pane_id != after and agent.state.needs_you:
                self.table.select(pane_id)
                return

    # -- jump -----------------------------------------------------------------------
    def action_jump(self) -> None:
        """Move the user's own tmux client to the agent; outside tmux, end and print how to attach."""
        if not self._keys_live():
            return
        agent = self.selected_agent()
        if agent is None or agent.placeholder:
            return
        try:
            jump = self.service.jump(agent)
        except ServiceError as exc:
            self.notify(clean(str(exc)), severity="error", markup=False)
            return
        if jump.notice:
            self.notify(clean(jump.notice), severity="warning", markup=False)
        if jump.end:
            self.app.exit(jump.exit_with or None)
