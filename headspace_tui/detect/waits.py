"""When a wait on the user is a new request: the one rule the clock and the notifications share.

A permission or a plan is one request: another command to approve, another
plan, is asked anew, also when the working moment between the two was never
seen (an answer the next dialog follows within one read).  So a prompt
there whose fingerprint differs from the one the wait began with is a new
wait: its clock restarts (detect/clock.py) and it rings again
(notifications/decide.py).  A question's next page, an ``input`` whose text
is re-read and an error whose retry count ticks are not: the user is already
there, or the agent asks nothing new.  A prompt read without its details
(fingerprint "": a status file or hook said "permission" before the screen
showed the menu) is the same wait as the menu that follows.

Pure: states and fingerprints in, a yes or no out.
"""

from __future__ import annotations

from ..model import AgentState

# Waits whose every new prompt (another fingerprint) is a new request to the user.
NEW_REQUEST = frozenset({AgentState.PERMISSION, AgentState.PLAN})


def new_request(state: AgentState, began_with: str, shown: str) -> bool:
    """Whether ``shown`` (a fingerprint, "" when unread) in ``state`` asks anew, in a wait that began with ``began_with``."""
    return state in NEW_REQUEST and bool(shown) and bool(began_with) and shown != began_with
