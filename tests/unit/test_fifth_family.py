"""A fifth agent family needs its own folder and one registration line, nothing that names Claude (issue 38).

Quill (tests/unit/quill) is made up and has only a screen reader.  Registered
through the real ``register``, it is found in a pane's process tree by
discovery, its screen is read by its own reader in the scan, its keys are
planned from its own options, and the CLI's names know it; unregistered, none
of that happens.  Given a hook of its own that runs away from its pane (as
Codex's does: ``Family.held_hook``), the real hook program, run with its
name, reaches headspace's real answer channel as Quill's call, held for the
rules, whose refusal carries no ``interrupt``; unregistered, the desk
keeps no call of its.  Given its own names for its tools (``Family.tools``),
a rule may name it and judges its calls by those names; unregistered, a rule
naming it is refused, and the service's rules file is read again once it is
registered.  Given its own session records (``Family.usage``), the
service's local host reads its tokens from them for a real process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from headspace_tui.answering.keys import KeyStroke, plan_keys
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect import families
from headspace_tui.detect.family import HeldHook
from headspace_tui.hooks.calls import deny
from headspace_tui.model import AgentState, Tools
from headspace_tui.rules.rules_file import parse_rules
from headspace_tui.service.records.scan import screen_observation
from headspace_tui.service.watching.discovery import plan
from headspace_tui.service.watching.host import LocalHost
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable
from headspace_tui.tmux.server import PaneRecord, TmuxServer
from headspace_tui.usage.model import Tokens
from tests.unit import quill
from tests.unit.quill import records
from tests.unit.test_answer_channel import CODEX_RECORD, channel_in, finish, first_call, run_hook, runtime  # noqa: F401  (a fixture)
from tests.unit.test_rules_paths import Bench

ASKING = "\x1b[1mquill\x1b[0m 0.1\n\nI will remove the build folder.\nAllow rm -rf build? (y) yes  (n) no\n"


@pytest.fixture
def registered():
    families.register(quill.FAMILY)  # the one line a new family adds to detect/families.py
    yield quill.FAMILY
    families.unregister(quill.FAMILY)


def _pane(pid: int, command: str = "quill") -> PaneRecord:
    return PaneRecord(
        pane_id="%5", session_id="$0", session_name="s", window_index=0, pane_index=0, target="s:0.5", pid=pid,
        current_command=command, cwd="/w", width=80, height=24, alternate_on=False, in_mode=False, title="", dead=False, dead_status=None,
    )  # fmt: skip


TREE = ProcessTable.of([ProcessInfo(100, 1, "bash", ("bash",), "1"), ProcessInfo(200, 100, "quill", ("/opt/quill/bin/quill",), "2")])


def test_the_fifth_familys_folder_names_no_other_family_and_no_capability_beyond_its_screen():
    source = "\n".join(p.read_text() for p in Path(quill.__file__).parent.glob("*.py")).lower()
    assert "claude" not in source and "codex" not in source
    family = quill.FAMILY
    assert (family.hooks, family.status_files, family.transcripts, family.with_title, family.answer_channel) == (None, None, None, None, None)


def test_before_it_is_registered_the_core_does_not_know_it():
    assert families.find_agent(100, TREE) is None
    with pytest.raises(families.UnknownFamily):
        families.family_named("quill")


def test_registered_discovery_finds_it_and_the_scan_reads_its_screen_with_its_reader(registered):
    found = plan([_pane(100)], TREE, {}, set(), host="local", server="L:test")
    [sighting] = found.watch
    assert (sighting.agent_pid, sighting.family) == (200, registered)
    assert found.new_claudes == []  # the Claude-only facts are not asked about it
    seen = screen_observation(sighting.record, sighting.agent_pid, ASKING, None, sighting.family)
    assert seen.state is AgentState.PERMISSION and seen.prompt is not None and seen.prompt.detail == "rm -rf build"
    assert plan_keys(seen, Intent(IntentKind.APPROVE), sighting.family) == [KeyStroke(("y",))]
    assert plan_keys(seen, Intent(IntentKind.DENY), sighting.family) == [KeyStroke(("n",))]


def test_registered_its_name_and_label_are_known_and_its_exit_is_read_by_its_own_reader(registered):
    assert families.family_named("Quill") is registered and families.label_of("quill") == "Quill"
    gone = screen_observation(_pane(100, "bash"), None, "$ \n", None, registered)
    assert gone.state is AgentState.EXITED


def test_a_second_family_under_a_taken_name_is_refused_and_unregistering_forgets_it(registered):
    with pytest.raises(ValueError, match="quill"):
        families.register(registered)
    families.unregister(registered)
    assert families.find_agent(100, TREE) is None and "quill" not in families.BY_NAME
    families.register(registered)  # for the fixture to forget again


def test_a_fifth_family_with_a_held_hook_gets_its_calls_through_the_real_hook_program(runtime):  # noqa: F811
    held = dataclasses.replace(quill.FAMILY, held_hook=HeldHook())
    record = {**CODEX_RECORD, "transcript_path": "/home/u/.quill/conversations/c1.jsonl"}
    assert not families.holds_hook("quill")  # not registered: the desk keeps no call of its (test_codex_rules_hook.py)

    async def scenario():
        channel = channel_in(runtime)
        await channel.start()
        proc, _ = run_hook(runtime, record, 5, "quill")  # as ``headspace hooks install`` would write it for Quill
        call = await first_call(channel)
        assert (call.family, call.pane_id, call.pid, call.transcript) == ("quill", "", 0, record["transcript_path"])
        assert families.holds_hook(call.family)
        assert channel.decide(call.id, deny("no", interrupt=True))  # even if asked to: a held hook's decision is plain
        result = await finish(proc)
        await channel.close()
        return result

    families.register(held)
    try:
        code, out, err = asyncio.run(scenario())
    finally:
        families.unregister(held)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no"}}}
    assert not families.holds_hook("quill")


RUN = '[[rule]]\nid = "q"\ndecision = "allow"\nhosts = ["local"]\nagents = ["quill"]\nproject = "{root}"\ncommand = "touch build/x_*"\nttl = "1h"\nshadow = false\nmatch = ["touch build/x_1"]\n'


def test_a_fifth_family_with_tools_of_its_own_is_judged_by_its_rules_under_its_own_names(tmp_path: Path):
    own = dataclasses.replace(quill.FAMILY, held_hook=HeldHook(), tools=Tools(shell=frozenset({"quill_sh"})))
    refused = parse_rules(RUN.replace("{root}", "/srv"), tools=families.vocabulary())
    assert refused.rules == () and "agents must be among claude, codex, copilot, gemini, opencode, qwen" in refused.errors[0]
    bench = Bench(tmp_path, RUN, family="quill")  # the service reads its rules before the family is known
    assert bench.notices and "rule q refused" in bench.notices[0]
    families.register(own)
    try:
        assert bench.allowed_by_held("quill_sh", {"command": "touch build/x_1"}, "quill")  # the file read again: the rule is Quill's now
        assert not bench.allowed_by_held("Bash", {"command": "touch build/x_2"}, "quill")  # another family's name for a shell: the person's
        assert not bench.allowed_by_held("quill_sh", {"command": "touch build/x_3; rm -rf ~"}, "quill")  # a compound command, as for any family
        (answered,) = bench.kinds("rule_answer")
        assert (answered["rule"], answered["decision"]) == ("q", "allow")
    finally:
        families.unregister(own)


def test_a_fifth_family_with_session_records_of_its_own_has_its_tokens_read_by_the_services_host(tmp_path: Path):
    """A real process the family recognises (``quill``, a link to sleep), its record where its environment says: read by LocalHost."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "quill").symlink_to("/bin/sleep")
    home = tmp_path / "quill-home"
    home.mkdir()
    (home / "session.json").write_text(json.dumps({"model": "quill-1", "input": 1200, "output": 345}))
    agent = subprocess.Popen([str(tmp_path / "bin" / "quill"), "300"], cwd=tmp_path, env={**os.environ, "QUILL_HOME": str(home)})
    own = dataclasses.replace(quill.FAMILY, usage=records.USAGE)
    try:
        unknown = asyncio.run(LocalHost(TmuxServer("headspace-test-never-started")).session_usage("quill", agent.pid))
        assert unknown is not None and unknown.tokens == Tokens()  # not registered: no records read
        families.register(own)
        try:
            usage = asyncio.run(LocalHost(TmuxServer("headspace-test-never-started")).session_usage("quill", agent.pid))
        finally:
            families.unregister(own)
        assert usage is not None and (usage.model, usage.tokens) == ("quill-1", Tokens(input=1200, output=345))
    finally:
        agent.kill()
        agent.wait()
