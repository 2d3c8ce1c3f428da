"""Rules answering for you, with the pinned Claude in manual mode and the resident service as users run it.

The rules file lives where users keep it ($XDG_CONFIG_HOME/headspace/rules.toml,
0600): an allow for ``touch /tmp/<tag>_*`` in this project answers that
command through Claude's hook within a second (the command runs, the event
log names the rule); the same command joined to another by ``&&`` or ``;``
still waits for the person; a shadow rule answers nothing and logs what it
would have done.  Codex's own hook, trusted at Codex's start, is answered
the same way.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from headspace_tui.hooks import settings as hook_settings
from headspace_tui.shared.resident_place import place_of, read_card
from headspace_tui.state.eventlog import EventLog
from headspace_tui.tmux.server import TmuxServer
from tests.e2e import test_web_page as web_page
from tests.e2e.test_resident_service import run, started
from tests.harness import codex_api
from tests.harness import fake_api as api
from tests.harness.codex_agent import APPROVAL, CodexSession, find_codex
from tests.harness.npm_binary import require
from tests.harness.wait import poll

pytestmark = pytest.mark.e2e

# The real browser at a phone's size (tests/e2e/test_web_page.py's fixtures), for the page's "answered for you".
chromium, phone, web_on, WAIT = web_page.chromium, web_page.phone, web_page.web_on, web_page.WAIT


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path, Path]:
    """A tag for this test's /tmp files, and its own config and state folders (the rules file, the event log) for the service it starts."""
    config, state = tmp_path / "config", tmp_path / "state"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return f"hs{uuid.uuid4().hex[:8]}", config, state


def rules_file(config: Path, text: str) -> Path:
    folder = config / "headspace"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rules.toml"
    path.write_text(text)
    os.chmod(path, 0o600)
    return path


