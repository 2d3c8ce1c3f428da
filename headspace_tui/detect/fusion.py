"""Fusing Claude's own status file with what the screen shows.

The status file (``~/.claude/sessions/<pid>.json``) changes the moment Claude
starts or stops a turn, so it decides busy / waiting / idle quickly.  The
screen supplies what the file cannot: which tool, which options, the question.
And the screen alone knows that a reply which ends by asking something is
``input``: Claude's file calls that plain idle.

When there is no file (older Claude, another config dir), the screen decides
alone, which the corpus tests show is enough.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model import AgentState, Observation
from .claude.status_files import STATUS_SOURCES
from .sources import CLAUDES_WORD, LEAST, Source, trust

# States only the screen can show in detail; when it shows one, it wins.
SCREEN_DETAIL = frozenset({AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN, AgentState.EXITED, AgentState.ERROR, AgentState.LIMITED, AgentState.INPUT})


def fuse(screen: Observation, status: Observation | None) -> Observation:
    """One observation from the screen's and the status file's, with both as evidence."""
    if status is None:
        return screen
    evidence = screen.evidence + status.evidence
    if screen.state in SCREEN_DETAIL:
        return replace(screen, evidence=evidence, confidence=max(screen.confidence, 0.9))
    if screen.state is AgentState.STARTING and screen.prompt is not None and not status.state.needs_you:
        return replace(screen, evidence=evidence)  # a start-up dialog on screen
    if status.state is AgentState.WORKING:
        return replace(screen, state=AgentState.WORKING, prompt=None, evidence=evidence, source=status.source, confidence=0.9)
    if status.state.needs_you:
        # The file says Claude waits on the user but the screen has not drawn
        # the dialog yet, was read a moment early, or shows a layout we do not
        # know (starting / unknown): trust the file, without details.  A
        # waiting agent is never hidden by a screen we could not read.
        return replace(status, evidence=evidence)
    if status.state is AgentState.IDLE and screen.state in (AgentState.WORKING, AgentState.UNKNOWN, AgentState.STARTING):
        # The screen can lag a redraw; the file said idle since.
        return replace(status, evidence=evidence)
    return replace(screen, evidence=evidence)


# ---------------------------------------------------------------------------
# Many sources over time: the most confident fresh source, with an idle grace.

SCREEN_LAG = 1.0  # seconds a redraw may trail an event before the screen is believed over it
CLAIMS = CLAUDES_WORD  # Claude's own word on its state
# How far each source is trusted (the idle grace below) is the one ranking, sources.trust: Claude's own events above what we infer.
# Which of Claude's own claims can date a state shown in the table.  Claude
# says "waiting" for any dialog (its claim may be a permission where the screen
# shows a plan or a question) and "idle" after a turn that ended with a typed
# question (the screen calls that input).
_WAITING = frozenset({AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN, AgentState.INPUT})
_DATED_BY: dict[AgentState, frozenset[AgentState]] = {
    AgentState.WORKING: frozenset({AgentState.WORKING}),
    AgentState.PERMISSION: _WAITING,
    AgentState.QUESTION: _WAITING,
    AgentState.PLAN: _WAITING,
    AgentState.INPUT: _WAITING | {AgentState.IDLE},
    AgentState.IDLE: frozenset({AgentState.IDLE}),
}


def claim_agrees(claim: AgentState, shown: AgentState) -> bool:
    """Whether Claude's own claim (status file, hook) can date the state the table shows."""
    return claim in _DATED_BY.get(shown, frozenset())


@dataclass(frozen=True)
class Verdict:
    """One source's latest reading of an agent, and when it was made."""

    observation: Observation
    at: float


@dataclass(frozen=True)
class Explanation:
    """What the "why" view shows: every source's verdict, its age, and the decision."""

    decision: str
    verdicts: tuple[tuple[str, Verdict], ...]


def _interrupted(observation: Observation) -> bool:
    """The screen shows Claude idle after the user stopped its turn: the one idle screen no dialog looks like."""
    return observation.state is AgentState.IDLE and any(e.rule == "interrupted-by-user" for e in observation.evidence)


