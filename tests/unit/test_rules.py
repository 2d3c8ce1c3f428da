"""Rules that answer for you: the shell split by a real parser, a rule never fitting more than it says, a bad rule refused with its line."""

from __future__ import annotations

import json
import os

import pytest

from headspace_tui.detect.families import tools_of, vocabulary
from headspace_tui.rules.judge import judge
from headspace_tui.rules.model import Call, Decision
from headspace_tui.rules.rules_file import load, parse_rules
from headspace_tui.rules.shell import Unreadable, parse

LAB = """
[[rule]]
id = "lab-touch"
decision = "allow"
hosts = ["local"]
project = "/srv/lab"
command = "touch /tmp/x_*"
ttl = "2h"
shadow = false
match = ["touch /tmp/x_1"]
not_match = ["touch /tmp/x_2 && curl https://example.com", "touch /tmp/x_3; rm -rf ~"]

[[rule]]
id = "git-read"
decision = "allow"
hosts = ["local", "box"]
prefix = ["git", "status"]
ttl = "1d"
shadow = false

[[rule]]
id = "never-push"
decision = "deny"
hosts = ["local"]
prefix = ["git", "push"]
permanent = true
shadow = false
"""


def call(command: str, *, cwd: str = "/srv/lab", host: str = "local", family: str = "claude", tool: str = "Bash") -> Call:
    return Call(tool=tool, command=command, cwd=cwd, host=host, family=family, tools=tools_of(family))


@pytest.mark.parametrize(
    "command, commands",
    [
        ("touch /tmp/x_1", [("touch", "/tmp/x_1")]),
        ("touch /tmp/x_2 && curl https://e.com", [("touch", "/tmp/x_2"), ("curl", "https://e.com")]),
        ("a | b || c & d\ne", [("a",), ("b",), ("c",), ("d",), ("e",)]),
        ("git commit -m 'two words' \"and more\"", [("git", "commit", "-m", "two words", "and more")]),
        ("git status # a comment", [("git", "status")]),
    ],
)
def test_a_plain_command_line_is_its_simple_commands(command, commands):
    assert list(parse(command).commands) == commands


@pytest.mark.parametrize(
    "command",
    [
        "echo $(id)", "echo `id`", "echo $HOME", "echo \"$HOME\"", "cat <(ls)", "echo $((1+2))",
        "rm -rf ~", "rm /tmp/x_*", "echo {a,b}", "echo a\\ b",
        "(cd /; rm -rf x)", "{ rm x; }", "if true; then rm x; fi", "for f in a; do rm $f; done", "f() { rm x; }", "! rm x",
        "LD_PRELOAD=/x.so ls", "env X=1 rm x", "sudo rm x", "timeout 5 rm x", "xargs rm", "nohup rm x", "sh -c 'rm x'",
        "bash -c 'rm x'", "eval rm x", "/usr/bin/env rm x", "cat <<EOF\nx\nEOF", "echo 'unterminated",
    ],
)  # fmt: skip
def test_what_the_shell_would_change_or_hide_is_not_read_at_all(command):
    with pytest.raises(Unreadable):
        parse(command)


def test_an_allow_answers_only_a_call_every_part_of_which_it_fits():
    rules = parse_rules(LAB, tools=vocabulary()).rules
    assert judge(rules, call("touch /tmp/x_1")).decision is Decision.ALLOW
    for waits in ("touch /tmp/x_2 && curl https://example.com", "touch /tmp/x_3; rm -rf ~", "touch /tmp/x_4 | sh", "touch /tmp/x_5 /etc/passwd"):
        assert judge(rules, call(waits)).decision is None, waits
    # Two allows may share a call, part by part; a redirection out of the project is the person's.
    both = judge(rules, call("touch /tmp/x_6 && git status"))
    assert both.decision is Decision.ALLOW and both.rule == "lab-touch+git-read"
    assert judge(rules, call("git status > /etc/cron.d/x")).decision is None
    # A redirection writes only inside the project of the rule that fits its command: git-read has none (only /dev/null).
    assert judge(rules, call("git status > notes.txt")).decision is None
    assert judge(rules, call("git status > /dev/null")).decision is Decision.ALLOW
    assert judge(rules, call("touch /tmp/x_7 > notes.txt")).decision is Decision.ALLOW  # lab-touch's project: /srv/lab


