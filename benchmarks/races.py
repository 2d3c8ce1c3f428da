"""The race suite at full length: each of issue 9's races, a hundred rounds, against live Claude.

    python benchmarks/races.py --trials 100 [--race NAME ...] [--json]

Starts its own private tmux server, scripted API and throwaway HOMEs (never
the user's tmux, ~/.claude or ~/.config), runs every round of each race
(tests/harness/races.py says what each race does and what counts as wrong),
prints one line per race: rounds, wrong, and what happened, and exits 1
when any key reached a prompt other than the one shown. The normal test
run plays three rounds of each (tests/e2e/test_races.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.harness.claude import find_claude
from tests.harness.fake_api import FakeAnthropicAPI
from tests.harness.races import RACES, Bench
from tests.harness.session import ClaudeSession
from tests.harness.tmux import PrivateTmux


def run_race(name: str, trials: int, claude: str) -> tuple[list, float]:
    root = Path(tempfile.mkdtemp(prefix="hs-races-"))
    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME")}
    for key, sub in (("XDG_RUNTIME_DIR", "run"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config"), ("HOME", "home")):
        (root / sub).mkdir(mode=0o700)
        os.environ[key] = str(root / sub)
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root / "home"), "LANG": "C.UTF-8"})
    sessions: list[ClaudeSession] = []
    started = time.monotonic()
    try:
        with FakeAnthropicAPI() as api:

            def start(script=(), *, name: str = "agent", **options) -> ClaudeSession:
                if script:
                    api.set_script(script)
                session = ClaudeSession(tmux, api, claude, root / name, name=name, **options)
                sessions.append(session)
                session.launch()
                return session

            results = RACES[name](Bench(tmux=tmux, api=api, start=start, tmp=root), trials)
    finally:
        for session in sessions:
            session.close()
        tmux.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)
    return results, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100, help="rounds per race (default 100)")
    parser.add_argument("--race", action="append", choices=sorted(RACES), help="only this race (repeatable)")
    parser.add_argument("--json", action="store_true", help="one JSON object per race")
    args = parser.parse_args()
    claude = find_claude()
    any_wrong = False
    for name in args.race or sorted(RACES):
        results, seconds = run_race(name, args.trials, claude)
        wrong = [t for t in results if t.wrong]
        any_wrong |= bool(wrong)
        outcomes = collections.Counter(t.outcome.split(" (")[0] for t in results)
        if args.json:
            print(json.dumps({"race": name, "rounds": len(results), "wrong": len(wrong), "seconds": round(seconds, 1), "outcomes": outcomes}))
        else:
            print(f"{name}: {len(results)} rounds, {len(wrong)} wrong, {seconds:.0f}s")
            for outcome, count in outcomes.most_common():
                print(f"  {count:4d}  {outcome}")
            for t in wrong:
                print(f"  WRONG round {t.n}: {t.outcome}")
        sys.stdout.flush()
    return 1 if any_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
