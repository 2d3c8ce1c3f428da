"""Finding Claude Code under a pane: the pure tree walk, and reading the real /proc."""

from __future__ import annotations

import os
from pathlib import Path

from headspace_tui.detect.claude.process import find_claude
from headspace_tui.shared.proctree import ProcessInfo, ProcessTable, children, read_process_table


def table(*rows: tuple) -> ProcessTable:
    """Rows of (pid, ppid, comm, argv...)."""
    return ProcessTable.of(ProcessInfo(pid, ppid, comm, tuple(argv)) for pid, ppid, comm, *argv in rows)


TMUX_BASH = [(100, 1, "tmux: server", "tmux"), (200, 100, "bash", "-bash")]


def test_native_binary_under_the_shell():
    t = table(*TMUX_BASH, (300, 200, "claude", "claude", "--permission-mode", "default"))
    assert find_claude(200, t) == 300


def test_pane_process_itself_is_claude():
    t = table((100, 1, "tmux: server", "tmux"), (210, 100, "claude", "/usr/local/bin/claude"))
    assert find_claude(210, t) == 210


def test_native_binary_run_as_claude_exe():
    t = table(*TMUX_BASH, (300, 200, "claude.exe", "/opt/cc/bin/claude.exe"))
    assert find_claude(200, t) == 300


def test_node_running_cli_js():
    t = table(
        *TMUX_BASH,
        (300, 200, "node", "node", "/home/u/.npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.js", "--resume"),
    )
    assert find_claude(200, t) == 300


def test_bun_running_cli_js_in_a_claude_code_folder():
    t = table(*TMUX_BASH, (300, 200, "bun", "/usr/bin/bun", "/srv/claude-code-1.0/dist/cli.js"))
    assert find_claude(200, t) == 300


def test_node_running_some_other_cli_js_is_not_claude():
    t = table(*TMUX_BASH, (300, 200, "node", "node", "/srv/webpack/bin/cli.js"))
    assert find_claude(200, t) is None


def test_editor_opening_claude_cli_js_is_not_claude():
    t = table(*TMUX_BASH, (300, 200, "vim", "vim", "/lib/node_modules/@anthropic-ai/claude-code/cli.js"))
    assert find_claude(200, t) is None


def test_version_named_binary_of_the_native_installer():
    t = table(*TMUX_BASH, (300, 200, "2.1.330", "/home/u/.local/share/claude/versions/2.1.330"))
    assert find_claude(200, t) == 300


def test_version_name_in_argv0_only():
    # comm is what the kernel saw; argv[0] may differ (exec -a, or a renamed process).
    t = table(*TMUX_BASH, (300, 200, "MainThread", "/home/u/.local/share/claude/versions/2.0.14"))
    assert find_claude(200, t) == 300


def test_nested_tmux_bash_wrapper_claude_is_found_breadth_first():
    t = table(
        *TMUX_BASH,
        (300, 200, "sh", "sh", "-c", "run-agent"),
        (301, 200, "sleep", "sleep", "100"),
        (400, 300, "bash", "bash", "run-agent"),
        (500, 400, "claude", "claude"),
        (600, 500, "bash", "/bin/bash", "-c", "npm test"),  # a tool Claude runs
        (700, 600, "claude", "claude", "-p", "nested"),  # a nested claude deeper down loses
    )
    assert find_claude(200, t) == 500
    assert find_claude(100, t) == 500


def test_cycles_do_not_loop_forever():
    t = table((10, 30, "bash", "bash"), (20, 10, "bash", "bash"), (30, 20, "bash", "bash"), (40, 40, "zsh", "zsh"))
    assert find_claude(10, t) is None
    assert find_claude(40, t) is None


def test_not_found_and_unknown_root():
    t = table(*TMUX_BASH, (300, 200, "vim", "vim", "notes.md"), (301, 300, "python3", "python3", "-m", "pylsp"))
    assert find_claude(200, t) is None
    assert find_claude(99999, t) is None
    assert find_claude(200, ProcessTable()) is None


def test_children_are_direct_only_and_sorted():
    t = table(*TMUX_BASH, (302, 200, "b", "b"), (301, 200, "a", "a"), (400, 301, "c", "c"))
    assert children(200, t) == [301, 302]
    assert children(400, t) == []


def test_reads_the_real_proc_including_this_process_and_its_parent():
    t = read_process_table()
    me = t.get(os.getpid())
    assert me is not None
    assert me.ppid == os.getppid()
    assert me.argv == tuple(Path(f"/proc/{os.getpid()}/cmdline").read_bytes().rstrip(b"\0").decode().split("\0"))
    assert me.comm == Path(f"/proc/{os.getpid()}/comm").read_text().rstrip("\n")
    assert os.getppid() in t
    assert os.getpid() in children(os.getppid(), t)
    assert find_claude(os.getpid(), t) is None


def test_tolerates_odd_proc_entries(tmp_path: Path):
    """A fake /proc: a vanished process (no files), an unreadable cmdline, a comm with ") (" in it."""

    def proc(pid: int, stat: str | None, cmdline: bytes | None) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        if stat is not None:
            (d / "stat").write_text(stat)
        if cmdline is not None:
            (d / "cmdline").write_bytes(cmdline)

    proc(1, "1 (init) S 0 1 1 0", b"/sbin/init\0")
    proc(2, None, None)  # exited between listdir and open
    proc(3, "3 (we (ird) name) S 1 3 3 0", None)  # cmdline gone
    proc(4, "4 (claude) S 3 4 4 0", b"claude\0--resume\0")
    proc(5, "garbage", b"x\0")
    (tmp_path / "self").mkdir()
    t = read_process_table(str(tmp_path))
    assert sorted(t.processes) == [1, 3, 4]
    assert t.get(3).comm == "we (ird) name" and t.get(3).ppid == 1 and t.get(3).argv == ()
    assert t.get(4).argv == ("claude", "--resume")
    assert find_claude(1, t) == 4
    assert len(read_process_table(str(tmp_path / "missing"))) == 0


def test_a_process_exists_until_it_exits_and_a_zombie_counts_as_gone():
    import subprocess
    import time

    from headspace_tui.shared.proctree import process_exists

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert process_exists(child.pid)
        child.kill()
        deadline = time.monotonic() + 5
        while process_exists(child.pid):  # a zombie until reaped: already gone for us
            assert time.monotonic() < deadline, "a killed, unreaped child still counts as running"
            time.sleep(0.01)
    finally:
        child.wait()
    assert not process_exists(child.pid)


def test_the_portable_table_agrees_with_proc():
    """psutil's table (used where there is no /proc) finds the same parents, names and arguments."""
    import os

    fast, portable = read_process_table(), read_process_table(portable=True)
    me = os.getpid()
    assert portable.get(me).ppid == fast.get(me).ppid
    assert portable.get(me).argv == fast.get(me).argv
    assert portable.get(me).started and fast.get(me).started
