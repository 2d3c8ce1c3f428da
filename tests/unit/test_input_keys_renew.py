"""Input mode's keys make later captures a new appearance: an answer drawn before them (a page, a send --expect) is stale.

A stand-in pane (no tmux: the guarded keys' own checks are tested live in
tests/ui/test_typing_live.py); what is checked is that the link says when
its keys went, after they went, and not when they were refused.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from headspace_tui.answering.input_link import InputLink
from headspace_tui.answering.keys import KeyStroke
from headspace_tui.detect.families import CLAUDE


class Pane:
    def __init__(self, command: str = "claude") -> None:
        self.command = command
        self.sent: list[tuple] = []

    async def pane(self, pane_id: str):
        return SimpleNamespace(pid=42, current_command=self.command, in_mode=False)

    async def send_keys(self, pane_id: str, *keys: str, literal: bool = False) -> None:
        self.sent.append(keys)


def _type(pane: Pane, text: str) -> tuple[list[str], list[str]]:
    told: list[str] = []
    said: list[str] = []

    async def run() -> None:
        link = InputLink(pane, "%7", "test-server", lambda line, ended: said.append(line), CLAUDE, lambda: told.append(str(len(pane.sent))))  # type: ignore[arg-type]
        assert await link.check() == ""
        link.send(KeyStroke((text,), literal=True))
        link.send(KeyStroke(("Enter",)))
        await link.wait_sent()

    asyncio.run(run())
    return told, said


def test_keys_that_went_are_told_after_they_went():
    pane = Pane()
    told, said = _type(pane, "1")
    assert pane.sent == [("1",), ("Enter",)] and said == []
    assert told and told[-1] == "2"  # told once the keys had reached the pane


def test_keys_refused_are_not_told():
    pane = Pane()

    async def run() -> list[str]:
        told: list[str] = []
        link = InputLink(pane, "%7", "test-server", lambda line, ended: None, CLAUDE, lambda: told.append("sent"))  # type: ignore[arg-type]
        assert await link.check() == ""
        pane.command = "bash"  # Claude left the pane: the next check refuses the keys
        link.send(KeyStroke(("y",), literal=True))
        await link.wait_sent()
        return told

    assert asyncio.run(run()) == [] and pane.sent == []
