"""Test hosts on a real network: a network namespace each, joined to this machine by a veth pair.

Why: what a real network does to a link (packets dropped without a word,
an address that moves, a laptop that is silent for an hour) cannot be made
on loopback, where a dead peer always answers with a reset. Each
:class:`NetHost` is a private network namespace (``headspace-test-<pid>-<n>``) with one
veth pair: this machine's end (``host_if``, ``host_addr``) and the
namespace's end (``ns_if``, ``ns_addr``), a private /30 of their own. A real
sshd (``tests/harness/sshd.py``, started with ``ip netns exec``) listens in
the namespace, so the only way to it is across the veth.

* ``down()`` takes the namespace's interface down: its peer here loses
  carrier and every packet to the host is dropped, with no reset and no
  refusal (what a pulled cable, a sleeping laptop or a dead wifi does);
  ``up()`` brings it back with the same address.
* ``move()`` gives both ends a new /30 (a network change): the old TCP
  connection's addresses are gone and it dies silently; the client reaches
  the host at its new ``ns_addr`` (the ssh config's ``HostName``, as DNS
  would say).
* ``link_to()`` makes a second namespace reachable *only* from this one
  (a veth between the two namespaces, nothing from this machine): the host
  behind a ProxyJump.

This kernel has no ``netem`` and no iptables, so there is no added delay or
loss rate here: a link is up or silent.

Everything is removed at the end, however the test ends (``net_hosts``
is a context manager): the processes inside each namespace (all started
there by the test: the sshd and what it ran) are killed by pid, the veth
pairs deleted, the namespaces deleted. Namespaces of this harness left by
a test process that was itself killed (``headspace-test-<dead pid>-*``) are swept at
the next start. Names and addresses are picked under a lock file, so two
test processes at once never pick the same /30.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from .sshd import Sshd

LOCK = Path("/tmp/headspace-test-netns.lock")
PREFIX = "headspace-test-"  # distinctive: the sweep removes only namespaces of this name whose test process is gone
POOL = ipaddress.ip_network("10.213.0.0/16")  # carved into /30s; any overlapping with this machine's routes is skipped
SSH_PORT = 2222
FENCE_BASE = 10_000_000  # our blackhole routes' metric is this plus the test process's pid: below a live /30's own route
# (metric 0), so a fence only acts once that route is gone, and a fence whose process died is known as such


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=10)


def available() -> None:
    """Skip (fail under ``CI=true``) where network namespaces cannot be made: not root, no ``ip``."""
    message = ""
    if os.geteuid() != 0:
        message = "network namespaces need root"
    elif _ip("netns", "list", check=False).returncode != 0:
        message = "`ip netns` does not work here"
    if message:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI=true and {message}")
        pytest.skip(message)


def _used_networks() -> list[ipaddress.IPv4Network]:
    """Every IPv4 network this machine routes or has an address in (so a new /30 never shadows one)."""
    found = []
    for line in _ip("-4", "-o", "addr", "show").stdout.splitlines() + _ip("-4", "route", "show", "table", "all").stdout.splitlines():
        for word in line.split():
            with contextlib.suppress(ValueError):
                if "/" in word or word[0].isdigit():
                    found.append(ipaddress.ip_network(word, strict=False))
    return found


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Held while names and /30s are picked and made, so another test process never picks the same."""
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)  # never through a planted link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _free_slash30(taken: set[ipaddress.IPv4Network]) -> ipaddress.IPv4Network:
    """A /30 nothing here routes, fenced at once (see ``_fence``)."""
    used = _used_networks()
    start = (os.getpid() * 7) % (1 << 14)  # a different place in the pool per test process; the lock makes it safe anyway
    subnets = list(POOL.subnets(new_prefix=30))
    for i in range(len(subnets)):
        net = subnets[(start + i) % len(subnets)]
        if net not in taken and not any(net.overlaps(u) for u in used if u.prefixlen > 0):
            taken.add(net)
            _fence(net)
            return net
    raise RuntimeError(f"no free /30 left in {POOL}")


