"""The README's set-up is what CI runs: the run command and the pipx line literally, the test command verbatim.

CI runs the test command written in the README (``.ci/run``), and
``.ci/smoke-wheel`` runs the run command and the pipx line as typed, in a
fresh HOME with no virtualenv, reading them out of the README with
``set_up_line`` below; if either file changes alone, a newcomer's first
command is no longer the tested one.  (Standard library only: the smoke
imports this module without pytest.)
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Set up", 1)[1].split("\n## ", 1)[0]


def set_up_commands() -> list[str]:
    # Unindented blocks only: the optional steps after them are a list (indented).
    return [block.strip() for block in re.findall(r"^```sh\n(.*?)^```", _section(), flags=re.S | re.M)]


def set_up_line(kind: str) -> str:
    """``run``: the set-up's run command (its first block); ``pipx``: the pipx line its text gives; ``popup``: the popup key's step."""
    if kind == "run":
        return set_up_commands()[0]
    if kind == "popup":
        (line,) = [b.strip() for b in re.findall(r"^   ```sh\n(.*?)^   ```", _section(), flags=re.S | re.M) if "popup-binding" in b]
        return line
    (line,) = re.findall(r"`(pipx install \. && headspace)`", _section())
    return line


def test_the_set_up_gives_exactly_one_run_and_one_test_command():
    commands = set_up_commands()
    assert len(commands) == 2, commands
    run, test = commands
    assert "\n" not in run and run.endswith("/bin/headspace") and "install ." in run, run
    assert test.endswith("&& tests/run"), test


def test_the_run_command_needs_no_pipx_and_no_path_change_and_pipx_is_explained():
    run = set_up_line("run")
    assert run.startswith("python3 -m venv ") and "pipx" not in run and "--user" not in run, run
    section = _section()
    assert set_up_line("pipx") == "pipx install . && headspace"
    for step in ("`pipx ensurepath`", "new shell", "apt install pipx", "brew install pipx"):
        assert step in section.replace("\n", " "), step


def test_ci_runs_the_readmes_test_command_and_smoke_runs_the_set_up_lines_literally():
    run, test = set_up_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test.replace("pip install ", "pip install -q ") in ci, test
    smoke = (ROOT / ".ci" / "smoke-wheel").read_text(encoding="utf-8")
    assert "set_up_line" in smoke and "line=$(readme run)" in smoke and "line=$(readme pipx)" in smoke
    assert "pipx ensurepath" in smoke and "bash -ic" in smoke  # the new shell the README says to open
    assert '"$venv/bin/uv" -q tool install' in smoke


def test_the_popup_key_is_set_up_by_the_printed_line_and_the_smoke_presses_it():
    run, popup = set_up_line("run"), set_up_line("popup")
    installed = run.rsplit("&& ", 1)[1]  # the run command's headspace: the same one binds the key
    assert popup == f"{installed} popup-binding >> ~/.tmux.conf && tmux source-file ~/.tmux.conf", popup
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "display-popup -E -w 90% -h 90% headspace\n" not in text  # the bare name the tmux server may not find
    smoke = (ROOT / ".ci" / "smoke-wheel").read_text(encoding="utf-8")
    assert "line=$(readme popup)" in smoke and "script -qfec" in smoke


def test_the_optional_steps_are_as_many_as_the_set_up_says():
    section = _section()
    said = re.search(r"Then, once, (\w+) optional steps", section)
    assert said is not None, "the set-up no longer says how many optional steps follow"
    after = section[said.end() :]
    steps = re.findall(r"^(\d+)\. \*\*", after, flags=re.M)
    words = {"two": 2, "three": 3, "four": 4, "five": 5}
    assert steps == [str(n) for n in range(1, len(steps) + 1)] and words.get(said.group(1)) == len(steps), (said.group(0), steps)


def test_the_readme_is_for_users_and_the_rest_has_its_page():
    """The README stays short enough to read (set-up, keys, config, troubleshooting); testing, contributing and changes have their own pages."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"the README has {len(lines)} lines: move details to docs/"
    for page in ("CONTRIBUTING.md", "CHANGELOG.md"):
        assert (ROOT / page).is_file() and f"]({page})" in "\n".join(lines), page


def test_the_docs_index_lists_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md") if path.name != "README.md")
    missing = [page for page in pages if f"]({page})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"
