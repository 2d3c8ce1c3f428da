"""One SSH connection per remote host, shared by everything that talks to it.

We run the system's OpenSSH client, so whatever ``ssh DEST`` does for the
user (``~/.ssh/config`` aliases, keys, agents, ProxyJump, known_hosts)
works here too.  One master connection per host (``ssh -M -N``, our own
child, ended by us) holds a control socket in a private folder; every other
command is a session multiplexed over it, which costs a few milliseconds
instead of a handshake.  Once the probe runs, it is the only such session:
tmux's control clients and commands travel inside it (probe_tmux.py), so a
host with many sessions stays within sshd's ``MaxSessions`` (10).

``BatchMode`` keeps ssh from ever asking for a password or a host key on
headspace's screen: a host that needs one is a host we cannot reach, said
in ssh's own words.

A link whose packets are dropped (a pulled cable, a laptop that slept, a
network change that took our address away) never closes by itself: TCP
would retransmit for a quarter of an hour.  ``ServerAlive*`` makes the
master ask the server for an answer after each second of silence and give
up after three, and the master's end ends every session multiplexed over
it (the probe, the control clients), which is how headspace learns the link
is gone.  Measured over a veth whose far end is down: the rows are stale
about 3 s after the last packet, against about half a second for a refused
or reset connection (tests/e2e/test_remote_network.py).  Shorter would
take a slow network's pause for a death.  ``ConnectTimeout`` bounds each
new attempt (the TCP connect and the server's banner), so a host that
drops SYNs costs an attempt of at most that, never the kernel's minutes of
SYN retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import shutil
import tempfile
from collections.abc import Sequence

from ..model import PaneAddress
from ..shared.config import HostSpec
from ..shared.lifeline import die_with_parent, end, exited, release
from ..tmux.control_pipe import ControlPipe
from ..tmux.server import TIMEOUT, TmuxServer, TmuxUnavailable
from .mux import ProbeMux

CONNECT_TIMEOUT = 5  # seconds for ssh to connect and authenticate
ALIVE_INTERVAL = 1  # after each second with nothing from the server, ask it for an answer...
ALIVE_COUNT = 2  # ...and end the link when a third would be needed: at most about 3 s of silence
STDERR_WAIT = 2.0  # seconds to read a dead ssh's last words: something else may hold its stderr open


async def read_at_most(stream: asyncio.StreamReader | None, timeout: float = STDERR_WAIT) -> bytes:
    """What a pipe has to say within ``timeout``: a pipe is never read without one.

    A multiplexed ssh client hands its stdin/stdout/stderr to the master,
    which keeps them open after the client is gone: waiting for the end of
    such a pipe hung discovery for good (issue 22).
    """
    if stream is None:
        return b""
    try:
        return await asyncio.wait_for(stream.read(1 << 16), timeout)
    except (TimeoutError, ConnectionError, ValueError):
        return b""


def ssh_reason(stderr: str) -> str:
    """ssh's own one-line reason from its stderr (the last meaningful line)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("Warning: Permanently added", "debug"))]
    return lines[-1] if lines else ""


CONTROL_PREFIX = "hs-ssh-"  # the ssh control folders in the temp folder: hs-ssh-<our pid>-<random>


