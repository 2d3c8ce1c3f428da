"""The release canary: a new agent release checked against headspace's readers in one command.

    python -m benchmarks.canary claude 2.1.332
    python -m benchmarks.canary codex latest --sizes 80x24 150x45
    python -m benchmarks.canary opencode 1.18.33 --add     # keep its screens in the corpus

It installs that release into the tests' cache (npm), records the family's
standard scenario grid from the real binary against its scripted API (the
same recorders that made the corpus: ``tests/harness/record*.py``) at two
sizes, reads every screen with the reader headspace ships (the pane's
command and title given, as the live monitor has them), and prints each
screen that reads differently from its scenario's known state, with what
was read and why.  Exit 0: every screen read as labelled; 1: a difference
(or a screen that could not be recorded); 2: the release could not be
installed.

What to do with a difference is in docs/testing.md ("A new release, the day it
ships").  A difference is either a change in what the release draws (a new
option, a renamed footer: fix the reader by structure, then ``--add`` the
screens to the corpus so it stays fixed) or a scenario the release plays
differently (a label to look at, not a reader to change).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from headspace_tui.detect.families import family_named  # noqa: E402
from headspace_tui.detect.words import FamilyWords, release_key  # noqa: E402
from headspace_tui.model import AgentState  # noqa: E402
from tests.harness import claude, codex_agent, copilot_agent, gemini_agent, opencode_agent, qwen_agent  # noqa: E402
from tests.harness.accuracy import problems  # noqa: E402
from tests.harness.recording import plain_text  # noqa: E402

PANES = REPO / "snapshots" / "panes"
SIZES = ("80x24", "150x45")


@dataclass(frozen=True)
class Family:
    """One agent family as the canary drives it: its npm package, its recorder, and how it is named in the corpus."""

    name: str  # headspace's family name (``classify --agent``)
    title: str  # how people call it
    package: str  # the npm package a release ships as
    recorder: str  # the module whose ``main(argv)`` records the grid
    extra: tuple[str, ...] = ()  # arguments that recorder needs to install a missing release
    head: tuple[str, ...] = ()  # arguments before the others (a recorder of several families: which one)


FAMILIES = {
    "claude": Family("claude", "Claude Code", claude.NPM_PACKAGE, "tests.harness.record"),
    "codex": Family("codex", "Codex CLI", codex_agent.NPM_PACKAGE, "tests.harness.record_codex"),
    "gemini": Family("gemini", "Gemini CLI", gemini_agent.NPM_PACKAGE, "tests.harness.record_gemini"),
    "opencode": Family("opencode", "opencode", opencode_agent.NPM_PACKAGE, "tests.harness.record_opencode", ("--install",)),
    "copilot": Family("copilot", "GitHub Copilot CLI", copilot_agent.NPM_PACKAGE, "tests.harness.record_chat_agents", head=("copilot",)),
    "qwen": Family("qwen", "Qwen Code", qwen_agent.NPM_PACKAGE, "tests.harness.record_chat_agents", head=("qwen",)),
}


def newest(package: str) -> str:
    """The version npm calls ``latest`` for ``package``."""
    done = subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True, timeout=120)
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        raise SystemExit(f"canary: npm cannot tell {package}'s newest version: {done.stderr.strip()[-300:]}")
    return version


def record(family: Family, version: str, out: Path, sizes: list[str], jobs: int, only: list[str] | None) -> int:
    """Record the grid into ``out`` with the family's own recorder; its exit code (1: some screen failed)."""
    main: Callable[[list[str]], int] = importlib.import_module(family.recorder).main
    argv = [*family.head, "--version", version, "--out", str(out), "--sizes", *sizes, "--jobs", str(jobs), *family.extra]
    if only:
        argv += ["--only", *only]
    return main(argv)


@dataclass(frozen=True)
class Reading:
    screen: str  # renderer/WxH/scenario
    expected: str
    read: str
    problems: tuple[str, ...]
    why: tuple[str, ...]

    @property
    def missed_you(self) -> bool:
        """A screen that needs the user read as one that does not: the worst kind of difference."""
        return AgentState(self.expected).needs_you and not AgentState(self.read).needs_you


def read_all(family: Family, out: Path) -> list[Reading]:
    """Every recorded screen under ``out`` read as the live monitor reads it, against its label."""
    reader = family_named(family.name)
    readings = []
    for meta_path in sorted(out.glob("*/*/*.json")):
        meta = json.loads(meta_path.read_text())
        ansi = meta_path.with_suffix(".ansi").read_text()
        version = meta.get("claude_version") or meta.get("version")
        seen = reader.read(ansi, command=meta.get("pane_command"), version=version, title=meta.get("pane_title") or "")
        found = problems(seen, meta["expected"], plain_text(ansi))
        readings.append(
            Reading(
                "/".join(meta_path.relative_to(out).with_suffix("").parts),
                meta["expected"]["state"],
                seen.state.value,
                tuple(found),
                tuple(str(e) for e in seen.evidence),
            )
        )
    return readings


