"""Triage keys (issue 25): Tab to the next agent that needs you, z to snooze one, sorting, the filter's count, and keys that say why they do nothing.

Pilot tests on the demo table (real recorded Claude screens, detectors
off).  The demo app has no terminal (headless), so its bell writes
nothing: where a test checks that the bell rang, it records the app's
``bell`` calls instead.
"""

from __future__ import annotations

import asyncio
import time

from headspace_tui.answering.answerer import Report
from headspace_tui.app.screens.snooze import SnoozeScreen
from headspace_tui.app.widgets.agent_table import AGENT, STATE
from headspace_tui.app.widgets.filter_input import FilterInput
from headspace_tui.app.widgets.footer import KeysFooter
from headspace_tui.model import AgentState
from headspace_tui.notifications.decide import SETTLE, describe
from headspace_tui.shared.config import parse_config
from tests.ui.apps import AGENTS, NOW, demo_app, ringer_of, screen_open, settle, show_recorded, wait_until
from tests.ui.test_keys_and_layout import screen_text
from tests.ui.test_themes_and_palette import highlighted

# The demo table with a plan that offers two options (1 and 2), sixth in the table's order.
WITH_PLAN = [*AGENTS, ("plan", "plan_exit_short", 30)]


def run(coro):
    return asyncio.run(coro)


def pane(app, target: str) -> str:
    return next(p for p, a in app.table.agents.items() if a.target == target)


def targets(app) -> list[str]:
    return [app.table.agents[p].target for p in app.table.order]


def selected(app) -> str:
    return app.table.agents[app.table.selected_pane_id].target


def said(app) -> list[str]:
    """The lines the app showed (its notifications), oldest first."""
    return [n.message for n in app._notifications]


def ringing(app) -> list[int]:
    """Records each bell (the headless app's own bell writes nothing)."""
    rings: list[int] = []
    app.bell = lambda: rings.append(1)
    return rings


def snoozed(app, target: str) -> bool:
    return app.service.snooze_of(app.table.agents[pane(app, target)]) is not None


async def snooze(pilot, app, target: str, choice: str) -> None:
    """Select ``target``, press z and pick ``choice`` (1: 5 minutes ... 4: until it changes) in the chooser."""
    app.table.select(pane(app, target))
    await pilot.pause()
    await pilot.press("z")
    await wait_until(pilot, lambda: screen_open(app, SnoozeScreen), "the snooze chooser")
    await pilot.press(choice)
    await wait_until(pilot, lambda: snoozed(app, target), f"{target} to be snoozed")
    await settle(pilot)  # and what the service's answer does: the row dimmed, the header, the move on


def test_tab_selects_the_next_agent_that_needs_you_and_wraps_round():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            assert targets(app)[:3] == ["docs:0.0", "api:0.0", "web:0.0"]  # the three that need you, longest waiting first
            assert selected(app) == "docs:0.0"
            for key, expected in [("tab", "api:0.0"), ("tab", "web:0.0"), ("tab", "docs:0.0"), ("shift+tab", "web:0.0"), ("shift+tab", "api:0.0")]:
                await pilot.press(key)
                await pilot.pause()
                assert selected(app) == expected, key
                assert app.focused is app.table  # Textual's own Tab (focus the next widget) does not take it
            app.table.select(pane(app, "notes:0.0"))  # below every waiting agent
            await pilot.press("tab")
            await pilot.pause()
            assert selected(app) == "docs:0.0"  # round to the top

    run(scenario())


def test_tab_with_nobody_waiting_rings_and_says_so():
    async def scenario():
        app = demo_app([a for a in AGENTS if a[0] in ("parser", "notes", "old")])
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            rings = ringing(app)
            before = selected(app)
            await pilot.press("tab")
            await pilot.pause()
            assert rings == [1] and said(app) == ["nothing needs you now"]
            assert selected(app) == before

    run(scenario())


