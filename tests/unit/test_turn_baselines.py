"""A turn's baseline: the work tree as its prompt is told, or, told late, the agent at rest before the prompt.

Without hooks a turn is told by the transcript, read on the pane's schedule:
on a loaded machine seconds after the prompt, when the agent may already be
writing.  A clean-clone run's turn diff then showed an editor's temporary
file (``notes.txt.tmp.<pid>.<hex>``) as deleted: the baseline was taken while
Claude wrote.  Real git here (changes/snapshot.py's repository of ours for
a folder that is none), in a temporary data folder; the clock is the test's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from headspace_tui.changes.trees import LocalTrees
from headspace_tui.model import AgentState, Observation
from headspace_tui.service.records.store import AgentStore
from headspace_tui.service.watching.work_changes import TOLD_LATE, WorkChanges
from headspace_tui.tmux.server import PaneRecord

PANE = "%1"
MILK, BREAD, EGGS = "remember the milk", "remember the bread", "and the eggs"


@pytest.fixture(autouse=True)
def _data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def _record(folder: Path) -> PaneRecord:
    return PaneRecord(
        pane_id=PANE,
        session_id="$0",
        session_name="s",
        window_index=0,
        pane_index=0,
        target="s:0.0",
        pid=100,
        current_command="claude",
        cwd=str(folder),
        width=80,
        height=24,
        alternate_on=False,
        in_mode=False,
        title="",
        dead=False,
        dead_status=None,
    )


class Agent:
    """One agent in a folder of notes, its store, its changes and the test's clock."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.notes = folder / "notes.txt"
        self.notes.write_text(f"shopping\n{MILK}\n")
        self.now = 100.0
        self.store = AgentStore()
        self.changes = WorkChanges(self.store, LocalTrees(), started=0.0, clock=lambda: self.now)
        self.record = _record(folder)

    def reads(self, state: AgentState) -> None:
        self.store.observed(self.record, "k", Observation(state), self.now, agent_pid=7)

    async def settled(self, done, what: str) -> None:
        for _ in range(500):  # the snapshots run git in threads: wait for what they leave, not for a time
            if done(self.changes._agents.get(PANE)):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"never: {what}")

    async def first_look(self) -> None:
        """First sight of the agent, idle at its box: the look at rest a late turn may begin from."""
        self.reads(AgentState.IDLE)
        await self.settled(lambda base: base is not None and base.start, "the first look (at rest)")

    async def prompt(self, at: float) -> None:
        """A prompt submitted at ``at``, told now (``self.now``) by the transcript; waits for its baseline."""
        self.store.turn(PANE, at, at, by="transcript")
        await self.settled(lambda base: base.turned and base.turn_at == at, "the turn's baseline")  # set with it, once it is taken

    async def turn_lines(self) -> list[str]:
        diff = await self.changes.changes(PANE, "turn")
        assert not diff.note.startswith("no ") and diff.files is not None, diff
        return [f"{line.kind}{line.text}" for file in diff.files for hunk in file.hunks for line in hunk.lines if line.kind in "+-"]


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def test_a_turn_told_late_begins_from_the_agent_at_rest_before_its_prompt(tmp_path):
    async def scenario() -> None:
        agent = Agent(tmp_path / "work")
        await agent.first_look()
        agent.now = 101.0
        agent.reads(AgentState.WORKING)  # the prompt went in at 101 ...
        _edit(agent.notes, MILK, BREAD)  # ... and the agent edits before the transcript is read
        agent.now = 101.0 + TOLD_LATE + 3.0
        await agent.prompt(101.0)
        assert await agent.turn_lines() == [f"-{MILK}", f"+{BREAD}"]

    asyncio.run(scenario())


def test_a_turn_told_late_never_begins_before_the_last_turn(tmp_path):
    """The look at rest must come after the turn before began: else that turn's work would count as this one's."""

    async def scenario() -> None:
        agent = Agent(tmp_path / "work")
        await agent.first_look()
        agent.now = 101.0
        agent.reads(AgentState.WORKING)
        await agent.prompt(101.0)  # told at once: a look now
        _edit(agent.notes, MILK, BREAD)  # the first turn's work; the agent never rests in between
        agent.now = 120.0
        agent.notes.write_text(agent.notes.read_text() + f"{EGGS}\n")  # the second turn's, told late
        agent.now = 120.0 + TOLD_LATE + 3.0
        await agent.prompt(120.0)
        assert await agent.turn_lines() == [], "a second turn told late, with no rest since the first began, begins where it is told"

    asyncio.run(scenario())


