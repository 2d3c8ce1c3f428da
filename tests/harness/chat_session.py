"""What a session of an agent that talks to the scripted OpenAI-compatible API does alike (Copilot CLI, Qwen Code).

A subclass says how its pane is prepared (``start_shell``: its home's
settings, its environment), the command line a person types
(``command_line``), and the screens that say it is ready and that a dialog
opened (``ready``, ``dialog``).
"""

from __future__ import annotations

import re
import shlex
from typing import ClassVar

from headspace_tui.detect.families import BY_NAME

from .opencode_api import OpenAICompatibleAPI
from .pane_session import PaneSession


class ChatAgentSession(PaneSession):
    api: OpenAICompatibleAPI
    extra_args: list[str]
    ready: ClassVar[re.Pattern[str]]
    dialog: ClassVar[re.Pattern[str]]
    program: ClassVar[tuple[str, ...]]
    family: ClassVar[str]  # headspace's name for it: its reader says what the box holds

    def start_shell(self) -> None:
        raise NotImplementedError

    def launch(self, *, wait_ready: bool = True) -> str:
        """Type the agent's command at the shell prompt; by default wait until it is ready."""
        if not self.pane_id:
            self.start_shell()
        self.run_in_shell(" ".join(shlex.quote(a) for a in [*self.program, *self.extra_args]))
        return self.wait_ready() if wait_ready else self.screen()

    def wait_ready(self, timeout: float = 60) -> str:
        return self.wait_for(self.ready, timeout=timeout, what=f"{self.name}'s input box")

    def submit(self, text: str, *, timeout: float = 10) -> None:
        """Type a prompt, wait until the box shows it, press Enter until the API hears it (or a dialog opens, or it exits)."""
        self.type_and_see(text, timeout=timeout)
        before = len(self.api.requests)
        family = BY_NAME[self.family]

        def taken() -> bool:
            # The API heard it, or the box no longer holds it (a slow first request must not get a second Enter: it
            # would land in the dialog that request brings), or it exited.
            ansi = self.ansi()
            box = family.box_text(ansi)
            return len(self.api.requests) > before or (box is not None and text.strip() not in box) or self.info().current_command == "bash"

        self.enter_until(taken, f"{text!r} was not sent after three Enters")