class SshLink:
    """The shared connection to one host: the options every ssh command uses, and the master."""

    def __init__(self, spec: HostSpec, control_dir: str | None = None) -> None:
        self.spec = spec
        self._dir = control_dir
        self._master: asyncio.subprocess.Process | None = None
        self.reason = ""  # why the last connection attempt failed, in ssh's words

    @property
    def control_path(self) -> str:
        """A short path (unix sockets are limited to ~100 bytes) in a folder only we can use."""
        if self._dir is None:
            # 0700; the pid in the name says whose it is, so that a later start can sweep it once we are gone (cli/leftovers.py)
            self._dir = tempfile.mkdtemp(prefix=f"{CONTROL_PREFIX}{os.getpid()}-")
        digest = hashlib.sha1(f"{self.spec.destination}|{self.spec.ssh_config}".encode()).hexdigest()[:12]
        return os.path.join(self._dir, digest)

    def options(self, *, master: bool = False) -> list[str]:
        binary = shutil.which("ssh")
        if binary is None:
            raise TmuxUnavailable(f"{self.spec.name}: ssh is not installed")
        args = [binary]
        if self.spec.ssh_config:
            args += ["-F", self.spec.ssh_config]
        args += [
            "-o", "BatchMode=yes",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT}",
            "-o", f"ServerAliveInterval={ALIVE_INTERVAL}",
            "-o", f"ServerAliveCountMax={ALIVE_COUNT}",
            "-o", f"ControlPath={self.control_path}",
            "-o", "ControlMaster=yes" if master else "ControlMaster=no",
            "-o", "ControlPersist=no",
            "-T",  # never a terminal: tmux control mode and the probe speak through pipes
        ]  # fmt: skip
        return args

    def command(self, words: list[str]) -> list[str]:
        """``ssh … DEST -- words``, every word quoted for the remote shell."""
        return self.shell_command(shlex.join(words))

    def shell_command(self, line: str) -> list[str]:
        """``ssh … DEST -- line``: one line for the remote login shell, as written."""
        return [*self.options(), "--", self.spec.destination, line]

    async def run(self, line: str, timeout: float = CONNECT_TIMEOUT) -> bool:
        """Run one short shell line there through the master; False if it failed or took too long (then it is killed)."""
        if not self.connected:
            return False
        proc = await asyncio.create_subprocess_exec(
            *self.shell_command(line),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            return await exited(proc, timeout) and proc.returncode == 0
        finally:
            release(proc)  # our own child, by its handle: killed if it still runs (too slow, or headspace stopping)

    @property
    def connected(self) -> bool:
        return self._master is not None and self._master.returncode is None

    async def connect(self) -> None:
        """Start the master connection (if it is not up); ``TmuxUnavailable`` with ssh's reason if it cannot."""
        if self.connected and os.path.exists(self.control_path):
            return
        await self.close()
        try:
            os.unlink(self.control_path)  # a dead master's socket would be tried first
        except OSError:
            pass
        self._master = await asyncio.create_subprocess_exec(
            *self.options(master=True),
            "-N",
            "--",
            self.spec.destination,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # a Ctrl+C in headspace's terminal is not the link's
            preexec_fn=die_with_parent(),  # ...but headspace's death is, however it dies
        )
        deadline = asyncio.get_running_loop().time() + CONNECT_TIMEOUT + 5
        while asyncio.get_running_loop().time() < deadline:
            if self._master.returncode is not None or os.path.exists(self.control_path):
                break
            await exited(self._master, 0.05)
        if self._master.returncode is not None or not os.path.exists(self.control_path):
            stderr = b""
            if self._master.returncode is not None and self._master.stderr is not None:
                stderr = await read_at_most(self._master.stderr)
            await self.close()
            self.reason = ssh_reason(stderr.decode("utf-8", "replace")) or f"ssh to {self.spec.destination} failed"
            raise TmuxUnavailable(self.reason)
        self.reason = ""

    def drop(self) -> None:
        """Kill the master now, wherever the link is at (a link not trusted any more: this machine slept).

        Only the process: every session over it ends with it at once (a call
        waiting on a dead link among them), and whoever holds the link sees
        it gone as after any drop; ``close`` still does the tidying.
        """
        if self._master is not None and self._master.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._master.kill()  # our own child, by its handle

    async def close(self, grace: float = 2.0) -> None:
        """End the master (SIGTERM, then SIGKILL after ``grace``: a master whose link is dead spends it saying goodbye)."""
        master, self._master = self._master, None
        if master is None:
            return
        await end(master, grace, terminate=True)  # our own child, by its handle
        try:
            os.unlink(self.control_path)
        except OSError:
            pass

    def remove_folder(self) -> None:
        """The private ControlPath folder goes with the link (on every ending: see ``RemoteHost.close``)."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


class SshTmuxServer(TmuxServer):
    """The tmux server of a remote host, reached through its ``SshLink``.

    Pane ids become addresses with the host's name (``%3@box``) on the way
    in and lose it on the way out, so a pane of one host is never mistaken
    for the same ``%N`` of another.

    While the host's probe runs (``mux`` is set by ``RemoteHost``), control
    clients and tmux commands travel on the probe's one channel
    (probe_tmux.py, mux.py); without it (no probe yet, or a caller on the
    probe's own event loop) each is its own ssh session over the master, as
    before: the fallback.
    """

    def __init__(self, link: SshLink) -> None:
        super().__init__(link.spec.socket_name, link.spec.socket_path)
        self.link = link
        self.mux: ProbeMux | None = None

    def __repr__(self) -> str:
        return f"SshTmuxServer({self.link.spec.name}: {self._where()})"

    @property
    def key(self) -> str:
        return f"ssh:{self.link.spec.destination}|{super().key}"

    def _where(self) -> str:
        return f"{super()._where()} on {self.link.spec.name}"

    @property
    def binary(self) -> str:
        return "tmux"  # found on the remote's PATH

    def control_env(self) -> dict[str, str]:
        return self.env()  # the ssh client's environment (its agent socket, its config); tmux runs there

    def argv(self, *args: str) -> list[str]:
        return self.link.command(["tmux", *self.tmux_words(args)])

    def tmux_words(self, args: Sequence[str]) -> list[str]:
        """What follows ``tmux`` there: ``-u``, the socket, the command with tmux's own targets."""
        return ["-u", *self.socket_args(), *self.targets_to_tmux(args)]

    local_child = False  # ``ssh … tmux -C``: killing ssh would leave the tmux client there waiting for good

    def attach_directly(self) -> bool:
        return False  # the socket is on the other machine: a tmux there attaches (through the probe, or ssh)

    async def open_control(self, *args: str) -> ControlPipe:
        mux = self.mux
        if mux is not None and mux.running:
            return await mux.open(self.tmux_words(args))
        return await super().open_control(*args)

    def execute(self, args: Sequence[str]) -> tuple[int, str, str]:
        mux = self.mux
        if mux is not None and mux.running:
            try:
                return mux.run(self.tmux_words(args), TIMEOUT)
            except TmuxUnavailable as exc:
                raise TmuxUnavailable(f"{self.link.spec.name}: {exc}") from None
            except RuntimeError:
                pass  # on the probe's own loop: it cannot wait for itself; a command of its own
        return super().execute(args)

    def address(self, pane_id: str) -> str:
        return str(PaneAddress(pane_id, self.link.spec.name)) if pane_id.startswith("%") else pane_id

    def tmux_id(self, address: str) -> str:
        parsed = PaneAddress.parse(address)
        return parsed.pane if address.startswith("%") and parsed.host == self.link.spec.name else address

    def socket_file(self) -> str:
        return ""  # not on this machine: a lost server is noticed by the link instead

    def failed(self, returncode: int, stderr: str) -> None:
        # ssh exits 255 for its own failures (no connection, refused key);
        # anything else is the remote tmux's own exit status.
        if returncode == 255:
            raise TmuxUnavailable(f"{self.link.spec.name}: {ssh_reason(stderr) or 'ssh failed'}")
        if "command not found" in stderr and "tmux" in stderr:
            raise TmuxUnavailable(f"{self.link.spec.name}: tmux is not installed there")
