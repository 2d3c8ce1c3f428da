"""The order the fast stage's workers take the tests in: the long ones first, so none of them ends the stage alone.

On two cores a stage is as long as its busiest worker.  In file order a
28-second test near the end of the tree starts when the others have little
left, and the machine waits on it with three workers idle (a clean-clone run
spent 85 s of its 270 s fast stage at three quarters idle).  ``long_tests.txt``
lists each fast-stage test that took 3 s or more in a clean-clone run, with
its seconds; every other test counts as short.

* Work stealing (the fast stage, ``--dist worksteal``) first hands each
  worker one run of consecutive tests, then moves queued tests to a worker
  that runs dry.  Each run here begins with its share of the long tests
  (the longest to the run with the least so far), so they start at once,
  side by side, and what is stolen at the end is short.
* Handing out one test (or one ``xdist_group``) at a time (the live stage,
  ``--dist loadgroup``) keeps the file order.  Its long tests are long
  because they wait (a minute of idle measured, twenty popups opened one by
  one), not because they compute: started together they left the cores half
  idle for a minute of a clean-clone run, while in file order they overlap
  the tests that keep the cores busy.

Only the order changes, never what runs: a test missing from the list (new,
renamed) runs in its file's place.  Without xdist nothing is moved.

To refresh the list from the fast stage's ``--durations``
(``pytest -m "not e2e" -n 4 --durations=150 > LOG``)::

    python -m tests.harness.ordering LOG... > tests/long_tests.txt
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

LIST = Path(__file__).resolve().parents[1] / "long_tests.txt"


def read_list(path: Path = LIST) -> dict[str, float]:
    """``seconds node-id`` per line; ``#`` starts a comment."""
    seconds: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            took, nodeid = line.split(None, 1)
            seconds[nodeid] = float(took)
    return seconds


def stealing_runs(items: list, seconds: dict[str, float], workers: int) -> list:
    """``items`` cut as work stealing first cuts them (consecutive runs, each the remainder over the workers left), each run led by its long tests."""
    long = sorted((item for item in items if item.nodeid in seconds), key=lambda item: -seconds[item.nodeid])
    if not long or workers < 2:
        return items
    short = [item for item in items if item.nodeid not in seconds]
    sizes, left = [], len(items)
    for n in range(workers):
        sizes.append(left // (workers - n))
        left -= sizes[-1]
    heads: list[list] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for item in long:
        # the run with the least so far that still has room for it
        room = [n for n in range(workers) if len(heads[n]) < sizes[n]]
        n = min(room, key=lambda n: loads[n])
        heads[n].append(item)
        loads[n] += seconds[item.nodeid]
    ordered = []
    for n in range(workers):
        take = sizes[n] - len(heads[n])
        ordered += heads[n] + short[:take]
        short = short[take:]
    return ordered


@pytest.hookimpl(optionalhook=True)  # xdist's hook, on the controller: a worker's own --dist reads "no"
def pytest_configure_node(node) -> None:
    node.workerinput["headspace_dist"] = node.config.getoption("dist", "no")


@pytest.hookimpl(trylast=True)  # after the deselection by -m and -k: the runs are cut from what will run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    worker = getattr(config, "workerinput", None)
    if worker is None:
        return
    if worker.get("headspace_dist") == "worksteal":
        items[:] = stealing_runs(items, read_list(), int(worker["workercount"]))


FLOOR = 3.0  # seconds: a test shorter than this is never what a stage waits on at its end
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown) +(\S+)$")


def from_logs(texts: list[str]) -> dict[str, float]:
    """Each test's seconds (setup, call and teardown summed; the longest of the runs given) from pytest's ``--durations`` lines."""
    longest: dict[str, float] = {}
    for text in texts:
        took: dict[str, float] = defaultdict(float)
        for line in text.splitlines():
            found = _DURATION.match(line.strip())
            if found:
                took[found[2]] += float(found[1])
        for nodeid, seconds in took.items():
            longest[nodeid] = max(longest.get(nodeid, 0.0), seconds)
    return {nodeid: seconds for nodeid, seconds in longest.items() if seconds >= FLOOR}


if __name__ == "__main__":
    found = from_logs([Path(name).read_text(encoding="utf-8", errors="replace") for name in sys.argv[1:]])
    print("# Fast-stage tests that took 3 s or more in a clean-clone run: seconds, then the test (tests/harness/ordering.py says why and how to refresh)")
    for nodeid, seconds in sorted(found.items(), key=lambda pair: (-pair[1], pair[0])):
        print(f"{seconds:.1f} {nodeid}")
