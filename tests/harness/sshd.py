"""A real, private OpenSSH server on 127.0.0.1 for the remote-host tests.

Why a real sshd and not a mock: what the product must survive is OpenSSH's
own behaviour (banner waits, ``MaxSessions``, a master connection that dies
with the server, the exact one-line errors ``ssh`` prints), and only the real
programs show it.

Everything is private to one test:

* the server's host key, the client's key pair, ``authorized_keys``, the
  known-hosts file, the pid file and the log live in a temp dir;
* the server reads only our ``sshd_config`` (``-f``), never ``/etc/ssh``'s;
* the client reads only our ``ssh_config`` (``ssh -F <file> box``), which is
  what keeps ``~/.ssh`` (its config, keys, known hosts and agent) out of it;
* remote commands get HOME, the XDG folders, ``TMUX_TMPDIR`` and
  ``CLAUDE_CONFIG_DIR`` in temp dirs through the server's ``SetEnv``, so a
  tmux started over ssh is a private server and never the user's.

``stop()`` kills the listener *and* every per-connection sshd it forked (those
call ``setsid()``, so they are not in our process group: we find them by
walking the process tree down from the listener's pid), which drops live
connections as a dead machine would; ``start()`` brings the server back on
the same port with the same host key, for reconnect tests.

Usage::

    with running_sshd(tmp_path, claude="/path/to/claude") as box:
        subprocess.run(["ssh", "-F", str(box.client_config), box.alias, "tmux -V"], check=True)
        box.stop()   # connections drop
        box.start()  # same port, same host key
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil
import pytest

SSHD = "/usr/sbin/sshd"
# Where OpenSSH 9.2 as root chroots its pre-auth child; compiled in, not configurable.
PRIVSEP_DIR = Path("/run/sshd")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def find_sshd() -> str:
    """The sshd binary; skips the test locally when it is missing, fails it under ``CI=true``.

    sshd must be run by its absolute path (it re-executes itself per connection).
    """
    if os.access(SSHD, os.X_OK):
        return SSHD
    message = f"{SSHD} is missing (apt-get install openssh-server)"
    if _in_ci():
        pytest.fail(f"CI=true and {message}")
    pytest.skip(message)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _quote(token: str) -> str:
    """One sshd_config / ssh_config argument, double-quoted (both read ``"..."`` as one token)."""
    if any(c in token for c in '"\\\n\r'):
        raise ValueError(f"cannot put {token!r} into an OpenSSH config file")
    return f'"{token}"'


def _keygen(path: Path, comment: str) -> str:
    """An ed25519 key pair without a passphrase; returns the public key line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True, stdin=subprocess.DEVNULL)
    return path.with_suffix(".pub").read_text().strip()


