"""What an agent waits for, or does, in one set of words for every front end.

The table's cell, ``headspace status``'s line (and so the page's, which shows
that line) and a notification's few words used to be written three times,
each with words of its own: a limit's error followed " · " in one place and
": " in another, a review of answers was "submit your answers?" only in the
table, and the status line never said what a working agent ran.
Here they are written once, as parts with a tone; the terminal UI turns the
tones into its theme's styles, everything else joins the text.

A part marked ``hint`` is about the terminal UI's keys ("press e", "hook ·":
y answers through the hook): only the terminal shows it. Everything here is outside text (pane, hooks, files):
each front end still cleans what it shows (``safe_text``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..detect.claude.status_files import STATUS_SOURCES, claimed_wait
from ..model import Agent, AgentState
from ..usage.words import limit_words

# The tones a part may have; the terminal maps each to a style, "retrying" to its theme's warning colour.
PLAIN, BOLD, DIM, RED, BOLD_RED, DIM_GREEN, RETRYING = "", "bold", "dim", "red", "bold red", "dim green", "retrying"

# A permission mode other than manual, as the row's first words: what ``y`` means and how much runs unseen.
MODE_BADGES = {"auto": ("auto", DIM), "accept-edits": ("edits", DIM), "plan": ("plan", DIM), "bypass": ("BYPASS", BOLD_RED), "dont-ask": ("no-ask", DIM)}

# The outcomes of a turn that failed: shown in red, the others in green.
_FAILED = ("tests failed", "error", "compile error", "runtime error", "test error", "permission error", "command error")


class Part(NamedTuple):
    text: str
    tone: str = PLAIN
    hint: bool = False  # words about the terminal UI's keys: other front ends leave them out


def claimed_only(agent: Agent) -> bool:
    """A wait known only from the agent's own word (Claude's status file or agent list), its screen not read yet.

    Its words then name no command ("permission prompt (Claude's status
    file)"): a notification waits a little for the menu (notifications/decide.py).
    """
    obs = agent.observation
    return obs.prompt is None and obs.state.needs_you and obs.source in STATUS_SOURCES


def wait_parts(agent: Agent, *, badge: bool = True) -> list[Part]:
    """The row's words: its host's trouble, or its mode, what it waits for (or does), and how an answer went.

    ``badge``: start with its permission mode when not manual (a line that names the mode already leaves it out).
    """
    if agent.offline:
        reason = agent.offline.removeprefix(f"{agent.host}: ")  # the row names its host already
        if agent.placeholder:
            return [Part(f"cannot reach {agent.host}: {reason}", RED)]
        return [Part(f"reconnecting… ({reason})", DIM)]  # the last reading, kept on screen while the host is out of reach
    wait = _with_mode(agent, _the_wait(agent)) if badge else _the_wait(agent)
    if not agent.delivery:
        return wait
    # An answer's outcome is added to what the row waits for, never put in its place
    # (a refused answer left "not sent" where the command was: the user lost what it asks).
    said = Part(agent.delivery, BOLD_RED if "not" in agent.delivery else DIM)
    return [*wait, Part(" · ", DIM), said] if _text(wait) and agent.observation.state.needs_you else [said]


def wait_words(agent: Agent, *, badge: bool = True) -> str:
    """The same words as plain text, for a front end without the terminal's keys (status, the page, a notification)."""
    return "".join(part.text for part in wait_parts(agent, badge=badge) if not part.hint)


def blocked_words(agent: Agent) -> str:
    """The last call its mode's check blocked this turn, and how many more: "⊘ blocked: curl … (+2)" ("" for none)."""
    blocked = agent.blocked_this_turn
    if not blocked:
        return ""
    more = f" (+{len(blocked) - 1})" if len(blocked) > 1 else ""
    return f"⊘ {blocked[-1].words()}{more}"


def _text(parts: list[Part]) -> str:
    return "".join(part.text for part in parts)