def _fence(net: ipaddress.IPv4Network) -> None:
    """A blackhole route for ``net`` on this machine, under the veth's own route.

    Without it, a packet for one of our addresses that this machine no longer
    routes (an address that moved, a host only reachable through a jump host)
    would leave by the default route onto the machine's real network. With
    it, such packets go nowhere, as on a network where that address is gone.
    """
    _ip("route", "add", "blackhole", str(net), "metric", str(FENCE_BASE + os.getpid()), check=False)


def _unfence(net: ipaddress.IPv4Network) -> None:
    _ip("route", "del", "blackhole", str(net), "metric", str(FENCE_BASE + os.getpid()), check=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_leftovers() -> None:
    """Remove this harness's namespaces and fences whose test process is gone (it was killed before its cleanup ran)."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name[len(PREFIX) :].split("-") if name.startswith(PREFIX) else []
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and not _pid_alive(int(parts[0])):
            _remove_namespace(name)
    for line in _ip("-o", "route", "show", "type", "blackhole", check=False).stdout.splitlines():
        words = line.split()  # "blackhole 10.213.1.0/30 metric 10012345"
        if len(words) >= 4 and words[2] == "metric" and words[3].isdigit() and int(words[3]) > FENCE_BASE:
            with contextlib.suppress(ValueError):
                if ipaddress.ip_network(words[1]).subnet_of(POOL) and not _pid_alive(int(words[3]) - FENCE_BASE):
                    _ip("route", "del", "blackhole", words[1], "metric", words[3], check=False)


def _namespace_pids(name: str) -> list[int]:
    out = _ip("netns", "pids", name, check=False).stdout
    return [int(word) for word in out.split() if word.isdigit()]


def _remove_namespace(name: str) -> None:
    """Kill every process inside ``name`` (only ever ones a test started there), then delete it with its veths."""
    for _ in range(50):
        pids = _namespace_pids(name)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()
        time.sleep(0.05)
    _ip("netns", "delete", name, check=False)


def _link_mac(namespace: str | None, interface: str) -> str:
    where = ["-n", namespace] if namespace else []
    words = _ip(*where, "-o", "link", "show", "dev", interface).stdout.split()
    return words[words.index("link/ether") + 1]


class NetHost:
    """One network namespace with its veth pair and /30; see the module's docstring."""

    def __init__(self, name: str, index: int, taken: set[ipaddress.IPv4Network]) -> None:
        self.name = name
        self._taken = taken
        tag = f"{os.getpid() % 100000}{chr(ord('a') + index % 26)}{index // 26 or ''}"
        self.host_if = f"hs{tag}h"  # at most 15 characters (IFNAMSIZ)
        self.ns_if = f"hs{tag}n"
        self.net = _free_slash30(taken)
        self.host_addr, self.ns_addr = (str(a) for a in list(self.net.hosts())[:2])
        _ip("netns", "add", name)
        try:
            _ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if, "netns", name)
            _ip("addr", "add", f"{self.host_addr}/30", "dev", self.host_if)
            _ip("link", "set", "dev", self.host_if, "up")
            _ip("-n", name, "addr", "add", f"{self.ns_addr}/30", "dev", self.ns_if)
            _ip("-n", name, "link", "set", "dev", self.ns_if, "up")
            _ip("-n", name, "link", "set", "dev", "lo", "up")
            self._pin_neighbours()
        except BaseException:
            _remove_namespace(name)  # its veth goes with it; the caller's fences are released with ``taken``
            raise

    def _pin_neighbours(self) -> None:
        """Permanent ARP entries both ways, so a downed link drops packets in silence.

        Otherwise ARP gives up a second or so after the link goes down and
        a new connection fails at once with "No route to host", which is a
        refusal by another name; across a router (the usual case) a dead
        host's SYN simply vanishes.
        """
        host_mac = _link_mac(None, self.host_if)
        ns_mac = _link_mac(self.name, self.ns_if)
        _ip("neigh", "replace", self.ns_addr, "lladdr", ns_mac, "dev", self.host_if, "nud", "permanent")
        _ip("-n", self.name, "neigh", "replace", self.host_addr, "lladdr", host_mac, "dev", self.ns_if, "nud", "permanent")

    def __repr__(self) -> str:
        return f"NetHost({self.name}: {self.host_addr} <-> {self.ns_addr})"

    def down(self) -> None:
        """Drop every packet to and from the host: its interface goes down (no reset, no refusal)."""
        _ip("-n", self.name, "link", "set", "dev", self.ns_if, "down")

    def up(self) -> None:
        """The host's interface back, same address."""
        _ip("-n", self.name, "link", "set", "dev", self.ns_if, "up")

    def wait_reachable(self, port: int = SSH_PORT, timeout: float = 10.0) -> None:
        """Until a TCP connect to the host's port succeeds from this machine (the veth's carrier is back)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection((self.ns_addr, port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def move(self) -> str:
        """A network change: both ends get a new /30, the old addresses go; returns the host's new address."""
        with _locked():
            self.net = _free_slash30(self._taken)
            host_addr, ns_addr = (str(a) for a in list(self.net.hosts())[:2])
            _ip("addr", "add", f"{host_addr}/30", "dev", self.host_if)
            _ip("-n", self.name, "addr", "add", f"{ns_addr}/30", "dev", self.ns_if)
        _ip("addr", "del", f"{self.host_addr}/30", "dev", self.host_if)
        _ip("-n", self.name, "addr", "del", f"{self.ns_addr}/30", "dev", self.ns_if)
        self.host_addr, self.ns_addr = host_addr, ns_addr
        self._pin_neighbours()
        return ns_addr

    def link_to(self, other: NetHost) -> str:
        """A veth between this namespace and ``other``'s, on a /30 of its own; returns ``other``'s address on it.

        Only this namespace can reach that address: this machine has no route
        to it, so a client here must go through this host (ProxyJump).
        """
        a, b = f"{self.host_if[:-1]}j", f"{other.host_if[:-1]}k"
        with _locked():
            net = _free_slash30(self._taken)
            mine, theirs = (str(a) for a in list(net.hosts())[:2])
            _ip("-n", self.name, "link", "add", a, "type", "veth", "peer", "name", b, "netns", other.name)
            _ip("-n", self.name, "addr", "add", f"{mine}/30", "dev", a)
        _ip("-n", self.name, "link", "set", "dev", a, "up")
        _ip("-n", other.name, "addr", "add", f"{theirs}/30", "dev", b)
        _ip("-n", other.name, "link", "set", "dev", b, "up")
        return theirs

    def pids(self) -> list[int]:
        """Every process inside the namespace now."""
        return _namespace_pids(self.name)

    def remove(self) -> None:
        _remove_namespace(self.name)
        _ip("link", "delete", self.host_if, check=False)  # gone with the namespace already, unless a process held it


