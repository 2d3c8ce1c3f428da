"""Issue 37's papercuts: each one seen by a k9s/lazygit user, each with the check that it is gone."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from textual.geometry import Region

from headspace_tui.app.widgets.summary import SummaryLine, summary_text
from headspace_tui.model import Agent, AgentState, Observation
from tests.ui.apps import make_app, service_of, wait_until
from tests.unit.test_theme_contrast import contrast

REPO = Path(__file__).resolve().parents[2]
FAKE_AGENT = REPO / "benchmarks" / "fake_agent.py"  # draws real recorded Claude screens; SIGUSR2: the permission menu
CORPUS = REPO / "snapshots" / "panes" / "claude-2.1.330" / "alt" / "120x40"


def run(coro):
    return asyncio.run(coro)


# -- until the first full look the header says it is still looking --------------------------------


def test_the_header_says_looking_while_starting_not_a_count():
    agents = [Agent(pane_id="%1", target="api:0.0", session="api", observation=Observation(AgentState.PERMISSION))]
    line = summary_text(agents, "starting", None).plain
    assert line == "headspace  looking…"
    assert "agent" not in summary_text([], "starting", None).plain  # never "0 agents"
    assert summary_text(agents, None, None).plain.startswith("headspace  1 agent  ·  1 needs you")


def test_from_the_first_frame_the_header_never_under_counts_who_needs_you(private_tmux, tmp_path, monkeypatch):
    """Three agents on a real tmux server (stand-ins drawing recorded Claude screens), two at a permission menu.

    Every line the header shows from the app's first frame is either "looking…"
    or the whole count: never "0 agents", never fewer than two needing you.
    """
    results = tmp_path / "results"
    results.mkdir()
    command = ["bash", "-c", f"exec -a claude {sys.executable} -S {FAKE_AGENT} {CORPUS} {results}"]
    panes = [private_tmux.new_session(f"agent{n}", width=120, height=40, cwd=str(tmp_path), command=command) for n in range(3)]
    for pane in panes:  # each stand-in has drawn its idle screen: its signal handlers are set
        _wait(lambda pane=pane: "❯" in private_tmux.run("capture-pane", "-p", "-t", pane), f"{pane} drawn")
    for pane in panes[:2]:
        os.kill(int(private_tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip()), signal.SIGUSR2)
    _wait(lambda: len(list(results.glob("*.drawn"))) == 2, "both menus drawn")  # before headspace starts

    shown: list[str] = []
    real_show = SummaryLine.show

    def recording_show(self, text):  # records what the header is asked to show; shows it as before
        shown.append(text.plain)
        real_show(self, text)

    monkeypatch.setattr(SummaryLine, "show", recording_show)

    async def scenario():
        app = make_app(private_tmux.name, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: shown and "3 agents" in shown[-1], "the header to count three agents", 30)

    run(scenario())
    # The first line is "looking…" or already the whole count: a first look that has every agent before the first
    # frame skips "looking…" (seen once in a clean-clone run), and that is the property, not a fault.
    assert shown[0] == "headspace  looking…" or shown[0].startswith("headspace  3 agents  ·  2 need you"), shown[:3]
    counted = [line for line in shown if line != "headspace  looking…"]
    assert counted, shown
    for line in counted:
        assert line.startswith("headspace  3 agents  ·  2 need you"), shown


def _wait(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# -- Ctrl+C quits, as in k9s ------------------------------------------------------------------


def test_ctrl_c_quits_from_the_table_a_window_and_the_filter():
    from headspace_tui.app.screens.why import WhyScreen
    from tests.ui.apps import demo_app, screen_open

    async def scenario(before) -> bool:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            await before(pilot, app)
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: app.return_code is not None, "the app to end", 5)
            return app.return_code == 0

    async def nothing(pilot, app):
        pass

    async def why(pilot, app):
        await pilot.press("e")
        await wait_until(pilot, lambda: screen_open(app, WhyScreen), "the why window")

    async def filtering(pilot, app):
        await pilot.press("slash", "a")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "filter"

    for before in (nothing, why, filtering):
        assert run(scenario(before)), before.__name__


def test_ctrl_c_in_input_mode_neither_quits_nor_reaches_the_pane(private_tmux, tmp_path):
    """In input mode every key is the pane's: Ctrl+C is not forwarded (x interrupts), is said so, and does not end headspace."""
    from tests.ui.test_typing import app_on, pane_running, show, stand_in

    pane = pane_running(private_tmux, "first", [str(stand_in(tmp_path))], tmp_path)

    async def scenario():
        app = app_on(private_tmux)
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            show(app, pane, "idle_fresh")
            await wait_until(pilot, lambda: pane in app.table.agents, "the row")
            await pilot.press("i")
            await wait_until(pilot, lambda: app.main.input_mode.link is not None, "input mode's link to the pane")
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: any("ctrl+c is not forwarded" in str(n.message) for n in app._notifications), "the word that it was not sent")
            assert app.return_code is None and app.main.input_mode.active
            assert "^C" not in private_tmux.capture(pane)

    run(scenario())


