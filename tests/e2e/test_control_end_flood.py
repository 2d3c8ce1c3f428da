"""headspace's control client ends without taking the user's tmux server with it, while a pane floods.

tmux (3.3a to 3.7 at least) exits with ``fatal: not enough data`` when, in
one turn of its loop, a control client's input ends while output is queued
for it, a busy pane writes more and the client's output has room
(control_pipe.ProcessPipe tells the whole of it), so headspace's own
clients are cut off rather than detached.  Here the real client
(``ControlClient``, both ways it attaches: a ``tmux -C`` child and the
direct attach, and a ``tmux -C`` child that detaches, as ``ssh … tmux -C``
must, after pausing its panes) follows a session whose pane runs ``yes``, falls behind
(its output handler is slow, as a loaded machine makes it; its own flood
guard is off, as it would pause the pane), and is ended, again and again:
the server lives through every end and no client of ours is left attached.
The crash itself needs its three events in one turn of tmux's loop, which
this does not force (tests/unit/test_probe_tmux_end.py met it about one
run in 25 under load, before the fix); this proves the cut-off ending is
whole under a flood: nothing left attached, nothing left waiting.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from headspace_tui.tmux import control
from headspace_tui.tmux.control import ControlClient
from headspace_tui.tmux.server import TmuxServer

pytestmark = pytest.mark.e2e
ROUNDS = 12


class DetachingServer(TmuxServer):
    """A local server whose ``tmux -C`` clients detach, as ``ssh … tmux -C`` ones must (their panes paused first)."""

    local_child = False


@pytest.mark.parametrize("attach", ["client", "direct", "detach"])
def test_closing_a_client_behind_a_flooding_pane_leaves_the_server_running(private_tmux, tmp_path, monkeypatch, attach):
    monkeypatch.setenv("HEADSPACE_TMUX_ATTACH", "client" if attach == "detach" else attach)
    monkeypatch.setattr(control, "FLOOD_BYTES", 1 << 40)  # its own flood guard off: it would pause the pane, and tmux drops a paused pane's queue
    pane = private_tmux.new_session("flood", width=120, height=40, cwd=str(tmp_path), command=["yes", "a pane that floods its control clients"])
    server = (DetachingServer if attach == "detach" else TmuxServer)(socket_name=private_tmux.name)
    session_id = server.pane(pane).session_id
    server_pid = int(private_tmux.run("display-message", "-p", "#{pid}").strip())

    def behind(_pane: str, _size: int) -> None:
        time.sleep(0.002)  # a handler slower than the flood: tmux queues output for this client

    async def one_round() -> int:
        client = ControlClient(server, session_id, on_output=behind)
        await client.start()
        await asyncio.sleep(0.4)  # output queued behind the reader
        await client.close()
        return len(private_tmux.run("list-clients").splitlines())

    for round_ in range(ROUNDS):
        left = asyncio.run(one_round())
        assert private_tmux.run("display-message", "-p", "#{pid}").strip() == str(server_pid), f"the tmux server went at round {round_}"
        assert left == 0, f"round {round_}: {left} control client(s) of ours still attached"
