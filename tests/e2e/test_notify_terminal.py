"""Notifications as a real terminal receives them: one per wait, through tmux.

headspace runs as a program in its own session of a private tmux server; a
real tmux client in a pty (the user's terminal) is attached to that session;
Claude Code runs for real in another session against the scripted API.  What
counts is the bytes the user's terminal gets: the service's ringer writes to
each client's terminal directly, so an OSC 9 / 777 there is a notification
the terminal would show.

* an agent that starts waiting (a Bash permission) gives exactly one, naming
  the agent, and none for the ten seconds it waits on (headspace redraws
  its clock every second meanwhile); answered, the next permission is a
  second one;
* an agent already waiting when headspace starts gives none;
* passthrough is allowed on headspace's own pane (for a headspace in a pane
  of another server than it watches), not on the agent's;
* a client that jumped to another session, a client still looking at
  headspace and a client of a session grouped with headspace's, on another
  window, each get exactly one OSC and one bell, whichever mode headspace
  runs in.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from headspace_tui.api import timeouts
from tests.e2e.test_jump import wait
from tests.harness import fake_api as api
from tests.harness.env import private_env
from tests.harness.terminal import Terminal

# A headspace started cold in a terminal: Python and Textual, the service it starts (START), its first look (SETTLE)
# and the question for the rows (QUESTION), on a busy machine.
FIRST_ROW = timeouts.START + timeouts.SETTLE + timeouts.QUESTION + 15

pytestmark = pytest.mark.e2e

OSC = re.compile(rb"\x1b\](?:9|777;notify);([^\x07\x1b]*)(?:\x07|\x1b\\)")
QUIET = 10.0  # seconds in which nothing changes: no second notification
SETTLE = 4.0  # a little more than headspace's start-up quiet time (notify.SETTLE)


def notifications(data: bytes | bytearray) -> list[str]:
    return [m.group(1).decode("utf-8", "replace") for m in OSC.finditer(bytes(data))]


ANY_OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def bells(data: bytes | bytearray) -> int:
    """BELs that ring: those outside an OSC (where BEL only ends the sequence)."""
    return ANY_OSC.sub(b"", bytes(data)).count(b"\x07")


def user_clients(tmux) -> set[str]:
    """The names of the server's clients that are terminals (not headspace's control clients)."""
    lines = tmux.run("list-clients", "-F", "#{client_control_mode} #{client_name}").splitlines()
    return {line.split(" ", 1)[1] for line in lines if line.startswith("0 ")}


def client_session(tmux, name: str) -> str | None:
    """The session client ``name`` shows, from the client list: tmux 3.3a's ``display-message -p -c`` formats
    the most recently active client's session whichever client ``-c`` names (CI waited 30 s on "beside")."""
    for line in tmux.run("list-clients", "-F", "#{client_name}\t#{client_session}").splitlines():
        client, _, session = line.partition("\t")
        if client == name:
            return session
    return None


def start_headspace(tmux, root: Path, config: str = "", options: tuple[str, ...] = ()) -> str:
    """headspace (this checkout, private HOME and XDG dirs, default settings or ``config``, then ``options``) in session "hs"; its pane."""
    env = private_env(root, root / "xdg")
    if config:
        folder = root / "xdg" / "config" / "headspace"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(config)
    words = [sys.executable, "-m", "headspace_tui", "-L", tmux.name, *options]
    command = " ".join(shlex.quote(w) for w in words) + f"; echo $? > {shlex.quote(str(root / 'exit'))}; sleep 60"
    return tmux.new_session("hs", width=120, height=40, cwd=str(root), command=["sh", "-c", command], env=env)


def recording_command(folder: Path) -> tuple[Path, Path]:
    """A real ``notify_command`` program that writes down, one JSON line per run, the HEADSPACE_* environment it was given; (it, its file)."""
    told = folder / "told.jsonl"
    script = folder / "notify.py"
    script.write_text(f"#!{sys.executable}\nimport json, os\nopen({str(told)!r}, 'a').write(json.dumps({{k: v for k, v in os.environ.items() if k.startswith('HEADSPACE_')}}) + '\\n')\n")
    script.chmod(0o755)
    return script, told


def passthrough(tmux, pane: str) -> str:
    return tmux.run("show-options", "-p", "-t", pane, "-v", "allow-passthrough", check=False).strip()


