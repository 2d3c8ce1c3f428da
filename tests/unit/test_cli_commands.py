"""One module per command (cli/): main.py holds the parser and the table of commands, each carried out in a module of its own.

Every subcommand the parser knows is in the table, each entry names a
function of its module, and main.py carries out none itself; a command's
module is imported only when it runs (the popup's launcher pays for none).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
from pathlib import Path

from headspace_tui.cli import main


def _subcommands() -> set[str]:
    parser = main.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_every_subcommand_is_carried_out_by_its_own_module():
    assert _subcommands() == set(main.COMMANDS), sorted(_subcommands() ^ set(main.COMMANDS))
    for command, (where, name) in main.COMMANDS.items():
        module = importlib.import_module(f"headspace_tui.cli.{where}")
        assert callable(getattr(module, name, None)), f"{command}: no {name} in cli/{where}.py"
        assert where != "main"
    tree = ast.parse(Path(main.__file__).read_text())
    own = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("cmd_")]
    assert own == [], f"main.py carries out commands itself: {own}"


def test_the_entry_point_loads_no_commands_module_but_the_one_it_runs():
    code = "import sys, headspace_tui.cli.main; print(' '.join(m for m in sys.modules if m.startswith('headspace_tui.cli.')))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.split())
    assert "headspace_tui.cli.main" in loaded, "the import did not run: this test reads nothing"
    others = {f"headspace_tui.cli.{where}" for where, _ in main.COMMANDS.values()} - {"headspace_tui.cli.send"}  # send: --option's parser type
    assert loaded & others == set(), sorted(loaded & others)


def test_a_librarys_warning_never_reaches_the_terminal_under_a_commands_own_lines():
    """``status`` of a host without python3 printed asyncio's "Loop … that handles pid … is closed" (an ssh child reaped
    after the look's loop had ended) above its one line: Python's last-resort handler wrote it to stderr.  In a process
    of its own (pytest's log capture would stand in for the last resort), with the command replaced by one that logs."""
    script = """
import logging, sys
from headspace_tui.cli import main, status

def look(args):
    logging.getLogger("asyncio").warning("Loop %r that handles pid %r is closed", "<loop>", 8404)
    logging.getLogger("headspace_tui.service").warning("a warning of ours, for the log")
    print("headspace: box: python3 is not installed there", file=sys.stderr)
    return 1

status.cmd_status = look
sys.exit(main.main(["status"]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == "headspace: box: python3 is not installed there\n", done.stderr