def hooked(claude_session, script: list, name: str):
    """Claude with headspace's answer hook installed (where the service's channel is), as ``headspace hooks install --answer`` leaves it."""
    session = claude_session(script, name=name, launch=False, extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
    hook_settings.install(session.home / ".claude" / "settings.json", answer_wait=60)
    session.launch()
    return session


def row(server: str) -> dict:
    (line,) = run("-L", server, "status", "--json").stdout.splitlines()
    return json.loads(line)


def made_by_rule(session, prompt: str, made: str, how: str) -> None:
    """Send ``prompt``; its command makes ``made`` once the rule answered it (through ``how``), and the agent replies "Made one."."""
    session.submit(prompt)  # returns once the scripted API has the prompt
    asked = time.monotonic()
    poll(lambda: os.path.exists(made), bool, timeout=30)
    print(f"the command ran {time.monotonic() - asked:.2f} s after the API had the prompt (the rule answered through {how})")
    session.wait_for("Made one.", timeout=30)


def still_waits(session, server: str, state: Path, prompt: str, path: str, *, answered: int) -> None:
    """Send ``prompt``: its command (making ``path``) waits for the person and the rules answered ``answered`` in all; then refuse it."""
    session.submit(prompt)
    waiting = poll(lambda: row(server), lambda r: r["state"] == "permission" and path in (r["detail"] or ""), timeout=30)
    time.sleep(2.5)  # time a rule would have had to answer it (the keys' rules look within 2 s)
    assert row(server)["state"] == "permission" and not os.path.exists(path), waiting
    assert len(events(state, "rule_answer")) == answered
    run("-L", server, "send", session.pane_id, "--deny")


def events(state: Path, kind: str) -> list[dict]:
    path = state / "headspace" / "events.db"
    if not path.exists():
        return []
    with EventLog(path) as log:
        return [e.payload for e in log.query(kind=kind)]


def test_an_allow_answers_its_command_and_compound_ones_still_wait(claude_session, private_tmux, services, where):
    tag, config, state = where
    first, second, third = f"/tmp/{tag}_1", f"/tmp/{tag}_2", f"/tmp/{tag}_3"
    script = [
        api.bash(f"touch {first}", "Make x_1"),
        api.text("Made one."),
        api.bash(f"touch {second} && curl -s http://127.0.0.1:9/{tag}", "Make x_2"),
        api.bash(f"touch {third}; rm -rf ~", "Make x_3"),  # HOME is this test's own; it is never run
    ]
    session = hooked(claude_session, script, "ruled")
    rules_file(
        config,
        f"""
[[rule]]
id = "lab-touch"
decision = "allow"
hosts = ["local"]
project = "{session.workdir}"
command = "touch /tmp/{tag}_*"
ttl = "1h"
shadow = false
match = ["touch /tmp/{tag}_1"]
not_match = ["touch /tmp/{tag}_2 && curl https://example.com", "touch /tmp/{tag}_3; rm -rf ~"]
""",
    )
    try:
        started(private_tmux.name, services)
        made_by_rule(session, "make the first file", first, "the hook")
        answered = events(state, "rule_answer")
        assert [(a["rule"], a["decision"], a["tool"], a["detail"]) for a in answered] == [("lab-touch", "allow", "Bash", f"touch {first}")]
        assert answered[0]["fields"] == ["host", "project", "command"] and answered[0]["pane"] == "ruled:0.0" and answered[0]["rules_file"]
        (audit,) = [a for a in events(state, "answer") if first in str(a.get("what"))]
        assert "✓ by rule lab-touch" in audit["what"] and audit["channel"] == "hook"

        still_waits(session, private_tmux.name, state, "make the second file", second, answered=1)
        session.wait_for("Interrupted", timeout=30)
        still_waits(session, private_tmux.name, state, "make the third file", third, answered=1)
        assert session.home.is_dir()
    finally:
        for path in (first, second, third):
            if os.path.exists(path):
                os.unlink(path)


def test_a_shadow_rule_answers_nothing_and_logs_what_it_would_have_done(claude_session, private_tmux, services, where):
    tag, config, state = where
    target = f"/tmp/{tag}_1"
    session = hooked(claude_session, [api.bash(f"touch {target}", "Make it"), api.text("Made.")], "shadowed")
    rules_file(config, f'[[rule]]\nid = "try-touch"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\n')
    try:
        started(private_tmux.name, services)
        session.submit("make it")
        poll(lambda: events(state, "rule_shadow"), bool, timeout=30)
        (would,) = events(state, "rule_shadow")
        assert (would["rule"], would["decision"], would["detail"]) == ("try-touch", "allow", f"touch {target}")
        time.sleep(2.0)
        assert row(private_tmux.name)["state"] == "permission" and not os.path.exists(target) and events(state, "rule_answer") == []
    finally:
        if os.path.exists(target):
            os.unlink(target)


def test_an_expired_rule_and_one_for_another_project_or_host_answer_nothing(claude_session, private_tmux, services, tmp_path, where):
    tag, config, state = where
    target = f"/tmp/{tag}_1"
    session = hooked(claude_session, [api.bash(f"touch {target}", "Make it"), api.text("Made.")], "kept")
    common = f'decision = "allow"\ncommand = "touch /tmp/{tag}_*"\nshadow = false\n'
    rules_file(
        config,
        f'[[rule]]\nid = "brief"\nhosts = ["local"]\nttl = "2s"\n{common}\n'
        f'[[rule]]\nid = "other-project"\nhosts = ["local"]\nproject = "{tmp_path / "elsewhere"}"\nttl = "1h"\n{common}\n'
        f'[[rule]]\nid = "other-host"\nhosts = ["box"]\nttl = "1h"\n{common}',
    )
    try:
        started(private_tmux.name, services)
        poll(lambda: events(state, "rule_loaded"), lambda e: len(e) == 3, timeout=10)  # read (and dated) at once, not at the first request
        time.sleep(2.5)  # "brief" runs out
        listed = run("rules", "list").stdout
        assert "brief  allow" in listed and "expired" in listed, listed
        session.submit("make it")
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "permission" and target in (r["detail"] or ""), timeout=30)
        time.sleep(2.0)
        assert row(private_tmux.name)["state"] == "permission" and not os.path.exists(target)
        assert events(state, "rule_answer") == [] and events(state, "rule_shadow") == []
    finally:
        if os.path.exists(target):
            os.unlink(target)


