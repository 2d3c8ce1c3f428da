"""The command/turn state machine of the PRD, its intent detector and its event log.

Why a package of its own: the state machine is the behavioural core (is this
agent idle, working, or waiting for me?) and must stay pure and testable
without tmux, Claude or a terminal.  ``intent`` and ``machine`` do no I/O at
all; ``eventlog`` is the one place that touches a disk, and it only stores what
the machine returns.
"""

from __future__ import annotations

from .eventlog import EventLog, EventLogError, StoredEvent, default_path
from .intent import IntentResult, TurnIntent, detect_intent
from .machine import (
    TRANSITIONS,
    Actor,
    AgentCommands,
    Command,
    CommandState,
    Turn,
    Validation,
    apply_turn,
    apply_turns,
    end_session,
    validate,
)

__all__ = [
    "TRANSITIONS",
    "Actor",
    "AgentCommands",
    "Command",
    "CommandState",
    "EventLog",
    "EventLogError",
    "IntentResult",
    "StoredEvent",
    "Turn",
    "TurnIntent",
    "Validation",
    "apply_turn",
    "apply_turns",
    "default_path",
    "detect_intent",
    "end_session",
    "validate",
]
