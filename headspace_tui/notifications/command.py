"""``notify_command``: a program of the user's choice run per notification (ntfy, a webhook, a chat).

The config gives an argv list, run as is, without a shell: nothing of an
agent's name or prompt can become a word of the command line.  The text is
handed over in environment variables instead (already one line, control
characters shown as placeholders):

* ``HEADSPACE_TITLE``: "api:0.1 (shop) needs permission", "3 agents need you";
* ``HEADSPACE_BODY``: what it waits for ("Bash: npm test"), or who;
* ``HEADSPACE_TEXT``: both in one line, as OSC 9 shows them;
* ``HEADSPACE_AGENTS``: a JSON list, one ``{"name", "state", "what"}`` per agent
  (``"blocked": true`` for a call auto mode blocked: ``what`` says which);
* ``HEADSPACE_URL``: the web page of the (first) agent when ``headspace web``
  serves it (no token in it: a phone that opened the page once has the
  cookie), else empty; a link that opens the page, never one that answers.

It runs in a thread of its own with a timeout (the program, and whatever it
started, is killed after it), stdin from /dev/null, output discarded but
for the end of stderr, kept for the log.  At most one runs at a time: a
notification due while one runs waits, and several that wait are sent as
one (the agents of all of them), so a slow or hanging program never piles
up processes.  A failure is logged; the first one is also said to the user,
once per run (``problem``).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from .decide import Notification, notification

COMMAND_TIMEOUT = 10.0  # seconds a notify_command may run
STDERR_KEPT = 300  # characters of its stderr kept for the log

log = logging.getLogger(__name__)


def command_env(note: Notification, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with the notification's ``HEADSPACE_*`` variables."""
    agents = [{"name": a.name, "state": a.state.value, "what": a.what, **({"blocked": True} if a.blocked else {})} for a in note.alerts]
    return {
        **base,
        "HEADSPACE_TITLE": note.title,
        "HEADSPACE_BODY": note.body,
        "HEADSPACE_TEXT": f"{note.title}: {note.body}" if note.body else note.title,
        "HEADSPACE_AGENTS": json.dumps(agents, ensure_ascii=False),
        "HEADSPACE_URL": note.link,
    }


def run_command(argv: Sequence[str], note: Notification, *, timeout: float = COMMAND_TIMEOUT, env: Mapping[str, str] | None = None) -> str:
    """Run ``argv`` for ``note`` and wait (up to ``timeout``); a problem in one line, or "".

    The program runs in a session of its own, so that on timeout it and
    whatever it started (a shell script's curl) are killed together.
    """
    words = [os.path.expanduser(argv[0]), *argv[1:]]
    try:
        child = subprocess.Popen(
            words,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=command_env(note, os.environ if env is None else env),
            start_new_session=True,
        )
    except OSError as exc:
        return f"notify_command {argv[0]!r} could not start ({exc.strerror or exc})"
    try:
        _, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            child.kill()
        try:
            child.communicate(timeout=2)
        except subprocess.TimeoutExpired:  # something it started left its own session holding stderr
            pass
        return f"notify_command {argv[0]!r} ran longer than {timeout:g}s and was stopped"
    if child.returncode != 0:
        said = err.decode("utf-8", "replace").strip()[-STDERR_KEPT:]
        return f"notify_command {argv[0]!r} failed (exit status {child.returncode}{': ' + said if said else ''})"
    return ""


class CommandRunner:
    """Runs ``notify_command`` per notification, one at a time, off the caller's thread."""

    def __init__(self, argv: Sequence[str], problem: Callable[[str], None], *, timeout: float = COMMAND_TIMEOUT) -> None:
        self.argv = tuple(argv)
        self.problem = problem  # told the first failure (from the runner's thread)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._waiting: Notification | None = None
        self._thread: threading.Thread | None = None
        self._told = False
        self.runs = 0  # how many times the program ran (for tests and the log)

    def submit(self, note: Notification) -> None:
        """Run the command for ``note`` now, or after the run in progress (with whatever else waits)."""
        with self._lock:
            if self._thread is not None:
                self._waiting = note if self._waiting is None else merged(self._waiting, note)
                return
            self._thread = threading.Thread(target=self._run, args=(note,), name="notify_command", daemon=True)
            self._thread.start()

    def _run(self, note: Notification | None) -> None:
        while note is not None:
            try:
                problem = run_command(self.argv, note, timeout=self.timeout)
            except Exception as exc:  # never the end of the runner
                log.exception("notify_command failed")
                problem = f"notify_command failed ({type(exc).__name__})"
            self.runs += 1
            if problem:
                log.warning("%s", problem)
                if not self._told:
                    self._told = True
                    self.problem(f"{problem} (said once; later failures are in the log)")
            with self._lock:
                note, self._waiting = self._waiting, None
                if note is None:
                    self._thread = None

    def idle(self, timeout: float) -> bool:
        """Wait until nothing runs or waits (for tests and the end of the app); whether it is so."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            return self._thread is None


def merged(first: Notification, second: Notification) -> Notification:
    """One notification for the agents of both (each agent once, its latest wait)."""
    alerts = {a.key: a for a in (*first.alerts, *second.alerts)}
    if not alerts:
        return second
    link = first.link or second.link  # the page of the first agent, as the body says
    return replace(notification(tuple(alerts.values())), link=link)
