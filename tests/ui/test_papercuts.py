"""Issue 25's papercuts: each one seen by the user, each with the check that it is gone."""

from __future__ import annotations

import asyncio
import json
import re
import shutil

import pytest
from textual.command import CommandPalette
from textual.geometry import Region
from textual.widgets._toast import Toast

from headspace_tui.app.palette import CURRENT, theme_entries
from headspace_tui.app.widgets.agent_table import COLUMN_INDEX, _cut, fit, plan_columns
from headspace_tui.app.widgets.preview import PanePreview, PromptBar
from headspace_tui.app.widgets.summary import summary_text
from headspace_tui.model import Agent, AgentState, Observation
from headspace_tui.remote.host import RemoteHost
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config, HostSpec
from headspace_tui.shared.theme_files import builtin_dir
from headspace_tui.tmux.server import TmuxServer
from tests.ui.apps import app_of, demo_app, screen_open, show_recorded, wait_until
from tests.ui.test_repaint import Mirror
from tests.ui.test_themes_and_palette import highlighted, offered


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("size", [(120, 40), (160, 48)], ids=["stacked", "side"])
def test_a_toast_leaves_the_prompt_area_free_and_nothing_behind(size):
    """A toast (a refused key's reason, 5 s) must not cover where Claude's prompt is: the preview's bottom, the prompt bar."""

    async def scenario():
        app = demo_app()
        async with app.run_test(size=size, notifications=True) as pilot:
            await app.snapshot_loader(pilot)
            mirror = Mirror(app)
            await mirror.start(pilot)
            app.notify("docs:0.0: the pane is not at Claude's input box (it is question); nothing sent", severity="warning", timeout=1.0)
            await wait_until(pilot, lambda: any(t.region.height for t in app.screen.query(Toast)), "the toast shown")
            toast = app.screen.query_one(Toast).region
            preview, bar = app.query_one(PanePreview).region, app.query_one(PromptBar).region
            assert not toast.overlaps(bar), (toast, bar)
            lower_half = Region(preview.x, preview.y + preview.height // 2, preview.width, preview.height - preview.height // 2)
            assert not toast.overlaps(lower_half), (toast, preview)
            assert toast.y >= 2  # the summary line, the table's header and the preview's title stay readable
            await wait_until(pilot, lambda: not app.screen.query(Toast), "the toast gone")
            await pilot.pause()
            mirror.assert_shows_the_truth()  # its border ('▌') went with it

    run(scenario())


def colour_codes(frame: str) -> set[str]:
    """The SGR parameters in ``frame`` that set a colour (anything but the terminal's default, 39 and 49)."""
    codes = set()
    for match in re.finditer(r"\x1b\[([0-9;]*)m", frame):
        for code in match.group(1).split(";"):
            if code and (30 <= int(code) <= 38 or 40 <= int(code) <= 48 or 90 <= int(code) <= 107):
                codes.add(code)
    return codes


def test_no_color_paints_no_colour_and_ignores_a_remembered_light_theme(monkeypatch, tmp_path):
    """NO_COLOR: not a grey background (Textual's Monochrome), not the light theme the palette remembered."""
    monkeypatch.setenv("NO_COLOR", "1")
    choice = tmp_path / "ui.json"
    choice.write_text(json.dumps({"theme": "headspace-light", "config_theme": "headspace-light"}))

    async def scenario():
        app = demo_app(config=Config(theme="headspace-light"))
        app.theme_choice = choice
        app._load_themes([builtin_dir()])  # picks again, as at start, with the remembered choice
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            assert app.no_color
            assert app.theme != "headspace-light"
            frame = app.screen._compositor.render_update(full=True).render_segments(app.console)
            assert colour_codes(frame) == set()
            # Without colour the selected row still stands out: reversed.
            row = next(s for s in app.screen._compositor.render_strips() if "docs:0.0" in s.text)
            assert all(segment.style is not None and segment.style.reverse for segment in row if segment.text.strip()), row
            # A theme picked now is not remembered: it could not be seen.
            app.theme = "headspace-high-contrast"
            await pilot.pause()
        assert json.loads(choice.read_text())["theme"] == "headspace-light"

    run(scenario())


def test_the_theme_list_is_headspaces_own_with_the_one_in_use_marked(tmp_path):
    """The palette's Theme: the shipped themes and the user's, not Textual's twenty; the current one marked."""
    user = tmp_path / "themes"
    user.mkdir()
    (user / "mine.toml").write_text((builtin_dir() / "headspace-dark.toml").read_text().replace('name = "headspace-dark"', 'name = "mine"'))

    async def scenario():
        app = demo_app(config=Config(theme="headspace-dark"))
        app._load_themes([builtin_dir(), user])
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"theme")
            await wait_until(pilot, lambda: highlighted(app).startswith("Theme"), "the palette to offer Theme")
            await pilot.press("enter")
            await wait_until(pilot, lambda: any(o.startswith("headspace-light") for o in offered(app)), "the palette's list of themes")
            shown = offered(app)
            shipped = sorted(p.stem for p in builtin_dir().glob("*.toml"))
            assert shown == [f"{name}{CURRENT if name == 'headspace-dark' else ''}" for name in shipped] + ["mine"]
            assert "textual-dark" not in shown and "nord" not in shown
            await pilot.press(*"mine")
            await wait_until(pilot, lambda: highlighted(app) == "mine", "the palette to offer mine")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.theme == "mine", "the theme to be applied")
            # Opened again: the new one is the one marked.
            app.search_themes()
            await wait_until(pilot, lambda: screen_open(app, CommandPalette) and f"mine{CURRENT}" in offered(app), "the list marking mine")
            assert f"headspace-dark{CURRENT}" not in offered(app) and "headspace-dark" in offered(app)

    run(scenario())


