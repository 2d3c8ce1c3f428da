"""How much sooner hooks tell headspace a permission is waiting than the screen alone.

    python benchmarks/hooks_sooner.py --trials 15

One real Claude Code session (the pinned binary, scripted local API, private
tmux server, throwaway HOME with ``headspace hooks install``) asks a Bash
permission per trial; two monitors watch it, one with the hook spool and one
reading only the screen (``tests/harness/hooks_race.py``).  Reported: the
median and p90 of when each first said ``permission`` after the prompt was
submitted, the median gain per trial, and the share of trials the hooks
monitor was first.  On a busy machine the two paths race (Claude starts the
hook and draws the dialog within tens of milliseconds of each other), which
is why this is measured here and not asserted in the tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.harness.claude import find_claude  # noqa: E402
from tests.harness.fake_api import FakeAnthropicAPI  # noqa: E402
from tests.harness.hooks_race import install_hooks, race, script  # noqa: E402
from tests.harness.session import ClaudeSession  # noqa: E402
from tests.harness.tmux import PrivateTmux  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    claude = find_claude()
    root = Path(tempfile.mkdtemp(prefix="hs-bench-hooks-"))
    tmux = PrivateTmux({"PATH": "/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"})
    try:
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        with FakeAnthropicAPI(script(args.trials)) as fake:
            session = ClaudeSession(tmux, fake, claude, root / "agent", name="agent", extra_env={"XDG_RUNTIME_DIR": str(runtime)})
            try:
                session.start_shell()
                install_hooks(session)
                session.launch()
                trials = race(session, tmux.name, runtime, root / "no-claude-config", args.trials)
            finally:
                session.close()
    finally:
        tmux.close()
        shutil.rmtree(root, ignore_errors=True)
    done = [t for t in trials if t.hooks is not None and t.screen is not None]
    hooks = [t.hooks * 1000 for t in done]  # type: ignore[operator]
    screen = [t.screen * 1000 for t in done]  # type: ignore[operator]
    gains = [s - h for h, s in zip(hooks, screen, strict=True)]
    summary = {
        "trials": len(done),
        "hooks_p50_ms": round(statistics.median(hooks)),
        "hooks_p90_ms": round(percentile(hooks, 0.9)),
        "screen_p50_ms": round(statistics.median(screen)),
        "screen_p90_ms": round(percentile(screen, 0.9)),
        "gain_p50_ms": round(statistics.median(gains)),
        "hooks_first": f"{sum(g > 0 for g in gains)}/{len(gains)}",
        "hook_path_p50_ms": round(statistics.median([(t.hook_arrived - t.hook_started) * 1000 for t in done if t.hook_arrived and t.hook_started])),
    }
    print(json.dumps(summary) if args.json else ", ".join(f"{k}: {v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