class Fuser:
    """Per agent: the latest verdict of each source, and the state they add up to.

    Sources: ``hook`` (Claude's hook events, one-shot), ``status-file``
    (Claude's own status, always current), ``screen`` (each capture),
    ``transcript`` and ``process``.  The rules, in order:

    1. exited, from any source, is accepted at once;
    2. a hook event holds until the screen, read more than a redraw after
       it, shows another state (hooks say nothing when a prompt is answered
       in the pane itself; an event may be forged); otherwise the newest of hook and status
       file is Claude's claim, fused with the screen by ``fuse``; the status
       file's "waiting" is a floor under the screen, until a screen read more
       than a redraw after it shows a running turn or an interrupted one
       (``_moved_on``);
    3. an idle verdict replacing "working" from a less trusted source than
       the one behind it is accepted only after it has held
       ``idle_grace`` seconds with no new output (between two tool calls the
       screen can look idle while a hook has said "working").

    Pure: time comes in as ``now``.
    """

    def __init__(self, idle_grace: float = 5.0) -> None:
        self.idle_grace = idle_grace
        self.verdicts: dict[str, Verdict] = {}
        self.current: Observation | None = None
        self._idle_since: float | None = None
        self._last_output = 0.0
        self._decision = "no verdict yet"

    def observe(self, observation: Observation, now: float, *, at: float | None = None, output_changed: bool = False) -> Observation:
        """Record a source's verdict (made at ``at``, default ``now``) and return the fused observation."""
        source = observation.source
        previous = self.verdicts.get(source)
        if previous is not None and at is not None and at < previous.at:
            return self.decide(now)  # an older event arriving late changes nothing
        self.verdicts[source] = Verdict(observation, now if at is None else at)
        if output_changed:
            self._last_output = now
        return self.decide(now)

    def claims(self, state: AgentState) -> dict[str, float]:
        """When each of Claude's own claims (status file, agent list, hook) says ``state`` began, for those that agree with it.

        Claude's status file changes ``statusUpdatedAt`` only when its status
        changes (busy → waiting → busy → idle), and a hook's event carries the
        time it fired: measured on 2.1.330, busy's ``statusUpdatedAt`` is the
        start of the clock Claude's own spinner shows.  Only a claim that
        agrees with ``state`` counts (a stale "busy" from before a permission
        dialog must not date the dialog).  These are candidates of the one
        clock (detect/clock.py), which weighs them by trust, keeps out the
        future and never lets a time jump back.
        """
        return {source: verdict.at for source, verdict in self.verdicts.items() if source in CLAIMS and claim_agrees(verdict.observation.state, state)}

    def decide(self, now: float) -> Observation:
        candidate, decision = self._candidate()
        current = self.current
        if (
            candidate.state is AgentState.IDLE
            and current is not None
            # Only "working" is held: between two tool calls the screen can look
            # idle while Claude works.  A dialog, once due, is always drawn, so a
            # needs-you state the screen keeps contradicting (a stale or forged
            # hook) is not held for the grace.
            and current.state is AgentState.WORKING
            and self._support(candidate.state) < trust(current.source)
        ):
            if self._idle_since is None:
                self._idle_since = now
            held = now - max(self._idle_since, self._last_output)
            if held < self.idle_grace:
                self._decision = f"idle pending: held {held:.1f}s of {self.idle_grace:.0f}s grace ({decision})"
                return current
        self._idle_since = None
        self.current = candidate
        self._decision = decision
        return candidate

    def _candidate(self) -> tuple[Observation, str]:
        for source, verdict in self.verdicts.items():
            if verdict.observation.state is AgentState.EXITED:
                return verdict.observation, f"exited per {source}"
        screen = self.verdicts.get(Source.SCREEN)
        claims = [v for k, v in self.verdicts.items() if k in CLAIMS]
        hook = self.verdicts.get(Source.HOOK)
        if hook is not None and screen is not None and self._hook_is_stale(hook, screen):
            claims = [v for v in claims if v is not hook]
        moved_on = [v for v in claims if self._moved_on(v)]
        claims = [v for v in claims if v not in moved_on]
        claim = max(claims, key=lambda v: v.at) if claims else None
        if screen is not None:
            fused = fuse(screen.observation, claim.observation if claim else None)
            how = f"screen + {claim.observation.source}" if claim else "screen alone"
            if moved_on:
                # The file's word stays in the evidence: "why" shows what it said and that it was passed over.
                old = tuple(e for v in moved_on for e in v.observation.evidence if e not in fused.evidence)
                fused = replace(fused, evidence=fused.evidence + old)
                said = ", ".join(sorted(v.observation.source for v in moved_on))
                how += f"; {said} still says it waits, but the screen read since shows a running or interrupted turn (Claude moved on)"
            return self._floor(fused, how)
        if claim is not None:
            return claim.observation, f"{claim.observation.source} alone"
        rest = max(self.verdicts.values(), key=lambda v: v.at, default=None)
        if rest is not None:
            return rest.observation, f"{rest.observation.source} alone"
        return Observation(AgentState.UNKNOWN), "no verdict yet"

    def _floor(self, fused: Observation, how: str) -> tuple[Observation, str]:
        """Claude's own word that it waits is a floor: a waiting agent is never shown idle or working.

        When its status file (or ``claude agents``) says ``waiting`` and the
        screen reads idle, working or something we cannot read (a dialog of a
        kind we do not know, a redraw caught midway), the row says what Claude
        says it waits for, from that source; the screen's reading stays in the
        evidence, so ``e`` shows both.
        """
        if fused.state.needs_you or fused.state is AgentState.EXITED:
            return fused, how
        said = [v for k, v in self.verdicts.items() if k in STATUS_SOURCES and v.observation.state.needs_you and not self._moved_on(v)]
        if not said:
            return fused, how
        claim = max(said, key=lambda v: v.at).observation
        evidence = claim.evidence + tuple(e for e in fused.evidence if e not in claim.evidence)
        return replace(claim, evidence=evidence), f"{how}; {claim.source} says it waits (a floor over the screen's {fused.state.value})"

    @property
    def idle_deadline(self) -> float | None:
        """When a pending idle may be accepted (the caller should look again then), or None."""
        if self._idle_since is None:
            return None
        return max(self._idle_since, self._last_output) + self.idle_grace

    @property
    def hook_deadline(self) -> float | None:
        """When the screen, read again, could prove the hook's verdict stale (the caller should look then), or None."""
        hook, screen = self.verdicts.get(Source.HOOK), self.verdicts.get(Source.SCREEN)
        if hook is None or screen is None or screen.observation.state is hook.observation.state:
            return None
        if self._hook_is_stale(hook, screen):
            return None
        return hook.at + SCREEN_LAG + 0.05

    @property
    def claim_deadline(self) -> float | None:
        """When a screen read again could show that Claude moved on from its status file's "waiting" (``_moved_on``), or None.

        A screen read within a redraw of the file's word cannot lift it; a
        pane that then stays still is not read again by itself, and the row
        would keep the file's word for as long (seen in a CI run: Claude
        rewrote "waiting" as a dialog was declined, the pane read idle at
        once, and nothing changed after).
        """
        screen = self.verdicts.get(Source.SCREEN)
        if screen is None:
            return None
        due = [v.at + SCREEN_LAG + 0.05 for k, v in self.verdicts.items() if k in STATUS_SOURCES and v.observation.state.needs_you and screen.at - v.at <= SCREEN_LAG]
        return min(due) if due else None

    def _support(self, state: AgentState) -> int:
        """The most trusted source that currently reads ``state``."""
        return max((trust(k) for k, v in self.verdicts.items() if v.observation.state is state), default=LEAST)

    def _moved_on(self, claim: Verdict) -> bool:
        """Claude's status file (or agent list) says it waits, but a newer screen shows its turn running again.

        After an answer Claude rewrites its status file late: measured on
        2.1.330, the row read "input needed (Claude's status file)" for about
        5 s after a reply went into "Type something." while the pane showed
        Claude working (issue 37).  A screen read more than a redraw after
        the file's ``statusUpdatedAt`` that shows a running turn (a hint, a
        spinner, a retry notice) is newer news: Claude has moved on.  Within
        a redraw of the file's change the file still wins (the dialog may
        not be drawn yet).  Only a running turn, or Claude's own
        "Interrupted" line under an idle box, lifts it: a dialog declined
        with Esc ends the turn there, and Claude's file went on saying
        "waiting" for 30 s after it (seen in a CI run); a merely idle-looking
        or unreadable screen may be a dialog we do not know.
        """
        screen = self.verdicts.get(Source.SCREEN)
        return (
            claim.observation.source in STATUS_SOURCES
            and claim.observation.state.needs_you
            and screen is not None
            and (screen.observation.state is AgentState.WORKING or _interrupted(screen.observation))
            and screen.at - claim.at > SCREEN_LAG
        )

    def _hook_is_stale(self, hook: Verdict, screen: Verdict) -> bool:
        """The screen, read more than a redraw after the hook event, shows another state.

        Hooks say nothing when a prompt is answered in the pane itself, and a
        hook event can be stale or forged: once the screen has had time to
        draw what the hook announced and still shows something else, the
        screen is believed.  (Whether the screen's state changed since the
        event does not matter: a forged "permission" on an idle agent whose
        screen stays idle must not hold the row.)
        """
        return screen.observation.state is not hook.observation.state and screen.at - hook.at > SCREEN_LAG

    def explain(self, now: float) -> Explanation:
        rows = tuple(sorted(self.verdicts.items(), key=lambda kv: -kv[1].observation.confidence))
        return Explanation(self._decision, rows)
