"""Starting, stopping and restarting agents: the steps, each refused in one line when it is not safe.

* **Start**: ``claude ARGS`` in a new detached tmux window (tmux/spawn.py)
  of the session headspace runs in, or of a named one (made if missing),
  in a folder, or first in a fresh git worktree (shared/worktree.py).
* **Stop**: Claude's own way out first: ``/exit`` typed at its input box
  through the guarded send (the right pane by %id, the screen still the
  one seen, one send at a time), only while it sits idle at an *empty*
  input box (a draft there would be sent with "/exit" on its end).  Then
  the pane is closed only if the user confirms, and only while it is the
  same pane with the same agent (its identity: pane, process and start).
* **Restart**: the agent's session id (Claude's status file), ``/exit``,
  then ``claude --resume <id>`` in a new window in the same folder.
* **Confirm**: a start or restart is told as done only once the new pane
  runs the agent (its process in the pane's tree, within ``START_WAIT``);
  a window that closed at once (``claude`` not on the PATH tmux gives new
  windows) or a pane that never ran it says so, in one line, with what the
  pane showed last.

No Textual here: the CLI and the facade call these.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ...answering.keys import ActionError, PaneIO, draft_refusal, send_guarded
from ...answering.policy import INPUT_BOX_STATES, Intent, IntentKind
from ...detect.families import CLAUDE, Family, family_named, find_agent
from ...detect.family import Starting
from ...model import DEFAULT_FAMILY, AgentState, Observation
from ...shared.proctree import read_process_table
from ...shared.safe_text import clean
from ...shared.worktree import WorktreeError, add_worktree
from ...tmux.server import TmuxCommandError, TmuxServer, TmuxUnavailable
from ...tmux.spawn import SpawnError, current_session, start_window

EXIT_COMMAND = "/exit"
EXIT_STATES = INPUT_BOX_STATES  # idle, asking in text, or given up on an error: at its input box, not working, no dialog
EXIT_WAIT = 10.0  # seconds for Claude to be gone after /exit
START_WAIT = 8.0  # seconds for a new window to run its agent (a cold start of Claude's binary under load: 1-3 s)


class Link(Protocol):
    """What starting over ssh needs of a host's link (remote/ssh.py's ``SshLink``): one short shell line run there."""

    async def run(self, line: str, timeout: float = ...) -> bool: ...


class LifecycleError(Exception):
    """A start, stop or restart that did not happen, in one line for the user."""


@dataclass(frozen=True)
class Started:
    pane_id: str
    cwd: str
    worktree: bool  # the folder is a worktree made for this agent
    target: str = ""  # session:window.pane, once the agent runs (the service's start_agent says it)


async def start_over_link(link: Link, server: TmuxServer, host: str, folder: str, argv: Sequence[str], session: str) -> Started:
    """``argv`` in a new window of ``session`` on a remote host, through its ssh ``link``; where it runs (LifecycleError: why not).

    One way for both who start agents there: the service that watches the
    host (its own link) and ``new --host`` for a host no service watches.
    The folder is looked for first: tmux starts a window whose folder is
    missing in another folder, silently.
    """
    if not await link.run(f"test -d {shlex.quote(folder)}"):
        raise LifecycleError(f"{host}: no such folder: {folder}")
    try:
        pane_id = await asyncio.to_thread(start_window, server, argv, cwd=folder, session=session)
    except (SpawnError, TmuxCommandError, TmuxUnavailable) as exc:
        raise LifecycleError(f"{host}: {exc}") from None
    try:
        target = (await asyncio.to_thread(server.pane, pane_id)).target
    except (TmuxCommandError, TmuxUnavailable):
        raise LifecycleError(f"{host}: {argv[0]} started in {pane_id}, whose window closed at once (try {argv[0]} in that folder)") from None
    return Started(pane_id, folder, False, target=f"{host}:{target}")  # the host's server names panes with the host (``%3@box``)


def new_agent() -> tuple[Family, Starting]:
    """The family a new agent is (``model.DEFAULT_FAMILY``) and how it is started and resumed (``Family.starting``)."""
    family = family_named(DEFAULT_FAMILY)
    if family.starting is None:
        raise LifecycleError(f"headspace cannot start {family.label} agents")
    return family, family.starting


def agent_argv(args: Sequence[str] = ()) -> list[str]:
    """A new agent's command line, ``args`` passed on verbatim."""
    return new_agent()[1].argv(args)


def resume_argv(session_id: str) -> list[str]:
    """The command line that takes the agent's conversation ``session_id`` up again in a new window."""
    family, starting = new_agent()
    try:
        return starting.resume(session_id)
    except ValueError:
        raise LifecycleError(f"the agent's {family.label} session is not known (no status file yet); nothing restarted") from None


