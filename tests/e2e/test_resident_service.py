"""The resident service (``headspace serve``), from outside, as a user meets it: real tmux, real Claude Code.

* It answers ``status`` as a look of its own would (the same rows), one runs
  per tmux server (a second ``serve`` says where the first is), its socket
  is the user's alone, and its events stream says what changes.
* It ends by itself when its tmux server ends, leaving no socket or card.
* A SIGKILLed service leaves nothing that stops the next one, and ``status``
  reads for itself meanwhile.
* A client of another version stops the old service (an upgrade never
  leaves an old one answering).
* With no headspace open, a new wait rings once: in the user's terminal (a
  real tmux client in a pty) and through ``notify_command``.
* ``send`` goes through the service's one answerer and guard: to a pane id
  with no tmux on PATH, refused on a request that is not the one shown.

Every service started here is ended here: by ``serve --stop``, by its tmux
server's end, or by its pid (ours) at teardown.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import headspace_tui
from headspace_tui.shared.resident_place import place_of, read_card
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_jump import wait
from tests.e2e.test_notify_terminal import bells, notifications, recording_command
from tests.harness import fake_api as api
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.terminal import Terminal
from tests.harness.tmux import temp_server

pytestmark = pytest.mark.e2e
# The fields a service's row and a look's row must agree on (``since`` and ``in_state_for`` are times).
STABLE = ("host", "target", "pane_id", "state", "tool", "detail", "options", "question", "fingerprint", "cwd", "agent", "agent_version")


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """``headspace *args`` as a user runs it (never inside the tests' own tmux)."""
    base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    argv = [sys.executable, "-m", "headspace_tui", *args]
    return subprocess.run(argv, capture_output=True, text=True, env={**base, **(env or {})}, cwd=cwd, timeout=timeout)


def no_tmux_path(tmp_path: Path) -> str:
    """A PATH with this Python but no tmux: a ``status`` that answers there was answered by the service, not by a look of its own."""
    folder = tmp_path / "bin-without-tmux"
    folder.mkdir()
    os.symlink(sys.executable, folder / "python3")
    return str(folder)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def started(server: str, pids: list[int], *options: str) -> dict:
    """``headspace -L server [options] serve``; the service's card (its pid noted for teardown)."""
    proc = run("-L", server, *options, "serve")
    assert proc.returncode == 0, proc.stderr
    assert "headspace service started" in proc.stdout
    card = read_card(place_of(TmuxServer(socket_name=server).identity))
    assert card is not None and isinstance(card.get("pid"), int), card
    pids.append(card["pid"])
    return card


def rows(proc: subprocess.CompletedProcess) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_service_answers_status_as_a_look_would_one_per_server_the_users_alone(claude_session, private_tmux, tmp_path, services):
    session = claude_session([api.bash("touch served.txt", "Create a file"), api.text("Done.")])
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=30)
    looked = rows(run("-L", private_tmux.name, "status", "--json"))  # no service yet: a look of its own
    assert [row["state"] for row in looked] == ["permission"], looked

    card = started(private_tmux.name, services)
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    again = run("-L", private_tmux.name, "serve")
    assert again.returncode == 1 and f"pid {card['pid']}" in again.stderr and "already runs" in again.stderr, again.stderr
    assert stat.S_IMODE(os.lstat(place.folder).st_mode) == 0o700
    info = os.lstat(place.socket)
    assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600

    without_tmux = {"PATH": no_tmux_path(tmp_path)}
    asked = run("-L", private_tmux.name, "status", "--json", env={**without_tmux, "PYTHONPROFILEIMPORTTIME": "1"})
    served = rows(asked)
    assert [{k: row[k] for k in STABLE} for row in served] == [{k: row[k] for k in STABLE} for row in looked]
    # Asking the service loads none of what reads a pane or makes a row (api/row_keys.py): a command line's start.
    loaded = {line.rsplit("|", 1)[1].strip() for line in asked.stderr.splitlines() if line.startswith("import time:")}
    assert "headspace_tui.resident.client" in loaded, "no import was reported: this reads nothing"
    naming = {"headspace_tui.tmux", "headspace_tui.tmux.identify"}  # the server named by its socket's path, no tmux client
    readers = sorted(m for m in loaded - naming if m.split(".")[1:2] and m.split(".")[1] in ("detect", "state", "tmux", "service", "answering"))
    assert readers == [], f"status --json through the service loaded the readers: {readers}"
    assert list(served[0]) == list(looked[0])  # the same keys, in the same order
    text = run("-L", private_tmux.name, "status", env=without_tmux)
    assert text.returncode == 0 and "1 agent · 1 need you" in text.stdout and "Bash" in text.stdout, text
    said = run("-L", private_tmux.name, "serve", "--status")
    assert said.returncode == 0 and f"pid {card['pid']}" in said.stdout and "watching local" in said.stdout, said.stdout
    assert said.stdout.startswith("the headspace service of socket") and "already" not in said.stdout, said.stdout  # a state, not a refusal

    # The events stream: answering the dialog in the pane is told as the agent's new row.
    with socket.socket(socket.AF_UNIX) as stream:
        stream.settimeout(30)
        stream.connect(str(place.socket))
        stream.sendall(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        first = stream.recv(4096)
        assert first.startswith(b"HTTP/1.1 200") and b"text/event-stream" in first, first
        session.answer("1")
        seen, moved = b"", []
        deadline = time.monotonic() + 30
        while not moved:
            assert time.monotonic() < deadline, seen
            seen += stream.recv(65536)
            events = [json.loads(line[6:]) for line in seen.decode(errors="replace").splitlines() if line.startswith("data: ")]
            moved = [e for e in events if e["type"] == "agent" and e["row"]["state"] != "permission"]
        assert moved[0]["row"]["pane_id"] == session.pane_id and moved[0]["row"]["target"] == looked[0]["target"], moved

    stopped = run("-L", private_tmux.name, "serve", "--stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped
    assert wait_gone(card["pid"], 10)
    assert not place.socket.exists() and read_card(place) is None


def test_the_service_ends_with_its_tmux_server_and_leaves_nothing(services):
    """Also with an events client still connected that never reads (tests/unit/test_resident_events.py: one whose writes block)."""
    with temp_server("hs-svc-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "work", "sleep 600")
        card = started(tmux.name, services)
        place = place_of(TmuxServer(socket_name=tmux.name).identity)
        stalled = socket.socket(socket.AF_UNIX)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(str(place.socket))
        stalled.sendall(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")  # and never reads
        try:
            for n in range(30):  # the events it never reads: sessions made and killed
                tmux.run("new-session", "-d", "-s", f"churn{n}", "sleep 600")
                tmux.run("kill-session", "-t", f"churn{n}")
            tmux.run("kill-server")
            assert wait_gone(card["pid"], 10), "the service outlived its tmux server"
        finally:
            stalled.close()
        assert not place.socket.exists() and read_card(place) is None
        ended = run("-L", tmux.name, "serve")
        assert ended.returncode == 1 and "no tmux server runs" in ended.stderr, ended


def test_a_killed_service_leaves_nothing_that_stops_the_next(services, tmp_path):
    with temp_server("hs-svc-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "work", "sleep 600")
        card = started(tmux.name, services)
        place = place_of(TmuxServer(socket_name=tmux.name).identity)
        os.kill(card["pid"], signal.SIGKILL)
        assert wait_gone(card["pid"], 10)
        assert place.socket.exists()  # what a SIGKILL leaves behind
        looked = run("-L", tmux.name, "status", "--json", "--all")
        assert looked.returncode == 0 and '"target": "work:0.0"' in looked.stdout, looked  # read by a look: no service answers
        after = started(tmux.name, services)
        assert after["pid"] != card["pid"]
        served = run("-L", tmux.name, "status", env={"PATH": no_tmux_path(tmp_path)})
        assert served.returncode == 0 and "no agents found" in served.stdout, served
        tmux.run("kill-server")
        assert wait_gone(after["pid"], 10)


def copy_of_version(tmp_path: Path, version: str) -> Path:
    """This headspace, copied, saying it is ``version``: a folder for PYTHONPATH (and the cwd of ``-m``)."""
    folder = tmp_path / version
    shutil.copytree(Path(headspace_tui.__file__).parent, folder / "headspace_tui", ignore=shutil.ignore_patterns("__pycache__"))
    init = folder / "headspace_tui" / "__init__.py"
    init.write_text(init.read_text().replace(f'__version__ = "{headspace_tui.__version__}"', f'__version__ = "{version}"'))
    assert f'"{version}"' in init.read_text()
    return folder


def test_a_client_of_another_version_stops_the_old_service(services, tmp_path):
    """An upgrade: the service that runs is older than the command that asks; it is stopped, and the answer is read by a look."""
    old = copy_of_version(tmp_path, "0.0.1-old")
    with temp_server("hs-svc-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "work", "sleep 600")
        proc = run("-L", tmux.name, "serve", env={"PYTHONPATH": str(old)}, cwd=old)  # -m imports from the folder it runs in first
        assert proc.returncode == 0, proc.stderr
        place = place_of(TmuxServer(socket_name=tmux.name).identity)
        card = read_card(place)
        assert card is not None and card["version"] == "0.0.1-old"
        services.append(card["pid"])
        looked = run("-L", tmux.name, "status", "--json", "--all")  # --all: a look; the plain view asks the service
        assert looked.returncode == 0
        assert alive(card["pid"])
        asked = run("-L", tmux.name, "status")
        assert asked.returncode == 0 and "no agents found" in asked.stdout, asked
        assert wait_gone(card["pid"], 10), "the old service still answers"
        new = started(tmux.name, services)
        assert new["version"] == headspace_tui.__version__
        tmux.run("kill-server")
        assert wait_gone(new["pid"], 10)


def test_an_older_client_leaves_a_newer_service_running(services, tmp_path):
    """A second, older copy of headspace must not end the service of the newer one: it reads for itself."""
    newer = copy_of_version(tmp_path, "999.0.0")
    with temp_server("hs-svc-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "work", "sleep 600")
        proc = run("-L", tmux.name, "serve", env={"PYTHONPATH": str(newer)}, cwd=newer)
        assert proc.returncode == 0, proc.stderr
        card = read_card(place_of(TmuxServer(socket_name=tmux.name).identity))
        assert card is not None and card["version"] == "999.0.0"
        services.append(card["pid"])
        asked = run("-L", tmux.name, "status")
        assert asked.returncode == 0 and "no agents found" in asked.stdout, asked
        time.sleep(1.0)
        assert alive(card["pid"]), "an older client stopped a newer service"
        tmux.run("kill-server")
        assert wait_gone(card["pid"], 10)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to ask as another user")
def test_another_users_request_is_refused_even_past_the_folder(services):
    """The 0700 folder keeps other users out; past it (opened here on purpose), SO_PEERCRED still refuses them."""
    with temp_server("hs-svc-") as (_root, tmux):
        tmux.run("new-session", "-d", "-s", "work", "sleep 600")
        card = started(tmux.name, services)
        place = place_of(TmuxServer(socket_name=tmux.name).identity)
        closed = [p for p in place.socket.parents if not os.lstat(p).st_mode & 0o001]  # every folder on the way that others cannot pass
        opened = [(p, stat.S_IMODE(os.lstat(p).st_mode)) for p in (*closed, place.socket)]
        try:
            for path, mode in opened:
                os.chmod(path, mode | (0o006 if path == place.socket else 0o001))
            ask = (
                "import socket,sys;s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);"
                "s.sendall(b'GET /v1/agents HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');"
                "print(s.recv(4096).decode().splitlines()[0])"
            )
            nobody = subprocess.run(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", ask, str(place.socket)],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert nobody.returncode == 0, nobody.stderr
            assert " 403 " in nobody.stdout, nobody.stdout
        finally:
            for path, mode in opened:
                os.chmod(path, mode)
        tmux.run("kill-server")
        assert wait_gone(card["pid"], 10)


def test_with_no_headspace_open_the_service_rings_a_new_wait_once(claude_session, private_tmux, tmp_path, services):
    session = claude_session([api.bash("touch rung.txt", "Create a file"), api.text("Done.")])
    private_tmux.new_session("desk", width=120, height=40, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    script, told = recording_command(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f"notify_command = [{json.dumps(str(script))}]\n")
    user = Terminal(private_tmux, "desk")  # the user's terminal, on another session than the agent's
    try:
        card = started(private_tmux.name, services, "--config", str(config))
        time.sleep(4.0)  # the service's quiet start (notifications.decide.SETTLE, 3 s): what is there then is not news
        assert notifications(user.output) == [] and not told.exists()
        session.submit("create a file")
        session.wait_for(NUMBERED_MENU, timeout=30)
        (got,) = wait(lambda: notifications(user.output), "the notification in the user's terminal")
        assert f"{session.name}:" in got and "touch rung.txt" in got, got
        wait(lambda: told.exists() and told.read_text().strip(), "notify_command")
        time.sleep(6.0)  # the dialog stays: nothing more is rung
        assert notifications(user.output) == [got] and bells(user.output) == 1
        (env,) = [json.loads(line) for line in told.read_text().splitlines()]
        assert env["HEADSPACE_TEXT"] == got
        assert run("-L", private_tmux.name, "serve", "--stop").returncode == 0
        assert wait_gone(card["pid"], 10)
    finally:
        user.close()


def test_send_answers_through_the_service_and_its_guard(claude_session, private_tmux, tmp_path, services):
    session = claude_session([api.bash("touch sent.txt", "Create a file"), api.text("Done sending.")])
    session.submit("create a file")
    session.wait_for(NUMBERED_MENU, timeout=30)
    card = started(private_tmux.name, services)
    without_tmux = {"PATH": no_tmux_path(tmp_path)}
    (row,) = rows(run("-L", private_tmux.name, "status", "--json", env=without_tmux))
    assert row["state"] == "permission" and row["fingerprint"] and row["request"], row

    wrong = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", "not-" + row["request"], env=without_tmux)
    assert wrong.returncode == 1 and "the prompt changed since it was shown" in wrong.stderr and "nothing sent" in wrong.stderr, wrong
    words = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", row["fingerprint"], env=without_tmux)
    assert words.returncode == 1 and "not its words' fingerprint" in words.stderr, words  # the words alone name no one request
    nobody = run("-L", private_tmux.name, "send", "%999", "--approve", env=without_tmux)
    assert nobody.returncode == 1 and "no agent is watched there" in nobody.stderr, nobody
    assert NUMBERED_MENU.search(session.screen()), "a refused answer changed the dialog"

    sent = run("-L", private_tmux.name, "send", session.pane_id, "--approve", "--expect", row["request"], env=without_tmux)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith(f"{row['target']}: ") and sent.stdout.count(row["target"]) == 1, sent.stdout  # the target once
    session.wait_for("Done sending.", timeout=30)
    assert (session.workdir / "sent.txt").exists()
    log = Path(os.environ["XDG_STATE_HOME"]) / "headspace" / "service.log"
    assert f"answer approve to {session.pane_id}" in log.read_text(), "the service's log does not name the answer"
    assert run("-L", private_tmux.name, "serve", "--stop").returncode == 0
    assert wait_gone(card["pid"], 10)