# -- toasts cover nothing you triage ---------------------------------------------------------------


@pytest.mark.parametrize("size", [(120, 40), (160, 48), (200, 50), (100, 30)], ids=["stacked", "side", "wide", "small"])
def test_toasts_cover_no_row_of_the_table_nor_the_prompt(size):
    """Three toasts at once (a triage burst): none over the table, the prompt bar or the preview's lower half."""
    from textual.widgets._toast import Toast

    from headspace_tui.app.widgets.agent_table import AgentTable
    from headspace_tui.app.widgets.preview import PanePreview, PromptBar
    from tests.ui.apps import demo_app

    async def scenario():
        app = demo_app()
        async with app.run_test(size=size, notifications=True) as pilot:
            await app.snapshot_loader(pilot)
            for n in range(3):
                app.notify(f"api:0.0: approved ({n}); Claude confirmed it in its transcript", timeout=30)
            await wait_until(pilot, lambda: len([t for t in app.screen.query(Toast) if t.region.height]) >= 1, "the toasts shown")
            await pilot.pause()
            table, preview, bar = app.query_one(AgentTable).region, app.query_one(PanePreview).region, app.query_one(PromptBar).region
            lower_half = Region(preview.x, preview.y + preview.height // 2, preview.width, preview.height - preview.height // 2)
            visible = [toast.region for toast in app.screen.query(Toast)]  # as drawn (clipped by the rack's scrolling)
            assert any(shown.area for shown in visible), visible
            for shown in filter(lambda r: r.area, visible):
                assert not shown.overlaps(table), (size, shown, table)
                assert not shown.overlaps(bar) and not shown.overlaps(lower_half), (size, shown, preview, bar)
                assert shown.y > preview.y  # the preview's title stays readable

    run(scenario())


# -- l cycles auto → beside → under, and says which ---------------------------------------------


def test_l_cycles_auto_beside_under_and_the_preview_says_which():
    from headspace_tui.app.widgets.preview import PanePreview
    from tests.ui.apps import demo_app

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(200, 50)) as pilot:
            await app.snapshot_loader(pilot)
            body, preview = app.query_one("#body"), app.query_one(PanePreview)

            def seen() -> tuple[str, str, str]:
                return app.layout_mode, body.styles.layout.name, str(preview.border_subtitle)

            assert seen() == ("auto", "horizontal", "l layout: auto (beside)")  # at 200 columns auto is beside
            steps = []
            for _ in range(3):
                await pilot.press("l")
                await pilot.pause()
                steps.append(seen())
            assert steps == [("side", "horizontal", "l layout: beside"), ("stacked", "vertical", "l layout: under"), ("auto", "horizontal", "l layout: auto (beside)")]
            await pilot.resize_terminal(100, 40)
            await wait_until(pilot, lambda: seen() == ("auto", "vertical", "l layout: auto (under)"), "auto to go under when narrow")

    run(scenario())


# -- every state colour readable on what it is drawn on ---------------------------------------------

ALL_STATES = [
    ("a", "permission_bash", 5),
    ("b", "question_two_options", 6),
    ("c", "plan_exit_plan_mode", 7),
    ("d", "input_plain_question", 8),
    ("e", "error_gave_up_500", 9),
    ("f", "working_streaming", 10),
    ("g", "starting_trust_dialog", 11),
    ("h", "idle_finished", 12),
    ("i", "exited_shell_back", 13),
]


