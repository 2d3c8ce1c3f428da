"""``headspace status`` with no service: the service's own look, run in the command's process, that changes nothing.

The command never keeps a second engine: with no service for its view it
builds the same service for one look and asks it for its rows, as a client
asks a resident one.  That look must be harmless to everything it sees, as
a one-shot command always was:

* no control client is attached to the user's tmux server for it (a client
  attached and dropped at once is what tmux must be spared);
* no rule answers for the user, even one that allows the very command the
  dialog shows (the look holds nothing, answers nothing, rings nothing);
* the event log is read (a state is dated as the table dates it) and never
  written;
* no resident service is left behind.

And with a service of this view running that does not answer, ``status``
says so in one line: it does not quietly look for itself instead.
Everything here is real: tmux, Claude Code against the scripted API, the
installed ``headspace``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from headspace_tui.shared.resident_place import place_of, read_card
from headspace_tui.state.eventlog import EventLog
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_resident_service import rows, run, started
from tests.e2e.test_rules_live import rules_file, where  # noqa: F401 - the fixture: this test's own config and state folders
from tests.harness import fake_api as api

pytestmark = pytest.mark.e2e

LOOKS = 3  # looks in a row: each has the time a rule would take to answer (a rule by keys looks within 2 s)


class ControlClients:
    """Every control client the server lists while this runs (polled every 20 ms from a thread): the look must add none."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.seen: set[str] = set()
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            listed = subprocess.run(["tmux", "-L", self.server, "list-clients", "-F", "#{client_control_mode} #{client_name}"], capture_output=True, text=True)
            self.seen |= {line.split(" ", 1)[1] for line in listed.stdout.splitlines() if line.startswith("1 ")}
            self.polls += 1
            self._stop.wait(0.02)

    def __enter__(self) -> ControlClients:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def logged(path) -> int:
    with EventLog(path) as log:
        return len(log.query())


def test_a_look_with_no_service_attaches_nothing_answers_nothing_and_writes_nothing(claude_session, private_tmux, where):  # noqa: F811
    tag, config, state = where
    made = f"/tmp/{tag}_look"
    session = claude_session([api.bash(f"touch {made}", "Make one"), api.text("Made one.")], name="looked")  # no hook: a rule would answer by keys
    rules_file(config, f'[[rule]]\nid = "would"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\nshadow = false\n')
    log_path = state / "headspace" / "events.db"
    log_path.parent.mkdir(parents=True)
    EventLog(log_path).close()  # a log from earlier runs: the look reads it
    before = log_path.read_bytes()
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    try:
        session.submit("make one")
        session.wait_for("Do you want to proceed", timeout=30)
        with ControlClients(private_tmux.name) as clients:
            for _ in range(LOOKS):
                (row,) = rows(run("-L", private_tmux.name, "status", "--json"))
                assert row["state"] == "permission" and f"touch {made}" in (row["detail"] or ""), row
        assert clients.polls > LOOKS and clients.seen == set(), clients.seen
        assert read_card(place) is None, "a look leaves no service behind"
        assert "Do you want to proceed" in session.screen() and not os.path.exists(made), "a look answers nothing"
        assert log_path.read_bytes() == before and logged(log_path) == 0, "a look reads the event log and never writes it"
    finally:
        if os.path.exists(made):
            os.unlink(made)


def test_a_service_that_does_not_answer_is_said_in_one_line_and_not_looked_around(claude_session, private_tmux, services):
    claude_session([api.text("Hello.")], name="frozen")  # launched: its input box is up
    card = started(private_tmux.name, services)
    os.kill(card["pid"], signal.SIGSTOP)  # holds its place, answers nothing
    try:
        asked = time.monotonic()
        proc = run("-L", private_tmux.name, "status", "--json")
        took = time.monotonic() - asked
        assert proc.returncode == 1 and proc.stdout == "", proc
        (line,) = proc.stderr.splitlines()
        assert line.startswith("headspace: the headspace service: ") and "Traceback" not in proc.stderr, proc.stderr
        print(f"status said the service did not answer after {took:.1f} s: {line}")
    finally:
        os.kill(card["pid"], signal.SIGCONT)
    (row,) = rows(run("-L", private_tmux.name, "status", "--json"))  # answering again: its rows
    assert row["state"] == "idle", row