def test_a_paused_rule_answers_nothing_and_one_you_overruled_pauses_itself(claude_session, private_tmux, services, where):
    """``rules pause`` stops every rule at once; a request you refuse that a (shadow) rule would allow pauses that rule."""
    tag, config, state = where
    first, second = f"/tmp/{tag}_1", f"/tmp/{tag}_2"
    script = [api.bash(f"touch {first}", "Make one"), api.text("Not made."), api.bash(f"touch {second}", "Make two"), api.text("Made two.")]
    session = hooked(claude_session, script, "paused")
    common = f'decision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\n'
    rules_file(config, f'[[rule]]\nid = "trial"\n{common}\n[[rule]]\nid = "live"\n{common}shadow = false\n')
    try:
        started(private_tmux.name, services)
        assert "every rule: paused" in run("-L", private_tmux.name, "rules", "pause").stdout  # asked of the service, which holds the rules
        session.submit("make one")
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "permission" and first in (r["detail"] or ""), timeout=30)
        time.sleep(2.0)
        assert row(private_tmux.name)["state"] == "permission" and not os.path.exists(first)  # "live" would have, but all are paused
        assert events(state, "rule_answer") == [] and events(state, "rule_shadow") == []
        run("-L", private_tmux.name, "send", session.pane_id, "--deny")  # you refuse what both rules would allow
        session.wait_for("Interrupted", timeout=30)
        paused = poll(lambda: {e["rule"] for e in events(state, "rules_pause") if e.get("on") and e.get("rule")}, lambda s: s == {"trial", "live"}, timeout=10)
        assert paused
        run("-L", private_tmux.name, "rules", "resume")  # every pause ends, the ones the rules gave themselves too
        listed = run("rules", "list").stdout
        assert "PAUSED" not in listed, listed
    finally:
        for path in (first, second):
            if os.path.exists(path):
                os.unlink(path)


def test_pause_and_revoke_from_the_command_line_are_the_services_started_when_none_runs(private_tmux, services, tmp_path, where):
    """``rules pause|resume|revoke`` write nothing themselves: with no service running one is started and its rules carry them out.

    With no tmux server at all there is no service to ask: one line, nothing
    written.  The pause's reason in the event log is the service's
    (``headspace rules: pause``); a revoke of no such rule changes nothing
    and says so in one line; ``rules list`` reads back what the service wrote.
    """
    _tag, config, state = where
    rules_file(config, '[[rule]]\nid = "trial"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/hs-never_*"\nttl = "1h"\n')
    gone = run("-L", private_tmux.name, "rules", "pause")
    assert gone.returncode != 0 and gone.stderr.strip().endswith("no service holds the rules; nothing changed") and "\n" not in gone.stderr.strip(), gone
    assert events(state, "rules_pause") == []
    private_tmux.new_session("idle", width=80, height=24, cwd=str(tmp_path), command=["sleep", "600"])
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    assert read_card(place) is None  # no service runs for this server yet
    paused = run("-L", private_tmux.name, "rules", "pause", "--rule", "trial")
    assert paused.returncode == 0 and paused.stdout.strip() == "rule trial: paused", paused
    card = read_card(place)
    assert card is not None and isinstance(card.get("pid"), int), "rules pause did not go through a service"
    services.append(card["pid"])
    (pause,) = poll(lambda: events(state, "rules_pause"), bool, timeout=10)
    assert (pause["rule"], pause["on"], pause["why"]) == ("trial", True, "headspace rules: pause"), pause
    assert "PAUSED" in run("rules", "list").stdout

    refused = run("-L", private_tmux.name, "rules", "revoke", "nope")
    assert refused.returncode != 0 and "no rule 'nope'" in refused.stderr and "nothing changed" in refused.stderr, refused
    assert "\n" not in refused.stderr.strip(), refused.stderr  # one line, no traceback
    revoked = run("-L", private_tmux.name, "rules", "revoke", "trial")
    assert revoked.returncode == 0 and "rule trial: revoked" in revoked.stdout, revoked
    poll(lambda: events(state, "rule_revoked"), bool, timeout=10)
    assert "REVOKED" in run("rules", "list").stdout
    assert read_card(place)["pid"] == card["pid"]  # the same service all along


