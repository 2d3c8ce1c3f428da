"""The answer channel on a remote host: real Claude Code behind a real sshd, answered through its hook.

The far side is tests/e2e/test_remote.py's: a private sshd on 127.0.0.1 whose
logins get a temp HOME, ``CLAUDE_CONFIG_DIR`` and ``XDG_RUNTIME_DIR``, and the
sessions' tmux in that login's ``TMUX_TMPDIR``.  The remote Claudes run with
that same ``CLAUDE_CONFIG_DIR`` and ``XDG_RUNTIME_DIR``, as a user's agents on
a dev box do, so ``headspace hooks install --answer --host box`` (which
edits the login's Claude settings there, through the probe) is what they
load.  A local Claude runs on another private tmux server, with its own
answer hook, for the batch that spans hosts.

Every key headspace sends passes ``pane_io.send_keys`` (the control client or
a forked tmux, through ssh for the remote) or the local server's
``send_keys``: both are recorded, and must stay empty; Claude's own note
"Allowed by PermissionRequest hook" says the hook, not a key, answered.
"""

from __future__ import annotations

import asyncio
import io
import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from rich.console import Console

from headspace_tui.app.main import HeadspaceApp
from headspace_tui.app.screens.batch import BatchApproveScreen, batch_table
from headspace_tui.hooks import settings as hook_settings
from headspace_tui.hooks.spool import spool_dir
from headspace_tui.model import AgentState
from headspace_tui.remote.host import RemoteHost
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import HostSpec
from headspace_tui.tmux.server import TmuxServer
from tests.e2e.test_answer_channel import ready_to_answer, record_keys, wait_until
from tests.e2e.test_remote import box, config_file, headspace, private_tmux  # noqa: F401 - box and private_tmux are fixtures
from tests.harness import fake_api as api
from tests.harness.fake_api import block_text
from tests.harness.scenarios import NUMBERED_MENU
from tests.harness.session import ClaudeSession
from tests.harness.sshd import Sshd
from tests.harness.tmux import PrivateTmux, temp_server
from tests.ui.apps import app_of, live_row, press_as_a_person

pytestmark = pytest.mark.e2e

WAIT = 60  # the answer hook's wait there (seconds)
# The user's own settings there, written by hand (4-space indent, their key order): uninstall must give back these bytes.
USER_SETTINGS = b'{\n    "cleanupPeriodDays": 30,\n    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]\n    }\n}\n'


@pytest.fixture
def local_tmux() -> Iterator[PrivateTmux]:
    """This machine's own private tmux (the ``private_tmux`` fixture here is the remote's)."""
    with temp_server("hs-local-") as (_root, server):
        yield server


def remote_sessions(claude_session, far: Sshd, names: list[str]) -> list[ClaudeSession]:
    """Claudes on the box, sharing the login's config dir and runtime dir there; launched once all are trusted."""
    config_dir = Path(far.remote_env["CLAUDE_CONFIG_DIR"])
    env = {"CLAUDE_CONFIG_DIR": str(config_dir), "XDG_RUNTIME_DIR": far.remote_env["XDG_RUNTIME_DIR"]}
    sessions = [claude_session((), launch=False, name=name, extra_env=env) for name in names]
    merged: dict = {}
    for session in sessions:  # with CLAUDE_CONFIG_DIR set, Claude keeps its .claude.json there: one for all
        own = json.loads((session.home / ".claude.json").read_text())
        merged = {**own, "projects": {**merged.get("projects", {}), **own["projects"]}}
    (config_dir / ".claude.json").write_text(json.dumps(merged, indent=2))
    for session in sessions:
        session.launch()
    return sessions


def app_for(far: Sshd, remote_socket: str, local: PrivateTmux, local_home: Path, local_runtime: Path, journal: Journal) -> HeadspaceApp:
    spec = HostSpec("box", far.alias, socket_name=remote_socket, ssh_config=str(far.client_config))
    return app_of(
        Service.build(
            TmuxServer(socket_name=local.name),
            hosts=[RemoteHost(spec)],
            config_dir=local_home / ".claude",
            spool=spool_dir({"XDG_RUNTIME_DIR": str(local_runtime)}),
            journal=journal,
        )
    )


async def ask(pilot, app, session: ClaudeSession, address: str, prompt: str) -> None:
    await wait_until(pilot, lambda: address in app.table.agents, f"{address} in the table", 30)
    await asyncio.to_thread(session.submit, prompt)
    await asyncio.to_thread(session.wait_for, NUMBERED_MENU, timeout=30, what="the dialog")


def answers_in(journal: Journal) -> list[dict]:
    return [e.payload for history in list(journal.agents.values()) for e in history.events if e.kind == "answer"]


