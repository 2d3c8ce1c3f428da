"""Talking to one tmux server: list its panes, read them, type into them.

Every call is one ``tmux`` client process run with ``subprocess`` and a 10 s
timeout.  We do not build on libtmux (nor depend on it any more):
its ``Server.cmd()`` is a thin ``Popen`` too (so no speed to gain), but it
has no timeout (a wedged server would hang the UI), looks tmux up on PATH
again on every call, splits stdout into lines and drops trailing blank ones
(``capture-pane`` output must come back exactly as drawn), and reports
failures as stderr lists rather than exceptions.  Its object layer would
also cost several ``list-*`` round trips where we need one.  Wrapping
``subprocess`` directly is shorter than wrapping libtmux's wrapper.  The
tests' private servers are the same few commands (``tests/harness/tmux.py``).

The client always runs with ``-u``: without it, a client whose locale is not
UTF-8 gets every non-ASCII character of a format (titles, paths) as ``_``.

Errors come in two kinds, each carrying one human sentence:
``TmuxUnavailable`` (no tmux, no server) and ``TmuxCommandError`` (the server
answered but refused, e.g. the pane is gone).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from .control_pipe import ControlPipe, spawn
from .direct_attach import open_direct
from .identify import chosen, selecting_args, server_identity, socket_file

log = logging.getLogger(__name__)

TIMEOUT = 10.0

# Fields are joined by US (0x1f) and each record ends with RS (0x1e) before
# tmux's own newline.  tmux strips control characters from pane titles and
# escapes them in session names, but a directory name may hold a tab or a
# newline, so the path goes last: it may then contain US, and a record that
# still does not parse is skipped rather than trusted.
_SEP = "\x1f"
_END = "\x1e"
_FIELDS = (
    "pane_id",
    "session_id",
    "window_index",
    "pane_index",
    "pane_pid",
    "pane_width",
    "pane_height",
    "alternate_on",
    "pane_in_mode",
    "pane_dead",
    "pane_dead_status",
    "session_name",
    "pane_current_command",
    "pane_title",
    "pane_current_path",  # last: it is the only field that may contain anything
)
PANE_FORMAT = _SEP.join(f"#{{{name}}}" for name in _FIELDS) + _END


CONTROL_ENV = frozenset({"HOME", "USER", "LOGNAME", "PATH", "TMUX", "TMUX_TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TERM"})


class TmuxUnavailable(Exception):
    """There is no tmux to talk to: not installed, or no server on that socket."""


class TmuxTimeout(TmuxUnavailable):
    """The server did not answer in time: it may be busy, not gone."""


class TmuxCommandError(Exception):
    """The server answered but the command failed (for example, the pane is gone)."""


@dataclass(frozen=True)
class PaneRecord:
    """One pane as tmux describes it; ``pane_id`` (``%N``) is its stable address."""

    pane_id: str
    session_id: str
    session_name: str
    window_index: int
    pane_index: int
    target: str  # session:window.pane, for people; it shifts when windows move
    pid: int  # the pane's first process, usually a shell
    current_command: str
    cwd: str
    width: int
    height: int
    alternate_on: bool
    in_mode: bool  # copy mode (or another mode): keys would go to tmux, not the program
    title: str
    dead: bool
    dead_status: int | None


def parse_pane_record(record: str) -> PaneRecord | None:
    """One record of ``PANE_FORMAT`` output (without its terminator), or None if malformed."""
    parts = record.split(_SEP, len(_FIELDS) - 1)
    if len(parts) != len(_FIELDS):
        return None
    (pane_id, session_id, window, pane, pid, width, height, alt, mode, dead, dead_status, session, command, title, cwd) = parts
    if not pane_id.startswith("%") or not session_id.startswith("$"):
        return None
    try:
        window_index, pane_index = int(window), int(pane)
        return PaneRecord(
            pane_id=pane_id,
            session_id=session_id,
            session_name=session,
            window_index=window_index,
            pane_index=pane_index,
            target=f"{session}:{window_index}.{pane_index}",
            pid=int(pid or 0),
            current_command=command,
            cwd=cwd,
            width=int(width),
            height=int(height),
            alternate_on=alt == "1",
            in_mode=mode == "1",
            title=title,
            dead=dead == "1",
            dead_status=int(dead_status) if dead_status else None,
        )
    except ValueError:
        return None


def parse_pane_records(output: str) -> list[PaneRecord]:
    """Every well-formed record of a ``list-panes -F PANE_FORMAT`` output."""
    records = []
    for chunk in output.split(_END + "\n"):
        chunk = chunk.removesuffix(_END)  # the last record, if tmux left off the newline
        if chunk.strip():
            record = parse_pane_record(chunk)
            if record is not None:
                records.append(record)
    return records


def server_path(show_environment: str) -> str | None:
    """PATH from ``tmux show-environment -g PATH`` output; None when the server holds no PATH."""
    for line in show_environment.splitlines():
        if line.startswith("PATH="):
            return line[len("PATH=") :]
    return None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


class TmuxServer:
    """One tmux server, chosen by ``-L`` name or ``-S`` path (neither: the default/current one)."""

    def __init__(self, socket_name: str | None = None, socket_path: str | None = None) -> None:
        self.socket_name = socket_name
        self.socket_path = socket_path
        self._binary: str | None = None
        self._version: str | None = None

    def __repr__(self) -> str:
        return f"TmuxServer({self._where()})"

    @property
    def key(self) -> str:
        """Which server this is, for locks: the same pane id exists on every server."""
        return f"S:{self.socket_path}" if self.socket_path else f"L:{self.socket_name or 'default'}"

    def where(self) -> str:
        """Which server, for people: "the default socket", "socket 'work'"."""
        return self._where()

    def _where(self) -> str:
        if self.socket_path:
            return f"socket path {self.socket_path!r}"
        if self.socket_name:
            return f"socket {self.socket_name!r}"
        # Neither -L nor -S: inside tmux, the server of $TMUX (as tmux itself picks it), which need not be the default.
        inside = os.path.basename(os.environ.get("TMUX", "").split(",")[0])
        return f"socket {inside!r}" if inside and inside != "default" else "the default socket"

    def socket_file(self) -> str:
        """Where this server's socket lives (as tmux(1) places it: ``$TMUX_TMPDIR/tmux-UID/NAME``).

        Watching it is how a restarted server is noticed without forking tmux;
        a control client attaches to it directly (direct_attach.py).  Neither
        -L nor -S: the server it runs in ($TMUX), as tmux(1) does.
        """
        return socket_file(self.socket_args(), os.environ, os.getuid())

    @property
    def identity(self) -> str:
        """This server for good, whatever named it (identify.server_identity)."""
        return server_identity(self.socket_args(), os.environ, os.getuid())

    def socket_args(self) -> list[str]:
        """The ``-L``/``-S`` arguments that select this server (none: the default one)."""
        return selecting_args(self.socket_name, self.socket_path)

    local_child = True  # a control client's process is a tmux of ours, here: ended by cutting it off (control_pipe.ProcessPipe)

    @property
    def binary(self) -> str:
        if self._binary is None:
            self._binary = shutil.which("tmux")
            if self._binary is None:
                raise TmuxUnavailable("tmux is not installed")
        return self._binary

    def env(self) -> dict[str, str]:
        return os.environ.copy()

    def control_env(self) -> dict[str, str]:
        """The few variables a control client needs (which server, its locale).

        A tmux client sends its whole environment while it attaches, one
        message per variable, and tmux (before 3.7) crashes if a
        session or window notification reaches a control client in the
        middle of that (before 3.7, upstream PR #4980: ``control_write`` on a client whose
        control state does not exist yet).  A short environment makes that
        moment short; the rest of ours is of no use to tmux anyway (the
        attach uses ``-E``, so nothing of it reaches the user's session).
        """
        return {k: v for k, v in os.environ.items() if k in CONTROL_ENV}

    def argv(self, *args: str) -> list[str]:
        """The command line that runs ``tmux [-L name | -S path] args...`` against this server.

        A server on another machine (remote/ssh.py) runs the same tmux
        command through ssh; everything above this line is the same.
        """
        return [self.binary, "-u", *self.socket_args(), *self.targets_to_tmux(args)]

    async def open_control(self, *args: str) -> ControlPipe:
        """The byte streams of a control client ``tmux -C … args`` (control.py parses them).

        Here: attached directly (direct_attach.py: no window for tmux's
        crash) where this tmux has the bug, else a ``tmux`` child process,
        which is also the fallback when the socket cannot be reached.  A
        remote host's server hands out one stream of its probe's channel
        instead, where it can (remote/ssh.py).
        """
        if args[:1] == ("-C",) and await asyncio.to_thread(self.attach_directly):  # the first asks tmux its version
            try:
                return await open_direct(self.socket_file(), self.targets_to_tmux(args[1:]))
            except OSError as exc:
                log.info("attaching a control client directly to %s failed (%s); through tmux -C instead", self._where(), exc)
        return await spawn(self.argv(*args), self.control_env(), cut_off=self.local_child)

    def attach_directly(self) -> bool:
        """Whether control clients attach without a tmux process: for a tmux before 3.7 (direct_attach.py).

        ``HEADSPACE_TMUX_ATTACH=client`` or ``=direct`` chooses (the storm
        soak compares both).
        """
        return chosen(self.version(), os.environ)

    def version(self) -> str:
        """The running server's tmux version ("3.3a"), else the ``tmux -V`` of the binary we run; "" if neither can say.

        The server's own: after a package upgrade the old server runs on
        with the old code (and its crash) while ``tmux -V`` names the new
        release.  Its answer is kept (a server's version does not change);
        a failure or the binary's guess is asked again next time.
        """
        if self._version is not None:
            return self._version
        try:
            returncode, stdout, _ = self.execute(("display-message", "-p", "#{version}"))
            if returncode == 0 and stdout.strip():
                self._version = stdout.strip()
                return self._version
            return subprocess.run([self.binary, "-V"], capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL).stdout.strip()
        except (OSError, subprocess.SubprocessError, TmuxUnavailable):
            return ""

    # A pane's address is its ``%N`` here; on a remote host it carries the
    # host (``%N@box``) so that no two hosts' panes share one.  These two
    # turn tmux's ids into addresses and back at the edge of the transport.
    def address(self, pane_id: str) -> str:
        return pane_id

    def tmux_id(self, address: str) -> str:
        return address

    def targets_to_tmux(self, args: Sequence[str]) -> list[str]:
        """A command's arguments with each target (the word after ``-t``) as tmux's own id.

        Only targets: anything else (a key, text typed with ``-l``, a format)
        is data and goes as written, so a reply that reads ``%1@box`` reaches
        the pane as ``%1@box``.  After ``--`` nothing is an option.
        """
        out: list[str] = []
        target = ended = False
        for arg in args:
            out.append(self.tmux_id(arg) if target else arg)
            target = arg == "-t" and not ended
            ended = ended or arg == "--"
        return out

    def global_path(self) -> str | None:
        """The PATH a new window of this server gets (its global environment's); None when it keeps none, or cannot be asked:
        a program started there is then looked up on sh's default (``os.defpath``)."""
        try:
            return server_path(self.run("show-environment", "-g", "PATH"))
        except (TmuxCommandError, TmuxUnavailable):
            return None

    def run(self, *args: str) -> str:
        """Run ``tmux [-L name | -S path] args...``; return stdout exactly as printed."""
        returncode, stdout, stderr = self.execute(args)
        if returncode != 0:
            self.failed(returncode, stderr)
            message = _first_line(stderr)
            lowered = message.lower()
            if "no server running" in lowered or "error connecting" in lowered or "server exited" in lowered:
                raise TmuxUnavailable(f"no tmux server running on {self._where()}")
            command = args[0] if args else "tmux"
            raise TmuxCommandError(f"tmux {command}: {message or f'failed with exit status {returncode}'}")
        return stdout

    def execute(self, args: Sequence[str]) -> tuple[int, str, str]:
        """One tmux client process: its exit status, stdout and stderr (a remote host's may travel otherwise)."""
        argv = self.argv(*args)
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=TIMEOUT,
                env=self.env(),
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            self._binary = None
            raise TmuxUnavailable("tmux is not installed") from None
        except subprocess.TimeoutExpired:
            raise TmuxTimeout(f"the tmux server on {self._where()} did not answer within {TIMEOUT:g}s") from None
        return proc.returncode, proc.stdout, proc.stderr

    def server_pid(self) -> int | None:
        """The server's pid, or None when no server runs (a plain command client: asking never attaches).

        A server that answers late, or answers with an error, runs: 0.
        """
        try:
            return int(self.run("display-message", "-p", "#{pid}").strip() or 0)
        except TmuxTimeout:
            return 0
        except TmuxUnavailable:
            return None
        except (TmuxCommandError, ValueError):
            return 0

    def failed(self, returncode: int, stderr: str) -> None:
        """A hook for transports that fail before tmux runs (ssh): raise their own error."""

    def addressed(self, record: PaneRecord) -> PaneRecord:
        address = self.address(record.pane_id)
        return record if address == record.pane_id else dataclasses.replace(record, pane_id=address)

    def list_panes(self) -> list[PaneRecord]:
        """Every pane of every session, in one round trip."""
        return [self.addressed(r) for r in parse_pane_records(self.run("list-panes", "-a", "-F", PANE_FORMAT))]

    def pane(self, pane_id: str) -> PaneRecord:
        """One pane by id; ``TmuxCommandError`` if it is gone."""
        return self.pane_read(pane_id, self.run(*self.pane_query(pane_id)))

    @staticmethod
    def pane_query(pane_id: str) -> tuple[str, ...]:
        """The command that describes one pane (``pane_read`` reads its output), whichever client sends it."""
        return ("display-message", "-p", "-t", pane_id, PANE_FORMAT)

    def pane_read(self, pane_id: str, output: str) -> PaneRecord:
        """``pane_query``'s output as the pane's record; ``TmuxCommandError`` if it is not one."""
        record = parse_pane_record(output.rstrip("\n").removesuffix(_END))
        if record is None:
            raise TmuxCommandError(f"tmux display-message: could not read pane {pane_id}")
        return self.addressed(record)

    def capture(self, pane_id: str, ansi: bool = True, history: int = 0) -> str:
        """The visible screen of a pane; with ``ansi`` its colours and attributes as escapes;
        with ``history`` that many lines of scrollback above it as well."""
        args = ["capture-pane", "-p"]
        if ansi:
            args.append("-e")
        if history:
            args += ["-S", f"-{history}"]
        return self.run(*args, "-t", pane_id)

    def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        """Send key names (``Enter``, ``C-c``, ``1``) or, with ``literal``, text typed as is.

        ``--`` ends the options, so a key or text starting with ``-`` is sent, not parsed.
        """
        if not keys:
            return
        args = ["send-keys"]
        if literal:
            args.append("-l")
        self.run(*args, "-t", pane_id, "--", *keys)
