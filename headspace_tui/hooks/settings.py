"""Adding headspace's hooks to a Claude Code ``settings.json``, and taking them out again.

headspace registers one asynchronous command hook per event it cares about
(``EVENTS``).  Claude runs it in the background, so it never slows a turn.
Every entry headspace writes is recognisable by its command, which ends with
the shell comment ``# headspace-hook`` (``MARKER``); nothing else in the file
is touched: the user's own hooks, in the same events or others, and every
other key stay as they are, in their order.

Install
    Parses the file (a missing or empty file counts as ``{}``), and refuses a
    malformed one (invalid JSON, not an object, ``"hooks"`` or one of its event
    lists of the wrong type) with a one-line ``HooksError``, leaving it alone.
    When every event already holds exactly our entry, nothing is written: a
    second install leaves the file byte-identical.  Otherwise stale entries of
    ours (another python, another checkout) are dropped and the current one
    appended.  Before the first change to a file that holds none of our
    entries, its exact bytes are copied to ``settings.json.headspace-backup``
    (same mode).  A missing file is created (and any stale backup removed, as
    the record that there was no file).

Uninstall
    Restores the user's file byte-for-byte when that is provably right:

    * with a backup, when the current file minus our entries holds the same
      settings as the backup (compared as JSON values, ignoring empty
      containers our entries may have needed), the backup's bytes are put
      back and the backup removed;
    * without a backup (the file did not exist before install), when nothing
      but our entries is left, the file is deleted again;
    * otherwise the user changed the file since install: only our entries are
      removed (the rest is rewritten as indented JSON) and the backup is kept
      for reference.

The answer channel (``install(..., answer_wait=N)``) adds one more entry of
ours, a *synchronous* PermissionRequest hook (``program.py answer N``) with a
Claude timeout a little over N; without it an install removes that entry.

Every write goes to a temporary file in the same directory that is then
renamed over the target, keeping the file's mode.  A symlinked settings file
(a dotfiles checkout) is followed, so the link survives.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..detect.claude.process import PROGRAM as CLAUDE_PROGRAM
from ..shared.safe_files import Unreadable, loads, read_regular

MARKER = "headspace-hook"
BACKUP_SUFFIX = ".headspace-backup"
PROGRAM = Path(__file__).resolve().with_name("program.py")

# The events headspace listens to, in the order they are written.
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "SessionEnd",
)
# A call auto mode blocked (2.1.283 has it).  Written only where the Claude that reads the file knows it: Claude
# Code 2.1.30 refuses a settings file that names an event it does not know, all of it ("PermissionDenied: Invalid
# key in record ... Files with errors are skipped entirely"), the user's own permissions included.
DENIED_EVENT = "PermissionDenied"
# Events whose groups Claude filters by tool name; "*" matches every tool.  The
# others take no matcher (or one on another field); leaving it out matches all.
TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse"})
TIMEOUT = 5  # seconds; the program takes milliseconds
VERSION_WAIT = 10  # seconds a wrapper's ``claude --version`` may take
ANSWER_EVENT = "PermissionRequest"
ANSWER_WAIT = 60  # seconds the answer hook waits for headspace by default
MAX_ANSWER_WAIT = 590  # Claude's own default hook timeout is 600 s
ANSWER_GRACE = 10  # Claude's timeout for the answer hook: its wait plus this
MAX_SETTINGS = 4 << 20  # a settings.json is a few KB


class HooksError(Exception):
    """A settings file headspace will not touch, said in one line."""


def hook_command(python: str | None = None, program: str | Path | None = None) -> str:
    """The shell command Claude runs: ``<python> -S <program.py> # headspace-hook``."""
    python = python or sys.executable
    program = Path(program or PROGRAM).resolve()
    return f"{shlex.quote(python)} -S {shlex.quote(str(program))} # {MARKER}"


def answer_wait_of(command: str) -> int | None:
    """N when ``command`` is our answer hook (``... answer N # headspace-hook``), else None."""
    words = command.rsplit("#", 1)[0].split()
    if len(words) >= 2 and words[-2] == "answer" and words[-1].isdigit():
        return int(words[-1])
    return None


def is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and hook.get("type") == "command" and isinstance(hook.get("command"), str) and hook["command"].rstrip().endswith(f"# {MARKER}")


def group_for(event: str, command: str) -> dict[str, Any]:
    """The matcher group headspace adds to ``event``."""
    group: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
    group["hooks"] = [{"type": "command", "command": command, "timeout": TIMEOUT, "async": True}]
    return group


def answer_group(command: str, wait: int) -> dict[str, Any]:
    """The answer hook's group: synchronous (Claude reads its output), timed out a little after its own wait."""
    return {"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": wait + ANSWER_GRACE}]}