@pytest.mark.parametrize("options", [(), ("--no-service",)], ids=["client", "no-service"])
def test_one_notification_per_wait_reaches_the_terminal(claude_session, fake_api, private_tmux, tmp_path, options):
    """As a client of the resident service and with the service in headspace's own process: one ringer either way."""
    agent = claude_session(
        [api.bash("touch first.txt", "Create the first file"), api.bash("touch second.txt", "Create the second file"), api.text("Both files exist.")],
        width=100,
        height=30,
    )
    hs = start_headspace(private_tmux, tmp_path, options=options)
    user = Terminal(private_tmux, "hs")
    try:
        wait(lambda: agent.name in private_tmux.capture(hs) and "idle" in private_tmux.capture(hs), "headspace's row of the idle agent", timeout=FIRST_ROW)
        time.sleep(SETTLE)
        assert passthrough(private_tmux, hs) in ("on", "all")  # headspace's own pane...
        assert passthrough(private_tmux, agent.pane_id) in ("", "off")  # ...and no other
        assert notifications(user.output) == []  # an idle agent needs nobody

        agent.submit("create the two files")
        agent.wait_for("Do you want to proceed?", what="the first permission")
        (first,) = wait(lambda: notifications(user.output), "a notification in the user's terminal")
        assert f"{agent.name}:" in first and "needs permission" in first and "touch first.txt" in first, first

        time.sleep(QUIET)  # waiting on: headspace redraws every second, Claude animates
        assert "Do you want to proceed?" in agent.screen() and "touch first.txt" in agent.screen()
        assert notifications(user.output) == [first], "notified again while nothing changed"

        agent.answer("1")  # answered: Claude runs it, then asks for the next command
        agent.wait_for("touch second.txt", what="the second permission")
        got = wait(lambda: len(notifications(user.output)) >= 2 and notifications(user.output), "the second notification")
        assert "touch second.txt" in got[1], got
        time.sleep(QUIET / 2)
        assert len(notifications(user.output)) == 2, notifications(user.output)
    finally:
        user.close()


def test_an_agent_already_waiting_at_start_is_not_announced(claude_session, fake_api, private_tmux, tmp_path):
    agent = claude_session([api.bash("touch early.txt", "Create a file"), api.text("Done.")], width=100, height=30)
    agent.submit("create the file")
    agent.wait_for("Do you want to proceed?", what="the permission")
    hs = start_headspace(private_tmux, tmp_path)
    user = Terminal(private_tmux, "hs")
    try:
        wait(lambda: agent.name in private_tmux.capture(hs) and "permission" in private_tmux.capture(hs), "headspace's row of the waiting agent", timeout=FIRST_ROW)
        time.sleep(SETTLE + 4)
        assert notifications(user.output) == []
    finally:
        user.close()