@pytest.mark.parametrize("theme", sorted(p.stem for p in (REPO / "themes").glob("*.toml")))
def test_every_state_colour_is_readable_where_it_is_drawn(theme):
    """Every state's word in the table, and the header's "N need you", at least 4.5:1 against the cell's own background, as rendered.

    headspace-16 draws with the terminal's own ANSI colours, which the terminal
    defines (and the user tuned to their background): no number can be
    computed for it here.  It is held to what can be said: every state is an
    ANSI colour, none drawn in the background's own colour.
    """
    from headspace_tui.app.widgets.agent_table import AgentTable
    from headspace_tui.shared.config import Config
    from headspace_tui.shared.theme_files import builtin_dir, load_themes
    from tests.ui.apps import demo_app, show_recorded

    spec = next(s for s in load_themes([builtin_dir()])[0] if s.name == theme)
    if spec.ansi:
        assert all(colour.startswith("ansi_") for colour in spec.states.values()), spec.states
        assert spec.colors["background"] == "ansi_default" and "ansi_default" not in {v for k, v in spec.states.items() if k != "idle"}
        assert spec.states["idle"] == "ansi_default"  # the terminal's own foreground on its own background
        return

    async def scenario() -> list[tuple[str, float]]:
        app = demo_app(ALL_STATES, config=Config(theme=theme))
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            show_recorded(app, 20, "j", "idle_fresh", 14)
            record = service_of(app)._fleet.first.panes["%20"].record
            service_of(app).replay(record, "", Observation(AgentState.UNKNOWN), app.clock() - 14, family="claude")
            await wait_until(pilot, lambda: app.table.agents.get("%20") is not None and app.table.agents["%20"].state is AgentState.UNKNOWN, "the unknown row")
            # No recording says a limit's words: the reading Claude's reader makes of them (tests/unit/test_limits.py).
            show_recorded(app, 21, "k", "error_gave_up_500", 15)
            limit = Observation(AgentState.LIMITED, error="API Error: Request rejected (429) · rate limit error")
            service_of(app).replay(service_of(app)._fleet.first.panes["%21"].record, "", limit, app.clock() - 15, family="claude")
            await wait_until(pilot, lambda: app.table.agents.get("%21") is not None and app.table.agents["%21"].state is AgentState.LIMITED, "the limited row")
            await pilot.pause()
            table = app.query_one(AgentTable).region
            words = {state.value for state in AgentState}
            found = []
            for y, strip in enumerate(app.screen._compositor.render_strips()):
                for segment in strip:
                    text = segment.text.strip()
                    state_cell = table.y < y < table.bottom and len(text.split()) == 2 and text.split()[1] in words
                    if state_cell or (y == 0 and "need" in text):
                        style = segment.style
                        assert style is not None and style.color is not None and style.bgcolor is not None, (text, style)
                        found.append((text, contrast(style.color.get_truecolor(), style.bgcolor.get_truecolor())))
            return found

    found = run(scenario())
    assert {text.split()[1] for text, _ in found if "need" not in text} == {state.value for state in AgentState}, found
    assert any("need" in text for text, _ in found), found
    low = [(text, round(ratio, 2)) for text, ratio in found if ratio < 4.5]
    assert not low, low


# -- a fresh theme picker ----------------------------------------------------------------------------


def test_the_theme_picker_opens_fresh_every_time():
    """Whatever was typed before (a theme picked by name, a query that matched nothing), the picker opens empty, listing every theme."""
    from textual.command import CommandPalette
    from textual.widgets import Input

    from headspace_tui.shared.theme_files import builtin_dir
    from tests.ui.apps import demo_app, screen_open
    from tests.ui.test_themes_and_palette import highlighted, offered

    shipped = sorted(p.stem for p in builtin_dir().glob("*.toml"))

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)

            async def open_picker() -> None:
                await pilot.press("ctrl+p")
                await wait_until(pilot, lambda: screen_open(app, CommandPalette), "the palette")
                await pilot.press(*"theme")
                await wait_until(pilot, lambda: highlighted(app).startswith("Theme"), "the palette to offer Theme")
                await pilot.press("enter")
                await wait_until(pilot, lambda: screen_open(app, CommandPalette) and len(offered(app)) == len(shipped), "the theme picker's list")
                assert app.screen.query_one(Input).value == ""
                assert [o.split()[0] for o in offered(app)] == shipped

            await open_picker()
            await pilot.press(*"light")
            await wait_until(pilot, lambda: offered(app) == ["headspace-light"], "the one match")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.theme == "headspace-light", "the theme applied")
            await open_picker()
            await pilot.press(*"zzz")
            await wait_until(pilot, lambda: not offered(app), "no match")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the picker closed")
            await open_picker()
            app.search_themes()  # opened again on top (as the palette's Theme does)
            await wait_until(pilot, lambda: screen_open(app, CommandPalette) and app.screen.query_one(Input).value == "" and len(offered(app)) == len(shipped), "a fresh picker")

    run(scenario())


