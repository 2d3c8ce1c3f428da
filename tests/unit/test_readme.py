"""The README's set-up is what CI runs: two commands, the second one verbatim in ``.ci/run``.

CI runs the test command written in the README, and ``.ci/smoke-wheel``
checks the first (``pipx install .``) from the built source; if either file
changes alone, a newcomer's first command is no longer the tested one.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def set_up_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    # Unindented blocks only: the optional steps after them are a list (indented).
    return [block.strip() for block in re.findall(r"^```sh\n(.*?)^```", section, flags=re.S | re.M)]


def test_the_set_up_gives_exactly_one_run_and_one_test_command():
    commands = set_up_commands()
    assert len(commands) == 2, commands
    run, test = commands
    assert run.endswith("&& headspace") and "install ." in run, run
    assert test.endswith("&& pytest"), test


def test_ci_runs_the_readmes_test_command_and_smoke_installs_the_run_command():
    run, test = set_up_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test.replace("pip install ", "pip install -q ") in ci, test
    installer = run.split()[0]
    assert f'"$venv/bin/{installer}" install' in (ROOT / ".ci" / "smoke-wheel").read_text(encoding="utf-8"), installer
