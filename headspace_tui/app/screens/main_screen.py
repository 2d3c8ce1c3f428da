"""The main screen: agent table, live preview, prompt bar, one-key answers.

It owns its keys, its layout breakpoints and its widgets, and decides in
``check_action`` (through ``policy.key_allowed``, the one table every front
end shares) which keys the selected agent allows; the footer shows only
those.  What it shows comes from the service: its events arrive as
messages the app posts here (messages.py), and what else it needs it asks
the service for (a pane's screen, why, a timeline, a jump); every answer
goes to the service (``Service.answer``), which reports back to the app.

Its parts each own one job, and the screen calls down into them with the
agent a key acts on (its reaction-time guard, ``_target``, stays here):
``Triage`` (the next waiting agent, snoozes, the order, the filter's count,
keys that can do nothing), ``Typing`` (replies and input mode), ``Inbox``
(answers and moving on), ``PaneView`` (preview, prompt bar, footer keys),
``Header`` (the summary line), ``Windows`` (why, timeline, help, jump),
``Scrollback`` (``[`` ``]``) and ``Placement`` (the layout's classes, the
toasts, the cursor).  What they change they tell the screen, and through it
the app, as messages (messages.py); the screen knows nothing of the app
beyond Textual's ``App``: what is app-wide (the clock, the theme's styles,
where the settings live) it is given, and the layout setting it watches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rich.style import Style
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ...api.facade import REACTION_TIME, Facade, Intent, IntentKind, Report, key_allowed
from ...api.rows import away_line
from ...model import Agent, AgentState
from ...shared.config import Config
from ...shared.safe_text import clean
from ..guard import ui_handler
from ..input_mode import InputMode
from ..messages import AgentChanged, AgentRemoved, InputModeEnded, LayoutChosen, PaneCaptured, ProblemChanged, Snoozed, Woken
from ..widgets.agent_table import RETRYING, AgentTable, context_pct
from ..widgets.change_box import ChangeBox
from ..widgets.filter_input import FilterInput
from ..widgets.footer import KeysFooter
from ..widgets.preview import PanePreview, PromptBar
from ..widgets.summary import SummaryLine
from .asking import Asking
from .diffs import Diffs
from .flash import flash, key_for
from .header import Header
from .inbox import Inbox
from .layout import SIDE_BY_SIDE_MIN_WIDTH, Placement, next_layout
from .main_keys import MAIN_BINDINGS
from .pane_view import PaneView
from .scrollback import Scrollback
from .triage import Triage
from .typing_actions import Typing
from .widen import ask_before_widening
from .windows import Windows

TABLE_ONLY_BELOW = 18
TIME_TICK = 0.25  # s between two looks at the Time column's seconds
AWAY_AFTER = 600.0  # s without a key after which the next one is a return: the toast says what happened meanwhile
AWAY_LINES = 6  # agents the toast names (the busiest first)
# The keys that answer a prompt (y, n, digits; A and r go through _target too): not applied to an agent
# that just came under the cursor by itself.
ANSWERING = frozenset({IntentKind.APPROVE, IntentKind.DENY, IntentKind.OPTION})


class MainScreen(Screen):
    """The app's default screen (table, preview, prompt bar): its keys, its layout, its answers."""

    BINDINGS = MAIN_BINDINGS  # main_keys.py: each binding's tooltip is its line on the help screen
    # Side by side from SIDE_BY_SIDE_MIN_WIDTH columns (with the layout on "auto");
    # below TABLE_ONLY_BELOW rows, the table alone (the preview needs height to help).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (SIDE_BY_SIDE_MIN_WIDTH, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TABLE_ONLY_BELOW, "-tall")]

    # The hosts' problem ("no tmux server running ...", or "starting"): the summary line and the empty state.
    problem: reactive[str | None] = reactive(None, init=False)
    # Each host's own problem (host, problem): the summary names the hosts out; one newly out of reach is also a notice.
    problem_hosts: reactive[tuple[tuple[str, str], ...]] = reactive((), repaint=False, init=False)
    # The filter's text (what the table shows follows it): typed in the filter box, "" when it closes.
    # Every setting acts, an unchanged one too (closing an empty filter still looks at the selection); no repaint of its own.
    filter_text: reactive[str] = reactive("", always_update=True, repaint=False, init=False)

    def __init__(self, service: Facade, config: Config, config_path: Path | None = None) -> None:
        super().__init__()
        self.service = service
        self.config = config
        self.config_path = config_path  # where the user's settings live (said in the help)
        self.clock: Callable[[], float] = service.clock
        self.state_styles: dict[AgentState, Style] = {}  # the theme's, given by the app (restyle)
        self.retrying_style: Style | str = RETRYING
        self.layout_mode = "auto"  # the app's layout setting, as last seen (watched)
        self.asking = Asking(self, service, self._refresh_summary)
        self.triage = Triage(self, service, self.clock, config.keys, self.asking)
        self.typing = Typing(self, service, self.asking)
        self.scrollback = Scrollback(self, service, self.asking)
        self.inbox = Inbox(self, service, self.triage, self.typing, self.asking)
        self.header = Header(self, service, self.triage, self.clock, self.asking)
        self.windows = Windows(self, service, config_path, self.asking)
        self.diffs = Diffs(self, self.typing)
        self.placement = Placement(self)
        self.pane_view = PaneView(self, service, config.keys, self.typing.input_mode)
        self._select_on_sight: str | None = None  # a pane headspace just started: selected when its row appears
        if service.live:  # "starting" until the monitor's first full look (monitor.py); a resident service's may be long done
            now = service.problem_now()
            self.set_reactive(MainScreen.problem, now.problem)
            self.set_reactive(MainScreen.problem_hosts, now.hosts)
        self._key_read_at: float | None = None  # when the last key reached this screen (Textual's clock: monotonic)
        self._last_key_wall: float | None = None  # when the last key came, by the service's clock (its records' time)

    @property
    def input_mode(self) -> InputMode:
        return self.typing.input_mode

    def compose(self) -> ComposeResult:
        yield SummaryLine(id="summary")
        yield FilterInput(placeholder="filter: target, folder, state…", id="filter")
        with Container(id="body"):
            with Vertical(id="left"):
                yield AgentTable(id="agents", clock=self.clock, show_changes=self.config.change_column, show_context=self.config.context_column)
                yield Static(id="empty")
            with Vertical(id="right"):
                yield PanePreview(id="preview")
                yield ChangeBox(id="change")
                yield PromptBar(id="prompt")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.table.snooze_of = self.service.snooze_of
        self.table.load(self.service.agents())  # what the service knows already (a resident one: all of it): on the first frame
        self.table.restyle(self.state_styles, self.retrying_style)
        self._refresh_summary()
        self.watch(self.app, "layout_mode", self._apply_layout)  # now, and whenever the setting changes
        self.screen_layout_refresh_signal.subscribe(self, self.placement.place_toasts)  # after every layout: the preview may have moved
        self._refresh_summary()
        self.set_interval(1.0, self._tick)
        # The Time column is read against `status` and the pane: ticked at a second's pace it lagged by up to a
        # second (1.0-1.3 s measured); a quarter of one keeps it within 0.25 s (only cells whose text changes are drawn).
        self.set_interval(TIME_TICK, self._tick_times)
        self.table.focus()
        self.placement.park_cursor()

    @property
    def table(self) -> AgentTable:
        return self.query_one(AgentTable)

    def select_when_seen(self, pane_id: str) -> None:
        """Select ``pane_id`` now if its row is there, else as soon as it appears (an agent headspace started)."""
        self._select_on_sight = None if self.table.select(pane_id) else pane_id

    def restyle(self, state_styles: dict[AgentState, Style], retrying_style: Style | str) -> None:
        """Rows and the header in the theme's state colours (the app calls this when the theme changes; kept until mounted)."""
        self.state_styles, self.retrying_style = state_styles, retrying_style
        if self.query(AgentTable):  # composed (else it takes these when it mounts)
            self.table.restyle(state_styles, retrying_style)
            self._refresh_summary()

    # -- the service's events (posted here by the app) -----------------------------------
    @ui_handler
    def on_agent_changed(self, message: AgentChanged) -> None:
        agent = message.agent
        self.table.upsert(agent)
        if agent.pane_id == self._select_on_sight and self.table.select(agent.pane_id):
            self._select_on_sight = None
        self._refresh_summary()
        if agent.pane_id == self.table.selected_pane_id:
            self.pane_view.prompt_bar(self.selected_agent())
            self.pane_view.footer_keys(self.selected_agent())
        elif self.service.focused is None:
            self._selection_changed()

    @ui_handler
    def on_agent_removed(self, message: AgentRemoved) -> None:
        if message.pane_id == self.input_mode.pane_id:
            self.leave_input(f"input mode ended: {self.input_mode.target} ({message.pane_id}) is gone")
        self.table.remove_agent(message.pane_id)
        self.diffs.forget(message.pane_id)
        self._refresh_summary()
        self._selection_changed()

    @ui_handler
    def on_pane_captured(self, message: PaneCaptured) -> None:
        """The monitor read a pane that changed: repaint the preview if it is the one shown."""
        if message.pane_id == self.table.selected_pane_id:
            self.pane_view.preview(self.selected_agent())

    @ui_handler
    def on_problem_changed(self, message: ProblemChanged) -> None:
        """The hosts' problem: briefly in the summary; a remote host newly out of reach also as a notice, in ssh's words."""
        self.problem_hosts = message.hosts
        self.problem = message.problem
        self._refresh_summary()

    def answer_reported(self, report: Report) -> None:
        """An answer's progress, as the service reports it (the app calls this): the inbox moves on, the final word in one line."""
        self.inbox.reported(report)

    def answered(self, pane_id: str) -> None:
        self.inbox.answered(pane_id)

    def action_back(self) -> None:
        """Back to the agent whose answer did not land after the inbox moved on from it."""
        if self._keys_live():
            self.inbox.back()

    def watch_problem_hosts(self, was: tuple[tuple[str, str], ...], now: tuple[tuple[str, str], ...]) -> None:
        self.header.hosts_out(was, now)

    def watch_problem(self) -> None:
        self._refresh_summary()

    def _refresh_summary(self) -> None:
        self.header.show(self.problem, self.problem_hosts, self.state_styles)
        self.triage.show_filter_count(self.filter_text)

    @ui_handler
    def _tick_times(self) -> None:
        self.table.tick()

    @ui_handler
    def _tick(self) -> None:
        self.triage.end_snoozes()
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
        self.pane_view.selected(self.selected_agent())

    # -- layout ----------------------------------------------------------------
    def _apply_layout(self, mode: str) -> None:
        """The app's layout setting (watched): the body's class, and its words on the preview's border."""
        self.layout_mode = mode
        self.placement.apply(mode, key_for(self, "toggle_layout"))

    def action_toggle_layout(self) -> None:
        """``l`` cycles auto → beside → under → auto; the setting is the app's (it hears ``LayoutChosen``)."""
        self.post_message(LayoutChosen(next_layout(self.layout_mode)))

    def on_resize(self) -> None:
        self.placement.show(self.layout_mode, key_for(self, "toggle_layout"))  # "auto" says which it is at this width

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
        self.filter_text = event.value

    def watch_filter_text(self, text: str) -> None:
        """The table shows what the filter lets through, the filter's border its count, and the selection is looked at again."""
        self.table.set_filter(text)
        self.triage.show_filter_count(text)
        self._selection_changed()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    @on(FilterInput.Closed)
    def close_filter(self) -> None:
        self.query_one("#filter", FilterInput).hide()
        self.placement.park_cursor()
        self.table.focus()
        self.filter_text = ""

    def action_close_overlay(self) -> None:
        """Esc on the main screen: close the filter if it is open, else end the scrollback; never a key to an agent."""
        if self.query_one("#filter", FilterInput).display:
            self.close_filter()
        elif self.scrollback.preview.in_history:
            self.scrollback.live()
        else:
            self.app.nothing_to_close()  # type: ignore[attr-defined]  # HeadspaceApp's: the warm UI closes its popup

    # -- windows: why, timeline, help, and the jump -----------------------------------
    def action_why(self) -> None:
        agent = self.selected_agent()
        if agent is not None and self._keys_live():
            self.windows.why(agent, self.clock(), self.state_styles)

    def action_timeline(self) -> None:
        agent = self.selected_agent()
        if agent is not None and self._keys_live():
            self.windows.timeline(agent, self.state_styles)

    def action_spending(self) -> None:
        self.windows.spending(self.clock())

    def action_diff(self) -> None:
        """What the selected agent changed, in the diff view; its ``fetch`` is the facade's ``changes`` (git runs in the service)."""
        agent = self.selected_agent() if self._keys_live() else None
        if agent is None or agent.placeholder:
            return
        service, pane = self.service, agent.pane_id
        self.diffs.open(agent, lambda scope: service.changes(pane, scope))  # awaited by the view (a coroutine of this loop)

    def action_toggle_changes(self) -> None:
        """Show or hide the Change column (for this run; ``change_column`` in the config says how it starts)."""
        self.table.set_show_changes(not self.table.show_changes)

    def action_toggle_context(self) -> None:
        """Show or hide the Ctx column (for this run; ``context_column`` in the config says how it starts)."""
        known = any(context_pct(a) is not None for a in self.table.agents.values())
        if not (self.table.show_context and not known):
            self.table.set_show_context(not self.table.show_context)
        if self.table.show_context and not known:
            # The column is drawn only where some agent's share is known: say why nothing appeared, rather than nothing.
            self.notify("Ctx is on, but no agent's context share is known yet (no reply read, or its model's window unknown: see e).", markup=False)

    def action_help(self) -> None:
        self.windows.help()

    def action_jump(self) -> None:
        """Move the user's own tmux client to the agent; outside tmux, end and print how to attach."""
        agent = self.selected_agent() if self._keys_live() else None
        if agent is not None:
            self.windows.jump(agent)

    # -- answering -------------------------------------------------------------------
    def action_approve(self) -> None:
        agent = self.selected_agent()
        if agent is not None and self._keys_live() and ask_before_widening(self, self.asking, agent):
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
        on, a row re-ordered under the cursor), nor to a prompt its row began
        to show, less than a reaction time before the key was pressed: a fast
        hand meant the agent and the prompt it saw.  The bell and one line;
        the next press works.
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
            flash(self, f"{clean(agent.target)} came under the cursor just now: read it, then press again; nothing sent")
            return None
        shown = self.table.prompt_shown_at(agent) if agent.observation.state.is_menu else None  # a dialog a key answers at once
        if answering and shown is not None and pressed - shown < REACTION_TIME:
            # Its row showed another prompt when the key was pressed (question 1 of a dialog answered in
            # the pane meanwhile: question 2 reached the row before the key's action ran), or this one
            # for less than a reaction time: the key was meant for what the user saw then.
            flash(self, f"{clean(agent.target)}: its prompt changed just now: read it, then press again; nothing sent")
            return None
        return agent

    def on_key(self, event: events.Key) -> None:
        """Note when this key reached headspace (the terminal read it), for ``_pressed_at``; then the parts' say.

        In input mode the key is the pane's (``Typing``); else an agent key the
        selected agent does not allow rings the bell and says why (``Triage``).
        """
        self._key_read_at = event.time
        self.service.here()  # a person is at this terminal: the phone is not pushed meanwhile
        self._back_after_a_while()
        if not self.typing.key(event) and self._keys_live():
            self.triage.explain(event)

    def _back_after_a_while(self) -> None:
        """The first key after AWAY_AFTER without one (a warm popup opened again, a terminal come back to): say what happened meanwhile.

        A toast, not a screen: the key that brought the person back still does
        what it does, and nothing waits for the service's answer.
        """
        now = self.service.clock()
        last, self._last_key_wall = self._last_key_wall, now
        if last is not None and now - last >= AWAY_AFTER:
            self.run_worker(self._say_away(last), group="away", exclusive=True)

    async def _say_away(self, since: float) -> None:
        entries = await self.service.away(since)
        if not entries:
            return
        lines = [clean(away_line(entry), 160) for entry in entries[:AWAY_LINES]]
        if len(entries) > AWAY_LINES:
            lines.append(f"and {len(entries) - AWAY_LINES} more agents")
        self.notify("\n".join(lines), title=f"While you were away (since {time.strftime('%H:%M', time.localtime(since))})", timeout=20, markup=False)

    def on_paste(self, event: events.Paste) -> None:
        self.typing.paste(event)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click acts now, not when the last key was read: that key's time is forgotten (``_pressed_at``)."""
        self._key_read_at = None

    def on_screen_suspend(self, event: events.ScreenSuspend) -> None:
        """A screen over this one (the palette, a form): what is chosen there acts now, not when this screen's last key was read."""
        self._key_read_at = None

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A click elsewhere (the table, the filter) ends input mode: the keys would no longer be the pane's."""
        if self.input_mode.active and not isinstance(event.widget, PanePreview):
            self.leave_input()

    def _pressed_at(self) -> float:
        """When the key now acted on was pressed: the time it was read, not now.

        Under load a key's action runs late, and the selection may have moved
        by itself meanwhile; a key read before the move (or just after it)
        was meant for what the user saw then, however late its action runs:
        an app stalled for seconds must not turn an old key into a new one
        (over HTTP under load, a y read before the inbox moved once approved
        the agent it moved to).  Used once; with no key since the last
        action, click or screen over this one (the palette), it is now.
        """
        read_at, self._key_read_at = self._key_read_at, None
        return read_at if read_at is not None else time.monotonic()

    def _act(self, intent: Intent) -> None:
        agent = self._target(answering=intent.kind in ANSWERING)
        if agent is not None:
            self.inbox.answer(agent, intent)

    def action_approve_all(self) -> None:
        """Approve every waiting request identical to the selected one, after a list the user confirms."""
        agent = self._target(answering=True)
        if agent is not None:
            self.inbox.approve_all(agent)

    # -- the parts' keys (Triage, Typing, Scrollback): the screen's actions, called down ----
    def action_next_waiting(self) -> None:
        self.triage.step(1)

    def action_previous_waiting(self) -> None:
        self.triage.step(-1)

    def action_snooze(self) -> None:
        agent = self.selected_agent()
        if agent is not None and self._keys_live():
            self.triage.snooze(agent)

    def sort_by(self, column: str) -> None:
        """Order the table by ``column``; the same column again reverses it (the palette's "Sort by …")."""
        self.triage.sort_by(column)

    @on(Snoozed)
    @on(Woken)
    def _snoozes_changed(self) -> None:
        self._refresh_summary()  # the ringer hears it from the service: it stops saying that wait, or says it again

    def action_reply(self) -> None:
        agent = self._target(answering=True)
        if agent is not None:
            self.typing.reply(agent)

    def action_input_mode(self) -> None:
        """From now on the keys go to the selected agent's pane, until the leave key."""
        agent = self._target()
        if agent is None or not key_allowed("input_mode", agent):
            return
        self.typing.enter(agent)
        self.pane_view.input_shown(self.selected_agent())

    def action_leave_input(self) -> None:
        self.leave_input()

    def leave_input(self, why: str = "") -> None:
        if not self.typing.leave():
            return
        self.pane_view.input_shown(self.selected_agent())
        if why:
            self.notify(clean(why), severity="warning", markup=False)

    def on_input_mode_ended(self, message: InputModeEnded) -> None:
        if message.pane_id == self.input_mode.pane_id:
            self.leave_input(message.why)

    def action_scroll_back(self) -> None:
        self.scrollback.back(self.selected_agent())

    def action_scroll_forward(self) -> None:
        self.scrollback.forward()

    def action_preview_live(self) -> None:
        self.scrollback.live()
