"""What every agent family (Claude Code, Codex CLI, Gemini CLI, opencode) tells headspace.

A family is one folder under ``detect/`` with the same parts: how its
process is recognised in a pane's process tree, its screen reader, the
version of its install, and what its pane title says.  The folder's
``__init__`` exports one ``FAMILY``; ``families.py`` registers it.
Discovery, the monitor, the guarded keys, ``status --json`` and ``classify
--agent`` go through this record, so adding a family's screen touches its
folder, its recorded screens and one registration.  The rules read each
family's calls by its own tool names (``tools``).  What still names a family
outside its folder is listed, each with why, in tests/unit/test_family_names.py,
which fails on a new one.

Beyond its screen a family may offer more, each an optional capability of
the record (None: the family has none, and the core does without): its own
status files, transcripts of its conversations, hooks that report events,
an answer channel through those hooks, a reading of its pane's title
(``with_title``), how a new one is started and resumed (``starting``).  Claude Code has all but the title; the core asks
``family.status_files``... instead of importing Claude's modules, so a family
that gains one (Gemini CLI has hooks) plugs its own in here.

Pure: no I/O beyond what ``version_of`` reads of the process's install.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..model import NO_TOOLS, Observation, Tools
from ..shared.proctree import ProcessInfo
from .session_usage import Kind


class ScreenReader(Protocol):
    """Reads one ``capture-pane -p -e`` capture of the family's pane (pure).

    ``command`` is ``#{pane_current_command}`` or the family's name when the
    process tree says the agent runs there; ``version`` its install's version
    (None: unknown, read as the newest).  Every prompt it returns carries
    options whose ``key`` is what the agent itself takes to pick them, found
    by label, and a ``fingerprint`` of the prompt's own text.
    """

    def __call__(self, ansi: str, *, command: str | None = None, version: str | None = None) -> Observation: ...


def _no_version(info: ProcessInfo, *, proc: str = "/proc") -> str | None:
    return None


def _no_box(ansi: str) -> str | None:
    return None


@dataclass(frozen=True)
class StatusFiles:
    """A family whose agent writes its own status, one file per process (Claude Code: ``<config>/sessions/<pid>.json``)."""

    folder: Callable[[Mapping[str, str]], Path]  # where, from the agent's environment (its HOME, its config dir)
    read: Callable[..., dict[int, Any]]  # (folder, cache=None) -> each process's status, by pid
    observation: Callable[..., Observation]  # (status, *, source=...) -> what one status alone says
    sources: tuple[str, ...]  # the source names those observations carry (the file's, its CLI's listing's)


@dataclass(frozen=True)
class Transcripts:
    """A family that keeps a transcript of each conversation (Claude Code: ``<config>/projects/<cwd>/<session>.jsonl``)."""

    path: Callable[[Path, str, str], Path]  # (config folder, cwd, session id) -> the transcript file
    tail: Callable[[Path], Any]  # a reader of the turns added since its last read (``read_new()``, ``opened``)


@dataclass(frozen=True)
class Hooks:
    """A family whose agent runs headspace's hook program at its events (Claude Code's settings.json hooks)."""

    settings_folder: Callable[[Mapping[str, str]], Path]  # where its hook settings live, from the agent's environment


@dataclass(frozen=True)
class AnswerChannel:
    """A family whose hook can wait for headspace's decision and answer a prompt itself (Claude Code's PermissionRequest hook).

    The channel itself (hooks/channel.py, answering/desk.py) is shared; a
    family offers it by having this record.
    """


@dataclass(frozen=True)
class HeldHook:
    """A family whose own permission hook runs away from its pane and holds the agent's dialog back until it returns (Codex CLI's, from its shared app-server).

    Such a hook names no pane or pid (the daemon's are not the asking
    agent's): its call is the agent's whose conversation record it names
    (``transcript_path``, found among the family's usage records,
    detect/usage_kinds.py), matched by folder.  Only headspace's rules answer
    it, quickly (the agent draws nothing meanwhile), and a decision carries
    no ``interrupt`` or ``updatedInput`` (the agent fails such an answer
    closed).  The hook program says it by the family's name after its wait
    (``program.py answer SECONDS NAME``, hooks/program.py).

    ``hooks_file`` says where the family keeps that hook in an environment
    (``headspace hooks install --codex`` writes it there; None: it is not
    installed by headspace), and ``wait`` how long it waits for the rules
    before the agent asks the person itself.
    """

    hooks_file: Callable[[Mapping[str, str]], Path] | None = None
    wait: int = 3  # seconds: the agent draws no dialog while its hook runs; the rules answer in milliseconds
    # The hook runs in the agent's pane as its child (Qwen Code's, Copilot CLI's): its record names that pane and a
    # process under the agent's, by which it is placed (``program.py answer N NAME pane``), not by a conversation record.
    in_pane: bool = False
    # A hooks file that is headspace's alone, in the family's own format (Copilot CLI's ``hooks/headspace.json``): its
    # content for the hook's command and wait.  None: headspace's hook joins the family's Claude-format hooks file.
    own_file: Callable[[str, int], dict[str, Any]] | None = None
    asks_trust: bool = False  # the agent runs a new hook only once you trust it (Codex asks at its next start)


@dataclass(frozen=True)
class Starting:
    """A family headspace starts in a new window, and resumes there (Claude Code: ``claude ARGS``, ``claude --resume ID``).

    ``program`` is what a person types, and what a new window that never
    runs the agent is said to have failed to start.
    """

    program: str
    resume_flag: str  # before the conversation's id: its command line's way to take a conversation up again

    def argv(self, args: Sequence[str] = ()) -> list[str]:
        """The command line of a new agent, its own arguments passed on verbatim."""
        return [self.program, *args]

    def resume(self, session_id: str) -> list[str]:
        """The command line that takes conversation ``session_id`` up again (ValueError: no usable id)."""
        if not session_id or session_id.startswith("-"):
            raise ValueError("the agent's conversation is not known (no status file yet)")
        return [self.program, self.resume_flag, session_id]


@dataclass(frozen=True)
class Family:
    """One kind of coding agent, as headspace finds, reads and answers it."""

    name: str  # "claude", "codex", "gemini", "opencode": status --json, classify --agent, the filter
    label: str  # what the table's agent column shows ("Claude", "Codex", "Gemini", "opencode")
    recognise: Callable[[ProcessInfo], bool]  # is this process the agent itself (not its shell, not a helper daemon)?
    classify: ScreenReader
    # Does ``#{pane_current_command}`` mean the agent still runs in the pane
    # (its binary, or the runtime it runs under)?  Re-checked, cheaply, right
    # before every key is sent.
    is_command: Callable[[str], bool]
    version_of: Callable[..., str | None] = _no_version  # (info, *, proc="/proc") -> its install's version
    # The permission mode its command line sets (detect/modes.py), "" when it sets none: the row's word until the screen says.
    mode_of: Callable[[Sequence[str]], str] = lambda argv: ""
    # What the agent's input box holds now ("" empty, None: no box on screen,
    # or the family cannot tell): a typed line has been submitted once its box
    # no longer holds it.
    box_text: Callable[[str], str | None] = _no_box
    # An agent that takes an Enter within ~20 ms of typed text as part of a
    # paste (Codex, Gemini CLI: a newline in the box, nothing submitted) gets
    # a typed line's Enter only once its box shows the text, and this many
    # seconds after (0: Enter follows the text at once).
    paste_gap: float = 0.0
    # How its box draws a long paste in place of the text (Claude's
    # "[Pasted text #1]", from ~800 characters): the text is in the box
    # while that shows, though its words are not.
    paste_mark: re.Pattern[str] | None = None
    # The presses that interrupt a running turn, each sent on its own
    # ``key_gap`` seconds apart: opencode arms its interrupt with one Esc and
    # needs a second, separate one (two in one send-keys do nothing).
    interrupt_keys: tuple[str, ...] = ("Escape",)
    key_gap: float = 0.0
    # A multi-select question is sent on by → to a review page whose first
    # option submits every answer (Claude's).  Elsewhere (opencode's question
    # dialog has a "Confirm" tab of its own) headspace only ticks the boxes by
    # digit and the person finishes the question in the pane.
    question_review: bool = False
    # Its waiting dialog is drawn still under the transcript (Claude's): the same words asked again after a key,
    # with the rows above the dialog moved on, are a second request, not the first one not yet acted on.
    still_dialog: bool = False
    # The context window the family's CLI gives its default model, stated here for when neither the
    # agent's files nor the price table say it: shown, and marked as assumed (0: none assumed).
    context_window: int = 0
    # The screen read together with the pane's title, for a family whose
    # screen alone cannot tell some states apart (Codex 0.144 shows a reply
    # still streaming exactly as a finished one; only its title's spinner
    # differs).  ``(ansi, *, title, command, version) -> Observation``; None:
    # the screen alone.  The monitor then asks tmux for the title at each read.
    with_title: Callable[..., Observation] | None = None
    # Optional capabilities beyond the screen (None: the family has none).
    status_files: StatusFiles | None = None
    transcripts: Transcripts | None = None
    hooks: Hooks | None = None
    answer_channel: AnswerChannel | None = None
    held_hook: HeldHook | None = None  # a permission hook of its own that runs away from the pane (Codex's): rules only
    starting: Starting | None = None  # headspace new, the palette's New and Restart agent
    # Its names for the tools that run a shell line or act on a file, as the rules read its calls (NO_TOOLS: the
    # rules read none of its calls as either, and an allow never answers one; a deny by tool name still does).
    tools: Tools = NO_TOOLS
    # Where it keeps its own count of a session's tokens, and how an agent's record is found (detect/session_usage.py;
    # None: it keeps none, or, as Claude's, its counts come with the transcript already followed).
    usage: Kind | None = None
    # How its reader reads the agent's version, in a line (the why view): Claude's rules by release; None: one reader for all.
    reads_version: Callable[[str], str] | None = None

    def reading(self, version: str) -> str:
        """Which reading of its screen an agent of ``version`` ("": unknown) gets, in one line for the why view."""
        if self.reads_version is not None:
            return self.reads_version(version)
        return f"{self.label} {version or '(version unknown)'}: read by its own reader (detect/{self.name}/)."

    def read(self, ansi: str, *, command: str | None = None, version: str | None = None, title: str | None = None) -> Observation:
        """The family's reading of one capture, with the pane's title where its screen alone cannot tell (``with_title``)."""
        if self.with_title is not None and title is not None:
            return self.with_title(ansi, title=title, command=command, version=version)
        return self.classify(ansi, command=command, version=version)
