"""A screen "held still" before keys go: Claude's blinking tool bullet is not a redraw; every other change is.

The captures are Claude 2.1.330's own lines (the permission dialog's tool
line, as ``benchmarks/inbox_move.py`` caught it blinking); the async test
drives ``settled_read`` with a stand-in pane whose captures alternate, since
a real pane's blink cannot be timed from a unit test (the live answering
tests use real panes).
"""

from __future__ import annotations

import asyncio
import time

import pytest

from headspace_tui.answering.pane_io import SETTLE, SETTLE_STRETCH, STILL_WITHIN, ActionError, _held_still, settle_for, settle_time, settled_read
from headspace_tui.detect.families import CLAUDE
from headspace_tui.service.watching.lifecycle import EXIT_WAIT

LIT = "\x1b[38;5;246m\x1b[49m●\x1b[39m Creating A01\n  Do you want to proceed?\n"
DARK = "\x1b[38;5;246m\x1b[49m \x1b[39m Creating A01\n  Do you want to proceed?\n"


def test_the_blink_alone_is_not_a_change():
    assert _held_still(LIT, DARK) and _held_still(DARK, LIT) and _held_still(LIT, LIT)


def test_a_changed_letter_or_colour_is_a_change():
    assert not _held_still(LIT, LIT.replace("A01", "A02"))
    assert not _held_still(DARK, DARK.replace("A01", "A02"))
    assert not _held_still(LIT, LIT.replace("246", "174"))
    assert not _held_still(LIT, LIT.replace("proceed?", "proceed? "))


def test_a_bullet_with_new_words_is_a_change():
    assert not _held_still(DARK, DARK + "\x1b[38;5;246m●\x1b[39m Bash(touch A02)\n")


class Blinking:
    """A pane whose captures alternate the bullet, counted."""

    def __init__(self) -> None:
        self.captures = 0

    async def capture(self, pane_id: str, ansi: bool = True) -> str:
        self.captures += 1
        return LIT if self.captures % 2 else DARK


def test_settled_read_takes_one_round_over_a_blink():
    pane = Blinking()
    asyncio.run(settled_read(pane, "%1", "claude", quiet=0.01, family=CLAUDE))  # type: ignore[arg-type]
    assert pane.captures == 2


def test_the_wait_stretches_with_a_load_beyond_the_cores_and_no_further_than_its_cap():
    assert settle_for(0.3, 2) == SETTLE and settle_for(2.0, 2) == SETTLE  # no busier than its cores: the quiet wait
    assert settle_for(7.0, 2) == pytest.approx(SETTLE * 3.5)  # a core kept busy beside four workers
    assert settle_for(200.0, 2) == pytest.approx(SETTLE * SETTLE_STRETCH)  # no further than the cap
    assert settle_for(3.0, 0) == pytest.approx(SETTLE * 3)  # no cores told: taken as one


def test_this_machines_wait_is_between_the_quiet_one_and_the_cap():
    assert SETTLE <= settle_time() <= SETTLE * SETTLE_STRETCH


class Drawing:
    """A pane that keeps changing for ``drawing`` seconds (a Claude still drawing its start on a busy machine), then holds."""

    def __init__(self, drawing: float) -> None:
        self.until = time.monotonic() + drawing
        self.captures = 0

    async def capture(self, pane_id: str, ansi: bool = True) -> str:
        self.captures += 1
        return f"frame {self.captures}\n" if time.monotonic() < self.until else "❯ \n"


def test_a_key_gives_up_on_a_pane_still_drawing_and_a_stop_waits_it_out():
    """A key's 2 s keeps it from racing a redraw; /exit races nothing, and is given EXIT_WAIT to see the screen hold still."""
    with pytest.raises(ActionError, match="kept changing"):
        asyncio.run(settled_read(Drawing(STILL_WITHIN + 1.0), "%1", "claude", quiet=0.05, family=CLAUDE))  # type: ignore[arg-type]
    pane = Drawing(STILL_WITHIN + 1.0)
    asyncio.run(settled_read(pane, "%1", "claude", quiet=0.05, timeout=EXIT_WAIT, family=CLAUDE))  # type: ignore[arg-type]
    assert time.monotonic() >= pane.until
