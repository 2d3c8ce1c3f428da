"""Keys people already know, a layout that follows the terminal, a selection that behaves like an inbox.

Pilot tests on the demo table (real recorded Claude screens, detectors
off, a fixed clock): what matters here is what the app shows and selects.
"""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from headspace_tui.answering.answerer import Report
from headspace_tui.app.screens.help import HelpScreen
from headspace_tui.app.widgets.agent_table import TIME
from headspace_tui.app.widgets.footer import KeysFooter
from headspace_tui.model import AgentState
from headspace_tui.shared.config import parse_config
from tests.ui.apps import AGENTS, demo_app, settle, show_recorded


def screen_text(app) -> str:
    """The whole screen as plain text, as a terminal would show it."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor", record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def run(coro):
    return asyncio.run(coro)


def table_lines(app) -> list[str]:
    """The table's rows as shown on screen (from the line under the header)."""
    lines = screen_text(app).splitlines()
    header = next(i for i, line in enumerate(lines) if "State" in line and "Time" in line)
    return lines[header : header + 1 + len(app.table.order)]


def assert_every_row_readable(app) -> None:
    """Each row shows its target, its state word, its time and what it waits for, uncut."""
    lines = table_lines(app)
    assert "Waiting for" in lines[0], lines[0]
    for pane_id, line in zip(app.table.order, lines[1:], strict=True):
        agent = app.table.agents[pane_id]
        assert agent.state.value in line, (agent.state, line)
        assert app.table._cells[pane_id][TIME] in line, line  # the time, whole
        assert agent.target.split(":")[0][:8] in line, line
    permission = next(line for line in lines if "permission" in line)
    assert "Bash: touch" in permission  # what it waits for is on screen, not pushed off it


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_every_row_shows_target_state_time_and_what_it_waits_for(size):
    async def scenario():
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            await app.snapshot_loader(pilot)
            assert_every_row_readable(app)

    run(scenario())


def test_the_layout_follows_a_resize_of_the_running_app():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            body = app.query_one("#body")
            preview = app.query_one("#preview")
            assert body.styles.layout.name == "horizontal"
            for size, layout, preview_shown in [((80, 24), "vertical", True), ((200, 50), "horizontal", True), ((80, 14), "vertical", False), ((80, 24), "vertical", True)]:
                await pilot.resize_terminal(*size)
                await pilot.pause()
                await pilot.pause()
                assert body.styles.layout.name == layout, size
                assert preview.display is preview_shown, size
                assert_every_row_readable(app)

    run(scenario())


def test_a_huge_session_name_leaves_state_and_time_whole():
    async def scenario():
        app = demo_app([("s" * 300, "input_plain_question", 610), ("api", "permission_bash", 95), ("[red]x[/]", "idle_finished", 5)])
        async with app.run_test(size=(80, 24)) as pilot:
            await app.snapshot_loader(pilot)
            long_row = next(line for line in table_lines(app) if "input" in line)
            assert "10m10s" in long_row and "✎ input" in long_row
            assert "s…:0.0" in long_row  # cut in the middle: the pane address survives
            assert any("[red]x[/]:0.0" in line for line in table_lines(app))  # a name is text, never markup
            assert_every_row_readable(app)

    run(scenario())


def test_the_folder_is_its_last_component_and_goes_first_when_space_is_short():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            show_recorded(app, 9, "deep", "idle_finished", 30, cwd="/home/dev/src/clients/acme/frontend-monorepo")
            await settle(pilot)  # its answer comes from the service, off the loop
            lines = table_lines(app)
            assert "Folder" in lines[0]
            assert any("frontend-monorepo" in line and "/home/dev" not in line for line in lines)
        app = demo_app([("a-rather-long-session-name-for-work", "permission_bash", 95)])
        async with app.run_test(size=(60, 24)) as pilot:
            await app.snapshot_loader(pilot)
            lines = table_lines(app)
            assert "Folder" not in lines[0] and "Waiting for" in lines[0]
            assert "permission" in lines[1] and "1m35s" in lines[1]

    run(scenario())