def test_a_turn_told_at_once_begins_from_a_look_then(tmp_path):
    async def scenario() -> None:
        agent = Agent(tmp_path / "work")
        await agent.first_look()
        agent.now = 101.0
        _edit(agent.notes, MILK, BREAD)  # the user's own edit before the prompt: not the turn's
        agent.now = 102.0
        agent.reads(AgentState.WORKING)
        await agent.prompt(102.0)
        agent.notes.write_text(agent.notes.read_text() + f"{EGGS}\n")
        assert await agent.turn_lines() == [f"+{EGGS}"]

    asyncio.run(scenario())


def test_a_folder_too_large_for_a_baseline_is_counted_once_whichever_agents_are_in_it(tmp_path, monkeypatch):
    """Twenty agents in one large folder outside git: counted once, not twenty times two at a time (130% of a core for minutes).

    Real snapshots and git; the cap is lowered so ten files are "too large", and the count is spied on (the real one runs).
    """
    from dataclasses import replace

    from headspace_tui.changes import snapshot
    from headspace_tui.service.watching.work_changes import REFUSED_FOR

    monkeypatch.setattr(snapshot, "PLAIN_FILES", 5)
    counted: list[str] = []
    count = snapshot._count_plain
    monkeypatch.setattr(snapshot, "_count_plain", lambda repo, store: (counted.append(repo.top), count(repo, store))[1])
    folder = tmp_path / "big"
    folder.mkdir()
    for n in range(10):
        (folder / f"file{n}").write_text("x")
    now = [100.0]
    store = AgentStore()
    changes = WorkChanges(store, LocalTrees(), started=0.0, clock=lambda: now[0])

    async def scenario() -> None:
        async def refused(panes: list[str]) -> None:
            for _ in range(500):
                if all((base := changes._agents.get(p)) is not None and base.unusable for p in panes):
                    return
                await asyncio.sleep(0.02)
            raise AssertionError("the agents' folder was never refused")

        panes = [f"%{n}" for n in range(20)]
        for n, pane in enumerate(panes):
            store.observed(replace(_record(folder), pane_id=pane, session_name=f"s{n}"), f"k{n}", Observation(AgentState.IDLE), now[0], agent_pid=7 + n)
        await refused(panes)
        assert counted == [str(folder)], counted
        assert all("too large for a baseline" in changes._agents[p].unusable for p in panes)
        now[0] += REFUSED_FOR + 1  # a while later the folder may have changed (a git init, files gone): a new agent looks again
        store.observed(replace(_record(folder), pane_id="%99", session_name="late"), "late", Observation(AgentState.IDLE), now[0], agent_pid=99)
        await refused(["%99"])
        assert counted == [str(folder)] * 2, counted
        await changes.close()

    asyncio.run(scenario())


def test_agents_seen_at_once_in_one_folder_share_its_snapshots_and_a_later_look_reads_it_anew(tmp_path):
    """Thirty agents in one folder took thirty first snapshots one after another (a large folder kept git running for a
    minute, on a remote host too); a snapshot begun after an agent asked serves it.  One asked after a file changed
    still gets a look of its own: its diff shows the change.  Real git; the snapshots are counted (the real ones run)."""
    from dataclasses import replace

    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "notes.txt").write_text(f"shopping\n{MILK}\n")
    store = AgentStore()
    trees = LocalTrees()
    taken: list[str] = []
    real = trees.snapshot

    async def counted(where: str) -> str:
        taken.append(where)
        return await real(where)

    trees.snapshot = counted  # type: ignore[method-assign]
    changes = WorkChanges(store, trees, started=0.0, clock=lambda: 100.0)

    async def scenario() -> None:
        panes = [f"%{n}" for n in range(10)]
        for n, pane in enumerate(panes):
            store.observed(replace(_record(folder), pane_id=pane, session_name=f"s{n}"), f"k{n}", Observation(AgentState.IDLE), 100.0, agent_pid=7 + n)
        for _ in range(500):
            if all((base := changes._agents.get(p)) is not None and base.start for p in panes):
                break
            await asyncio.sleep(0.02)
        starts = {changes._agents[p].start for p in panes}
        assert len(starts) == 1 and "" not in starts, starts
        assert len(taken) <= 2, f"{len(taken)} snapshots for ten agents seen at once"
        (folder / "notes.txt").write_text(f"shopping\n{MILK}\n{BREAD}\n")
        diff = await changes.changes(panes[3], "start")
        assert (diff.added, diff.removed) == (1, 0), diff
        await changes.close()

    asyncio.run(scenario())
