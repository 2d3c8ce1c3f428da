"""Notifications: once per wait, gathered, and safe bytes whatever the names say."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from headspace_tui.model import Agent, AgentState, Observation, Prompt
from headspace_tui.notifications.decide import GAP, GATHER, SETTLE, Notification, Notifier, notification, osc9, osc777, terminal_text, tmux_passthrough
from headspace_tui.shared.config import ConfigError, parse_config

START = 1000.0
LATER = START + SETTLE + 1  # past the start-up quiet time
ALL = ("permission", "question", "plan", "input", "error", "limited")  # the default: every state that needs you


def agent(state: AgentState, fingerprint: str = "", *, key: str = "k1", target: str = "api:0.1", cwd: str = "/src/shop", title: str = "", tool: str = "Bash", detail: str = "touch a") -> Agent:
    prompt = None
    if state.needs_you and state is not AgentState.ERROR:
        prompt = Prompt(kind=state.value, title=title, tool=tool, detail=detail, fingerprint=fingerprint)
    obs = Observation(state, prompt=prompt, error="API Error: 529" if state is AgentState.ERROR else "")
    return Agent(pane_id="%1", target=target, session=target.split(":")[0], cwd=cwd, observation=obs, key=key)


def notifier(states=ALL) -> Notifier:
    return Notifier(states, started=START)


def sent(n: Notifier, now: float) -> Notification | None:
    return n.due(now + GATHER + GAP)


# -- once per transition -----------------------------------------------------------------


def test_a_wait_is_told_once_not_on_every_report():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1) is not None
    for i in range(20):  # redraws, hooks, status files: the same wait
        assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 2 + i * 0.1) is None
    note = sent(n, LATER + 5)
    assert note is not None and len(note.alerts) == 1
    assert n.due(LATER + 60) is None  # nothing more while it stays


def test_a_prompt_answered_then_asked_again_is_a_new_wait():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1)
    n.observe(agent(AgentState.WORKING), LATER + 2)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 3)  # the same command asked again after running


def test_another_permission_without_work_seen_between_is_new_but_a_question_page_is_not():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1)
    assert n.observe(agent(AgentState.PERMISSION, "p2"), LATER + 2)  # another command to approve
    n.observe(agent(AgentState.WORKING, key="k2"), LATER)
    assert n.observe(agent(AgentState.QUESTION, "q1", key="k2"), LATER + 1)
    assert n.observe(agent(AgentState.QUESTION, "q2", key="k2"), LATER + 2) is None  # the dialog's next question


def test_details_arriving_later_are_the_same_wait():
    """A status file or hook says "permission" before the screen shows the menu (no fingerprint yet)."""
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.PERMISSION, ""), LATER + 1)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1.1) is None
    assert n.observe(agent(AgentState.PERMISSION, ""), LATER + 1.2) is None  # read without details again
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1.3) is None


def test_an_unreadable_screen_does_not_end_a_wait():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1)
    n.observe(agent(AgentState.UNKNOWN), LATER + 2)  # half a redraw
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 3) is None


def test_agents_already_waiting_at_start_are_not_announced():
    n = notifier()
    assert n.observe(agent(AgentState.PERMISSION, "p1"), START + 0.1) is None
    assert n.observe(agent(AgentState.UNKNOWN, key="k2"), START + 0.1) is None
    assert n.observe(agent(AgentState.QUESTION, "q1", key="k2"), START + 0.5) is None  # first known reading
    # Sources arriving one by one in the first seconds: stale "working", then the prompt.
    n.observe(agent(AgentState.WORKING, key="k3"), START + 0.2)
    assert n.observe(agent(AgentState.PLAN, "x", key="k3"), START + 1) is None
    assert n.due(START + 100) is None
    # Seen for the first time later (a server found again): its wait may be old.
    assert n.observe(agent(AgentState.INPUT, "i", key="k4"), LATER + 10) is None
    # But a new wait of a known agent after the quiet time is news.
    n.observe(agent(AgentState.WORKING), LATER + 11)
    assert n.observe(agent(AgentState.PERMISSION, "p2"), LATER + 12)


def test_only_the_configured_states_notify():
    n = notifier(("permission",))
    n.observe(agent(AgentState.WORKING), LATER)
    assert n.observe(agent(AgentState.ERROR), LATER + 1) is None
    assert n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 2)  # from error to permission: a new wait
    n2 = notifier(())
    n2.observe(agent(AgentState.WORKING), LATER)
    assert n2.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1) is None


# -- gathered and spaced ----------------------------------------------------------------------


def test_waits_at_once_are_one_notification_and_notifications_are_spaced():
    n = notifier()
    for i in range(5):
        n.observe(agent(AgentState.WORKING, key=f"k{i}", target=f"s{i}:0.0"), LATER)
    for i in range(5):
        n.observe(agent(AgentState.ERROR, key=f"k{i}", target=f"s{i}:0.0"), LATER + 1 + i * 0.05)
    assert n.due(LATER + 1.2) is None  # still gathering
    note = n.due(LATER + 1 + GATHER)
    assert note is not None and len(note.alerts) == 5
    assert note.title == "5 agents need you" and "s0:0.0 (shop): error" in note.body
    # One more right after: held back until GAP has passed, then told alone.
    n.observe(agent(AgentState.WORKING, key="k9"), LATER)
    n.observe(agent(AgentState.PERMISSION, "p", key="k9"), LATER + 1.6)
    assert n.next_due() == pytest.approx(LATER + 1 + GATHER + GAP)
    assert n.due(LATER + 2.5) is None
    later = n.due(LATER + 1 + GATHER + GAP)
    assert later is not None and len(later.alerts) == 1


def test_a_wait_answered_before_it_was_told_is_dropped():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    n.observe(agent(AgentState.PERMISSION, "p1"), LATER + 1)
    n.observe(agent(AgentState.WORKING), LATER + 1.2)
    assert n.next_due() is None and n.due(LATER + 10) is None
    n.observe(agent(AgentState.PERMISSION, "p2"), LATER + 20)
    n.forget("k1")  # its pane closed
    assert n.due(LATER + 30) is None


# -- the words and the bytes ---------------------------------------------------------------------

HOSTILE = "evil\x1b]52;c;SEVMTE8=\x07\x1b\\;x\x9c\x9b31m\x07\n-u critical" + "z" * 500


def test_one_agent_names_it_and_what_it_waits_for():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    n.observe(agent(AgentState.PERMISSION, "p1", detail="npm test; rm -rf build"), LATER + 1)
    note = sent(n, LATER + 1)
    assert note is not None
    assert note.title == "api:0.1 (shop) needs permission"
    assert note.body == "Bash: npm test; rm -rf build"  # as the agent asks it (notify_command, notify-send)
    assert terminal_text(note, "osc", inside_tmux=False) == "\x1b]9;api:0.1 (shop) needs permission: Bash: npm test; rm -rf build\x07\x07"
    # OSC 777's fields are separated by ';': there, and only there, it becomes ','.
    assert terminal_text(note, "osc777", inside_tmux=False) == "\x1b]777;notify;api:0.1 (shop) needs permission;Bash: npm test, rm -rf build\x07\x07"
    assert terminal_text(note, "bell", inside_tmux=True) == "\x07"
    assert terminal_text(note, "none", inside_tmux=True) == ""


def test_semicolons_stay_in_osc9_text_but_never_start_a_sub_command():
    n = notifier()
    n.observe(agent(AgentState.WORKING, target="4;2:0.1"), LATER)
    n.observe(agent(AgentState.PERMISSION, "p1", target="4;2:0.1", tool="Bash", detail="python -c 'import time; time.sleep(1)'"), LATER + 1)
    note = sent(n, LATER + 1)
    assert note is not None and note.title == "4;2:0.1 (shop) needs permission"
    # A session named "4;2" would make "9;4;2…" (progress to ConEmu, Windows Terminal, Ghostty): that one ';' goes.
    assert osc9(note.title) == "\x1b]9;4,2:0.1 (shop) needs permission\x07"
    text = terminal_text(note, "osc", inside_tmux=False)
    assert text == "\x1b]9;4,2:0.1 (shop) needs permission: Bash: python -c 'import time; time.sleep(1)'\x07\x07"
    assert osc9("12;3 agents") == "\x1b]9;12,3 agents\x07" and osc9("a;1;b") == "\x1b]9;a;1;b\x07"
    assert osc777("t;1", "b;2") == "\x1b]777;notify;t,1;b,2\x07"


def test_an_agent_on_a_remote_host_is_named_with_its_host():
    n = notifier()
    remote = agent(AgentState.WORKING)
    remote.host = "box"
    n.observe(remote, LATER)
    waiting = agent(AgentState.PERMISSION, "p1")
    waiting.host = "box"
    n.observe(waiting, LATER + 1)
    note = sent(n, LATER + 1)
    assert note is not None and note.title == "box:api:0.1 (shop) needs permission"


@pytest.mark.parametrize("mode", ["osc", "osc777"])
@pytest.mark.parametrize("inside_tmux", [False, True])
def test_hostile_names_and_prompts_cannot_escape_the_sequence(mode, inside_tmux):
    n = notifier()
    a = agent(AgentState.WORKING, target=f"7;{HOSTILE}:0.0", cwd=f"/x/{HOSTILE}")
    n.observe(a, LATER)
    n.observe(agent(AgentState.QUESTION, "q", target=f"7;{HOSTILE}:0.0", cwd=f"/x/{HOSTILE}", title=HOSTILE), LATER + 1)
    note = sent(n, LATER + 1)
    assert note is not None
    for text in (note.title, note.body):
        assert not re.search("[\x00-\x1f\x7f-\x9f]", text), text
    assert len(note.title) <= 100 and len(note.body) <= 200
    out = terminal_text(note, mode, inside_tmux=inside_tmux)
    if inside_tmux:  # the passthrough frame, then the bell; inside it every ESC doubled
        assert out.startswith("\x1bPtmux;\x1b\x1b]") and out.endswith("\x1b\\\x07")
        inner = out[len("\x1bPtmux;") : -len("\x1b\\\x07")].replace("\x1b\x1b", "\x1b")
    else:
        inner = out[:-1]
    assert out.endswith("\x07")
    # Exactly one sequence: one ESC (its start), one BEL (its end), the fields as planned.
    assert inner.count("\x1b") == 1 and inner.count("\x07") == 1 and inner.endswith("\x07")
    fields = inner[2:-1].split(";")
    assert fields[0] == ("777" if mode == "osc777" else "9")
    if mode == "osc777":
        assert len(fields) == 4 and fields[1] == "notify"  # the title's and the body's ';' are ','
    else:  # OSC 9 keeps ';' in its text, never a number and ';' at its start
        assert not re.match(r"\d+;", inner[4:])
    assert "␛" in inner  # shown, not obeyed


def test_tmux_passthrough_doubles_every_escape():
    assert tmux_passthrough(osc9("hi")) == "\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\"
    assert tmux_passthrough(osc777("t", "b")) == "\x1bPtmux;\x1b\x1b]777;notify;t;b\x07\x1b\\"


def test_empty_what_leaves_the_title_alone():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    unread = agent(AgentState.PLAN, "p", cwd="")  # a plan read without its words: nothing to say but the state
    n.observe(replace(unread, observation=Observation(AgentState.PLAN)), LATER + 1)
    note = sent(n, LATER + 1)
    assert note == notification(note.alerts) and note.body == ""
    assert terminal_text(note, "osc", inside_tmux=False) == "\x1b]9;api:0.1 waits for plan approval\x07\x07"


# -- the settings ---------------------------------------------------------------------------


def test_notify_settings_defaults_and_choices():
    config = parse_config({})
    assert config.notify == "osc" and config.notify_states == ALL and config.desktop_notify is False
    config = parse_config({"notify": "bell", "notify_states": ["permission", "error", "permission"], "desktop_notify": True})
    assert config.notify == "bell" and config.notify_states == ("permission", "error") and config.desktop_notify is True
    assert parse_config({"notify_states": []}).notify_states == ()


@pytest.mark.parametrize(
    "data,message",
    [
        ({"notify": "loud"}, "notify must be one of osc, osc777, bell, none, not 'loud'"),
        ({"notify": True}, "notify must be one of"),
        ({"notify_states": "permission"}, "notify_states must be a list"),
        ({"notify_states": ["permission", 3]}, "notify_states must be a list"),
        ({"notify_states": ["working"]}, "notify_states has 'working', not a state that needs you"),
        ({"desktop_notify": "yes"}, "desktop_notify must be true or false"),
    ],
)
def test_bad_notify_settings_are_one_clear_error(data, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(data, "cfg.toml")


def test_details_that_arrive_before_the_wait_is_told_are_told_with_it():
    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    n.observe(agent(AgentState.PERMISSION, "", tool="", detail=""), LATER + 1)  # a hook: "permission", no more
    n.observe(agent(AgentState.PERMISSION, "p1", detail="touch a"), LATER + 1.1)  # the screen: the menu
    n.observe(agent(AgentState.PERMISSION, "", tool="", detail=""), LATER + 1.2)  # details lost again: kept
    note = n.due(LATER + 1 + GATHER)
    assert note is not None and note.body == "Bash: touch a"


def test_a_wait_claude_says_in_its_status_file_waits_for_the_menus_words():
    """Claude's status file says "permission" before the screen is read: its words ("permission prompt (Claude's status
    file; press e)") name no command, so the note waits DETAILS for the menu as for a wait with no words (a live CI run rang
    the status file's words 0.5 s after the file, the menu read later); the menu's words are not lost to the file again."""
    from headspace_tui.detect.claude.status_files import STATUS_SOURCES
    from headspace_tui.notifications.decide import DETAILS

    def claimed() -> Agent:
        obs = Observation(AgentState.PERMISSION, source=STATUS_SOURCES[0])
        return Agent(pane_id="%1", target="api:0.1", session="api", cwd="/src/shop", observation=obs, key="k1")

    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    n.observe(claimed(), LATER + 1)
    assert n.due(LATER + 1 + GATHER) is None and n.next_due() == LATER + 1 + DETAILS
    n.observe(agent(AgentState.PERMISSION, "p1", detail="touch two.txt"), LATER + 1.6)  # the menu, read late
    n.observe(claimed(), LATER + 1.7)  # the file read again: the menu's words are kept
    note = n.due(LATER + 1.6 + GATHER)
    assert note is not None and note.body == "Bash: touch two.txt"
    # The file alone, its menu never read: said all the same after DETAILS, in its own words.
    n.observe(agent(AgentState.WORKING), LATER + 20)
    n.observe(claimed(), LATER + 30)
    assert n.due(LATER + 30 + DETAILS - 0.1) is None
    late = n.due(LATER + 30 + DETAILS)
    assert late is not None and "status file" in late.body


def test_a_wait_without_its_details_waits_for_them_a_little_and_then_is_said_anyway():
    """Under load the menu was drawn more than GATHER after Claude's status file said "permission": the note named no command."""
    from headspace_tui.notifications.decide import DETAILS

    n = notifier()
    n.observe(agent(AgentState.WORKING), LATER)
    n.observe(agent(AgentState.PERMISSION, "", tool="", detail=""), LATER + 1)
    assert n.due(LATER + 1 + GATHER) is None and n.next_due() == LATER + 1 + DETAILS
    n.observe(agent(AgentState.PERMISSION, "p1", detail="touch two.txt"), LATER + 1.9)  # the menu, late
    note = n.due(LATER + 1.9)
    assert note is not None and note.body == "Bash: touch two.txt"
    # A menu never drawn (a dialog headspace cannot read): said all the same, without its details.
    n.observe(agent(AgentState.WORKING, key="k2"), LATER)
    n.observe(agent(AgentState.PERMISSION, "", key="k2", tool="", detail=""), LATER + 10)
    assert n.due(LATER + 10 + DETAILS - 0.1) is None
    late = n.due(LATER + 10 + DETAILS)
    assert late is not None and "needs permission" in late.title
