"""A conversation's turns, as the core reads them from any family's transcript.

The journal, the evidence of an answer and the remote probe's replies speak
of these; a family that keeps transcripts (``Family.transcripts``) parses
its own lines into them (Claude Code: ``detect/claude/transcript.py``, whose
facts the fields below were first measured on).  Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Turn:
    """One conversational line of a transcript.

    ``role`` is ``user`` (typed by the user), ``agent`` (one block of a reply)
    or ``tool_result`` (a user line that only carries tool results: the agent
    answering itself, never the user speaking; ``text`` joins the results),
    or ``mode`` (the permission mode the agent says it runs in, in ``text``:
    Claude's ``permission-mode`` line, written each turn).
    """

    role: str
    text: str = ""
    tool_uses: tuple[tuple[str, dict[str, Any]], ...] = field(default=(), hash=False)
    stop_reason: str = ""  # agent lines: end_turn, tool_use, max_tokens, ...
    uuid: str = ""
    timestamp: str = ""  # ISO 8601, as the agent wrote it
    message_id: str = ""  # agent lines: shared by the blocks of one reply
    is_error: bool = False  # tool_result lines: a failed or rejected tool call
    tool_use_ids: tuple[str, ...] = field(default=(), hash=False)  # agent lines: the ids of ``tool_uses``, in order
    outcomes: tuple[ToolOutcome, ...] = field(default=(), hash=False)  # tool_result lines: who decided each call
    # Agent lines: the model, and the reply's tokens (input, output, cache read, cache write) as the API
    # counted them; every block of one reply (one ``message_id``) repeats its reply's counts.
    model: str = ""
    usage: tuple[int, ...] = field(default=(), hash=False)
    sidechain: bool = False  # a subagent's line: its tokens cost, but are not the main context
    cwd: str = ""  # agent lines: the folder Claude was in as it wrote the line (its shell keeps a ``cd``)


@dataclass(frozen=True)
class ToolOutcome:
    """The agent's own word on who let a tool call run or refused it.

    Claude Code's (2.1.330, measured live): a tool_result line carries ``permissionDecision``: ``source`` ``hook``
    when a hook decided (its ``reasonCode`` names the event), ``user_*`` when
    a key in the dialog did, another source when a rule or mode did and no
    dialog was shown.  A refusal that stops the turn ("No", Esc, or a hook's
    deny with ``interrupt``) has no ``permissionDecision``, only
    ``toolDenialKind: user-rejected``, byte for byte the same for a key and a
    hook: ``by`` is then "" (not known).
    """

    tool_use_id: str
    by: str  # "hook", "dialog", "rule" or "" (not known)
    accepted: bool | None  # None: not said
    reason: str = ""  # the agent's words for it, as written ("hook:PermissionRequest", "user-rejected", ...)
    said: str = ""  # a refusal by a check of the mode: the check's own reason ("Sends data out to an outside host")