def _release(taken: set[ipaddress.IPv4Network]) -> None:
    for net in taken:
        _unfence(net)
    taken.clear()


@contextlib.contextmanager
def net_hosts(count: int) -> Iterator[list[NetHost]]:
    """``count`` fresh namespaces, each with its veth pair; all removed on exit, however the block ends."""
    available()
    made: list[NetHost] = []
    taken: set[ipaddress.IPv4Network] = set()
    try:
        with _locked():
            sweep_leftovers()
            existing = set(_ip("netns", "list").stdout.split())
            n = 0
            while len(made) < count:
                name = f"{PREFIX}{os.getpid()}-{n}"
                n += 1
                if name not in existing:
                    made.append(NetHost(name, n - 1, taken))
        yield made
    finally:
        for host in made:
            host.remove()
        _release(taken)


@contextlib.contextmanager
def sshd_in(host: NetHost, root: Path, address: str | None = None, **options: object) -> Iterator[Sshd]:
    """A started real sshd inside ``host``'s namespace, reached at ``address`` (its veth address); stopped and removed on exit.

    ``options`` are ``Sshd``'s (``claude``, ``env``, ``path_dirs``...).
    """
    server = Sshd(root, address=address or host.ns_addr, port=SSH_PORT, netns=host.name, **options)  # type: ignore[arg-type]
    try:
        server.start()
        yield server
    finally:
        server.close()
