"""The grammar that decides approvals is the one the readers were proven with.

Rules read a command twice, and tree-sitter's bash grammar is one of the two
readers (rules/grammar_reader.py): a new grammar can read a command another
way, so it is pinned exactly, and the tests that prove the readers against
bash (test_shell_differential.py, test_rules_hostile.py) ran on exactly the
pinned pair.  An upgrade is a bump in pyproject.toml, this test, and those.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
DECIDES = ("tree-sitter", "tree-sitter-bash")


def pins() -> dict[str, str]:
    found = {}
    for requirement in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", requirement)
        assert match is not None, requirement
        found[match.group(1).lower()] = match.group(2)
    return found


@pytest.mark.parametrize("package", DECIDES)
def test_what_decides_an_answer_is_pinned_exactly_and_installed_at_its_pin(package: str):
    spec = pins()[package]
    assert re.fullmatch(r"==\d+(\.\d+)*", spec), f"{package} is pinned as {spec!r}: an approval may change with an upgrade nobody chose"
    assert version(package) == spec[2:], f"{package} {version(package)} is installed, {spec[2:]} is the pin the readers were proven with"


def test_the_grammar_reads_a_plain_command_as_it_did_when_proven():
    from headspace_tui.rules.grammar_reader import _parser

    tree = _parser().parse(b"git status > /dev/null && rm -f 'a b'")
    assert str(tree.root_node) == (
        "(program (list (redirected_statement body: (command name: (command_name (word)) argument: (word)) "
        "redirect: (file_redirect destination: (word))) (command name: (command_name (word)) argument: (word) argument: (raw_string))))"
    )