def words_folder(family: Family) -> Path | None:
    """The family's words files (detect/<family>/words/), for a family whose screen words are data; None for one whose are code."""
    folder = REPO / "headspace_tui" / "detect" / family.name / "words"
    return folder if any(folder.glob("*.toml")) else None


def renamed_words(family: Family, version: str, out: Path) -> list[tuple[str, str]] | None:
    """The words of the release's words file that the newest corpus release shows and this release shows on none of its screens.

    Those are what a release that only renamed words changed: a data change.  None: the family's words are code, or
    there is no earlier corpus to hold them against.
    """
    folder = words_folder(family)
    corpora = sorted((p for p in PANES.glob(f"{family.name}-*") if p.name != f"{family.name}-{version}"), key=lambda p: release_key(p.name.split("-", 1)[1]))
    if folder is None or not corpora:
        return None

    def shown(where: Path) -> str:
        return "\n".join(" ".join(plain_text(p.read_text()).split()) for p in where.glob("*/*/*.ansi"))

    before, now = shown(corpora[-1]), shown(out)
    # A mark of a character or two (">", "●") is on every screen and in any text: not a word a release renames.
    return [(name, word) for name, word in FamilyWords(folder).of(version).every_word() if len(word) > 2 and word in before and word not in now]


def kind_of_change(family: Family, version: str, out: Path, readings: list[Reading]) -> str:
    """What a release whose screens read differently needs: new words in the family's data file, or code (one line)."""
    renamed = renamed_words(family, version, out)
    if renamed is None:
        return "its screen words are in its reader's code: a difference is a code change"
    if renamed:
        listed = ", ".join(f"{name} {word!r}" for name, word in renamed[:8])
        return f"a words change may do (detect/{family.name}/words/): on the last release's screens and on none of this one's: {listed}"
    return "every word the last release showed is still shown: the screens' shape changed, a code change"


def report(family: Family, version: str, readings: list[Reading], recorded: int, change: str = "") -> str:
    wrong = [r for r in readings if r.problems]
    lines = [f"{family.title} {version}: {len(readings)} screens recorded, {len(readings) - len(wrong)} read as labelled"]
    if recorded != 0:
        lines.append("  some screens could not be recorded (above): the scenario may play differently on this release")
    for r in wrong:
        mark = "MISSED" if r.missed_you else "DIFF  "
        lines.append(f"{mark} {r.screen}: {'; '.join(r.problems)}")
        lines += [f"         why: {why}" for why in r.why[:3]]
    if wrong and change:
        lines.append(f"what it needs: {change}")
    if wrong:
        lines.append("what to do with a difference: docs/testing.md, 'A new release, the day it ships'")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.canary", description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument("version", help="the release to check (X.Y.Z), or 'latest' for npm's newest")
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), metavar="WxH", help=f"default: {' '.join(SIZES)}")
    parser.add_argument("--jobs", type=int, default=2, help="screens recorded at once (default 2)")
    parser.add_argument("--only", nargs="+", metavar="SCENARIO", help="just these scenarios")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="record into DIR and keep it (default: a temporary folder)")
    parser.add_argument("--add", action="store_true", help="then copy the screens into the corpus (snapshots/panes/<family>-<version>/)")
    parser.add_argument("--json", action="store_true", help="one JSON object per screen that read differently, then a summary object")
    args = parser.parse_args(argv)

    family = FAMILIES[args.family]
    version = newest(family.package) if args.version == "latest" else args.version
    out = args.keep or Path(tempfile.mkdtemp(prefix=f"hs-canary-{family.name}-{version}-"))
    try:
        try:
            recorded = record(family, version, out, args.sizes, args.jobs, args.only)
        except Exception as exc:  # the install's own error, in one line
            if not any(out.glob("*/*/*.json")):
                print(f"canary: {family.title} {version} could not be installed or started: {exc}", file=sys.stderr)
                return 2
            raise
        readings = read_all(family, out)
        if args.json:
            for r in readings:
                if r.problems:
                    print(json.dumps({"screen": r.screen, "expected": r.expected, "read": r.read, "problems": r.problems, "missed_you": r.missed_you, "why": r.why}))
            print(json.dumps({"family": family.name, "version": version, "screens": len(readings), "right": sum(not r.problems for r in readings), "recorded_ok": recorded == 0}))
        else:
            change = kind_of_change(family, version, out, readings) if any(r.problems for r in readings) else ""
            print(report(family, version, readings, recorded, change))
        if args.add:
            target = PANES / f"{family.name}-{version}"
            shutil.copytree(out, target, dirs_exist_ok=True)
            print(f"added to the corpus: {target.relative_to(REPO)}")
        return 0 if recorded == 0 and readings and not any(r.problems for r in readings) else 1
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
