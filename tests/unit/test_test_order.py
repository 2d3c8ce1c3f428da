"""The order the fast stage hands out its tests (tests/harness/ordering.py): the long ones first, nothing lost or doubled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.conftest import _needs
from tests.harness.ordering import LIST, read_list, stealing_runs


@dataclass(frozen=True)
class Item:
    nodeid: str


def _items(n: int) -> list[Item]:
    return [Item(f"tests/unit/test_m.py::test_{i:03d}") for i in range(n)]


def test_each_first_run_of_work_stealing_begins_with_its_share_of_the_long_tests_and_every_test_runs_once():
    items = _items(40)
    seconds = {items[i].nodeid: s for i, s in ((33, 28.0), (35, 20.0), (36, 16.0), (38, 11.0), (39, 10.0), (5, 6.0))}
    ordered = stealing_runs(items, seconds, 4)
    assert sorted(ordered, key=lambda item: item.nodeid) == items  # the same tests, each once
    runs = [ordered[0:10], ordered[10:20], ordered[20:30], ordered[30:40]]  # worksteal's first cut of 40 over 4
    heads = [[item for item in run if item.nodeid in seconds] for run in runs]
    assert all(run[: len(head)] == head for run, head in zip(runs, heads, strict=True))  # the long ones lead their run
    loads = sorted(sum(seconds[item.nodeid] for item in head) for head in heads)
    assert loads == [20.0, 21.0, 22.0, 28.0]  # 28, 20, 16 and 11 each lead a run; 10 joins the 11, 6 the 16: longest first, to the least loaded
    short = [item for item in ordered if item.nodeid not in seconds]
    assert short == [item for item in items if item.nodeid not in seconds]  # the others keep their file order


def test_uneven_cuts_and_more_long_tests_than_a_run_holds_still_run_everything_once():
    items = _items(7)
    seconds = {item.nodeid: 5.0 + n for n, item in enumerate(items)}
    ordered = stealing_runs(items, seconds, 3)
    assert sorted(ordered, key=lambda item: item.nodeid) == items and len(ordered) == 7
    assert stealing_runs(items, {}, 3) == items and stealing_runs(items, seconds, 1) == items


def test_the_list_reads_as_seconds_and_node_ids_of_tests_that_exist_in_the_tree():
    listed = read_list(LIST)
    assert listed and all(seconds >= 3 for seconds in listed.values())
    root = LIST.parent.parent
    missing = [nodeid for nodeid in listed if not (root / nodeid.split("::", 1)[0]).is_file()]
    assert not missing, f"listed tests whose file is gone (refresh tests/long_tests.txt): {missing}"
    live = [nodeid for nodeid in listed if "e2e" in Path(nodeid).parts or _needs(root / nodeid.split("::", 1)[0])]
    assert not live, f"the live stage keeps its file order: {live}"
