"""The app the Textual way: an error in a UI handler stays in the UI, and the footer offers only live keys.

Recorded Claude screens from the corpus are shown through the monitor's own
replay path (no tmux needed for what is tested here: the app's handling of
the monitor's reports).
"""

from __future__ import annotations

import asyncio
import gc
import json

from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.help import HelpScreen
from headspace_tui.app.widgets.footer import KeysFooter
from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from tests.harness.record import DEFAULT_OUT
from tests.ui.apps import app_of, demo_app, screen_open, service_of, settle, wait_until

NOW = 1_800_000_000.0


def _record(n: int, screen: str) -> tuple[PaneRecord, str, dict]:
    base = DEFAULT_OUT / "alt" / "120x40" / screen
    meta = json.loads(base.with_suffix(".json").read_text())
    record = PaneRecord(
        pane_id=f"%{n}",
        session_id=f"${n}",
        session_name=f"s{n}",
        window_index=0,
        pane_index=0,
        target=f"s{n}:0.0",
        pid=1000 + n,
        current_command=meta["pane_command"],
        cwd="/src",
        width=meta["width"],
        height=meta["height"],
        alternate_on=meta["alternate_on"],
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )
    return record, base.with_suffix(".ansi").read_text(), meta


def _app() -> HeadspaceApp:
    return app_of(Service.build(TmuxServer(socket_name="headspace-resilience-unused"), live=False, clock=lambda: NOW, journal=Journal(None), hooks=False))


def _show(app: HeadspaceApp, n: int, screen: str) -> None:
    record, ansi, meta = _record(n, screen)
    service_of(app).replay(record, ansi, classify_capture(ansi, command=meta["pane_command"]), NOW - 10, family="claude")


def _footer_keys(app: HeadspaceApp) -> set[str]:
    return {b.binding.action.removeprefix("app.") for b in app.screen.active_bindings.values() if b.enabled and b.binding.show}


def test_an_error_in_a_ui_handler_is_one_line_and_the_next_update_is_shown():
    async def scenario() -> None:
        app = _app()
        async with app.run_test(size=(120, 40)) as pilot:
            table = app.table
            real_upsert = table.upsert
            calls = {"n": 0}

            def upsert_failing_once(agent):
                calls["n"] += 1
                if calls["n"] == 1:
                    raise RuntimeError("injected display fault")
                real_upsert(agent)

            table.upsert = upsert_failing_once  # the table's own method, failing once
            _show(app, 0, "permission_bash")
            await wait_until(pilot, lambda: app._notifications, "the error's notice")
            assert app.is_running
            shown = [str(n.message) for n in app._notifications]
            assert len(shown) == 1 and "RuntimeError: injected display fault" in shown[0] and "\n" not in shown[0]
            _show(app, 1, "idle_finished")  # the next report is handled as usual
            await wait_until(pilot, lambda: "%1" in table.agents, "the next report's row")
            assert "%1" in table.agents and app.is_running

    asyncio.run(scenario())


def test_the_footer_offers_only_the_keys_the_selected_agent_allows():
    async def scenario() -> None:
        app = _app()
        async with app.run_test(size=(160, 48)) as pilot:
            assert not {"approve", "deny", "interrupt", "nudge", "jump"} & _footer_keys(app)  # no agent: no agent keys
            _show(app, 0, "permission_bash")
            await wait_until(pilot, lambda: app.selected_agent() is not None, "the first row, selected")
            assert app.selected_agent().state is AgentState.PERMISSION
            keys = _footer_keys(app)
            assert {"approve", "deny", "reply"} <= keys and not {"interrupt", "nudge"} & keys
            _show(app, 1, "working_spinner")
            await wait_until(pilot, lambda: "%1" in app.table.order, "the second row")
            app.table.select("%1")
            await wait_until(pilot, lambda: app.table.selected_pane_id == "%1", "the cursor on the second row")
            assert app.selected_agent().state is AgentState.WORKING
            keys = _footer_keys(app)
            assert "interrupt" in keys and not {"approve", "deny", "nudge"} & keys
            # A key the agent does not allow sends nothing, and says why (once; issue 25's silent keys).
            await pilot.press("y")
            await pilot.pause(0.2)  # nothing to wait for: a send would have started by now
            assert [str(n.message) for n in app._notifications] == [f"y: nothing to approve: {app.selected_agent().target} is working"]
            assert not service_of(app)._answerer.busy("%1")

    asyncio.run(scenario())


def _live_widgets() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Widget))