def test_remote_permissions_are_answered_through_the_hook_a_batch_spans_hosts_and_uninstall_restores_the_file(
    claude_session,
    claude_binary,
    fake_api,
    private_tmux,  # noqa: F811 - pytest fixtures
    box,  # noqa: F811
    local_tmux,
    tmp_path,
    capsys,
):
    settings = Path(box.remote_env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_bytes(USER_SETTINGS)
    config = str(config_file(tmp_path, box, private_tmux.name))

    installed = headspace("--config", config, "hooks", "install", "--answer", "--wait", str(WAIT), "--host", "box")
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith(f"box: installed headspace hooks with the answer channel (waits {WAIT}s) in {settings} (backup: ")
    program = box.home / ".local" / "share" / "headspace" / "hook" / "program.py"
    assert program.read_bytes() == hook_settings.PROGRAM.read_bytes()
    assert stat.S_IMODE(program.stat().st_mode) == 0o600 and stat.S_IMODE(program.parent.stat().st_mode) == 0o700
    hooks = json.loads(settings.read_text())["hooks"]
    answer_hooks = [h["command"] for g in hooks["PermissionRequest"] for h in g["hooks"] if f"answer {WAIT}" in h["command"]]
    assert len(answer_hooks) == 1 and str(program) in answer_hooks[0] and not answer_hooks[0].startswith(str(Path(hook_settings.PROGRAM).parent))
    assert hooks["Stop"][0]["hooks"][0]["command"] == "true"  # the user's own hook stays, first
    said = headspace("--config", config, "hooks", "status", "--host", "box")
    assert said.stdout.strip() == f"box: headspace hooks installed in {settings} ({len(hook_settings.EVENTS)} events; answer channel on, waits {WAIT}s)"

    one, same = "touch one.txt && echo remote-y-ok", "touch same.txt && echo batch-ok"
    fake_api.set_script([api.bash(one, "Create one"), api.text("Done."), *[api.bash(same, "Same")] * 3, *[api.text("Done.")] * 3])
    first, second, third = remote_sessions(claude_session, box, ["rone", "rtwo", "rthree"])
    local_runtime = tmp_path / "local-run"
    local_runtime.mkdir(mode=0o700)
    here = ClaudeSession(local_tmux, fake_api, claude_binary, tmp_path / "here", name="here", extra_env={"XDG_RUNTIME_DIR": str(local_runtime)})
    journal = Journal(None)
    try:
        here.start_shell()
        hook_settings.install(here.home / ".claude" / "settings.json", answer_wait=WAIT)
        here.launch()

        async def scenario() -> float:
            app = app_for(box, private_tmux.name, local_tmux, here.home, local_runtime, journal)
            async with app.run_test(size=(160, 48)) as pilot:
                sent = record_keys(app)
                address = first.pane_id + "@box"
                await ask(pilot, app, first, address, "create one")
                await ready_to_answer(pilot, app, address, AgentState.PERMISSION)  # the row says: answerable through the hook
                pressed = time.monotonic()
                ok = lambda r: any("remote-y-ok" in block_text(b) for b in r.tool_results())  # noqa: E731
                await press_as_a_person(pilot, app, address, "y", lambda: fake_api.seen(ok), "the approved command's result", timeout=30)
                request = await asyncio.to_thread(fake_api.wait_for, ok, 30)
                latency = time.monotonic() - pressed
                assert request.tool_results()
                await asyncio.to_thread(first.wait_for, "Allowed by PermissionRequest hook", timeout=15)
                agent = live_row(app, address)
                await wait_until(pilot, lambda: agent.answered.startswith("via hook on box: Bash: touch one.txt"), "the row to say the hook on box answered")

                pairs = [(second, second.pane_id + "@box"), (third, third.pane_id + "@box"), (here, here.pane_id)]
                for session, where in pairs:  # one after the other: the scripted API answers them in this order
                    await ask(pilot, app, session, where, "make the same file")
                for _, where in pairs:
                    await ready_to_answer(pilot, app, where, AgentState.PERMISSION)
                app.table.select(second.pane_id + "@box")
                await wait_until(pilot, lambda: app.table.selected_pane_id == second.pane_id + "@box", "the cursor on rtwo")
                await press_as_a_person(pilot, app, second.pane_id + "@box", "A", lambda: isinstance(app.screen, BatchApproveScreen), "the confirmation")
                listed = {agent.pane_id: (agent.host, call.detail) for agent, call in app.screen.pairs}
                assert listed == {second.pane_id + "@box": ("box", same), third.pane_id + "@box": ("box", same), here.pane_id: ("local", same)}
                console = Console(width=200, record=True, file=io.StringIO())
                console.print(batch_table(app.screen.pairs))
                shown = console.export_text()
                for name in ("box:rtwo:0.0", "box:rthree:0.0", "local:here:0.0"):
                    assert name in shown, shown
                await pilot.press("y")
                for session in (second, third, here):
                    await asyncio.to_thread(session.wait_for, "Allowed by PermissionRequest hook", timeout=20)
                assert sent == []  # not one key went to any pane, here or there
            return latency

        latency = asyncio.run(scenario())
    finally:
        here.close()
    for session, name in ((first, "one.txt"), (second, "same.txt"), (third, "same.txt"), (here, "same.txt")):
        assert (session.workdir / name).exists()
    audit = answers_in(journal)
    assert sorted((a["host"], a["channel"]) for a in audit) == [("box", "hook"), ("box", "hook"), ("box", "hook"), ("local", "hook")]
    assert {json.loads(a["input"])["command"] for a in audit if a["host"] == "box"} == {one, same}

    removed = headspace("--config", config, "hooks", "uninstall", "--host", "box")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == f"box: removed headspace hooks: restored {settings} from its backup; removed {program}"
    assert settings.read_bytes() == USER_SETTINGS  # byte for byte
    assert not program.exists() and not program.parent.exists()
    assert not hook_settings.backup_path(settings).exists()
    with capsys.disabled():
        print(f"\nremote hook channel: y → tool result at the API in {latency * 1000:.0f} ms (through sshd on loopback)")


def test_hooks_host_without_a_settings_file_with_a_malformed_one_and_with_a_symlink_for_the_program(box, tmp_path):  # noqa: F811 - pytest fixture
    """The far side's rules are the local ones: a file install made is deleted again; a malformed one is left alone, and so is the rest."""
    settings = Path(box.remote_env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    program = box.home / ".local" / "share" / "headspace" / "hook" / "program.py"
    config = str(config_file(tmp_path, box, "headspace-none"))

    def run(*args: str):
        return headspace("--config", config, "hooks", *args, "--host", "box")

    assert run("status").stdout.strip() == f"box: headspace hooks not installed in {settings} (no such file)"
    made = run("install")
    assert made.returncode == 0 and made.stdout.startswith(f"box: installed headspace hooks in {settings} (new file; program {program}, run by /")
    assert run("install").stdout.startswith("box: headspace hooks already installed")
    program.write_text("# an older headspace's program\n")
    assert "run a hook program that is another version" in run("status").stdout
    assert run("install").returncode == 0 and program.read_bytes() == hook_settings.PROGRAM.read_bytes()  # put back, settings unchanged
    gone = run("uninstall")
    assert gone.stdout.strip() == f"box: removed headspace hooks: deleted {settings}, which install had created; removed {program}"
    assert not settings.exists() and not program.parent.exists()

    settings.write_bytes(b'{"hooks": [')
    refused = run("install", "--answer")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith(f"headspace: box: {settings} is not valid JSON")
    assert settings.read_bytes() == b'{"hooks": [' and not program.exists()  # nothing put there either

    settings.unlink()
    program.parent.mkdir(mode=0o700, parents=True)
    program.symlink_to(tmp_path / "elsewhere.py")
    linked = run("install")
    assert linked.returncode == 1 and linked.stderr.strip() == f"headspace: box: {program} is not a regular file of yours; left it untouched"
    assert not (tmp_path / "elsewhere.py").exists() and not settings.exists()

    project = headspace("--config", config, "hooks", "install", "--project", str(tmp_path), "--host", "box")
    assert project.returncode == 1 and project.stderr.strip() == "headspace: --project is not supported with --host (the user settings there are used)"


def hook_processes(program: Path) -> list[psutil.Process]:
    """The answer hooks running the program there (Claude started them; the remote is this machine)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if str(program) in cmdline and "answer" in cmdline:
            found.append(proc)
    return found


def test_a_dropped_link_lets_the_waiting_remote_hook_go_at_once_and_the_dialog_still_answers(claude_session, fake_api, private_tmux, box, tmp_path):  # noqa: F811
    config = str(config_file(tmp_path, box, private_tmux.name))
    assert headspace("--config", config, "hooks", "install", "--answer", "--host", "box").returncode == 0
    program = box.home / ".local" / "share" / "headspace" / "hook" / "program.py"
    fake_api.set_script([api.bash("touch kept.txt && echo dialog-ok", "Create a file"), api.text("Done.")])
    (session,) = remote_sessions(claude_session, box, ["steady"])
    address = session.pane_id + "@box"

    async def scenario() -> float:
        spec = HostSpec("box", box.alias, socket_name=private_tmux.name, ssh_config=str(box.client_config))
        app = app_of(Service.build(TmuxServer(socket_name="headspace-test-no-local"), hosts=[RemoteHost(spec)], local=False, journal=Journal(None)))
        async with app.run_test(size=(160, 48)) as pilot:
            await ask(pilot, app, session, address, "create the file")
            await ready_to_answer(pilot, app, address, AgentState.PERMISSION)  # the hook waits, held by the probe there
            assert len(hook_processes(program)) == 1
            box.stop()  # the link drops: sshd and every connection it serves
            dropped = time.monotonic()
            await wait_until(pilot, lambda: not hook_processes(program), "the hook let go", 10)
            let_go = time.monotonic() - dropped
            await wait_until(pilot, lambda: bool(app.table.agents[address].offline), "the row offline", 10)
            assert app.table.agents[address].channel == ""
        return let_go

    let_go = asyncio.run(scenario())
    assert let_go < 2.0, let_go
    assert NUMBERED_MENU.search(session.screen())  # Claude's own dialog is still there...
    session.answer("1")  # ...and answers
    fake_api.wait_for(lambda r: any("dialog-ok" in block_text(b) for b in r.tool_results()), timeout=30)
    assert "Allowed by PermissionRequest hook" not in session.screen()
    print(f"\nlink dropped: the waiting remote hook let go in {let_go * 1000:.0f} ms")
