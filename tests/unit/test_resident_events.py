"""An events client that stops reading never holds the service: it is cut off, and the service ends at once.

The service's HTTP server for real, on its Unix socket (no tmux: the
service's server has none to watch here, and its tmux watch is given a pid
that always answers); a client asks for ``/v1/events`` and never reads while
a few thousand large changes are told (a recorded pane replayed, as the
demos do).  Before, a write to it waited forever and the end waited 60 s
twice for its connection (measured: 122 s).
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time
import uuid

from headspace_tui.model import AgentState, Observation, Prompt
from headspace_tui.resident.deadline import DEADLINE
from headspace_tui.resident.server import Resident, Watched
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.resident_place import make_folder, place_of
from headspace_tui.tmux.server import PaneRecord, TmuxServer

RECORD = PaneRecord(
    pane_id="%1", session_id="$0", session_name="s", window_index=0, pane_index=0, target="s:0.0",
    pid=100, current_command="claude", cwd="/w/" + "x" * 4000, width=80, height=24, alternate_on=False, in_mode=False, title="", dead=False, dead_status=None,
)  # fmt: skip


def test_a_client_that_stops_reading_is_cut_off_and_the_service_still_ends_at_once(short_tmp):
    # A runtime folder as short as a real one: under xdist pytest's tmp_path made the socket's path too long to bind.
    place = place_of("S:/nowhere/test", {"XDG_RUNTIME_DIR": str(short_tmp)})
    make_folder(place)
    service = Service.build(TmuxServer(socket_name=f"hs-unused-{uuid.uuid4().hex[:8]}"), live=False, journal=Journal(None), hooks=False)
    resident = Resident(service, Watched("S:/nowhere/test", "no tmux (a test)", lambda: 1), place)

    async def main() -> float:
        task = asyncio.create_task(resident.run())
        while not place.socket.exists():
            if task.done():  # the service could not start (its error is raised here, not waited on for ever)
                await task
                raise AssertionError("the service ended before it listened")
            await asyncio.sleep(0.02)
        stalled = socket.socket(socket.AF_UNIX)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(str(place.socket))
        stalled.sendall(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")  # and never reads
        try:
            for n in range(3000):
                detail = f"touch file-{n}"
                observation = Observation(AgentState.PERMISSION, prompt=Prompt("permission", title="Do you want to proceed?", tool="Bash", detail=detail, fingerprint=detail))
                service.replay(dataclasses.replace(RECORD, pane_id=f"%{n % 50 + 1}"), "", observation, time.time(), "claude")
                if n % 100 == 0:
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)
            asked = time.monotonic()
            resident.end("the test is over")
            why = await asyncio.wait_for(task, 30)
            assert why == "the test is over"
            return time.monotonic() - asked
        finally:
            stalled.close()

    took = asyncio.run(main())
    # At once: not held by the stalled client until DEADLINE (5 s) ends the process.  About 0.3 s here, so half the
    # deadline is a bound a 5x slower machine meets (1.0 s was not).
    assert took < DEADLINE / 2, f"the service took {took:.1f}s to end with a client that stopped reading"
    assert not place.socket.exists()
