"""The headspace app: agent table, live preview, prompt bar, one-key answers.

Thin by design: everything comes from the ``service.Service`` it is handed
(its events arrive as Textual messages, see messages.py), answers go to the
service's answerer (``answering/``: which answer fits which state, one at a
time per agent, by hook or keys), and the widgets only display.  The main screen owns the bindings and the
layout breakpoints; ``check_action`` decides which keys are live for the
selected agent, and the footer shows only those.  An error in a message
handler or a worker is logged with its traceback and shown as one line;
it never ends the app or the monitor.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.geometry import Offset
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static
from textual.worker import Worker, WorkerState

from .. import deliver, theme_files
from .. import service as svc
from ..config import Config
from ..config import default_path as default_config_path
from ..model import Agent, AgentState
from ..notify import Notification, Notifier, terminal_text
from ..safe_text import clean, safe
from ..service import Event, Intent, IntentKind, Notice, Report, Service, ServiceError, key_allowed, live_keys
from . import gc_pace
from .endings import end_on_signals
from .messages import AgentChanged, AgentRemoved, PaneCaptured, ProblemChanged, ServiceNotice
from .palette import AgentCommands
from .screens.batch import BatchApproveScreen
from .screens.help import HelpScreen, help_rows
from .screens.reply import ReplyScreen
from .screens.timeline import TimelineScreen
from .screens.why import WhyScreen
from .themes import STATE_DEFAULTS, remember, remembered, state_style, to_textual, warning_style
from .widgets.agent_table import AgentTable, elapsed
from .widgets.footer import KeysFooter
from .widgets.preview import PanePreview, PromptBar

SIDE_BY_SIDE_MIN_WIDTH = 140
TABLE_ONLY_BELOW = 18
GC_SETTLE_AFTER = 3.0  # seconds after start: the app is up, the first discovery done (see gc_pace)

log = logging.getLogger(__name__)


MONITOR_RESTART = 1.0  # seconds before a monitor that stopped on an error runs again


def _handler(handler):
    """A UI handler that cannot take the app down.

    Reports that arrive while the app is shutting down are dropped (its
    widgets are going); an error is logged with its traceback and shown as
    one line, and the next report is handled as usual.
    """

    @functools.wraps(handler)
    def guarded(self, *args):
        if not self.is_running:
            return
        try:
            handler(self, *args)
        except Exception as exc:
            log.exception("%s failed", handler.__name__)
            self.notify(clean(f"display error ({type(exc).__name__}: {exc}); details in the log", 300), severity="error", markup=False)

    return guarded


class FilterInput(Input):
    """The ``/`` filter; Esc clears and closes it (and never reaches an agent)."""

    BINDINGS = [Binding("escape", "close", "close filter")]

    def action_close(self) -> None:
        self.value = ""
        self.app.close_filter()  # type: ignore[attr-defined]


class MainScreen(Screen):
    """The app's default screen (table, preview, prompt bar): owns the keys and the layout breakpoints.

    Its widgets are the app's ``compose``; the keys' actions live on the app
    (``app.``), which holds the model and decides in ``check_action`` which
    of them the selected agent allows.
    """

    # Each binding's tooltip is its line on the help screen (generated from these, so the two agree).
    BINDINGS = [
        Binding("y", "app.approve", "approve", id="approve", tooltip="approve: choose the first 'Yes' of a permission or plan"),
        Binding("n", "app.deny", "deny", id="deny", tooltip="deny: choose the 'No' option (found by its label)"),
        Binding("r", "app.reply", "reply", id="reply", tooltip="reply with free text at Claude's input box"),
        Binding("c", "app.nudge", "nudge", id="nudge", tooltip="nudge an idle agent (the configured text, default 'continue')"),
        Binding("x", "app.interrupt", "interrupt", id="interrupt", tooltip="interrupt a working agent (sends Esc to its pane)"),
        Binding(
            "A",
            "app.approve_all",
            "approve all",
            id="approve_all",
            tooltip="batch: approve every waiting request identical to this one, through Claude's hook, after a list to confirm",
        ),
        *[Binding(str(n), f"app.option('{n}')", f"option {n}", show=False, tooltip="pick that option of a numbered menu") for n in range(1, 10)],
        Binding("enter", "app.jump", "jump", id="jump", tooltip="jump: switch your tmux client to the agent's pane (or print the attach command)"),
        # Esc is every TUI user's "close this": it never reaches an agent.
        Binding("escape", "app.close_overlay", "close", show=False, tooltip="close the filter, a window, or the scrolled-back preview"),
        Binding("question_mark", "app.help", "help", id="help", tooltip="this help"),
        Binding("q", "app.quit", "quit", id="quit", tooltip="quit"),
        Binding("slash", "app.filter", "filter", id="filter", tooltip="filter the table by target, folder, state or text"),
        Binding("e", "app.why", "why", id="why", tooltip="why: every source's verdict, its age and evidence"),
        Binding("t", "app.timeline", "timeline", id="timeline", show=False, tooltip="timeline: the agent's states, commands and outcomes"),
        Binding("l", "app.toggle_layout", "layout", id="toggle_layout", show=False, tooltip="preview beside or under the table"),
        Binding("left_square_bracket", "app.scroll_back", "history", id="scroll_back", show=False, tooltip="preview: a page back through the pane's history (tmux scrollback)"),
        Binding("right_square_bracket", "app.scroll_forward", "forward", id="scroll_forward", show=False, tooltip="preview: a page forward (at the bottom: live again)"),
    ]
    # Side by side from SIDE_BY_SIDE_MIN_WIDTH columns (with the layout on "auto");
    # below TABLE_ONLY_BELOW rows, the table alone (the preview needs height to help).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (SIDE_BY_SIDE_MIN_WIDTH, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TABLE_ONLY_BELOW, "-tall")]


class HeadspaceApp(App[str | None]):
    TITLE = "headspace"
    CSS_PATH = "headspace.tcss"
    COMMANDS = App.COMMANDS | {AgentCommands}

    # What drives the display: the server-wide problem (the summary line and the
    # empty state) and the layout setting (the body's class).
    problem: reactive[str | None] = reactive(None, init=False)
    layout_mode: reactive[str] = reactive("auto", init=False)
    # Set for the real process only (run_app), never for tests' apps, which share pytest's process:
    end_on_signals = False  # SIGTERM / SIGHUP end the app as q does
    pace_gc = False  # freeze what the app is made of and pace garbage collection (gc_pace), process-wide

    def __init__(
        self,
        service: Service,
        *,
        notices: tuple[str, ...] = (),
        log_path: Path | None = None,
        config_path: Path | None = None,
        theme_dirs: list[Path] | None = None,
        theme_choice: Path | None = None,
    ) -> None:
        super().__init__()
        self.service = service
        self.config: Config = service.config
        self.clock = service.clock
        self.live = service.live
        self.config_path = config_path  # where the user's settings live (said in the help and the palette)
        self.state_styles: dict[AgentState, Style] = {}
        # Where the palette's theme choice is kept (None: not kept, as in tests).
        self.theme_choice = theme_choice
        self._remember_theme = False  # only the user's choices, not the one made at start
        self.notices = notices  # problems found before the screen existed (config, event log)
        self.log_path = log_path
        self.crash: BaseException | None = None
        service.subscribe(self._service_event)
        service.answerer.subscribe(self._answer_reported)
        self.notices = (*self.notices, *self._load_themes(theme_dirs if theme_dirs is not None else [theme_files.builtin_dir()]))
        self.set_reactive(HeadspaceApp.layout_mode, self.config.layout)
        self._main_screen: MainScreen | None = None
        self._keys_for: tuple[str | None, frozenset[str]] | None = None  # the pane and agent keys the footer was asked for
        self._summary_text: Text | None = None
        # Agents that start needing you are announced once (see notify.py).
        self.notifier = Notifier(self.config.notify_states, started=self.clock())
        self._notify_timer: Timer | None = None
        self._notify_send: str | None = None  # notify-send's path, when desktop notifications are on and possible

    # -- themes ----------------------------------------------------------------
    def _load_themes(self, folders: list[Path]) -> list[str]:
        """Register every theme file's theme and pick the one to start with; one line per problem."""
        specs, problems = theme_files.load_themes(folders)
        for spec in specs:
            try:
                self.register_theme(to_textual(spec))
            except theme_files.ThemeError as exc:
                problems.append(str(exc))
        wanted = (remembered(self.theme_choice, self.config.theme) if self.theme_choice else None) or self.config.theme
        if not wanted:
            # A 16-colour terminal shows its own colours best; anything else the default.
            wanted = "headspace-16" if self.console.color_system == "standard" else theme_files.DEFAULT_THEME
        if wanted not in self.available_themes:
            problems.append(f"theme {wanted!r} not found (see the palette's Theme list); using {theme_files.DEFAULT_THEME}")
            wanted = theme_files.DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        return problems

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """State colours for themes that are not headspace's (Textual's own, from the palette)."""
        return {**super().get_theme_variable_defaults(), **{f"state-{k}": v for k, v in STATE_DEFAULTS.items()}}

    def _theme_changed(self, _theme=None) -> None:
        """Restyle what carries state colours; remember a choice the user made."""
        self.state_styles = {state: state_style(self.theme_variables, state, no_color=self.no_color) for state in AgentState}
        if self.query(AgentTable):
            self.table.restyle(self.state_styles, warning_style(self.theme_variables, no_color=self.no_color))
        if self._remember_theme and self.theme_choice is not None:
            remember(self.theme_choice, self.theme, self.config.theme)

    # -- the palette --------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every action in the palette (Textual's own, Theme included, after headspace's)."""
        agent = [  # (title, help, action): offered where check_action allows the action
            ("Approve", "approve the selected agent's permission or plan", "approve"),
            ("Deny", "deny the selected agent's permission or plan", "deny"),
            ("Reply", "reply with free text to the selected agent", "reply"),
            ("Nudge", "send the nudge text to the selected (idle) agent", "nudge"),
            ("Interrupt", "interrupt the selected (working) agent", "interrupt"),
            ("Jump", "switch your tmux client to the selected agent's pane", "jump"),
            ("Why", "why the selected agent shows its state", "why"),
            ("Timeline", "the selected agent's states, commands and outcomes", "timeline"),
        ]
        general: list[tuple[str, str, Callable[[], object]]] = [
            ("Filter", "filter the table", self.action_filter),
            ("Layout: side by side", "the preview beside the table", functools.partial(self._set_layout, "side")),
            ("Layout: stacked", "the preview under the table", functools.partial(self._set_layout, "stacked")),
            ("Layout: automatic", "side by side when wide, stacked when narrow", functools.partial(self._set_layout, "auto")),
            ("Preview: scroll back", "show the selected pane's history (tmux scrollback)", self.action_scroll_back),
            ("Preview: live", "back to the pane as it is now", self.action_preview_live),
            ("Help", "every key", self.action_help),
        ]
        main = self.screen_stack[0] if self.screen_stack else None
        for title, help_text, action in agent:
            if screen is main and self.check_action(action, ()):
                yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))
        for title, help_text, callback in general:
            yield SystemCommand(title, help_text, callback)
        yield from super().get_system_commands(screen)

    def _set_layout(self, mode: str) -> None:
        self.layout_mode = mode

    def jump_to(self, pane_id: str) -> None:
        """The palette's "jump to <agent>": select it, then jump."""
        if self.table.select(pane_id):
            self.action_jump()

    # -- building -------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        if self._main_screen is None:
            self._main_screen = MainScreen()
        return self._main_screen

    def compose(self) -> ComposeResult:
        """The main screen's widgets (the app composes onto its default screen, a ``MainScreen``)."""
        yield Static(id="summary")
        yield FilterInput(placeholder="filter: target, folder, state…", id="filter")
        with Container(id="body"):
            with Vertical(id="left"):
                yield AgentTable(id="agents", clock=self.clock)
                yield Static(id="empty")
            with Vertical(id="right"):
                yield PanePreview(id="preview")
                yield PromptBar(id="prompt")
        yield KeysFooter()

    def on_mount(self) -> None:
        self._theme_changed()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._remember_theme = True
        self.set_keymap(self.config.keys)
        self.query_one("#filter").display = False
        self.query_one("#filter", FilterInput).cursor_blink = False
        self._apply_layout()
        self._refresh_summary()
        if self.end_on_signals:
            end_on_signals(self)
        if self.live:
            self._start_monitor()
            self._prepare_notifications()
            if self.pace_gc:
                self.set_timer(GC_SETTLE_AFTER, gc_pace.settle)  # once the first rows are in
        else:
            self.problem = None
        self.set_interval(1.0, self._tick)
        self.query_one(AgentTable).focus()
        self._park_cursor()
        for notice in self.notices:
            self.post_message(ServiceNotice(notice))

    def _start_monitor(self) -> None:
        self.run_worker(self.service.run(), group="monitor", name="monitor", exclusive=True, exit_on_error=False)

    @_handler
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's error, in one place: logged, one line shown, the monitor run again."""
        if event.state is not WorkerState.ERROR:
            return
        error = event.worker.error
        log.error("worker %s stopped on an error", event.worker.name, exc_info=error)
        what = f"{type(error).__name__}: {error}" if error is not None else "an error"
        if event.worker.group == "monitor":
            self.notify(clean(f"watching stopped on an error ({what}); starting again", 300), severity="error", markup=False)
            self.set_timer(MONITOR_RESTART, self._start_monitor)
        else:
            self.notify(clean(f"{event.worker.name} failed ({what})", 300), severity="error", markup=False)

    async def on_unmount(self) -> None:
        # Detach from tmux before the event loop goes away (the monitor worker may
        # already have been cancelled without waiting for its detectors).
        await self.service.stop()

    @property
    def table(self) -> AgentTable:
        return self.query_one(AgentTable)

    # -- model updates (the service's events, as messages) -----------------------
    def _service_event(self, event: Event) -> None:
        """An event of the service (on the app's loop), handled as a message in the app's own order."""
        if isinstance(event, svc.AgentChanged):
            self.post_message(AgentChanged(event.agent))
        elif isinstance(event, svc.AgentRemoved):
            self.post_message(AgentRemoved(event.pane_id))
        elif isinstance(event, svc.PaneCaptured):
            self.post_message(PaneCaptured(event.pane_id))
        elif isinstance(event, svc.ProblemChanged):
            self.post_message(ProblemChanged(event.problem))
        elif isinstance(event, Notice):
            self.post_message(ServiceNotice(event.text))

    @_handler
    def on_agent_changed(self, message: AgentChanged) -> None:
        agent = message.agent
        if self.notifier.observe(agent, self.clock()) is not None:
            self._notify_soon()
        self.table.upsert(agent)
        self._refresh_summary()
        if agent.pane_id == self.table.selected_pane_id:
            self._refresh_prompt_bar()
            self._refresh_keys()
        elif self.service.focused is None:
            self._selection_changed()

    @_handler
    def on_agent_removed(self, message: AgentRemoved) -> None:
        gone = self.table.agents.get(message.pane_id)
        if gone is not None:
            self.notifier.forget(gone.key or gone.pane_id)
        self.table.remove_agent(message.pane_id)
        self._refresh_summary()
        self._selection_changed()

    @_handler
    def on_service_notice(self, message: ServiceNotice) -> None:
        """One line about a problem that does not stop headspace (a bad file, a source turned off)."""
        self.notify(clean(message.text), severity="warning", timeout=15, markup=False)

    # -- notifications --------------------------------------------------------------------
    @work(thread=True, group="notify", exit_on_error=False)
    def _prepare_notifications(self) -> None:
        """Let OSC notifications out of tmux (headspace's own pane only), and look for notify-send."""
        problems = []
        if self.config.notify in ("osc", "osc777"):
            _value, problem = deliver.enable_passthrough(os.environ)
            problems.append(problem)
        if self.config.desktop_notify:
            problem = deliver.desktop_problem(os.environ)
            problems.append(f"desktop_notify: {problem}" if problem else "")
            self._notify_send = None if problem else deliver.notify_send_path(os.environ)
        for problem in filter(None, problems):
            self.call_from_thread(self.post_message, ServiceNotice(problem))

    def _notify_soon(self) -> None:
        """Send the due notification when the notifier says (one timer at a time)."""
        when = self.notifier.next_due()
        if when is None or self._notify_timer is not None:
            return
        self._notify_timer = self.set_timer(max(0.0, when - self.clock()), self._send_due)

    @_handler
    def _send_due(self) -> None:
        self._notify_timer = None
        note = self.notifier.due(self.clock())
        if note is not None:
            self._write_terminal(terminal_text(note, self.config.notify, inside_tmux=bool(os.environ.get("TMUX"))))
            if self._notify_send:  # besides the terminal's (notify only says what the terminal gets)
                self._desktop_notify(note, self._notify_send)
        self._notify_soon()

    def _write_terminal(self, text: str) -> None:
        """Raw bytes to the terminal, between two frames.

        Textual has no public call for this (``bell`` writes BEL alone); its own
        ``copy_to_clipboard`` writes OSC 52 the same way.  Called on the app's
        loop, which is where frames are written too, and the driver queues each
        write whole: a notification never lands inside a frame.
        """
        driver = self._driver
        if text and driver is not None and self.is_running and not self.is_headless:
            driver.write(text)
            driver.flush()

    @work(thread=True, group="notify", exit_on_error=False)
    def _desktop_notify(self, note: Notification, binary: str) -> None:
        problem = deliver.desktop_notify(note, binary)
        if problem:
            log.warning("%s", problem)

    # -- crashes ------------------------------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error ends the app: its traceback goes to the log file, not the screen."""
        log.error("headspace stopped on an unexpected error", exc_info=error)
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        # Textual would print the traceback over the user's terminal; ``run_app``
        # prints one line and the log file's path instead.
        self._exit_renderables.clear()

    @_handler
    def on_problem_changed(self, message: ProblemChanged) -> None:
        self.problem = message.problem

    def watch_problem(self) -> None:
        self._refresh_summary()

    def watch_layout_mode(self) -> None:
        self._apply_layout()

    def _refresh_summary(self) -> None:
        agents = list(self.table.agents.values())
        needing = sum(1 for a in agents if a.state.needs_you)
        working = sum(1 for a in agents if a.state is AgentState.WORKING)
        summary = self.query_one("#summary", Static)
        empty = self.query_one("#empty", Static)
        if self.problem and self.problem != "starting":
            text = Text.assemble(("headspace", "bold"), "  ", safe(self.problem, "red"))
        else:
            waited = ""
            today = self.service.waited_today(self.table.agents, self.clock())
            if today is not None:
                waited = f"  ·  waited on you today: {elapsed(today, precise=False)}"
            text = Text.assemble(
                ("headspace", "bold"),
                f"  {len(agents)} agent{'s' if len(agents) != 1 else ''}  ·  ",
                (f"{needing} need{'s' if needing == 1 else ''} you", "bold yellow"),
                f"  ·  {working} working{waited}",
            )
        if text != self._summary_text:  # repaint only when it reads differently
            self._summary_text = text
            summary.update(text)
        if agents:
            empty.display = False
        else:
            empty.display = True
            if self.problem == "starting":
                empty.update("Looking for Claude Code agents…")
            elif self.problem:
                empty.update(Text(f"{clean(self.problem)}.\nStart tmux, or point headspace at a server with -L NAME / -S PATH."))
            else:
                empty.update(Text("No Claude Code agents found.\nStart `claude` in a tmux pane; it shows up here within seconds."))

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
        agent = self.selected_agent()
        # Per pane too: Textual also rebuilds the footer on its own occasions (focus,
        # a screen closing), so a set of keys equal to the last one asked for may
        # not be what the footer shows after another agent was selected in between.
        live = (agent.pane_id if agent is not None else None, live_keys(agent))
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
        side = body.has_class("side") or (body.has_class("auto") and self.screen_stack[0].has_class("-wide"))
        self.layout_mode = "stacked" if side else "side"

    # -- which keys are live ----------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Agent keys only where they can do something for the selected agent (``policy.key_allowed``; the footer shows only those)."""
        if not self.is_running or not self.screen_stack:
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
        self.cursor_position = Offset(max(0, self.size.width - 1), 0)

    def action_why(self) -> None:
        agent = self.selected_agent()
        if agent is None or not self._keys_live():
            return
        now = self.clock()
        explanation, channel = self.service.why(agent, now)
        self.push_screen(WhyScreen(agent, explanation, now, self.state_styles, channel))

    def action_timeline(self) -> None:
        agent = self.selected_agent()
        if agent is None or not self._keys_live():
            return
        self.push_screen(TimelineScreen(agent, self.service.timeline(agent), self.state_styles))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(help_rows(self.screen_stack[0]), str(self.config_path or default_config_path())))

    # -- answering -------------------------------------------------------------------
    def _keys_live(self) -> bool:
        """Agent keys act only on the main screen with the table focused (not while typing a filter)."""
        return self.screen is self.screen_stack[0] and not isinstance(self.focused, Input)

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

        self.push_screen(ReplyScreen(agent.target, question), done)

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

        self.push_screen(BatchApproveScreen(pairs), done)

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
            self.exit(jump.exit_with or None)
