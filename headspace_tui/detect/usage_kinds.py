"""Which families keep a session record of their own tokens, for the probe on an SSH host (detect/session_usage.py).

Each family declares its own (``USAGE``, in its folder) and its record carries it (``Family.usage``):
here the service asks the registry (``families.usage_kinds()``).  The probe carries no registry (its
modules are the probe-safe readers alone: remote/bundle.py), so it is given this list of the built-in
families' records.  Claude is not here: its counts come with the transcript already followed.
"""

from __future__ import annotations

from .codex import rollout
from .copilot import records as copilot_records
from .gemini import chats
from .opencode import records
from .qwen import records as qwen_records
from .session_usage import Kind

KINDS: dict[str, Kind] = {kind.family: kind for kind in (rollout.USAGE, chats.USAGE, records.USAGE, copilot_records.USAGE, qwen_records.USAGE)}
