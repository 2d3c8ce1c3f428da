"""Codex CLI's own count of a conversation's tokens: the ``token_count`` events of its rollout file.

Measured on 0.169.0 (tests/e2e/test_usage_families.py, the real binary
against the scripted Responses API):

* ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl``
  (``CODEX_HOME`` defaults to ``~/.codex``).  The file is written from the
  first prompt on, by Codex's shared app-server daemon (it holds the file
  open, not the agent's own process): nothing links it to the agent but its
  first line, ``session_meta``, whose ``payload`` has the ``cwd`` and the
  ``timestamp`` the conversation began: its first prompt, not the agent's
  start (measured: two agents started 3 s apart, both conversations begun
  after the second started), so two Codex agents in one folder are not
  told apart (detect/session_usage.py).
* ``turn_context`` lines carry ``payload.model``.
* After each reply, ``event_msg`` with ``payload.type == "token_count"``:
  ``info.total_token_usage`` (the conversation's running sums:
  ``input_tokens``, ``cached_input_tokens``, ``cache_write_input_tokens``,
  ``output_tokens``, ``reasoning_output_tokens``, ``total_tokens``),
  ``info.last_token_usage`` (the last request's), ``info.model_context_window``
  and ``rate_limits`` (``primary`` / ``secondary``: ``used_percent``,
  ``window_minutes``, ``resets_at``; null against an API key).  The totals
  are Codex's own sums, so the last event is the answer (nothing is added
  here).  As in OpenAI's API, ``input_tokens`` includes the cached part;
  reasoning is part of ``output_tokens``.
* The context is the last request's tokens less its reasoning (which is not
  sent again), against ``model_context_window``.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone

from ...shared.json_lines import JsonLinesTail, first_object
from ...usage.model import PlanUse, Tokens, Usage
from ..session_usage import AgentProcess, Follower, Kind, count, parse_time
from .process import recognise

META_CAP = 4 << 20  # the first line holds Codex's whole system prompt (about 50 KB on 0.169.0)


def tokens_of(counts: object) -> Tokens:
    """One ``*_token_usage`` object as Tokens (uncached input; the cached and cache-written parts apart)."""
    if not isinstance(counts, dict):
        return Tokens()
    cached, written = count(counts.get("cached_input_tokens")), count(counts.get("cache_write_input_tokens"))
    return Tokens(max(0, count(counts.get("input_tokens")) - cached - written), count(counts.get("output_tokens")), cached, written)


def plan_of(limits: object) -> tuple:
    """The plan's windows (5-hour, weekly) from ``rate_limits``, as far as Codex was told them."""
    if not isinstance(limits, dict):
        return ()
    found = []
    for key in ("primary", "secondary"):
        window = limits.get(key)
        if isinstance(window, dict) and isinstance(window.get("used_percent"), (int, float)):
            resets = window.get("resets_at")
            found.append(PlanUse(count(window.get("window_minutes")), float(window["used_percent"]), float(resets) if isinstance(resets, (int, float)) else 0.0))
    return tuple(found)