def _with_mode(agent: Agent, wait: list[Part]) -> list[Part]:
    badge = MODE_BADGES.get(agent.mode)
    if badge is None:
        return wait
    return [Part(*badge), Part(" · ", DIM), *wait] if _text(wait) else [Part(*badge)]


def _the_wait(agent: Agent) -> list[Part]:  # one answer per kind of wait, in the order they win
    obs = agent.observation
    prompt = obs.prompt
    # "hook ·": y/n answer this exact call through the agent's hook, not by keys (words about the keys).
    via = [Part("hook · ", BOLD, hint=True)] if agent.channel == "hook" else []
    if prompt is not None and prompt.kind == "permission":
        return [*via, Part(f"{prompt.tool}: {prompt.detail}" if prompt.detail else prompt.tool or prompt.title)]
    if prompt is not None and prompt.review:
        answers = "; ".join(f"{q} → {a or '(no answer)'}" for q, a in prompt.answers)
        return [*via, Part(f"submit your answers? {answers}" if answers else prompt.title)]
    if prompt is not None and prompt.kind in ("question", "input"):
        suffix = f" ({prompt.question_index}/{prompt.question_count})" if prompt.question_count > 1 else ""
        if prompt.title:
            parts = [*via, Part(prompt.title + suffix)]
        else:
            parts = [*via, Part("a question scrolled out of view"), Part(" (the preview shows its options)", hint=True), Part(suffix)]
        if prompt.multi_select:
            ticked = [o.label for o in prompt.options if o.ticked]
            parts.append(Part(f" · ✔ {', '.join(ticked)}", BOLD) if ticked else Part(" · nothing ticked", DIM))
        return parts
    if prompt is not None and prompt.kind == "plan":
        return [Part("approve the plan")]
    if prompt is not None and prompt.kind == "menu":
        return [Part(f"menu: {prompt.title}" if prompt.title else "a menu waits for a choice")]
    if prompt is not None and prompt.kind == "starting":
        return [Part(prompt.title)]
    if claimed_only(agent):
        # Claude's own word, the screen unread: say so, and where it came from.
        said = claimed_wait(obs) or obs.state.value
        where = "status file" if obs.source == STATUS_SOURCES[0] else "agent list"
        return [Part(f"{said} (Claude's {where}"), Part("; press e", hint=True), Part(")")]
    if obs.retrying:  # still its turn: "retrying 5/10 · 529 overloaded"
        return [Part(obs.error or "retrying", RETRYING)]
    if agent.blocked_this_turn and not obs.state.needs_you:
        # Auto mode refused a call this turn, unseen: the row says so until the next prompt.
        return [Part(blocked_words(agent), RED)]
    if obs.state is AgentState.ERROR:
        return [Part(obs.error, RED)]
    if obs.state is AgentState.LIMITED:
        return [Part(limit_words(agent.limited_until), BOLD), Part(f" · {obs.error}" if obs.error else "", DIM)]
    if obs.state is AgentState.EXITED and obs.exit_status is not None:
        return [Part(f"exit status {obs.exit_status}", DIM)]
    if obs.state is AgentState.UNKNOWN and any(e.rule == "unrecognised-screen" for e in obs.evidence):
        return [Part("unrecognised screen", DIM), Part(": press e", DIM, hint=True)]
    if obs.state is AgentState.WORKING:
        # The present: the prompt it works on (the last answer or outcome is
        # the past, and read as if it were what Claude does now).
        if agent.command:
            return [Part("▸ ", DIM), Part(" ".join(agent.command.split()))]
        return [Part(agent.answered, DIM)]
    # How its last prompt was answered, until a turn's outcome says more.
    if agent.answered and obs.state is AgentState.IDLE and not agent.outcome:
        return [Part(agent.answered, DIM)]
    if agent.outcome:  # nothing to wait for: show what the last turn achieved
        return [Part(agent.outcome, RED if agent.outcome.startswith(_FAILED) else DIM_GREEN)]
    return []
