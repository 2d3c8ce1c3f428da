"""Themes as data, the palette, the preview's scrollback, NO_COLOR and 16 colours.

Pilot tests on the demo table (real recorded Claude screens, detectors
off); where the terminal's colour system matters, a fresh interpreter
(Textual reads it once, at import).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.style import Style
from textual.command import CommandList, CommandPalette

from headspace_tui.app.themes import remembered, to_textual
from headspace_tui.app.widgets.agent_table import STATE
from headspace_tui.shared.config import Config
from headspace_tui.shared.theme_files import STATES, builtin_dir, load_themes
from tests.ui.apps import demo_app, wait_until
from tests.ui.test_keys_and_layout import screen_text

SHIPPED = sorted(p.stem for p in builtin_dir().glob("*.toml"))
ROOT = Path(__file__).resolve().parents[2]


def run(coro):
    return asyncio.run(coro)


def offered(app) -> list[str]:
    """The command palette's list as shown (each option's first line); [] when the palette is not open."""
    if not isinstance(app.screen, CommandPalette):
        return []
    options = app.screen.query_one(CommandList)
    return [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]


def highlighted(app) -> str:
    """The palette's highlighted option (what Enter picks), or ""."""
    shown = offered(app)
    index = app.screen.query_one(CommandList).highlighted if shown else None
    return shown[index] if index is not None and index < len(shown) else ""


def test_at_least_four_themes_ship_and_each_loads_with_every_state_colour():
    assert {"headspace-dark", "headspace-light", "headspace-high-contrast", "headspace-16"} <= set(SHIPPED)
    specs, problems = load_themes([builtin_dir()])
    assert problems == []
    for spec in specs:
        theme = to_textual(spec)
        assert {f"state-{s}" for s in STATES} <= set(theme.variables), spec.name


@pytest.mark.parametrize("theme", SHIPPED)
def test_each_theme_at_120x40(snap_compare, theme):
    app = demo_app(config=Config(theme=theme))
    assert snap_compare(app, terminal_size=(120, 40), run_before=app.snapshot_loader)


def test_the_palette_switches_the_theme_and_the_choice_is_remembered(tmp_path):
    choice = tmp_path / "state" / "ui.json"

    async def scenario():
        app = demo_app(config=Config(theme="headspace-dark"))
        app.theme_choice = choice
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            before = app.table._cells[app.table.order[0]][STATE].style
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"theme")
            await wait_until(pilot, lambda: highlighted(app).startswith("Theme"), "the palette to offer Theme")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "headspace-light" in offered(app), "the palette's list of themes")
            await pilot.press(*"headspace-light")
            await wait_until(pilot, lambda: highlighted(app) == "headspace-light", "the palette to offer headspace-light")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.theme == "headspace-light", "the theme to be applied")
            assert app.theme == "headspace-light"
            assert app.table._cells[app.table.order[0]][STATE].style != before  # the states took the new colours

    run(scenario())
    assert json.loads(choice.read_text())["theme"] == "headspace-light"
    assert remembered(choice, "headspace-dark") == "headspace-light"
    assert remembered(choice, "headspace-high-contrast") is None  # the config changed since: it wins

    async def again():
        app = demo_app(config=Config(theme="headspace-dark"))
        app.theme_choice = choice
        app._load_themes([])  # picks again, as at start, now with the remembered choice
        assert app.theme == "headspace-light"

    run(again())


