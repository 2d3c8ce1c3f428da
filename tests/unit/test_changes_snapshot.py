"""Snapshots of a work tree with the real git: what they hold, what they leave alone, and the diff read back (changes/)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from headspace_tui.changes import model
from headspace_tui.changes.model import Diff
from headspace_tui.changes.snapshot import NotARepository, diff_text, prune, repository, snapshot, store_of
from headspace_tui.changes.unified import parse, render, stat
from tests.harness.gitrepo import GIT_ENV, dot_git, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "a.txt").write_text("one\ntwo\nthree\n")
    (folder / ".gitignore").write_text("build/\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "first")
    return folder


def test_a_snapshot_holds_tracked_untracked_and_staged_work_but_not_ignored_files_and_writes_nothing_of_the_users(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    git(repo, "add", "a.txt")  # staged
    (repo / "a.txt").write_text("one\nTWO\nthree\nfour\n")  # and changed again
    (repo / "new.txt").write_text("untracked\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored\n")
    git(repo, "stash", "list")
    before = dot_git(repo)
    first = snapshot(str(repo / "build"), root)  # from any folder inside the work tree
    (repo / "b.txt").write_text("bee\n")
    second = snapshot(str(repo), root)
    assert dot_git(repo) == before, "a snapshot wrote into the user's .git"
    diff = parse(diff_text(str(repo), first.tree, second.tree, root))
    assert [(f.path, f.status, f.added, f.removed) for f in diff.files] == [("b.txt", "added", 1, 0)]
    ours = {"GIT_OBJECT_DIRECTORY": str(store_of(first.repository, root) / "objects"), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(repo / ".git" / "objects")}
    shown = subprocess.run(["git", "ls-tree", "-r", "--name-only", first.tree], cwd=repo, env={**os.environ, **GIT_ENV, **ours}, capture_output=True, text=True, check=True).stdout.split()
    assert shown == [".gitignore", "a.txt", "new.txt"]  # the ignored build/ is not the agent's work
    assert git(repo, "status", "--porcelain") == "MM a.txt\n?? b.txt\n?? new.txt\n"  # the user's index as it was


def test_a_linked_work_tree_has_its_own_snapshot_in_the_repositorys_one_store(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    (linked / "a.txt").write_text("side\n")
    here, there = snapshot(str(repo), root), snapshot(str(linked), root)
    assert here.tree != there.tree
    assert store_of(here.repository, root) == store_of(there.repository, root)
    assert repository(str(linked)).top == str(linked)


def test_a_folder_outside_git_gets_a_baseline_of_its_own_and_nothing_is_written_into_it(tmp_path: Path):
    plain, root = tmp_path / "plain", tmp_path / "stores"
    (plain / "sub").mkdir(parents=True)
    (plain / "notes.txt").write_text("one\n")
    (plain / "sub" / "keep.txt").write_text("kept\n")
    before = sorted(p.relative_to(plain) for p in plain.rglob("*"))
    first = snapshot(str(plain), root)
    assert first.repository.plain and sorted(p.relative_to(plain) for p in plain.rglob("*")) == before  # no .git, no index, nothing
    (plain / "notes.txt").write_text("one\ntwo\n")
    (plain / "made.txt").write_text("new\n")
    (plain / "sub" / "keep.txt").unlink()
    second = snapshot(str(plain), root)
    diff = parse(diff_text(str(plain), first.tree, second.tree, root))
    assert {(f.path, f.status) for f in diff.files} == {("notes.txt", "modified"), ("made.txt", "added"), ("sub/keep.txt", "deleted")}
    assert snapshot(str(plain), root).tree == second.tree  # nothing changed since: the same tree
    assert store_of(first.repository, root).parent == root and not (plain / ".git").exists()


def test_a_folder_outside_git_too_large_for_a_baseline_says_so(tmp_path: Path, monkeypatch):
    from headspace_tui.changes import snapshot as snapshots

    plain = tmp_path / "home"
    plain.mkdir()
    for i in range(6):
        (plain / f"f{i}.txt").write_text("x\n")
    monkeypatch.setattr(snapshots, "PLAIN_FILES", 5)
    with pytest.raises(NotARepository, match=r"not a git repository, and too large for a baseline of its own \(over 5 files\)"):
        snapshot(str(plain), tmp_path / "stores")


def test_a_stores_own_folder_inside_a_plain_folder_is_left_out_of_its_snapshot(tmp_path: Path):
    home = tmp_path / "home"
    root = home / ".local" / "share" / "headspace" / "changes"  # an agent run in the home folder: our stores are inside it
    home.mkdir()
    (home / "a.txt").write_text("a\n")
    first = snapshot(str(home), root)
    second = snapshot(str(home), root)
    assert first.tree == second.tree  # the store written by the first snapshot is not in the second
    listed = git(home, "ls-tree", "-r", "--name-only", second.tree, env={"GIT_DIR": first.repository.git_dir}).split()
    assert listed == ["a.txt"]


def test_folders_that_cannot_be_snapshotted_say_so(tmp_path: Path):
    with pytest.raises(NotARepository, match="gone"):
        snapshot(str(tmp_path / "missing"), tmp_path / "stores")
    bare = tmp_path / "bare"
    bare.mkdir()
    git(bare, "init", "-q", "--bare")
    with pytest.raises(NotARepository, match="not a git repository"):
        snapshot(str(bare), tmp_path / "stores")


def test_hostile_names_and_contents_come_back_as_data(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    for name in ("tab\there.txt", 'quote"d.txt', "ünï cödé.txt", "[b]markup[_b].txt", "back\\slash.txt", "esc\x1b]52;c;x\x07.txt"):
        (repo / name).write_text("line with \x1b[31mred\x1b[0m and [b]markup[/b]\n")
    second = snapshot(str(repo), root)
    diff = parse(diff_text(str(repo), first.tree, second.tree, root))
    assert sorted(f.path for f in diff.files) == sorted(["tab\there.txt", 'quote"d.txt', "ünï cödé.txt", "[b]markup[_b].txt", "back\\slash.txt", "esc\x1b]52;c;x\x07.txt"])
    assert all(f.hunks[0].lines[0].text == "line with \x1b[31mred\x1b[0m and [b]markup[/b]" for f in diff.files)  # kept as written: front ends clean it


def test_a_large_change_is_capped_and_counted_not_dropped(repo: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(model, "MAX_FILES", 3)
    monkeypatch.setattr(model, "MAX_LINES", 10)
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    for n in range(5):
        (repo / f"f{n}.txt").write_text("".join(f"line {i}\n" for i in range(8)))
    diff = parse(diff_text(str(repo), first.tree, snapshot(str(repo), root).tree, root))
    assert diff.added == 40 and diff.file_count == 5 and len(diff.files) == 3 and diff.more_files == 2
    assert sum(len(h.lines) for f in diff.files for h in f.hunks) == 10 and diff.more_lines == 14
    assert diff.summary() == "+40 −0 · 5 files"
    assert "… 2 more files" in render(diff) and "… 6 more lines" in render(diff)
    assert stat(diff).splitlines()[-1] == "+40 −0 · 5 files"


def test_renames_deletions_and_binary_files(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    (repo / "long.txt").write_text("".join(f"same line {i}\n" for i in range(20)))
    (repo / "gone.txt").write_text("bye\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    first = snapshot(str(repo), root)
    (repo / "long.txt").rename(repo / "moved.txt")
    (repo / "gone.txt").unlink()
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02changed binary")
    (repo / "new.bin").write_bytes(b"\x00new")
    diff = parse(diff_text(str(repo), first.tree, snapshot(str(repo), root).tree, root))
    kinds = {f.path: (f.status, f.old_path, len(f.hunks)) for f in diff.files}
    assert kinds == {"blob.bin": ("binary", "", 0), "new.bin": ("added", "", 0), "gone.txt": ("deleted", "", 1), "moved.txt": ("renamed", "long.txt", 0)}


def test_the_wire_form_round_trips_and_refuses_what_is_not_a_diff(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    (repo / "a.txt").write_text("one\n2\nthree\n")
    diff = parse(diff_text(str(repo), first.tree, snapshot(str(repo), root).tree, root), note="this turn")
    assert Diff.from_dict(diff.to_dict()) == diff
    for bad in ([], {"files": {}}, {"files": [1]}, {"files": [{"hunks": [{"lines": [["x", "", 0, 0]]}]}]}):
        with pytest.raises(ValueError):
            Diff.from_dict(bad)


def test_stores_unused_for_a_week_are_pruned(tmp_path: Path, repo: Path):
    root = tmp_path / "stores"
    snap = snapshot(str(repo), root)
    store = store_of(snap.repository, root)
    assert prune(root, now=store.stat().st_mtime + 3600) == 0 and store.exists()
    assert prune(root, now=store.stat().st_mtime + 8 * 86400) == 1 and not store.exists()
    with pytest.raises(RuntimeError, match="removed"):
        diff_text(str(repo), snap.tree, snap.tree, root)


def test_no_program_of_the_users_runs_hooks_filters_or_fsmonitor(repo: Path, tmp_path: Path):
    """git add would run the repository's post-index-change hook and every clean filter (git-lfs, git-crypt): none may run."""
    marker = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n")
    hook.chmod(0o755)
    git(repo, "config", "filter.mark.clean", f"sh -c 'echo filter >> {marker}; cat'")
    git(repo, "config", "filter.mark.required", "true")
    git(repo, "config", "core.fsmonitor", f"sh -c 'echo fsmonitor >> {marker}'")
    (repo / ".gitattributes").write_text("*.txt filter=mark\n")
    (repo / "b.txt").write_text("filtered?\n")
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    (repo / "c.txt").write_text("more\n")
    second = snapshot(str(repo), root)
    assert not marker.exists(), marker.read_text()
    assert [f.path for f in parse(diff_text(str(repo), first.tree, second.tree, root)).files] == ["c.txt"]


