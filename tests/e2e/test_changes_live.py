"""What an agent changed, from the real Claude Code: ``headspace diff`` against the resident service's baselines.

A live Claude (the pinned version, the scripted API) works in a git
repository; the resident service (``headspace serve``, as users run it)
watches it.  An Edit, approved through ``headspace send``, changes a file:
``headspace diff --turn`` prints exactly that change; after the next prompt
the turn's diff is empty and ``--since-start`` still holds it.  Through all
of it the repository's own files (``.git``: index, HEAD, refs, stash,
objects, config: every byte, and every time but an object's, which git
refreshes when it meets an object it has) are what they
were, and ``git status`` moves only by the agent's own edit: headspace only
reads the user's repository (the test's own git reads take no lock).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_resident_service import started
from tests.harness import fake_api as api
from tests.harness.cli import headspace
from tests.harness.gitrepo import dot_git, git
from tests.harness.scenarios import NUMBERED_MENU, TURN_DONE
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e


def repository_state(folder: Path) -> dict[str, object]:
    """Everything of the user's repository headspace must leave as it was: every file under .git (bytes, mode, mtime) and git's own view."""
    return {
        "files": dot_git(folder),
        "status": git(folder, "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
        "head": git(folder, "rev-parse", "HEAD"),
        "refs": git(folder, "for-each-ref"),
        "stash": git(folder, "stash", "list"),
    }


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_diff_prints_the_approved_edit_for_the_turn_and_keeps_it_since_the_start_leaving_the_repository_untouched(claude_session, fake_api, private_tmux, services):
    session = claude_session(
        [api.tool("Read", {"file_path": "notes.txt"}), api.edit("notes.txt", "remember the milk", "remember the bread"), api.text("Edited the note.")],
        name="ed",
        files={"notes.txt": "shopping\nremember the milk\nand the eggs\n", "old.txt": "kept\n"},
        launch=False,
    )
    repo = session.workdir
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "notes.txt", "old.txt")
    git(repo, "commit", "-q", "-m", "the user's own work")
    (repo / "draft.txt").write_text("the user's own uncommitted file\n")  # untracked before the agent began: not the agent's change
    session.launch()
    started(private_tmux.name, services)
    before = repository_state(repo)

    def diff(*args: str) -> str:
        proc = headspace("-L", private_tmux.name, "diff", "ed:0.0", *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: '"idle"' in out, timeout=30)
    assert diff("--since-start") == "", "nothing changed since headspace saw it"
    session.submit("fix the shopping note")
    session.wait_for(NUMBERED_MENU, timeout=40, what="the Edit's permission")
    poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: '"permission"' in out, timeout=30)  # the service has read it too
    sent = headspace("-L", private_tmux.name, "send", "ed:0.0", "--approve")
    assert sent.returncode == 0, sent.stderr
    session.wait_for(lambda s: "Edited the note." in s and TURN_DONE.search(s) is not None, timeout=40, what="the turn's end")
    assert (repo / "notes.txt").read_text() == "shopping\nremember the bread\nand the eggs\n"
    edited = repository_state(repo)  # git status now holds the agent's edit; nothing of headspace's may move it

    turn = diff("--turn")
    assert changed_lines(turn) == ["-remember the milk", "+remember the bread"], turn
    assert "a/notes.txt" in turn and "old.txt" not in turn and "draft.txt" not in turn
    assert diff() == turn  # --turn is the default
    rows = poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: "+1 −1 · 1 file" in out, timeout=20)
    assert json.loads(rows.splitlines()[0])["change"] == "+1 −1 · 1 file"  # the row's summary, for scripts
    stat = headspace("-L", private_tmux.name, "diff", "ed:0.0", "--stat").stdout
    assert "notes.txt" in stat and "+1 −1 · 1 file" in stat, stat

    fake_api.set_script([api.text("Nothing else to change.")])
    session.submit("thanks, that is all")
    session.wait_for(lambda s: "Nothing else to change." in s and TURN_DONE.search(s) is not None, timeout=40, what="the second turn")
    # The new turn's baseline is taken as its prompt is read (here from the transcript: no hooks); each diff is a process of its own.
    poll(lambda: diff("--turn"), lambda out: out == "", timeout=60)
    assert changed_lines(diff("--since-start")) == ["-remember the milk", "+remember the bread"]

    after = repository_state(repo)
    assert after["head"] == before["head"] and after["refs"] == before["refs"] and after["stash"] == before["stash"] == ""
    assert after["files"] == before["files"], "headspace wrote into the user's .git"
    assert after["status"] == edited["status"] != before["status"]


def test_an_edit_in_a_folder_that_is_not_a_git_repository_shows_in_diff_and_nothing_is_written_there(claude_session, fake_api, private_tmux, services):
    session = claude_session(
        [api.tool("Read", {"file_path": "notes.txt"}), api.edit("notes.txt", "remember the milk", "remember the bread"), api.text("Edited the note.")],
        name="pl",
        files={"notes.txt": "shopping\nremember the milk\nand the eggs\n"},
    )
    folder = session.workdir
    started(private_tmux.name, services)
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: '"idle"' in out, timeout=30)
    assert headspace("-L", private_tmux.name, "diff", "pl:0.0", "--since-start").stdout == ""
    session.submit("fix the shopping note")
    session.wait_for(NUMBERED_MENU, timeout=40, what="the Edit's permission")
    poll(lambda: headspace("-L", private_tmux.name, "status", "--json").stdout, lambda out: '"permission"' in out, timeout=30)
    assert headspace("-L", private_tmux.name, "send", "pl:0.0", "--approve").returncode == 0
    session.wait_for(lambda s: "Edited the note." in s and TURN_DONE.search(s) is not None, timeout=40, what="the turn's end")
    turn = poll(lambda: headspace("-L", private_tmux.name, "diff", "pl:0.0", "--turn"), lambda proc: proc.returncode == 0 and proc.stdout, timeout=30).stdout
    assert changed_lines(turn) == ["-remember the milk", "+remember the bread"], turn
    stat = headspace("-L", private_tmux.name, "diff", "pl:0.0", "--stat")
    assert stat.returncode == 0 and "+1 −1 · 1 file" in stat.stdout, (stat.stdout, stat.stderr)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before  # no .git, no index: only the agent's edit changed a file


def test_d_shows_the_edit_the_user_approved_with_y_from_the_services_own_baselines(claude_session, fake_api, private_tmux, tmp_path):
    """The diff view as users run it: the app a client of the service (here in process, behind the one seam), no fetcher of a test's."""
    import asyncio

    from headspace_tui.app.screens.diff_view import DiffScreen
    from headspace_tui.model import AgentState
    from tests.ui.apps import make_app, press_as_a_person, screen_open, wait_until
    from tests.ui.test_app_live import select_agent
    from tests.ui.test_diff_view import file_entries

    session = claude_session(
        [api.edit("notes.txt", "remember the milk", "remember the bread"), api.text("Edited the note.")],
        name="tui",
        files={"notes.txt": "shopping\nremember the milk\n"},
        launch=False,
    )
    for args in (("init", "-q", "-b", "main"), ("add", "notes.txt"), ("commit", "-q", "-m", "the user's own work")):
        git(session.workdir, *args)
    session.launch()

    async def scenario() -> None:
        app = make_app(private_tmux.name, tmp_path, claude_home=session.home)
        async with app.run_test(size=(160, 48)) as pilot:
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await asyncio.to_thread(session.submit, "fix the shopping note")
            await select_agent(pilot, app, session.pane_id, AgentState.PERMISSION)
            await wait_until(pilot, lambda: app.selected_agent().observation.option_labels, "the dialog's options")
            await press_as_a_person(pilot, app, session.pane_id, "y", lambda: "Edited the note." in session.screen(), "the edit made", timeout=40)
            await asyncio.to_thread(session.wait_for, lambda s: "Edited the note." in s and TURN_DONE.search(s) is not None, timeout=40)
            await select_agent(pilot, app, session.pane_id, AgentState.IDLE)
            await pilot.press("d")
            await wait_until(pilot, lambda: screen_open(app, DiffScreen), "the diff view")
            view = app.screen
            assert isinstance(view, DiffScreen)
            await wait_until(pilot, lambda: view.diff is not None and not view.loading and file_entries(view), "this turn's files", 30)
            assert file_entries(view) == ["M notes.txt +1 −1"], file_entries(view)
            await pilot.press("t")
            await wait_until(pilot, lambda: not view.loading and "since" in str(view.query_one("#title").render()), "since it started", 30)
            assert file_entries(view) == ["M notes.txt +1 −1"]

    asyncio.run(scenario())