def test_z_snoozes_a_wait_greyed_below_the_waiting_and_above_the_working_and_z_wakes_it():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            assert "3 need you" in screen_text(app)
            await snooze(pilot, app, "api:0.0", "2")  # 15 minutes
            await pilot.pause()
            assert targets(app)[:4] == ["docs:0.0", "web:0.0", "api:0.0", "ci:0.0"]
            api = pane(app, "api:0.0")
            cells = app.table._cells[api]
            assert cells[AGENT].style == "dim" and cells[STATE].style == "dim"
            until = time.strftime("%H:%M", time.localtime(NOW + 15 * 60))
            row = next(line for line in screen_text(app).splitlines() if "api:0.0" in line and "permission" in line)
            assert f"snoozed till {until} · Bash: touch" in row, row
            assert "2 need you (1 snoozed)" in screen_text(app)  # the header counts it out
            assert selected(app) == "docs:0.0"  # moved on to the first that needs you, as after an answer
            app.main.sort_by("time")  # docs, api, web: the snoozed api right after docs
            await pilot.pause()
            app._answer_reported(Report(pane(app, "docs:0.0"), "docs:0.0: answered", "information", delivered=True, move_on=True))
            await settle(pilot)  # the move asks the service which answers are on their way
            assert selected(app) == "web:0.0"  # an answer moves on past the snoozed one too
            app.main.sort_by("state")
            app.table.select(pane(app, "docs:0.0"))
            await pilot.pause()
            for expected in ["web:0.0", "docs:0.0"]:  # Tab passes it by
                await pilot.press("tab")
                await pilot.pause()
                assert selected(app) == expected
            app.table.select(api)
            await pilot.pause()
            await pilot.press("z")  # z on a snoozed agent wakes it
            await settle(pilot)  # its answer comes from the service, off the loop
            assert not snoozed(app, "api:0.0") and not screen_open(app, SnoozeScreen)
            assert targets(app)[:3] == ["docs:0.0", "api:0.0", "web:0.0"] and "3 need you" in screen_text(app)
            assert app.table._cells[api][AGENT].style != "dim"

    run(scenario())


def test_z_on_an_agent_that_waits_for_nothing_or_esc_in_the_chooser_snoozes_nothing():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            rings = ringing(app)
            app.table.select(pane(app, "parser:0.0"))
            await pilot.pause()
            await pilot.press("z")
            await settle(pilot)  # its answer comes from the service, off the loop
            assert not screen_open(app, SnoozeScreen)
            assert rings == [1] and said(app) == ["z: nothing to snooze: parser:0.0 is working"]
            app.table.select(pane(app, "web:0.0"))
            await pilot.press("z")
            await wait_until(pilot, lambda: screen_open(app, SnoozeScreen), "the snooze chooser")
            await pilot.press("escape")
            await pilot.pause()
            assert not screen_open(app, SnoozeScreen) and not snoozed(app, "web:0.0")

    run(scenario())


def test_a_snooze_ends_on_time_or_with_a_new_wait_and_the_services_ringer_rings_again():
    start = time.monotonic()
    skipped = [0.0]  # seconds the test jumps the clock ahead

    def clock() -> float:
        return NOW + skipped[0] + (time.monotonic() - start)

    async def scenario():
        app = demo_app(clock=clock)
        ringer = ringer_of(app)
        sent = []
        due = ringer.notifier.due

        def recording(now):
            note = due(now)
            if note is not None:
                sent.append(note)
            return note

        ringer.notifier.due = recording  # type: ignore[method-assign]
        async with app.run_test(size=(120, 40)) as pilot:
            ringing = asyncio.create_task(ringer.run())  # a demo app runs no service: its ringer, as the service would run it
            try:
                await rung_again(pilot, app, sent)
            finally:
                ringing.cancel()

    async def rung_again(pilot, app, sent):
        await app.snapshot_loader(pilot)
        skipped[0] += SETTLE + 1  # past the notifier's quiet start
        await snooze(pilot, app, "api:0.0", "1")  # 5 minutes
        api = pane(app, "api:0.0")
        await pilot.pause(1.5)  # ticks while snoozed: nothing said
        assert snoozed(app, "api:0.0") and sent == []
        skipped[0] += 5 * 60
        await wait_until(pilot, lambda: not snoozed(app, "api:0.0"), "the snooze to run out", timeout=5)
        assert app.table._cells[api][AGENT].style != "dim" and targets(app)[1] == "api:0.0"
        await wait_until(pilot, lambda: sent, "the notification that api waits again", timeout=5)
        assert [a.name for a in sent[0].alerts] == ["api:0.0 (api)"] and "touch marker.txt" in sent[0].body

        await snooze(pilot, app, "api:0.0", "4")  # until it changes
        skipped[0] += 3600
        await pilot.pause(1.5)
        assert snoozed(app, "api:0.0") and len(sent) == 1
        show_recorded(app, 0, "api", "permission_edit", 1)  # another permission: a new wait
        await wait_until(pilot, lambda: not snoozed(app, "api:0.0"), "the new wait to end the snooze", timeout=5)
        await wait_until(pilot, lambda: len(sent) == 2, "the notification of the new wait", timeout=5)
        assert sent[1].alerts[0].state is AgentState.PERMISSION and sent[1].body == describe(app.table.agents[api])[1] != sent[0].body

    run(scenario())