def test_a_textual_theme_named_in_the_config_is_listed_and_marked():
    own = {"headspace-dark": "dark"}
    assert [title for title, _, _ in theme_entries(own, "nord")] == ["headspace-dark", f"nord{CURRENT}"]
    assert theme_entries({"a": "yours · /x/[b]"}, "a")[0][2] == "yours · /x/\\[b]"  # a path is not markup


def shown_identity(app) -> list[tuple[str, ...]]:
    """What each row says of which agent it is (its Host, Agent and Folder cells as shown)."""
    keys = [k for k in app.table._columns.keys if k in ("host", "agent", "folder")]
    return [tuple(str(app.table._cells[p][COLUMN_INDEX[k]].plain) for k in keys) for p in app.table.order]


@pytest.mark.parametrize(
    ("sessions", "folders"),
    [
        (("headspace-review", "headspace-rework"), ("/src/review", "/src/rework")),  # the targets differ where they are cut
        (("project-alpha", "project-beta"), ("/src/alpha", "/src/beta")),
    ],
)
def test_at_120_columns_side_by_side_no_two_agents_read_the_same(sessions, folders):
    async def scenario():
        app = demo_app([], config=Config(theme="headspace-dark", layout="side"))
        async with app.run_test(size=(120, 40)) as pilot:
            for n, (session, folder) in enumerate(zip(sessions, folders, strict=True)):
                show_recorded(app, n, session, "permission_bash", 10 + n, cwd=folder)
            await wait_until(pilot, lambda: len(app.table.order) == 2, "both rows")
            await pilot.pause()
            rows = shown_identity(app)
            assert rows[0] != rows[1], rows
            assert app.table._columns.waiting >= 10  # what each waits for is still there

    run(scenario())


def test_the_columns_tell_rows_apart_only_when_they_would_read_the_same():
    # Room for everything: nothing to tell apart, the plan as before.
    assert plan_columns(59, ["api:0.0", "web:0.0"], ["api", "web"]).folder == 0  # short targets are distinct alone
    alike = ["headspace-review:0.0", "headspace-rework:0.0"]
    plain = plan_columns(59, ["headspace-review:0.0", "other:0.0"], ["review", "other"])
    assert (plain.target, plain.folder) == (13, 0)
    apart = plan_columns(59, alike, ["review", "rework"])
    assert apart.waiting >= 10 and (apart.target > 13 or apart.folder > 0)
    # The same targets on two hosts: the Host column tells them apart, nothing widens.
    hosts = plan_columns(80, ["main:0.0", "main:0.0"], ["x", "x"], ["box1", "box2"])
    assert hosts.host and hosts.waiting == plan_columns(80, ["main:0.0", "mine:0.0"], ["x", "x"], ["box1", "box2"]).waiting


