"""One tmux control-mode client per session: change signals and commands without forking.

``tmux -C attach-session -t $ID`` gives, on one pipe, ``%output`` for every
pane of that session the moment it writes (the "this pane changed" signal),
window and session notifications for discovery, and a command channel where
``capture-pane`` costs ~1 ms instead of ~3.4 ms for a forked tmux.

It must not change anything the user sees: the client never sets a size
(never ``refresh-client -C``: tmux leaves a control client without one out
of every window's size), creates no session, and ends without detaching where it can (its process killed, or
its protocol socket closed: a detach under load can make tmux exit,
control_pipe.ProcessPipe); where it must detach (``ssh … tmux``), it
pauses its panes first.  ``pause-after`` flow
control keeps a flooding pane from backing up the pipe: tmux pauses it, we
note it changed, continue it, and re-capture.

Protocol notes (tmux(1), CONTROL MODE): each command produces a block
``%begin T N F`` … ``%end T N F`` (or ``%error``); notifications never occur
inside a block, so a block is read whole, whatever its lines start with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable

from .control_pipe import LINE_LIMIT, ControlPipe, LineSource
from .server import TmuxCommandError, TmuxServer, TmuxUnavailable

log = logging.getLogger(__name__)
PAUSE_AFTER = 2  # seconds a pane may fall behind before tmux pauses it
__all__ = ["LINE_LIMIT", "ControlClient", "ControlError", "quote"]
ATTACH_SETTLE = 2.0  # a close during the attach waits this long for it to be done
QUIET_WAIT = 1.0  # s for each of the commands that pause a detaching client's panes (_quiet)
QUIET_SETTLE = 0.1  # s after them before the detach
FLOOD_WINDOW = 0.5  # a pane that writes more than FLOOD_BYTES within this many seconds...
FLOOD_BYTES = 256 << 10
FLOOD_HOLD = 0.5  # ...is not sent to us for this long (see ControlClient._spend)
_NOTIFICATION = re.compile(r"^%(\S+)(?: (.*))?$")


class ControlError(Exception):
    """A control-mode command failed; the message is tmux's, in one line."""


def quote(arg: str) -> str:
    """Quote one argument for tmux's command parser (``#`` would start a comment)."""
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