def test_a_rule_answers_codexs_command_through_codexs_own_hook_and_leaves_the_rest_to_its_dialog(private_tmux, services, tmp_path, where):
    """The pinned Codex with ``headspace hooks install --codex``'s hook, trusted at Codex's start as it asks.

    Codex runs the hook from its shared daemon and draws no dialog until it
    returns: the service finds the agent by the call's conversation record,
    the rule allows ``touch`` in this project, the command runs and the event
    log names the rule; a compound command is let go at once and Codex's own
    dialog asks the person.
    """
    codex = require(find_codex, "Codex CLI")
    tag, config, state = where
    first, second = f"/tmp/{tag}_1", f"/tmp/{tag}_2"
    script = [
        codex_api.command(f"touch {first}", justification="Make x_1?"),
        codex_api.text("Made one."),
        codex_api.command(f"touch {second}; echo {tag}-more", justification="Make x_2?"),
    ]
    with codex_api.FakeResponsesAPI(script) as fake:
        session = CodexSession(private_tmux, fake, codex, tmp_path / "codex", name="cxrule", extra_env={"XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"]})
        try:
            session.start_shell()
            rules_file(
                config,
                f"""
[[rule]]
id = "codex-touch"
decision = "allow"
hosts = ["local"]
agents = ["codex"]
project = "{session.workdir}"
command = "touch /tmp/{tag}_*"
ttl = "1h"
shadow = false
match = ["touch /tmp/{tag}_1"]
not_match = ["touch /tmp/{tag}_2; echo more"]
""",
            )
            hooks = session.codex_home / "hooks.json"
            installed = run("hooks", "install", "--codex", env={"CODEX_HOME": str(session.codex_home)})
            assert installed.returncode == 0 and str(hooks) in installed.stdout, installed.stderr
            session.launch(wait_ready=False)
            session.trust_hooks()
            session.wait_ready()
            started(private_tmux.name, services)
            poll(lambda: row(private_tmux.name), lambda r: r["agent"] == "codex", timeout=20)

            made_by_rule(session, "make the first file", first, "Codex's hook")
            answered = events(state, "rule_answer")
            assert [(a["rule"], a["decision"], a["family"], a["tool"], a["detail"]) for a in answered] == [("codex-touch", "allow", "codex", "Bash", f"touch {first}")]
            assert answered[0]["pane"] == "cxrule:0.0" and answered[0]["fields"] == ["host", "project", "agent", "command"], answered
            (audit,) = [a for a in events(state, "answer") if first in str(a.get("what"))]
            assert "✓ by rule codex-touch" in audit["what"] and audit["channel"] == "hook"
            assert "Would you like to run" not in session.screen()  # answered before any dialog was drawn

            session.submit("make the second file")
            session.wait_for(APPROVAL, timeout=30, what="Codex's own dialog for the compound command")
            waiting = poll(lambda: row(private_tmux.name), lambda r: r["state"] == "permission", timeout=20)
            assert second in (waiting["detail"] or ""), waiting
            assert not os.path.exists(second) and len(events(state, "rule_answer")) == 1
            denied = run("-L", private_tmux.name, "send", session.pane_id, "--deny")
            assert denied.returncode == 0, denied.stderr
            session.wait_for("You canceled the request", timeout=30)
            assert not os.path.exists(second)
        finally:
            session.close()
            for path in (first, second):
                if os.path.exists(path):
                    os.unlink(path)


