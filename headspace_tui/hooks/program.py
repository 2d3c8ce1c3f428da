"""The hook program Claude Code runs for every event: one JSON file into the spool.

Run as ``<python> -S program.py`` from a ``"type": "command"`` hook.  It

* reads the event JSON from stdin (at most 1 MB; a tty is not read at all),
* adds ``tmux_pane`` ($TMUX_PANE), ``ts`` (time.time() when it started) and
  ``pid``: Claude's pid.  Claude 2.1.330 runs a hook as ``/bin/sh -c
  <command>`` and dash does not exec the last command, so the parent is
  usually that shell: when /proc says the parent is a shell, its parent is
  taken instead (without /proc, the parent as it is),
* writes one file per event into ``$XDG_RUNTIME_DIR/headspace/spool/``
  (``/tmp/headspace-<uid>/spool/`` when it is unset or relative; a missing
  $XDG_RUNTIME_DIR is never created, the event is dropped): first under a
  ``.tmp-`` name, then ``os.replace``d to ``<ts_ns>-<pid>-<rand>.json``, so a
  reader never sees half a file and file names sort in time order.

Directories are created 0700 and files 0600.  A spool directory (or its
``headspace`` parent) that is a symlink, is not owned by this user, or is
writable by group or others is not used: the program just exits.

Whatever happens it prints nothing (the stdout of some hooks is fed to
Claude), raises nothing and exits 0 at once: a broken or absent headspace
must never disturb Claude.  Standard library only, and only cheap modules.

``program.py answer SECONDS`` is the answer channel (``headspace hooks
install --answer``), a synchronous PermissionRequest hook.  It hands the
request (the same record) to headspace over ``<base>/answer.sock`` and waits
at most SECONDS for one line back.  A decision (``allow`` / ``deny``, with an
optional message, ``interrupt`` for a deny and, for AskUserQuestion,
``updatedInput``) is printed as
the hook's JSON output; anything else (no socket, nobody listening, headspace
not watching that pane, no decision in time, headspace gone) prints nothing,
and Claude's own dialog, which 2.1.330 draws while the hook runs, stays the
way to answer.  The socket is used only inside a private base folder and only
when it is a socket of this user.

``program.py answer SECONDS NAME`` is the same for the hook of a family
whose hook runs away from its pane (``Family.held_hook``: Codex CLI's own
PermissionRequest hook, ``headspace hooks install --codex``), which asks
only headspace's rules.  Codex runs its hooks from its shared app-server
daemon and draws no dialog until they return, so: the record says
``family: NAME`` and carries no ``tmux_pane`` or ``pid`` (the daemon's are
not the asking agent's; headspace finds the agent by the conversation's
record, ``transcript_path``), the wait is short, and a deny never carries
``interrupt`` or ``updatedInput`` (Codex fails such an answer closed).
Which family it is, is the installer's word (data), never this program's.

``program.py answer SECONDS NAME pane`` is a held hook that runs in its
agent's pane (Qwen Code's PermissionRequest hook, GitHub Copilot CLI's
permissionRequest hook: each runs it as the agent's child and draws no
dialog until it returns): the record names the family and keeps
``tmux_pane`` and ``pid``, by which headspace finds the agent.  A request in
the camelCase schema (Copilot's: ``hookName`` "permissionRequest",
``toolName``, ``toolInput``, ``sessionId``) is read as the others are, and
answered in that schema: ``{"behavior": "allow"}``, or a deny with its
``message``.
"""

import json
import os
import sys
import time

MAX_INPUT = 1 << 20


def _spool_dir():
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):  # relative values are invalid (XDG spec)
        base = os.path.join(runtime, "headspace")
    else:
        base = f"/tmp/headspace-{os.getuid()}"
    return base, os.path.join(base, "spool")


def _private_dir(path):
    """Create ``path`` 0700 if missing; True when it is a safe, private directory."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    return _is_private(path)


def _is_private(path):
    """A real directory (not a symlink) of this user, not writable by group or others; never created here."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o040000 and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _read_stdin():
    try:
        if os.isatty(0):
            return b""
    except OSError:
        return b""
    chunks = []
    left = MAX_INPUT
    while left > 0:
        chunk = os.read(0, min(left, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "mksh", "busybox"})


def _claude_pid():
    """The hook's parent, or the parent's parent when the parent is ``sh -c``."""
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/stat", "rb") as handle:
            stat = handle.read()
        head, _, tail = stat.rpartition(b")")
        comm = head.partition(b"(")[2].decode("utf-8", "replace")
        grandparent = int(tail.split()[1])
    except (OSError, ValueError, IndexError):
        return ppid
    return grandparent if comm in SHELLS and grandparent > 1 else ppid


CAMEL = {"toolName": "tool_name", "toolInput": "tool_input", "sessionId": "session_id"}


def _camel(record):
    """A request in the camelCase schema (``hookName`` "permissionRequest") with the names the others use; None for any other record."""
    if record.get("hookName") != "permissionRequest" or "hook_event_name" in record:
        return None
    named = dict(record)
    named["hook_event_name"] = "PermissionRequest"
    for camel, snake in CAMEL.items():
        if camel in record:
            named[snake] = record[camel]
    return named