def start(
    server: TmuxServer,
    argv: Sequence[str],
    *,
    folder: Path,
    branch: str | None = None,
    session: str | None = None,
    session_id: str | None = None,
    env: Mapping[str, str] | None = None,
    window_env: Mapping[str, str] | None = None,
) -> Started:
    """Start ``argv`` in a new window: of ``session`` (a name), else ``session_id``, else the session headspace runs in.

    ``env``: headspace's own environment (which tmux session it runs in);
    ``window_env``: variables for the new window only.
    """
    folder = folder.expanduser()
    if not folder.is_dir():
        raise LifecycleError(f"no such folder: {folder}")
    folder = folder.resolve()
    if session is None and session_id is None:
        session_id = current_session(server, env if env is not None else {})
        if session_id is None:
            raise LifecycleError(f"not inside tmux on {server.where()}: name a session with --session NAME")
    try:
        cwd = add_worktree(folder, branch) if branch is not None else folder
        pane_id = start_window(server, argv, cwd=str(cwd), session=session, session_id=session_id, env=window_env)
    except (WorktreeError, SpawnError, TmuxCommandError, TmuxUnavailable) as exc:
        raise LifecycleError(str(exc)) from None
    return Started(pane_id, str(cwd), branch is not None)


def runs_agent(server: TmuxServer, pane_id: str, *, timeout: float = START_WAIT) -> str:
    """Wait until ``pane_id`` runs a new agent (``new_agent``, started as its program); "" when it does, else why not, in one line.

    Blocking (tmux, /proc): called off the loop.  A pane gone at once is a
    program that could not start (not found, or it failed before drawing);
    a pane that lives but never runs the agent says what it runs and shows.
    """
    family, starting = new_agent()
    program = starting.program
    deadline = time.monotonic() + timeout
    while True:
        try:
            record = server.pane(pane_id)
        except (TmuxCommandError, TmuxUnavailable):
            return f"{program} did not start: its window ({pane_id}) closed at once (is {program} on the PATH of tmux's new windows? headspace doctor checks)"
        found = find_agent(record.pid, read_process_table())
        if found is not None and found[1].name == family.name:
            return ""
        if record.dead or time.monotonic() >= deadline:
            running = "has ended" if record.dead else f"runs {record.current_command or 'nothing known'}"
            shown = ""
            with contextlib.suppress(TmuxCommandError, TmuxUnavailable):  # one capture, for the refusal only
                shown = server.capture(pane_id, ansi=False)
            return f"{program} is not running in {pane_id} after {timeout:g}s: the pane {running}{_said(shown)}"
        time.sleep(0.2)


def _said(screen: str) -> str:
    """The last thing a pane showed, as data (one line, cut), to quote in a refusal."""
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    return f" (it showed {clean(lines[-1], 120)!r})" if lines else ""


def state_refusal(seen: Observation) -> str:
    """Why ``/exit`` cannot go to an agent in ``seen``'s state, in the user's terms ("" at its input box).

    The true reason first: a dialog open, Claude working (a stop is asked
    for, not a key; the reason must say what is in the way).
    """
    if seen.state in EXIT_STATES:
        return ""
    if seen.state.is_menu:
        return f"a {seen.state.value} dialog is open (Claude is not waiting at its input box): answer it or jump there first; /exit not sent"
    if seen.state is AgentState.WORKING:
        return "Claude is working, not waiting at its input box: interrupt it (x) first; /exit not sent"
    return f"Claude is {seen.state.value}, not waiting at its input box; /exit not sent"


def exit_refusal(seen: Observation, ansi: str) -> str:
    """Why ``/exit`` must not be typed into this screen now, or ""."""
    refusal = state_refusal(seen)
    if refusal:
        return refusal
    return draft_refusal(CLAUDE, ansi).replace("nothing sent", "/exit not sent")


async def exit_claude(io: PaneIO, pane_id: str, seen: Observation, *, server_key: str, timeout: float = EXIT_WAIT) -> bool:
    """Type ``/exit`` at Claude's empty input box (guarded); wait until Claude is gone: True if its pane closed with it."""
    try:
        ansi = await io.capture(pane_id, ansi=True)
    except (TmuxCommandError, TmuxUnavailable) as exc:
        raise LifecycleError(f"cannot read {pane_id}: {exc}") from None
    refusal = exit_refusal(seen, ansi)
    if refusal:
        raise LifecycleError(refusal)
    try:
        outcome = await send_guarded(io, pane_id, seen, Intent(IntentKind.TEXT, text=EXIT_COMMAND), timeout=timeout, server_key=server_key, family=CLAUDE, still_within=timeout)
        if not outcome.delivered:
            raise LifecycleError(outcome.detail)
    except ActionError as exc:
        raise LifecycleError(str(exc)) from None
    except (TmuxCommandError, TmuxUnavailable):
        pass  # the pane closed under the confirmation: Claude was its program and it exited
    return await _gone(io, pane_id, timeout)


async def _gone(io: PaneIO, pane_id: str, timeout: float) -> bool:
    """Wait until Claude no longer runs in ``pane_id``: True when the pane itself is gone, False when it remains (a shell)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            record = await io.pane(pane_id)
        except TmuxCommandError:
            return True
        if getattr(record, "dead", False) or not CLAUDE.is_command(getattr(record, "current_command", "")):
            return False
        if time.monotonic() > deadline:
            raise LifecycleError(f"/exit sent, but Claude still runs in {pane_id} after {timeout:.0f}s")
        await asyncio.sleep(0.1)
