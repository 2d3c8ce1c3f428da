"""The one error a front end meets from the service, with its kinds: what a caller may do next depends on which.

``ServiceError``: the service could not carry out a request, or there is
no service to ask (none runs, another version, an answer that is not what
the call declares): one line for the user.  Its kinds: ``Refused`` (it
answered and said no: show what it said), ``Lost`` (the request went and
no answer came back: what it asked may have happened), ``ServerGone`` (no
service can run: its tmux server is gone), ``NotServing`` (no service of
this view runs: none, another version, another config; a command may
look for itself).  Raised by the service's
``Service`` (in process), by the clients of a resident one, and by the
command line's asks alike.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A request the service could not carry out, or no service to ask: one line for the user."""


class Refused(ServiceError):
    """The service answered and said no (its guard refused, the pane has no agent): what it said, to show as it is."""


class Lost(ServiceError):
    """The request went and no answer came back: whatever it asked may have happened."""


class NotServing(ServiceError):
    """No service runs for this view: none holds its place, or the one there is of another version or reads another config."""


class ServerGone(ServiceError):
    """No service can run: its tmux server is gone.  Said in the words the service ends with, so a client that never heard its last word says the same."""

    def __init__(self, where: str) -> None:
        super().__init__(server_gone(where))


def server_gone(where: str) -> str:
    return f"the tmux server ({where}) is gone"
