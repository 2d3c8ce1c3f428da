"""Never into a draft: no typed line goes into an agent's input box that holds text the user did not send (issue 37).

Each family's reader says what its box holds (``Family.box_text``); the
guarded send asks it before every nudge, reply or typed text, and Stop's
``/exit`` asks the same rule (``keys.draft_refusal``).  Read on the real
screens of the corpus: a half-typed line (Claude: every version; Codex;
Gemini CLI; opencode) is a draft, an empty box with its dim placeholder is not.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from headspace_tui.answering.keys import DraftInBox, draft_refusal, send_guarded
from headspace_tui.answering.pane_io import ActionError
from headspace_tui.answering.policy import Intent, IntentKind
from headspace_tui.detect.families import BY_NAME
from headspace_tui.model import AgentState
from headspace_tui.service.watching.lifecycle import exit_refusal
from tests.harness.record import PANES

DRAFTS = {"claude": "idle_half_typed", "codex": "idle_draft", "gemini": "idle_with_draft", "opencode": "idle_draft"}
# What each family's recorded draft begins with (typed by the recorder into the real agent).
TYPED = {
    "claude": "refactor the parser so that it",
    "codex": "please also update the snapshot files",
    "gemini": "of a long pasted message",
    "opencode": "refactor the parser so that it",
}
EMPTY = ("idle_fresh", "idle_finished", "idle", "idle_after_reply", "idle_interrupted", "interrupted", "rejected", "input_plain_question", "input", "input_question", "error_gave_up_500", "error")


def _family(path: Path):
    return BY_NAME[path.parts[-4].split("-")[0]]


def _id(path: Path) -> str:
    return "-".join(path.parts[-4:]).removesuffix(".ansi")


def _drafted(path: Path) -> bool:
    """The recorder's keys reached the box (2.0.60's first recordings show only the placeholder: the typing was lost)."""
    return TYPED[_family(path).name][:20] in " ".join(path.with_suffix(".txt").read_text().split())


DRAFT_SCREENS = sorted(p for family, stem in DRAFTS.items() for p in PANES.glob(f"{family}-*/*/*/{stem}.ansi"))
EMPTY_SCREENS = sorted(p for p in PANES.glob("*/*/*/*.ansi") if p.stem in EMPTY and _family(p).name in DRAFTS)


def test_every_family_that_draws_its_box_has_recorded_drafts():
    assert {_family(p).name for p in DRAFT_SCREENS} == set(DRAFTS)
    assert sum(_drafted(p) for p in DRAFT_SCREENS) >= 30


@pytest.mark.parametrize("path", DRAFT_SCREENS, ids=_id)
def test_a_half_typed_line_in_the_box_is_a_draft(path):
    family, ansi = _family(path), path.read_text(encoding="utf-8", errors="replace")
    if not _drafted(path):
        assert draft_refusal(family, ansi) == ""  # its placeholder only: nothing typed
        return
    refusal = draft_refusal(family, ansi)
    assert refusal.startswith(f"{family.label}'s input box holds text you did not send")
    assert TYPED[family.name][:20] in refusal and "nothing sent" in refusal and "i types there" in refusal


@pytest.mark.parametrize("path", EMPTY_SCREENS, ids=_id)
def test_an_empty_box_or_its_placeholder_is_no_draft(path):
    family = _family(path)
    assert draft_refusal(family, path.read_text(encoding="utf-8", errors="replace")) == ""


def test_stop_refuses_a_draft_by_the_same_rule():
    path = PANES / "claude-2.1.330" / "alt" / "80x24" / "idle_half_typed.ansi"
    refusal = exit_refusal(BY_NAME["claude"].classify(path.read_text(), command="claude"), path.read_text())
    assert "holds text you did not send" in refusal and "/exit not sent" in refusal


class Replay:
    """The pane a guarded send reads, replayed from one recorded screen (a unit test has no tmux); it records every key sent."""

    def __init__(self, ansi: str, command: str) -> None:
        self.ansi, self.command, self.sent = ansi, command, []

    async def pane(self, pane_id: str):
        return type("Record", (), {"current_command": self.command, "in_mode": False, "title": None})()

    async def capture(self, pane_id: str, ansi: bool = True) -> str:
        return self.ansi

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        self.sent.append(keys)


@pytest.mark.parametrize("kind", [IntentKind.NUDGE, IntentKind.TEXT])
@pytest.mark.parametrize("path", [p for p in DRAFT_SCREENS if _drafted(p) and "80x24" in str(p)], ids=_id)
def test_the_guarded_send_types_nothing_after_a_draft(path, kind, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    family = _family(path)
    command = "claude" if family.name == "claude" else family.name
    io = Replay(path.read_text(encoding="utf-8", errors="replace"), command)
    seen = family.classify(io.ansi, command=command)
    assert seen.state is AgentState.IDLE
    with pytest.raises(DraftInBox):
        asyncio.run(send_guarded(io, "%1", seen, Intent(kind, text="continue"), family=family))
    assert io.sent == []


IDLE_80X24 = PANES / "claude-2.1.330" / "alt" / "80x24" / "idle_finished.ansi"
BOX_ROW = 21  # the input box's row in that recording


def _with_box(ansi: str, typed: str) -> str:
    """The recorded screen with ``typed`` drawn in its input box (in the text's colour, the cursor after it)."""
    lines = ansi.split("\n")
    lines[BOX_ROW] = f"\x1b[39m❯\xa0{typed}\x1b[7m \x1b[0m\x1b[39m\x1b[49m"
    return "\n".join(lines)


class Drawing(Replay):
    """A Claude that draws what it reads: the text in its box (or its mark of a long paste), an empty box once Enter submits it.

    A stand-in for the screen, not the agent: the live case this proves (an
    agent too busy to draw the text before the confirmation looks) cannot be
    staged with a real Claude here: tmux continues a stopped pane process
    at once, and a shell above a stopped Claude takes the terminal back.
    ``draws=False`` is that agent: nothing it reads shows.
    """

    def __init__(self, *, draws: bool = True, shown: str | None = None) -> None:
        super().__init__(IDLE_80X24.read_text(), "claude")
        self.empty, self.draws, self.shown = self.ansi, draws, shown

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        await super().send_keys(pane_id, *keys, literal=literal)
        if self.draws and literal:
            self.ansi = _with_box(self.empty, self.shown or keys[0])
        elif self.draws and keys == ("Enter",):
            self.ansi = self.empty


def test_the_guarded_send_still_types_into_an_empty_box_and_presses_enter_once_the_box_shows_the_text(tmp_path, monkeypatch):
    """The check refuses drafts only: at an empty box the nudge goes, and is submitted."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    io = Drawing()
    seen = BY_NAME["claude"].classify(io.ansi, command="claude")
    outcome = asyncio.run(send_guarded(io, "%1", seen, Intent(IntentKind.NUDGE, text="continue"), timeout=0.3, family=BY_NAME["claude"]))
    assert io.sent == [("continue",), ("Enter",)] and outcome.delivered


def test_a_long_text_drawn_as_a_pasted_mark_is_in_the_box_until_enter_submits_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    io = Drawing(shown="[Pasted text #1]")
    seen = BY_NAME["claude"].classify(io.ansi, command="claude")
    text = "keep the tabs " * 80
    outcome = asyncio.run(send_guarded(io, "%1", seen, Intent(IntentKind.TEXT, text=text), timeout=0.3, family=BY_NAME["claude"]))
    assert io.sent == [(text.strip(),), ("Enter",)] and outcome.delivered


def test_an_agent_that_has_drawn_nothing_of_the_text_gets_no_enter_and_nothing_is_called_delivered(tmp_path, monkeypatch):
    """Its box as empty as before the keys is not a line submitted: a loaded Claude later reads text and Enter at once, as a paste."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    io = Drawing(draws=False)
    seen = BY_NAME["claude"].classify(io.ansi, command="claude")
    with pytest.raises(ActionError, match="did not show in Claude's input box"):
        asyncio.run(send_guarded(io, "%1", seen, Intent(IntentKind.TEXT, text="use four spaces"), timeout=0.3, family=BY_NAME["claude"]))
    assert io.sent == [("use four spaces",)], "Enter went before the box showed the text"