def test_vim_and_navigation_keys_move_the_selection():
    agents = AGENTS + [(f"more{n}", "idle_finished", 100 + n) for n in range(30)]

    async def scenario():
        app = demo_app(agents)
        async with app.run_test(size=(100, 30)) as pilot:
            await app.snapshot_loader(pilot)
            order = app.table.order
            assert app.table.selected_pane_id == order[0]
            for key, expected in [("j", 1), ("j", 2), ("k", 1), ("G", len(order) - 1), ("g", 0), ("end", len(order) - 1), ("home", 0), ("down", 1), ("up", 0)]:
                await pilot.press(key)
                await pilot.pause()
                assert app.table.selected_pane_id == order[expected], key
                assert app.table.scroll_x == 0  # Home/End choose rows; the table never scrolls sideways
            await pilot.press("pagedown")
            await pilot.pause()
            down = order.index(app.table.selected_pane_id)
            assert down > 5
            await pilot.press("pageup")
            await pilot.pause()
            assert order.index(app.table.selected_pane_id) < down

    run(scenario())


def test_a_click_selects_a_row_and_never_jumps():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(100, 40)) as pilot:
            await app.snapshot_loader(pilot)
            third = app.table.order[2]
            for _ in range(2):  # a second click on the same row is still only a selection
                await pilot.click("#agents", offset=(3, 3))
                await pilot.pause()
                assert app.table.selected_pane_id == third
            assert app.is_running and app.return_value is None

    run(scenario())


def test_the_selection_starts_on_the_agent_that_needs_you_most_however_they_arrive():
    async def scenario():
        app = demo_app(list(reversed(AGENTS)))  # the idle and exited ones are seen first
        async with app.run_test(size=(100, 40)) as pilot:
            await app.snapshot_loader(pilot)
            top = app.table.agents[app.table.selected_pane_id]
            assert top.target == "docs:0.0" and top.state is AgentState.INPUT  # waiting longest of those that need you
            assert app.table.order[0] == top.pane_id

    run(scenario())


def test_a_chosen_agent_stays_selected_as_the_table_re_sorts():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(100, 40)) as pilot:
            await app.snapshot_loader(pilot)
            notes = next(p for p, a in app.table.agents.items() if a.target == "notes:0.0")
            while app.table.selected_pane_id != notes:
                await pilot.press("j")
            row = app.table.cursor_row
            # parser (working, above notes) finishes: rows move, the selection stays on notes.
            show_recorded(app, 3, "parser", "idle_finished", 1)
            await settle(pilot)  # its answer comes from the service, off the loop
            assert app.table.selected_pane_id == notes
            assert app.table.cursor_row != row or app.table.order.index(notes) == row

    run(scenario())


def test_after_an_answer_the_selection_moves_on_to_the_next_agent_waiting():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(100, 40)) as pilot:
            await app.snapshot_loader(pilot)
            first = app.table.selected_pane_id
            agent = app.table.agents[first]
            # What the answerer reports after a delivered key (the live path is in test_app_live).
            app._answer_reported(Report(first, f"{agent.target}: answered", "information", delivered=True, move_on=True))
            await settle(pilot)  # the move asks the service which answers are on their way
            now = app.table.agents[app.table.selected_pane_id]
            assert now.pane_id != first and now.state.needs_you

    run(scenario())


def test_the_help_is_made_from_the_bindings_and_shows_a_remapped_key():
    async def scenario():
        app = demo_app(config=parse_config({"keys": {"approve": "a", "why": "w"}}))
        async with app.run_test(size=(100, 54)) as pilot:  # every key, and the last line, without scrolling
            await app.snapshot_loader(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            rows = dict((text, keys) for keys, text in app.screen.rows)
            approve = next(keys for text, keys in rows.items() if text.startswith("approve"))
            assert approve == "a"
            assert next(keys for text, keys in rows.items() if text.startswith("why")) == "w"
            assert next(keys for text, keys in rows.items() if text.startswith("select the next")) == "↓ j"
            shown = screen_text(app)
            assert "under [keys]" in shown  # markup-looking text is shown as written
            for _keys, text in app.screen.rows:
                assert text[:30] in shown
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)

    run(scenario())