class ControlClient:
    """A control client attached to one session.

    ``on_output(pane_id, size)`` is called for every ``%output`` with the
    size of what was written (escaped; after a paused pane continues: a large
    size, as everything may have changed); ``on_event(name, args)`` for other
    notifications;
    ``on_exit(reason)`` once when the client ends.

    The bytes travel however the server says (``server.open_control``: a
    ``tmux -C`` child here, or one stream of a remote probe's channel,
    control_pipe.py); everything below reads and writes only ``self.pipe``.
    """

    def __init__(
        self,
        server: TmuxServer,
        session_id: str,
        *,
        on_output: Callable[[str, int], None],
        on_event: Callable[[str, str], None] = lambda name, args: None,
        on_exit: Callable[[str], None] = lambda reason: None,
    ) -> None:
        self.server = server
        self.session_id = session_id
        self.on_output = on_output
        self.on_event = on_event
        self.on_exit = on_exit
        self.pipe: ControlPipe | None = None
        self._pending: list[asyncio.Future[list[str]]] = []
        self._ready = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self._write_lock = asyncio.Lock()
        self.closed = False
        self.overlong = 0  # lines dropped for their length
        self._budget: dict[str, tuple[float, int]] = {}  # pane (tmux's id) -> (window start, bytes in it)
        self._held: set[str] = set()  # panes paused by us for flooding
        self._quieting = False  # pausing every pane before a detach (_quiet): its %pause lines are not continued
        self.floods = 0  # times a pane was held back

    async def start(self, timeout: float = 5.0) -> None:
        """Attach and wait until tmux reports the session (only then may commands be sent)."""
        # -E: attaching must not apply update-environment to the user's session (it would
        # replace or remove SSH_AUTH_SOCK, DISPLAY and the like there with headspace's).
        # No ``ignore-size``: it would change nothing (a control client that never set a size is left out of
        # window sizes already), but tmux (3.2 to 3.7 at least) walks every client for each flagged one, in each
        # window, at every attach: with hundreds of ours and no terminal attached, every attach cost a whole
        # server's worth of sessions times clients squared, and the server sat at a core for minutes.
        args = ("-C", "attach-session", "-E", "-f", f"pause-after={PAUSE_AFTER}", "-t", self.session_id)
        spawn = asyncio.ensure_future(self.server.open_control(*args))
        try:
            self.pipe = await asyncio.shield(spawn)
        except OSError as exc:
            raise TmuxUnavailable(f"cannot start tmux: {exc.strerror or exc}") from None
        except asyncio.CancelledError:
            # Cancelled while tmux was being started: it may exist already; end it (once it has
            # attached, see close), then give up.
            try:
                self.pipe = await spawn
            except (OSError, TmuxUnavailable):
                raise asyncio.CancelledError from None
            self._reader = asyncio.create_task(self._read_loop())
            await self.close()
            raise
        self._reader = asyncio.create_task(self._read_loop())
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            await self.close()
            raise TmuxUnavailable(f"tmux control client for session {self.session_id} did not attach") from None
        except asyncio.CancelledError:
            await self.close()  # the tmux -C process is ours to end, cancelled or not
            raise
        if self.closed:
            raise TmuxUnavailable(f"session {self.session_id} is gone")

    async def command(self, *args: str, timeout: float = 5.0) -> list[str]:
        """Run one tmux command through the client; its output lines."""
        if self.closed or self.pipe is None:
            raise ControlError("control client is closed")
        future: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        line = " ".join(quote(a) for a in self.server.targets_to_tmux(args)) + "\n"
        async with self._write_lock:  # the order of writes is the order of blocks
            self._pending.append(future)
            try:
                self.pipe.write(line.encode())
                await self.pipe.drain()
            except (BrokenPipeError, ConnectionResetError):
                self._pending.remove(future)
                raise ControlError("control client went away") from None
        return await asyncio.wait_for(future, timeout)

    async def capture(self, pane_id: str, ansi: bool = True, history: int = 0) -> str:
        """The visible screen, or with ``history`` that many lines of scrollback above it as well."""
        args = ["capture-pane", "-p", "-t", pane_id]
        if ansi:
            args.insert(2, "-e")
        if history:
            args[2:2] = ["-S", f"-{history}"]
        return "\n".join(await self.command(*args)) + "\n"

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        await self.command("send-keys", *(["-l"] if literal else []), "-t", pane_id, "--", *keys)

    async def close(self) -> None:
        """End the client (its pipe's ``end``): tmux drops it; nothing else changes.

        A client is never dropped in the middle of attaching: tmux 3.3a has
        crashed when a client went away before the server had finished
        setting it up (upstream PR #5004), so a close that comes early first
        waits (briefly) for the attach to be done or to fail.
        """
        if self.pipe is None:
            return
        try:
            if not self._ready.is_set() and self.pipe.running and self._reader is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._ready.wait()), ATTACH_SETTLE)
            if self.pipe.detaches and self._ready.is_set() and self.pipe.running:
                await self._quiet()
        finally:
            # Even when cancelled while waiting (headspace quitting mid-attach) the client ends:
            # each pipe's end releases what it holds however it is cut short.
            self.closed = True
            try:
                await self.pipe.end(2.0)  # cut off (or detached), then a kill after 2 s
            finally:
                if self._reader is not None:
                    self._reader.cancel()
                self._fail_pending("control client closed")
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)  # let its pipe close now

    async def _quiet(self) -> None:
        """Before a detach: pause every pane of the session for this client, so tmux holds no output queued for it.

        tmux (3.3a to 3.7 at least) can exit when a control client detaches
        with output queued for a busy pane (control_pipe.ProcessPipe); a
        paused pane's queued output is dropped at once and no more is queued.
        Only where the client cannot be cut off instead (``ssh … tmux``).
        The panes that wrote lately are paused at once, without waiting for
        tmux's answer (it may be far behind their output: tmux acts on the
        command as it reads it); then every other pane the session has.
        Best effort: a pane made in between, or no answer, and it detaches as it is.
        """
        self._quieting = True
        busy = [pane for pane in self._budget if pane.startswith("%")]
        first = asyncio.ensure_future(self.command("refresh-client", *_pauses(busy), timeout=QUIET_WAIT)) if busy else None
        try:
            rest = [pane for pane in await self.command("list-panes", "-s", "-F", "#{pane_id}", timeout=QUIET_WAIT) if pane not in busy]
            if rest:
                await self.command("refresh-client", *_pauses(rest), timeout=QUIET_WAIT)
        except (ControlError, TimeoutError) as exc:
            log.debug("pausing the panes of %s before its detach: %s", self.session_id, exc or "no answer")
        await asyncio.sleep(QUIET_SETTLE)  # tmux runs what it read within a turn of its loop
        if first is not None:
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)

    # -- reading ------------------------------------------------------------------
    async def _read_loop(self) -> None:
        assert self.pipe is not None
        stdout = self.pipe.stdout
        address = self.server.address
        reason = "eof"
        try:
            while True:
                try:
                    raw = await stdout.readline()
                except ValueError:  # a line past the reader's limit: dropped (the client lives on)
                    self.overlong += 1
                    continue
                if not raw:
                    break
                if raw.startswith((b"%output ", b"%extended-output ")):
                    self._output_line(raw)  # by far the most frequent line: no decoding, no regex
                    continue
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                if line.startswith("%begin "):
                    await self._read_block(stdout, line)
                    continue
                match = _NOTIFICATION.match(line)
                if match is None:
                    continue
                name, rest = match.group(1), match.group(2) or ""
                if name == "pause":
                    # Behind by PAUSE_AFTER seconds: skip the backlog, let it run, re-capture.
                    # (A pane we paused ourselves for flooding is let go by _hold, not here.)
                    pane = rest.strip()
                    if pane not in self._held and not self._quieting:  # not the pauses of our own detach (_quiet)
                        asyncio.create_task(self._continue(pane))
                elif name == "continue":
                    self.on_output(address(rest.strip()), 1 << 20)
                elif name == "session-changed":
                    self._ready.set()
                elif name == "exit":
                    reason = rest or "exit"
                    break
                elif name == "pane-mode-changed":
                    self.on_event(name, address(rest.strip()))
                else:
                    self.on_event(name, rest)
        except (asyncio.CancelledError, ConnectionResetError):
            reason = "closed"
        finally:
            self.closed = True
            self._ready.set()
            self._fail_pending(f"control client ended: {reason}")
            self.on_exit(reason)

    def _output_line(self, raw: bytes) -> None:
        """``%output %N DATA`` or (with pause-after) ``%extended-output %N AGE : DATA``: which
        pane wrote, and about how much (the escaped length; only its size matters)."""
        start = raw.index(b" ") + 1
        stop = raw.find(b" ", start)
        if stop < 0:
            return
        pane = raw[start:stop].decode("ascii", "replace")
        if raw.startswith(b"%extended-output "):
            colon = raw.find(b" : ", stop)
            stop = colon + 2 if colon >= 0 else stop
        size = max(0, len(raw) - stop - 2)
        self.on_output(self.server.address(pane), size)
        self._spend(pane, size)

    def _spend(self, pane: str, size: int) -> None:
        """Hold back a pane that writes more than FLOOD_BYTES in FLOOD_WINDOW.

        A ``yes`` in a watched session sent us about 18 MB a second, every
        byte of it read and thrown away (only "this pane changed" matters),
        and a key's reply waited behind it.  Such a pane is paused for this
        client (tmux keeps running it and drawing it for everyone else) and
        let go after FLOOD_HOLD, with one "changed" so it is read again.
        """
        if pane in self._held:
            return
        now = time.monotonic()
        if len(self._budget) > 64:  # panes come and go in a long-lived session: keep only the live windows
            self._budget = {p: b for p, b in self._budget.items() if now - b[0] <= FLOOD_WINDOW}
        began, spent = self._budget.get(pane, (now, 0))
        if now - began > FLOOD_WINDOW:
            began, spent = now, 0
        spent += size
        self._budget[pane] = (began, spent)
        if spent > FLOOD_BYTES and not self.closed:
            self._held.add(pane)
            self.floods += 1
            self._budget.pop(pane, None)
            asyncio.create_task(self._hold(pane))

    async def _hold(self, pane: str) -> None:
        try:
            await self.command("refresh-client", "-A", f"{pane}:pause")
            await asyncio.sleep(FLOOD_HOLD)
            await self.command("refresh-client", "-A", f"{pane}:continue")
        except (TimeoutError, ControlError):
            pass
        finally:
            self._held.discard(pane)
        if not self.closed:
            self.on_output(self.server.address(pane), 1 << 20)  # whatever it wrote meanwhile

    async def _read_block(self, stdout: LineSource, begin: str) -> None:
        stamp = begin.split(" ", 1)[1]
        lines: list[str] = []
        while True:
            raw = await stdout.readline()
            if not raw:
                return
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            if line in (f"%end {stamp}", f"%error {stamp}"):
                ok = line.startswith("%end")
                break
            lines.append(line)
        if not self._pending:
            return  # the block of the attach command itself
        future = self._pending.pop(0)
        if future.done():
            return
        if ok:
            future.set_result(lines)
        else:
            future.set_exception(ControlError(" ".join(lines).strip() or "tmux command failed"))

    async def _continue(self, pane_id: str) -> None:
        try:
            await self.command("refresh-client", "-A", f"{pane_id}:continue")
        except (TimeoutError, ControlError):
            pass

    def _fail_pending(self, why: str) -> None:
        while self._pending:
            future = self._pending.pop(0)
            if not future.done():
                future.set_exception(ControlError(why))


