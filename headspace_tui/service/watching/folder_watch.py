"""Watching a folder here: the status files of a Claude config dir, and the hook spool.

Both are small folders of small files that other programs write whole.
``folder_changes`` is the one way we wait on such a folder: inotify, read
on the loop itself (shared/inotify.py: no thread, nothing woken while
nothing changes), for prompt news, and a look at the latest every
``every`` seconds whatever inotify says, so a missed notification or no
inotify at all (limits, exotic file systems) only delays the news.  A folder that is not there yet is looked
for at that pace; one that goes away is news at once.

The readers themselves (``detect.registry.read_statuses``,
``hooks.spool.SpoolReader``) are pure and standard-library-only: the remote
probe runs them too, with its own plain polling, so this module is not in
its bundle.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from ...detect.claude.status_files import ClaudeStatus, read_statuses
from ...hooks.spool import HookEvent, SpoolReader, check_spool, ensure_spool
from ...shared.inotify import PARENT_MASK, FolderWatch, Unavailable
from ...shared.safe_files import Unchanged

log = logging.getLogger(__name__)

# While inotify watches a folder its news is the signal; a look this often all the same is the safety net
# (a change made where inotify cannot see it, a folder on a network file system). Not every second: at rest
# nothing of ours may wake that often for nothing.
WATCHED_LOOK = 30.0


async def _wait(stop_event: asyncio.Event | None, seconds: float) -> bool:
    """Sleep ``seconds``, or less if ``stop_event`` is set; True when asked to stop."""
    if stop_event is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(stop_event.wait(), seconds)
    except TimeoutError:
        pass
    return stop_event.is_set()


async def _until_made(folder: Path, stop_event: asyncio.Event | None, every: float) -> bool:
    """Wait until ``folder``, which does not exist, may have been made; True when asked to stop.

    Told by inotify on its nearest folder that does exist, and only of the
    entry on the way to it being made or moved in (files written beside it,
    a busy ``~/.claude`` beside a missing sessions folder, wake nothing), with a
    look every WATCHED_LOOK s all the same; every ``every`` s where inotify
    cannot watch.  A folder that never comes (Claude's sessions folder on a
    machine that never ran it) then costs nothing at rest.
    """
    parent = folder.parent
    while not parent.is_dir() and parent != parent.parent:
        parent = parent.parent
    try:
        watch = FolderWatch(str(parent), PARENT_MASK)
    except Unavailable:
        return await _wait(stop_event, every)
    toward = folder.relative_to(parent).parts[:1]  # the entry that leads to it
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(every, WATCHED_LOOK)
    try:
        while toward and not folder.is_dir():  # made between the look and the watch taking hold: looked at once
            left = deadline - loop.time()
            if left <= 0 or not await _changed(watch, stop_event, left):
                break
            names = watch.take()
            if watch.gone or "" in names or toward[0] in names:
                break
    finally:
        watch.close()
    return stop_event is not None and stop_event.is_set()


async def _changed(watch: FolderWatch, stop_event: asyncio.Event | None, seconds: float) -> bool:
    """Wait until ``watch`` has news (True), ``seconds`` pass or ``stop_event`` is set (False)."""
    waits = [asyncio.ensure_future(watch.changed.wait())]
    if stop_event is not None:
        waits.append(asyncio.ensure_future(stop_event.wait()))
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
    return watch.changed.is_set()


async def folder_changes(
    folder: Path,
    *,
    every: float,
    stop_event: asyncio.Event | None = None,
    only: Callable[[str], bool] | None = None,
    debounce: int = 50,
    step: int = 20,
) -> AsyncIterator[None]:
    """Yield whenever ``folder``'s files may have changed, and at the latest every ``every`` seconds (WATCHED_LOOK while inotify watches it).

    A burst of changes is one yield: once ``step`` ms pass without another,
    or ``debounce`` ms after its first.  ``only`` keeps the paths worth
    waking for (the folder itself always counts, so its removal is seen).
    Ends when ``stop_event`` is set; set it (rather than cancelling the
    task) to stop promptly.
    """
    folder = Path(folder)
    name = os.path.abspath(folder)
    loop = asyncio.get_running_loop()

    def stopped() -> bool:
        return stop_event is not None and stop_event.is_set()

    inotify = True
    while not stopped():
        if not (inotify and folder.is_dir()):
            if await (_until_made(folder, stop_event, every) if inotify else _wait(stop_event, every)):
                return
            yield
            continue
        try:
            watch = FolderWatch(name)
        except Unavailable as exc:
            if folder.is_dir():
                log.info("no inotify for %s (%s): looking every %gs", folder, exc, every)
                inotify = False
            continue
        try:
            yield  # the folder may have been filled between the caller's last read and the watch taking hold
            while not stopped():
                if not await _changed(watch, stop_event, max(every, WATCHED_LOOK)):
                    if not stopped():
                        yield  # the look at the latest every ``every`` seconds
                    continue
                deadline = loop.time() + debounce / 1000
                while not watch.gone:  # the rest of the burst
                    watch.changed.clear()
                    left = min(step / 1000, deadline - loop.time())
                    if left <= 0 or not await _changed(watch, stop_event, left):
                        break
                names = watch.take()
                if watch.gone or not folder.is_dir():
                    yield  # gone: news at once, then looked for again
                    break
                if only is None or "" in names or any(only(os.path.join(name, changed)) for changed in names):
                    yield
        finally:
            watch.close()


async def watch_statuses(folder: Path, stop_event: asyncio.Event | None = None, *, poll: float = 1.0) -> AsyncIterator[dict[int, ClaudeStatus]]:
    """Yield ``read_statuses(folder)`` now, then again whenever it changes (a reading equal to the last is not yielded)."""
    folder = Path(folder)
    cache: Unchanged[ClaudeStatus | None] = Unchanged()  # a file is read again only when it changed
    last = read_statuses(folder, cache)
    yield last
    async for _ in folder_changes(folder, every=poll, stop_event=stop_event, only=lambda path: path.endswith(".json"), debounce=400, step=50):
        current = read_statuses(folder, cache)
        if current != last:
            last = current
            yield last


async def watch_spool(folder: Path, *, since_name: str | None = None, rescan: float = 1.0, delete_older_than: float | None = 600.0, create: bool = True) -> AsyncIterator[HookEvent]:
    """Yield hook events as their files appear in ``folder`` (created if missing, refused if not private).

    Files already there come first (those after ``since_name``); a hook that
    finished late is still reported, after newer events (a consumer orders
    by ``ts``).  ``create=False`` (an agent's spool under another
    XDG_RUNTIME_DIR): nothing is made there; the folder is looked for every
    ``rescan`` seconds until its first hook makes it.
    """
    if create:
        ensure_spool(folder)
    else:
        while not Path(folder).is_dir():
            await asyncio.sleep(rescan)
        check_spool(folder)
    reader = SpoolReader(Path(folder), since_name=since_name, delete_older_than=delete_older_than)
    for event in reader.fresh():
        yield event
    async for _ in folder_changes(reader.folder, every=rescan):
        for event in reader.fresh():
            yield event
