"""What a baseline of an agent's work tree costs: time and bytes, for a repository of N files (changes/snapshot.py).

    python benchmarks/snapshot_cost.py [--files 10000] [--runs 5] [--json]

Builds a git repository of ``--files`` small source-like files (about 2 KB
each, in folders of 100), committed, in a temporary folder; then measures,
each ``--runs`` times (median reported):

* the first snapshot (a copy of the index, ``git add -A`` that finds
  nothing changed, ``write-tree``) and the bytes it wrote to headspace's
  store;
* a snapshot after the agent changed 20 files and added 5, and the bytes
  that one wrote;
* the diff of the two trees, and parsing it into the model.

Nothing here touches a repository of the user's; the store is in the same
temporary folder.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from headspace_tui.changes.snapshot import diff_text, snapshot
from headspace_tui.changes.unified import parse

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}


def du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build(repo: Path, files: int) -> None:
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=ENV, check=True)
    for n in range(files):
        folder = repo / f"pkg{n // 100:03d}"
        folder.mkdir(exist_ok=True)
        body = "".join(f"def function_{n}_{i}(value):\n    return value * {i} + {n}\n\n" for i in range(45))
        (folder / f"module_{n}.py").write_text(body)
    subprocess.run(["git", "add", "-A"], cwd=repo, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=repo, env=ENV, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    first_t, first_b, second_t, second_b, diff_t, parse_t = [], [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="hs-snap-bench-") as tmp:
        base = Path(tmp)
        repo = base / "repo"
        began = time.monotonic()
        build(repo, args.files)
        built = time.monotonic() - began
        repo_bytes = du(repo / ".git")
        for run in range(args.runs):
            root = base / f"store{run}"
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo, env=ENV, check=True)
            subprocess.run(["git", "clean", "-qfd"], cwd=repo, env=ENV, check=True)
            one = snapshot(str(repo), root)
            first_t.append(one.took)
            first_b.append(du(root))
            for n in range(20):
                path = repo / f"pkg{n:03d}" / f"module_{n * 100}.py"
                path.write_text(path.read_text().replace("return value", "return -value", 3))
            for n in range(5):
                (repo / f"added_{n}.py").write_text("print('new')\n" * 40)
            two = snapshot(str(repo), root)
            second_t.append(two.took)
            second_b.append(du(root) - first_b[-1])
            t = time.monotonic()
            text = diff_text(str(repo), one.tree, two.tree, root)
            diff_t.append(time.monotonic() - t)
            t = time.monotonic()
            diff = parse(text)
            parse_t.append(time.monotonic() - t)
    result = {
        "files": args.files,
        "repository_git_bytes": repo_bytes,
        "build_s": round(built, 1),
        "first_snapshot_ms": round(statistics.median(first_t) * 1000, 1),
        "first_snapshot_bytes": int(statistics.median(first_b)),
        "changed_snapshot_ms": round(statistics.median(second_t) * 1000, 1),
        "changed_snapshot_bytes": int(statistics.median(second_b)),
        "diff_ms": round(statistics.median(diff_t) * 1000, 1),
        "parse_ms": round(statistics.median(parse_t) * 1000, 1),
        "diff_summary": diff.summary(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
