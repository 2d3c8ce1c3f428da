"""Record the screen corpus from the real Claude Code binary.

    python -m tests.harness.record                    # the pinned version, into snapshots/panes/claude-<version>/
    python -m tests.harness.record --version 2.1.160  # another version (npm-installed into the test cache)
    python -m tests.harness.record --only permission_bash --sizes 80x24

Each scenario of ``scenarios.py`` is played at every size in every renderer
the version has (``alt``: the full-screen renderer on the alternate screen;
``inline``: the classic one; see ``versions.py``), each in its own private
tmux server against its own scripted API.  For every screen three files are written
next to each other::

    <renderer>/<W>x<H>/<scenario>.ansi   capture-pane -p -e (colours kept)
    <renderer>/<W>x<H>/<scenario>.txt    the same capture without escapes
    <renderer>/<W>x<H>/<scenario>.json   size, cursor, alternate_on, title,
                                         command, and the expected observation

Nothing in the corpus is written by hand: rerun this after a Claude upgrade.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .claude import find_claude
from .fake_api import FakeAnthropicAPI
from .recording import Job, pane_record, parse_size, play, record_all, write_screen
from .recording import plain_text as plain_text  # re-exported: the corpus tests read screens with it
from .scenarios import BY_NAME, EXTRA, SCENARIOS, Scenario
from .session import ClaudeSession
from .tmux import temp_server
from .versions import CLAUDE_VERSION, EVERY, PARTIAL, renderers

REPO = Path(__file__).resolve().parents[2]
PANES = REPO / "snapshots" / "panes"
SIZES = ((80, 24), (120, 40), (200, 50))
RENDERERS = ("alt", "inline")


def corpus_dir(version: str = CLAUDE_VERSION) -> Path:
    return PANES / f"claude-{version}"


def planned(version: str) -> list[tuple[Scenario, int, int, str]]:
    """Every screen the corpus holds for ``version``: (scenario, width, height, renderer).

    Each scenario that applies to the version at its sizes (default the
    standard ``SIZES``) in every renderer the version has, then the ``EXTRA``
    screens (short panes where a menu scrolls, odd sizes).  A version
    recorded in part (``versions.PARTIAL``): only its own list.
    """
    has = renderers(version)
    if version in PARTIAL:
        every = tuple(sc.name for sc in SCENARIOS)
        return [
            (BY_NAME[n], w, h, r)
            for names, sizes, only in PARTIAL[version]
            for n in (every if names == (EVERY,) else names)
            if BY_NAME[n].applies_to(version)
            for (w, h) in sizes
            for r in only
            if r in has
        ]
    screens = [(sc, w, h, r) for sc in SCENARIOS if sc.applies_to(version) for (w, h) in (sc.sizes or SIZES) for r in has]
    for extra in EXTRA:
        if version not in extra.versions:
            continue
        for name in extra.scenarios:
            sc = BY_NAME[name]
            if sc.applies_to(version):
                screens += [(sc, w, h, r) for (w, h) in extra.sizes for r in (extra.renderers or has) if r in has]
    seen: set[tuple[str, int, int, str]] = set()
    unique = []
    for sc, w, h, r in screens:
        if (sc.name, w, h, r) not in seen:
            seen.add((sc.name, w, h, r))
            unique.append((sc, w, h, r))
    return unique


DEFAULT_OUT = corpus_dir()


def record_one(job: Job, claude: str, out: Path) -> dict:
    """Play one scenario against the real binary and write its three files."""
    options = dict(job.scenario.session)
    files = options.pop("files", {})
    with temp_server("hs-rec-") as (root, tmux), FakeAnthropicAPI(job.scenario.script, review=job.scenario.review) as fake:
        session = ClaudeSession(
            tmux,
            fake,
            claude,
            root,
            width=job.width,
            height=job.height,
            inline=job.renderer == "inline",
            version=job.version,
            files=files,
            **options,
        )
        ansi, info = play(session, job.scenario.drive, settle=job.scenario.settle)
    meta = pane_record({"claude_version": job.version}, job.scenario.name, job.renderer, info, {"state": job.scenario.state, **job.scenario.expected})
    write_screen(out / job.renderer / f"{job.width}x{job.height}", job.scenario.name, ansi, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", choices=sorted(BY_NAME), help="record just these scenarios")
    parser.add_argument("--sizes", nargs="+", type=parse_size, metavar="WxH", help="default: the corpus's plan (each scenario's sizes and the extra ones)")
    parser.add_argument("--version", default=CLAUDE_VERSION, help=f"the Claude Code version to record (default {CLAUDE_VERSION})")
    parser.add_argument("--renderers", nargs="+", choices=RENDERERS, help="default: every renderer the version has")
    parser.add_argument("--jobs", type=int, default=4, help="sessions recorded at once (default 4)")
    parser.add_argument("--out", type=Path, help="default: snapshots/panes/claude-<version>")
    parser.add_argument("--tries", type=int, default=2, help="attempts per screen before giving up (default 2)")
    args = parser.parse_args(argv)

    version = args.version
    out = args.out or corpus_dir(version)
    has = renderers(version)
    chosen = args.renderers or list(has)
    missing = [r for r in chosen if r not in has]
    if missing:
        parser.error(f"Claude Code {version} has no {', '.join(missing)} renderer (it has: {', '.join(has)})")
    claude = find_claude(version=version)
    scenarios = [sc for sc in ([BY_NAME[n] for n in args.only] if args.only else SCENARIOS) if sc.applies_to(version)]
    if args.sizes:
        jobs = [Job(sc, w, h, r, version) for sc in scenarios for (w, h) in args.sizes for r in chosen]
    else:
        names = {sc.name for sc in scenarios}
        jobs = [Job(sc, w, h, r, version) for sc, w, h, r in planned(version) if sc.name in names and r in chosen]
    print(f"recording {len(jobs)} screens of Claude Code {version} ({claude}) into {out}", flush=True)
    return record_all(jobs, lambda job: record_one(job, claude, out), lambda job: job.label, workers=args.jobs, tries=args.tries)


if __name__ == "__main__":
    sys.exit(main())
