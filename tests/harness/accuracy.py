"""How right the detector is on the recorded corpus, per version and per rules table.

    python -m tests.harness.accuracy            # the table docs/testing.md shows

For every version in ``snapshots/panes/`` the detector reads every screen
three ways: with that version's own rules table (what the app does), with the
*nearest other* table (as if the version were new and unknown: its own table
removed), and with the structural rules alone (``BASE``: no version's words
at all).  A screen counts as right for the *state* when the state matches its
label, and *in full* when every detail its label names (tool, command, file,
options, question, retrying) matches too.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from headspace_tui.detect.claude import BASE, Rules, classify_capture, family_of, rules_for
from headspace_tui.model import AgentState

from .record import PANES
from .versions import RECORDED

MENU_STATES = {"permission", "question", "plan"}


def _flat(text: str) -> str:
    return re.sub(r"[\s│]+", "", text)


def _shown(value: str, text: str) -> bool:
    """``value`` is on the screen (wraps and box borders aside)."""
    return _flat(value) in _flat(text)


# The header that names each tool in a permission dialog ("Bash command").
TOOL_HEADERS = {tool: header for header, tool in BASE.permission_headers}


def problems(observation, expected: dict, text: str) -> list[str]:
    """What ``observation`` gets wrong about a screen labelled ``expected`` (empty: right in full).

    A dialog Claude scrolled inside a small pane may have its header, its
    question or some options out of view: what is not on the screen cannot be
    read from it, so a detail counts only where the screen shows it (as the
    HTTP status does); everything on screen must be right.
    """
    found: list[str] = []
    prompt = observation.prompt
    scrolled = prompt is not None and (prompt.hidden_options > 0 or prompt.more_below) or re.search(r"^\s*↑ \d+ more line", text, re.M)
    if observation.state.value != expected["state"]:
        found.append(f"state {observation.state.value} (expected {expected['state']})")
    if not observation.evidence:
        found.append("no evidence")
    # Only the new small-pane screens scroll a tool's header away (13 of them when this was written).
    tool_shown = expected.get("tool") not in TOOL_HEADERS or re.search(TOOL_HEADERS[expected["tool"]], text, re.I)
    if "tool" in expected and observation.tool != expected["tool"] and tool_shown:
        found.append(f"tool {observation.tool!r}")
    if "mcp_server" in expected and not (observation.tool.startswith(expected["mcp_server"] + " — ") and observation.tool.endswith("(MCP)")):
        found.append(f"MCP tool {observation.tool!r}")
    if "detail" in expected and (prompt is None or prompt.detail != expected["detail"]) and (not scrolled or _shown(expected["detail"], text)):
        found.append(f"detail {prompt.detail if prompt else None!r}")
    if "options" in expected:
        if prompt is not None and (prompt.hidden_options or prompt.more_below):
            # Claude scrolled the dialog: the options on screen, each right at
            # its own number, and no more missing than it says are hidden.
            wanted = expected["options"]
            seen = {int(o.key): o.label for o in prompt.options if o.key.isdigit()}
            wrong = {n: label for n, label in seen.items() if n <= len(wanted) and wanted[n - 1] != label}
            missing = [n for n in range(1, len(wanted) + 1) if n not in seen]
            if wrong or (len(missing) > prompt.hidden_options and not prompt.more_below):
                found.append(f"scrolled options {seen} (hidden {prompt.hidden_options})")
        elif observation.option_labels[: len(expected["options"])] != expected["options"]:
            found.append(f"options {observation.option_labels}")
        if prompt is None or ("multi_select" in expected and prompt.multi_select is not expected["multi_select"]):
            found.append("multi_select")
    if "question" in expected and observation.question != expected["question"] and (not scrolled or _shown(expected["question"], text)):
        found.append(f"question {observation.question!r}")
    if "question_index" in expected and (prompt is None or (prompt.question_index, prompt.question_count) != (expected["question_index"], expected["question_count"])):
        found.append("question index")
    if "ticked" in expected and (prompt is None or list(prompt.ticked) != expected["ticked"]):
        found.append(f"ticked {list(prompt.ticked) if prompt else None}")
    if "review" in expected and (prompt is None or prompt.review is not expected["review"]):
        found.append("review page")
    if "answers" in expected and (prompt is None or dict(prompt.answers) != expected["answers"]):
        found.append(f"answers {dict(prompt.answers) if prompt else None}")
    if "retrying" in expected:
        if observation.retrying is not expected["retrying"]:
            found.append(f"retrying {observation.retrying}")
        if not observation.error:
            found.append("no error text")
    if "error" in expected and observation.error != expected["error"]:  # opencode's labels name the error line itself
        found.append(f"error {observation.error!r}")
    if "mode" in expected and observation.mode != expected["mode"]:
        found.append(f"mode {observation.mode!r}")
    for block in expected.get("blocked", ()):
        # Each call the screen shows as blocked, as far as it names it (a cut command: its start).
        if not any(_same_block(block, seen) for seen in observation.blocked):
            found.append(f"blocked {[(b.tool, b.detail, b.reason) for b in observation.blocked]}")
            break
    # The HTTP status, wherever the screen shows it (2.1.160's retries say only "Retrying in 3s").
    if "status" in expected and re.search(rf"\b{expected['status']}\b", text) and str(expected["status"]) not in observation.error:
        found.append(f"error {observation.error!r}")
    return found


def _same_block(expected: dict, seen) -> bool:
    """A blocked call read as labelled: the same tool and reason, and the command (or the start of it, where the screen cuts it)."""
    if "tool" in expected and seen.tool != expected["tool"]:
        return False
    reason = seen.reason.rstrip("…").rstrip()
    if "reason" in expected and not (seen.reason == expected["reason"] or seen.reason.endswith("…") and reason and expected["reason"].startswith(reason)):
        return False
    detail = seen.detail.rstrip("…").rstrip()
    return "detail" not in expected or bool(detail) and expected["detail"].startswith(detail)


@dataclass
class Score:
    total: int = 0
    state_right: int = 0
    full_right: int = 0
    menu_as_not_menu: int = 0  # a numbered menu read as starting or idle
    needs_you_missed: int = 0  # a screen that needs you read as one that doesn't
    misses: list[str] = field(default_factory=list)

    def add(self, name: str, observation, expected: dict, text: str) -> None:
        self.total += 1
        found = problems(observation, expected, text)
        state_ok = observation.state.value == expected["state"]
        self.state_right += state_ok
        self.full_right += not found
        if expected["state"] in MENU_STATES and observation.state in (AgentState.STARTING, AgentState.IDLE):
            self.menu_as_not_menu += 1
        if AgentState(expected["state"]).needs_you and not observation.state.needs_you:
            self.needs_you_missed += 1
        if found:
            self.misses.append(f"{name}: {'; '.join(found)}")

    def percent(self, right: int) -> float:
        return 100.0 * right / self.total if self.total else 0.0


def screens(version: str) -> list[Path]:
    return sorted((PANES / f"claude-{version}").glob("*/*/*.json"))


def measure(version: str, rules: Rules | None) -> Score:
    """Read every screen of ``version`` with ``rules`` (None: the version's own table, as the app does)."""
    score = Score()
    for path in screens(version):
        meta = json.loads(path.read_text())
        ansi = path.with_suffix(".ansi").read_text()
        text = path.with_suffix(".txt").read_text()
        if rules is None:
            observation = classify_capture(ansi, command=meta["pane_command"], version=version)
        else:
            observation = classify_capture(ansi, command=meta["pane_command"], rules=rules)
        score.add(str(path.relative_to(PANES).with_suffix("")), observation, meta["expected"], text)
    return score


def ways(version: str) -> dict[str, Rules | None]:
    """The three readings of a version: own table, nearest other table, structure alone."""
    return {"own table": None, "nearest other table": rules_for(version, exclude=family_of(version)), "structural only": BASE}


def report(out=sys.stdout) -> None:
    out.write("| version | screens | own table | nearest other table | structural only |\n|---|---|---|---|---|\n")
    for version in RECORDED:
        cells = []
        total = 0
        for rules in ways(version).values():
            score = measure(version, rules)
            total = score.total
            cells.append(f"{score.percent(score.state_right):.1f}% / {score.percent(score.full_right):.1f}%")
        out.write(f"| {version} | {total} | " + " | ".join(cells) + " |\n")
    out.write("\nEach cell: state right / right in full (state and every labelled detail).\n")


if __name__ == "__main__":
    report()
