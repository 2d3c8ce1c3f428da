"""Fuzz run: mutated screens into the detector and the preview, mutated files into the readers.

    python benchmarks/fuzz.py [--screens 100000] [--files 10000] [--seed 9] [--only N] [--json]

Not part of the normal test run (it takes minutes). Screens start from the
recorded corpus (snapshots/panes/claude-*/**/*.ansi) and are mutated:
random code points (C0, C1, DEL, wide, combining), injected escape
sequences (CSI with huge or negative parameters, unterminated OSC and DCS,
lone ESC), lines dropped, doubled or made 10,000 characters long,
truncation, two screens spliced, fake menu lines, odd sizes (1x1 to
500x5). Each goes through ``classify_capture`` and through the preview's
``VirtualScreen`` to a Rich ``Text``, whose characters must carry no
control character (that would reach the user's terminal).

Files start from a real status file, hook events and a transcript, and are
mutated the same way plus JSON type swaps, deep nesting, huge strings,
invalid UTF-8, and special files in their place: a named pipe, a link to
/dev/zero, a folder, a 50 MB file. Each reader call runs under a 5 s
watchdog: one that does not return is a hang.

Prints counts, crashes (with the item number: ``--only N`` replays it),
hangs, findings, and the p99 and worst time per item; exits 1 on any crash
or hang.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from headspace_tui.detect.claude import classify_capture
from headspace_tui.detect.claude.status_files import read_statuses, status_observation
from headspace_tui.detect.claude.transcript import TranscriptTail
from headspace_tui.hooks.spool import hook_observation, read_spool
from headspace_tui.model import AgentState, Observation
from headspace_tui.screen.virtual import VirtualScreen
from headspace_tui.shared.safe_text import is_clean

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = sorted(p.name.removeprefix("claude-") for p in (ROOT / "snapshots" / "panes").glob("claude-*"))
ESCAPES = [
    "\x1b[999999999;999999999H",
    "\x1b[-5A",
    "\x1b[38;2;999;999;999m",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[2J",
    "\x1b]52;c;SEVMTE8=\x1b\\",
    "\x1b]0;TITLE\x07",
    "\x1b]8;;http://x\x1b\\",
    "\x1b]",
    "\x1bP",
    "\x1bPq#0;2;0;0;0",
    "\x1b",
    "\x9b31m",
    "\x9d0;x\x9c",
    "\x1b[5n",
    "\x1b[6n",
    "\x1b[0c",
    "\x1b(0",
    "\x1b)B",
    "\x1b#8",
    "\x1bc",
    "\x1b[;;;;;;;;;m",
    "\x1b[4294967296m",
    "\x1b[?25l",
    "\x1b7",
    "\x1b8",
    "\x1b[r",
    "\x1b[1;0r",
    "\x1b[100000L",
    "\x1b[100000@",
]
ODD_CHARS = "\x00\x07\x08\t\n\r\x0b\x0c\x7f\x85\x9f\u200b\u202e\u0301\u20dd\ufffd\uffff❯›>─│╭╰✻●⎿▐▛█ 表😀\u00a0"
MENU_LINES = ["❯ 1. Yes", "  2. No", "Do you want to proceed?", "Esc to cancel · Tab to amend", "────────────────", "> ", "❯\u00a0"]


def corpus() -> list[tuple[str, dict]]:
    screens = []
    for ansi in sorted((ROOT / "snapshots" / "panes").glob("claude-*/**/*.ansi")):
        meta_path = ansi.with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        screens.append((ansi.read_text(encoding="utf-8", errors="replace"), meta))
    return screens


def mutate_text(rng: random.Random, text: str, others: list[str]) -> str:
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(9)
        if op == 0 and text:
            i = rng.randrange(len(text))
            text = text[:i] + "".join(rng.choice(ODD_CHARS) for _ in range(rng.randint(1, 8))) + text[i + 1 :]
        elif op == 1:
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(ESCAPES) + text[i:]
        elif op == 2:
            lines = text.split("\n")
            if lines:
                del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif op == 3:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines[i:i] = [lines[i]] * rng.randint(1, 50)
            text = "\n".join(lines)
        elif op == 4:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines[i] = lines[i] + rng.choice("x─❯ 1") * 10_000
            text = "\n".join(lines)
        elif op == 5 and text:
            text = text[: rng.randrange(len(text))]
        elif op == 6:
            other = rng.choice(others)
            text = text[: rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1) :]
        elif op == 7:
            lines = text.split("\n")
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(MENU_LINES))
            text = "\n".join(lines)
        else:
            text = text.replace(rng.choice("❯─│>●✻"), rng.choice("❯─│>●✻ "))
    return text


class Stats:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.crashes: list[tuple[str, int, str]] = []
        self.hangs: list[tuple[str, int, str]] = []
        self.findings: list[tuple[str, int, str]] = []

    def time(self, target: str, seconds: float) -> None:
        self.times.setdefault(target, []).append(seconds)


def fuzz_screens(n: int, seed: int, stats: Stats, only: int | None) -> None:
    screens = corpus()
    texts = [s for s, _ in screens]
    for i in range(n) if only is None else [only]:
        rng = random.Random(f"{seed}-screen-{i}")
        base, meta = rng.choice(screens)
        ansi = mutate_text(rng, base, texts)
        width, height = meta.get("width", 120), meta.get("height", 40)
        if rng.random() < 0.1:
            width, height = rng.choice([(1, 1), (2, 300), (500, 5), (80, 24), (300, 2)])
        command = meta.get("command") or "claude"
        version = rng.choice([*VERSIONS, None, "0.0.1", "99.0.0", "garbage"])
        start = time.perf_counter()
        try:
            observation = classify_capture(ansi, command=command, version=version)
            if not isinstance(observation, Observation) or not isinstance(observation.state, AgentState):
                stats.crashes.append(("detector", i, f"returned {observation!r}"))
        except Exception as exc:  # noqa: BLE001
            stats.crashes.append(("detector", i, _where(exc)))
        stats.time("detector", time.perf_counter() - start)
        start = time.perf_counter()
        try:
            screen = VirtualScreen(width, height)
            screen.load_capture(ansi)
            text = screen.to_rich()
            if not is_clean(text.plain):
                stats.findings.append(("preview", i, "a control character in the preview's text"))
        except Exception as exc:  # noqa: BLE001
            stats.crashes.append(("preview", i, _where(exc)))
        stats.time("preview", time.perf_counter() - start)
        if only is None and i and i % 10_000 == 0:
            print(f"  screens: {i}", file=sys.stderr, flush=True)


# -- files --------------------------------------------------------------------------------

STATUS = {
    "pid": 44444,
    "sessionId": "0b7e",
    "cwd": "/home/dev/src/api",
    "status": "waiting",
    "waitingFor": "permission prompt",
    "updatedAt": 1795360000000,
    "statusUpdatedAt": 1795360000000,
    "name": "api",
    "kind": "interactive",
    "tmux": "s:0.%1",
}
EVENTS = [
    {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "tmux_pane": "%1", "pid": 44444, "ts": 1.0, "session_id": "0b7e"},
    {
        "hook_event_name": "PermissionRequest",
        "tool_name": "AskUserQuestion",
        "tmux_pane": "%1",
        "tool_input": {"questions": [{"question": "Which?", "options": [{"label": "A"}, {"label": "B"}], "multiSelect": False}]},
    },
    {"hook_event_name": "Notification", "notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash", "tmux_pane": "%1"},
    {"hook_event_name": "Stop", "last_assistant_message": "Done.", "tmux_pane": "%1"},
    {"hook_event_name": "SessionStart", "source": "startup", "tmux_pane": "%1"},
]


def _swap(rng: random.Random, value):
    """Replace one value somewhere in ``value`` with one of another JSON type."""
    choices = [None, True, 5, -1, 1e308, "x" * rng.choice([1, 1000, 100_000]), [], {}, [1, [2, [3]]], {"a": {"b": None}}, "\x1b]52;c;x\x07"]
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        return {**value, key: _swap(rng, value[key])}
    if isinstance(value, list) and value and rng.random() < 0.7:
        i = rng.randrange(len(value))
        return value[:i] + [_swap(rng, value[i])] + value[i + 1 :]
    return rng.choice(choices)


def mutate_json(rng: random.Random, value) -> bytes:
    op = rng.randrange(8)
    if op == 0:
        return ("[" * rng.choice([70, 1000, 200_000])).encode()
    if op == 1:
        depth = rng.choice([63, 65, 900])
        return (json.dumps(value)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}").encode()
    if op == 2:
        raw = bytearray(json.dumps(value).encode())
        for _ in range(rng.randint(1, 5)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        return bytes(raw)
    if op == 3:
        raw = json.dumps(value).encode()
        return raw[: rng.randrange(len(raw) + 1)]
    if op == 4:
        return b'{"a": NaN, "b": Infinity, "pid": -Infinity, "status": "busy", "status": 7}'
    if op == 5:
        return json.dumps(value).encode("utf-8") + b"\xff\xfe\x80"
    for _ in range(rng.randint(1, 4)):
        value = _swap(rng, value)
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


def _special(rng: random.Random, path: Path) -> str:
    kind = rng.choice(["fifo", "zero", "dir", "big"])
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        os.symlink("/dev/zero", path)
    elif kind == "dir":
        path.mkdir()
    else:
        with open(path, "wb") as handle:
            handle.truncate(50 << 20)
    return kind


def _watched(call, limit: float = 5.0):
    box: dict = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        return "hang", None
    if "error" in box:
        return "error", box["error"]
    return "ok", box.get("value")


def fuzz_files(n: int, seed: int, stats: Stats, only: int | None) -> None:
    base = Path(tempfile.mkdtemp(prefix="hs-fuzz-"))
    transcript_seed = [json.loads(line) for p in sorted((ROOT / "tests" / "data" / "transcripts").glob("*.jsonl")) for line in p.read_text().splitlines() if line.strip()]
    try:
        for i in range(n) if only is None else [only]:
            rng = random.Random(f"{seed}-file-{i}")
            folder = base / f"item{i}"
            folder.mkdir()
            target = ("status", "spool", "transcript")[i % 3]
            special = rng.random() < 0.02
            if target == "status":
                path = folder / "44444.json"
                _special(rng, path) if special else path.write_bytes(mutate_json(rng, dict(STATUS)))

                def call(folder=folder):
                    return [status_observation(s) for s in read_statuses(folder).values()]
            elif target == "spool":
                path = folder / f"{i:020d}-1-abcd.json"
                _special(rng, path) if special else path.write_bytes(mutate_json(rng, dict(rng.choice(EVENTS))))

                def call(folder=folder):
                    return [hook_observation(e) for e in read_spool(folder)]
            else:
                path = folder / "t.jsonl"
                if special:
                    _special(rng, path)
                else:
                    lines = [mutate_json(rng, line) if rng.random() < 0.3 else json.dumps(line).encode() for line in rng.sample(transcript_seed, min(8, len(transcript_seed)))]
                    path.write_bytes(b"\n".join(lines) + rng.choice([b"\n", b""]))

                def call(path=path):
                    return TranscriptTail(path).read_new()

            start = time.perf_counter()
            outcome, value = _watched(call)
            stats.time(f"reader:{target}", time.perf_counter() - start)
            if outcome == "hang":
                stats.hangs.append((f"reader:{target}", i, "did not return in 5 s"))
            elif outcome == "error":
                stats.crashes.append((f"reader:{target}", i, _where(value)))
            if outcome != "hang":
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _where(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno} in {frame.name}" if frame else ""
    return f"{type(exc).__name__}: {str(exc)[:120]}{where}"


def main() -> int:
    import logging

    logging.getLogger("headspace_tui").addHandler(logging.NullHandler())
    logging.getLogger("headspace_tui").propagate = False  # skipped files are expected here, by the thousand
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screens", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--only", type=int, help="replay item N only (of --screens or --files, whichever is non-zero)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    stats = Stats()
    started = time.monotonic()
    if args.screens:
        fuzz_screens(args.screens, args.seed, stats, args.only)
    if args.files:
        fuzz_files(args.files, args.seed, stats, args.only)
    report = {
        "seconds": round(time.monotonic() - started, 1),
        "items": {k: len(v) for k, v in stats.times.items()},
        "p99_ms": {k: round(sorted(v)[int(len(v) * 0.99) - 1 if len(v) > 1 else 0] * 1000, 2) for k, v in stats.times.items()},
        "worst_ms": {k: round(max(v) * 1000, 2) for k, v in stats.times.items()},
        "mean_ms": {k: round(statistics.mean(v) * 1000, 3) for k, v in stats.times.items()},
        "crashes": stats.crashes[:50],
        "crash_count": len(stats.crashes),
        "hangs": stats.hangs,
        "findings": stats.findings[:50],
        "finding_count": len(stats.findings),
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(f"fuzz run: {report['seconds']}s")
        for target in report["items"]:
            print(f"  {target:18s} {report['items'][target]:7d} items  mean {report['mean_ms'][target]:8.3f} ms  p99 {report['p99_ms'][target]:8.2f} ms  worst {report['worst_ms'][target]:8.2f} ms")
        print(f"  crashes {len(stats.crashes)}, hangs {len(stats.hangs)}, findings {len(stats.findings)}")
        for kind, items in (("CRASH", stats.crashes), ("HANG", stats.hangs), ("FINDING", stats.findings)):
            seen = set()
            for target, i, what in items:
                if (target, what) not in seen:
                    seen.add((target, what))
                    print(f"  {kind} {target} item {i}: {what}")
    return 1 if stats.crashes or stats.hangs else 0


if __name__ == "__main__":
    sys.exit(main())
