"""Auto mode's forms on releases the main corpus does not record: the screens of ``snapshots/auto_forms/``.

    python -m benchmarks.record_auto_forms --version 2.1.317 --out snapshots/auto_forms/claude-2.1.317 \
        --sizes 80x24 130x36 72x22 --only auto_blocked_once ... auto_check_unavailable_series [--renderers alt inline]

The main corpus's auto scenarios (tests/harness/scenarios.py) with their version
lists lifted, plus the forms other releases draw: two calls blocked at once
("Did not run 2 calls", "Ran 2 shell commands ⎿ 2 actions blocked by auto mode"),
the same screens once the passing notice is gone, every try of a check that
cannot run and what follows the last one, and either gateway form even when a
short pane cuts its foot.  tests/unit/test_auto_forms.py reads every screen
recorded here as labelled.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.harness import fake_api as api  # noqa: E402
from tests.harness import scenarios as S  # noqa: E402
from tests.harness.claude import find_claude  # noqa: E402
from tests.harness.fake_api import FakeAnthropicAPI  # noqa: E402
from tests.harness.record import record_one  # noqa: E402
from tests.harness.recording import Job, pane_record, parse_size, record_all, write_screen  # noqa: E402
from tests.harness.session import READY, ClaudeSession  # noqa: E402
from tests.harness.tmux import temp_server  # noqa: E402
from tests.harness.versions import AUTO_SCREENS, renderers  # noqa: E402

SCEN = {n: dataclasses.replace(S.BY_NAME[n], versions=(), sizes=()) for n in AUTO_SCREENS}

GATEWAY_ANY = re.compile(r"ask whoever runs your gateway|ask your gateway to implement|We're changing auto mode|Auto mode can'?t check actions|Enter to continue · Esc to cancel")


def _auto_gateway_any(s: ClaudeSession) -> None:
    """Either gateway form (2.1.283's notice, 2.1.330's dialog), even when a short pane cuts its foot."""
    s.launch()
    s.submit("upload the report")
    s.wait_for(lambda scr: GATEWAY_ANY.search(" ".join(scr.split())) is not None and not READY.search(scr), timeout=45, what="an auto-mode gateway dialog or notice")


for name in ("auto_gateway_dialog", "auto_gateway_notice"):
    SCEN[name] = dataclasses.replace(SCEN[name], drive=_auto_gateway_any)

# Two flagged calls in one response: "Did not run 2 calls ⎿ 2 actions blocked by auto mode".
PARALLEL = api.parallel(
    api.flagged(api.bash(S.SECRET_POST, "Upload the env file"), S.SECRET_REASON),
    api.flagged(api.bash(S._post(2), "Upload the report"), S.POST_REASON),
)
PARALLEL_REPLY = "I did not upload either file: auto mode blocked both."


def _auto_blocked_parallel(s: ClaudeSession) -> None:
    s.launch()
    s.submit("upload the env file and the report")
    said = re.compile(r"Blocked by auto mode|denied by auto mode|blocked by auto mode", re.I)
    s.wait_for(lambda scr: said.search(scr) is not None and "auto mode blocked both" in " ".join(scr.split()) and S.turn_over(scr), what="two blocked calls and the reply")


def _auto_blocked_parallel_working(s: ClaudeSession) -> None:
    s.launch()
    s.submit("upload the env file and the report")
    said = re.compile(r"blocked by auto mode|denied by auto mode", re.I)
    s.wait_for(lambda scr: said.search(scr) is not None and S.WORKING_HINT.search(scr) is not None, what="two blocked calls in a running turn")
    time.sleep(1.2)


SCEN["auto_blocked_parallel"] = S.Scenario(
    "auto_blocked_parallel",
    "idle",
    [PARALLEL, api.text(PARALLEL_REPLY)],
    _auto_blocked_parallel,
    # What every recorded form shows of both: a count ("2 actions blocked by auto mode"), and the latest
    # block's reason in the passing notice ("2 recent blocks by auto mode · … Auto mode: <reason>").
    expected={"mode": "auto", "blocked": [{"reason": S.POST_REASON}]},
    session={"permission_mode": None},
)
SCEN["auto_blocked_parallel_working"] = S.Scenario(
    "auto_blocked_parallel_working",
    "working",
    [PARALLEL, api.text(PARALLEL_REPLY, delay=120)],
    _auto_blocked_parallel_working,
    expected={"mode": "auto", "blocked": [{"reason": S.POST_REASON}]},
    settle=False,
    session={"permission_mode": None},
)

# The same screens once the passing notice ("bash blocked by auto mode · …", "2 recent blocks …") has gone:
# only the transcript's own note is left.
NOTICE_SHOWN = re.compile(r"^\s*(?:[a-z][\w-]* blocked|\d+ recent blocks) by auto mode\b", re.M)


def _later(drive):
    def run(s: ClaudeSession) -> None:
        drive(s)
        s.wait_for(lambda scr: NOTICE_SHOWN.search(scr) is None, timeout=60, what="the passing notice gone")
        time.sleep(1.0)

    return run


SCEN["auto_blocked_once_later"] = dataclasses.replace(
    SCEN["auto_blocked_once"],
    name="auto_blocked_once_later",
    drive=_later(SCEN["auto_blocked_once"].drive),
    expected={"mode": "auto", "blocked": [{"reason": S.SECRET_REASON}]},
)
SCEN["auto_blocked_parallel_later"] = dataclasses.replace(
    SCEN["auto_blocked_parallel"],
    name="auto_blocked_parallel_later",
    drive=_later(_auto_blocked_parallel),
    expected={"mode": "auto", "blocked": [{}]},  # at least one block read (317's full-screen form names no call and no reason)
)

# Every try of the check, and what follows the last one: one session, one screen per attempt.
UNAVAILABLE_SCRIPT = [*[api.unavailable(api.bash(S._post("u"), "Upload the report"), "timeout")] * 14, api.text("Done.")]
ATTEMPT = re.compile(r"attempt (\d+)/(\d+)", re.I)
SERIES = "auto_check_unavailable_series"


def record_series(job: Job, claude: str, out: Path) -> dict:
    """auto_check_unavailable_attempt<N> for each attempt seen, then auto_check_unavailable_end (whatever follows)."""
    folder = out / job.renderer / f"{job.width}x{job.height}"
    seen: set[int] = set()
    last_meta: dict = {}
    with temp_server("hs-rec-") as (root, tmux), FakeAnthropicAPI(UNAVAILABLE_SCRIPT) as fake:
        s = ClaudeSession(tmux, fake, claude, root, width=job.width, height=job.height, inline=job.renderer == "inline", version=job.version, permission_mode=None)
        try:
            s.launch()
            s.submit("upload the report")
            deadline = time.monotonic() + 420
            quiet_since = None
            while time.monotonic() < deadline:
                scr = s.screen()
                flat = " ".join(scr.split())
                m = ATTEMPT.search(flat) if "check unavailable" in flat.lower() or "check" in flat.lower() else None
                if m and "unavailable" in flat.lower():
                    n = int(m.group(1))
                    if n not in seen:
                        seen.add(n)
                        time.sleep(0.4)
                        ansi, info = s.ansi(), s.info()
                        meta = pane_record({"claude_version": job.version}, f"auto_check_unavailable_attempt{n}", job.renderer, info, {"state": "working", "mode": "auto", "retrying": True})
                        write_screen(folder, f"auto_check_unavailable_attempt{n}", ansi, meta)
                        last_meta = meta
                        quiet_since = None
                        continue
                if S.turn_over(scr) and "unavailable" not in flat.lower() or re.search(r"Claude stopped", flat) or S.NUMBERED_MENU.search(scr):
                    quiet_since = quiet_since or time.monotonic()
                    if time.monotonic() - quiet_since > 2:
                        break
                else:
                    quiet_since = None
                time.sleep(0.1)
            s.wait_stable(quiet=0.8, timeout=4, strict=False)
            ansi, info = s.ansi(), s.info()
            if S.NUMBERED_MENU.search(s.screen()):
                # 2.1.317: no retries; a call it could not judge counts as blocked, the third stops at the pause.
                end = {"state": "permission", **S._pause_expected("u"), "blocked": [{"tool": "Bash", "detail": S._post("u")}]}
            else:
                # 2.1.331: after the last try, "… so Claude stopped. Send a message to try again": labelled as a
                # turn that gave up (like error_gave_up_*), the mode still on screen.
                end = {"state": "error", "mode": "auto", "retrying": False}
            meta = pane_record({"claude_version": job.version}, "auto_check_unavailable_end", job.renderer, info, end)
            write_screen(folder, "auto_check_unavailable_end", ansi, meta)
            (folder / "auto_check_unavailable_series.log").write_text(f"attempts seen: {sorted(seen)}; main requests: {len(fake.main_requests)}\n")
        finally:
            s.close()
    return last_meta


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--version", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sizes", nargs="+", type=parse_size, required=True)
    p.add_argument("--only", nargs="+", choices=[*SCEN, SERIES], required=True)
    p.add_argument("--renderers", nargs="+", default=None)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--tries", type=int, default=2)
    a = p.parse_args(argv)
    chosen = a.renderers or list(renderers(a.version))
    claude = find_claude(version=a.version)
    series = SERIES in a.only
    names = [n for n in a.only if n != SERIES]
    jobs = [Job(SCEN[n], w, h, r, a.version) for n in names for (w, h) in a.sizes for r in chosen]
    if series:
        fake = S.Scenario(SERIES, "working", [], lambda s: None)
        jobs += [Job(fake, w, h, r, a.version) for (w, h) in a.sizes for r in chosen]
    print(f"recording {len(jobs)} screens of Claude Code {a.version} ({claude}) into {a.out}", flush=True)

    def one(job: Job) -> dict:
        if job.scenario.name == SERIES:
            return record_series(job, claude, a.out)
        return record_one(job, claude, a.out)

    return record_all(jobs, one, lambda j: j.label, workers=a.jobs, tries=a.tries)


if __name__ == "__main__":
    sys.exit(main())
