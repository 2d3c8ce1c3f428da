"""Claude's status files: reading a real folder, the state mapping, and watching for changes."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from headspace_tui.detect.claude.status_files import (
    ClaudeStatus,
    claude_config_dir,
    read_statuses,
    status_observation,
)
from headspace_tui.model import AgentState
from headspace_tui.service.watching.folder_watch import watch_statuses

# What 2.1.330 writes (trimmed of fields we do not read).
SAMPLE = {
    "pid": 2109,
    "sessionId": "78ed0c1e-0000-4000-8000-000000000000",
    "cwd": "/tmp/x/work",
    "startedAt": 1795323400890,
    "version": "2.1.330",
    "kind": "interactive",
    "tmux": "a:@0.%0",
    "name": "work-72",
    "status": "idle",
    "updatedAt": 1795323401000,
    "statusUpdatedAt": 1795323400950,
}


def write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_config_dir_from_env_or_home():
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": "/etc/cc", "HOME": "/home/u"}) == Path("/etc/cc")
    assert claude_config_dir({"HOME": "/home/u"}) == Path("/home/u/.claude")
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": "", "HOME": "/home/u"}) == Path("/home/u/.claude")


def test_reads_valid_files_and_skips_the_rest(tmp_path: Path):
    write(tmp_path, "2109.json", SAMPLE)
    write(tmp_path, "3000.json", {**SAMPLE, "pid": 3000, "status": "waiting", "waitingFor": "permission prompt"})
    write(tmp_path, "3100.json", {"pid": 3100, "sessionId": "s", "cwd": "/w"})  # status not written yet
    write(tmp_path, "4000.json", {k: v for k, v in SAMPLE.items() if k != "pid"})  # pid from the file name
    write(tmp_path, "5000.json", '{"pid": 5000, "status": "bu')  # caught mid-write
    write(tmp_path, "5100.json", "")  # just created
    write(tmp_path, "5200.json", "[1, 2, 3]")  # JSON, but not a status
    write(tmp_path, "notes.json", {**SAMPLE, "pid": "x"})  # no usable pid anywhere
    write(tmp_path, "2109.3f36af38c40ab1.key", "binary key material")  # Claude keeps these beside
    write(tmp_path, "README", "not json at all")
    (tmp_path / "6000.json").mkdir()  # unreadable as a file

    statuses = read_statuses(tmp_path)

    assert sorted(statuses) == [2109, 3000, 3100, 4000]
    idle = statuses[2109]
    assert idle == ClaudeStatus(
        pid=2109,
        status="idle",
        waiting_for="",
        session_id=SAMPLE["sessionId"],
        cwd="/tmp/x/work",
        name="work-72",
        updated_at=1795323400.95,
        tmux="a:@0.%0",
        kind="interactive",
    )
    assert idle.pane_id == "%0"
    assert statuses[3000].waiting_for == "permission prompt"
    assert statuses[3100].status == "" and statuses[3100].updated_at == 0.0
    assert statuses[4000].pid == 4000


def test_missing_folder_reads_as_empty(tmp_path: Path):
    assert read_statuses(tmp_path / "nope") == {}


@pytest.mark.parametrize(
    ("status", "waiting_for", "state"),
    [
        ("busy", "", AgentState.WORKING),
        ("shell", "", AgentState.WORKING),
        ("idle", "", AgentState.IDLE),
        ("waiting", "permission prompt", AgentState.PERMISSION),
        ("waiting", "sandbox request", AgentState.PERMISSION),
        ("waiting", "input needed", AgentState.QUESTION),
        ("waiting", "dialog open", AgentState.INPUT),
        ("waiting", "", AgentState.INPUT),
        ("", "", AgentState.STARTING),
        ("sleeping", "", AgentState.UNKNOWN),
    ],
)
def test_status_mapping(status: str, waiting_for: str, state: AgentState):
    observation = status_observation(ClaudeStatus(pid=1, status=status, waiting_for=waiting_for))
    assert observation.state is state
    assert observation.source == "status-file"
    (evidence,) = observation.evidence
    assert evidence.rule == "status-file" and evidence.line == -1
    assert f"status={status or '-'}" in evidence.text and f"waitingFor={waiting_for or '-'}" in evidence.text


def test_known_states_are_confident_and_guesses_less_so():
    assert status_observation(ClaudeStatus(1, "busy")).confidence == 0.8
    assert status_observation(ClaudeStatus(1, "waiting", "permission prompt")).confidence == 0.8
    assert status_observation(ClaudeStatus(1, "waiting", "dialog open")).confidence < 0.8
    # A guessed "needs you" never claims a menu: no digit would be offered for it.
    assert not status_observation(ClaudeStatus(1, "waiting", "dialog open")).state.is_menu
    assert status_observation(ClaudeStatus(1, "waiting", "dialog open")).state.needs_you


async def _next(gen, timeout: float = 5.0):
    return await asyncio.wait_for(gen.__anext__(), timeout)


async def _until(gen, accept, timeout: float = 8.0):
    """Read the watch until a yielded value satisfies ``accept``; bounded."""

    async def loop():
        while True:
            value = await gen.__anext__()
            if accept(value):
                return value

    return await asyncio.wait_for(loop(), timeout)


def test_watch_sees_creation_change_and_removal(tmp_path: Path):
    async def scenario():
        write(tmp_path, "2109.json", SAMPLE)
        stop = asyncio.Event()
        gen = watch_statuses(tmp_path, stop)
        try:
            first = await _next(gen)
            assert list(first) == [2109]

            write(tmp_path, "3000.json", {**SAMPLE, "pid": 3000, "status": "busy"})
            seen = await _until(gen, lambda s: 3000 in s)
            assert seen[3000].status == "busy"

            write(tmp_path, "3000.json", {**SAMPLE, "pid": 3000, "status": "waiting", "waitingFor": "permission prompt"})
            seen = await _until(gen, lambda s: s.get(3000) and s[3000].status == "waiting")
            assert seen[3000].waiting_for == "permission prompt"

            (tmp_path / "2109.json").unlink()
            seen = await _until(gen, lambda s: 2109 not in s)
            assert list(seen) == [3000]

            stop.set()
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(gen.__anext__(), 5)
        finally:
            stop.set()
            await gen.aclose()

    asyncio.run(scenario())


def test_watch_waits_for_a_folder_that_does_not_exist_yet(tmp_path: Path):
    folder = tmp_path / ".claude" / "sessions"

    async def scenario():
        stop = asyncio.Event()
        gen = watch_statuses(folder, stop, poll=0.2)
        try:
            assert await _next(gen) == {}
            folder.mkdir(parents=True)
            write(folder, "77.json", {**SAMPLE, "pid": 77})
            seen = await _until(gen, lambda s: 77 in s)
            assert seen[77].name == "work-72"

            # The folder vanishes (config dir wiped) and comes back: the watch follows.
            (folder / "77.json").unlink()
            folder.rmdir()
            assert await _until(gen, lambda s: s == {}) == {}
            folder.mkdir()
            write(folder, "78.json", {**SAMPLE, "pid": 78})
            assert 78 in await _until(gen, lambda s: 78 in s)
        finally:
            stop.set()
            await gen.aclose()

    asyncio.run(scenario())


def test_watch_ends_promptly_when_stopped_while_waiting(tmp_path: Path):
    async def scenario():
        stop = asyncio.Event()
        gen = watch_statuses(tmp_path, stop)
        await _next(gen)
        pending = asyncio.ensure_future(gen.__anext__())
        await asyncio.sleep(0.3)
        stop.set()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(pending, 5)

    asyncio.run(scenario())


def test_an_idle_watch_runs_no_thread_of_its_own_and_only_a_change_brings_news(tmp_path: Path):
    """The watch is the kernel's descriptor read by the loop: no thread waking every 20 ms to look (the old watcher's cost)."""
    from headspace_tui.service.watching.folder_watch import folder_changes

    async def scenario():
        threads = threading.active_count()
        stop = asyncio.Event()
        gen = folder_changes(tmp_path, every=30.0, stop_event=stop)
        try:
            await asyncio.wait_for(gen.__anext__(), 5)  # the first look
            pending = asyncio.ensure_future(gen.__anext__())
            await asyncio.sleep(0.3)  # time must pass: nothing changes, so nothing may come
            assert not pending.done(), "news with nothing changed"
            assert threading.active_count() == threads, "the watch started a thread"
            write(tmp_path, "4000.json", {**SAMPLE, "pid": 4000})
            await asyncio.wait_for(pending, 5)  # told by the kernel, long before the 30 s look
        finally:
            stop.set()
            await gen.aclose()

    asyncio.run(scenario())


def test_a_folder_not_made_yet_costs_no_look_a_second_and_is_seen_when_made(tmp_path: Path):
    """Claude's sessions folder on a machine that never ran Claude: no stat a second while it is missing (each a wake of the
    service at rest), yet its making, two folders deep, is news at once (the kernel tells the nearest folder that exists)."""
    from headspace_tui.service.watching import folder_watch

    folder = tmp_path / ".claude" / "sessions"
    looks = 0
    real_is_dir = Path.is_dir

    def counted(path: Path) -> bool:
        nonlocal looks
        if path == folder:
            looks += 1
        return real_is_dir(path)

    async def scenario():
        stop = asyncio.Event()
        gen = folder_watch.folder_changes(folder, every=1.0, stop_event=stop)
        try:
            pending = asyncio.ensure_future(gen.__anext__())
            await asyncio.sleep(2.5)  # longer than ``every``: a look a second would have come twice
            assert not pending.done(), "news with nothing made"
            assert looks <= 2, f"{looks} looks at a missing folder in 2.5 s"
            folder.mkdir(parents=True)
            await asyncio.wait_for(pending, 5)  # told at once, long before WATCHED_LOOK
            write(folder, "77.json", {**SAMPLE, "pid": 77})
            await asyncio.wait_for(gen.__anext__(), 5)  # and watched from then on
        finally:
            stop.set()
            await gen.aclose()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "is_dir", counted)
        asyncio.run(scenario())


def test_files_written_beside_a_folder_not_made_yet_wake_nothing(tmp_path: Path):
    """A missing sessions folder in a busy ``~/.claude``: only the entry on the way to it is news.

    Every write beside it used to end the wait, and each end closed and
    remade an inotify descriptor (a close waits for the kernel, 5-16 ms, on
    the loop that reads every pane).  The folder's making is still news at once.
    """
    from headspace_tui.service.watching import folder_watch

    folder = tmp_path / "sessions"
    made = 0
    real = folder_watch.FolderWatch

    def counted(*args, **kwargs):
        nonlocal made
        made += 1
        return real(*args, **kwargs)

    async def scenario():
        stop = asyncio.Event()
        gen = folder_watch.folder_changes(folder, every=1.0, stop_event=stop)
        try:
            pending = asyncio.ensure_future(gen.__anext__())
            await asyncio.sleep(0.2)
            for n in range(20):
                (tmp_path / f"history-{n}.jsonl").write_text("{}\n")  # made, written
                (tmp_path / "history-0.jsonl").write_text("{}\n{}\n")  # written again
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            assert not pending.done(), "news of files beside the missing folder"
            assert made == 1, f"the watch was made {made} times for one missing folder"
            folder.mkdir()
            await asyncio.wait_for(pending, 5)
        finally:
            stop.set()
            await gen.aclose()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(folder_watch, "FolderWatch", counted)
        asyncio.run(scenario())
