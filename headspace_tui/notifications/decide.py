"""When an agent starts needing you, say so once: the decision and the bytes.

Pure: no terminal, no tmux, no clock of its own.  The app feeds every agent
report to a ``Notifier`` and asks it, on a timer, for the ``Notification``
that is due; ``terminal_text`` turns one into what headspace writes to its
terminal.  (Getting it out, tmux's passthrough option and ``notify-send``,
is in deliver.py.)

What counts as news, and why:

* **a transition into waiting**, never a state that merely continues.  The
  monitor reports an agent on every redraw, hook and status-file write; a
  notification per report would ring for as long as a prompt is up.  A wait
  ends only when the agent is seen doing something else (working, idle,
  starting, exited): ``unknown`` (a half-drawn screen) ends nothing, so a
  prompt read as unknown for one redraw does not ring twice.
* **a new prompt is a new wait**, also without a working state seen in
  between: a second permission or plan with another fingerprint (another
  command to approve) rings again.  A question's next page, an ``input``
  whose text is re-read and an error whose retry count ticks do not: the
  user is already there, or the agent asks nothing new.  A prompt read
  without its details (a status file or hook says "permission" before the
  screen shows the menu) is the same wait as the menu that follows.
* **not at start-up**: agents already waiting when headspace starts are at
  the top of the table it has just drawn, so an agent's first report is
  only remembered, and for ``SETTLE`` seconds every report is (the sources
  arrive one by one: a status file read after the screen could otherwise
  look like a new wait).  Likewise an agent seen for the first time later
  (a server found again) is not announced: its wait may be old.
* **with what is asked**: a wait read without its details is said
  ``DETAILS`` seconds after it began unless they arrive sooner (then at
  the usual ``GATHER``), so the words name the command.
* **together when at once, and not too often**: waits that begin within
  ``GATHER`` seconds are one notification ("3 agents need you"), and two
  notifications are at least ``GAP`` seconds apart (the waits in between
  are gathered into the next).  Ten agents hitting the same API error at
  once make one notification, not ten.  A wait that ended before it was
  said (answered within the gather time) is dropped.
* **not for a snoozed wait, and again when its snooze ends**: the user put
  it off (``snooze``; snooze.py keeps the snoozes), so nothing is said of
  it until the snooze runs out with the wait still there (``remind``).  A
  new wait is news as always, snoozed agent or not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..detect.waits import new_request
from ..model import Agent, AgentState, Blocked
from ..shared.safe_text import clean
from ..state.wait_words import claimed_only, wait_words

SETTLE = 3.0  # seconds after start in which reports only set what is already known
GATHER = 0.5  # waits beginning this close together make one notification
# A wait read without its details (Claude's status file says "permission" before the screen draws the menu) waits this
# long for them before it is said: under load the menu came 0.5 s late, and "needs permission" alone named no command.
DETAILS = 2.0
GAP = 2.0  # at least this long between two notifications
BURST = 120.0  # blocked calls of one agent less than this far apart are one burst, said once
OLD_BLOCK = 60.0  # s: a block older than this when first told was not just made (a history read late): not rung
BLOCKED_KEY = "#blocked"  # an agent's blocked alert waits beside its wait's (both are said)

# States that end a wait (any other needs-you state starts one; unknown changes nothing).
_UNDECIDED = frozenset({AgentState.UNKNOWN})

REASONS = {
    AgentState.PERMISSION: "needs permission",
    AgentState.QUESTION: "asks a question",
    AgentState.PLAN: "waits for plan approval",
    AgentState.INPUT: "waits for your reply",
    AgentState.ERROR: "stopped on an error",
    AgentState.LIMITED: "stopped by its rate limit",
}

NAME_LIMIT = 60
TITLE_LIMIT = 100
BODY_LIMIT = 200


@dataclass(frozen=True)
class Alert:
    """One agent that started waiting: who, in which state, for what."""

    key: str
    name: str  # target (and folder), as the table shows it
    state: AgentState
    what: str  # the command to approve, the question, the error; "" if nothing more to say
    at: float
    address: str = ""  # its pane ("%3", "%3@box"): where the web page opens it
    blocked: bool = False  # not a wait: auto mode blocked a call of the agent's (``what`` says which, and why)
    details: bool = True  # ``what`` names what is asked; False: read without it (said after DETAILS unless it comes)
    request: str = ""  # the appearance of the prompt ``what`` was read from: a push answers that one, or none (web/push.py)


@dataclass(frozen=True)
class Notification:
    """What to tell the user, already safe to put in a terminal sequence or a command's arguments."""

    title: str
    body: str
    alerts: tuple[Alert, ...]
    link: str = ""  # the web page of its (first) agent, when the page is served: a tap opens it, never answers