def test_a_user_theme_is_used_and_a_broken_one_is_one_line(tmp_path):
    mine = tmp_path / "themes"
    mine.mkdir()
    text = (builtin_dir() / "headspace-light.toml").read_text().replace('name = "headspace-light"', 'name = "mine"')
    (mine / "mine.toml").write_text(text)
    (mine / "broken.toml").write_text('name = "broken"\n[colors]\nprimary = "not a colour"\n')
    (mine / "bad-colour.toml").write_text(text.replace('name = "mine"', 'name = "badcolour"').replace('permission = "#8f5200"', 'permission = "nope"'))
    os.mkfifo(mine / "fifo.toml")  # a reader must not wait on it

    async def scenario(theme: str):
        app = demo_app(config=Config(theme=theme))
        app.notices = ()
        app.notices = tuple(app._load_themes([builtin_dir(), mine]))
        async with app.run_test(size=(100, 30)) as pilot:
            await app.snapshot_loader(pilot)
            return app.theme, app.notices

    theme, notices = run(scenario("mine"))
    assert theme == "mine"
    assert any("broken.toml" in n and "[states]" in n for n in notices)
    assert any("bad-colour.toml" in n and "not a colour" in n for n in notices)
    assert any("fifo.toml" in n for n in notices)
    assert all("\n" not in n for n in notices)
    theme, notices = run(scenario("badcolour"))
    assert theme == "headspace-dark" and any("'badcolour' not found" in n for n in notices)


def test_no_color_keeps_the_rows_that_need_you_the_most_prominent(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await app.snapshot_loader(pilot)
            assert app.no_color
            for pane_id in app.table.order:
                agent = app.table.agents[pane_id]
                style: Style = app.table._cells[pane_id][STATE].style
                assert bool(style.reverse) is agent.state.needs_you and bool(style.bold) is agent.state.needs_you, agent.state
                assert style.color is None
                assert agent.state.value in screen_text(app)  # the word, not only a colour

    run(scenario())


SIXTEEN = """
import asyncio, sys
sys.path.insert(0, {root!r})
from tests.ui.apps import demo_app
from headspace_tui.shared.config import Config

async def main():
    app = demo_app(config=Config())
    async with app.run_test(size=(100, 30)) as pilot:
        await app.snapshot_loader(pilot)
        strips = app.screen._compositor.render_strips()
        row = next(s for s in strips if "docs:0.0" in s.text and "input" in s.text)  # the selected row
        print(app.console.color_system, app.theme, repr(row.render(app.console)))

asyncio.run(main())
"""


def test_a_16_colour_terminal_gets_the_16_colour_theme_and_a_readable_selection(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("COLORTERM", "TEXTUAL_COLOR_SYSTEM", "NO_COLOR", "TEXTUAL_THEME")}
    env["TERM"] = "xterm"
    result = subprocess.run([sys.executable, "-c", SIXTEEN.format(root=str(ROOT))], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    system, theme, rendered = result.stdout.split(" ", 2)
    assert (system, theme) == ("standard", "headspace-16")
    assert "97;46" not in rendered  # not white on cyan
    assert "30;47" in rendered or "47;30" in rendered  # black on white


def test_every_action_is_in_the_palette_and_an_agent_can_be_jumped_to_by_name():
    async def scenario():
        app = demo_app()
        jumped: list[str] = []
        app.main.action_jump = lambda: jumped.append(app.table.selected_pane_id)  # type: ignore[method-assign]  # no tmux client in a pilot test
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            api = next(p for p, a in app.table.agents.items() if a.target == "api:0.0")
            app.table.select(api)
            await pilot.pause()
            titles = {c.title for c in app.get_system_commands(app.screen)}
            assert {"Approve", "Deny", "Jump", "Why", "Filter", "Layout: stacked", "Preview: scroll back", "Help", "Theme"} <= titles
            assert "Nudge" not in titles  # the selected agent waits on a permission: nudging it does nothing
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"jump to notes")
            await wait_until(pilot, lambda: highlighted(app).startswith("jump to notes:0.0"), "the palette to offer the jump to notes")
            await pilot.press("enter")
            await wait_until(pilot, lambda: jumped, "the jump")
            notes = next(p for p, a in app.table.agents.items() if a.target == "notes:0.0")
            assert jumped == [notes] and app.table.selected_pane_id == notes
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"layout: side")
            await wait_until(pilot, lambda: highlighted(app).startswith("Layout: side"), "the palette to offer the side layout")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.layout_mode == "side", "the side layout")
            assert app.layout_mode == "side"

    run(scenario())
