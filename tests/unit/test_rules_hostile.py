"""Narrow rules against requests that want more than they say (tests/data/rules/hostile.toml): none is allowed.

The corpus holds each class of the red team's findings (words after a
redirection, a backslash before '#', bytes a parser hides, unchecked
writes, globs and prefixes wider than their words, where writes may go,
the agent's own controls, the whole call) and the field's known bypasses;
each request goes to the judge as the service would hand it over, against
the rules file it names.  The same rules must still allow the plain
requests beside them: a judge that allowed nothing would pass the first half.
The folders are real (a symlink build/out leads to a stand-in home), so
symlinks resolve as they would on a user's disk.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from headspace_tui.detect.families import CLAUDE, vocabulary
from headspace_tui.hooks.calls import PendingCall
from headspace_tui.model import Agent
from headspace_tui.rules.judge import judge
from headspace_tui.rules.model import Call, Decision
from headspace_tui.rules.rules_file import parse_rules
from headspace_tui.service.acting.rule_calls import call_of

CORPUS = Path(__file__).parent.parent / "data" / "rules" / "hostile.toml"
DATA = tomllib.loads(CORPUS.read_text(encoding="utf-8"))


def place(tmp_path: Path) -> tuple[str, str]:
    """The project ({root}): build/, docs/, sub/deep/, symlinks build/out and cache to a stand-in home ({home}), plink to /etc/passwd,
    template/.claude/ (a control a repository may carry) and bare/ laid out as a git repository (what git finds by its layout)."""
    root, home = tmp_path / "proj", tmp_path / "home"
    for folder in ("build", "docs", "sub/deep", "template/.claude", "bare/objects", "bare/refs", "half/objects", "half/refs"):
        (root / folder).mkdir(parents=True)
    (root / "bare" / "HEAD").write_text("ref: refs/heads/main\n")
    home.mkdir()
    (home / "secret.txt").write_text("TOKEN=abc\n")
    (root / "build" / "out").symlink_to(home)
    (root / "cache").symlink_to(home)
    (root / "plink").symlink_to("/etc/passwd")
    return str(root.resolve()), str(home.resolve())


def filled(text: str, root: str, home: str) -> str:
    return text.replace("{root}", root).replace("{home}", home)


def request(case: dict, root: str, home: str) -> tuple[list, Call]:
    rules = parse_rules(filled(DATA["rules"][case["rules"]], root, home), tools=vocabulary())
    assert not rules.errors, rules.errors
    cwd = filled(case.get("cwd", "{root}"), root, home)
    host = case.get("host", "local")
    if "input" in case:  # the hook's tool input as it came: the call the service makes of it
        agent = Agent(pane_id="%4", target="w:0.0", session="w", cwd=cwd, host=host)
        call = call_of(PendingCall(1, "%4", 0, "s", case.get("tool", "Bash"), case["input"], cwd=cwd), agent)
    elif "path" in case:
        call = Call(tool=case["tool"], path=filled(case["path"], root, home), cwd=cwd, host=host, tools=CLAUDE.tools)
    else:
        call = Call(tool="Bash", command=filled(case["command"], root, home), cwd=cwd, host=host, unsandboxed=case.get("unsandboxed", False), tools=CLAUDE.tools)
    return list(rules.rules), call


def _name(case: dict) -> str:
    return f"{case['class']}:{case.get('command', case.get('path', case.get('input')))!r}"[:90]


@pytest.mark.parametrize("case", DATA["case"], ids=_name)
def test_no_hostile_request_is_allowed(case: dict, tmp_path: Path):
    root, home = place(tmp_path)
    rules, call = request(case, root, home)
    verdict = judge(rules, call)
    if case.get("expect") == "deny":
        assert verdict.decision is Decision.DENY, verdict
    else:
        assert verdict.decision is not Decision.ALLOW, verdict
        assert verdict.why, "a request the rules leave to the person says why"


@pytest.mark.parametrize("case", DATA["allowed"], ids=lambda c: f"{c['rules']}:{c.get('command', c.get('path'))!r}")
def test_the_same_rules_still_allow_what_they_say(case: dict, tmp_path: Path):
    root, home = place(tmp_path)
    rules, call = request(case, root, home)
    verdict = judge(rules, call)
    assert verdict.decision is Decision.ALLOW, verdict


def test_every_class_of_the_red_teams_findings_is_in_the_corpus():
    classes = {case["class"] for case in DATA["case"]}
    assert classes >= {"redirection-words", "escaped-comment", "hidden-bytes", "unchecked-writes", "wide-globs", "write-place", "controls", "whole-call"}
    assert classes >= {"operands", "subcommands", "moved-files", "glued-values", "missing-flags", "code-globs", "remote", "spellings", "symlinked-reads"}
    assert classes >= {"after-dashes", "old-style", "contents", "git-layout", "word-pieces", "abbreviations", "quoted-globs", "names-from-input"}


@pytest.mark.parametrize("text", ["git status\ud800", "git status '\udfff'", "\ud83d"])
def test_a_lone_surrogate_is_unreadable_and_the_judge_does_not_raise(text: str, tmp_path: Path):
    root, home = place(tmp_path)
    rules = parse_rules(filled(DATA["rules"]["exact"], root, home), tools=vocabulary()).rules
    verdict = judge(rules, Call(tool="Bash", command=text, cwd=root, tools=CLAUDE.tools))
    assert verdict.decision is None and "not read plainly" in verdict.why


def test_a_file_path_no_file_system_could_name_is_not_known_whole(tmp_path: Path):
    root, home = place(tmp_path)
    rules = parse_rules(filled(DATA["rules"]["paths"], root, home), tools=vocabulary()).rules
    for path in ("src/\ud800.json", "src/a\x00.json"):
        verdict = judge(rules, Call(tool="Write", path=path, cwd=root, tools=CLAUDE.tools))
        assert verdict.decision is None and "not known whole" in verdict.why
        pending = PendingCall(1, "%4", 0, "s", "Write", {"file_path": path, "content": "x"}, cwd=root)
        assert judge(rules, call_of(pending, Agent(pane_id="%4", target="w:0.0", session="w", cwd=root))).decision is None