class RolloutFollower(Follower):
    """One rollout file, read on from where it was last read; the last ``token_count`` wins."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._tail = JsonLinesTail(path)
        self._usage: Usage | None = None
        self._model = ""

    def read(self) -> Usage | None:
        for line in self._tail.read_objects():
            if not isinstance(line, dict) or not isinstance(line.get("payload"), dict):
                continue
            payload = line["payload"]
            if line.get("type") == "turn_context" and isinstance(payload.get("model"), str):
                self._model = payload["model"]
            elif line.get("type") == "event_msg" and payload.get("type") == "token_count" and isinstance(payload.get("info"), dict):
                info = payload["info"]
                last = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), dict) else {}
                context = count(last.get("total_tokens")) - count(last.get("reasoning_output_tokens"))
                plan = plan_of(payload.get("rate_limits")) or (self._usage.plan if self._usage else ())
                self._usage = Usage(self._model, tokens_of(info.get("total_token_usage")), max(0, context), count(info.get("model_context_window")), plan=plan)
        if self._usage is not None and self._model and self._usage.model != self._model:
            self._usage = Usage(self._model, self._usage.tokens, self._usage.context_tokens, self._usage.context_window, plan=self._usage.plan)
        return self._usage


_BEGUN: dict = {}  # (path, inode) → (cwd, when begun, who began it): a rollout's first line never changes
_BEGUN_KEPT = 2048


def conversation_of(path: str, inode: int = 0) -> tuple | None:
    """(cwd, when it began, who began it) from a rollout's first line, or None (read once per file)."""
    known = _BEGUN.get((path, inode))
    if known is not None:
        return known
    meta = _read_conversation(path)
    if meta is not None and inode:
        if len(_BEGUN) >= _BEGUN_KEPT:
            _BEGUN.clear()
        _BEGUN[(path, inode)] = meta
    return meta


def _read_conversation(path: str) -> tuple | None:
    line = first_object(path, META_CAP)
    payload = line.get("payload") if isinstance(line, dict) and line.get("type") == "session_meta" else None
    if not isinstance(payload, dict) or not isinstance(payload.get("cwd"), str):
        return None
    begun = parse_time(payload.get("timestamp")) or parse_time(line.get("timestamp"))
    originator = payload.get("originator")
    return (payload["cwd"], begun, originator if isinstance(originator, str) else "") if begun is not None else None


# Who began a conversation (its session_meta ``originator``): Codex's terminal UI, as 0.169.0 and older versions
# name it.  An editor's or ``codex exec``'s conversation in the same folder is another client's, never a pane's.
TERMINAL_ORIGINATORS = frozenset({"codex-tui", "codex_cli_rs"})


def from_terminal(path: str) -> bool:
    """Was the conversation in this rollout begun by Codex's terminal UI (not an editor's extension, not ``codex exec``)?"""
    try:
        inode = os.stat(path).st_ino
    except OSError:
        return False
    meta = conversation_of(path, inode)  # the first line as the search for the agent's record read it
    return meta is not None and meta[2] in TERMINAL_ORIGINATORS


def day_folders(root: str, since: float, now: float) -> list:
    """``root/YYYY/MM/DD`` for each day from a day before ``since`` (local or UTC, whichever named it) to a day after ``now``."""
    utc = timezone.utc  # noqa: UP017 - the probe runs on Python 3.9, which has no datetime.UTC
    day = datetime.fromtimestamp(since, utc).date() - timedelta(days=1)
    last = datetime.fromtimestamp(now, utc).date() + timedelta(days=1)
    folders = []
    while day <= last:
        folders.append(os.path.join(root, f"{day.year:04d}", f"{day.month:02d}", f"{day.day:02d}"))
        day += timedelta(days=1)
    return folders


def find(agent: AgentProcess) -> RolloutFollower | None:
    """The rollout of the agent's latest conversation (begun by it, in its folder), or None before its first prompt."""
    root = os.path.join(agent.home("CODEX_HOME", ".codex"), "sessions")
    best: tuple | None = None
    for folder in day_folders(root, agent.started, max(agent.started, time.time())):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not (name.startswith("rollout-") and name.endswith(".jsonl")):
                continue
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if st.st_mtime < agent.started - 1:
                continue  # not written since the agent started: another's
            meta = conversation_of(path, st.st_ino)
            if meta is None or os.path.realpath(meta[0]) != agent.cwd or not agent.owns(meta[1], at_start=False):
                continue
            if best is None or meta[1] > best[0]:
                best = (meta[1], path)
    return RolloutFollower(best[1]) if best is not None else None


# Codex's session records, as session_usage.py follows them: its rollout files under CODEX_HOME.
USAGE = Kind(family="codex", recognise=recognise, env=("CODEX_HOME",), find=find)
