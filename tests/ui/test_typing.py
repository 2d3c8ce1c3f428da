"""Typing into an agent from the app: the reply box that keeps its text, and input mode (``i``).

Input mode is tried on real tmux panes of the test's private server, each
running a stand-in for Claude: a copy of ``cat`` named ``claude`` (tmux
then reports ``claude`` as the pane's command, as for the real binary, and
the terminal echoes every key that reaches the pane, so the capture shows
exactly what was sent).  The rows are recorded Claude screens replayed
onto those panes (the monitor is off), so the table is fixed and only the
keys vary.  The real Claude is driven in test_typing_live.py.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from textual.widgets import Input

from headspace_tui.api.facade import KeyStroke
from headspace_tui.app.input_mode import LEAVE_KEY, keystroke, pasted
from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.reply import ReplyScreen
from headspace_tui.app.widgets.preview import PanePreview, PromptBar
from headspace_tui.detect.claude import classify_capture
from headspace_tui.model import AgentState
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_answer_channel import record_keys
from tests.harness.record import DEFAULT_OUT
from tests.harness.tmux import PrivateTmux
from tests.ui.apps import app_of, demo_app, screen_open, service_of, settle, wait_until


def run(coroutine) -> None:
    asyncio.run(coroutine)


def recorded(name: str) -> str:
    return (DEFAULT_OUT / "alt" / "120x40" / f"{name}.ansi").read_text()


def stand_in(tmp: Path) -> Path:
    """A copy of ``cat`` named ``claude``: a pane tmux reports as running Claude, which echoes what it is sent."""
    binary = tmp / "bin" / "claude"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy("/bin/cat", binary)
    return binary


def pane_running(tmux: PrivateTmux, name: str, command: list[str], tmp: Path) -> str:
    pane = tmux.new_session(name, width=100, height=20, cwd=str(tmp), command=command)
    return pane


def app_on(tmux: PrivateTmux) -> HeadspaceApp:
    """The app on the private server with its monitor off: rows come only from ``show``."""
    server = TmuxServer(socket_name=tmux.name)
    return app_of(Service.build(server, live=False, journal=Journal(None), hooks=False, config=Config(theme="headspace-dark")))


def show(app: HeadspaceApp, pane_id: str, screen: str, age: float = 30.0) -> None:
    """Row for the real pane ``pane_id``, showing the recorded ``screen``."""
    record = service_of(app)._server.pane(pane_id)
    ansi = recorded(screen)
    service_of(app).replay(record, ansi, classify_capture(ansi, command="claude"), app.clock() - age, family="claude")


def notes(app: HeadspaceApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- which keys input mode forwards (pure) ---------------------------------------------


def test_input_mode_forwards_text_and_editing_keys_and_nothing_that_could_end_or_reconfigure_claude():
    assert keystroke("a", "a") == KeyStroke(("a",), literal=True)
    assert keystroke("exclamation_mark", "!") == KeyStroke(("!",), literal=True)
    assert keystroke("space", " ") == KeyStroke((" ",), literal=True)
    assert keystroke("enter", "\r") == KeyStroke(("Enter",))
    assert keystroke("backspace", "\x7f") == KeyStroke(("BSpace",))
    assert keystroke("escape", "\x1b") == KeyStroke(("Escape",))
    assert keystroke("up", None) == KeyStroke(("Up",))
    for key, character in ((LEAVE_KEY, "\x1d"), ("ctrl+c", "\x03"), ("ctrl+d", "\x04"), ("shift+tab", None), ("f5", None), ("alt+x", "x")):
        assert keystroke(key, character) is None, key
    assert pasted("one\ntwo\r\nthree") == KeyStroke(("one two  three",), literal=True)
    assert pasted("\n\n") is None


# -- input mode on real panes ------------------------------------------------------------


def test_input_mode_is_marked_and_its_keys_reach_only_the_pane_it_was_entered_on(private_tmux, tmp_path):
    claude = stand_in(tmp_path)
    first = pane_running(private_tmux, "first", [str(claude)], tmp_path)
    second = pane_running(private_tmux, "second", [str(claude)], tmp_path)

    async def scenario() -> list[tuple]:
        app = app_on(private_tmux)
        async with app.run_test(size=(160, 48)) as pilot:
            sent = record_keys(app)
            show(app, first, "idle_fresh", age=300)
            show(app, second, "idle_finished", age=30)
            await wait_until(pilot, lambda: len(app.table.agents) == 2, "both rows")
            assert app.table.select(first)
            await pilot.pause()
            await pilot.press("i")
            screen = app.main
            preview = screen.query_one(PanePreview)
            await wait_until(pilot, lambda: screen.input_mode.link is not None, "input mode's link to the pane")
            # Unmistakable: the preview's border and title, the prompt bar, the footer's one key.
            assert preview.has_class("-input") and app.focused is preview
            assert preview.styles.border_top[0] == "heavy"
            assert f"INPUT → first:0.0 ({first})" in str(preview.border_title)
            assert "INPUT" in str(screen.query_one(PromptBar).render())
            offered = {b.binding.action: b.binding.description for b in screen.active_bindings.values() if b.enabled and b.binding.show}
            assert offered == {"leave_input": "leave INPUT"}, offered

            # The other agent starts needing you: it moves above; the keys stay with the first pane.
            show(app, second, "permission_bash", age=1)
            await wait_until(pilot, lambda: app.table.order[0] == second, "the permission on top")
            assert app.table.selected_pane_id == first
            await pilot.press(*"hi y n 2", "enter")
            await screen.input_mode.sent()
            await wait_until(pilot, lambda: private_tmux.capture(first).count("hi y n 2") == 2, "the line echoed and printed back by the stand-in")
            await pilot.press("escape")  # Claude's own key (interrupt, close a dialog): forwarded, input mode stays
            await screen.input_mode.sent()
            await wait_until(pilot, lambda: "^[" in private_tmux.capture(first), "the terminal's echo of Esc")
            assert screen.input_mode.active
            await pilot.press("tab")  # Claude's (completion), not Textual's focus move
            await screen.input_mode.sent()
            assert screen.input_mode.active and app.focused is preview
            await pilot.press(LEAVE_KEY)
            await pilot.pause()
            assert not screen.input_mode.active and not preview.has_class("-input") and app.focused is app.table
            assert f"({first})" in str(preview.border_title) and "INPUT" not in str(preview.border_title)
            await pilot.press("y")  # an agent key again (nothing for an idle agent), not a letter for the pane
            await pilot.pause(0.3)
            return sent

    sent = asyncio.run(scenario())
    assert {args[0] for args in sent} == {first}, sent
    # (Without control clients each key is recorded twice: by the pane I/O and by the server it falls back to.)
    named = [args[1:] for args in sent if args[1:] in (("Escape",), ("Tab",), ("Enter",))]
    assert named == [("Enter",)] * 2 + [("Escape",)] * 2 + [("Tab",)] * 2, sent
    assert not any("\x1d" in str(args) or "C-]" in str(args) for args in sent), sent
    assert "^]" not in private_tmux.capture(first) and "y" not in private_tmux.capture(first).replace("hi y n 2", "")
    assert private_tmux.capture(second).strip() == ""


def test_input_mode_sends_nothing_in_copy_mode_and_ends_when_claude_leaves_its_pane(private_tmux, tmp_path):
    claude = stand_in(tmp_path)
    pane = pane_running(private_tmux, "shell", ["bash", "--norc", "--noprofile", "-i"], tmp_path)
    private_tmux.send_text(pane, f"PS1='$ '; {claude}")
    private_tmux.send_keys(pane, "Enter")

    async def scenario() -> None:
        app = app_on(private_tmux)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_until(pilot, lambda: private_tmux.pane(pane).current_command == "claude", "the stand-in running in the shell")
            show(app, pane, "idle_fresh")
            await wait_until(pilot, lambda: pane in app.table.agents, "the row")
            app.table.select(pane)
            await pilot.press("i")
            screen = app.main
            await wait_until(pilot, lambda: screen.input_mode.link is not None, "input mode's link")
            private_tmux.run("copy-mode", "-t", pane)
            await pilot.press(*"zq")
            await screen.input_mode.sent()
            assert any("copy mode" in n for n in notes(app)), notes(app)
            assert screen.input_mode.active  # still bound: leaving copy mode in the pane makes it usable again
            private_tmux.run("send-keys", "-t", pane, "-X", "cancel")
            await pilot.press(*"ok")
            await screen.input_mode.sent()
            await wait_until(pilot, lambda: "ok" in private_tmux.capture(pane), "keys once out of copy mode")
            assert "zq" not in private_tmux.capture(pane)
            # Claude (the stand-in) exits in the pane: the shell is back, and must get nothing.
            private_tmux.send_keys(pane, "Enter", "C-d")
            await wait_until(pilot, lambda: private_tmux.pane(pane).current_command == "bash", "the shell back")
            await pilot.press(*"touch gotcha", "enter")
            await wait_until(pilot, lambda: not screen.input_mode.active, "input mode to end")
            assert any("Claude is not running" in n for n in notes(app)), notes(app)
            await pilot.pause(0.3)

    run(scenario())
    assert "touch" not in private_tmux.capture(pane) and not (tmp_path / "gotcha").exists()


def test_input_mode_ends_when_its_pane_is_gone(private_tmux, tmp_path):
    claude = stand_in(tmp_path)
    pane = pane_running(private_tmux, "gone", [str(claude)], tmp_path)
    other = pane_running(private_tmux, "stays", [str(claude)], tmp_path)  # the server outlives the pane

    async def scenario() -> None:
        app = app_on(private_tmux)
        async with app.run_test(size=(160, 48)) as pilot:
            show(app, pane, "idle_fresh")
            await wait_until(pilot, lambda: pane in app.table.agents, "the row")
            app.table.select(pane)
            await pilot.press("i")
            screen = app.main
            await wait_until(pilot, lambda: screen.input_mode.link is not None, "input mode's link")
            private_tmux.run("kill-pane", "-t", pane)
            await pilot.press("w")
            await wait_until(pilot, lambda: not screen.input_mode.active, "input mode to end")
            assert any("gone" in n for n in notes(app)), notes(app)

    run(scenario())
    assert private_tmux.capture(other).strip() == ""


# -- the reply box keeps its text ---------------------------------------------------------


def test_a_reply_that_is_not_delivered_stays_in_its_box_with_the_reason_and_comes_back_after_esc():
    """No tmux server behind the demo's rows: the send is refused by tmux itself, after Enter."""

    async def scenario() -> None:
        app = demo_app([("web", "question_two_options", 40)])
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            agent = next(iter(app.table.agents.values()))
            assert agent.state is AgentState.QUESTION
            app.table.select(agent.pane_id)
            assert app.main.check_action("reply", ())
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen), "the reply box")
            box = app.screen
            assert "Type something." in " ".join(str(label.render()) for label in box.query("Label"))
            await pilot.press(*"MariaDB please", "enter")
            reason = box.query_one("#reason")
            await wait_until(pilot, lambda: "not sent" in str(reason.render()), "the reason in the box")
            assert app.screen is box and box.query_one("#reply", Input).value == "MariaDB please"
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen_open(app, ReplyScreen), "the box closed")
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen), "the reply box again")
            assert app.screen.query_one("#reply", Input).value == "MariaDB please"

    run(scenario())


def test_a_reply_refused_at_once_stays_in_its_box_with_the_reason():
    """The agent's host goes out of reach while the box is open: Enter is refused before any key, the text stays."""

    async def scenario() -> None:
        app = demo_app([("docs", "input_plain_question", 60)])
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            agent = next(iter(app.table.agents.values()))
            app.table.select(agent.pane_id)
            await pilot.press("r")
            await wait_until(pilot, lambda: screen_open(app, ReplyScreen), "the reply box")
            box = app.screen
            await pilot.press(*"leave them")
            service_of(app)._fleet.first.store.offline("ssh: connection lost", app.clock())  # as a monitor says it
            await pilot.press("enter")
            await settle(pilot)  # its answer comes from the service, off the loop
            reason = str(box.query_one("#reason").render())
            assert app.screen is box and "out of reach" in reason and "ssh: connection lost" in reason, reason
            assert box.query_one("#reply", Input).value == "leave them" and not box.sending

    run(scenario())
