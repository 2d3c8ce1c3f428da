"""The long run of the differential check: the rules' reading of generated shell text against bash's own.

    python benchmarks/shell_differential.py --seeds 50 --count 20000

For each seed, ``--count`` texts (tests/harness/differential.py: the broad
generator and texts at the edge of what the rules read); every text the
rules' readers read plainly goes to bash in its sandbox (``declare -f`` of
a function never called), and the two readings are compared.  Prints the
texts generated, read, agreed and every disagreement (there must be none).
Not part of the tests (the CI sample is tests/unit/test_shell_differential.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.harness.bash_oracle import BashOracle  # noqa: E402
from tests.harness.differential import Tally, compare, generated  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="how many seeds (each its own batch)")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--count", type=int, default=20_000, help="texts per seed")
    args = parser.parse_args()
    oracle, tally, began = BashOracle(), Tally(), time.monotonic()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        compare(generated(seed, args.count), oracle, tally)
        if not tally.read:
            print("the rules' readers read none of the texts (is tree-sitter's bash grammar installed?): nothing was compared")
            return 2
        print(f"seed {seed}: generated {tally.generated}, read {tally.read}, agreed {tally.agreed}, disagreements {len(tally.disagreements)}", flush=True)
    for text, ours, theirs in tally.disagreements[:50]:
        print(f"DISAGREE {text!r}\n  ours: {ours}\n  bash: {theirs}")
    print(f"{tally.generated} texts generated, {tally.read} read plainly by the rules, {tally.agreed} read alike by bash, {len(tally.disagreements)} disagreements ({time.monotonic() - began:.0f} s)")
    return 1 if tally.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
