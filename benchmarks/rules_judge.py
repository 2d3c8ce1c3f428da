"""What a rule costs per request: the shell parser and the judge, with many rules.

    python benchmarks/rules_judge.py --rules 200 --calls 2000

Loads ``--rules`` allow rules (each its own ``touch``-like command, half of
them with a project) and one deny, then judges ``--calls`` requests made of
one to four simple commands joined by ``&&``, ``;`` and ``|`` (a third fit
no rule, a tenth are expansions the parser refuses), as the service does for
each request a hook holds.  Prints the median and 95th percentile per call,
and the file's load time (its ``match`` examples are judged as it loads).
Not part of the tests.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from headspace_tui.detect.families import CLAUDE, vocabulary  # noqa: E402
from headspace_tui.rules.judge import judge  # noqa: E402
from headspace_tui.rules.model import Call  # noqa: E402
from headspace_tui.rules.rules_file import parse_rules  # noqa: E402


def rules_text(count: int) -> str:
    tables = []
    for n in range(count):
        project = f'project = "/srv/p{n % 10}"\n' if n % 2 else ""
        tables.append(
            f'[[rule]]\nid = "r{n}"\ndecision = "allow"\nhosts = ["local"]\n{project}command = "tool{n} --flag /tmp/out_{n}_*"\nttl = "1h"\nshadow = false\nmatch = ["tool{n} --flag /tmp/out_{n}_1"]\n'
        )
    tables.append('[[rule]]\nid = "no-rm"\ndecision = "deny"\nhosts = ["local"]\nprefix = ["rm", "-rf"]\npermanent = true\n')
    return "\n".join(tables)


def command(rng: random.Random, count: int) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        n = rng.randrange(count)
        kind = rng.random()
        if kind < 0.1:
            parts.append(f"echo $(tool{n})")
        elif kind < 0.33:
            parts.append(f"other{n} /tmp/x")
        else:
            parts.append(f"tool{n} --flag /tmp/out_{n}_{rng.randrange(9)}")
    joined = parts[0]
    for part in parts[1:]:
        joined += rng.choice([" && ", "; ", " | "]) + part
    return joined


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=200)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    text = rules_text(args.rules)
    began = time.perf_counter()
    loaded = parse_rules(text, tools=vocabulary())
    load_ms = (time.perf_counter() - began) * 1000
    assert not loaded.errors, loaded.errors[:3]
    rng = random.Random(7)
    times, decided = [], 0
    for _ in range(args.calls):
        call = Call(tool="Bash", command=command(rng, args.rules), host="local", cwd=f"/srv/p{rng.randrange(10)}", tools=CLAUDE.tools)
        began = time.perf_counter()
        verdict = judge(loaded.rules, call)
        times.append((time.perf_counter() - began) * 1e6)
        decided += verdict.decision is not None
    times.sort()
    print(f"{len(loaded.rules)} rules loaded (examples judged) in {load_ms:.1f} ms")
    print(f"{args.calls} calls: median {statistics.median(times):.0f} µs, p95 {times[int(len(times) * 0.95)]:.0f} µs per call; {decided} decided")


if __name__ == "__main__":
    main()
