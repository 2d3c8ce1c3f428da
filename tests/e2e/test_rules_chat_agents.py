"""Rules answering Copilot CLI's and Qwen Code's shell calls through their own permission hooks, with the resident service.

``headspace hooks install --copilot`` / ``--qwen`` puts headspace's rules hook
where each keeps its hooks; each runs it as the CLI's child in the pane and
draws no dialog until it returns.  An allow for ``touch <tag>_*`` in this
project answers that command before any dialog (the command runs, the event
log names the rule); the same command joined to another by ``;`` is let go at
once and the agent's own dialog asks the person, who refuses it.  A deny
rule refuses ``rm <tag>_*`` through the same hook: the file stays, and the
agent is told which rule refused it.  Then
``hooks uninstall`` leaves the agent's files as they were, byte for byte.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.test_resident_service import run, started
from tests.e2e.test_rules_live import events, rules_file
from tests.harness import opencode_api as api
from tests.harness.copilot_agent import CopilotSession, require_copilot
from tests.harness.qwen_agent import QwenSession, require_qwen
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

FAMILIES = {
    "copilot": (require_copilot, CopilotSession, "bash", "COPILOT_HOME", ".copilot"),
    "qwen": (require_qwen, QwenSession, "run_shell_command", "QWEN_HOME", ".qwen"),
}


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path, Path]:
    config, state = tmp_path / "config", tmp_path / "state"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return f"hs{uuid.uuid4().hex[:8]}", config, state


def row(server: str) -> dict:
    (line,) = run("-L", server, "status", "--json").stdout.splitlines()
    return json.loads(line)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_rule_answers_a_shell_call_through_the_agents_own_hook_and_leaves_a_compound_one_to_the_person(family, private_tmux, services, tmp_path, where):
    find, Session, shell_tool, home_var, folder = FAMILIES[family]
    binary = find()
    tag, config, state = where
    script = [
        api.tool(shell_tool, {"command": f"touch {tag}_1", "description": "Make the first file"}),
        api.text("Made one."),
        api.tool(shell_tool, {"command": f"rm {tag}_1", "description": "Remove the first file"}),
        api.text("Not removed."),
        api.tool(shell_tool, {"command": f"touch {tag}_2; echo {tag}-more", "description": "Make the second file"}),
        api.text("Stopped."),
    ]
    with api.OpenAICompatibleAPI(script) as fake:
        session = Session(private_tmux, fake, binary, tmp_path / family, name=f"{family[:3]}rule", width=100, height=30, extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
        try:
            session.start_shell()
            first, second = str(session.workdir / f"{tag}_1"), str(session.workdir / f"{tag}_2")  # in the project: outside it Copilot asks for the path too
            agent_home = {home_var: str(session.home / folder)}
            before = {p: p.read_bytes() for p in (session.home / folder).rglob("*") if p.is_file()}
            rules_file(
                config,
                f"""
[[rule]]
id = "{family}-touch"
decision = "allow"
hosts = ["local"]
agents = ["{family}"]
project = "{session.workdir}"
command = "touch {tag}_*"
ttl = "1h"
shadow = false
match = ["touch {tag}_1"]
not_match = ["touch {tag}_2; echo more"]

[[rule]]
id = "{family}-keep"
decision = "deny"
hosts = ["local"]
agents = ["{family}"]
command = "rm {tag}_*"
ttl = "1h"
shadow = false
""",
            )
            installed = run("hooks", "install", f"--{family}", env=agent_home)
            assert installed.returncode == 0 and "installed headspace's rules hook" in installed.stdout, installed.stdout + installed.stderr
            status = run("hooks", "status", f"--{family}", env=agent_home)
            assert " installed in " in status.stdout, status.stdout
            started(private_tmux.name, services)
            session.launch()
            poll(lambda: row(private_tmux.name), lambda r: r["agent"] == family and r["state"] == "idle", timeout=30)

            session.submit("make the first file")
            asked = time.monotonic()
            poll(lambda: os.path.exists(first), bool, timeout=30)
            print(f"the command ran {time.monotonic() - asked:.2f} s after the prompt was sent (the rule answered through {family}'s hook)")
            session.wait_for("Made one.", timeout=30)
            answered = events(state, "rule_answer")
            assert [(a["rule"], a["decision"], a["family"], a["tool"], a["detail"]) for a in answered] == [(f"{family}-touch", "allow", family, shell_tool, f"touch {tag}_1")]
            assert answered[0]["pane"] == f"{family[:3]}rule:0.0", answered
            (audit,) = [a for a in events(state, "answer") if f"touch {tag}_1" in str(a.get("what"))]
            assert f"✓ by rule {family}-touch" in audit["what"] and audit["channel"] == "hook"

            # A deny rule refuses through the hook: the agent is told, the file stays, and its turn goes on.
            session.submit("remove the first file")
            session.wait_for("Not removed.", timeout=30, what="the reply after the refusal")
            assert os.path.exists(first)
            refused = [a for a in events(state, "rule_answer") if a["decision"] == "deny"]
            assert [(a["rule"], a["family"], a["detail"]) for a in refused] == [(f"{family}-keep", family, f"rm {tag}_1")]
            told = [t for r in fake.main_requests for t in r.tool_results() if "rule" in t]
            assert any(f"headspace rule {family}-keep refused this" in t for t in told), told

            session.submit("make the second file")
            session.wait_for(session.dialog, timeout=30, what="the agent's own dialog for the compound command")
            waiting = poll(lambda: row(private_tmux.name), lambda r: r["state"] == "permission", timeout=20)
            assert f"touch {tag}_2" in (waiting["detail"] or ""), waiting
            assert not os.path.exists(second) and len(events(state, "rule_answer")) == 2
            denied = run("-L", private_tmux.name, "send", session.pane_id, "--deny")
            assert denied.returncode == 0, denied.stdout + denied.stderr
            poll(lambda: row(private_tmux.name), lambda r: r["state"] != "permission", timeout=20)
            assert not os.path.exists(second)
        finally:
            session.close()
        removed = run("hooks", "uninstall", f"--{family}", env=agent_home)
        assert removed.returncode == 0 and "removed headspace's rules hook" in removed.stdout, removed.stdout + removed.stderr
        hook_files = {p for p in (session.home / folder).rglob("*") if p.is_file() and ("hooks" in p.parts or p.name == "settings.json")}
        assert {p: p.read_bytes() for p in hook_files} == {p: b for p, b in before.items() if p in hook_files}, "the agent's hook files are as they were"