def answer_command(command: str, wait: int, family: str = "", *, in_pane: bool = False) -> str:
    """The answer hook's command: the same python and program as ``command``, plus ``answer N`` (and the family's name
    for a held hook, then ``pane`` for one that runs in its agent's pane)."""
    head = command.rsplit("#", 1)[0].rstrip()
    held = f" {family}{' pane' if in_pane else ''}" if family else ""
    return f"{head} answer {wait}{held} # {MARKER}"


# The release that made auto mode Claude's default has the hook (the earliest that has it is not known): what a
# wrapper script's ``claude --version`` must reach when the program itself cannot be searched.
DENIED_SINCE = (2, 1, 283)


def denied_support(claude: str | None = None) -> bool | None:
    """Whether the Claude Code at ``claude`` (default: ``claude`` on PATH) has the PermissionDenied hook; None when that cannot be told.

    Its program (the native binary, or ``cli.js``) is searched for the name
    in its list of events, without running it (a tenth of a second for 380
    MB, mapped).  A script that starts another program (a wrapper, a shim)
    is asked ``--version`` instead.  No Claude found: None.
    """
    path = claude if claude is not None else shutil.which(CLAUDE_PROGRAM)
    if not path:
        return None
    try:
        with open(os.path.realpath(path), "rb") as program, mmap.mmap(program.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data.find(b'"' + DENIED_EVENT.encode() + b'"') != -1:
                return True
            script = data[:2] == b"#!" and len(data) < (1 << 16)  # a wrapper, not Claude's own program (cli.js is megabytes)
    except (OSError, ValueError):
        return None
    if not script:
        return False
    try:
        said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=VERSION_WAIT, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"\s*(\d+)\.(\d+)\.(\d+)", said or "")
    return None if found is None else tuple(int(n) for n in found.groups()) >= DENIED_SINCE


def knows_denied(claude: str | None = None) -> bool:
    """``denied_support`` is sure it has it: only then is PermissionDenied written (a Claude without it skips the whole file)."""
    return denied_support(claude) is True


def wanted(command: str, answer_wait: int | None = None, *, denied: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Every group of ours, by event, that an install writes (``denied``: PermissionDenied too)."""
    groups = {event: [group_for(event, command)] for event in (*EVENTS, *((DENIED_EVENT,) if denied else ()))}
    if answer_wait is not None:
        groups[ANSWER_EVENT] = [*groups[ANSWER_EVENT], answer_group(answer_command(command, answer_wait), answer_wait)]
    return groups


def backup_path(settings_path: Path) -> Path:
    return settings_path.with_name(settings_path.name + BACKUP_SUFFIX)


# -- reading ------------------------------------------------------------------


def _target(settings_path: Path) -> Path:
    """The file to read and replace: a symlink's target, so the link stays a link."""
    path = Path(settings_path).expanduser()
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """The file's bytes (None when missing) and its settings; HooksError when malformed."""
    try:
        raw = read_regular(path, MAX_SETTINGS, follow=True)
    except FileNotFoundError:
        return None, {}
    except Unreadable as exc:
        raise HooksError(f"{exc}; left it untouched") from None
    data = _parse(raw, path)
    return raw, data


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8-sig")
        json.loads(text)
    except UnicodeDecodeError:
        raise HooksError(f"{path} is not UTF-8 text; left it untouched") from None
    except json.JSONDecodeError as exc:
        raise HooksError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); left it untouched") from None
    except RecursionError:
        raise HooksError(f"{path} is nested too deeply to read; left it untouched") from None
    try:
        data = loads(text, what=str(path))
    except Unreadable as exc:
        raise HooksError(f"{exc}; left it untouched") from None
    if not isinstance(data, dict):
        raise HooksError(f"{path} does not hold a JSON object; left it untouched")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HooksError(f'{path}: "hooks" is not an object; left it untouched')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise HooksError(f'{path}: "hooks.{event}" is not a list; left it untouched')
    return data


# -- editing ------------------------------------------------------------------


def _holds_ours(group: Any) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(inner, list) and any(is_ours(h) for h in inner)


def _ours_in(groups: Any) -> list[dict[str, Any]]:
    """The matcher groups of one event that hold an entry of ours."""
    return [g for g in groups if _holds_ours(g)] if isinstance(groups, list) else []


