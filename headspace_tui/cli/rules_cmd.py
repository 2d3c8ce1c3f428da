"""``headspace rules list`` and ``headspace rules test ID``: the rules file as headspace reads it, and a rule tried on your own history.

``list`` prints each rule with its line, what it decides, where, for how
long and in which mode, with its uses and expiry as the event log has them,
and every rule the file refused, with why.  ``test`` replays the answers of
the last days (the event log's ``answer`` events: the exact call where a
hook held it, else the command the dialog showed) through the one rule, as
if it were live, and prints what it would have answered; it flags each
request it would allow that you denied, or whose answer failed.  Nothing is
answered, nothing written: ``rules pause|resume|revoke`` are the service's
to carry out (``cmd_rules`` below asks it, as the phone page does).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from ..detect.families import tools_of, vocabulary
from ..model import DEFAULT_FAMILY
from ..rules.judge import judge
from ..rules.model import Call, Decision, Rule
from ..rules.pauses import is_paused
from ..rules.rules_file import default_path, describe, load
from ..rules.shell import Unreadable, parse
from ..service.acting.rule_state import read_state
from ..shared.safe_text import clean
from ..state.eventlog import EventLog, EventLogError, StoredEvent
from ..state.eventlog import default_path as log_path
from .common import EXIT_FAIL, EXIT_OK, UserError, load_plugins_here, server_of


def rules_list(path: Path | None = None, log: Path | None = None) -> tuple[list[str], list[str]]:
    """(lines for stdout, lines for stderr): each rule with its uses, expiry and pause as the event log keeps them (service/acting/rule_state.py)."""
    path = path or default_path()
    loaded = load(path, tools=vocabulary())
    out = [f"# {path}: {len(loaded.rules)} rule{'s' if len(loaded.rules) != 1 else ''}"]
    state, unreadable = read_state(log or log_path())
    problems = [clean(e) for e in loaded.errors]
    if unreadable and loaded.rules:
        said = f"the rules' state cannot be read ({unreadable}): live rules answer nothing, as shadow rules, until it can"
        out.append(clean(f"# {said}", 400))
        problems.append(clean(said, 400))
    now = max(time.time(), state.latest)  # a clock set back revives nothing
    for rule, line in zip(loaded.rules, describe(loaded.rules), strict=True):
        first = state.first.get(rule.key)
        uses = state.uses.get(rule.key, 0)
        if unreadable:
            life = "state unknown"
        elif rule.key in state.revoked:
            life = "REVOKED (edit the rule to make it another)"
        elif rule.key in state.expired:
            life = "expired"
        elif rule.permanent:
            life = "never expires"
        elif first is None:
            life = "not loaded by a service yet"
        else:
            left = first + rule.ttl - now
            life = f"expires in {_span(left)}" if left > 0 else "expired"
        limit = f" of {rule.max_uses}" if rule.max_uses else ""
        stopped = "  ·  PAUSED" if any(is_paused(state.paused, rule.id, host) for host in rule.hosts) else ""
        out.append(f"{line}  ·  {uses}{limit} use{'s' if uses != 1 else ''}  ·  {life}{stopped}")
    return out, problems


def rules_test(rule_id: str, days: float, path: Path | None = None, log: Path | None = None) -> tuple[list[str], list[str]]:
    loaded = load(path or default_path(), tools=vocabulary())
    rule = loaded.rule(rule_id)
    if rule is None:
        known = ", ".join(r.id for r in loaded.rules) or "none"
        return [], [*(clean(e) for e in loaded.errors), f"no rule {rule_id!r} in {path or default_path()} (rules: {known})"]
    live = replace(rule, shadow=False, ttl=0.0, permanent=True, max_uses=0)
    since = time.time() - days * 86400
    answers = [e for e in _events(log, ("answer",)) if e.ts >= since]
    out, flagged = [], 0
    for event in answers:
        call = replayed(event)
        if call is None:
            continue
        verdict = judge([live], call)
        if verdict.decision is None:
            continue
        you = str(event.payload.get("what", ""))
        denied = event.payload.get("decision") == "deny"  # the answer's field, never its words
        failed = str(event.payload.get("outcome", "")).startswith(("failed", "not delivered")) or event.payload.get("delivered") is False
        flag = ""
        if verdict.decision is Decision.ALLOW and (denied or failed):
            flag = "  ⚑ you denied it" if denied else "  ⚑ its answer failed"
            flagged += 1
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(event.ts))
        out.append(clean(f"{stamp}  {event.payload.get('target', '?')}  {call.tool}: {call.example}  → would {verdict.decision.value} (you: {you.rpartition('→')[2].strip() or you}){flag}", 400))
    head = f"# {rule.id} on {len(answers)} answer{'s' if len(answers) != 1 else ''} of the last {days:g} day{'s' if days != 1 else ''}: {len(out)} it would have answered"
    return [head, *out, *([f"# {flagged} flagged: it would allow what you refused or what failed"] if flagged else [])], []


def _str(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def rules_suggest(times: int, days: float, log: Path | None = None) -> tuple[list[str], list[str]]:
    """The narrowest rule (one exact command or file, in one folder, on one host, for 8 hours, in shadow mode) for each request you approved ``times`` times alike."""
    since = time.time() - days * 86400
    seen: dict[tuple[str, str, str, str, str], int] = {}
    for event in _events(log, ("answer",)):
        call = replayed(event) if event.ts >= since else None
        p = event.payload
        if call is None or not call.example or p.get("decision") != "allow" or p.get("delivered") is False or p.get("rule"):
            continue  # only what you approved yourself, as the answer's fields say
        key = (call.family, call.tool, call.example, call.host, call.cwd)
        seen[key] = seen.get(key, 0) + 1
    out: list[str] = []
    for n, ((family, tool, example, host, cwd), count) in enumerate(sorted(seen.items(), key=lambda kv: -kv[1])):
        if count < times:
            continue
        tools = tools_of(family)
        if tool in tools.shell:
            try:
                parsed = parse(example)
            except Unreadable as exc:
                out.append(clean(f"# {tool}: {example} ({count} times): not suggested, {exc}", 300))
                continue
            words = parsed.commands[0] if len(parsed.commands) == 1 and not parsed.writes else ()
            if not words or any(not w or any(c.isspace() or c in '*?"\\' for c in w) for w in words):
                out.append(clean(f"# {tool}: {example} ({count} times): not suggested, not one plain command", 300))
                continue
            plain = " ".join(words)
            what_line, example = f'command = "{plain}"', plain  # the words alone: what the rule and its example say
        elif tool in tools.files and _plain_name(example):
            what_line = f'tool = "{tool}"\npath = ["{example}"]'
        elif tool in tools.files:
            out.append(clean(f"# {tool}: {example} ({count} times): not suggested, its name holds a glob, quote or control character", 300))
            continue
        else:
            continue
        place = f'project = "{cwd}"\n' if _plain_name(cwd) else ""
        out.append(clean(f"# you approved {tool}: {example} {count} times", 300))
        out.append(f'[[rule]]\nid = "suggested-{n + 1}"\ndecision = "allow"\nhosts = ["{host}"]\n{place}{what_line}\nttl = "8h"\nshadow = true\nmatch = ["{example}"]\n')
    if not out:
        return [f"# no request approved {times} times alike in the last {days:g} days"], []
    return ["# paste what you want into rules.toml; each starts in shadow mode (set shadow = false when 'rules test' agrees)", *out], []


def _plain_name(name: str) -> bool:
    """A file or folder name a rule can quote as it is: no glob character (a file named ``*`` is not every file), quote, backslash or control."""
    return bool(name) and not any(c in '*?[]"\\' or not c.isprintable() for c in name)


def replayed(event: StoredEvent) -> Call | None:
    """The call an ``answer`` event answered, as the rules see it (None: too little is known of it)."""
    p = event.payload
    tool = _str(p.get("tool"))
    if not tool:
        return None
    given: dict = {}
    if _str(p.get("input")):
        try:
            parsed = json.loads(p["input"])
            given = parsed if isinstance(parsed, dict) else {}
        except ValueError:
            given = {}
    shown = _str(p.get("shown"))
    family = _str(p.get("family"), DEFAULT_FAMILY)
    tools = tools_of(family)
    command = _str(given.get("command"), shown) if tool in tools.shell else ""
    path = _str(given.get("file_path") or given.get("path"), shown) if tool in tools.files else ""
    host, cwd, pane = _str(p.get("host"), "local"), _str(p.get("cwd")), _str(p.get("target"))
    return Call(tool=tool, command=command, path=path, host=host, cwd=cwd, family=family, tools=tools, pane=pane)


def _events(path: Path | None, kinds: tuple[str, ...]) -> list[StoredEvent]:
    path = path or log_path()
    if not path.exists():
        return []
    try:
        with EventLog(path) as log:
            return sorted((e for kind in kinds for e in log.query(kind=kind)), key=lambda e: e.id)
    except EventLogError:
        return []


def _span(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{max(1, int(seconds // 60))} min"


__all__ = ["Rule", "replayed", "rules_list", "rules_test"]


def cmd_rules(args: argparse.Namespace) -> int:
    """``headspace rules list|test|suggest``: read the rules file and the event log; ``pause|resume|revoke``: asked of the service."""
    from .rules_cmd import rules_list, rules_suggest, rules_test

    if args.action == "revoke":
        return _rules_by_service(args, "revoke", args.id, "")
    if args.action in ("pause", "resume"):
        return _rules_by_service(args, args.action, args.rule, args.host)
    load_plugins_here()  # the families a rule may name, read here
    if args.action == "suggest":
        out, err = rules_suggest(args.times, args.days)
    else:
        out, err = rules_list() if args.action == "list" else rules_test(args.id, args.days)
    for line in err:
        print(f"headspace: {line}", file=sys.stderr)
    for line in out:
        print(line)
    return EXIT_FAIL if not out else EXIT_OK


def _rules_by_service(args: argparse.Namespace, action: str, rule: str, host: str) -> int:
    """Pause, resume or revoke rules through the service of this tmux server (started first when none runs), as the page does.

    Never written here: the service's rules hold the pauses they answer by,
    and one path for every front end keeps one guard over them.
    """
    from ..api.errors import Refused, ServerGone, ServiceError
    from ..resident.client import ask_rules
    from ..resident.start import asked_or_started
    from ..shared.resident_place import PlaceError

    server = server_of(args)
    try:
        place = asked_or_started(server, args.config)
        said = ask_rules(place, action, rule, host)
    except ServerGone:
        raise UserError(f"no tmux server runs ({server.where()}): no service holds the rules; nothing changed") from None
    except Refused as exc:
        raise UserError(f"{exc}; nothing changed") from None
    except (ServiceError, PlaceError) as exc:
        raise UserError(f"the headspace service: {exc}; nothing changed") from None
    print(clean(said))
    return EXIT_OK
