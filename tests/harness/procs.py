"""Processes below one of ours, read while they come and go.

A process can end between being listed and being read (a one-shot tmux command, a probe's
fork before its exec): that one is simply not there any more, never an error of the test's.
"""

from __future__ import annotations

import psutil


def name_of(proc: psutil.Process) -> str | None:
    """Its name, or None once it has ended."""
    try:
        return proc.name()
    except psutil.Error:
        return None


def named(root: int | psutil.Process, name: str, *, recursive: bool = True) -> list[psutil.Process]:
    """The processes below ``root`` called ``name`` that were still there when read."""
    parent = root if isinstance(root, psutil.Process) else psutil.Process(root)
    return [p for p in parent.children(recursive=recursive) if name_of(p) == name]
