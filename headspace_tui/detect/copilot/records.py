"""GitHub Copilot CLI's own count of a session's tokens: its event log, ``~/.copilot/session-state/<session>/events.jsonl``.

Measured on 1.0.102 (the real CLI against the scripted API):

* The folder is ``$COPILOT_HOME`` (else ``$HOME/.copilot``).  A session's
  folder is made at its first prompt and holds ``inuse.<pid>.lock`` while a
  CLI has it open (``pid``: the native binary, under the loader that is the
  agent), so the record is the agent's by process: two Copilot agents in
  one folder are told apart.
* Each ``session.usage_record`` line is one model call:
  ``data.usage.inputTokens`` (the prompt, its cached part included),
  ``outputTokens``, ``reasoningTokens``, ``cacheReadTokens``,
  ``cacheWriteTokens``, ``model``, and ``maxPromptTokens``, the model's
  window as the CLI uses it.  Its ``cost`` is 0 with a model of your own
  (``isByok``): the price table prices the model, as for the others.

Runs where the agent runs (the probe on an SSH host too): the standard
library and probe-safe modules only.
"""

from __future__ import annotations

import os

from ...shared.proctree import descends
from ..session_usage import AgentProcess, Call, CallsFollower, Kind, count, env_folder
from .process import recognise


class EventsFollower(CallsFollower):
    """One session's event log, read on from where it was last read."""

    def call_of(self, line: object) -> Call | None:
        data = line.get("data") if isinstance(line, dict) and line.get("type") == "session.usage_record" else None
        used = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(used, dict):
            return None
        output = count(used.get("outputTokens")) + count(used.get("reasoningTokens"))
        model = used["model"] if isinstance(used.get("model"), str) else ""
        return Call(count(used.get("inputTokens")), output, count(used.get("cacheReadTokens")), count(used.get("cacheWriteTokens")), model, count(used.get("maxPromptTokens")))


def find(agent: AgentProcess) -> EventsFollower | None:
    """The session the agent's own CLI holds open (an ``inuse.<pid>.lock`` of a process under it), or None."""
    state = os.path.join(env_folder(agent.env, "COPILOT_HOME", ".copilot"), "session-state")
    try:
        sessions = os.listdir(state)
    except OSError:
        return None
    best: tuple[float, str] | None = None
    for session in sessions:
        folder = os.path.join(state, session)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        pids = [name[len("inuse.") : -len(".lock")] for name in names if name.startswith("inuse.") and name.endswith(".lock")]
        if not any(pid.isdigit() and descends(int(pid), agent.pid) for pid in pids):
            continue
        path = os.path.join(folder, "events.jsonl")
        try:
            changed = os.stat(path).st_mtime
        except OSError:
            continue
        if best is None or changed > best[0]:
            best = (changed, path)
    return EventsFollower(best[1]) if best is not None else None


# Copilot CLI's session records, as session_usage.py follows them: its event logs under COPILOT_HOME.
USAGE = Kind(family="copilot", recognise=recognise, env=("COPILOT_HOME",), find=find)
