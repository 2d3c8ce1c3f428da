"""The activity watch of the sessions beyond the cap: a window whose stamp goes back (tmux's clock set back) is still seen.

tmux stamps a window's activity with its wall clock, in whole seconds;
the watch lists only windows stamped since the newest stamp it saw, so a
clock set back would hide every pane behind an old "newest" for good.
Every FULL_LOOK_EVERY looks it lists them all and takes the newest from
that listing alone.  No tmux can have its clock set back for a test:
here the listing comes from a stand-in for a control client that prints
what tmux would (``list-panes -f`` applied to scripted stamps).
"""

from __future__ import annotations

import asyncio
import time

from headspace_tui.service.watching import sessions as sessions_module
from headspace_tui.service.watching.pane_watch import PaneWatch
from headspace_tui.service.watching.sessions import FULL_LOOK_EVERY, Sessions
from headspace_tui.service.watching.supervise import Supervisor
from headspace_tui.tmux.control import ControlError
from headspace_tui.tmux.server import PaneRecord, TmuxServer

RECORD = PaneRecord("%1", "$1", "far", 0, 0, "far:0.0", 10, "claude", "/w", 80, 24, False, False, "", False, None)


class ScriptedClient:
    """What a control client would answer to the watch's listing, for the stamps set here."""

    closed = False
    session_id = "$9"

    def __init__(self) -> None:
        self.stamps = {"%1": 1_000_000}
        self.fail_next = False

    async def command(self, *args: str, timeout: float = 5.0) -> list[str]:
        if self.fail_next:
            self.fail_next = False
            raise ControlError("control client went away")
        since = int(args[args.index("-f") + 1].rsplit(",", 1)[1].rstrip("}"))
        return [f"{at} {pane}" for pane, at in self.stamps.items() if at >= since]


def watching(client: ScriptedClient, told: list[int]) -> tuple[Sessions, asyncio.Task]:
    """A server's sessions with ``%1`` beyond the cap, its activity watch running through ``client``; each read of it noted in ``told`` (the look it came at)."""
    sessions = Sessions(TmuxServer(socket_name="unused"), Supervisor(), {"%1": PaneWatch(RECORD, "k")}, read=None, request_discovery=lambda: None, state_of=lambda pane: None, clock=time.monotonic)  # type: ignore[arg-type]
    sessions.clients["$9"] = client  # type: ignore[assignment]
    sessions._all_panes = {"%1": RECORD}
    sessions._beyond.add("$1")
    sessions._pane_output = lambda pane_id, size=1 << 20: told.append(sessions.activity_looks)  # type: ignore[method-assign]
    return sessions, asyncio.create_task(sessions._activity_loop())


def test_a_stamp_set_back_is_seen_within_a_whole_look(monkeypatch):
    monkeypatch.setattr(sessions_module, "ACTIVITY_EVERY", 0.001)
    client = ScriptedClient()
    told: list[int] = []

    async def scenario() -> tuple[int, int]:
        sessions, watch = watching(client, told)
        try:
            while sessions.activity_looks < 5:
                await asyncio.sleep(0.001)
            settled = len(told)  # the first listing's and the look after it
            client.stamps["%1"] = 999_000  # it wrote, stamped by a clock set back
            set_back_at = sessions.activity_looks
            while len(told) == settled and sessions.activity_looks < set_back_at + 200:  # more than any sane FULL_LOOK_EVERY
                await asyncio.sleep(0.001)
            return settled, (told[-1] - set_back_at if len(told) > settled else -1)
        finally:
            sessions._beyond.clear()
            await asyncio.wait_for(watch, 5)

    settled, after = asyncio.run(scenario())
    assert settled == 2, f"the first listing reads the pane and the look after it once more, then nothing: {told}"
    assert 0 < after <= FULL_LOOK_EVERY + 1, f"the pane stamped back was read {after} looks later"


def test_a_listing_that_fails_loses_no_look_once_more(monkeypatch):
    """A stamp moved (read), then the next listing fails: the one after still reads the pane once more, for output later in that second."""
    monkeypatch.setattr(sessions_module, "ACTIVITY_EVERY", 0.001)
    client = ScriptedClient()
    told: list[int] = []

    async def scenario() -> list[int]:
        sessions, watch = watching(client, told)
        try:
            while sessions.activity_looks < 5:
                await asyncio.sleep(0.001)
            before = len(told)
            client.stamps["%1"] += 1  # it wrote: the next listing reads it...
            moved_at = sessions.activity_looks
            while sessions.activity_looks <= moved_at:
                await asyncio.sleep(0.001)
            client.fail_next = True  # ...the one after fails...
            while sessions.activity_looks <= moved_at + 2:
                await asyncio.sleep(0.001)
            return told[before:]
        finally:
            sessions._beyond.clear()
            await asyncio.wait_for(watch, 5)

    reads = asyncio.run(scenario())
    assert len(reads) == 2, f"the moved stamp is read, and once more at the listing after the failed one: {reads}"
