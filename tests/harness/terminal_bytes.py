"""What a remote terminal receives: bytes per minute of headspace, and of a pane attached directly.

Two private tmux servers.  Server A holds real Claude Code sessions (the
scripted API behind them); server B holds one session that runs headspace
as a program (``python -m headspace_tui -L A``) in a private HOME.  A real
tmux client in a pty (``tmux attach``, what an ssh session carries to the
user's terminal) is attached to B and counts every byte it is sent; a
second one can be attached straight to an agent's session on A, which is
what the user would otherwise look at.  Both servers have the status line
off, so neither count includes tmux's own clock.

The benchmark (``benchmarks/terminal_bytes.py``) and the done-when test
(``tests/e2e/test_terminal_bytes.py``) both use this rig.
"""

from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import fake_api as api
from .env import private_env
from .fake_api import FakeAnthropicAPI
from .session import NUMBERED_MENU, ClaudeSession
from .terminal import Terminal
from .tmux import PrivateTmux

REPO = Path(__file__).resolve().parents[2]
WORKING_HINT = "esc to interrupt"
DEPLOY = {"deploy.sh": "echo deploying\nsleep 600\n"}  # a long tool: Claude's spinner and timer tick, nothing else moves


def per_minute(terminals: list[Terminal], seconds: float) -> list[float]:
    """Count what each terminal receives over the same ``seconds``; bytes per minute, in order."""
    before = [t.count for t in terminals]
    time.sleep(seconds)
    return [(t.count - b) * 60.0 / seconds for t, b in zip(terminals, before, strict=True)]


@dataclass
class Rig:
    """Agents on server A, headspace on server B at ``width`` x ``height``, a terminal on B."""

    claude: str
    root: Path
    width: int
    height: int
    agents: int = 3
    extra_env: dict[str, str] | None = None  # added to headspace's environment (e.g. SSH_CONNECTION)
    keep: bool = False  # the terminals keep every byte (to see what was sent)
    record: Path | None = None  # also record what headspace itself writes (``script``), before tmux redraws it

    def __post_init__(self) -> None:
        self.api = FakeAnthropicAPI().start()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8"}
        self.a, self.b = PrivateTmux(env), PrivateTmux(env)
        self.sessions: list[ClaudeSession] = []
        self.terminal: Terminal | None = None
        self.direct: Terminal | None = None
        self.hs_pane = ""

    # -- setting up ------------------------------------------------------------
    def start(self) -> None:
        """Claude at its prompt in every agent session, then headspace with a terminal attached."""
        for i in range(self.agents):
            self.sessions.append(
                ClaudeSession(
                    self.a,
                    self.api,
                    self.claude,
                    self.root / f"agent{i}",
                    name=f"agent{i}",
                    width=self.width,
                    height=self.height,
                    extra_args=["--allowedTools", "Bash(bash deploy.sh)"],
                    files=dict(DEPLOY),
                )
            )
            self.sessions[-1].start_shell()
        # As a user's tmux.conf would (Claude's own advice): else Claude shows a
        # hint about it for a few seconds after starting, which is not "idle".
        self.a.run("set-option", "-g", "focus-events", "on")
        self.a.run("set-option", "-g", "status", "off")
        for session in self.sessions:
            session.launch(wait_ready=False)
        for session in self.sessions:
            session.wait_ready(timeout=60)
        xdg = self.root / "xdg"
        env = private_env(self.root / "hs-home", xdg, claude_dir=xdg / "claude")
        env["PYTHONPATH"] = str(REPO)
        env.update(self.extra_env or {})
        (self.root / "hs-home").mkdir(exist_ok=True)
        command = " ".join(shlex.quote(w) for w in (sys.executable, "-m", "headspace_tui", "--no-service", "-L", self.a.name))
        if self.record is not None:
            command = f"script -q -f -c {shlex.quote(command)} {shlex.quote(str(self.record))}"
        self.hs_pane = self.b.new_session("hs", width=self.width, height=self.height, cwd=str(self.root), command=["sh", "-c", command], env=env)
        self.b.run("set-option", "-g", "status", "off")
        self.terminal = Terminal(self.b, "hs", self.width, self.height, keep=self.keep)
        self.wait_screen(lambda s: f"{self.agents} agents" in s and "0 working" in s and s.count("idle") >= self.agents, "every agent idle in headspace")
        # Claude's start-up hint ("← for agents") leaves its footer about 10 s after it starts.
        for session in self.sessions:
            session.wait_for(lambda s: "for agents" not in s, timeout=30, what="Claude's start-up hint to go")

    def close(self) -> None:
        if self.hs_pane:  # quit headspace itself first (a kill-server alone may leave ``script`` and it behind)
            self.b.send_keys(self.hs_pane, "q")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self._hs_running():
                time.sleep(0.1)
        for term in (self.terminal, self.direct):
            if term is not None:
                term.close()
        for session in self.sessions:
            session.close()
        self.b.close()
        self.a.close()
        self.api.close()

    def __enter__(self) -> Rig:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _hs_running(self) -> bool:
        out = self.b.run("list-panes", "-t", "hs", "-F", "#{pane_dead}", check=False)
        return out.strip() == "0"

    # -- reading headspace's screen ------------------------------------------------
    def screen(self) -> str:
        return self.b.capture(self.hs_pane)

    def wait_screen(self, check, what: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            if "Traceback" in screen or "stopped on an unexpected error" in screen:
                break
            time.sleep(0.2)
        raise AssertionError(f"waited {timeout}s for {what}; headspace showed:\n{screen}")

    # -- the states measured ----------------------------------------------------------
    def work(self, index: int = 0) -> ClaudeSession:
        """Agent ``index`` runs a long Bash tool (spinner and timer ticking); headspace previews it (the top row)."""
        agent = self.sessions[index]
        self.api.set_script([api.bash("bash deploy.sh", "Wait for the deploy")])
        agent.submit("wait for the deploy")
        agent.wait_for(lambda s: "deploy.sh" in s and WORKING_HINT in s, what="the running tool")
        self.wait_screen(lambda s: "1 working" in s and "deploy.sh" in s, "the working agent previewed")
        return agent

    def attach_direct(self, index: int = 0) -> Terminal:
        """A second terminal, attached straight to agent ``index``'s session on server A."""
        self.direct = Terminal(self.a, self.sessions[index].name, self.width, self.height, keep=self.keep)
        return self.direct

    def stop_work(self, index: int = 0) -> None:
        agent = self.sessions[index]
        agent.press("Escape")
        agent.wait_for(lambda s: WORKING_HINT not in s and "Interrupted" in s, what="the interrupted turn")
        if self.direct is not None:
            self.direct.close()
            self.direct = None

    def ask_permission(self, indexes: list[int]) -> None:
        """Agents ``indexes`` stop at a Bash permission menu: rows that need you, their time to the second."""
        for i in indexes:
            agent = self.sessions[i]
            self.api.set_script([api.bash(f"touch marker{i}.txt && echo headspace-ok", "Create a marker file")])
            agent.submit("create the marker file")
            agent.wait_for(NUMBERED_MENU, what="the permission menu")
        n = len(indexes)
        self.wait_screen(lambda s: f"{n} need{'s' if n == 1 else ''} you" in s, "the waiting rows")
