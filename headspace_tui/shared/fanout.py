"""One stream's followers, by one policy: the service's two event streams and the phone page's.

Each follower is a bounded queue of items already encoded (each item is
encoded once, for every follower).  One that falls ``limit`` behind is cut
off, never waited on: it reconnects and reads the whole state again.  At
the end each follower gets its last word, where there is one, then the end
itself (``None``), room made for both by dropping its oldest items.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

Follower = asyncio.Queue[bytes | None]


def sse(item: dict[str, Any]) -> bytes:
    """``item`` as one Server-Sent Event, encoded once for every follower that gets it."""
    return b"data: " + json.dumps(item).encode() + b"\n\n"


class Fanout:
    """Followers of one stream, each named (a client's id, or "")."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit = limit  # items a follower may fall behind by before it is cut off
        self.what = what  # who follows, for the log ("an events client", "a page")
        self._followers: dict[Follower, str] = {}

    def __bool__(self) -> bool:
        return bool(self._followers)

    def __len__(self) -> int:
        return len(self._followers)

    def follow(self, name: str = "") -> Follower:
        """A new follower's queue; it reads until ``None``."""
        queue: Follower = asyncio.Queue(self.limit)
        self._followers[queue] = name
        return queue

    def leave(self, queue: Follower) -> None:
        self._followers.pop(queue, None)

    def follows(self, name: str) -> bool:
        """Whether a follower of that name still reads (a page may have two streams open a moment)."""
        return name in self._followers.values()

    def items(self) -> Iterator[tuple[Follower, str]]:
        """Each follower with its name, as they are now (one may be cut off while they are handed out)."""
        return iter(list(self._followers.items()))

    def put(self, *data: bytes) -> None:
        """``data`` to every follower, in order."""
        for queue in list(self._followers):
            self.put_to(queue, *data)

    def put_to(self, queue: Follower, *data: bytes) -> None:
        """``data`` to one follower; one that has no room left is cut off."""
        if queue not in self._followers:
            return
        try:
            for item in data:
                queue.put_nowait(item)
        except asyncio.QueueFull:
            log.info("%s fell %d behind: cut off (it reconnects)", self.what, self.limit)
            self._followers.pop(queue, None)
            _end(queue)

    def end(self, last: bytes | None = None) -> None:
        """Every follower's end: ``last`` first where given (the oldest items make room), then ``None``."""
        for queue in list(self._followers):
            if last is not None:
                while queue.maxsize and queue.qsize() > queue.maxsize - 2:
                    queue.get_nowait()
                queue.put_nowait(last)
            _end(queue)


def _end(queue: Follower) -> None:
    """The end of ``queue``'s stream, after what it holds (the oldest item goes only when there is no room)."""
    if queue.full():
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
    queue.put_nowait(None)
