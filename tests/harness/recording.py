"""What every family's screen recorder does the same way (``record``, ``record_codex``, ``record_gemini``, ``record_opencode``).

Each recorder plays its family's scenarios against the real binary and keeps
each screen as a triple under ``snapshots/panes/<family>-<version>/<renderer>/<W>x<H>/``:
``<scenario>.ansi`` (the ``capture-pane -e`` capture), ``<scenario>.txt``
(its text) and ``<scenario>.json`` (the pane's record and the expected
state).  Writing that triple, the pane record's keys, the ``WxH`` argument
and the loop that records jobs in parallel with retries are here, once; the
scenarios, the session and what a family's record is headed with stay in
each recorder.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .pane_session import PaneSession
from .tmux import PaneInfo

J = TypeVar("J")

SGR = re.compile(r"\x1b\[[0-9;:]*m")


def plain_text(ansi: str) -> str:
    """The text of an ``capture-pane -e`` capture: colours dropped, trailing blanks trimmed."""
    return "\n".join(line.rstrip() for line in SGR.sub("", ansi).split("\n"))


def parse_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)x(\d+)", text)
    if not match:
        raise argparse.ArgumentTypeError(f"size must look like 120x40, not {text!r}")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class Job:
    """One screen to record: a scenario (anything with a ``name``) at a size, in a renderer, of a version."""

    scenario: Any
    width: int
    height: int
    renderer: str
    version: str

    @property
    def label(self) -> str:
        return f"{self.renderer}/{self.width}x{self.height}/{self.scenario.name}"


def pane_record(head: dict[str, Any], scenario: str, renderer: str, info: PaneInfo, expected: dict[str, Any]) -> dict[str, Any]:
    """A screen's ``.json``: ``head`` (who recorded it: family, version), then the scenario and the pane as tmux saw it."""
    return {
        **head,
        "scenario": scenario,
        "renderer": renderer,
        "width": info.width,
        "height": info.height,
        "cursor": {"x": info.cursor_x, "y": info.cursor_y},
        "alternate_on": info.alternate_on,
        "pane_title": info.title,
        "pane_command": info.current_command,
        "expected": expected,
    }


def write_screen(folder: Path, name: str, ansi: str, meta: dict[str, Any]) -> None:
    """Write one screen's ``.ansi``, ``.txt`` and ``.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ansi").write_text(ansi)
    (folder / f"{name}.txt").write_text(plain_text(ansi))
    (folder / f"{name}.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")


def play(session: PaneSession, drive: Callable[[Any], object], *, settle: bool) -> tuple[str, PaneInfo]:
    """Drive the session to its scenario's screen, let it settle if asked, and capture it; the session is closed after."""
    try:
        drive(session)
        if settle:
            session.wait_stable(quiet=0.8, timeout=4, strict=False)
        return session.ansi(), session.info()
    finally:
        session.close()


def record_all(jobs: Sequence[J], record: Callable[[J], object], label: Callable[[J], str], *, workers: int, tries: int, error_chars: int | None = None) -> int:
    """Record every job, ``workers`` at once, each tried up to ``tries`` times; print each outcome; 1 if any failed.

    One flaky screen must not lose the run: a failure is retried, then
    reported, and the others go on.
    """
    failures: list[str] = []
    started = time.monotonic()

    def attempt(job: J) -> object:
        for n in range(tries):
            try:
                return record(job)
            except Exception:
                if n == tries - 1:
                    raise
                print(f"retrying {label(job)}:\n{traceback.format_exc(limit=1)}", file=sys.stderr, flush=True)
        raise AssertionError("unreachable")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(attempt, job): job for job in jobs}
        for future in as_completed(futures):
            name = label(futures[future])
            try:
                future.result()
                print(f"ok   {name}", flush=True)
            except Exception as exc:  # noqa: BLE001 - one failed recording is reported; the others go on
                failures.append(name)
                message = str(exc) if error_chars is None else str(exc)[-error_chars:]
                print(f"FAIL {name}: {message}", file=sys.stderr, flush=True)
    print(f"{len(jobs) - len(failures)}/{len(jobs)} screens in {time.monotonic() - started:.0f}s", flush=True)
    if failures:
        print("failed: " + ", ".join(sorted(failures)), file=sys.stderr)
        return 1
    return 0
