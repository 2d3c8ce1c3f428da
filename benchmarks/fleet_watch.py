"""headspace's side of the fleet benchmark: the service watching hosts, in its own process.

    python benchmarks/fleet_watch.py SPEC_JSON

``fleet.py`` starts this once per phase, so that the process it measures
(CPU, memory, the ssh processes below it) is headspace and nothing else: the
benchmark's own work (drawing menus, reading results, the delaying relay)
runs elsewhere.

SPEC is ``{"kind": "local", "hosts": [{"name": .., "socket_path": ..}, ..]}``
(one service per tmux server, each as headspace watching its own machine) or
``{"kind": "remote", "hosts": [{"name": .., "destination": .., "socket_name":
.., "ssh_config": ..}, ..]}`` (one service with every host in its fleet and
no local server, as ``headspace --no-local --host ..`` runs).

It prints one JSON line per row state change (``{"t", "host", "pane",
"state"}``: the moment the service tells the table, by the same call), per
fleet problem (``{"t", "problem"}``), per event-loop stall of 100 ms or more
(``{"t", "stall_ms"}``: a late menu during one was late in headspace's loop,
not on the wire) and ``{"t", "started"}`` just before the services run; it
stops them when its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.api.facade import AgentChanged, ProblemChanged  # noqa: E402
from headspace_tui.model import PaneAddress  # noqa: E402
from headspace_tui.service.facade import Service  # noqa: E402
from headspace_tui.service.records.journal import Journal  # noqa: E402
from headspace_tui.shared.config import HostSpec  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402


def say(**fields) -> None:
    sys.stdout.write(json.dumps({"t": time.time(), **fields}) + "\n")
    sys.stdout.flush()


def listener(local_name: str | None):
    """A subscriber printing each row's state when it changes (not every repaint of a working row)."""
    last: dict[tuple[str, str], str] = {}

    def changed(event) -> None:
        if isinstance(event, ProblemChanged):
            say(problem=event.problem)
            return
        if not isinstance(event, AgentChanged):
            return
        address = PaneAddress.parse(event.agent.pane_id)
        if address.placeholder:
            return  # a host's own row (never reached): not an agent
        key = (local_name or address.host, address.pane)
        state = event.agent.state.value
        if last.get(key) != state:
            last[key] = state
            say(host=key[0], pane=key[1], state=state)

    return changed


def services(spec: dict, config_dir: Path) -> list[Service]:
    built = []
    if spec["kind"] == "local":
        for host in spec["hosts"]:
            service = Service.build(TmuxServer(socket_path=host["socket_path"]), config_dir=config_dir, journal=Journal(None), hooks=False)
            service.subscribe(listener(host["name"]))
            built.append(service)
    else:
        hosts = [HostSpec(h["name"], h["destination"], socket_name=h["socket_name"], ssh_config=h["ssh_config"]) for h in spec["hosts"]]
        own = TmuxServer(socket_name=f"headspace-fleet-unused-{id(hosts)}")  # headspace's own server: only a jump would use it
        service = Service.build(own, config_dir=config_dir, journal=Journal(None), hooks=False, hosts=hosts, local=False)
        service.subscribe(listener(None))
        built.append(service)
    return built


STALL_STEP = 0.05  # how often the loop's lag is sampled
STALL_REPORTED = 0.1  # a wake-up this late is reported: nothing on the loop ran in that time, a menu included


async def stalls() -> None:
    """Say when the event loop woke ``STALL_REPORTED`` s or more late (headspace's own stall, or the machine's)."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + STALL_STEP
        await asyncio.sleep(STALL_STEP)
        late = loop.time() - due
        if late >= STALL_REPORTED:
            say(stall_ms=round(late * 1000, 1))


async def main_async(spec: dict) -> None:
    with tempfile.TemporaryDirectory(prefix="headspace-fleet-watch-") as scratch:
        running = services(spec, Path(scratch) / "no-claude-config")
        say(started=True)
        tasks = [asyncio.create_task(s.run()) for s in running] + [asyncio.create_task(stalls())]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the benchmark closes our stdin
        await asyncio.gather(*(s.stop() for s in running), return_exceptions=True)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        say(stopped=True)


if __name__ == "__main__":
    asyncio.run(main_async(json.loads(sys.argv[1])))
