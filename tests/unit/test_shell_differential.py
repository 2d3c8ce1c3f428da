"""The rules read a command as bash does: wherever the readers read a text plainly, bash's own reading is the same.

A fixed-seed sample of generated shell text (words, quotes, escapes,
continuations, comments, every redirection form, operators, control and
non-ASCII characters, long lines: tests/harness/shell_text.py, and texts
at the edge of what the readers accept) and the hostile corpus.  Bash's
reading comes from bash itself, printing the parse of a function it never
calls, in a sandbox where nothing real is reachable
(tests/harness/bash_oracle.py).  The long run is
benchmarks/shell_differential.py.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.harness.bash_oracle import BashOracle
from tests.harness.differential import compare, generated

SEED, COUNT = 65, 20_000
CORPUS = Path(__file__).parent.parent / "data" / "rules" / "hostile.toml"


@pytest.fixture(scope="module")
def oracle() -> BashOracle:
    return BashOracle()


def test_wherever_the_rules_read_a_generated_command_bash_reads_it_the_same(oracle: BashOracle):
    tally = compare(generated(SEED, COUNT), oracle)
    print(f"generated {tally.generated}, read plainly {tally.read}, agreed {tally.agreed}, disagreements {len(tally.disagreements)}")
    assert tally.read >= 1_500, "the sample must hold enough texts the readers read for the check to mean anything"
    assert tally.disagreements == []


def test_the_corpus_the_rules_still_read_is_read_as_bash_reads_it(oracle: BashOracle):
    data = tomllib.loads(CORPUS.read_text(encoding="utf-8"))
    texts = [case["command"] for case in (*data["case"], *data["allowed"]) if "command" in case]
    tally = compare(texts, oracle)
    assert tally.read >= 10 and tally.disagreements == []