def _live_styles_caches() -> int:
    """Every widget's render cache alive (Textual's ``get_inner_outer`` cache pinned each one, see textual_private)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "StylesCache")


ROUNDS = 10  # each a permission's keys, a worker's, the help screen's and back: far more than the bounds below allow to leak


def test_the_footers_old_keys_are_let_go_when_the_keys_change():
    """Textual's Footer kept every key it ever drew (a watcher per key on the footer, never pruned):
    under churn the selected row's keys change all the time and headspace grew 7.7 MB a minute.
    And the keys are changed in place: new ones are made only when there are more of them."""

    async def scenario() -> None:
        app = _app()
        async with app.run_test(size=(160, 48)) as pilot:
            _show(app, 0, "permission_bash")
            _show(app, 1, "working_spinner")
            await wait_until(pilot, lambda: {"%0", "%1"} <= set(app.table.order), "both rows")
            footer = app.query_one(KeysFooter)
            # Each step waits for the footer's rebuild (started and finished: its old keys removed).
            rebuilds = [0, 0]
            real_recompose = footer.recompose

            async def counted_recompose() -> None:
                rebuilds[0] += 1
                try:
                    await real_recompose()
                finally:
                    rebuilds[1] += 1

            footer.recompose = counted_recompose  # type: ignore[method-assign]

            def settled() -> bool:
                return rebuilds[0] == rebuilds[1] and not footer._recompose_required

            def shows_the_keys() -> bool:
                return settled() and {k.action.removeprefix("app.") for k in footer.query(FooterKey)} - {"command_palette"} == _footer_keys(app)

            async def change_keys_and_open_help() -> None:
                for pane in ("%0", "%1"):  # a permission's keys, then a worker's
                    app.table.select(pane)
                    await wait_until(pilot, lambda pane=pane: app.table.selected_pane_id == pane and shows_the_keys(), f"the footer with {pane}'s keys", every=0.01)
                await pilot.press("question_mark")  # a dialog: the keys change again, and back
                await wait_until(pilot, lambda: screen_open(app, HelpScreen) and settled(), "the help screen", every=0.01)
                await pilot.press("question_mark")
                await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen) and shows_the_keys(), "the main screen's keys again", every=0.01)

            for _ in range(3):
                await change_keys_and_open_help()
            before, caches_before = _live_widgets(), _live_styles_caches()
            rebuilt_before = len(footer.children)
            made = [0]
            real_init = FooterKey.__init__

            def counted_init(key: FooterKey, *args: object, **kwargs: object) -> None:
                made[0] += 1
                real_init(key, *args, **kwargs)  # type: ignore[arg-type]

            FooterKey.__init__ = counted_init  # type: ignore[method-assign]
            try:
                for _ in range(ROUNDS):
                    await change_keys_and_open_help()
            finally:
                FooterKey.__init__ = real_init  # type: ignore[method-assign]
            after, caches_after = _live_widgets(), _live_styles_caches()
            assert app.selected_agent().state is AgentState.WORKING and "interrupt" in _footer_keys(app)  # the keys did change
            assert rebuilt_before and footer.children
            # 4 key changes a round: without the fix about 8 widgets stayed behind for each (320 in 10 rounds).
            assert after - before <= 10, f"{after - before} widgets more after {4 * ROUNDS} changes of the footer's keys"
            # One per widget; without unpin_styles_caches 4 more stayed for each change of keys (160 in 10 rounds).
            assert caches_after - caches_before <= 20, f"{caches_after - caches_before} styles caches more after {4 * ROUNDS} changes of the footer's keys"
            # Garbage: Textual's rebuild made every key anew on every change (about 4 a change: 170 in 10 rounds), a minute of
            # churn's worth of dead widgets piling up until the full collection; in place, only the key one agent has beyond
            # the other (one a round).
            assert made[0] <= 2 * ROUNDS, f"{made[0]} footer keys made for {4 * ROUNDS} changes of the footer's keys"

    asyncio.run(scenario())


def test_keys_changed_in_place_draw_the_footer_textual_builds():
    """The footer changes its key widgets in place: each agent's footer, reached from the one before, is drawn
    exactly as Textual's own rebuild draws it, and the keys every agent has room for stay the same widgets."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            footer = app.query_one(KeysFooter)

            def shows_the_keys() -> bool:
                return not footer._recompose_required and {k.action.removeprefix("app.") for k in footer.query(FooterKey)} - {"command_palette"} == _footer_keys(app)

            async def rebuilt_by_textual() -> None:
                done = asyncio.Event()

                async def rebuild() -> None:
                    await Footer.recompose(footer)
                    done.set()

                footer.call_later(rebuild)  # in the footer's own loop, as Textual runs it
                await wait_until(pilot, done.is_set, "Textual's rebuild", every=0.01)
                await pilot.pause(0.1)

            await wait_until(pilot, shows_the_keys, "the first agent's keys")
            seen = set()
            for pane in app.table.order[1:]:
                before = list(footer.query(FooterKey))
                app.table.select(pane)
                await wait_until(pilot, lambda pane=pane: app.table.selected_pane_id == pane and shows_the_keys(), f"{pane}'s keys", every=0.01)
                await settle(pilot)  # the pane's preview, asked of the service from a thread, is drawn before the two pictures
                await pilot.pause(0.1)
                now, in_place = list(footer.query(FooterKey)), app.export_screenshot()
                same = min(len(before), len(now)) - 1  # the palette's key is the last
                assert same >= 3 and all(a is b for a, b in zip(now[:same], before[:same], strict=True)) and now[-1] is before[-1], "keys made anew"
                seen.add(frozenset(_footer_keys(app)))
                await rebuilt_by_textual()
                assert list(footer.query(FooterKey))[0] is not now[0]
                assert app.export_screenshot() == in_place, f"{pane}'s footer drawn in place differs from Textual's"
            assert len(seen) >= 4, "the agents' keys differ, or this shows nothing"

    asyncio.run(scenario())