def test_the_phone_page_lists_what_rules_answered_and_pauses_resumes_and_revokes_them(claude_session, private_tmux, services, where, phone):
    """The page's "Answered for you": the rule's answers (the same one thrice is one line), then Pause, Resume and Revoke, each as the service and ``rules list`` see it."""
    tag, config, state = where
    first, second = f"/tmp/{tag}_1", f"/tmp/{tag}_2"
    thrice = [api.bash(f"touch {first}", "Make one") for _ in range(3)]
    script = [*thrice, api.text("Made one."), api.bash(f"touch {second}", "Make two"), api.text("Made two.")]
    session = hooked(claude_session, script, "phoned")
    rules_file(config, f'[[rule]]\nid = "web-touch"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\nshadow = false\n')
    try:
        url, _, _ = web_on(private_tmux.name, services)
        session.submit("make one")
        session.wait_for("Made one.", timeout=60)  # the rule answered all three
        page = phone.new_page()
        page.goto(url)
        page.locator("#ruled summary").tap()
        item = page.locator('#ruled li[data-rule="web-touch"]')
        page.locator('#ruled li[data-rule="web-touch"][data-state="answering"][data-count="3"]').wait_for(timeout=WAIT)
        assert item.count() == 1 and item.get_by_role("button", name="Pause rule").count() == 1  # one line, one set of buttons
        assert item.locator(".what").inner_text() == f"✓ Bash: touch {first}"
        who = item.locator(".who").inner_text()
        assert who.startswith("3× ") and "phoned:0.0" in who and "by rule web-touch" in who, who
        assert page.locator("#ruled-count").inner_text() == "(3 today)"

        item.get_by_role("button", name="Pause rule").tap()
        page.locator('#ruled li[data-rule="web-touch"][data-state="paused"]').wait_for(timeout=WAIT)
        assert page.locator("#ruled-said").inner_text() == "rule web-touch: paused."
        assert "PAUSED" in run("rules", "list").stdout
        assert item.get_by_role("button", name="Revoke rule").count() == 1  # a paused rule can still be ended for good
        item.get_by_role("button", name="Resume rule").tap()
        page.locator('#ruled li[data-rule="web-touch"][data-state="answering"]').wait_for(timeout=WAIT)
        item.get_by_role("button", name="Revoke rule").tap()
        page.locator('#ruled li[data-rule="web-touch"][data-state="revoked"]').wait_for(timeout=WAIT)
        assert item.get_by_role("button").count() == 0  # a revoked rule has no way back from here: edit it in the file
        listed = run("rules", "list").stdout
        assert "REVOKED" in listed and "PAUSED" not in listed, listed

        still_waits(session, private_tmux.name, state, "make two", second, answered=3)  # the revoked rule answers nothing
    finally:
        for path in (first, second):
            if os.path.exists(path):
                os.unlink(path)


def test_without_the_answer_hook_a_rule_answers_a_dialog_shown_whole_by_the_guarded_keys(claude_session, private_tmux, services, where):
    """No hook holds the call: the rule judges the call Claude's transcript holds, and only when the dialog shows it word for word."""
    tag, config, state = where
    first, second = f"/tmp/{tag}_1", f"/tmp/{tag}_2"
    script = [api.bash(f"touch {first}", "Make one"), api.text("Made one."), api.bash(f"touch {second} && echo {tag}-more", "Make two")]
    session = claude_session(script, name="keyed")  # headspace's hooks not installed: its dialog is answered by keys
    rules_file(
        config,
        f'[[rule]]\nid = "keys-touch"\ndecision = "allow"\nhosts = ["local"]\nproject = "{session.workdir}"\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\nshadow = false\n',
    )
    try:
        started(private_tmux.name, services)
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "idle", timeout=20)
        made_by_rule(session, "make one", first, "the keys")
        (answered,) = events(state, "rule_answer")
        assert (answered["rule"], answered["via"], answered["detail"]) == ("keys-touch", "keys", f"touch {first}")
        (audit,) = [a for a in events(state, "answer") if a.get("channel") == "keys"]
        assert "✓ by rule keys-touch" in audit["what"] and audit.get("delivered") is not False, audit

        still_waits(session, private_tmux.name, state, "make two", second, answered=1)
    finally:
        for path in (first, second):
            if os.path.exists(path):
                os.unlink(path)