# -- the timeline in time order and in the user's words --------------------------------------------


def test_the_timeline_reads_in_time_order_and_in_the_users_words():
    import io

    from rich.console import Console

    from headspace_tui.app.screens.timeline import timeline_table
    from headspace_tui.state.eventlog import StoredEvent

    t0 = 1_800_000_000.0

    def event(n: int, ts: float, kind: str, **payload) -> StoredEvent:
        return StoredEvent(n, ts, "k", kind, payload)

    events = [
        event(1, t0, "agent_state", to="idle", since=t0, source="screen", rule="input box"),
        event(2, t0 + 10, "state_transition", **{"from": "idle", "to": "commanded", "intent": "command", "confidence": 1.0}),
        event(3, t0 + 11, "state_transition", **{"from": "commanded", "to": "processing", "intent": "progress", "confidence": 1.0}),
        event(4, t0 + 12, "state_transition", **{"from": "processing", "to": "processing", "intent": "progress", "confidence": 1.0}),
        # Seen on the screen at +13, dated by Claude's word to +9.5 (before the command was logged).
        event(5, t0 + 13, "agent_state", to="working", since=t0 + 9.5, source="status-file", rule="busy"),
        event(6, t0 + 20, "agent_state", to="permission", since=t0 + 20, source="hook", rule="PermissionRequest"),
        event(7, t0 + 30, "state_transition", **{"from": "processing", "to": "complete", "intent": "completion", "confidence": 0.9}),
    ]
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(timeline_table(events, {}))
    lines = [line.rstrip() for line in console.export_text().splitlines() if line.strip()]
    times = [line.split()[0] for line in lines]
    assert times == sorted(times), lines  # in time order
    words = [line.split(None, 1)[1] for line in lines]
    assert words == [
        "state → ○ idle  (seen on its screen)",
        "state → ● working  (Claude's status file)",
        "you gave it a command",
        "it started on the command",
        "state → ▲ permission  (Claude's hook)",
        "it finished the command",
    ], words
    shown = "\n".join(lines)
    assert "processing" not in shown and "1.00" not in shown and "progress" not in shown


# -- an honest "waited on you" label --------------------------------------------------------------


def test_the_header_says_its_waiting_total_is_a_sum_over_agents():
    """Two agents waiting five minutes at once: 10m, and the label says it is a sum (not how long you were waited on)."""
    agents = [Agent(pane_id=f"%{n}", target=f"a{n}:0.0", session=f"a{n}", observation=Observation(AgentState.PERMISSION)) for n in range(2)]
    line = summary_text(agents, None, 2 * 300.0).plain
    assert line.endswith("·  waits today (sum): 10m"), line
    assert "waited on you today" not in line


def test_a_host_still_on_its_first_look_is_said_beside_the_counts_of_the_others():
    """The local server looked, the remote host not yet: the counts are this machine's, and the header says box is still being looked at."""
    from types import SimpleNamespace

    from headspace_tui.service.watching.fleet import Fleet

    told: list[tuple] = []
    monitors = [SimpleNamespace(host=SimpleNamespace(name=name)) for name in ("local", "box")]  # the fleet reads only their names here
    fleet = Fleet(monitors, lambda problem, hosts: told.append((problem, hosts)))  # type: ignore[arg-type]
    fleet.problem_of("local", "starting")
    assert told[-1] == ("starting", ())
    fleet.problem_of("local", None)  # this machine's first look is whole; box is still connecting
    assert told[-1] == (None, (("box", "starting"),))
    agents = [Agent(pane_id="%1", target="api:0.0", session="api", observation=Observation(AgentState.PERMISSION))]
    line = summary_text(agents, *told[-1][:1], None, told[-1][1]).plain
    assert line == "headspace  1 agent  ·  1 needs you  ·  0 working  ·  looking at box…", line
    fleet.problem_of("box", "box: ssh: connect to host box port 22: Connection refused")
    problem, hosts = told[-1]
    assert hosts == (("box", problem),) and summary_text(agents, problem, None, hosts).plain.endswith("·  box unreachable")
    fleet.problem_of("box", None)
    assert told[-1] == (None, ())
