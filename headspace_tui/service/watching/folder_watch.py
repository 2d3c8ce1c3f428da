"""Watching a folder here: the status files of a Claude config dir, and the hook spool.

Both are small folders of small files that other programs write whole.
``folder_changes`` is the one way we wait on such a folder: inotify
(through watchfiles) for prompt news, and a look at the latest every
``every`` seconds whatever inotify says, so a change made before the watch
took hold, a missed notification, or no inotify at all (limits, exotic file
systems) only delays the news.  A folder that is not there yet is looked
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
from typing import Any

from ...detect.claude.status_files import ClaudeStatus, read_statuses
from ...hooks.spool import HookEvent, SpoolReader, check_spool, ensure_spool
from ...shared.safe_files import Unchanged

log = logging.getLogger(__name__)


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


async def folder_changes(
    folder: Path,
    *,
    every: float,
    stop_event: asyncio.Event | None = None,
    only: Callable[[str], bool] | None = None,
    debounce: int = 50,
    step: int = 20,
) -> AsyncIterator[None]:
    """Yield whenever ``folder``'s files may have changed, and at the latest every ``every`` seconds.

    ``only`` keeps the paths worth waking for (the folder itself always
    counts, so its removal is seen).  Ends when ``stop_event`` is set; set it
    (rather than cancelling the task) to stop promptly.
    """
    from watchfiles import awatch

    folder = Path(folder)
    name = os.path.abspath(folder)

    def relevant(change: Any, path: str) -> bool:
        return only is None or only(path) or os.path.abspath(path) == name

    inotify = True
    while stop_event is None or not stop_event.is_set():
        if not (inotify and folder.is_dir()):
            if await _wait(stop_event, every):
                return
            yield
            continue
        yield  # the folder may have been filled between the caller's last read and the watch taking hold
        try:
            async for _changes in awatch(
                folder,
                stop_event=stop_event,
                watch_filter=relevant,
                debounce=debounce,
                step=step,
                rust_timeout=max(int(every * 1000), 50),
                yield_on_timeout=True,  # the look at the latest every ``every`` seconds
                recursive=False,
            ):
                yield
                if not folder.is_dir():
                    break
        except FileNotFoundError:
            pass  # the folder went away under the watcher
        except (OSError, RuntimeError) as exc:
            if folder.is_dir():
                log.info("no inotify for %s (%s): looking every %gs", folder, exc, every)
                inotify = False
        if not folder.is_dir():
            yield  # gone: news at once, then looked for again
        elif inotify and (stop_event is None or not stop_event.is_set()):
            await _wait(stop_event, every)  # the watcher ended unexpectedly: don't spin


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