def _read_banner(port: int, timeout: float, address: str = "127.0.0.1") -> bytes:
    with socket.create_connection((address, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        data = b""
        while b"\n" not in data:
            chunk = sock.recv(256)
            if not chunk:
                break
            data += chunk
        return data


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Sshd:
    """One private sshd and the client config that reaches it as ``ssh -F client_config box``.

    ``root`` holds keys, configs and the log; ``short`` is a short dir under
    /tmp for sockets (a unix socket path is limited to ~104 bytes, and pytest's
    ``tmp_path`` is long): the remote ``XDG_RUNTIME_DIR`` and ``TMUX_TMPDIR``,
    and ``control_dir`` for ``ControlPath``.

    ``remote_env`` is what every remote command sees (on top of what sshd
    itself sets: USER, LOGNAME, SHELL, MAIL, SSH_*); ``env`` overrides or adds.
    ``path_dirs`` go in front of the remote PATH (tmux's and ``claude``'s dirs
    are added for you). ``max_sessions`` is sshd's ``MaxSessions`` (channels
    per connection; OpenSSH's default is 10, like a real user's server).

    ``netns`` runs the server inside that network namespace (``ip netns exec``,
    see ``tests/harness/netns.py``): it then listens on ``listen`` (all of the
    namespace's own addresses by default, so it still answers after the
    namespace's address moves) and is reached at ``address``, which the
    client config and the known-hosts file name. ``port`` is a free one on
    127.0.0.1 unless given.
    """

    alias = "box"

    def __init__(
        self,
        root: Path,
        *,
        env: Mapping[str, str] | None = None,
        claude: str | os.PathLike[str] | None = None,
        path_dirs: list[str] | None = None,
        max_sessions: int | None = None,
        extra_config: str = "",
        address: str = "127.0.0.1",
        port: int | None = None,
        netns: str | None = None,
        listen: str | None = None,
    ) -> None:
        self.sshd = find_sshd()
        self.address = address
        self.netns = netns
        self.listen = listen or ("0.0.0.0" if netns else address)
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.short = Path(tempfile.mkdtemp(prefix="hs-sshd-short-"))
        self.control_dir = self.short / "cm"
        self.control_dir.mkdir(mode=0o700)
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.port = port or free_port()
        self.max_sessions = max_sessions
        self.extra_config = extra_config
        self.process: subprocess.Popen[bytes] | None = None

        keys = self.root / "keys"
        keys.mkdir(mode=0o700, exist_ok=True)
        self.host_key = keys / "host_ed25519"
        self.client_key = keys / "client_ed25519"
        self.host_public = _keygen(self.host_key, "headspace-test-host")
        client_public = _keygen(self.client_key, "headspace-test-client")
        self.authorized_keys = keys / "authorized_keys"
        self.authorized_keys.write_text(client_public + "\n")
        self.authorized_keys.chmod(0o600)

        self.home = self.root / "home"
        self.home.mkdir(exist_ok=True)
        run = self.short / "run"
        run.mkdir(mode=0o700)
        tmux_tmpdir = self.short / "tmux"
        tmux_tmpdir.mkdir(mode=0o700)
        dirs = list(path_dirs or [])
        tmux = shutil.which("tmux")
        if claude is not None:
            dirs.append(str(Path(claude).resolve().parent))
        if tmux is not None:
            dirs.append(str(Path(tmux).parent))
        dirs += ["/usr/local/bin", "/usr/bin", "/bin"]
        self.remote_env: dict[str, str] = {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_RUNTIME_DIR": str(run),
            "TMUX_TMPDIR": str(tmux_tmpdir),
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "LANG": "C.UTF-8",
            "PATH": ":".join(dict.fromkeys(dirs)),
        }
        self.remote_env.update(env or {})

        self.pid_file = self.root / "sshd.pid"
        self.log_file = self.root / "sshd.log"
        self.config = self.root / "sshd_config"
        self.config.write_text(self._server_config())
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text("")
        self.trust(address)
        self.client_config = self.root / "ssh_config"
        self.client_config.write_text("")
        self.add_alias(self.alias, self.port)

    # -- configuration -------------------------------------------------

    def _server_config(self) -> str:
        """Only what this test needs; everything that could reach outside the temp dir is off.

        ``StrictModes no``: the key files sit under /tmp, which is world
        writable, and StrictModes would refuse them for that. ``UsePAM no``:
        PAM would run the machine's session stack (and, as root, login
        records). ``PermitUserRC no``: sshd would otherwise run
        ``.ssh/rc`` from the *real* home (it chdirs to the passwd home, not
        our HOME). ``SetEnv`` is applied after sshd's own HOME and PATH, so
        it overrides them (OpenSSH >= 8.7).
        """
        lines = [
            f"ListenAddress {self.listen}:{self.port}",
            f"HostKey {_quote(str(self.host_key))}",
            f"PidFile {_quote(str(self.pid_file))}",
            f"AuthorizedKeysFile {_quote(str(self.authorized_keys))}",
            "AuthenticationMethods publickey",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "HostbasedAuthentication no",
            "PermitRootLogin prohibit-password",
            "UsePAM no",
            "StrictModes no",
            "PermitUserRC no",
            "PermitUserEnvironment no",
            "X11Forwarding no",
            "AllowAgentForwarding no",
            "PrintMotd no",
            "PrintLastLog no",
            "LogLevel VERBOSE",
            "SetEnv " + " ".join(_quote(f"{k}={v}") for k, v in self.remote_env.items()),
        ]
        if self.max_sessions is not None:
            lines.append(f"MaxSessions {self.max_sessions}")
        return "\n".join(lines) + "\n" + self.extra_config

    def trust(self, address: str) -> None:
        """Let the client know this server's host key at ``address`` too (a host whose address moved)."""
        with self.known_hosts.open("a") as f:
            f.write(f"[{address}]:{self.port} {self.host_public}\n")

    def add_alias(self, alias: str, port: int, **options: str) -> None:
        """Append a ``Host alias`` block for our address and ``port`` (e.g. for a host that never answers).

        ``options`` are extra ssh_config keywords (``ConnectTimeout="2"``).
        ``IdentityAgent none`` keeps the user's agent (SSH_AUTH_SOCK) out;
        ``UpdateHostKeys no`` keeps ssh from rewriting our known-hosts file.
        """
        settings = {
            "HostName": self.address,
            "Port": str(port),
            "User": self.user,
            "IdentityFile": _quote(str(self.client_key)),
            "IdentitiesOnly": "yes",
            "IdentityAgent": "none",
            "UserKnownHostsFile": _quote(str(self.known_hosts)),
            "GlobalKnownHostsFile": "/dev/null",
            "StrictHostKeyChecking": "yes",
            "UpdateHostKeys": "no",
            "BatchMode": "yes",
            "LogLevel": "ERROR",
            "ForwardAgent": "no",
            "ForwardX11": "no",
            "PermitLocalCommand": "no",
            **options,
        }
        block = f"Host {alias}\n" + "".join(f"    {k} {v}\n" for k, v in settings.items())
        with self.client_config.open("a") as f:
            f.write(block)

    def ssh_command(self, *args: str) -> list[str]:
        """``ssh -F <client_config> box <args>``: the argv the product will build."""
        return ["ssh", "-F", str(self.client_config), self.alias, *args]

    def ssh(self, *args: str, timeout: float = 15.0, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        """Run one remote command over a new connection; text output, never raises on a non-zero exit."""
        argv = ["ssh", "-F", str(self.client_config), *options, self.alias, *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    @contextlib.contextmanager
    def master(self, timeout: float = 10.0) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
        """A ControlMaster connection (``ssh -M -N``) as our own child; yields it and its ControlPath.

        Sessions reach it with ``-o ControlPath=<path>`` (``-S``); ``ssh -O
        check`` asks it whether it is alive. The path is under the short dir
        (``%C`` is a 40-char hash; a unix socket path must stay under ~104
        bytes). Ready when ``-O check`` answers; killed on exit.
        """
        path = str(self.control_dir / "cm-%C")
        argv = ["ssh", "-F", str(self.client_config), "-M", "-N", "-o", f"ControlPath={path}", "-o", "ControlPersist=no", self.alias]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while not self.check_master(path):
                if proc.poll() is not None:
                    raise RuntimeError(f"ssh master exited with {proc.returncode}: {proc.stderr.read().decode(errors='replace') if proc.stderr else ''}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"ssh master not ready within {timeout}s")
                time.sleep(0.02)
            yield proc, path
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()

    def check_master(self, control_path: str) -> bool:
        """``ssh -O check``: does a master answer on this ControlPath?"""
        argv = ["ssh", "-F", str(self.client_config), "-o", f"ControlPath={control_path}", "-O", "check", self.alias]
        return subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=10).returncode == 0

    # -- the server ----------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 10.0) -> None:
        """Start sshd in the foreground (``-D``) in its own session; return once it sends its banner.

        As root, sshd 9.2 insists on its privilege-separation dir
        (/run/sshd, normally made by the init script or systemd-tmpfiles; a
        container without init has none): we create it, empty, root-owned,
        0755, exactly as Debian's own init script does.
        """
        if self.running:
            return
        if os.geteuid() == 0 and not PRIVSEP_DIR.is_dir():
            PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        seen = self.log_file.stat().st_size if self.log_file.exists() else 0  # a restart's log goes on: only what follows counts
        log = self.log_file.open("ab")
        inside = ["ip", "netns", "exec", self.netns] if self.netns else []  # exec's sshd itself: our child is the listener
        self.process = subprocess.Popen(
            [*inside, self.sshd, "-D", "-f", str(self.config), "-E", str(self.log_file)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C"},
        )
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.process.returncode}:\n{self.log()}")
            if self.netns is not None:
                if b"Server listening on" in self.log_file.read_bytes()[seen:]:  # logged once it listens: it may be reachable only from inside (a jump host's target)
                    return
            else:
                with contextlib.suppress(OSError):
                    if _read_banner(self.port, timeout=1.0, address=self.address).startswith(b"SSH-2.0-"):
                        return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"sshd did not answer on {self.address}:{self.port} within {timeout}s:\n{self.log()}")
            time.sleep(0.02)

    def connection_pids(self) -> list[int]:
        """Every process below the listener: per-connection sshds and the commands they run.

        A tmux server started over ssh daemonizes (it is re-parented to init),
        so it is not among them and survives stop(), as it would on a real box.
        """
        if self.process is None:
            return []
        try:
            return [p.pid for p in psutil.Process(self.process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, timeout: float = 5.0) -> None:
        """Kill sshd and everything it forked (SIGKILL), as if the machine's sshd died.

        The per-connection sshds call setsid(), so killing our process group
        would miss them; and a SIGTERM'd listener leaves them running (that is
        how ``systemctl restart ssh`` keeps sessions). So: snapshot the tree
        from our listener's pid first (once a parent dies its children are
        re-parented and can no longer be found), then kill every one of them.
        Only descendants of the sshd we started are ever signalled.
        """
        if self.process is None:
            return
        procs: list[psutil.Process] = []
        with contextlib.suppress(psutil.NoSuchProcess):
            listener = psutil.Process(self.process.pid)
            procs = [listener, *listener.children(recursive=True)]
        for proc in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()  # psutil checks the pid still is the same process (its create time)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)
        self.process = None
        # Dead means gone or a zombie (its sockets are closed): the orphans are
        # reaped by init, which in a container may be slow or never happen.
        deadline = time.monotonic() + timeout
        while any(_alive(p) for p in procs) and time.monotonic() < deadline:
            time.sleep(0.01)

    def close(self) -> None:
        """Stop the server and remove every file it had (keys, configs, sockets, the log)."""
        self.stop()
        shutil.rmtree(self.short, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        """sshd's log (``-E``): why a login was refused, connections, disconnects."""
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""


@contextlib.contextmanager
def running_sshd(tmp_path: Path | None = None, **options: object) -> Iterator[Sshd]:
    """A started :class:`Sshd` (files under ``tmp_path/sshd`` or a new temp dir); stopped and removed on exit.

    ``options`` are :class:`Sshd`'s: ``env``, ``claude``, ``path_dirs``, ``max_sessions``, ``extra_config``.
    """
    root = tmp_path / "sshd" if tmp_path is not None else Path(tempfile.mkdtemp(prefix="hs-sshd-"))
    server = Sshd(root, **options)  # type: ignore[arg-type]
    try:
        server.start()
        yield server
    finally:
        server.close()


@contextlib.contextmanager
def silent_host(banner: bytes = b"") -> Iterator[int]:
    """A port on 127.0.0.1 that accepts TCP connections and then never says a word.

    Models a host whose network answers but whose sshd hangs (a frozen
    machine, a firewall that accepts, a stuck tarpit): ssh's connect succeeds
    and only its banner wait can time out (``ConnectTimeout`` covers that on
    OpenSSH 9.2). With ``banner`` (e.g. ``b"SSH-2.0-OpenSSH_9.2\\r\\n"``)
    it sends that first and hangs in the key exchange instead, which
    ``ConnectTimeout`` does *not* cover. Yields the port; connections are held
    open until exit.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            if banner:
                with contextlib.suppress(OSError):
                    conn.sendall(banner)

    thread = threading.Thread(target=accept, name="silent-host", daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        done.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()
