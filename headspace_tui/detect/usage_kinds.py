"""Which families keep a session record of their own tokens, and how each agent's is found (detect/session_usage.py).

Claude is not here: its counts come with the transcript already followed.
Imported by the probe on an SSH host too: only probe-safe modules.
"""

from __future__ import annotations

from .codex import process as codex_process
from .codex import rollout
from .gemini import chats
from .gemini import process as gemini_process
from .opencode import process as opencode_process
from .opencode import records
from .session_usage import Kind

KINDS = {
    "codex": Kind(recognise=codex_process.recognise, env=("CODEX_HOME",), find=rollout.find),
    "gemini": Kind(recognise=gemini_process.recognise, env=("GEMINI_CLI_HOME",), find=chats.find),
    "opencode": Kind(recognise=opencode_process.recognise, env=("XDG_DATA_HOME",), find=records.find),
}