def test_a_problem_keeps_the_counts_and_names_the_host_briefly():
    agents = [Agent(pane_id=f"%{n}", target=f"{name}:0.0", session=name, observation=Observation(state)) for n, (name, state) in enumerate([("api", AgentState.PERMISSION), ("web", AgentState.IDLE)])]
    ssh = "box2: ssh: connect to host 192.0.2.7 port 22: Connection timed out"
    line = summary_text(agents, ssh, 95.0, [("box2", ssh)]).plain
    assert line.startswith("headspace  2 agents  ·  1 needs you  ·  0 working  ·  waits today (sum): 1m")
    assert line.endswith("·  box2 unreachable") and "timed out" not in line
    three = [(f"h{n}", f"h{n}: ssh: no route") for n in range(3)]
    assert summary_text(agents, "; ".join(t for _, t in three), None, three).plain.endswith("·  3 hosts unreachable")
    # The local server's problem, cut short after the counts; "starting" counts nothing yet (issue 37).
    local = "no tmux server running on socket '" + "x" * 80 + "'"
    line = summary_text(agents, local, None, [("local", local)]).plain
    assert line.startswith("headspace  2 agents") and "no tmux server running" in line and len(line) < 120
    assert summary_text(agents, "starting", None).plain == "headspace  looking…"


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs the ssh client")
def test_an_unreachable_host_keeps_the_header_and_widens_no_column(tmp_path, private_tmux):
    """A real ssh to a closed port (nothing listens on 127.0.0.1:1): the counts stay, the host is named, ssh's words are a notice."""
    config = tmp_path / "ssh_config"
    config.write_text("Host nowhere\n  HostName 127.0.0.1\n  Port 1\n  User nobody\n  UserKnownHostsFile /dev/null\n")
    name = "a-long-host-name.example.org"

    async def scenario():
        service = Service.build(
            TmuxServer(socket_name=private_tmux.name),
            hosts=[RemoteHost(HostSpec(name, "nowhere", ssh_config=str(config)))],
            journal=Journal(None),
            hooks=False,
            spool=tmp_path / "spool",
            config=Config(theme="headspace-dark"),
        )
        app = app_of(service)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            # The first look at the (absent) local server drops the panes it does not find: the recorded ones go in after it
            # (a machine three times oversubscribed once looked after them, and the header counted none).
            await wait_until(pilot, lambda: app.main.problem not in (None, "starting"), "the first look at the local server", 30)
            for n, (session, screen) in enumerate([("api", "permission_bash"), ("web", "question_two_options"), ("notes", "idle_finished")]):
                show_recorded(app, n, session, screen, 30)
            await wait_until(pilot, lambda: f"@{name}" in app.table.agents and len(app.table.agents) == 4, "the host's row beside the agents", 30)
            await pilot.pause()
            header = str(app.query_one("#summary").render())
            assert header.startswith("headspace  3 agents  ·  2 need you"), header
            assert f"{name} unreachable" in header and "Connection refused" not in header
            assert any("Connection refused" in n.message and name in n.message for n in app._notifications)  # ssh's words, once
            # The host's row widens nothing: the Agent column is the agents' own width.
            assert app.table._columns.target == len("notes:0.0")
            assert app.table.get_row(f"@{name}")[-1].plain.startswith(f"cannot reach {name}: ssh: ")  # and its row says why

    run(scenario())


def test_the_plans_quick_cut_reads_as_the_table_cuts():
    """Planning tries many widths with a plain-string cut: it must read exactly as ``fit`` draws the cell."""
    for text in ("project-number-001:0.0", "ab:0.0", "x" * 40 + "1:0.0", "abc", "プロジェクト:0.0"):
        for width in range(30):
            for keep_end in (0, 4, 6):
                assert _cut(text, width, keep_end) == fit(text, width, keep_end=keep_end).plain, (text, width, keep_end)
