"""``headspace hooks install|uninstall|status --host``, carried out on the remote host by the probe.

The settings are edited by ``hooks/settings.py`` itself, run there (it
travels in the bundle): the same folder lock, backup, byte-for-byte restore
and refusal of a malformed file as on this machine.  What differs is only
where things are, each found by the remote's own rules:

* the settings file: Claude's rule there, ``$CLAUDE_CONFIG_DIR/settings.json``
  of the login environment, else ``~/.claude/settings.json``;
* the hook program: headspace is not installed there, so ``install`` puts
  ``program.py`` (its source comes with the request) in a private folder of
  the remote's data dir (``$XDG_DATA_HOME/headspace/hook/``, made 0700; the
  file 0600, written under a temporary name and renamed, never through a
  symlink or over anything but a regular file of this user); ``uninstall``
  removes it again;
* the hook command runs it with the remote's own python3 (the probe's).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from ..detect.claude.status_files import claude_config_dir
from ..hooks.settings import DENIED_EVENT, HooksError, backup_path, hook_command, install, status, uninstall, write_atomic
from ..shared.paths import data_dir
from ..shared.safe_files import Unreadable, is_private_dir, read_regular

OPS = ("hooks_install", "hooks_uninstall", "hooks_status")
MAX_PROGRAM = 1 << 20


def program_path(env: Any = None) -> Path:
    return data_dir(env) / "hook" / "program.py"


def settings_path(env: Any = None) -> Path:
    return claude_config_dir(os.environ if env is None else env) / "settings.json"


def _python() -> str:
    return sys.executable or "python3"


def handle(op: str, request: dict[str, Any]) -> dict[str, Any]:
    """One hooks action there; ``{"problem": line}`` when it cannot be done (nothing changed then)."""
    path, program = settings_path(), program_path()
    command = hook_command(_python(), program)
    source = str(request.get("program") or "").encode()
    try:
        if op == "hooks_install":
            return _install(path, program, command, source, request.get("answer_wait"))
        if op == "hooks_uninstall":
            done = uninstall(path)
            return {"path": str(path), "done": done, "backup": str(backup_path(path)), "program": str(program), "program_removed": _remove(program)}
        if op == "hooks_status":
            found = status(path, command)
            return {
                "path": str(path),
                "exists": found.exists,
                "events": list(found.events),
                "missing": list(found.missing),
                "current": found.current,
                "installed": found.installed,
                "commands": list(found.commands),
                "answer_wait": found.answer_wait,
                "program": str(program),
                "program_state": _program_state(program, source),
            }
    except HooksError as exc:
        return {"problem": str(exc)}
    except OSError as exc:
        return {"problem": f"{exc.filename or path}: {exc.strerror or exc}"}
    raise ValueError(f"unknown op {op!r}")


def _install(path: Path, program: Path, command: str, source: bytes, answer_wait: Any) -> dict[str, Any]:
    if not source or len(source) > MAX_PROGRAM:
        raise HooksError("no hook program came with the request")
    wait = int(answer_wait) if answer_wait is not None else None
    had_program = _program_state(program, source) != "missing"
    _place(program, source)
    try:
        changed = install(path, command, answer_wait=wait)
    except BaseException:
        if not had_program:
            _remove(program)  # the settings were left alone: so is the rest
        raise
    backup = backup_path(path)
    denied = DENIED_EVENT in status(path).events
    return {"path": str(path), "changed": changed, "backup": str(backup) if backup.exists() else None, "program": str(program), "python": _python(), "denied": denied}


def _private_folder(folder: Path) -> None:
    """``folder`` and its parent (headspace's data dir there) as real directories of this user, made 0700."""
    for each in (folder.parent, folder):
        each.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:
            pass
        problem = is_private_dir(each)
        if problem:
            raise HooksError(f"{problem}; the hook program was not put there")


def _regular_of_mine(path: Path) -> bool | None:
    """True: a regular file of this user; None: nothing there; False: something else (left alone)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()


def _place(program: Path, source: bytes) -> None:
    _private_folder(program.parent)
    if _regular_of_mine(program) is False:
        raise HooksError(f"{program} is not a regular file of yours; left it untouched")
    write_atomic(program, source, 0o600)  # renamed over it: never written through a link


def _remove(program: Path) -> bool:
    """Take the hook program (and its folder, when empty) away; False when there was none of ours."""
    if not _regular_of_mine(program):
        return False
    program.unlink()
    try:
        program.parent.rmdir()
    except OSError:
        pass  # something else lives there: it stays
    return True


def _program_state(program: Path, source: bytes) -> str:
    """``current`` (this headspace's program), ``other`` (another version, or not ours to read) or ``missing``."""
    kind = _regular_of_mine(program)
    if kind is None:
        return "missing"
    try:
        return "current" if kind and read_regular(program, MAX_PROGRAM) == source else "other"
    except (OSError, Unreadable):
        return "other"