def test_a_deny_wins_over_every_allow_even_in_a_line_it_cannot_read():
    rules = parse_rules(LAB, tools=vocabulary()).rules
    assert judge(rules, call("git status && git push")).rule == "never-push"
    assert judge(rules, call("git push $(echo origin)")).decision is Decision.DENY


def test_a_rule_answers_only_where_it_applies():
    rules = parse_rules(LAB, tools=vocabulary()).rules
    assert judge(rules, call("touch /tmp/x_1", cwd="/srv/other")).decision is None  # another project
    assert judge(rules, call("touch /tmp/x_1", cwd="/srv/lab2")).decision is None  # a folder that only starts the same
    assert judge(rules, call("touch /tmp/x_1", cwd="/srv/lab/sub")).decision is Decision.ALLOW
    assert judge(rules, call("touch /tmp/x_1", host="box")).decision is None  # lab-touch is local only
    assert judge(rules, call("git status", host="box", cwd="/anywhere")).decision is Decision.ALLOW
    assert judge(rules, call("touch /tmp/x_1", tool="Write")).decision is None


@pytest.mark.parametrize(
    "table, says",
    [
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "*"\nttl = "1h"', "wildcards alone"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ntool = "Bash"\nttl = "1h"', "must name"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls"', "ttl is required"),
        ('id = "a"\ndecision = "allow"\ncommand = "ls"\nttl = "1h"', "hosts is required"),
        ('id = "a"\ndecision = "maybe"\nhosts = ["local"]\ncommand = "ls"\nttl = "1h"', "decision must be"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls *"\nttl = "1h"\nmatch = ["ls /etc"]', "does not fit it"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls **"\nttl = "1h"\nnot_match = ["ls etc/x"]', "fits it"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls"\nttl = "soon"', "ttl must be"),
        ('id = "a"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls"\nttl = "1h"\nyolo = true', "no field 'yolo'"),
    ],
)
def test_a_bad_rule_is_refused_with_its_line_and_the_others_load(table, says):
    text = f'# my rules\n\n[[rule]]\nid = "ok"\ndecision = "deny"\nhosts = "local"\nprefix = ["rm"]\npermanent = true\n\n[[rule]]\n{table}\n'
    loaded = parse_rules(text, "rules.toml", tools=vocabulary())
    assert [r.id for r in loaded.rules] == ["ok"]
    (error,) = loaded.errors
    assert error.startswith("rules.toml:10: rule ") and says in error, error


def test_new_rules_start_in_shadow_mode():
    (rule,) = parse_rules('[[rule]]\nid = "a"\ndecision = "allow"\nhosts = ["local"]\nprefix = ["ls"]\nttl = "1h"\n', tools=vocabulary()).rules
    assert rule.shadow and rule.line == 1


