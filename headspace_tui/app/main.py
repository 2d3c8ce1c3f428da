"""The headspace app: what is app-wide, around the main screen (screens/main_screen.py).

Thin by design: everything comes from the ``service.Service`` it is handed.
The app runs the service in a worker and posts its events as Textual
messages (messages.py) to the main screen, which shows them and owns the
keys.  The service rings the agents that start needing you
(resident/ringer.py); the app says a ring on its own terminal where no
client of the rung tmux server shows it.  Answers go to the service
(``Service.answer``), whose answer reports come back here.  The app also
keeps the themes and the palette's commands.
An error in a handler or a worker is logged with its traceback and shown as
one line (guard.py); it never ends the app or the monitor, and an
unexpected one ends the app with one line and the log's path, not a
traceback over the user's terminal.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.style import Style
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.filter import Monochrome, NoColor
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ..api import facade as svc
from ..api.facade import Event, Facade, Notice, Report
from ..model import Agent, AgentState
from ..notifications import deliver
from ..notifications.decide import terminal_text, told
from ..shared import theme_files
from ..shared.config import Config
from ..shared.safe_text import clean
from . import gc_pace, patches, textual_private
from .agent_lifecycle import AgentLifecycle, can_stop
from .endings import end_on_signals
from .guard import ui_handler as _handler
from .messages import AgentChanged, AgentRemoved, LayoutChosen, PaneCaptured, ProblemChanged, ServiceNotice
from .palette import AgentCommands, ThemeCommands
from .screens.main_screen import MainScreen
from .themes import STATE_DEFAULTS, remember, remembered, state_style, to_textual, warning_style
from .widgets.agent_table import RETRYING, SORTS, AgentTable

GC_SETTLE_AFTER = 3.0  # seconds after start: the app is up, the first discovery done (see gc_pace)
NO_COLOR_THEME = "headspace-16"  # under NO_COLOR: the terminal's own colours (and the NoColor filter takes even those)
MONITOR_RESTART = 1.0  # seconds before a monitor that stopped on an error runs again

log = logging.getLogger(__name__)


class HeadspaceApp(App[str | None]):
    TITLE = "headspace"
    CSS_PATH = "headspace.tcss"
    COMMANDS = App.COMMANDS | {AgentCommands}
    # Ctrl+C quits, as in k9s and lazygit, wherever you are (a priority binding: before a
    # screen's or a text box's copy, which swallowed it without a word).  Not in input mode,
    # where check_action lets only the leave key act and the key is said not to be forwarded.
    BINDINGS = [Binding("ctrl+c", "quit", "quit", show=False, priority=True, system=True)]

    # The layout setting (auto, side, stacked): the config's, then the palette's or ``l``'s; the main screen follows it.
    layout_mode: reactive[str] = reactive("auto", init=False)
    # Set for the real process only (run_app), never for tests' apps, which share pytest's process:
    end_on_signals = False  # SIGTERM / SIGHUP end the app as q does
    pace_gc = False  # freeze what the app is made of and pace garbage collection (gc_pace), process-wide

    def __init__(
        self,
        service: Facade,
        *,
        notices: tuple[str, ...] = (),
        log_path: Path | None = None,
        config_path: Path | None = None,
        theme_dirs: list[Path] | None = None,
        theme_choice: Path | None = None,
    ) -> None:
        super().__init__()
        patches.apply_all()  # process-wide, once (textual_private.py; doctor says whether each applied)
        if self.no_color:
            textual_private.set_filters(self, [NoColor() if isinstance(each, Monochrome) else each for each in textual_private.filters(self)])
        self.service = service
        self.config: Config = service.config
        self.clock = service.clock
        self.live = service.live
        self.config_path = config_path  # where the user's settings live (said in the help and the palette)
        self.state_styles: dict[AgentState, Style] = {}
        self.retrying_style: Style | str = RETRYING  # the theme's warning colour, for the retrying mark
        # Where the palette's theme choice is kept (None: not kept, as in tests).
        self.theme_choice = theme_choice
        self.own_themes: dict[str, str] = {}  # headspace's themes (theme files), in order: name -> what the palette says of it
        self._remember_theme = False  # only the user's choices, not the one made at start
        self.notices = notices  # problems found before the screen existed (config, event log)
        self.log_path = log_path
        self.crash: BaseException | None = None
        service.subscribe(self._service_event)
        service.on_answer_report(self._answer_reported)
        self.notices = (*self.notices, *self._load_themes(theme_dirs if theme_dirs is not None else [theme_files.builtin_dir()]))
        self.set_reactive(HeadspaceApp.layout_mode, self.config.layout)
        self._main_screen: MainScreen | None = None

    # -- the main screen ------------------------------------------------------------
    @property
    def main(self) -> MainScreen:
        """The main screen (made once: it is the app's default screen)."""
        if self._main_screen is None:
            self._main_screen = MainScreen(self.service, self.config, self.config_path)
        return self._main_screen

    def get_default_screen(self) -> Screen:
        return self.main

    @functools.cached_property
    def lifecycle(self) -> AgentLifecycle:
        """The palette's New / Stop / Restart agent (on the main screen's selection)."""
        return AgentLifecycle(self.main)

    # The main screen's table, selection and keys, asked of the app (the palette, tests, benchmarks).
    @property
    def table(self) -> AgentTable:
        return self.main.table

    def selected_agent(self) -> Agent | None:
        return self.main.selected_agent()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """As the main screen answers: an agent key where the selected agent allows it; the app's own actions (quit, the palette) always."""
        return self.main.check_action(action, parameters)

    # -- themes ----------------------------------------------------------------
    def _load_themes(self, folders: list[Path]) -> list[str]:
        """Register every theme file's theme and pick the one to start with; one line per problem."""
        specs, problems = theme_files.load_themes(folders)
        for spec in specs:
            try:
                self.register_theme(to_textual(spec))
            except theme_files.ThemeError as exc:
                problems.append(str(exc))
                continue
            kind = "the terminal's own colours" if spec.ansi else "dark" if spec.dark else "light"
            self.own_themes[spec.name] = f"{kind} · {spec.source.removeprefix('theme ')}"
        if self.no_color:
            # NO_COLOR: no colour at all (the NoColor filter set in __init__), and the
            # theme whose colours are the terminal's own: a remembered or configured one
            # (a light one paints a white background) has no say.
            self.theme = NO_COLOR_THEME
            return problems
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
        self.retrying_style = warning_style(self.theme_variables, no_color=self.no_color)
        self.main.restyle(self.state_styles, self.retrying_style)  # now, or when it mounts
        if self._remember_theme and self.theme_choice is not None and not self.no_color:
            remember(self.theme_choice, self.theme, self.config.theme)

    # -- the palette --------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every action in the palette (Textual's own, Theme included, after headspace's)."""
        main = self.main
        agent = [  # (title, help, action): offered where the main screen's check_action allows the action
            ("Approve", "approve the selected agent's permission or plan", "approve"),
            ("Deny", "deny the selected agent's permission or plan", "deny"),
            ("Reply", "reply with free text to the selected agent (at a question: its 'Type something.' option)", "reply"),
            ("Input mode", "type straight into the selected agent's pane until Ctrl+]", "input_mode"),
            ("Nudge", "send the nudge text to the selected (idle) agent", "nudge"),
            ("Interrupt", "interrupt the selected (working) agent", "interrupt"),
            ("Jump", "switch your tmux client to the selected agent's pane", "jump"),
            ("Why", "why the selected agent shows its state", "why"),
            ("Timeline", "the selected agent's states, commands and outcomes", "timeline"),
        ]
        general: list[tuple[str, str, Callable[[], object]]] = [
            ("Filter", "filter the table", main.action_filter),
            ("Next agent that needs you", "select it (Tab; Shift+Tab the previous one)", main.action_next_waiting),
            ("Snooze or wake the selected agent", "put its wait off for a while, or until it changes (z)", main.action_snooze),
            ("Layout: side by side", "the preview beside the table", functools.partial(self._set_layout, "side")),
            ("Layout: stacked", "the preview under the table", functools.partial(self._set_layout, "stacked")),
            ("Layout: automatic", "side by side when wide, stacked when narrow", functools.partial(self._set_layout, "auto")),
            ("Preview: scroll back", "show the selected pane's history (tmux scrollback)", main.action_scroll_back),
            ("Preview: live", "back to the pane as it is now", main.action_preview_live),
            ("Spending by day", "each agent's tokens and estimated cost per day, the last two weeks", main.action_spending),
            ("Help", "every key", main.action_help),
        ]
        for title, help_text, action in agent:
            if screen is main and main.check_action(action, ()):
                yield SystemCommand(title, help_text, getattr(main, f"action_{action}"))
        if screen is main and self.live:
            yield SystemCommand("New agent…", "start claude in a new tmux window: a folder, optionally a fresh git worktree", self.lifecycle.new_agent)
            if can_stop(main.selected_agent()):
                yield SystemCommand("Stop agent", "the selected agent's own /exit (idle at an empty input box); else kill its pane, if you confirm", self.lifecycle.stop_agent)
                yield SystemCommand("Restart agent", "/exit, then claude --resume <its session> in a new window, same folder", self.lifecycle.restart_agent)
        for title, help_text, callback in general:
            yield SystemCommand(title, help_text, callback)
        for column, meaning in SORTS.items():  # the selected agent stays selected
            yield SystemCommand(f"Sort by {column}", f"{meaning}; again: the other way round", functools.partial(main.sort_by, column))
        yield from super().get_system_commands(screen)

    def search_themes(self) -> None:
        """The palette's "Theme": headspace's themes, the one in use marked (palette.ThemeCommands), not Textual's twenty."""
        self.push_screen(CommandPalette(providers=[ThemeCommands], placeholder="Search for themes…"))

    def _set_layout(self, mode: str) -> None:
        self.layout_mode = mode

    def end_after_jump(self, exit_with: str | None) -> None:
        """A jump that ends headspace (a popup over the agent, or the command to print outside tmux); the warm UI closes its popup instead (warm.py)."""
        self.exit(exit_with)

    def nothing_to_close(self) -> None:
        """Esc on the main screen with nothing open to close: nothing here; the warm UI closes its popup (warm.py)."""

    def jump_to(self, pane_id: str) -> None:
        """The palette's "jump to <agent>": select it, then jump."""
        if self.table.select(pane_id):
            self.main.action_jump()

    # -- running ----------------------------------------------------------------------
    def on_mount(self) -> None:
        self._theme_changed()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._remember_theme = True
        self.set_keymap(self.config.keys)
        if self.end_on_signals:
            end_on_signals(self)
        self._start_monitor()  # the service's stream: a resident one's, or the service in this process (which runs only when it watches)
        if self.live:
            self._prepare_notifications()
            if self.pace_gc:
                self.set_timer(GC_SETTLE_AFTER, self._pace_gc)  # once the first rows are in
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

    # -- the service's events, as messages ----------------------------------------------
    def _pace_gc(self) -> None:
        """Freeze what the app is made of, and collect the young on the app's clock from now on (gc_pace)."""
        if gc_pace.settle():  # not on a Python it was not measured on (logged; doctor says so)
            self.set_interval(gc_pace.TICK, gc_pace.tick)

    def _service_event(self, event: Event) -> None:
        """An event of the service (on the app's loop), as a message: an agent's to the main screen, a notice to the app."""
        if isinstance(event, svc.AgentChanged):
            self.main.post_message(AgentChanged(event))
        elif isinstance(event, svc.AgentRemoved):
            self.main.post_message(AgentRemoved(event))
        elif isinstance(event, svc.PaneCaptured):
            self.main.post_message(PaneCaptured(event))
        elif isinstance(event, svc.ProblemChanged):
            self.main.post_message(ProblemChanged(event))
        elif isinstance(event, Notice):
            self.post_message(ServiceNotice(event.text))
        elif isinstance(event, svc.Rung):
            self._rung(event)

    def on_layout_chosen(self, message: LayoutChosen) -> None:
        """``l`` on the main screen: the next layout setting."""
        self.layout_mode = message.mode

    @_handler
    def on_service_notice(self, message: ServiceNotice) -> None:
        """One line about a problem that does not stop headspace (a bad file, a source turned off)."""
        self.notify(clean(message.text), severity="warning", timeout=15, markup=False)

    @_handler
    def _answer_reported(self, report: Report) -> None:
        """How an answer goes: the main screen moves on like an inbox once its keys went, and says the final word in one line."""
        self.main.answer_reported(report)

    # -- notifications ----------------------------------------------------------------
    # The service rings (resident/ringer.py, in both modes): the app says a ring only on its own terminal, where no client of the rung server shows it.
    @work(thread=True, group="notify", exit_on_error=False)
    def _prepare_notifications(self) -> None:
        """Let OSC notifications out of tmux (headspace's own pane only); say once what keeps the desktop's from showing."""
        problems = []
        if self.config.notify in ("osc", "osc777"):  # for a ring written to its own pane of another tmux server (``_rung``)
            _, problem = deliver.enable_passthrough(os.environ)
            problems.append(problem)
        if self.config.desktop_notify:
            problem = deliver.desktop_problem(os.environ)
            problems.append(f"desktop_notify: {problem}" if problem else "")
        for problem in filter(None, problems):
            self._say_from_thread(problem)

    def _say_from_thread(self, line: str) -> None:
        """One line for the user, from a thread of the notifications."""
        if self.is_running:
            self.call_from_thread(self.post_message, ServiceNotice(line))

    def _rung(self, event: svc.Rung) -> None:
        """The service rang a wait to the clients of its tmux server: said here too when this terminal is none of them.

        Inside a pane of that server, or in its popup, the ringer's write
        reached this terminal's client already; outside tmux, or in a pane
        of another server (through passthrough), nothing did.
        """
        tmux = os.environ.get("TMUX", "")
        if tmux and (not os.environ.get("TMUX_PANE") or _same_file(tmux.split(",")[0], event.server)):
            return
        self._write_terminal(terminal_text(told(event.title, event.body, event.link), self.config.notify, inside_tmux=bool(tmux)))

    def _write_terminal(self, text: str) -> None:
        """Raw bytes to the terminal, between two frames.

        Textual has no public call for this (``bell`` writes BEL alone); its own
        ``copy_to_clipboard`` writes OSC 52 the same way.  Called on the app's
        loop, which is where frames are written too, and the driver queues each
        write whole: a notification never lands inside a frame.
        """
        if text:
            textual_private.write_between_frames(self, text)

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
        textual_private.drop_exit_renderables(self)


def _same_file(one: str, other: str) -> bool:
    """Whether two socket paths name one file (``TMUX`` may name it by another path than the service does)."""
    return os.path.realpath(one) == os.path.realpath(other)