def test_a_file_git_cannot_read_is_left_out_and_the_rest_is_kept(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    os.mkfifo(repo / "pipe.txt")  # git cannot add a FIFO
    (repo / "a.txt").write_text("one\nTWO\nthree\n")
    second = snapshot(str(repo), root)
    assert [f.path for f in parse(diff_text(str(repo), first.tree, second.tree, root)).files] == ["a.txt"]


def test_big_untracked_files_and_the_store_itself_are_left_out_and_blank_lines_keep_their_numbers(repo: Path, tmp_path: Path, monkeypatch):
    from headspace_tui.changes import snapshot as snapshots

    monkeypatch.setattr(snapshots, "UNTRACKED_CAP", 1000)
    root = repo / ".local" / "share" / "headspace" / "changes"  # a dotfiles repository at $HOME holds the store
    first = snapshot(str(repo), root)
    (repo / "dump.bin").write_bytes(b"x" * 5000)
    (repo / "small.txt").write_text("small\n")
    git(repo, "config", "diff.suppressBlankEmpty", "true")
    (repo / "a.txt").write_text("one\n\ntwo\nthree\nFOUR\n")
    second = snapshot(str(repo), root)
    assert second.left_out == 1
    diff = parse(diff_text(str(repo), first.tree, second.tree, root))
    assert sorted(f.path for f in diff.files) == ["a.txt", "small.txt"]  # no dump.bin, nothing of .local/
    a = next(f for f in diff.files if f.path == "a.txt")
    assert [(line.kind, line.text, line.new) for h in a.hunks for line in h.lines if line.kind == "+"] == [("+", "", 2), ("+", "FOUR", 5)]


def test_a_name_with_a_newline_cannot_forge_a_header_of_the_printed_diff(repo: Path, tmp_path: Path):
    root = tmp_path / "stores"
    first = snapshot(str(repo), root)
    (repo / "evil\n+++ forged").write_text("x\n")
    diff = parse(diff_text(str(repo), first.tree, snapshot(str(repo), root).tree, root))
    assert [f.path for f in diff.files] == ["evil\n+++ forged"]
    printed = render(diff).splitlines()
    assert printed[0] == 'diff --git "a/evil\\n+++ forged" "b/evil\\n+++ forged"', printed
    assert not any(line.startswith("+++ forged") for line in printed)