def _live_bypasses(tmp_path: Path, tag: str) -> tuple[str, list[str], Path]:
    """The corpus's two critical requests (tests/data/rules/hostile.toml [live]), for a throwaway victim folder with a canary."""
    import tomllib

    live = tomllib.loads((Path(__file__).parents[1] / "data" / "rules" / "hostile.toml").read_text(encoding="utf-8"))["live"]
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "canary").write_text("still here\n")
    commands = [c.replace("{victim}", str(victim)).replace("{tag}", tag) for c in live["commands"]]
    return live["rules"], commands, victim


def _never_allowed(session, server: str, state: Path, commands: list[str], victim: Path) -> None:
    """Each command is drawn by Claude, judged, and still waits for the person; then the person refuses it."""
    for n, command in enumerate(commands):
        session.submit(f"run request {n}")
        head = command.split(" ", 2)[:2]
        waiting = poll(lambda: row(server), lambda r, head=head: r["state"] == "permission" and " ".join(head) in (r["detail"] or ""), timeout=40)
        time.sleep(2.5)  # time a rule would have had to answer it (the keys' rules look within 2 s)
        assert row(server)["state"] == "permission", waiting
        assert events(state, "rule_answer") == [] and (victim / "canary").exists()
        run("-L", server, "send", session.pane_id, "--deny")
        session.wait_for("Interrupted", timeout=30)


def test_the_two_critical_bypasses_drawn_by_claude_wait_for_the_person_through_the_hook(claude_session, private_tmux, services, tmp_path, where):
    """Words after a redirection and a backslash-blank before '#': an exact allow once approved both; through Claude's hook now neither."""
    tag, config, state = where
    rules, commands, victim = _live_bypasses(tmp_path, tag)
    session = hooked(claude_session, [api.bash(c, "Clean up") for c in commands], "critical")  # each refused: no reply after it
    (session.workdir / "build").mkdir()
    (session.workdir / "build" / "out.txt").write_text("built\n")
    rules_file(config, rules.replace("{root}", str(session.workdir)))
    started(private_tmux.name, services)
    _never_allowed(session, private_tmux.name, state, commands, victim)
    assert events(state, "rule_shadow") == [] and (session.workdir / "build" / "out.txt").exists()


def test_the_two_critical_bypasses_drawn_by_claude_wait_for_the_person_by_the_keys(claude_session, private_tmux, services, tmp_path, where):
    """The same two with no hook holding the dialog: the keys' rules read the one waiting call from Claude's transcript, and leave it."""
    tag, config, state = where
    rules, commands, victim = _live_bypasses(tmp_path, tag)
    session = claude_session([api.bash(c, "Clean up") for c in commands], name="keyless")
    (session.workdir / "build").mkdir()
    (session.workdir / "build" / "out.txt").write_text("built\n")
    rules_file(config, rules.replace("{root}", str(session.workdir)))
    started(private_tmux.name, services)
    poll(lambda: row(private_tmux.name), lambda r: r["state"] == "idle", timeout=20)
    _never_allowed(session, private_tmux.name, state, commands, victim)


@pytest.mark.parametrize("through", ["the hook", "the keys"])
def test_a_rule_written_while_its_request_waits_answers_that_request(claude_session, private_tmux, services, where, through):
    """The trial: the person sees a request, writes the rule for it, and the row still said permission; the new rule now answers the one waiting."""
    tag, config, state = where
    made = f"/tmp/{tag}_1"
    script = [api.bash(f"touch {made}", "Make one"), api.text("Made one.")]
    session = hooked(claude_session, script, "later") if through == "the hook" else claude_session(script, name="later")
    # A rule for something else: the request is judged when it comes, and left to the person.
    rules_file(config, f'[[rule]]\nid = "other"\ndecision = "allow"\nhosts = ["local"]\ncommand = "ls {tag}"\nttl = "1h"\nshadow = false\n')
    try:
        started(private_tmux.name, services)
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "idle", timeout=20)
        session.submit("make one")
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "permission", timeout=30)
        assert not os.path.exists(made), "nothing answered it before the rule was written"
        rules_file(
            config,
            f'[[rule]]\nid = "later-touch"\ndecision = "allow"\nhosts = ["local"]\nproject = "{session.workdir}"\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\nshadow = false\n',
        )
        poll(lambda: os.path.exists(made), bool, timeout=30)
        session.wait_for("Made one.", timeout=30)
        (answered,) = events(state, "rule_answer")
        assert (answered["rule"], answered["via"], answered["detail"]) == ("later-touch", "hook" if through == "the hook" else "keys", f"touch {made}")
        poll(lambda: row(private_tmux.name), lambda r: r["state"] == "idle", timeout=20)
    finally:
        if os.path.exists(made):
            os.unlink(made)


