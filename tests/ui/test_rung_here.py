"""A ring of the service's reaches the app's own terminal only where no client of the rung tmux server shows it.

The service's ringer writes to every client of the tmux server it watches
and tells each front end a ``Rung`` (through the same stream of JSON a
resident service's client reads).  The app then says it on its own
terminal when that terminal is none of those clients: outside tmux (the
bare OSC and the bell), or in a pane of another tmux server (wrapped for
passthrough); inside a pane of the rung server, or in its popup, it writes
nothing (the ringer's write reached that client already).  The words are
made safe again on arrival: a control character in them never reaches the
terminal.
"""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.events import Rung
from tests.ui.apps import demo_app, service_of, settle

SERVER = "/tmp/tmux-1000/work"


@pytest.mark.parametrize(
    ("tmux", "pane", "said"),
    [
        (None, None, "bare"),
        (f"{SERVER},123,0", "%4", ""),  # a pane of the rung server
        (f"{SERVER},123,0", None, ""),  # its popup
        ("/tmp/tmux-1000/other,9,0", "%2", "wrapped"),  # a pane of another server
    ],
    ids=["outside-tmux", "pane-of-rung-server", "popup", "pane-of-another-server"],
)
def test_a_ring_is_said_on_the_apps_terminal_only_where_no_client_of_the_rung_server_shows_it(tmux, pane, said, monkeypatch):
    for name, value in (("TMUX", tmux), ("TMUX_PANE", pane)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)

    async def scenario() -> list[str]:
        app = demo_app()
        written: list[str] = []
        app._write_terminal = written.append  # type: ignore[method-assign]  # what would reach the user's terminal
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)  # type: ignore[attr-defined]
            service_of(app).tell(Rung("api:0.0 (api) needs permission", "Bash: rm -rf build\x1b]0;owned\x07", "", SERVER))
            await settle(pilot)
        return written

    written = asyncio.run(scenario())
    if not said:
        assert written == []
        return
    (text,) = written
    assert "rm -rf build" in text and "owned" in text and "\x1b]0;" not in text, repr(text)  # the words, with no sequence of their own
    if said == "bare":
        assert text.startswith("\x1b]9;api:0.0 (api) needs permission: ") and text.endswith("\x07"), repr(text)
    else:
        assert text.startswith("\x1bPtmux;\x1b\x1b]9;") and text.endswith("\x1b\\\x07"), repr(text)