def _asked_in_camel(data):
    """Did the request come in the camelCase schema (so the answer goes in it too)?"""
    try:
        parsed = json.loads(data.decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - not JSON: no schema
        return False
    return isinstance(parsed, dict) and _camel(parsed) is not None


def _record(data, ts, held="", wait=None, in_pane=False):
    """The event as headspace reads it; ``held``: the family whose hook headspace holds for its rules ("": Claude's, in its pane);
    ``in_pane``: that hook runs in its agent's pane (its pane and pid are the agent's).

    ``wait``: the answer hook's seconds, so headspace knows until when this
    hook takes an answer (the card counts down to it; then keys answer).
    """
    text = data.decode("utf-8", "replace")
    record = None
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict):
            record = parsed
    except Exception:  # noqa: BLE001 - not JSON, or nested too deep to parse
        pass
    if record is None:
        record = {"raw": text}
    record = _camel(record) or record
    record["ts"] = ts
    if wait is not None:
        record["wait"] = wait
    else:
        record.pop("wait", None)  # only the answer hook says how long it waits: never a key of the agent's own
    if held and not in_pane:
        record["family"] = held
        record["tmux_pane"] = ""
        record["pid"] = 0
    else:
        if held:
            record["family"] = held
        else:
            record.pop("family", None)  # only a held hook's record names a family: a key of the agent's own never makes one
        record["tmux_pane"] = os.environ.get("TMUX_PANE", "")
        record["pid"] = _claude_pid()
    return json.dumps(record, ensure_ascii=False).encode("utf-8", "replace")


MAX_REPLY = 1 << 20
BEHAVIOURS = ("allow", "deny")


def _decision(reply, held="", camel=False):
    """The hook output for headspace's reply, or None: only a well-formed allow or deny passes (a held hook's: plain;
    ``camel``: in the camelCase schema the request came in)."""
    try:
        parsed = json.loads(reply.decode("utf-8"))
    except Exception:  # noqa: BLE001 - garbage from the socket: no decision
        return None
    decision = parsed.get("decision") if isinstance(parsed, dict) else None
    if not isinstance(decision, dict) or decision.get("behavior") not in BEHAVIOURS:
        return None
    out = {"behavior": decision["behavior"]}
    if isinstance(decision.get("message"), str):
        out["message"] = decision["message"]
    if not held:  # a held hook's agent (Codex) fails an answer carrying either closed
        if decision["behavior"] == "allow" and isinstance(decision.get("updatedInput"), dict):
            out["updatedInput"] = decision["updatedInput"]
        if decision["behavior"] == "deny" and decision.get("interrupt") is True:
            out["interrupt"] = True
    if camel:
        return out
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": out}}


def answer(wait, held="", in_pane=False):
    """Ask headspace for a decision on this PermissionRequest; print it, or nothing.  ``held``, ``in_pane``: as ``_record``."""
    started = time.monotonic()
    data = _read_stdin()
    base, _ = _spool_dir()
    path = os.path.join(base, "answer.sock")
    if not _is_private(base):
        return
    st = os.lstat(path)  # FileNotFoundError: headspace is not running (caught in __main__)
    if (st.st_mode & 0o170000) != 0o140000 or st.st_uid != os.getuid():
        return
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(1.0)
    sock.connect(path)  # refused: a stale socket, nobody listening
    sock.sendall(_record(data, time.time(), held, wait, in_pane) + b"\n")
    chunks = []
    size = 0
    while True:
        left = wait - (time.monotonic() - started)
        if left <= 0:
            return
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk or size > MAX_REPLY:
            break
    output = _decision(b"".join(chunks).split(b"\n", 1)[0], held, camel=_asked_in_camel(data))
    if output is not None:
        sys.stdout.write(json.dumps(output))
        sys.stdout.flush()


def main():
    ts_ns = time.time_ns()
    os.umask(0o077)
    data = _read_stdin()
    base, spool = _spool_dir()
    if not (_private_dir(base) and _private_dir(spool)):
        return
    payload = _record(data, ts_ns / 1e9)
    name = f"{ts_ns:020d}-{os.getpid()}-{os.urandom(4).hex()}"
    tmp = os.path.join(spool, ".tmp-" + name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    try:
        os.replace(tmp, os.path.join(spool, name + ".json"))
    except BaseException:
        os.unlink(tmp)
        raise


def _held_from(argv):
    """The family named after the wait (a held hook's), when it is a plain word; "" otherwise."""
    name = argv[3] if len(argv) > 3 else ""
    return name if name.isascii() and name.isidentifier() and len(name) <= 32 else ""


def _wait_from(argv):
    try:
        return min(max(float(argv[2]), 0.0), 3600.0)
    except (IndexError, ValueError):
        return 0.0


if __name__ == "__main__":
    try:
        if sys.argv[1:2] == ["answer"]:
            answer(_wait_from(sys.argv), _held_from(sys.argv), sys.argv[4:5] == ["pane"])
        else:
            main()
    except BaseException:  # noqa: BLE001 - a hook must never fail Claude's tool call: exit 0, say nothing
        pass
    os._exit(0)
