"""Where an agent's work tree is snapshotted and diffed: this machine (``LocalTrees``), or a host's probe (remote/host.py ``RemoteTrees``).

service/watching/work_changes.py keeps the baselines and asks one of these; both
raise ``ChangeError`` with one line for people.  git runs off the event
loop, and here at most ``GITS_AT_ONCE`` at a time.
"""

from __future__ import annotations

import asyncio

from .model import Diff

GITS_AT_ONCE = 2  # git processes for snapshots and diffs at a time, on this machine


class ChangeError(Exception):
    """No diff can be made: not a git work tree, git failed, the host is out of reach (the message says which).

    ``lasting``: it will not change by asking again (no work tree there, no
    git); a failure that may pass (a file git could not read, a timeout, a
    host out of reach) is not.
    """

    LASTING = ("not a git repository", "git is not installed", "the agent's folder is gone")

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lasting = any(words in message for words in self.LASTING)


class Trees:
    """Where an agent's host takes snapshots and diffs: this machine (``LocalTrees``) or a probe's (``remote.host``)."""

    async def snapshot(self, folder: str) -> str:  # pragma: no cover - protocol
        raise NotImplementedError

    async def diff(self, folder: str, old: str, new: str) -> Diff:  # pragma: no cover - protocol
        raise NotImplementedError


class LocalTrees(Trees):
    """git here, in threads, at most ``GITS_AT_ONCE`` at a time (a hundred agents found at start wait their turn)."""

    pruned = False  # the stores no snapshot was written to for a week are removed once per process (snapshot.prune)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore = asyncio.Semaphore(GITS_AT_ONCE)

    @property
    def _turns(self) -> asyncio.Semaphore:
        """The pace of this event loop (a service built in one test's loop and run in another gets its own)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._semaphore = loop, asyncio.Semaphore(GITS_AT_ONCE)
        return self._semaphore

    async def snapshot(self, folder: str) -> str:
        from .snapshot import NotARepository, prune, snapshot

        async with self._turns:
            if not LocalTrees.pruned:
                LocalTrees.pruned = True
                await asyncio.to_thread(prune)
            try:
                return (await asyncio.to_thread(snapshot, folder)).tree
            except (NotARepository, RuntimeError, OSError) as exc:
                raise ChangeError(str(exc)) from None

    async def diff(self, folder: str, old: str, new: str) -> Diff:
        from .snapshot import NotARepository, diff_of

        async with self._turns:
            try:
                return await asyncio.to_thread(diff_of, folder, old, new)
            except (NotARepository, RuntimeError, OSError) as exc:
                raise ChangeError(str(exc)) from None
