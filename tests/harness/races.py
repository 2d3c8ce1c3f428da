"""Races against live Claude: keys pressed the way hurried people press them.

Each race plays ``trials`` rounds against one real Claude session (scripted
API, private tmux) and one headspace (the app through Textual's pilot, or
the ``headspace send`` command), and reports for each round whether a key
reached a prompt other than the one the user was shown.  The pytest suite
(tests/e2e/test_races.py) runs a few rounds of each; ``benchmarks/races.py``
runs a hundred and prints the counts.

The races, from issue 9:

* ``double_tap_y``: ``y`` twice within 50 ms at a permission prompt.  Wrong:
  a second "1" reaches Claude's input box (or anything after the prompt).
* ``double_one_two_questions``: ``1`` twice 150 ms apart at question 1 of a
  two-question dialog.  Wrong: question 2 gets an answer (Auth ticked).
* ``pane_then_app``: question 1 answered in the pane itself, then ``1``
  pressed in headspace at once (where question 1 was still shown).  Wrong:
  question 2 gets it.
* ``send_expect_after_change``: ``send --approve --expect REQUEST`` (through
  the resident service, which names each appearance of a prompt) with the
  request of a prompt already answered in the pane, while the next prompt
  is up.  Wrong: anything is approved.  Each round also approves the next
  prompt with its own request, which must work (the control).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from headspace_tui.model import AgentState

from . import fake_api as api
from .fake_api import FakeAnthropicAPI
from .scenarios import TURN_DONE
from .session import NUMBERED_MENU, ClaudeSession
from .tmux import PrivateTmux

READ_TIME = 0.6  # how long a round looks at a prompt before pressing (above the app's REACTION_TIME)
QUESTION_DB = api.question("Which database should we use?", ["Postgres", "SQLite"], header="Database")
QUESTION_FEATURES = api.question("Which features should ship first?", ["Auth", "Billing", "Search"], header="Features", multi_select=True)


@dataclass(frozen=True)
class Trial:
    race: str
    n: int
    wrong: bool  # a key reached a prompt other than the one shown
    outcome: str  # what happened, in a few words


@dataclass
class Bench:
    """What a race needs: a tmux server, the scripted API, a way to start Claude, a scratch folder."""

    tmux: PrivateTmux
    api: FakeAnthropicAPI
    start: Callable[..., ClaudeSession]  # start(script, name=...) -> a session at its prompt
    tmp: Path


def _input_box(session: ClaudeSession) -> str:
    boxes = [line for line in session.screen().splitlines() if line.startswith("❯")]
    return boxes[-1].replace("\u00a0", " ").strip() if boxes else ""


async def _until(pilot, predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def _readable(pilot, app, pane_id: str, state: AgentState, read: float = 0.0) -> None:
    """The agent shows ``state`` with its options, long enough to read, and is selected."""
    table = app.table
    await _until(pilot, lambda: pane_id in table.agents and table.agents[pane_id].state is state, f"{pane_id} {state.value}")
    table.move_cursor(row=table._order.index(pane_id))
    from tests.ui.apps import live_row, readable

    agent = live_row(app, pane_id)
    await _until(pilot, lambda: agent.observation.option_labels, "the options")
    # As a person would: read the prompt first (the app refuses keys for one shown under REACTION_TIME).
    await _until(pilot, lambda: readable(app, pane_id, read or READ_TIME), "a readable prompt")


def _app(bench: Bench, session: ClaudeSession):
    from tests.ui.apps import make_app

    return make_app(bench.tmux.name, bench.tmp / f"app-{session.name}", claude_home=session.home)


# -- the races -------------------------------------------------------------------------


def double_tap_y(bench: Bench, trials: int) -> list[Trial]:
    script = []
    for n in range(trials):
        script += [api.bash(f"touch tap{n}.txt", f"Make file {n}"), api.text(f"Tapped {n}.")]
    session = bench.start(script, name="tap")
    results: list[Trial] = []

    async def play() -> None:
        app = _app(bench, session)
        async with app.run_test(size=(140, 40)) as pilot:
            for n in range(trials):
                await asyncio.to_thread(session.submit, f"make file {n}")
                # Even rounds tap as soon as the dialog is drawn (the hurried case:
                # both keys used to wait for the dialog to settle, then both went);
                # odd rounds tap after reading it.
                early = n % 2 == 0
                await _readable(pilot, app, session.pane_id, AgentState.PERMISSION, read=0.15 if early else READ_TIME)
                await pilot.press("y")
                await asyncio.sleep(0.03)  # the second tap, 30 ms later
                await pilot.press("y")
                await asyncio.sleep(1.0)  # the race itself: both keys have done whatever they do by now
                if not (session.workdir / f"tap{n}.txt").exists() and NUMBERED_MENU.search(session.screen()):
                    # Refused as too early to have been read: a deliberate press now.
                    await _readable(pilot, app, session.pane_id, AgentState.PERMISSION)
                    await pilot.press("y")
                await asyncio.to_thread(session.wait_for, lambda s, n=n: f"Tapped {n}." in s and TURN_DONE.search(s) is not None, timeout=30)
                await asyncio.sleep(0.5)  # a late second key would show by now
                box = _input_box(session)
                made = (session.workdir / f"tap{n}.txt").exists()
                wrong = box != "❯"
                results.append(Trial("double_tap_y", n, wrong, f"{'early' if early else 'late'} approved={made} box={box!r}"))
                if wrong:  # clear the stray text so the next round starts clean
                    await asyncio.to_thread(session.press, "C-u")

    asyncio.run(play())
    return results


def _ticked_second(screen: str) -> bool:
    """Question 2 (multi-select) shows an option ticked."""
    return bool(re.search(r"\d\. \[[✔✓xX×]\] (Auth|Billing|Search)", screen))


def _questions_round(bench: Bench, trials: int, race: str, press: Callable) -> list[Trial]:
    session = bench.start([api.ask(QUESTION_DB, QUESTION_FEATURES) for _ in range(trials)], name=race[:12])
    results: list[Trial] = []

    async def play() -> None:
        app = _app(bench, session)
        async with app.run_test(size=(140, 40)) as pilot:
            for n in range(trials):
                await asyncio.to_thread(session.submit, f"help me choose {n}")
                await asyncio.to_thread(session.wait_for, "Which database should we use?", timeout=30)
                await _readable(pilot, app, session.pane_id, AgentState.QUESTION)
                await press(pilot, session)
                await asyncio.sleep(1.5)  # whatever the keys did is drawn by now
                screen = session.screen()
                on_second = "Which features should ship first?" in screen
                wrong = _ticked_second(screen)
                results.append(Trial(race, n, wrong, f"question 2 shown={on_second} ticked={wrong}"))
                # End the dialog (Esc cancels it in Claude) so the next round starts at the prompt.
                await asyncio.to_thread(session.press, "Escape")
                await asyncio.to_thread(session.wait_for, lambda s: NUMBERED_MENU.search(s) is None and "Which" not in s.split("❯")[-1], timeout=15)
                await asyncio.to_thread(session.wait_stable, quiet=0.5, timeout=10, strict=False)

    asyncio.run(play())
    return results


def double_one_two_questions(bench: Bench, trials: int) -> list[Trial]:
    async def press(pilot, session) -> None:
        await pilot.press("1")
        await asyncio.sleep(0.15)  # the race itself: a double press, 150 ms apart
        await pilot.press("1")

    return _questions_round(bench, trials, "double_one_two_questions", press)


def pane_then_app(bench: Bench, trials: int) -> list[Trial]:
    async def press(pilot, session) -> None:
        await asyncio.to_thread(session.press, "1")  # the user answers question 1 in the pane...
        await pilot.press("1")  # ...and, at once, presses 1 in headspace, which still showed question 1

    return _questions_round(bench, trials, "pane_then_app", press)


def _headspace(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    return subprocess.run([sys.executable, "-m", "headspace_tui", *args], capture_output=True, text=True, env=env, timeout=60)


def _request(bench: Bench, pane_id: str, other_than: str = "", timeout: float = 15.0) -> str:
    """The request (one appearance of a prompt) the service shows in ``pane_id``, once it is not ``other_than``."""
    deadline = time.monotonic() + timeout
    while True:
        done = _headspace("status", "--json", "-L", bench.tmux.name)
        for line in done.stdout.splitlines():
            row = json.loads(line)
            if row["pane_id"] == pane_id and row.get("request") and row["request"] != other_than:
                return row["request"]
        if time.monotonic() > deadline:
            return ""
        time.sleep(0.2)


def send_expect_after_change(bench: Bench, trials: int) -> list[Trial]:
    script = []
    for n in range(trials):
        script += [api.bash(f"touch first{n}.txt", "First file"), api.bash(f"touch second{n}.txt", "Second file"), api.text(f"Both {n}.")]
    session = bench.start(script, name="expect")
    served = _headspace("-L", bench.tmux.name, "serve")  # --expect names a request: the service keeps track of them
    if served.returncode != 0:
        raise AssertionError(f"the service did not start: {served.stderr}")
    try:
        return _send_expect_rounds(bench, session, trials)
    finally:
        _headspace("-L", bench.tmux.name, "serve", "--stop")


def _send_expect_rounds(bench: Bench, session: ClaudeSession, trials: int) -> list[Trial]:
    results: list[Trial] = []
    for n in range(trials):
        session.submit(f"make two files {n}")
        session.wait_for(lambda s, n=n: f"touch first{n}.txt" in s and NUMBERED_MENU.search(s) is not None, timeout=30)
        session.wait_stable(quiet=0.5, timeout=10, strict=False)
        first = _request(bench, session.pane_id)
        session.answer("1")  # answered in the pane
        session.wait_for(lambda s, n=n: f"touch second{n}.txt" in s and NUMBERED_MENU.search(s) is not None, timeout=30)
        stale = _headspace("send", session.pane_id, "--approve", "--expect", first, "-L", bench.tmux.name)
        time.sleep(0.5)  # a stray approval would show on screen by now
        still = f"touch second{n}.txt" in session.screen() and NUMBERED_MENU.search(session.screen()) is not None
        wrong = stale.returncode == 0 or not still or (session.workdir / f"second{n}.txt").exists()
        # The control: the prompt's own request is accepted.
        session.wait_stable(quiet=0.5, timeout=10, strict=False)
        current = _request(bench, session.pane_id, other_than=first)
        fresh = _headspace("send", session.pane_id, "--approve", "--expect", current, "-L", bench.tmux.name)
        session.wait_for(lambda s, n=n: f"Both {n}." in s and TURN_DONE.search(s) is not None, timeout=30)
        control = fresh.returncode == 0 and (session.workdir / f"second{n}.txt").exists()
        results.append(
            Trial(
                "send_expect_after_change",
                n,
                wrong,
                f"stale refused={stale.returncode != 0} control approved={control} ({(stale.stderr or stale.stdout).strip()[:80]})",
            )
        )
        if not control:
            raise AssertionError(f"the control failed: send --expect with the current request: {fresh.stderr or fresh.stdout}")
    return results


RACES: dict[str, Callable[[Bench, int], list[Trial]]] = {
    "double_tap_y": double_tap_y,
    "double_one_two_questions": double_one_two_questions,
    "pane_then_app": pane_then_app,
    "send_expect_after_change": send_expect_after_change,
}
