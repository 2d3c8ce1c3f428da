"""What ``headspace hooks install|uninstall|status`` says, in one wording for this machine and for ``--host``.

Both feed it the same facts (a dict: the settings ``path``, whether install
``changed`` it, its ``backup``, uninstall's outcome ``done``, status's
``installed``/``events``/``missing``/``commands``/``answer_wait``), and a
remote host adds what only it has: the hook program put there (``program``,
``program_state``, ``program_removed``) and the ``python`` that runs it.
"""

from __future__ import annotations

from typing import Any

from ..hooks.settings import EVENTS


def said(action: str, facts: dict[str, Any], wait: int | None, again: str = "headspace hooks install") -> str:
    """One line for the user; ``again`` is the command that mends a partial or foreign install."""
    path, program = facts.get("path", "?"), facts.get("program")
    if action == "install":
        what = "headspace hooks" + (f" with the answer channel (waits {wait}s)" if wait is not None else "")
        placed = f"; program {program}, run by {facts.get('python')}" if program else ""
        # PermissionDenied (a call auto mode blocked) is written only for a Claude that has it (hooks/settings.py).
        left = ""
        if facts.get("denied") is False:
            left = (
                "; no PermissionDenied hook: no claude on PATH to ask whether it has one (install again once it is; blocked calls are read from the screen)"
                if facts.get("claude_found") is False
                else "; no PermissionDenied hook: the claude on PATH has none (blocked calls are read from the screen)"
            )
        if not facts.get("changed"):
            return f"{what} already installed in {path}" + (f" (program {program})" if program else "") + left
        backup = facts.get("backup")
        return f"installed {what} in {path} ({f'backup: {backup}' if backup else 'new file'}{placed}){left}"
    if action == "uninstall":
        gone = f"; removed {program}" if facts.get("program_removed") else ""
        return {
            "restored": f"removed headspace hooks: restored {path} from its backup{gone}",
            "deleted": f"removed headspace hooks: deleted {path}, which install had created{gone}",
            "removed": f"removed headspace hooks from {path} (it changed since install; backup kept: {facts.get('backup')}){gone}",
            "absent": f"no headspace hooks in {path}{gone}",
        }.get(str(facts.get("done")), f"uninstall said {facts.get('done')!r}")
    program_state = facts.get("program_state", "current")  # this machine's program is the installed package's own
    if facts.get("installed") and program_state == "current":
        wait_there = facts.get("answer_wait")
        channel = f"; answer channel on, waits {wait_there}s" if wait_there is not None else ""
        return f"headspace hooks installed in {path} ({len(facts.get('events') or EVENTS)} events{channel})"
    if not facts.get("events"):
        return f"headspace hooks not installed in {path}" + ("" if facts.get("exists") else " (no such file)")
    if facts.get("missing"):
        return f"headspace hooks partly installed in {path}: missing {', '.join(facts['missing'])}; run '{again}'"
    if program_state != "current":
        state = "missing" if program_state == "missing" else "another version"
        return f"headspace hooks in {path} run a hook program that is {state} ({program}); run '{again}'"
    commands = facts.get("commands") or ["?"]
    return f"headspace hooks in {path} run another program ({commands[0]}); run '{again}'"
