"""Which appearance of a prompt a reading shows: the identity every answer carries, so one answer goes to one request.

A prompt's fingerprint is its words (tool, command, title, options): Claude
asking for ``git push`` twice shows one fingerprint twice.  An answer that
names only the words would approve the second request with a tap meant for
the first (a phone page whose stream froze, a ``send --expect`` written a
minute ago).  So the store gives each *appearance* of a prompt its own
``request`` id, ``<fingerprint>~<appearance>``, and every front end answers
with the id it showed; the answerer refuses any other.

A new appearance begins when

* the prompt's words or state change, including leaving for a state with no
  prompt (working, idle) and coming back: a reading in state ``unknown`` (a
  frame between two drawings) neither ends nor begins one;
* another hook call holds the dialog than the one that held it (each of
  Claude's PermissionRequest calls is one request, whatever its words);
* an answer to it went (keys reached the pane, or the hook took the
  decision) and ended: whatever prompt a capture begun after that shows is
  a new one, even with the same words, because the answer's confirmation
  saw the pane move on (``renew``).  Until it ended, the spent id stays, so
  nothing shown before the answer landed can carry an answer to what comes
  after; and a reading that is not a new capture (a hook's event fused with
  the last screen, a capture begun before the end) keeps it.

A reading with no prompt in the same waiting state (Claude's status file
says "waiting" while a frame between two drawings cannot be read) neither
ends nor begins one, as an ``unknown`` frame does not: an answer in flight
is not refused for a frame nobody saw.

The id's appearance part starts with a random word per store, so an id from
an earlier run of the service never names a prompt of this one.  Pure: no
I/O, no clock.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from ...model import AgentState, Observation

SEP = "~"  # between a request's words (the fingerprint) and its appearance


def words_of(request: str) -> str:
    """The fingerprint part of a request id: the same for every appearance of the same words."""
    return request.partition(SEP)[0]


def is_request(text: str) -> bool:
    """Whether ``text`` names an appearance (``<fingerprint>~<appearance>``), not only a prompt's words."""
    return SEP in text


@dataclass
class _Shown:
    key: tuple[AgentState, str]  # the state and fingerprint of the prompt on display
    request: str
    call: int | None = None  # the hook call that holds this dialog, once one does
    renew: float | None = None  # answered then (its end): a capture begun after it shows a new appearance


class Appearances:
    """Per pane, the current appearance of its prompt and its id."""

    def __init__(self, run: str | None = None) -> None:
        self.run = run if run is not None else secrets.token_hex(3)
        self._count = 0
        self._shown: dict[str, _Shown] = {}

    def _new(self, pane_id: str, key: tuple[AgentState, str]) -> str:
        self._count += 1
        shown = self._shown[pane_id] = _Shown(key, f"{key[1]}{SEP}{self.run}{self._count}")
        return shown.request

    def see(self, pane_id: str, observation: Observation, captured: float | None = None) -> str:
        """The request id of the prompt ``observation`` shows in ``pane_id`` ("" when it shows none).

        ``captured``: when the screen capture it was read from began (None:
        not a new capture, such as a hook's event fused with the last one).
        """
        prompt = observation.prompt
        shown = self._shown.get(pane_id)
        if prompt is None or not prompt.fingerprint:
            unread = observation.state is AgentState.UNKNOWN or (shown is not None and shown.key[0] is observation.state)
            if not unread:
                self._shown.pop(pane_id, None)
            return ""
        key = (observation.state, prompt.fingerprint)
        if shown is None or shown.key != key or (shown.renew is not None and captured is not None and captured > shown.renew):
            return self._new(pane_id, key)
        return shown.request

    def held_by(self, pane_id: str, call: int) -> bool:
        """Hook call ``call`` holds the dialog on display; True when that makes it a new appearance (another call held it)."""
        shown = self._shown.get(pane_id)
        if shown is None or shown.call == call:
            return False
        if shown.call is None:
            shown.call = call
            return False
        self._new(pane_id, shown.key)
        self._shown[pane_id].call = call
        return True

    def renew(self, pane_id: str, request: str, at: float) -> None:
        """An answer to ``request`` went and ended at ``at``: a prompt a capture begun after that shows is a new appearance."""
        shown = self._shown.get(pane_id)
        if shown is not None and shown.request == request:
            shown.renew = at

    def current(self, pane_id: str) -> str:
        shown = self._shown.get(pane_id)
        return shown.request if shown is not None else ""

    def forget(self, pane_id: str) -> None:
        self._shown.pop(pane_id, None)
