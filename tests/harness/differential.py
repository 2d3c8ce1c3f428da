"""The rules' reading of a command held against bash's own, for every generated text the rules would read.

Shared by the CI sample (tests/unit/test_shell_differential.py) and the
long run (benchmarks/shell_differential.py): texts from the seeded
generator (tests/harness/shell_text.py), and the hostile corpus
(tests/data/rules/hostile.toml); each the rules read plainly
(rules/shell.py's ``parse``) is given to bash in a sandbox
(tests/harness/bash_oracle.py) and the two readings must be equal: the
simple commands, their words, and every redirection with its target.
Texts the rules leave to the person need no agreement: nothing is allowed
on them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from headspace_tui.rules.shell import Unreadable, parse
from tests.harness.bash_oracle import BashOracle, is_reading, normalize_reading
from tests.harness.shell_text import generate


@dataclass
class Tally:
    generated: int = 0
    read: int = 0  # the rules' readers read it plainly (an allow could answer it)
    agreed: int = 0
    disagreements: list[tuple[str, object, object]] = field(default_factory=list)  # (text, ours, bash's)


def compare(texts: list[str], oracle: BashOracle, tally: Tally | None = None) -> Tally:
    """Read ``texts`` with the rules' readers; wherever they read one, bash's reading must be the same."""
    tally = tally or Tally()
    tally.generated += len(texts)
    ours: dict[str, object] = {}
    for text in texts:
        try:
            ours[text] = normalize_reading(parse(text).normal())
        except Unreadable:
            continue
    tally.read += len(ours)
    readable = list(ours)
    for text, theirs in zip(readable, oracle.readings(readable), strict=True):
        if is_reading(theirs) and normalize_reading(theirs) == ours[text]:
            tally.agreed += 1
        else:
            tally.disagreements.append((text, ours[text], theirs))
    return tally


def generated(seed: int, count: int) -> list[str]:
    """``count`` texts: half from the broad generator (shell_text.py), half near the edge of what the rules read (``near_plain``)."""
    rng = random.Random(seed)
    broad = generate(rng, count - count // 2)
    return broad + [near_plain(rng) for _ in range(count // 2)]


# What the readers accept, piece by piece, with the characters at its edges; and what a mutation may add.
_WORD_CHARS = "abcxyz019_./:,@%+=-~^"
_QUOTED = "ab \t\n'\"$`!\\#;&|<>(){}*?~=é\u00a0"
_OPS = [" ; ", ";", " && ", "&&", " || ", " | ", "|", " |& ", " & ", "\n", " &&\n", " |\n", "\n\n", " ;\n"]
_REDIRECTS = [">", ">>", ">|", "<", "&>", "&>>", ">&", "2>", "2>>", "1>", "0<", "2>&", "1>&", "9>", ">& ", "> ", "2> ", "< "]
_TARGETS = ["f", "out.txt", "/dev/null", "1", "2", "-", "'a b'", '"x y"', "2-", "x-", "1x", "''", "~", "=x", "#x", "a'b'", "$x"]
_MUTATIONS = "\\ \t\n#;&|<>()'\"$`*?[]{}~=!^\r\x0b\x0c\u00a0\u200b\u2028"


def _word(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.55:
        return "".join(rng.choice(_WORD_CHARS) for _ in range(rng.randint(1, 6)))
    if kind < 0.75:
        inner = "".join(rng.choice(_QUOTED.replace("'", "")) for _ in range(rng.randint(0, 5)))
        return f"'{inner}'"
    if kind < 0.92:
        inner = "".join(rng.choice(_QUOTED.replace('"', "")) for _ in range(rng.randint(0, 5)))
        return f'"{inner}"'
    return _word(rng) + _word(rng)  # a word of parts joined


def near_plain(rng: random.Random) -> str:
    """A line of simple commands of the kind the readers accept, at their edges; half of them with one character changed."""
    parts = []
    for n in range(rng.randint(1, 4)):
        words = [rng.choice(["git", "ls", "rm", "npm", "touch", "cat", "x"]), *(_word(rng) for _ in range(rng.randint(0, 4)))]
        command = " ".join(words)
        for _ in range(rng.choice([0, 0, 1, 2])):
            command += " " + rng.choice(_REDIRECTS) + rng.choice(_TARGETS)
        if rng.random() < 0.1:
            command += " # " + _word(rng)
        parts.append(command if not n else rng.choice(_OPS) + command)
    text = "".join(parts) + rng.choice(["", "", ";", " &", "\n"])
    if rng.random() < 0.5:
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(_MUTATIONS) + text[at + rng.choice([0, 0, 1]) :]
    return text
