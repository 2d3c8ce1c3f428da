"""``headspace new``'s arguments, the worktree it makes or refuses, and the /exit guard's reading of the input box.

The window is made on a private tmux server; ``claude`` there is a stub
script that writes down the argv it was given (what is checked here is what
headspace hands to tmux, not Claude: the live test runs the real one).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from headspace_tui.cli.main import main
from headspace_tui.detect.claude import box_text
from headspace_tui.model import AgentState, Observation
from headspace_tui.service.watching.lifecycle import LifecycleError, exit_refusal, resume_argv, state_refusal
from headspace_tui.shared.resident_place import is_held, place_of
from headspace_tui.shared.worktree import WorktreeError, add_worktree, worktree_path
from headspace_tui.tmux.server import TmuxServer
from headspace_tui.tmux.spawn import SpawnError, check_session_name, current_session
from tests.harness.git_repo import git, make_repo
from tests.harness.record import DEFAULT_OUT
from tests.harness.wait import poll


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj")


# -- the worktree ------------------------------------------------------------------------


def test_a_worktree_is_made_beside_the_repository_on_a_new_branch(repo):
    path = add_worktree(repo / ".", "feat/login")
    assert path == repo.parent / "proj-worktrees" / "feat-login" == worktree_path(repo, "feat/login")
    assert (path / "README").read_text() == "a project\n"
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feat/login"
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"  # the main tree is left as it was


def test_a_worktree_from_a_subfolder_goes_beside_the_top_of_the_repository(repo):
    (repo / "src").mkdir()
    assert add_worktree(repo / "src", "b1") == repo.parent / "proj-worktrees" / "b1"


@pytest.mark.parametrize(
    "branch,message",
    [
        ("main", "branch 'main' already exists"),
        ("bad..name", "not a valid branch name"),
        ("-f", "not a branch name"),
        ("", "not a branch name"),
    ],
)
def test_a_worktree_is_refused_before_git_changes_anything(repo, branch, message):
    before = git(repo, "worktree", "list")
    with pytest.raises(WorktreeError, match=message):
        add_worktree(repo, branch)
    assert git(repo, "worktree", "list") == before
    assert not (repo.parent / "proj-worktrees").exists()


def test_a_worktree_folder_that_exists_is_refused(repo):
    taken = repo.parent / "proj-worktrees" / "new"
    taken.mkdir(parents=True)
    (taken / "mine.txt").write_text("keep me")
    with pytest.raises(WorktreeError, match="already exists"):
        add_worktree(repo, "new")
    assert (taken / "mine.txt").read_text() == "keep me"
    assert "new" not in git(repo, "branch", "--list", "new")


def test_a_worktree_outside_git_is_refused(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match="not in a git repository"):
        add_worktree(plain, "x")
    with pytest.raises(WorktreeError, match="no such folder"):
        add_worktree(tmp_path / "missing", "x")


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def stub_claude(tmp_path: Path, monkeypatch) -> Path:
    """A ``claude`` that writes its argv and folder as JSON, then waits (a stand-in: this is about headspace's arguments).

    It waits as a process named ``claude`` (argv[0]), as the real one is
    named: ``new`` says it started only once the pane runs Claude.
    """
    folder = tmp_path / "bin"
    folder.mkdir()
    out = tmp_path / "argv.json"
    script = folder / "claude"
    script.write_text(
        f"#!/usr/bin/env python3\nimport json, os, sys, time\nopen({str(out)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}))\nos.execv('/bin/sleep', ['claude', '60'])\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    return out


def test_new_passes_everything_after_the_dashes_to_claude_verbatim(private_tmux, repo, stub_claude, capsys):
    private_tmux.new_session("base", width=80, height=24, cwd="/", command=["sleep", "60"])
    tricky = ["--model", "a b", "$(touch pwned)", ";", "a;", "x\\;", "--", "-t", "#{pane_id}", "{"]
    assert main(["-L", private_tmux.name, "new", str(repo), "--session", "base", "--", *tricky]) == 0
    line = capsys.readouterr().out
    assert line.startswith("%") and f"base:1.0: claude in {repo}" in line
    seen = poll(lambda: stub_claude.exists() and json.loads(stub_claude.read_text()), lambda v: bool(v), timeout=10)
    assert seen == {"argv": tricky, "cwd": str(repo)}
    assert not (repo / "pwned").exists()
    # A new window, detached: the session's current window is still the first one.
    assert private_tmux.run("display-message", "-p", "-t", "base", "#{window_index}").strip() == "0"


def test_new_passes_claudes_permission_mode_as_the_readme_says(private_tmux, repo, stub_claude, capsys):
    """docs/agents.md: ``headspace new -- --permission-mode plan`` starts Claude in plan mode; the options before ``--`` stay headspace's."""
    private_tmux.new_session("base", width=80, height=24, cwd="/", command=["sleep", "60"])
    assert main(["new", str(repo), "-L", private_tmux.name, "--session", "base", "--", "--permission-mode", "plan"]) == 0
    seen = poll(lambda: stub_claude.exists() and json.loads(stub_claude.read_text()), lambda v: bool(v), timeout=10)
    assert seen == {"argv": ["--permission-mode", "plan"], "cwd": str(repo)}


def test_new_in_a_worktree_makes_a_named_session_when_missing(private_tmux, repo, stub_claude, capsys):
    private_tmux.new_session("other", width=80, height=24, cwd="/", command=["sleep", "60"])
    assert main(["new", "--worktree", "try-1", "--session", "fresh", "-L", private_tmux.name, str(repo)]) == 0
    tree = repo.parent / "proj-worktrees" / "try-1"
    assert "(new worktree)" in capsys.readouterr().out
    seen = poll(lambda: stub_claude.exists() and json.loads(stub_claude.read_text()), lambda v: bool(v), timeout=10)
    assert seen == {"argv": [], "cwd": str(tree)}
    assert "fresh" in private_tmux.run("list-sessions", "-F", "#{session_name}").split()


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--worktree", "main", "--session", "base"], "branch 'main' already exists"),
        (["--session", "a:b"], "not a usable tmux session name"),
        (["--worktree", "bad..name", "--session", "base"], "not a valid branch name"),  # refused before any worktree is made
    ],
)
def test_new_refuses_in_one_line(private_tmux, repo, stub_claude, capsys, extra, message):
    private_tmux.new_session("base", width=80, height=24, cwd="/", command=["sleep", "60"])
    assert main(["new", str(repo), "-L", private_tmux.name, *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("headspace: ")
    assert private_tmux.run("list-windows", "-a", "-F", "#{window_id}").split() == ["@0"]  # nothing started
    assert not (repo.parent / "proj-worktrees").exists()


def test_outside_tmux_the_window_goes_to_the_headspace_session_started_by_the_service_as_the_palettes_new_agent(private_tmux, repo, stub_claude, capsys):
    """One engine starts agents: ``new`` asks the resident service (started here, as none ran), whose start_agent the palette uses.

    Outside tmux with no ``--session``, that path puts the window in the
    session ``headspace`` (made if missing), as the palette's New agent
    does; before, the command line refused where the palette started it.
    """
    private_tmux.new_session("base", width=80, height=24, cwd="/", command=["sleep", "60"])
    place = place_of(TmuxServer(socket_name=private_tmux.name).identity)
    assert not is_held(place)
    assert main(["new", str(repo), "-L", private_tmux.name]) == 0
    line = capsys.readouterr().out
    assert line.startswith("%") and f"headspace:0.0: claude in {repo}" in line, line
    assert "headspace" in private_tmux.run("list-sessions", "-F", "#{session_name}").split()
    assert is_held(place), "no resident service started it"
    seen = poll(lambda: stub_claude.exists() and json.loads(stub_claude.read_text()), lambda v: bool(v), timeout=10)
    assert seen == {"argv": [], "cwd": str(repo)}


def test_new_outside_git_with_a_worktree_starts_nothing(private_tmux, tmp_path, stub_claude, capsys):
    private_tmux.new_session("base", width=80, height=24, cwd="/", command=["sleep", "60"])
    assert main(["new", str(tmp_path), "--worktree", "x", "--session", "base", "-L", private_tmux.name]) == 1
    assert "not in a git repository" in capsys.readouterr().err
    assert private_tmux.run("list-windows", "-a", "-F", "#{window_id}").split() == ["@0"]


def test_inside_tmux_the_window_goes_to_the_session_of_headspace_s_own_pane(private_tmux, repo, stub_claude, capsys, monkeypatch):
    private_tmux.new_session("first", width=80, height=24, cwd="/", command=["sleep", "60"])
    mine = private_tmux.new_session("mine", width=80, height=24, cwd="/", command=["sleep", "60"])
    socket = private_tmux.run("display-message", "-p", "#{socket_path}").strip()
    server = TmuxServer(socket_name=private_tmux.name)
    mine_id = private_tmux.run("display-message", "-p", "-t", mine, "#{session_id}").strip()
    assert current_session(server, {"TMUX": f"{socket},1,0", "TMUX_PANE": mine}) == mine_id
    assert current_session(server, {"TMUX": f"{socket},1,0"}) == "$0"  # a popup: the session of the client that opened it
    assert current_session(server, {"TMUX": "/tmp/another-server,1,0", "TMUX_PANE": mine}) is None
    assert current_session(server, {}) is None

    monkeypatch.setenv("TMUX", f"{socket},1,0")
    monkeypatch.setenv("TMUX_PANE", mine)
    assert main(["new", str(repo), "-L", private_tmux.name]) == 0
    assert "mine:1.0: claude in" in capsys.readouterr().out


def test_host_needs_a_session_and_an_absolute_folder_and_no_worktree(capsys):
    for args, message in (
        (["/srv/x"], "--host needs --session"),
        (["--session", "s", "rel/dir"], "an absolute path"),
        (["--session", "s"], "an absolute path"),
        (["--session", "s", "--worktree", "b", "/srv/x"], "--worktree is not supported with --host"),
    ):
        assert main(["new", "--host", "box.invalid", *args]) == 1
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_session_names_tmux_would_change_are_refused():
    for bad in ("a.b", "a:b", "-x", "", "tab\there"):
        with pytest.raises(SpawnError):
            check_session_name(bad)
    check_session_name("work 2")


# -- the /exit guard ---------------------------------------------------------------------


def _idle_capture() -> str:
    return (DEFAULT_OUT / "alt" / "120x40" / "idle_finished.ansi").read_text()


def test_an_empty_input_box_is_empty_and_a_draft_is_not():
    ansi = _idle_capture()
    assert box_text(ansi) == ""
    lines = ansi.split("\n")
    box = max(i for i, line in enumerate(lines) if "❯" in line)
    drafted = "\n".join([*lines[:box], "\x1b[39m❯\u00a0\x1b[38;5;231mhalf a thought", *lines[box + 1 :]])
    assert box_text(drafted) == "half a thought"
    assert "holds text" in exit_refusal(Observation(AgentState.IDLE), drafted)
    assert exit_refusal(Observation(AgentState.IDLE), ansi) == ""


@pytest.mark.parametrize("state", [AgentState.WORKING, AgentState.PERMISSION, AgentState.QUESTION, AgentState.EXITED])
def test_exit_is_typed_only_at_the_input_box(state):
    assert "not waiting at its input box" in exit_refusal(Observation(state), _idle_capture())


@pytest.mark.parametrize("state", [AgentState.PERMISSION, AgentState.QUESTION, AgentState.PLAN])
def test_stop_at_a_dialog_says_a_dialog_is_open(state):
    """The true reason, in the user's words: not "a key is on its way" (issue 37)."""
    assert state_refusal(Observation(state)).startswith(f"a {state.value} dialog is open")


def test_stop_says_what_is_in_the_way_and_nothing_at_the_input_box():
    assert "interrupt it (x) first" in state_refusal(Observation(AgentState.WORKING))
    for state in (AgentState.IDLE, AgentState.INPUT, AgentState.ERROR):
        assert state_refusal(Observation(state)) == ""


def test_resume_needs_a_session_id():
    assert resume_argv("abc-123") == ["claude", "--resume", "abc-123"]
    for bad in ("", "--dangerously-skip-permissions"):
        with pytest.raises(LifecycleError):
            resume_argv(bad)