def describe(agent: Agent) -> tuple[str, str]:
    """``(name, what)`` for an agent: its target and folder, and what it waits for in the table's words (state/wait_words.py)."""
    folder = agent.cwd.rstrip("/").rsplit("/", 1)[-1] or agent.name
    target = agent.target if agent.host == "local" else f"{agent.host}:{agent.target}"  # which machine, when not this one
    name = f"{target} ({folder})" if folder else target
    return name, wait_words(agent, badge=False)


def has_details(agent: Agent, what: str) -> bool:
    """Whether ``what`` names what the agent asks: not empty, and not only the agent's own word that it waits (its status file)."""
    return bool(what) and not claimed_only(agent)


def fingerprint_of(agent: Agent) -> str:
    """Which prompt the agent shows ("" when read without its details)."""
    prompt = agent.observation.prompt
    return prompt.fingerprint if prompt is not None else ""


def same_wait(before: tuple[AgentState, str] | None, state: AgentState, fingerprint: str) -> bool:
    """Whether a report in ``state`` showing ``fingerprint`` continues the wait ``before`` (its state and fingerprint).

    Redrawn, re-read, read without its details, or its details just arrived;
    a new permission or plan (another fingerprint) is a new wait, by the
    clock's rule (detect/waits.py).  One difference from the clock, kept on
    purpose: here a wait must also keep its state (the clock's spell spans
    a permission read as a plan; a notification names the state, so that
    is told anew, gathered with the first when within ``GATHER``).
    (A snooze lasts as long as its wait by the same rule: snooze.py.)
    """
    return before is not None and before[0] is state and not new_request(state, before[1], fingerprint)