def test_a_client_in_another_session_gets_exactly_one_notification(claude_session, fake_api, private_tmux, tmp_path):
    """The issue's case: Enter jumped the user's client away from headspace; a permission elsewhere must still reach it, once."""
    agent = claude_session([api.bash("touch away.txt", "Create a file"), api.text("Done.")], width=100, height=30)
    private_tmux.new_session("other", width=120, height=40, cwd=str(tmp_path), command=["sh", "-c", "sleep 600"])
    # notify_command too: a real program that keeps the environment it was given.
    script, told = recording_command(tmp_path)
    hs = start_headspace(private_tmux, tmp_path, f'notify_command = [{json.dumps(str(script))}, "--topic"]\n')
    away = Terminal(private_tmux, "hs")
    away_name = wait(lambda: user_clients(private_tmux) and next(iter(user_clients(private_tmux))), "the first client")
    staying = Terminal(private_tmux, "hs")
    (staying_name,) = wait(lambda: user_clients(private_tmux) - {away_name} or None, "the second client")
    # A third client in a session grouped with "hs" (it has headspace's window) showing another window.
    private_tmux.run("new-window", "-d", "-t", "hs:", "sleep 600")
    private_tmux.run("new-session", "-d", "-t", "hs", "-s", "beside")
    private_tmux.run("select-window", "-t", "beside:1")
    beside = Terminal(private_tmux, "beside")
    wait(lambda: len(user_clients(private_tmux)) == 3, "the third client")
    try:
        wait(lambda: agent.name in private_tmux.capture(hs) and "idle" in private_tmux.capture(hs), "headspace's row of the idle agent", timeout=FIRST_ROW)
        # A client is listed as soon as it identifies, before its attach has set its session: a switch in between
        # is undone by the attach (CI saw the client stay in hs). Switched once it shows hs.
        wait(lambda: client_session(private_tmux, away_name) == "hs", "the first client attached to hs")
        private_tmux.run("switch-client", "-c", away_name, "-t", "other")  # as a jump does, to a session without headspace
        wait(lambda: client_session(private_tmux, away_name) == "other", "the client in the other session")
        time.sleep(SETTLE)
        assert passthrough(private_tmux, hs) == "on"  # tmux 3.3a: only while headspace's pane is shown
        assert notifications(away.output) == [] and notifications(staying.output) == [] and bells(away.output) == 0
        assert private_tmux.run("display-message", "-p", "-t", "beside:", "#{window_index}").strip() == "1"

        agent.submit("create the file")
        agent.wait_for("Do you want to proceed?", what="the permission")
        (got,) = wait(lambda: notifications(away.output), "a notification in the terminal of the client that jumped away")
        assert f"{agent.name}:" in got and "needs permission" in got and "touch away.txt" in got, got
        (seen,) = wait(lambda: notifications(staying.output), "the notification of the client looking at headspace")
        assert seen == got
        (aside,) = wait(lambda: notifications(beside.output), "the notification of the client on another window of headspace's session")
        assert aside == got
        wait(lambda: bells(away.output) >= 1 and bells(staying.output) >= 1 and bells(beside.output) >= 1, "a bell in each terminal")

        time.sleep(QUIET)  # nothing changes: nothing more, and nobody got anything twice
        assert "Do you want to proceed?" in agent.screen()
        assert notifications(away.output) == [got] and notifications(staying.output) == [got] and notifications(beside.output) == [got]
        assert bells(away.output) == 1 and bells(staying.output) == 1 and bells(beside.output) == 1
        (env,) = [json.loads(line) for line in told.read_text().splitlines()]  # notify_command: once, the same words
        assert env["HEADSPACE_TEXT"] == got and f"{agent.name}:" in env["HEADSPACE_TITLE"] and "touch away.txt" in env["HEADSPACE_BODY"]
    finally:
        away.close()
        staying.close()
        beside.close()


def shown_text(data: bytes | bytearray) -> str:
    """What a terminal shows as text: its bytes without OSCs (a notification's own words are not on screen) and other escapes."""
    plain = ANY_OSC.sub(b"", bytes(data))
    plain = re.sub(rb"\x1b\[[0-9;?>=]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>78]|\x1bP[^\x1b]*\x1b\\\\", b"", plain)
    return plain.decode("utf-8", "replace")


def test_a_terminal_not_known_to_show_osc_9_also_gets_the_notice_in_tmux_status_line(claude_session, fake_api, private_tmux, tmp_path):
    """Issue 37: on a terminal without OSC 9 a notification was a bare bell.

    Two real clients of headspace's session: one that says it is WezTerm when
    tmux asks (XTVERSION: it shows OSC 9) and one that says nothing (an
    xterm-256color of unknown make).  Both get the OSC; only the second also
    gets the words in its tmux status line (display-message), once.
    """
    agent = claude_session([api.bash("touch seen.txt", "Create a file"), api.text("Done.")], width=100, height=30)
    hs = start_headspace(private_tmux, tmp_path)
    plain = Terminal(private_tmux, "hs")
    wez = Terminal(private_tmux, "hs", version="WezTerm 20240203-110809-5046fc22")
    try:
        wait(lambda: len(user_clients(private_tmux)) == 2, "both clients")
        types = private_tmux.run("list-clients", "-F", "#{client_termtype}").splitlines()
        assert sorted(types) == ["", "WezTerm 20240203-110809-5046fc22"], types
        wait(lambda: agent.name in private_tmux.capture(hs) and "idle" in private_tmux.capture(hs), "headspace's row of the idle agent", timeout=FIRST_ROW)
        time.sleep(SETTLE)
        agent.submit("create the file")
        agent.wait_for("Do you want to proceed?", what="the permission")
        # Each terminal reads its own copy of the OSC, each at its own pace: both are waited for before they are compared.
        wait(lambda: notifications(plain.output) and notifications(wez.output), "the OSC in both terminals")
        (got,) = notifications(plain.output)
        assert notifications(wez.output) == [got]
        words = f"headspace: {agent.name}:"
        wait(lambda: words in shown_text(plain.output), "the notice in the plain terminal's status line")
        line = next(part for part in shown_text(plain.output).split("\r") if words in part)
        assert "needs permission" in line and "touch seen.txt" in line, line
        time.sleep(2)
        assert words not in shown_text(wez.output)  # a terminal that shows the OSC gets it alone
    finally:
        plain.close()
        wez.close()
