"""Input mode's session handle: what a front end holds while the user types into one pane.

A front end never holds the typist's ``InputLink`` (it has the pane I/O and
the send lock in it).  It holds this handle instead, which says only what
input mode does: which pane, send a key, close, wait until typed keys are
sent.  Served over a socket later, each of these is one message; the
link's checks (same pane and process, the agent still in it, not in copy
mode) stay in the service.
"""

from __future__ import annotations

from ..answering.input_link import InputLink
from ..answering.keys import KeyStroke


class InputSession:
    """One input-mode session to one pane, as ``Service.open_input`` hands it out."""

    __slots__ = ("_link",)

    def __init__(self, link: InputLink) -> None:
        self._link = link

    @property
    def pane_id(self) -> str:
        """The pane the keys go to (``%N``), fixed for the session."""
        return self._link.pane_id

    def send(self, stroke: KeyStroke) -> None:
        """Queue one key or literal text; a key input mode does not forward raises ``ValueError``."""
        self._link.send(stroke)

    def close(self) -> None:
        """No more keys are taken; those already typed still go."""
        self._link.close()

    async def wait_sent(self) -> None:
        """Until every key typed so far was sent or refused."""
        await self._link.wait_sent()