class Notifier:
    """Per agent, whether it waits and on which prompt; the waits not yet told.

    ``observe`` every report, ``forget`` an agent that is gone, and call
    ``due`` at ``next_due()`` (or on any timer) for the notification to send.
    """

    def __init__(self, states: Iterable[AgentState | str], *, started: float, settle: float = SETTLE, gather: float = GATHER, gap: float = GAP) -> None:
        self.states = frozenset(AgentState(s) for s in states)
        self.quiet_until = started + settle
        self.gather = gather
        self.gap = gap
        # Per agent key: None when not waiting, else (state, fingerprint) of the wait.
        self._waits: dict[str, tuple[AgentState, str] | None] = {}
        self._pending: dict[str, Alert] = {}
        self._last_sent = float("-inf")
        self._blocked_at: dict[str, float] = {}  # per agent key: its last blocked call (bursts are said once)

    def observe(self, agent: Agent, now: float) -> Alert | None:
        """Take one report of ``agent``; the alert it starts (kept until ``due``), or None."""
        key, state = agent.key or agent.pane_id, agent.state
        if state in _UNDECIDED:
            return None
        known = key in self._waits
        before = self._waits.get(key)
        if not state.needs_you:
            self._waits[key] = None
            self._pending.pop(key, None)  # it ended before it was said
            return None
        fingerprint = fingerprint_of(agent)
        if same_wait(before, state, fingerprint):
            # The same wait: redrawn, re-read, read without its details, or its details just arrived.
            if fingerprint:
                self._waits[key] = (state, fingerprint)
            told = self._pending.get(key)
            name, what = describe(agent)
            details = has_details(agent, what)
            if told is not None and what and (details or not told.details):  # not said yet: say it with the details
                self._pending[key] = replace(told, name=name, what=what, details=details, request=agent.observation.request)
            return None
        self._waits[key] = (state, fingerprint)
        if not known or now < self.quiet_until:
            return None  # what was there when headspace started (or first saw this agent)
        if state not in self.states:
            self._pending.pop(key, None)
            return None
        name, what = describe(agent)
        alert = Alert(key, name, state, what, now, agent.pane_id, details=has_details(agent, what), request=agent.observation.request)
        self._pending.pop(key, None)  # one entry per agent: its latest wait
        self._pending[key] = alert
        return alert

    def blocked(self, agent: Agent, block: Blocked, now: float) -> Alert | None:
        """Auto mode blocked one of ``agent``'s calls: an alert for the first of a burst (blocks less than BURST apart), else None.

        A burst is said once, with its first call: an agent that tries five
        ways to send data out rings once, not five times.  A block from before
        headspace looked (its transcript's history, read by a service started
        late or again) is listed, not rung.
        """
        if block.at and now - block.at > OLD_BLOCK:
            return None
        key = agent.key or agent.pane_id
        last = self._blocked_at.get(key)
        self._blocked_at[key] = now
        if last is not None and now - last < BURST or now < self.quiet_until:
            return None
        name, _ = describe(agent)
        call = f"{block.tool}: {block.detail}" if block.tool else block.detail
        what = f"{call} — {block.reason}" if block.reason else call
        alert = Alert(key + BLOCKED_KEY, name, agent.state, what, now, agent.pane_id, blocked=True)
        self._pending[alert.key] = alert
        return alert

    def snooze(self, key: str) -> None:
        """The user put this agent's wait off: what was about to be said of it is not (``remind`` says it when the snooze ends)."""
        self._pending.pop(key, None)

    def remind(self, agent: Agent, now: float) -> Alert | None:
        """A snooze ran out with ``agent`` still on the wait it was put off on: say it again, as a new wait (if its state is announced)."""
        key, state = agent.key or agent.pane_id, agent.state
        if not state.needs_you or state not in self.states:
            return None
        name, what = describe(agent)
        self._pending[key] = alert = Alert(key, name, state, what, now, agent.pane_id, details=has_details(agent, what), request=agent.observation.request)
        return alert

    def forget(self, key: str) -> None:
        """The agent is gone (its pane closed): nothing more to say about it."""
        self._waits.pop(key, None)
        self._pending.pop(key, None)
        self._pending.pop(key + BLOCKED_KEY, None)
        self._blocked_at.pop(key, None)

    def next_due(self) -> float | None:
        """When the waits told so far become due, or None when there are none."""
        if not self._pending:
            return None
        first = min(alert.at + (self.gather if alert.details else DETAILS) for alert in self._pending.values())
        return max(first, self._last_sent + self.gap)

    def due(self, now: float) -> Notification | None:
        """The notification to send now (every wait gathered so far), or None."""
        when = self.next_due()
        if when is None or now < when:
            return None
        alerts = tuple(self._pending.values())
        self._pending.clear()
        self._last_sent = now
        return notification(alerts)


# -- the words ---------------------------------------------------------------------


def _text(value: str, limit: int) -> str:
    """Outside text for a notification: one line, no control character, at most ``limit`` long.

    ``clean`` turns every C0/C1 control, DEL and bidi override into a visible
    placeholder, so nothing can end the sequence early or start another.
    ``;`` stays (``import time; time.sleep`` is what the agent asks): only
    the bytes for a terminal need care with it (``osc9``, ``osc777``).
    """
    return clean(" ".join(value.split()), limit)


