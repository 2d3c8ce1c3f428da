"""Each family's permission mode, as its command line sets it: the word for it when the screen does not say.

Claude Code 2.1.250 and later name the mode under their box (read there,
``claude/auto_mode.py``), Gemini CLI names all but its default over its box
(``gemini/screen.py``), opencode its agent in its box; Codex draws none of
it.  What the agent was started with (``--permission-mode plan``,
``--yolo``, ``--approval-mode auto_edit``, ``-a never``) is read from its
process's argv, as headspace's modes (``model.MODES``): "" when the command
line does not set it (the agent's own config then decides, which is not
read).  Pure: argv in, a word out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import CLAUDE_MODES


def _value(argv: Sequence[str], *names: str) -> str | None:
    """The value of the last ``--name value`` / ``--name=value`` / ``-n value`` in ``argv``, or None."""
    found = None
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                found = argv[i + 1]
            elif arg.startswith(name + "=") and name.startswith("--"):
                found = arg.split("=", 1)[1]
    return found


def claude_mode(argv: Sequence[str]) -> str:
    """``--permission-mode X`` (Claude's names), ``--dangerously-skip-permissions``."""
    if "--dangerously-skip-permissions" in argv:
        return "bypass"
    return CLAUDE_MODES.get(_value(argv, "--permission-mode") or "", "")


def codex_mode(argv: Sequence[str]) -> str:
    """``--dangerously-bypass-approvals-and-sandbox`` / ``--yolo``: bypass; ``--full-auto``: edits and commands in the workspace run unasked;
    ``-a never``: never asks (what its sandbox refuses fails); ``-a untrusted|on-request|on-failure``: asks."""
    if "--dangerously-bypass-approvals-and-sandbox" in argv or "--yolo" in argv:
        return "bypass"
    policy = _value(argv, "-a", "--ask-for-approval")
    if policy == "never":
        return "dont-ask"
    if "--full-auto" in argv:
        return "accept-edits"
    return "manual" if policy in ("untrusted", "on-request", "on-failure") else ""


def gemini_mode(argv: Sequence[str]) -> str:
    """``-y`` / ``--yolo``: bypass; ``--approval-mode default|auto_edit|yolo|plan``."""
    if "-y" in argv or "--yolo" in argv:
        return "bypass"
    return {"default": "manual", "auto_edit": "accept-edits", "yolo": "bypass", "plan": "plan"}.get(_value(argv, "--approval-mode") or "", "")


def opencode_mode(argv: Sequence[str]) -> str:
    """``--agent plan``: plan; any other agent asks as its own config says (not read)."""
    return "plan" if _value(argv, "--agent") == "plan" else ""


def qwen_mode(argv: Sequence[str]) -> str:
    """``-y`` / ``--yolo``: bypass; ``--approval-mode plan|default|auto-edit|auto|yolo`` (Qwen Code 0.24)."""
    if "-y" in argv or "--yolo" in argv:
        return "bypass"
    return {"default": "manual", "auto-edit": "accept-edits", "auto": "auto", "yolo": "bypass", "plan": "plan"}.get(_value(argv, "--approval-mode") or "", "")


def copilot_mode(argv: Sequence[str]) -> str:
    """``--allow-all`` / ``--yolo`` / ``--allow-all-tools``: bypass; ``--plan`` or ``--mode plan``: plan (Copilot CLI 1.0)."""
    if any(flag in argv for flag in ("--allow-all", "--yolo", "--allow-all-tools")):
        return "bypass"
    return "plan" if "--plan" in argv or _value(argv, "--mode") == "plan" else ""
