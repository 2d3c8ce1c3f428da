"""The main screen: agent table, live preview, prompt bar, one-key answers.

It owns its keys, its layout breakpoints and its widgets, and decides in
``check_action`` (through ``policy.key_allowed``, the one table every front
end shares) which keys the selected agent allows; the footer shows only
those.  What it shows comes from the service: its events arrive as
messages the app posts here (messages.py), and what else it needs it asks
the service for (a pane's screen, why, a timeline, a jump); every answer
goes to the service (``Service.answer``), which reports back to the app.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from rich.style import Style
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.geometry import Offset
from textual.reactive import reactive
from textual.widgets import DataTable, Input, Static
from textual.widgets._toast import Toast

from ...model import Agent, AgentState
from ...service.facade import REACTION_TIME, Intent, IntentKind, Report, Service, ServiceError, key_allowed, live_keys
from ...shared.config import Config
from ...shared.config import default_path as default_config_path
from ...shared.safe_text import clean
from ..guard import ui_handler
from ..input_mode import LEAVE_KEY, LEAVE_SHOWN
from ..messages import AgentChanged, AgentRemoved, PaneCaptured, ProblemChanged
from ..widgets.agent_table import AgentTable
from ..widgets.filter_input import FilterInput
from ..widgets.footer import KeysFooter
from ..widgets.preview import PanePreview, PromptBar
from ..widgets.summary import SummaryLine, empty_text, summary_text
from .batch import BatchApproveScreen
from .help import HelpScreen, help_rows
from .scrollback import ScrollbackActions
from .timeline import TimelineScreen
from .triage import TRIAGE_BINDINGS, TriageScreen
from .typing_actions import TypingActions
from .why import WhyScreen
from .widen import ask_before_widening

if TYPE_CHECKING:
    from ..main import HeadspaceApp

SIDE_BY_SIDE_MIN_WIDTH = 140
LAYOUT_WORDS = {"auto": "auto", "side": "beside", "stacked": "under"}  # the layout setting's values, as the user reads them (in ``l``'s order)
TABLE_ONLY_BELOW = 18
KEY_MEMORY = 2.0  # a key's read time older than this is not the time of the action now running
BACK_NOTICE_SECONDS = 12.0  # a "not delivered" line that says how to go back stays long enough to be read and acted on
# The keys that answer a prompt (y, n, digits; A and r go through _target too): not applied to an agent
# that just came under the cursor by itself.
ANSWERING = frozenset({IntentKind.APPROVE, IntentKind.DENY, IntentKind.OPTION})


class MainScreen(TypingActions, TriageScreen, ScrollbackActions):
    """The app's default screen (table, preview, prompt bar): its keys, its layout, its answers."""

    # Each binding's tooltip is its line on the help screen (generated from these, so the two agree).
    BINDINGS = [
        Binding("y", "approve", "approve", id="approve", tooltip="approve only this request or plan (widens nothing)"),
        Binding("n", "deny", "deny", id="deny", tooltip="deny: choose the 'No' option (found by its label)"),
        Binding("r", "reply", "reply", id="reply", tooltip="reply with free text: at Claude's input box, or into a question's own 'Type something.' option"),
        Binding("c", "nudge", "nudge", id="nudge", tooltip="nudge an idle agent (the configured text, default 'continue')"),
        Binding("x", "interrupt", "interrupt", id="interrupt", tooltip="interrupt a working agent (sends Esc to its pane)"),
        Binding(
            "i",
            "input_mode",
            "input",
            id="input_mode",
            show=False,
            tooltip=f"input mode: your keys go straight to the selected agent's pane (text, Enter, Backspace, arrows, Tab, Esc) until {LEAVE_SHOWN}",
        ),
        # Priority: it acts before input mode sees the key, so it is never forwarded.
        Binding(LEAVE_KEY, "leave_input", "leave INPUT", id="leave_input", priority=True, tooltip=f"{LEAVE_SHOWN}: leave input mode (never forwarded; nor are Ctrl keys, Shift+Tab, Alt, F-keys)"),
        Binding(
            "A",
            "approve_all",
            "approve all",
            id="approve_all",
            tooltip="batch: approve every waiting request identical to this one, through Claude's hook, after a list to confirm",
        ),
        *[Binding(str(n), f"option('{n}')", f"option {n}", show=False, tooltip="pick that option of a numbered menu (at a multi-select question: tick or untick its box)") for n in range(1, 10)],
        Binding(
            "S",
            "submit",
            "submit",
            id="submit",
            tooltip="submit a multi-select question's ticks (on to the next question, or to Claude's review and its 'Submit answers')",
        ),
        Binding("enter", "jump", "jump", id="jump", tooltip="jump: switch your tmux client to the agent's pane (or print the attach command)"),
        # Like `cd -`: back to where the inbox came from, when the answer given there did not land.
        Binding("minus", "back", "back", id="back", show=False, tooltip="back to the agent whose answer did not land (after the inbox moved on)"),
        # Esc is every TUI user's "close this": it never reaches an agent.
        Binding("escape", "close_overlay", "close", show=False, tooltip="close the filter, a window, or the scrolled-back preview"),
        Binding("question_mark", "help", "help", id="help", tooltip="this help"),
        # The app's quit: the screen has none (a plain "quit" here did nothing).
        Binding("q", "app.quit", "quit", id="quit", tooltip="quit (Ctrl+C too)"),
        Binding("slash", "filter", "filter", id="filter", tooltip="filter the table by target, folder, state or text"),
        Binding("e", "why", "why", id="why", tooltip="why: every source's verdict, its age and evidence"),
        Binding("t", "timeline", "timeline", id="timeline", show=False, tooltip="timeline: the agent's states, commands and outcomes"),
        Binding("l", "toggle_layout", "layout", id="toggle_layout", show=False, tooltip="layout: auto (beside from 140 columns, else under) → beside → under; shown on the preview's border"),
        Binding("left_square_bracket", "scroll_back", "history", id="scroll_back", show=False, tooltip="preview: a page back through the pane's history (tmux scrollback)"),
        Binding("right_square_bracket", "scroll_forward", "forward", id="scroll_forward", show=False, tooltip="preview: a page forward (at the bottom: live again)"),
        *TRIAGE_BINDINGS,  # Tab, Shift+Tab, z (triage.py)
    ]
    # Side by side from SIDE_BY_SIDE_MIN_WIDTH columns (with the layout on "auto");
    # below TABLE_ONLY_BELOW rows, the table alone (the preview needs height to help).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (SIDE_BY_SIDE_MIN_WIDTH, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TABLE_ONLY_BELOW, "-tall")]

    # The hosts' problem ("no tmux server running ...", or "starting"): the summary line and the empty state.
    problem: reactive[str | None] = reactive(None, init=False)
    problem_hosts: tuple[tuple[str, str], ...] = ()  # each host's own problem (host, problem)

    def __init__(self, service: Service, config: Config) -> None:
        super().__init__()
        self.service = service
        self.config = config
        self._keys_for: tuple[str | None, frozenset[str]] | None = None  # the pane and agent keys the footer was asked for
        self._select_on_sight: str | None = None  # a pane headspace just started: selected when its row appears
        if service.live:
            self.set_reactive(MainScreen.problem, "starting")  # until the monitor's first full look (monitor.py)
        self._back_to: str | None = None  # an agent whose answer was not delivered after the inbox moved on from it
        self._key_read_at: float | None = None  # when the last key reached this screen (Textual's clock: monotonic)

    @property
    def headspace(self) -> HeadspaceApp:
        """The app, for what is app-wide: its clock, its theme's styles, the layout setting, where the settings live."""
        return cast("HeadspaceApp", self.app)

    def compose(self) -> ComposeResult:
        yield SummaryLine(id="summary")
        yield FilterInput(placeholder="filter: target, folder, state…", id="filter")
        with Container(id="body"):
            with Vertical(id="left"):
                yield AgentTable(id="agents", clock=self.headspace.clock)
                yield Static(id="empty")
            with Vertical(id="right"):
                yield PanePreview(id="preview")
                yield PromptBar(id="prompt")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.table.snooze_of = self.snoozes.get
        self.restyle()
        self.watch(self.app, "layout_mode", self._apply_layout)  # now, and whenever the setting changes
        self.screen_layout_refresh_signal.subscribe(self, self._place_toasts)  # after every layout: the preview may have moved
        self._refresh_summary()
        self.set_interval(1.0, self._tick)
        self.table.focus()
        self._park_cursor()

    @property
    def table(self) -> AgentTable:
        return self.query_one(AgentTable)

    def select_when_seen(self, pane_id: str) -> None:
        """Select ``pane_id`` now if its row is there, else as soon as it appears (an agent headspace started)."""
        self._select_on_sight = None if self.table.select(pane_id) else pane_id

    def restyle(self) -> None:
        """Rows and the header in the theme's state colours (the app calls this when the theme changes)."""
        self.table.restyle(self.headspace.state_styles, self.headspace.retrying_style)
        self._refresh_summary()

    # -- the service's events (posted here by the app) -----------------------------------
    @ui_handler
    def on_agent_changed(self, message: AgentChanged) -> None:
        agent = message.agent
        self.snoozes.observe(agent)  # a new wait, or none: its snooze is over
        self.table.upsert(agent)
        if agent.pane_id == self._select_on_sight and self.table.select(agent.pane_id):
            self._select_on_sight = None
        self._refresh_summary()
        if agent.pane_id == self.table.selected_pane_id:
            self._refresh_prompt_bar()
            self._refresh_keys()
        elif self.service.focused is None:
            self._selection_changed()

    @ui_handler
    def on_agent_removed(self, message: AgentRemoved) -> None:
        if message.pane_id == self.input_mode.pane_id:
            self.leave_input(f"input mode ended: {self.input_mode.target} ({message.pane_id}) is gone")
        self.table.remove_agent(message.pane_id)
        self.snoozes.forget(message.key or message.pane_id)
        self._refresh_summary()
        self._selection_changed()

    @ui_handler
    def on_pane_captured(self, message: PaneCaptured) -> None:
        """The monitor read a pane that changed: repaint the preview if it is the one shown."""
        if message.pane_id == self.table.selected_pane_id:
            self._refresh_preview()

    @ui_handler
    def on_problem_changed(self, message: ProblemChanged) -> None:
        """The hosts' problem: briefly in the summary; a remote host newly out of reach also as a notice, in ssh's words."""
        was = {host for host, text in self.problem_hosts if text != "starting"}
        self.problem_hosts = message.hosts
        for host, text in message.hosts:
            if host != "local" and host not in was and text != "starting":  # a host still on its first look has no problem
                self.notify(clean(text, 300), severity="warning", timeout=15, markup=False)
        self.problem = message.problem
        self._refresh_summary()

    def answer_reported(self, report: Report) -> None:
        """An answer's progress, as the service reports it.

        Its keys went (``final`` off): the inbox moves on at once, if the
        answer says so, while the pane is still to show what they did.  The
        final word: one line; when the answer did not land and the selection
        has moved on from that agent, the line says how to go back (the
        ``back`` key), and the agent's row says "not delivered".
        """
        if report.move_on:
            self.answered(report.pane_id)
        if not report.final:
            return
        self.reported(report)
        text = clean(report.text)
        if not report.delivered and report.pane_id != self.table.selected_pane_id and report.pane_id in self.table.agents:
            self._back_to = report.pane_id
            self.notify(f"{text} — {self._key_for('back')} goes back to it", severity="error", timeout=BACK_NOTICE_SECONDS, markup=False)
            return
        self.notify(text, severity=report.severity, markup=False)  # type: ignore[arg-type]

    def answered(self, pane_id: str) -> None:
        """An answer went: like an inbox, select the next agent that needs you (if the answered one is still selected).

        Not one whose own answer is still on its way: its row may still show
        the prompt just answered (the keys go before Claude redraws).
        """
        if pane_id != self.table.selected_pane_id or self.input_mode.active:
            return  # in input mode the selection stays on the pane the keys go to
        for other in self.table.order:
            agent = self.table.agents[other]
            if other != pane_id and self.needing(agent) and not self.service.answer_pending(agent):
                self.table.select(other, by_itself=True)
                return

    def action_back(self) -> None:
        """Back to the agent whose answer did not land after the inbox moved on from it."""
        if not self._keys_live():
            return
        pane_id, self._back_to = self._back_to, None
        if pane_id is None or not self.table.select(pane_id):
            self.flash(f"{self._key_for('back')}: no answer that failed to go back to")

    def watch_problem(self) -> None:
        self._refresh_summary()

    def _refresh_summary(self) -> None:
        agents = self.table.agents
        self.query_one("#summary", SummaryLine).show(
            summary_text(
                agents.values(),
                self.problem,
                self.service.waited_today(agents, self.headspace.clock()),
                self.problem_hosts,
                self.snoozed_panes(),
                **self._summary_styles(),
            )
        )
        self.refresh_filter_count()
        empty = self.query_one("#empty", Static)
        empty.display = not agents
        if not agents:
            empty.update(empty_text(self.problem))

    def _summary_styles(self) -> dict[str, Style]:
        """The header's colours from the theme (its permission and error states'), so they have the theme's contrast."""
        styles = self.headspace.state_styles
        if not styles:
            return {}
        need, error = styles[AgentState.PERMISSION], styles[AgentState.ERROR]
        return {"need_style": Style(color=need.color, bold=True), "problem_style": Style(color=error.color)}

    @ui_handler
    def _tick(self) -> None:
        self.table.tick()
        self.end_snoozes()
        self._refresh_summary()

    # -- selection, preview, prompt bar -----------------------------------------------
    def selected_agent(self) -> Agent | None:
        pane_id = self.table.selected_pane_id
        return self.table.agents.get(pane_id) if pane_id else None

    @on(DataTable.RowHighlighted)
    @ui_handler
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.query(AgentTable):  # a highlight from a table already taken down (shutting down)
            return
        self._selection_changed()

    def _selection_changed(self) -> None:
        bound = self.input_mode.pane_id
        if bound is not None and self.table.selected_pane_id != bound:
            if self.table.select(bound):
                return  # input mode stays on its pane (re-selecting it says so again)
            self.leave_input(f"input mode ended: {self.input_mode.target} ({bound}) left the table")
        agent = self.selected_agent()
        preview = self.query_one(PanePreview)
        if preview.history_of is not None and (agent is None or agent.pane_id != preview.history_of):
            preview.live()  # another agent: its pane as it is now
        self.service.focus(agent.pane_id if agent else None)
        self._refresh_prompt_bar()
        self._refresh_preview()
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        """The footer offers the keys the selected agent allows: ask for them again when those may differ.

        The selection is read when the footer rebuilds (``check_action``), and
        ``KeysFooter`` rebuilds before the next frame, so the keys are the
        selected agent's in the frame that shows its preview.  (A rebuild
        restyles every key; on each update it cost about 2% of a core at 50
        busy agents, hence only on a change.)
        """
        agent = self.selected_agent()
        # Per pane too: Textual also rebuilds the footer on its own occasions (focus,
        # a screen closing), so a set of keys equal to the last one asked for may
        # not be what the footer shows after another agent was selected in between.
        live = (agent.pane_id if agent is not None else None, live_keys(agent))
        if live != self._keys_for:
            self._keys_for = live
            self.refresh_bindings()

    def _refresh_prompt_bar(self) -> None:
        bar = self.query_one(PromptBar)
        if self.input_mode.active:
            bar.show_input(self.input_mode.target, self.input_mode.pane_id or "", LEAVE_SHOWN)
        else:
            bar.show_agent(self.selected_agent(), self.config.keys)

    def _refresh_preview(self) -> None:
        preview = self.query_one(PanePreview)
        agent = self.selected_agent()
        if agent is None:
            preview.clear("No agent selected.")
            return
        screen = self.service.screen(agent.pane_id)
        if screen is None:
            return
        title = self.input_mode.title() if self.input_mode.pane_id == agent.pane_id else f"{agent.target} ({agent.pane_id})"
        preview.show(title, screen.ansi, screen.width, screen.height)

    # -- layout ----------------------------------------------------------------
    def _apply_layout(self, mode: str) -> None:
        """The app's layout setting as the body's class; ``auto`` follows the breakpoint classes (-wide / -narrow) in the stylesheet."""
        body = self.query_one("#body")
        for each in ("auto", "side", "stacked"):
            body.set_class(mode == each, each)
        self._show_layout()

    def action_toggle_layout(self) -> None:
        """``l`` cycles auto → beside → under → auto (a sticky two-way toggle left no way back to auto)."""
        modes = list(LAYOUT_WORDS)
        mode = self.headspace.layout_mode
        self.headspace.layout_mode = modes[(modes.index(mode) + 1) % len(modes)] if mode in modes else "auto"

    def _show_layout(self) -> None:
        """The layout setting on the preview's bottom border, in words ("layout: auto (beside)"), with the key that changes it."""
        mode = self.headspace.layout_mode
        shown = LAYOUT_WORDS.get(mode, mode)
        if mode == "auto":
            shown += f" ({LAYOUT_WORDS['side'] if self.size.width >= SIDE_BY_SIDE_MIN_WIDTH else LAYOUT_WORDS['stacked']})"
        subtitle = f"{self._key_for('toggle_layout')} layout: {shown}"
        preview = self.query_one(PanePreview)
        if str(preview.border_subtitle or "") != subtitle:
            preview.border_subtitle = subtitle

    def on_resize(self) -> None:
        self._show_layout()  # "auto" says which it is at this width

    def _place_toasts(self, _screen: object = None) -> None:
        """Toasts over the preview's upper half, under its title: never over a row you triage.

        At the top right they covered the table's "Waiting for" column in the
        stacked layout; at the bottom they covered where Claude draws its
        prompt, and the prompt bar.  The preview's top rows are the pane's
        oldest lines.  When they reach beyond that half the oldest goes (what
        an answer did is also on its row, in its why and in the event log).
        With the table alone (a short terminal) they sit under the summary line.
        """
        racks = self.query("#textual-toastrack")
        if not racks:
            return
        preview = self.query_one(PanePreview)
        region = preview.region if preview.display else None
        top, limit = (region.y + 1, region.y + region.height // 2) if region else (1, self.size.height // 2)
        rack = racks.first()
        if rack.styles.margin.top != top:
            rack.styles.margin = (top, 0, 0, 0)
            return  # placed at the next layout, and looked at again then
        toasts = list(rack.query(Toast))
        if len(toasts) > 1 and any(t.region.bottom > limit for t in toasts if t.region.height):
            # The oldest goes (one per layout: the others move up).  Textual has no public call
            # to drop one notification, only all of them.
            self.app._unnotify(toasts[0]._notification)

    # -- which keys are live ----------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Agent keys only where they can do something for the selected agent (``policy.key_allowed``; the footer shows only those)."""
        if not self.is_running:
            return True
        if self.input_mode.active or action == "leave_input":
            return self.input_mode.active and action == "leave_input"  # in input mode every other key is the pane's
        try:
            agent = self.selected_agent()
        except Exception:  # noqa: BLE001 - the screen is still being built
            return True
        return key_allowed(action, agent)

    def _keys_live(self) -> bool:
        """Agent keys act only on this screen with the table focused (not while typing a filter)."""
        return self.app.screen is self and not isinstance(self.focused, Input)

    # -- filter ---------------------------------------------------------------------
    def action_filter(self) -> None:
        self.query_one("#filter", FilterInput).open()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.table.set_filter(event.value)
        self.refresh_filter_count()
        self._selection_changed()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    @on(FilterInput.Closed)
    def close_filter(self) -> None:
        self.query_one("#filter", FilterInput).hide()
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

    def action_close_overlay(self) -> None:
        """Esc on the main screen: close the filter if it is open, else end the scrollback; never a key to an agent."""
        if self.query_one("#filter", FilterInput).display:
            self.close_filter()
        else:
            self.action_preview_live()

    # -- windows: why, timeline, help ---------------------------------------------------
    def action_why(self) -> None:
        agent = self.selected_agent()
        if agent is None or not self._keys_live():
            return
        now = self.headspace.clock()
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
    def action_approve(self) -> None:
        agent = self.selected_agent()
        if agent is not None and self._keys_live() and ask_before_widening(self, self.service, agent):
            return  # every way to approve there widens permissions: a confirmation asks first
        self._act(Intent(IntentKind.APPROVE))

    def action_deny(self) -> None:
        self._act(Intent(IntentKind.DENY))

    def action_option(self, number: str) -> None:
        self._act(Intent(IntentKind.OPTION, option=number))

    def action_submit(self) -> None:
        self._act(Intent(IntentKind.SUBMIT))

    def action_nudge(self) -> None:
        self._act(Intent(IntentKind.NUDGE, text=self.config.nudge_text))

    def action_interrupt(self) -> None:
        self._act(Intent(IntentKind.INTERRUPT))

    def _target(self, answering: bool = False) -> Agent | None:
        """The agent a key acts on, or None (and why) when keys must not act now.

        ``answering``: a key that answers (y, n, a digit, A, r).  It is never
        applied to an agent the selection reached by itself (the inbox moving
        on, a row re-ordered under the cursor) less than a reaction time ago:
        a fast hand meant the agent it saw, not the one that just came under
        the cursor.  The bell and one line; the next press works.
        """
        if not self._keys_live():
            return None
        agent = self.selected_agent()
        if agent is None:
            self.notify("No agent selected.", severity="warning")
            return None
        arrival = self.table.arrival
        pressed = self._pressed_at()
        if answering and arrival is not None and arrival[0] == agent.pane_id and pressed - arrival[1] < REACTION_TIME:
            self.flash(f"{clean(agent.target)} came under the cursor just now: read it, then press again; nothing sent")
            return None
        return agent

    def on_key(self, event: events.Key) -> None:
        """Note when this key reached headspace (the terminal read it), for ``_pressed_at``."""
        self._key_read_at = event.time

    def _pressed_at(self) -> float:
        """When the key now acted on was pressed: the time it was read, not now.

        Under load a key's action runs late, and the selection may have moved
        by itself meanwhile; a key read before the move (or just after it)
        was meant for what the user saw then.  Used once; a time more than
        KEY_MEMORY old (the action came from a click, not a key) is not the
        key's, and then it is now.
        """
        read_at, self._key_read_at = self._key_read_at, None
        now = time.monotonic()
        return read_at if read_at is not None and now - read_at < KEY_MEMORY else now

    def _act(self, intent: Intent) -> None:
        agent = self._target(answering=intent.kind in ANSWERING)
        if agent is None:
            return
        refusal = self.service.answer(agent, intent)
        if refusal:
            self.notify(clean(f"{agent.target}: {refusal}; nothing sent"), severity="warning", markup=False)

    def action_approve_all(self) -> None:
        """Approve every waiting request identical to the selected one, after a list the user confirms."""
        agent = self._target(answering=True)
        if agent is None:
            return
        pairs, reason = self.service.batch(agent)
        if reason:
            self.notify(clean(f"{agent.target}: {reason}"), severity="warning", markup=False)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.notify(clean(self.service.approve_batch(pairs)), markup=False)

        self.app.push_screen(BatchApproveScreen(pairs), done)

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
