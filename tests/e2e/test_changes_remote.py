"""What an agent on an SSH host changed: baselines and diffs taken there by the probe (git runs on that host), seen in the TUI.

The host is a real sshd on 127.0.0.1 (tests/harness/sshd.py) with a live
Claude in a git repository there; the app is the client of a service that
watches only that host, as the user's TUI is.  An Edit approved with ``y``
shows on the row as the turn's ``+1 −1 · 1 file``; the diff the client
asks for holds exactly that change; after the next prompt the turn's diff
is empty and "since it started" still holds it.  The repository's own
files are as they were.
"""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.model import AgentState
from tests.e2e.test_changes_live import changed_lines, repository_state
from tests.e2e.test_remote import box, private_tmux, remote_app  # noqa: F401 (the host's fixtures)
from tests.harness import fake_api as api
from tests.harness.gitrepo import git
from tests.harness.scenarios import TURN_DONE
from tests.ui.apps import live_row, press_as_a_person
from tests.ui.test_app_live import select_agent, wait_until

pytestmark = pytest.mark.e2e


def lines_of(diff) -> list[str]:
    return [f"{line.kind}{line.text}" for f in diff.files for h in f.hunks for line in h.lines if line.kind != " "]


def test_an_agent_on_a_host_over_ssh_has_its_turn_and_start_diffs_taken_there(claude_session, fake_api, private_tmux, box, tmp_path):  # noqa: F811
    session = claude_session(
        [api.tool("Read", {"file_path": "notes.txt"}), api.edit("notes.txt", "remember the milk", "remember the bread"), api.text("Edited the note.")],
        name="far",
        files={"notes.txt": "shopping\nremember the milk\nand the eggs\n"},
        launch=False,
    )
    repo = session.workdir
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "the user's own work")
    session.launch()
    before = repository_state(repo)
    address = session.pane_id + "@box"

    async def scenario() -> None:
        app = remote_app(box, private_tmux.name, tmp_path)
        async with app.run_test(size=(160, 40)) as pilot:
            await select_agent(pilot, app, address, AgentState.IDLE)
            start = await app.service.changes(address, "start")
            assert start.error == "" and start.empty and start.note == "since headspace saw it", start
            await asyncio.to_thread(session.submit, "fix the shopping note")
            await select_agent(pilot, app, address, AgentState.PERMISSION)
            await wait_until(pilot, lambda: app.selected_agent().observation.option_labels, "the dialog's options")
            await press_as_a_person(pilot, app, address, "y", lambda: "Edited the note." in session.screen(), "the edit made", timeout=40)
            await asyncio.to_thread(session.wait_for, lambda s: "Edited the note." in s and TURN_DONE.search(s) is not None, timeout=40)
            await wait_until(pilot, lambda: live_row(app, address).change == "+1 −1 · 1 file", "the turn's change on the row", 60)
            turn = await app.service.changes(address, "turn")
            assert lines_of(turn) == ["-remember the milk", "+remember the bread"] and [f.path for f in turn.files] == ["notes.txt"], turn
            fake_api.set_script([api.text("Nothing else to change.")])
            await asyncio.to_thread(session.submit, "thanks, that is all")
            await asyncio.to_thread(session.wait_for, lambda s: "Nothing else to change." in s and TURN_DONE.search(s) is not None, timeout=40)
            for _ in range(120):  # the new turn's baseline is taken as its prompt is read there (a loaded CI took over 20 s)
                if (await app.service.changes(address, "turn")).empty:
                    break
                await asyncio.sleep(0.5)
            assert (await app.service.changes(address, "turn")).empty
            assert lines_of(await app.service.changes(address, "start")) == ["-remember the milk", "+remember the bread"]

    asyncio.run(scenario())
    assert (repo / "notes.txt").read_text() == "shopping\nremember the bread\nand the eggs\n"
    after = repository_state(repo)
    assert after["files"] == before["files"] and after["head"] == before["head"] and after["refs"] == before["refs"]
    assert changed_lines(git(repo, "diff")) == ["-remember the milk", "+remember the bread"]
