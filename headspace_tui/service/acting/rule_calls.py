"""A held call as the rules see it: its command or file, the folder it runs in, and every part of its input accounted for.

A rule judges the words of a call, but the call says more than its words:
Claude's Bash may ask to run outside its sandbox
(``dangerouslyDisableSandbox``) or for network domains
(``allowed_domains``); Codex's command may run in another folder
(``workdir``), in another shell (``shell``), or unsandboxed
(``sandbox_permissions``).  So each field of a shell call's input is one
the rules judge, one that only describes it, or one that makes the call
not whole (``Call.unread``): the person answers it, whatever a rule says.
Pure but for resolving the call's folder on this machine.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from ...detect.families import tools_of
from ...hooks.calls import PendingCall
from ...model import DEFAULT_FAMILY, Agent
from ...rules.model import Call

BASH = frozenset({"bash", "/bin/bash", "/usr/bin/bash"})  # the shells the rules read as: a shell named so elsewhere is another program
# Fields of a shell call's input that change nothing of what runs (Claude's Bash, Codex's exec, Gemini's, opencode's).
DESCRIBES = frozenset({"command", "description", "timeout", "timeout_ms", "run_in_background", "justification", "yield_time_ms", "max_output_tokens", "tty", "login"})


def call_of(pending: PendingCall, agent: Agent) -> Call:
    """The hook's call as the rules see it: its command or path, where it runs, and what of it is not judged."""
    tool, given = pending.tool_name, pending.tool_input
    family = agent.family or DEFAULT_FAMILY
    tools = tools_of(family)
    cwd = pending.cwd or agent.cwd
    unsandboxed, unread = False, ""
    command = path = ""
    if tool in tools.shell:
        command, unread = _command(given.get("command"))
        unsandboxed, why = _sandbox(given)
        unread = unread or why
        workdir = given.get("workdir")
        if workdir is not None:  # Codex: the folder the command runs in, from the turn's
            cwd = posixpath.normpath(posixpath.join(cwd, workdir)) if isinstance(workdir, str) and _plain_path(workdir) and cwd else ""
            unread = unread or ("" if cwd else "a workdir that cannot be placed")
        shell = given.get("shell")
        if shell is not None and shell not in BASH:
            unread = unread or f"it runs in {str(shell)[:40]!r}, not bash, which the rules read"
        unknown = sorted(set(given) - DESCRIBES - {"dangerouslyDisableSandbox", "sandbox_permissions", "workdir", "shell"})
        unread = unread or (f"its input has {unknown[0][:40]!r}, which the rules do not judge" if unknown else "")
    elif tool in tools.files:
        named = given.get("file_path") or given.get("path") or given.get("notebook_path")
        path = named if isinstance(named, str) and _plain_path(named) else ""
    if cwd and not _plain_path(cwd):
        cwd = ""
    elif agent.host == "local" and cwd:
        cwd = os.path.realpath(cwd)
    elif cwd:
        cwd = posixpath.normpath(cwd)  # another host's: as written, '..' folded (its symlinks are not seen from here)
    return Call(tool=tool, command=command, path=path, host=agent.host, cwd=cwd, family=family, tools=tools, pane=agent.target, unsandboxed=unsandboxed, unread=unread)


def _command(value: Any) -> tuple[str, str]:
    """The command line a call runs, and why it is not one ("" when it is): a string, or Codex's ``["bash", "-lc", LINE]``."""
    if isinstance(value, str):
        return value, ""
    if isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value) and value[0] in BASH and value[1] in ("-c", "-lc"):
        return value[2], ""
    return "", "its command is not one line of text"


def _sandbox(given: dict) -> tuple[bool, str]:
    """Whether the call asks to run outside the agent's sandbox, and why it is not whole ("" when it is)."""
    off = given.get("dangerouslyDisableSandbox")
    if off is not None and not isinstance(off, bool):
        return False, "a sandbox setting that is neither true nor false"
    permissions = given.get("sandbox_permissions")
    if permissions not in (None, "use_default"):
        if permissions == "require_escalated":
            return True, ""
        return False, f"it asks for sandbox permissions ({str(permissions)[:40]!r})"
    return off is True, ""


def _plain_path(path: str) -> bool:
    """A path a file system can name: no NUL, no lone surrogate (either is no file, and would raise where it is resolved)."""
    if "\0" in path:
        return False
    try:
        path.encode("utf-8")
    except UnicodeError:
        return False
    return True