def test_the_help_is_kept_between_openings_and_each_opening_starts_at_its_top():
    """The help screen is built once (opening it is a repaint): the same screen again, scrolled back to the top, Esc and ? both close it."""

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await app.snapshot_loader(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
            first = app.screen
            assert isinstance(first, HelpScreen)
            top = screen_text(app)
            await pilot.press("end")  # the list is taller than 24 rows: scrolled to its end
            await pilot.pause()
            assert screen_text(app) != top
            await pilot.press("question_mark")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)
            await pilot.press("question_mark")
            await pilot.pause()
            assert app.screen is first  # not built again
            assert screen_text(app) == top  # from its top again
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)

    run(scenario())


def test_the_help_keeps_its_order_whatever_the_keymap():
    """The answer keys first, then the others, as the main screen binds them, with or without remapped keys.

    Textual applies a keymap by taking each binding it names out of the
    screen's map and adding it back at the end, so the help once listed A,
    the digits, Esc and [ ] before y/n/r/c/x (the app always sets a keymap:
    the configured keys, defaults included).
    """

    async def scenario(keys):
        app = demo_app(config=parse_config({"keys": keys}))
        async with app.run_test(size=(100, 50)) as pilot:
            await app.snapshot_loader(pilot)
            usual = list(dict.fromkeys(b.tooltip for b in type(app.screen_stack[0]).BINDINGS if b.tooltip))
            await pilot.press(keys.get("help", "question_mark"))
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            texts = [text for _keys, text in app.screen.rows]
            assert texts[: len(usual)] == usual
            assert [text.split()[0].rstrip(":") for text in texts[:5]] == ["approve", "deny", "reply", "nudge", "interrupt"]

    for keys in ({}, {"approve": "a", "why": "w"}, {"help": "h", "interrupt": "X"}):
        run(scenario(keys))


def test_at_80_columns_the_footer_keeps_help_and_quit():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await app.snapshot_loader(pilot)
            api = next(p for p, a in app.table.agents.items() if a.state is AgentState.PERMISSION)
            app.table.select(api)
            await pilot.pause()
            footer = screen_text(app).splitlines()[-1]
            assert "approve" in footer and "? help" in footer and "q quit" in footer, footer

    run(scenario())


def test_the_footer_takes_the_new_keys_before_the_next_frame(monkeypatch):
    """A selection's keys reach the footer without waiting for a frame, as its preview and prompt bar do.

    Frames are held here (the screen's update timer stopped, the pilot's own
    frame a no-op).  Textual's footer rebuilds only after a frame, so it kept
    the previous agent's keys in the frame that showed the new agent's
    preview (and the pilot test above read them about one run in six, when
    the next frame came after its pause); held frames make that certain.
    """

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await app.snapshot_loader(pilot)
            footer = app.query_one(KeysFooter)
            assert "approve" not in {key.description for key in footer.query("FooterKey")}  # an input is selected
            app.screen._update_timer.stop()
            monkeypatch.setattr(app.screen, "_on_timer_update", lambda: None)
            app.table.select(next(p for p, a in app.table.agents.items() if a.state is AgentState.PERMISSION))
            for _ in range(10):  # a busy machine can end a pause early; no frame comes however long this waits
                await pilot.pause()
                if "approve" in {key.description for key in footer.query("FooterKey")}:
                    break
            assert "approve" in {key.description for key in footer.query("FooterKey")}

    run(scenario())


def test_q_quits_from_the_main_screen():
    """q is the app's quit, bound on the main screen (the installed smoke test caught it doing nothing once)."""

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await app.snapshot_loader(pilot)
            assert app.return_code is None
            await pilot.press("q")
            await pilot.pause()
            assert app.return_code == 0

    run(scenario())
