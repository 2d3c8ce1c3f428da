"""Quill: a made-up fifth agent family with nothing but a screen reader.

It exists to show (and keep showing: tests/unit/test_fifth_family.py) what a
new family needs: this folder and one ``register(FAMILY)`` line.  It names
no other family and none of the capabilities a family may add (hooks,
status files, transcripts, a title reading, an answer channel).

Its screen: ``Allow <command>? (y) yes  (n) no`` waits for an approval,
``thinking…`` is a turn running, ``quill>`` alone is its empty prompt.
"""

from __future__ import annotations

import hashlib
import re

from headspace_tui.detect.family import Family
from headspace_tui.model import AgentState, Observation, Option, Prompt
from headspace_tui.shared.proctree import ProcessInfo

_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_ASK = re.compile(r"^Allow (?P<detail>.+)\? \(y\) yes {2}\(n\) no$")


def recognise(info: ProcessInfo) -> bool:
    """Quill's process is its binary, ``quill``."""
    return "quill" in (info.comm, info.argv0_name)


def is_command(command: str) -> bool:
    return command == "quill"


def classify(ansi: str, *, command: str | None = None, version: str | None = None) -> Observation:
    """One capture of Quill's pane."""
    if command is not None and not is_command(command):
        return Observation(AgentState.EXITED)
    lines = [line.rstrip() for line in _SGR.sub("", ansi).splitlines() if line.strip()]
    for line in reversed(lines):
        asked = _ASK.match(line)
        if asked:
            options = (Option("y", "yes"), Option("n", "no"))
            fingerprint = hashlib.sha1(line.encode()).hexdigest()[:16]
            return Observation(AgentState.PERMISSION, prompt=Prompt(kind="permission", title=line, detail=asked["detail"], options=options, fingerprint=fingerprint))
        if line.startswith("thinking"):
            return Observation(AgentState.WORKING)
    return Observation(AgentState.IDLE if lines and lines[-1] == "quill>" else AgentState.UNKNOWN)


FAMILY = Family(name="quill", label="Quill", recognise=recognise, classify=classify, is_command=is_command)
