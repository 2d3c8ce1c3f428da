"""The network-namespace hosts the network tests stand on, checked against the real kernel and OpenSSH.

If these fail, a network test's result says nothing about headspace: a
"dropped" link answered with a reset or a refusal (so it was not a silent
drop), the moved address still worked, the host behind the jump host was
reachable directly, or something of the test outlived it.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.harness.netns import SSH_PORT, net_hosts, sshd_in

pytestmark = pytest.mark.e2e


def test_a_host_in_a_namespace_answers_ssh_drops_silently_when_down_and_moves(tmp_path: Path) -> None:
    with net_hosts(1) as (host,), sshd_in(host, tmp_path / "a") as box:
        assert box.ssh("echo hi").stdout.strip() == "hi"
        inside = box.ssh("cat /proc/net/dev").stdout
        assert host.ns_if in inside and host.host_if not in inside  # the login ran inside the namespace

        with socket.create_connection((host.ns_addr, SSH_PORT), timeout=2) as sock:
            sock.recv(64)  # the banner
            host.down()
            sock.settimeout(2.0)
            sock.sendall(b"x" * 100)
            began = time.monotonic()
            with pytest.raises(TimeoutError):
                sock.recv(64)  # no reset, no close: silence
            assert time.monotonic() - began >= 1.9
        began = time.monotonic()
        with pytest.raises(OSError) as failed:
            socket.create_connection((host.ns_addr, SSH_PORT), timeout=3.5)  # past ARP's give-up, had it not been pinned
        assert isinstance(failed.value, TimeoutError), failed.value  # not refused, not "no route": the SYN vanished
        print(f"\nconnect to a downed host failed after {time.monotonic() - began:.2f} s: {failed.value!r}")
        host.up()
        host.wait_reachable()
        assert box.ssh("echo back").stdout.strip() == "back"

        old = host.ns_addr
        new = host.move()
        assert new != old
        box.trust(new)
        with pytest.raises(OSError):
            socket.create_connection((old, SSH_PORT), timeout=1.0)
        moved = box.ssh("echo moved", options=("-o", f"HostName={new}"))
        assert moved.stdout.strip() == "moved", moved.stderr


def test_a_host_behind_a_jump_host_is_reachable_only_through_it(tmp_path: Path) -> None:
    with net_hosts(2) as (jump, target):
        target.down()  # its own veth to this machine: off, so only the jump host's link reaches it
        behind = jump.link_to(target)
        with socket.socket() as sock:
            sock.settimeout(1.0)
            assert sock.connect_ex((behind, SSH_PORT)) != 0  # no way from here
        with sshd_in(jump, tmp_path / "j") as gate, sshd_in(target, tmp_path / "t", address=behind) as far:
            result = subprocess.run(
                ["ssh", "-F", str(far.client_config), "-o", f"ProxyCommand=ssh -F {gate.client_config} -W %h:%p {gate.alias}", far.alias, "echo through"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            assert result.stdout.strip() == "through", result.stderr


def test_everything_is_removed_even_when_the_test_fails(tmp_path: Path) -> None:
    names: list[str] = []
    pids: list[int] = []
    with pytest.raises(RuntimeError), net_hosts(2) as hosts, sshd_in(hosts[0], tmp_path / "a") as box:
        names = [h.name for h in hosts] + [h.host_if for h in hosts]
        box.ssh("true")
        pids = hosts[0].pids()
        assert pids
        raise RuntimeError("the test failed")
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert not [n for n in names if n in listed or n in links]
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
