"""A resident service of the demo table in its own process, whose jump's tmux is slow or held: the far side of a real client over HTTP.

    python tests/harness/held_service.py FOLDER NAME --entered FILE --landed FILE (--release FILE | --seconds S)

The service is the real one (``Service.build``, its routes and stream
served by ``resident.server.serve`` on a Unix socket in ``FOLDER``), shown
the demo table's recorded panes (tests/ui/apps.py ``AGENTS``) instead of a
tmux server's, which it does not watch.  Only its jump is replaced: it notes each call in
``--entered`` (one line per jump), then, as a tmux that does not answer,
waits until ``--release`` exists (giving up after ``HOLD_LIMIT``), or sleeps
``--seconds``, and notes in ``--landed`` each jump that was answered.  What is tested
with it is where the wait is felt (the client's loop), not what tmux does.
It lives until SIGTERM; its own pid stands for the tmux server it would
end with.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from headspace_tui.api.facade import Jump  # noqa: E402
from headspace_tui.detect.claude import classify_capture  # noqa: E402
from headspace_tui.resident.server import Watched, serve  # noqa: E402
from headspace_tui.service.facade import Service  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.shared.config import Config  # noqa: E402
from headspace_tui.shared.resident_place import Place  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402
from tests.ui.apps import AGENTS, recorded  # noqa: E402
from tests.ui.held_jump import HOLD_LIMIT  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("name")
    parser.add_argument("--entered", type=Path, required=True)
    parser.add_argument("--landed", type=Path, required=True)
    parser.add_argument("--release", type=Path)
    parser.add_argument("--seconds", type=float, default=0.0)
    args = parser.parse_args()

    service = Service.build(TmuxServer(socket_name="headspace-held-unused"), live=False, journal=Journal(None), hooks=False, config=Config(theme="headspace-dark"))
    now = time.time()
    for n, (session, screen, age) in enumerate(AGENTS):
        record, ansi, _ = recorded(n, session, screen)
        service.replay(record, ansi, classify_capture(ansi, command=record.current_command), now - age, family="claude")

    def jump(agent, here=None) -> Jump:
        with args.entered.open("a") as entered:
            entered.write(f"{agent.target}\n")
        if args.release is not None:
            deadline = time.monotonic() + HOLD_LIMIT
            while not args.release.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            if not args.release.exists():
                return Jump(notice="tmux never answered")  # gave up: not a jump
        else:
            time.sleep(args.seconds)
        with args.landed.open("a") as landed:
            landed.write(f"{agent.target}\n")
        return Jump(notice=f"jumped to {agent.target}")

    async def shown_only() -> None:
        await asyncio.Event().wait()  # no tmux to watch: the recorded panes stay as shown, until the service ends

    service.jump = jump  # type: ignore[method-assign]
    service.run = shown_only  # type: ignore[method-assign]
    serve(service, Watched(f"held:{args.name}", "a held demo service (a test)", os.getpid), Place(args.folder, args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