def notification(alerts: tuple[Alert, ...]) -> Notification:
    """One notification for these alerts: the agent and its wait, or how many and who."""
    if len(alerts) == 1:
        (alert,) = alerts
        reason = "was blocked by auto mode" if alert.blocked else REASONS.get(alert.state, "needs you")
        title = _text(f"{_text(alert.name, NAME_LIMIT)} {reason}", TITLE_LIMIT)
        return Notification(title, _text(alert.what, BODY_LIMIT), alerts)
    agents = len({a.key.removesuffix(BLOCKED_KEY) for a in alerts})  # one agent's wait and its block: one agent
    if all(a.blocked for a in alerts):
        title = f"{agents} agents were blocked by auto mode"
    else:
        title = f"{agents} agent{'s' if agents > 1 else ''} need{'' if agents > 1 else 's'} you"
    body = ", ".join(f"{_text(a.name, NAME_LIMIT)}: {'blocked' if a.blocked else a.state.value}" for a in alerts)
    return Notification(title, _text(body, BODY_LIMIT), alerts)


def told(title: str, body: str, link: str) -> Notification:
    """A notification as the service's ``Rung`` event tells it to a front end: its words made safe again here, as any outside text is."""
    return Notification(_text(title, TITLE_LIMIT), _text(body, 2 * BODY_LIMIT), (), _text(link, 2 * BODY_LIMIT))


# -- the bytes ----------------------------------------------------------------------

BEL = "\x07"
ESC = "\x1b"


# OSC 9's text starting with a number and ``;`` is a command to ConEmu
# (``9;1;`` sleep, ``9;2;`` a message box), Windows Terminal and Ghostty
# (``9;4;`` progress): such a start loses its ``;``.  (A title always has
# words after the agent's name, so the text is never a number alone.)
_OSC9_COMMAND = re.compile(r"^(\d+);")


def osc9(text: str) -> str:
    """``ESC ] 9 ; text BEL``: iTerm2's notification, also kitty, WezTerm, Ghostty, Windows Terminal.

    The text is everything after ``9;``, ``;`` included, except at its very
    start, where a number followed by ``;`` would be read as a sub-command.
    """
    safe = _OSC9_COMMAND.sub(r"\g<1>,", text, count=1)
    return f"{ESC}]9;{safe}{BEL}"


def osc777(title: str, body: str) -> str:
    """``ESC ] 777 ; notify ; title ; body BEL``: rxvt-unicode's, also foot, VTE (Fedora), WezTerm, Ghostty.

    ``;`` separates the fields: one in the title would end it, and WezTerm
    keeps the body only up to its first ``;``.  So here, and only here, it becomes ``,``.
    """
    return f"{ESC}]777;notify;{title.replace(';', ',')};{body.replace(';', ',')}{BEL}"


def tmux_passthrough(sequence: str) -> str:
    """The sequence wrapped so tmux hands it to the terminal: ``ESC P tmux ; …ESC doubled… ESC \\``."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ESC}\\"


def osc_sequence(note: Notification, mode: str) -> str:
    """The one OSC for ``note`` in notify ``mode`` (bare, not wrapped for tmux), or "" for ``bell`` and ``none``."""
    if mode == "osc777":
        return osc777(note.title, note.body)
    if mode == "osc":
        return osc9(f"{note.title}: {note.body}" if note.body else note.title)
    return ""


def status_text(note: Notification) -> str:
    """The notice in words, for a tmux status line (where the terminal may show no OSC): "headspace: <title>: <body>"."""
    return f"headspace: {note.title}: {note.body}" if note.body else f"headspace: {note.title}"


def terminal_text(note: Notification, mode: str, *, inside_tmux: bool) -> str:
    """What headspace writes to its terminal for ``note`` in notify ``mode``.

    * ``osc``: OSC 9 (title and body in its one text), then a bell;
    * ``osc777``: OSC 777 (title and body apart), then a bell;
    * ``bell``: the bell alone; ``none``: nothing.

    One OSC, never both: terminals that read both (WezTerm, Ghostty) would
    show every notification twice.  The bell goes with the OSC and is never
    wrapped.  Written only by a front end whose own terminal no client of
    the rung server shows (outside tmux; ``inside_tmux``: a pane of another
    tmux server, wrapped for passthrough): the service's ringer writes to
    those clients themselves (resident/ringer.py, direct.py).
    """
    if mode == "none":
        return ""
    sequence = osc_sequence(note, mode)
    return (tmux_passthrough(sequence) if inside_tmux and sequence else sequence) + BEL