def _pauses(panes: list[str]) -> list[str]:
    """``refresh-client`` words that pause ``panes`` for this client."""
    return [word for pane in panes for word in ("-A", f"{pane}:pause")]


async def run_via(client: ControlClient | None, server: TmuxServer, *args: str, wait: float = 10.0) -> str:
    """``server.run(*args)``'s output, asked through ``client`` (a control client of that server already attached) when there is one.

    A tmux client of its own costs a server with hundreds of control clients
    about half a second of its CPU, while it serves nobody (at 300 sessions,
    each with ours: 0.52 s for a ``list-sessions``, 6 ms with none); through
    a client already attached the same command costs it about 12 ms.  Forked
    (in a thread) without one, or when that client ends or does not answer
    within ``wait``; tmux's own refusal is ``TmuxCommandError``, as a forked
    client's is.
    """
    if client is not None and not client.closed:
        try:
            return "".join(f"{line}\n" for line in await client.command(*args, timeout=wait))
        except ControlError as exc:
            if not client.closed:
                raise TmuxCommandError(str(exc)) from None  # tmux's own refusal: the same from any client
            log.info("tmux %s through a control client failed (%s); asked by a tmux client", args[0] if args else "", exc)
        except TimeoutError:
            log.info("tmux %s through a control client took over %gs; asked by a tmux client", args[0] if args else "", wait)
    return await asyncio.to_thread(server.run, *args)