def test_sorting_from_the_palette_keeps_the_selection_and_the_same_column_again_reverses():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            app.table.select(pane(app, "notes:0.0"))
            await pilot.pause()
            titles = {c.title for c in app.get_system_commands(app.screen)}
            assert {"Sort by state", "Sort by time", "Sort by target", "Sort by folder", "Next agent that needs you", "Snooze or wake the selected agent"} <= titles
            for _ in range(2):
                await pilot.press("ctrl+p")
                await pilot.pause()
                await pilot.press(*"sort by target")
                await wait_until(pilot, lambda: highlighted(app).startswith("Sort by target"), "the palette to offer the sort")
                await pilot.press("enter")
                await wait_until(pilot, lambda: app.screen is app.main, "the palette to close")
                await pilot.pause()
            by_target = sorted(targets(app))
            assert targets(app) == by_target[::-1]  # the second time: the other way round
            assert selected(app) == "notes:0.0"
            app.main.sort_by("time")
            await pilot.pause()
            assert targets(app) == ["old:0.0", "notes:0.0", "docs:0.0", "api:0.0", "web:0.0", "parser:0.0", "ci:0.0"]  # longest in its state first
            assert selected(app) == "notes:0.0" and app.table.cursor_row == 1
            app.main.sort_by("state")
            await pilot.pause()
            assert targets(app)[:3] == ["docs:0.0", "api:0.0", "web:0.0"] and selected(app) == "notes:0.0"

    run(scenario())


def test_the_filter_says_how_many_rows_it_shows_and_marks_the_waits_it_hides():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            box = app.query_one("#filter", FilterInput)
            await pilot.press("slash", *"parser")
            await pilot.pause()
            assert "1 of 7  ▲ 3 outside the filter need you" in screen_text(app)
            await pilot.press("tab")  # while typing the filter too
            await pilot.pause()
            assert said(app) == ["nothing needs you now in the filter"] and app.focused is box
            show_recorded(app, 4, "ci", "permission_bash", 1)  # an agent outside the filter starts needing you
            await wait_until(pilot, lambda: "▲ 4 outside the filter need you" in screen_text(app), "the mark to count ci")
            await pilot.press("escape")
            await pilot.pause()
            assert box.border_subtitle is None and "outside the filter" not in screen_text(app)
            await pilot.press("slash", *"idle")
            await pilot.pause()
            assert "1 of 7  ▲ 4 outside the filter need you" in screen_text(app)
            await pilot.press("backspace", "backspace", "backspace", "backspace", *"0.0")  # every row
            await pilot.pause()
            await pilot.press("tab")
            await pilot.pause()
            assert "7 of 7" in screen_text(app) and "outside the filter" not in screen_text(app)
            assert app.table.agents[app.table.selected_pane_id].state.needs_you

    run(scenario())


def test_a_key_that_does_nothing_here_rings_and_says_why():
    async def scenario():
        app = demo_app(WITH_PLAN)
        asked = []
        answer = app.service.answer
        app.service.answer = lambda agent, intent, seen=None: asked.append(intent) or answer(agent, intent, seen)
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            rings = ringing(app)
            app.table.select(pane(app, "notes:0.0"))
            await pilot.pause()
            assert "approve" not in {key.description for key in app.query_one(KeysFooter).query("FooterKey")}  # hidden from the footer...
            for key in ("y", "x", "3"):  # ... and caught
                await pilot.press(key)
                await pilot.pause()
            assert said(app) == [
                "y: nothing to approve: notes:0.0 is idle",
                "x: nothing to interrupt: notes:0.0 is idle",
                "3: no menu to pick from: notes:0.0 is idle",
            ]
            app.table.select(pane(app, "plan:0.0"))
            await pilot.pause()
            await pilot.press("3")  # a plan offering 1 and 2
            await pilot.pause()
            app.table.select(pane(app, "web:0.0"))
            await pilot.pause()
            await pilot.press("y")
            await settle(pilot)  # a key wrongly taken would have reached the service by now
            assert said(app)[3:] == ["3: no option 3 here: plan:0.0 offers 1, 2", "y: web:0.0 asks a question, not a permission: pick its option by number"]
            assert len(rings) == 5 and asked == []  # nothing went to the answerer
            await pilot.press("slash", "y")  # typing in the filter is typing
            await pilot.pause()
            assert len(rings) == 5 and app.query_one("#filter", FilterInput).value == "y"

    run(scenario())


def test_a_remapped_key_is_named_as_bound_when_it_does_nothing():
    async def scenario():
        app = demo_app(config=parse_config({"keys": {"approve": "a", "snooze": "s"}}))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            app.table.select(pane(app, "notes:0.0"))
            await pilot.pause()
            await pilot.press("y")  # bound to nothing now
            await pilot.press("a")
            await pilot.press("s")
            await settle(pilot)  # its answer comes from the service, off the loop
            assert said(app) == ["a: nothing to approve: notes:0.0 is idle", "s: nothing to snooze: notes:0.0 is idle"]

    run(scenario())