def _strip(data: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``data`` without our hooks, and whether there were any.

    A group, event list or ``"hooks"`` object is dropped only when removing our
    entries is what emptied it; the user's own empty containers stay.
    """
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data, False
    found = False
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        removed_here = False
        for group in groups:
            if _holds_ours(group):
                removed_here = True
                rest = [h for h in group["hooks"] if not is_ours(h)]
                if rest:
                    kept_groups.append({**group, "hooks": rest})
            else:
                kept_groups.append(group)
        found = found or removed_here
        if kept_groups or not removed_here:
            new_hooks[event] = kept_groups
    out = dict(data)
    if new_hooks or not found:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out, found


def _canonical(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without our entries and without empty hook containers, for comparison."""
    stripped, _ = _strip(data)
    hooks = stripped.get("hooks")
    if not isinstance(hooks, dict):
        return stripped
    clean: dict[str, Any] = {}
    for event, groups in hooks.items():
        if isinstance(groups, list):
            groups = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
            if not groups:
                continue
        clean[event] = groups
    out = dict(stripped)
    if clean:
        out["hooks"] = clean
    else:
        out.pop("hooks", None)
    return out


def _installed_exactly(data: dict[str, Any], ours_wanted: dict[str, list[dict[str, Any]]]) -> bool:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for event, groups in hooks.items():
        if _ours_in(groups) != ours_wanted.get(event, []):
            return False
    return all(event in hooks for event in ours_wanted)


def _with_ours(data: dict[str, Any], ours_wanted: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    stripped, _ = _strip(data)
    out = dict(stripped)
    hooks = dict(out.get("hooks") or {})
    for event, groups in ours_wanted.items():
        hooks[event] = [*hooks.get(event, []), *groups]
    out["hooks"] = hooks
    return out


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, content: bytes, mode: int) -> None:
    """``content`` in ``path`` with ``mode``, whole or not at all: a temp file beside it, synced, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return _default_mode()


# -- the three operations -----------------------------------------------------


@dataclass(frozen=True)
class HookStatus:
    path: Path
    exists: bool
    events: tuple[str, ...]  # events that hold one of our entries
    current: bool  # every entry is exactly what install writes now
    commands: tuple[str, ...]  # our commands found, distinct
    answer_wait: int | None = None  # the answer hook's wait, when it is installed

    @property
    def installed(self) -> bool:
        return set(EVENTS) <= set(self.events) and self.current

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(e for e in EVENTS if e not in self.events)


def status(settings_path: Path, command: str | None = None) -> HookStatus:
    """What of headspace's hooks ``settings_path`` holds (HooksError when malformed)."""
    path = _target(settings_path)
    command = command or hook_command()
    raw, data = _read(path)
    hooks = data.get("hooks") or {}
    events: list[str] = []
    commands: list[str] = []
    for event, groups in hooks.items():
        for group in _ours_in(groups):
            if event not in events:
                events.append(event)
            for hook in group["hooks"]:
                if is_ours(hook) and hook["command"] not in commands:
                    commands.append(hook["command"])
    waits = [w for w in map(answer_wait_of, commands) if w is not None]
    answer = waits[0] if len(waits) == 1 else None
    return HookStatus(
        path=path,
        exists=raw is not None,
        events=tuple(events),
        current=bool(events) and _installed_exactly(data, wanted(command, answer, denied=DENIED_EVENT in events)),
        commands=tuple(commands),
        answer_wait=answer,
    )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One install or uninstall at a time per settings folder (two terminals, two headspaces).

    The lock is taken on the folder itself (``flock`` works on a directory's
    descriptor on Linux and the BSDs), so no lock file is left beside the
    user's settings.  Where that is impossible the edit goes ahead unlocked.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl

        fd = os.open(folder, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def install(settings_path: Path, command: str | None = None, *, answer_wait: int | None = None, claude: str | None = None) -> bool:
    """Register headspace's hooks in ``settings_path``; True when the file changed.

    ``answer_wait`` (seconds) adds the answer channel's hook; without it an
    answer hook installed before is taken out again.  PermissionDenied is
    written only when the Claude at ``claude`` (default: on PATH) knows it
    (``knows_denied``).
    """
    path = _target(settings_path)
    command = command or hook_command()
    if answer_wait is not None and not 1 <= answer_wait <= MAX_ANSWER_WAIT:
        raise HooksError(f"--wait must be between 1 and {MAX_ANSWER_WAIT} seconds")
    return _install(path, wanted(command, answer_wait, denied=knows_denied(claude)))


def held_wanted(command: str, family: str, wait: int, *, in_pane: bool = False) -> dict[str, list[dict[str, Any]]]:
    """A held hook's file (Codex's ``hooks.json``, Qwen's ``settings.json``): one synchronous PermissionRequest hook asking headspace's rules (``answer N FAMILY``)."""
    return {ANSWER_EVENT: [answer_group(answer_command(command, wait, family, in_pane=in_pane), wait)]}


def install_held(hooks_path: Path, family: str, wait: int, command: str | None = None, *, in_pane: bool = False) -> bool:
    """Register headspace's rules hook in a family's own hooks file (``Family.held_hook``; same format and care as Claude's settings); True when it changed.

    Codex runs a new or changed hook only once you trust it: it asks at its
    next start ("Hooks need review"), or in ``/hooks``.
    """
    path = _target(hooks_path)
    return _install(path, held_wanted(command or hook_command(), family, wait, in_pane=in_pane))


def install_own(path: Path, content: Callable[[str, int], dict[str, Any]], family: str, wait: int, command: str | None = None) -> bool:
    """Write a hooks file that is headspace's alone (``HeldHook.own_file``: Copilot CLI's ``hooks/headspace.json``); True when it changed.

    A file already there that is not headspace's alone (another hook beside
    ours, another shape), or a link, is left as it is (HooksError).
    """
    path = Path(path).expanduser()
    with _locked(path):
        raw = _own_raw(path)
        if raw is not None and not _only_ours(raw):
            raise HooksError(f"{path} is not headspace's alone: left as it is (move it away to install)")
        wanted = _dump(content(answer_command(command or hook_command(), wait, family, in_pane=True), wait))
        if raw == wanted:
            return False
        write_atomic(path, wanted, _default_mode())
        return True


def _own_raw(path: Path) -> bytes | None:
    """The bytes of a hooks file of headspace's own (None: there is none); a link is refused, never followed or removed."""
    if path.is_symlink():
        raise HooksError(f"{path} is a link: left as it is")
    raw, _ = _read(path)
    return raw


def _only_ours(raw: bytes) -> bool:
    """Is this hooks file headspace's alone: every hook in it is ours (its command ends with our marker), and nothing else is?"""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or set(data) - {"version", "hooks"} or not hooks:
        return False
    entries = [entry for groups in hooks.values() if isinstance(groups, list) for entry in groups]
    if len(entries) != sum(len(groups) if isinstance(groups, list) else 1 for groups in hooks.values()) or not entries:
        return False
    return all(isinstance(entry, dict) and any(isinstance(entry.get(key), str) and entry[key].rstrip().endswith(f"# {MARKER}") for key in ("bash", "command")) for entry in entries)


def holds_own(path: Path) -> bool:
    """Is the hooks file at ``path`` headspace's own (``HeldHook.own_file``)?"""
    try:
        raw = _own_raw(Path(path).expanduser())
    except HooksError:
        return False
    return raw is not None and _only_ours(raw)


def uninstall_own(path: Path) -> str:
    """Remove a hooks file of headspace's own: ``"deleted"``, or ``"absent"`` when there is none (or it is not headspace's alone)."""
    path = Path(path).expanduser()
    with _locked(path):
        raw = _own_raw(path)
        if raw is None or not _only_ours(raw):
            return "absent"
        path.unlink()
        return "deleted"


def _install(path: Path, ours_wanted: dict[str, list[dict[str, Any]]]) -> bool:
    with _locked(path):
        raw, data = _read(path)
        if raw is not None and _installed_exactly(data, ours_wanted):
            return False
        _, had_ours = _strip(data)
        backup = backup_path(path)
        made_backup = False
        if raw is None:
            backup.unlink(missing_ok=True)  # no backup = "there was no file"
        elif not had_ours:
            write_atomic(backup, raw, _mode_of(path))
            made_backup = True
        try:
            write_atomic(path, _dump(_with_ours(data, ours_wanted)), _mode_of(path))
        except BaseException:
            if made_backup:  # the settings were not changed: a backup of them would be a stray
                backup.unlink(missing_ok=True)
            raise
        return True


def uninstall(settings_path: Path) -> str:
    """Remove headspace's hooks from ``settings_path``.

    Returns what was done: ``"restored"`` (the backup's bytes put back),
    ``"deleted"`` (the file install created is gone again), ``"removed"``
    (only our entries taken out; the backup is kept) or ``"absent"`` (there
    was nothing of ours).
    """
    path = _target(settings_path)
    with _locked(path):
        return _uninstall(path)


def _uninstall(path: Path) -> str:
    raw, data = _read(path)
    stripped, had_ours = _strip(data)
    if raw is None or not had_ours:
        return "absent"
    backup = backup_path(path)
    try:
        saved: bytes | None = backup.read_bytes()
    except FileNotFoundError:
        saved = None
    except OSError as exc:
        raise HooksError(f"cannot read {backup}: {exc.strerror or exc}") from None
    if saved is not None:
        try:
            original = _parse(saved, backup)
        except HooksError:
            original = None
        if original is not None and _canonical(original) == _canonical(data):
            write_atomic(path, saved, _mode_of(backup))
            backup.unlink()
            return "restored"
    elif not _canonical(data):
        path.unlink()
        return "deleted"
    write_atomic(path, _dump(stripped), _mode_of(path))
    return "removed"
