"""Remote links always come back, and nothing of ours outlives headspace (issue 22), over a real sshd.

Each fault is the real thing, not a mock: sshd killed with every connection
it serves and started again, many times and at every moment of a reconnect;
a remote ``python3`` that hangs (a wrapper first on the remote PATH that
never returns); headspace itself run as a real process in a private tmux
pane and ended by a signal, as a closed terminal or ``kill`` would.  What is
asserted is what the issue asks: rows live within 10 s of the last restart,
a row saying why within 20 s, and no ssh process, remote process or control
folder of ours left once it is over (read from the process table).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.events import AgentChanged
from headspace_tui.model import AgentState
from headspace_tui.remote import probe_client
from headspace_tui.remote.host import RemoteHost
from headspace_tui.remote.probe_client import CALL_TIMEOUT, CLOSE_GRACE
from headspace_tui.remote.ssh import CONNECT_TIMEOUT
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.watching.monitor import REMOTE_RETRY_PACE
from headspace_tui.shared.config import HostSpec
from headspace_tui.tmux.server import TmuxServer
from tests.harness.sshd import Sshd, running_sshd
from tests.harness.tmux import PrivateTmux
from tests.ui.apps import app_of, service_of
from tests.ui.test_app_live import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def box(claude_binary: str, tmp_path: Path) -> Iterator[Sshd]:
    with running_sshd(tmp_path, claude=claude_binary) as server:
        yield server


@pytest.fixture
def private_tmux(box: Sshd) -> Iterator[PrivateTmux]:
    """The sessions' tmux server, where a login through ``box`` finds it (overrides conftest's)."""
    root = tempfile.mkdtemp(prefix="hs-tmux-")
    server = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8", "TMUX_TMPDIR": box.remote_env["TMUX_TMPDIR"]})
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)


def remote_app(box: Sshd, socket_name: str) -> HeadspaceApp:
    spec = HostSpec("box", box.alias, socket_name=socket_name, ssh_config=str(box.client_config))
    return app_of(Service.build(TmuxServer(socket_name="headspace-test-no-local"), hosts=[RemoteHost(spec)], local=False, journal=Journal(None)))


def our_ssh(root: int) -> list[psutil.Process]:
    """Every ssh process below ``root`` (a test's own pid, or headspace's), however deep."""
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [p for p in children if _name(p) == "ssh"]


def _name(proc: psutil.Process) -> str:
    try:
        return proc.name()
    except psutil.Error:
        return ""


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


def under(box: Sshd, wanted: Callable[[psutil.Process], bool]) -> list[psutil.Process]:
    """The processes our sshd runs (the remote side of every connection) that are ``wanted``."""
    found = []
    for pid in box.connection_pids():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if wanted(proc):
                found.append(proc)
    return found


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except psutil.NoSuchProcess:
            pass
    return out


def test_twenty_sshd_restarts_then_the_rows_are_live_within_10s(claude_session, private_tmux, box):
    """Kill and restart sshd 20 times, at every moment of a reconnect; the host must come back each time."""
    session = claude_session(name="steady")
    address = session.pane_id + "@box"
    # Up-times that land in every state of the link: before the master is up, while the
    # probe starts, just after it answered, and once the rows are live again.
    ups = [0.05, 0.3, 0.8, 1.5, 3.0]

    async def scenario() -> float:
        app = remote_app(box, private_tmux.name)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: address in app.table.agents and app.table.agents[address].state is AgentState.IDLE, "the remote agent idle", 30)
            for cycle in range(20):
                await asyncio.to_thread(box.stop)
                await pilot.pause(0.05 + 0.1 * (cycle % 3))
                await asyncio.to_thread(box.start)
                started = time.monotonic()
                if cycle < 19:
                    await pilot.pause(ups[cycle % len(ups)])
            host = service_of(app)._fleet.monitors["box"].host
            assert isinstance(host, RemoteHost)

            def live() -> bool:  # the row not offline *and* watched again: the last restart may not even be noticed yet
                return not app.table.agents[address].offline and host.link.connected and host.probe is not None and host.probe.running

            await wait_until(pilot, live, "the row live after the last restart", 30)
            back = time.monotonic() - started
            await pilot.pause(1.0)
            assert live(), "live for a moment only"
            return back

    back = asyncio.run(scenario())
    print(f"\nrows live {back:.2f} s after the 20th restart")
    assert back < 10.0
    assert not alive(our_ssh(os.getpid())), "an ssh process of ours outlived the app"


def test_a_probe_that_stops_answering_is_ended_there_and_the_rows_come_back(claude_session, private_tmux, box):
    """The master stays up while the probe hangs (SIGSTOP there): its calls time out, and the link must still come back.

    Before, ending the hung probe waited on pipes the ssh master holds open
    (Python 3.11's ``proc.wait()``), and the host said "reconnecting…" for good.
    """
    session = claude_session(name="steady")
    address = session.pane_id + "@box"

    def remote_probes() -> list[psutil.Process]:
        return under(box, lambda proc: "headspace_tui.remote.probe" in _cmdline(proc))

    async def scenario() -> float:
        app = remote_app(box, private_tmux.name)
        # The stale mark is recorded as it is made, not polled for: once the hung probe is let go,
        # the next read of the pane goes through a plain ssh command over the master and clears it,
        # often within the 0.1 s between two looks at the table.
        marked: list[str] = []
        app.service.subscribe(lambda event: isinstance(event, AgentChanged) and event.agent.pane_id == address and event.agent.offline and marked.append(event.agent.offline))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: address in app.table.agents and app.table.agents[address].state is AgentState.IDLE, "the remote agent idle", 30)
            await wait_until(pilot, lambda: bool(remote_probes()), "the probe there", 10)
            hung = remote_probes()
            assert not marked, f"the row was marked stale before the probe hung: {marked}"
            for proc in hung:
                proc.suspend()  # alive, its pipes open, answering nothing
            stopped = time.monotonic()
            await asyncio.to_thread(private_tmux.run, "new-session", "-d", "-s", "nudge")  # a discovery, which asks the probe
            await wait_until(pilot, lambda: bool(marked), "the row marked stale (the probe did not answer)", 30)
            await wait_until(pilot, lambda: not app.table.agents[address].offline, "the row back", HUNG_PROBE_BACK)
            back = time.monotonic() - stopped
            # The rows can come back before the hung reader is ended: its sessions' control clients
            # re-attach through their own ssh sessions as soon as it is found hung, while the next
            # connect closes it and kills its group there. Ended it must be, within that connect's pace, the probe's grace
            # to close and one ssh connect to end what is left there (and a margin).
            await wait_until(pilot, lambda: not alive(hung), "the hung probe ended there", REMOTE_RETRY_PACE + CLOSE_GRACE + CONNECT_TIMEOUT + 3)
            return back

    try:
        back = asyncio.run(scenario())
    finally:
        for proc in remote_probes():  # started through our sshd for this test: never left behind
            proc.kill()
    print(f"\nrows back {back:.2f} s after the probe hung")
    assert back < HUNG_PROBE_BACK


# A hung probe's rows are back after a call's timeout (10 s), the grace to end it (2 s) and a reconnect (22 s in all
# beside a busy core, where the test's old bound was 25 s); before the fix, never. Three times the first two tell them apart.
HUNG_PROBE_BACK = 3 * (CALL_TIMEOUT + CLOSE_GRACE)

HANGING_PYTHON = "#!/bin/sh\n# stands in for a python3 that never starts (a wedged interpreter, a stuck NFS home)\nsleep 3600\n"


def test_a_hung_python3_is_a_row_saying_so_and_leaves_no_process(tmp_path, claude_binary):
    bin_dir = tmp_path / "hang-bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(HANGING_PYTHON)
    wrapper.chmod(0o755)

    def remote_pythons() -> list[psutil.Process]:
        return [p for p in psutil.process_iter() if str(wrapper) in _cmdline(p) or (_name(p) == "sleep" and "3600" in _cmdline(p) and _parent_is_wrapper(p, str(wrapper)))]

    with running_sshd(tmp_path, claude=claude_binary, path_dirs=[str(bin_dir)]) as hung:
        assert hung.ssh("command -v python3").stdout.strip() == str(wrapper)  # the premise

        async def scenario() -> float:
            app = remote_app(hung, "headspace-none")
            async with app.run_test(size=(100, 30)) as pilot:
                began = time.monotonic()
                await wait_until(pilot, lambda: "@box" in app.table.agents, "the host's row", 30)
                took = time.monotonic() - began
                row = app.table.get_row("@box")[-1].plain
                assert "remote reader did not start" in row and "box" in row, row
                # The hung attempt was ended on both sides; at most the current retry's is running.
                await pilot.pause(1.0)
                assert len(alive(remote_pythons())) <= 2, [_cmdline(p) for p in remote_pythons()]
            return took

        took = asyncio.run(scenario())
        print(f"\nrow saying why after {took:.2f} s")
        deadline = time.monotonic() + 5
        while (alive(remote_pythons()) or alive(our_ssh(os.getpid()))) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [_cmdline(p) for p in alive(remote_pythons()) + alive(our_ssh(os.getpid()))]
        for proc in alive(remote_pythons()):  # ours (started through our sshd): never leave them behind
            proc.kill()
    assert took < 20.0
    assert not left, f"left running: {left}"


STRETCHED = 60.0  # PROBE_START in the python3 test: a start's other waits, made far longer than a hung python3's

SOMETIMES_HANGING_PYTHON = """#!/bin/sh
# python3 that hangs while the fault lasts (the flag file exists): a wedged interpreter, a stuck NFS home
if [ -e {flag} ]; then exec sleep 3600; fi
exec {python} "$@"
"""


def test_a_reader_that_stops_while_python3_hangs_is_stale_at_once_and_back_soon_after_the_fault(tmp_path, claude_binary, monkeypatch):
    """The probe dies (killed there) and a new one cannot start: python3 hangs on that host for a while.

    Before, the rows looked live for 13 s of it: the panes were still read
    through plain ssh commands, and each read cleared the stale mark, though
    nothing read the host's processes, status files or hooks; and a start
    that hung was given 10 s, so the host came back 14 s after the fault
    ended.  Now: stale within 3 s, stale throughout, and back within 10 s
    on a quiet machine (a hung python3 is given PYTHON_START, 4 s; then the
    retry pace and a start).  A loaded one took 15 s, so the test tells the
    two ways apart by stretching the old one: every other wait of a start
    (PROBE_START) is a minute here, and the host must be back within half of
    it.  How soon is the benchmarks' to say.
    """
    monkeypatch.setattr(probe_client, "PROBE_START", STRETCHED)
    bin_dir = tmp_path / "sometimes-hang-bin"
    bin_dir.mkdir()
    flag = tmp_path / "python3-hangs"
    real_python = shutil.which("python3", path="/usr/bin:/bin")
    assert real_python is not None
    wrapper = bin_dir / "python3"
    wrapper.write_text(SOMETIMES_HANGING_PYTHON.format(flag=flag, python=real_python))
    wrapper.chmod(0o755)
    with running_sshd(tmp_path, claude=claude_binary, path_dirs=[str(bin_dir)]) as sometimes:
        root = tempfile.mkdtemp(prefix="hs-tmux-")
        tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8", "TMUX_TMPDIR": sometimes.remote_env["TMUX_TMPDIR"]})
        tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "work", "-x", "100", "-y", "30", "sleep 600")
        address = tmux.run("display-message", "-p", "-t", "work", "#{pane_id}").strip() + "@box"

        def probes() -> list[psutil.Process]:
            return under(sometimes, lambda proc: "headspace_tui.remote.probe" in _cmdline(proc))

        def hung() -> list[psutil.Process]:  # the hanging python3s there (their wrapper exec'd sleep)
            return under(sometimes, lambda proc: _name(proc) == "sleep" and "3600" in _cmdline(proc))

        async def scenario() -> tuple[float, float, list[float]]:
            spec = HostSpec("box", sometimes.alias, socket_name=tmux.name, ssh_config=str(sometimes.client_config))
            app = app_of(Service.build(TmuxServer(socket_name="headspace-test-no-local"), hosts=[RemoteHost(spec)], local=False, journal=Journal(None), include_all=True))
            marked: list[float] = []
            app.service.subscribe(lambda event: isinstance(event, AgentChanged) and event.agent.pane_id == address and event.agent.offline and marked.append(time.monotonic()))
            async with app.run_test(size=(120, 40)) as pilot:
                await wait_until(pilot, lambda: address in app.table.agents and not app.table.agents[address].offline, "the remote row, live", 30)
                await wait_until(pilot, lambda: bool(probes()), "the probe there", 10)
                assert not marked
                flag.touch()  # from now on python3 hangs there
                for proc in probes():
                    proc.kill()  # the reader stops (ours, started through our sshd)
                stopped = time.monotonic()
                await wait_until(pilot, lambda: bool(marked), "the row marked stale", 10, every=0.02)
                stale_after = marked[0] - stopped
                live_during_fault = []
                met = False
                while time.monotonic() - stopped < 8.0:  # attempts to start the reader hang meanwhile
                    if not app.table.agents[address].offline:
                        live_during_fault.append(round(time.monotonic() - stopped, 2))
                    met = met or bool(await asyncio.to_thread(hung))
                    await pilot.pause(0.1)
                assert met, "no start of the reader hung: the fault was not met"
                print("\nduring the fault:", app.table.agents[address].offline)
                flag.unlink()  # the fault ends
                ended = time.monotonic()
                await wait_until(pilot, lambda: not app.table.agents[address].offline and bool(probes()), "the row live again, with a reader", STRETCHED / 2, every=0.05)
                return stale_after, time.monotonic() - ended, live_during_fault

        try:
            stale_after, back, live_during_fault = asyncio.run(scenario())
        finally:
            flag.unlink(missing_ok=True)
            for proc in hung() + probes():  # started through our sshd for this test: never left behind
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            tmux.close()
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nstale {stale_after:.2f} s after the reader stopped; back {back:.2f} s after the fault ended")
    assert stale_after <= 3.0
    assert live_during_fault == [], f"the row looked live while no reader worked, at {live_during_fault} s"
    assert back < STRETCHED / 2, f"back {back:.1f} s after the fault: a hung start was given PROBE_START"


def _parent_is_wrapper(proc: psutil.Process, wrapper: str) -> bool:
    try:
        parent = proc.parent()
    except psutil.Error:
        return False
    return parent is not None and wrapper in _cmdline(parent)


# -- headspace as a real process, ended by a signal ------------------------------

CONTROL = re.compile(r"ControlPath=(\S+)")


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGHUP", "SIGINT", "closed terminal", "q"])
def test_every_ending_leaves_no_ssh_process_or_control_folder(tmp_path, claude_binary, ending):
    with running_sshd(tmp_path, claude=claude_binary) as server:
        config = tmp_path / "config.toml"
        config.write_text(f'[hosts.box]\ndestination = "{server.alias}"\ntmux_socket_name = "headspace-none"\nssh_config = "{server.client_config}"\n')
        name = f"hs-end-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        command = f"exec {sys.executable} -m headspace_tui --config {config} --no-local"
        tmux = ["tmux", "-L", name, "-f", "/dev/null"]
        subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "40", command], check=True, env=env)
        try:
            pid = int(subprocess.run([*tmux, "display", "-p", "-t", "=0:0.0", "#{pane_pid}"], capture_output=True, text=True, check=True).stdout)
            deadline = time.monotonic() + 30
            master: list[psutil.Process] = []
            while time.monotonic() < deadline:
                ssh = alive(our_ssh(pid))
                master = [p for p in ssh if "ControlMaster=yes" in _cmdline(p)]
                if master and len(ssh) >= 2:  # the master and the probe over it: the host is watched
                    break
                time.sleep(0.2)
            # The look that saw both decides: with no tmux server there, each discovery ends the probe and
            # the master connects again, so a second look may fall between two probes.
            assert master and len(ssh) >= 2, f"headspace did not connect: {[_cmdline(p) for p in ssh]}"
            folders = {os.path.dirname(m.group(1)) for p in ssh if (m := CONTROL.search(_cmdline(p)))}
            assert folders and all(os.path.isdir(f) for f in folders)
            time.sleep(1.0)  # the app is up and drawn
            began = time.monotonic()
            if ending == "SIGTERM":
                os.kill(pid, signal.SIGTERM)
            elif ending == "SIGHUP":
                os.kill(pid, signal.SIGHUP)
            elif ending == "SIGINT":
                os.kill(pid, signal.SIGINT)
            elif ending == "closed terminal":
                subprocess.run([*tmux, "kill-server"], check=False)  # the terminal goes away: SIGHUP and a dead pty
            else:
                subprocess.run([*tmux, "send-keys", "-t", "=0:0.0", "q"], check=True)
            headspace = psutil.Process(pid)
            deadline = time.monotonic() + 12
            ended = None
            while (alive(ssh) or any(os.path.exists(f) for f in folders) or ended is None) and time.monotonic() < deadline:
                if ended is None and not alive([headspace]):
                    ended = time.monotonic() - began
                time.sleep(0.02)
            took = time.monotonic() - began
            left = [_cmdline(p) for p in alive(ssh)]
            folders_left = [f for f in folders if os.path.exists(f)]
            print(f"\n{ending}: headspace ended after {ended} s; {len(ssh)} ssh processes before, {len(left)} after {took:.2f} s; folders left: {folders_left}")
            for proc in alive(ssh):  # never leave ours behind, even when the test fails
                proc.kill()
            for folder in folders_left:
                shutil.rmtree(folder, ignore_errors=True)
            assert not left, f"{ending} left ssh running: {left}"
            assert not folders_left, f"{ending} left the control folder: {folders_left}"
            # 0.3-0.4 s alone; 2.4 s seen in a clean-clone CI run. The bound is what a loaded machine meets and a
            # headspace held up by its ssh master or its probe does not (docs/testing-timing.md).
            assert ended is not None and ended <= 5.0, f"{ending}: headspace ended after {ended} s (5 s at most)"
        finally:
            subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
            socket = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / name
            socket.unlink(missing_ok=True)
