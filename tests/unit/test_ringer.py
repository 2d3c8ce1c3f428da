"""The service's ringer and the snoozes, whichever front end made or ended them.

The real service (no tmux: its panes are recorded screens, replayed) and
its real ringer, on a clock the test moves; only the delivery is left out
(``Ringer.ring`` writes to terminals: here nothing is rung, only asked).

* A wait snoozed after the ringer saw it, before it came due, is not rung
  (the snooze was made by a front end, through the service).
* A snooze that ran out is rung again even when another front end ended it
  first (``snoozes_ended`` answers whoever asks first: the ringer looks at
  the snoozes themselves).
* A ``notify_command`` that fails is one line on every front end, once.
"""

from __future__ import annotations

import asyncio

from headspace_tui.detect.claude import classify_capture
from headspace_tui.events import Event, Notice
from headspace_tui.notifications.decide import DETAILS, SETTLE, told
from headspace_tui.resident.ringer import Ringer
from headspace_tui.service.facade import Service
from headspace_tui.service.records.journal import Journal
from headspace_tui.shared.config import Config
from headspace_tui.tmux.server import TmuxServer
from tests.ui.apps import recorded

T0 = 1_800_000_000.0


def test_a_wait_snoozed_before_it_came_due_is_not_rung_and_rung_again_when_its_snooze_ran_out_whoever_ended_it():
    now = [T0]
    service = Service.build(TmuxServer(socket_name="headspace-ringer-unused"), live=False, clock=lambda: now[0], journal=Journal(None), hooks=False, config=Config())
    ringer = Ringer(service, service.config, service.socket_file(), clock=lambda: now[0])

    def show(screen: str) -> None:
        record, ansi, meta = recorded(0, "api", screen)
        service.replay(record, ansi, classify_capture(ansi, command=meta["pane_command"]), now[0], family="claude")

    show("idle_finished")  # known before it waits: a wait after the quiet start is news
    now[0] += SETTLE + 1
    show("permission_bash")
    (agent,) = service.agents()
    assert ringer.notifier.next_due() is not None  # seen, about to be said

    assert service.snooze(agent, until=now[0] + 300) is not None  # a front end puts it off before it came due
    now[0] += DETAILS + 1
    assert ringer.due(now[0]) is None, "a wait snoozed before it came due was rung"

    now[0] += 300
    assert service.snoozes_ended(now[0]) == [agent.key or agent.pane_id]  # another front end (its tick) ended it first
    assert ringer.due(now[0]) is None  # reminded now, said once gathered
    now[0] += DETAILS + 1
    note = ringer.due(now[0])
    assert note is not None and [a.address for a in note.alerts] == [agent.pane_id], "a snooze that ran out was not rung again"


def test_a_notify_command_that_fails_is_said_on_every_front_end_once(tmp_path):
    """The ringer runs the command in a thread; its failure reaches the front ends as one ``Notice`` (the TUI shows it), said once."""
    missing = tmp_path / "no-such-notifier"
    service = Service.build(TmuxServer(socket_name="headspace-ringer-unused"), live=False, journal=Journal(None), hooks=False, config=Config(notify="none", notify_command=[str(missing)]))
    ringer = Ringer(service, service.config, service.socket_file())
    heard: list[Event] = []
    service.subscribe(heard.append)

    async def scenario() -> None:
        running = asyncio.create_task(ringer.run())
        await asyncio.sleep(0)  # it started: problems from its threads are told on this loop
        for n in range(2):
            await asyncio.to_thread(ringer.ring, told(f"agent {n} needs permission", "Bash: ls", ""))
            assert ringer.command is not None and await asyncio.to_thread(ringer.command.idle, 10)
        deadline = asyncio.get_running_loop().time() + 10
        while not any(isinstance(e, Notice) for e in heard) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        running.cancel()

    asyncio.run(scenario())
    said = [e.text for e in heard if isinstance(e, Notice)]
    assert len(said) == 1 and "no-such-notifier" in said[0] and "said once" in said[0], said