def test_a_rules_file_others_can_write_loads_nothing(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(LAB)
    os.chmod(path, 0o600)
    assert len(load(path, tools=vocabulary()).rules) == 3
    os.chmod(path, 0o666)
    loaded = load(path, tools=vocabulary())
    assert loaded.rules == () and "chmod 600" in loaded.errors[0]
    link = tmp_path / "link.toml"
    link.symlink_to(path)
    assert load(link, tools=vocabulary()).rules == () and load(tmp_path / "none.toml", tools=vocabulary()) == load(tmp_path / "none.toml", tools=vocabulary())


def test_rules_test_replays_your_answers_and_flags_what_you_refused(tmp_path):
    from headspace_tui.cli.rules_cmd import rules_list, rules_test
    from headspace_tui.state.eventlog import EventLog

    path = tmp_path / "rules.toml"
    path.write_text(LAB + '\n[[rule]]\nid = "broken"\ndecision = "allow"\nhosts = ["local"]\ncommand = "**"\nttl = "1h"\n')
    os.chmod(path, 0o600)
    log = tmp_path / "events.db"
    with EventLog(log) as events:

        def answered(command: str, what: str, cwd: str = "/srv/lab") -> None:
            payload = {"tool": "Bash", "input": json.dumps({"command": command}), "what": f"Bash: {command} → {what}", "target": "lab:0.0", "host": "local", "cwd": cwd}
            events.write("answer", "k1", {**payload, "decision": "deny" if "No" in what else "allow", "rule": ""})  # as the journal writes it

        answered("touch /tmp/x_1", "1. Yes")
        answered("touch /tmp/x_2", "4. No")
        answered("touch /tmp/x_3 && curl https://e.com", "1. Yes")
        answered("touch /tmp/x_4", "1. Yes", cwd="/elsewhere")
        shown = {"tool": "Bash", "input": "", "shown": "touch /tmp/x_5", "what": "Bash → deny", "target": "lab:0.0", "cwd": "/srv/lab"}
        events.write("answer", "k1", {**shown, "decision": "deny", "rule": ""})
        # Whether you refused is the answer's field, never its words: an answer that says "No" but decided nothing is not flagged.
        events.write("answer", "k1", {**shown, "shown": "touch /tmp/x_6", "what": "Bash: touch /tmp/x_6 → 4. No", "decision": ""})
    out, err = rules_test("lab-touch", 7, path, log)
    assert err == []
    assert out[0] == "# lab-touch on 6 answers of the last 7 days: 4 it would have answered"
    assert [line.split("  ", 2)[2] for line in out[1:5]] == [
        "Bash: touch /tmp/x_1  → would allow (you: 1. Yes)",
        "Bash: touch /tmp/x_2  → would allow (you: 4. No)  ⚑ you denied it",
        "Bash: touch /tmp/x_5  → would allow (you: deny)  ⚑ you denied it",
        "Bash: touch /tmp/x_6  → would allow (you: 4. No)",
    ]
    assert out[-1] == "# 2 flagged: it would allow what you refused or what failed"
    listed, refused = rules_list(path, log)
    assert listed[0].endswith("3 rules") and "lab-touch  allow touch /tmp/x_*" in listed[1] and "0 uses" in listed[1] and "not loaded by a service yet" in listed[1]
    assert "never expires" in listed[3]
    assert len(refused) == 1 and "rule broken refused" in refused[0]
    assert rules_test("nope", 7, path, log)[1][-1].startswith("no rule 'nope'")


def test_pauses_by_scope_and_a_resume_of_everything_ends_every_pause(tmp_path):
    """The pauses as the service writes them (``rules pause`` asks it: tests/e2e/test_rules_live.py), read back by ``rules list``."""
    from headspace_tui.cli.rules_cmd import rules_list
    from headspace_tui.rules.pauses import PAUSE, is_paused, pause_event, pause_words
    from headspace_tui.service.acting.rule_state import read_state
    from headspace_tui.state.eventlog import EventLog

    def rules_pause(on: bool, host: str = "", rule: str = "", log=None):
        with EventLog(log) as events:
            events.write(PAUSE, None, pause_event(on, rule, host, "test"))
        return [pause_words(on, rule, host)], []

    path = tmp_path / "rules.toml"
    path.write_text(LAB)
    os.chmod(path, 0o600)
    log = tmp_path / "events.db"
    assert rules_pause(True, host="box", log=log) == (["every rule on box: paused"], [])
    rules_pause(True, rule="lab-touch", log=log)
    state = read_state(log)[0].paused
    assert is_paused(state, "git-read", "box") and not is_paused(state, "git-read", "local")
    assert is_paused(state, "lab-touch", "local")
    listed, _ = rules_list(path, log)
    assert [("PAUSED" in line) for line in listed[1:]] == [True, True, False]  # lab-touch itself; git-read on box; never-push (local only)
    rules_pause(False, rule="lab-touch", log=log)
    assert [("PAUSED" in line) for line in rules_list(path, log)[0][1:]] == [False, True, False]
    rules_pause(False, log=log)  # resume everything
    assert not any("PAUSED" in line for line in rules_list(path, log)[0])


def test_rules_suggest_offers_the_narrowest_rule_for_what_you_approved_alike_and_it_loads(tmp_path):
    from headspace_tui.cli.rules_cmd import rules_suggest
    from headspace_tui.state.eventlog import EventLog

    log = tmp_path / "events.db"
    with EventLog(log) as events:

        def answered(command: str, what: str = "1. Yes", cwd: str = "/srv/lab", rule: str = "") -> None:
            payload = {"tool": "Bash", "input": json.dumps({"command": command}), "what": f"Bash: {command} → {what}", "target": "lab:0.0", "host": "local", "cwd": cwd}
            events.write("answer", "k1", {**payload, "decision": "deny" if "No" in what else "allow", "rule": rule})

        for _ in range(3):
            answered('npm test -- "unit"')
            answered("make build && make deploy")
            answered("git status", rule="git-read")  # a rule's answers are not yours to suggest from
        answered('npm test -- "unit"', what="4. No")  # a refusal is not an approval
        answered("ls", cwd="/srv/lab")  # once only
        for _ in range(3):  # a file literally named '*': never suggested as a glob
            events.write("answer", "k1", {"tool": "Write", "input": json.dumps({"file_path": "/srv/lab/*"}), "what": "Write → 1. Yes", "cwd": "/srv/lab", "host": "local", "decision": "allow"})
    out, _ = rules_suggest(3, 7, log)
    text = "\n".join(out)
    assert 'command = "npm test -- unit"' in text and 'project = "/srv/lab"' in text and "shadow = true" in text
    assert "make build && make deploy (3 times): not suggested" in text and 'command = "ls"' not in text and "git status" not in text
    assert "Write: /srv/lab/* (3 times): not suggested" in text and 'path = ["/srv/lab/*"]' not in text
    loaded = parse_rules("\n".join(line for line in out if not line.startswith("#")), tools=vocabulary())
    assert loaded.errors == () and [r.id for r in loaded.rules] == ["suggested-1"]
    assert judge(loaded.rules, call('npm test -- "unit"')).decision is Decision.ALLOW
    assert judge(loaded.rules, call("npm test -- e2e")).decision is None
    assert rules_suggest(5, 7, log)[0] == ["# no request approved 5 times alike in the last 7 days"]


@pytest.mark.parametrize(
    "words, says",
    [
        ('prefix = ["unzip"]', "allows whatever command or code"),  # the archive picks the names it writes
        ('prefix = ["ssh", "box"]', "allows whatever command or code"),
        ('prefix = ["sed", "-n", "1,5p"]', "must name what it runs"),  # 1,5p follows an option: not sed's named script
        ('prefix = ["python", "-W", "ignore"]', "must name what it runs"),  # ignore is -W's value
        ('prefix = ["npx"]', "must name what it runs"),
        ('command = "npx *"', "fetches and runs allows any package"),
        ('command = "uvx * --help"', "fetches and runs allows any package"),
        ('path = ["**/*"]', "wildcards alone"),
        ('path = ["/*/**"]', "wildcards alone"),
        ('path = [".claude/settings.json"]', "agent's own controls"),
        ('path = ["docs/CLAUDE.md"]', "agent's own controls"),
    ],
)
def test_an_allow_that_would_let_through_more_than_it_can_see_is_refused_at_load(words: str, says: str):
    loaded = parse_rules(f'[[rule]]\nid = "a"\ndecision = "allow"\nhosts = ["local"]\nproject = "/srv/lab"\n{words}\nttl = "1h"\n', tools=vocabulary())
    assert loaded.rules == () and says in loaded.errors[0], loaded.errors


@pytest.mark.parametrize("words", ['prefix = ["gzip"]', 'prefix = ["uniq"]', 'prefix = ["xxd"]', 'prefix = ["rm"]', 'tool = "Write"\npath = ["/srv/x/**"]'])
def test_a_rule_that_writes_files_needs_its_project(words: str):
    loaded = parse_rules(f'[[rule]]\nid = "a"\ndecision = "allow"\nhosts = ["local"]\n{words}\nttl = "1h"\n', tools=vocabulary())
    assert loaded.rules == () and ("needs project" in loaded.errors[0]), loaded.errors


@pytest.mark.parametrize("words", ['prefix = ["python", "-m", "pytest"]', 'prefix = ["npx", "prettier"]', 'prefix = ["node", "scripts/build.js"]', 'command = "npx prettier --check ."'])
def test_a_rule_that_names_its_code_loads(words: str):
    loaded = parse_rules(f'[[rule]]\nid = "a"\ndecision = "allow"\nhosts = ["local"]\nproject = "/srv/lab"\n{words}\nttl = "1h"\n', tools=vocabulary())
    assert loaded.errors == () and len(loaded.rules) == 1


def test_a_rules_file_whose_tables_cannot_be_told_apart_loads_nothing():
    spaced = '[[ rule ]]\nid = "a"\ndecision = "deny"\nhosts = ["local"]\nprefix = ["rm"]\npermanent = true\n'
    (rule,) = parse_rules(spaced, tools=vocabulary()).rules  # TOML's own spellings of the header are read
    assert rule.source.startswith("[[ rule ]]") and 'prefix = ["rm"]' in rule.source
    inline = parse_rules('rule = [{id = "a", decision = "deny", hosts = ["local"], prefix = ["rm"], permanent = true}]\n', tools=vocabulary())
    assert inline.rules == () and "a [[rule]] table of its own" in inline.errors[0]
