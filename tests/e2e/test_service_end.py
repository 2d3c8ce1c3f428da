"""An end that always ends: a service whose shutdown hangs still ends within its deadline, says why, and leaves no socket.

The service that outlived its tmux server in the storm soak hung somewhere in
its shutdown that nobody has found yet; so the hang is injected here, the
worst kind at once: a tmux call stuck in a thread (no thread can be
cancelled, and the interpreter's exit joins them) and a coroutine that
swallows its cancellation.  A small driver patches ``Service.stop`` with
it, then runs the real ``headspace serve --foreground`` on a private tmux
server.  Everything else is real: the tmux server killed under it, the
signals, the log.

Then many services on one tmux server, as several users' would be (each its
own runtime and state folders, so its own socket and log), while sessions
come and go: the server is killed and every one of them has ended within
10 s, each with its "service ended" line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from headspace_tui.resident.deadline import DEADLINE
from tests.e2e.test_resident_service import wait_gone

pytestmark = pytest.mark.e2e

HANGING = textwrap.dedent(
    """
    import asyncio, sys, threading
    from headspace_tui.service.facade import Service

    never = threading.Event()

    async def stuck_stop(self):
        print("stop began", flush=True)
        try:
            await asyncio.to_thread(never.wait)  # a thread that never returns
        except asyncio.CancelledError:
            pass
        while True:  # and a coroutine deaf to its cancellation
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass

    Service.stop = stuck_stop
    from headspace_tui.cli.main import main
    sys.exit(main(["-L", sys.argv[1], "serve", "--foreground"]))
    """
)


@pytest.fixture
def homes() -> Iterator[list[Path]]:
    """Each user's folders, under a short path (a socket's path has a limit); all removed afterwards."""
    made: list[Path] = []
    yield made
    for root in made:
        shutil.rmtree(root, ignore_errors=True)


def _env(homes: list[Path], name: str) -> dict[str, str]:
    """A user's own folders: runtime (the service's socket), state (its log), config."""
    root = Path(tempfile.mkdtemp(prefix=f"hs-{name}-", dir="/tmp"))
    homes.append(root)
    for sub in ("run", "state", "config", "data"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "run").chmod(0o700)
    base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    return {
        **base,
        "XDG_RUNTIME_DIR": str(root / "run"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "PYTHONPATH": os.getcwd(),
    }


def _log(env: dict[str, str]) -> str:
    path = Path(env["XDG_STATE_HOME"]) / "headspace" / "service.log"
    return path.read_text(errors="replace") if path.exists() else ""


def _hanging_service(tmp_path: Path, homes: list[Path], server: str) -> tuple[subprocess.Popen, dict[str, str]]:
    driver = tmp_path / "hang.py"
    driver.write_text(HANGING)
    env = _env(homes, "user")
    proc = subprocess.Popen([sys.executable, str(driver), server], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while "serving" not in _log(env):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the service did not start"
        time.sleep(0.1)
    return proc, env


def _ended_within(proc: subprocess.Popen, seconds: float) -> float:
    began = time.monotonic()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"the service was still running {seconds:g}s after it was told to end") from None
    return time.monotonic() - began


def test_a_service_whose_shutdown_hangs_ends_within_its_deadline_when_its_tmux_server_goes(tmp_path, private_tmux, homes):
    private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    proc, env = _hanging_service(tmp_path, homes, private_tmux.name)
    private_tmux.run("kill-server")
    took = _ended_within(proc, DEADLINE + 5)
    log = _log(env)
    assert "service ending: the tmux server" in log and "is gone" in log, log[-2000:]
    assert f"its shutdown took longer than {DEADLINE:g}s" in log, log[-2000:]
    assert "service ended: the tmux server" in log, log[-2000:]
    assert "stuck_stop" in log  # where it hung, for whoever reads the log next
    assert took >= DEADLINE - 1.0  # the deadline, not something else, ended it
    assert not list((Path(env["XDG_RUNTIME_DIR"]) / "headspace").rglob("*.sock")), "the socket was left behind"


def test_a_second_signal_ends_a_hanging_service_at_once(tmp_path, private_tmux, homes):
    private_tmux.new_session("work", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    proc, env = _hanging_service(tmp_path, homes, private_tmux.name)
    proc.send_signal(signal.SIGTERM)
    while "stop began" not in (proc.stdout.readline() if proc.stdout else ""):  # the first signal reached the hanging stop
        assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    took = _ended_within(proc, DEADLINE + 5)
    assert took < DEADLINE - 1.0, f"the second signal did not end it at once ({took:.1f}s)"
    private_tmux.run("has-session", "-t", "work")  # the user's tmux is untouched (raises when it is gone)
    log = _log(env)
    assert "ending at once: SIGTERM again while ending" in log and "service ended: signal SIGTERM" in log, log[-2000:]


SERVICES = 8  # as many users' services on one tmux server as the storm soak had within a minute or two


def test_many_services_on_one_tmux_server_all_end_with_it_under_churn(tmp_path, private_tmux, homes):
    private_tmux.new_session("base", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    envs = [_env(homes, f"user{n}") for n in range(SERVICES)]
    pids = []
    for env in envs:
        started = subprocess.run([sys.executable, "-m", "headspace_tui", "-L", private_tmux.name, "serve"], env=env, capture_output=True, text=True, timeout=60)
        assert started.returncode == 0 and "headspace service started" in started.stdout, started.stderr
        pids.append(_pid_of(env))
    stop = threading.Event()

    def churn() -> None:  # sessions made and killed while the services watch: what each service attaches to
        n = 0
        while not stop.is_set():
            private_tmux.run("new-session", "-d", "-s", f"churn{n}", "sleep 30", check=False)
            time.sleep(0.2)
            private_tmux.run("kill-session", "-t", f"churn{n}", check=False)
            n += 1

    churner = threading.Thread(target=churn, daemon=True)
    churner.start()
    try:
        time.sleep(6.0)
    finally:
        stop.set()
        churner.join(10)
    private_tmux.run("kill-server")
    killed = time.monotonic()
    try:
        for pid in pids:
            assert wait_gone(pid, max(0.1, killed + 10 - time.monotonic())), f"service {pid} still runs 10 s after its tmux server was killed"
    finally:
        for pid in pids:  # ours: none outlives the test, whatever it found
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for env in envs:
        log = _log(env)
        assert "service ended: the tmux server" in log, log[-1500:]


def _pid_of(env: dict[str, str]) -> int:
    """The service's pid, from its card (the runtime folder's ``service/*.json``)."""
    (card,) = (Path(env["XDG_RUNTIME_DIR"]) / "headspace" / "service").glob("*.json")
    return int(json.loads(card.read_text())["pid"])