def test_send_with_no_service_running_answers_through_the_service_it_starts_with_its_audit_and_rules(claude_session, private_tmux, services, where):
    """The CLI never answers by keys of its own: with no service, ``send`` starts one, and the answer carries its audit line and its rules.

    The proof of the rules: a shadow allow for the command the person then
    refuses pauses itself, which only the service's answerer does.
    """
    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    tag, config, state = where
    made = f"/tmp/{tag}_1"
    session = hooked(claude_session, [api.bash(f"touch {made}", "Make one"), api.text("Not made.")], "bycli")
    rules_file(config, f'[[rule]]\nid = "trial"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\n')
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    assert read_card(place) is None, "no service runs before the send"
    try:
        session.submit("make one")
        session.wait_for("Do you want to proceed", timeout=30)
        sent = run("-L", private_tmux.name, "send", session.pane_id, "--deny")
        card = read_card(place)
        if card is not None:
            services.append(card["pid"])
        assert sent.returncode == 0, sent.stderr
        assert card is not None, "the send started the service it answered through"
        session.wait_for("Interrupted", timeout=30)
        (audit,) = [a for a in events(state, "answer") if made in str(a.get("what"))]
        assert audit["channel"] in ("keys", "hook") and audit.get("delivered") is not False, audit
        paused = poll(lambda: {e["rule"] for e in events(state, "rules_pause") if e.get("on") and e.get("rule")}, lambda s: s == {"trial"}, timeout=10)
        assert paused
        assert not os.path.exists(made)
    finally:
        if os.path.exists(made):
            os.unlink(made)


def test_send_approve_with_no_service_running_approves_through_the_service_it_starts_with_its_audit_and_rules(claude_session, private_tmux, services, where):
    """``send --approve`` with no service: the service it starts judges the call by the rules and answers it, with its audit line.

    The proof of the rules: the shadow allow's ``rule_shadow`` event for this
    very command, which only a service's rule engine writes (none ran before
    the send); the proof of the answer: the command ran, and the audit says
    approve.
    """
    from headspace_tui.shared.resident_place import place_of, read_card
    from headspace_tui.tmux.server import TmuxServer

    tag, config, state = where
    made = f"/tmp/{tag}_2"
    session = hooked(claude_session, [api.bash(f"touch {made}", "Make two"), api.text("Made it.")], "approvecli")
    rules_file(config, f'[[rule]]\nid = "trial"\ndecision = "allow"\nhosts = ["local"]\ncommand = "touch /tmp/{tag}_*"\nttl = "1h"\n')
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    assert read_card(place) is None, "no service runs before the send"
    try:
        session.submit("make two")
        session.wait_for("Do you want to proceed", timeout=30)
        sent = run("-L", private_tmux.name, "send", session.pane_id, "--approve")
        card = read_card(place)
        if card is not None:
            services.append(card["pid"])
        assert sent.returncode == 0, sent.stderr
        assert card is not None, "the send started the service it answered through"
        session.wait_for("Made it.", timeout=30)
        assert os.path.exists(made), "the approved command ran"
        (audit,) = [a for a in events(state, "answer") if made in str(a.get("what"))]
        assert audit["channel"] in ("keys", "hook") and audit.get("delivered") is not False and audit.get("decision") == "allow", audit
        judged = poll(lambda: [e for e in events(state, "rule_shadow") if e.get("rule") == "trial" and made in json.dumps(e)], bool, timeout=10)
        assert judged, "the service's rules judged the call"
    finally:
        if os.path.exists(made):
            os.unlink(made)
