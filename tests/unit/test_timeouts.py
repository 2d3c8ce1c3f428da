"""The wire's timeouts are in one place (api/timeouts.py), and an answer's deadlines nest as its path does.

The answerer gives up first (its confirmation, then its slack), then the
service's wait for the final report, then the client that asked over the
socket: each layer hears the inner one's word before it would say "no
answer" of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import headspace_tui
from headspace_tui.answering.answerer import SEND_SLACK
from headspace_tui.answering.pane_io import SETTLE, SETTLE_STRETCH, STEP_TIMEOUT
from headspace_tui.api import timeouts
from headspace_tui.detect.families import CLAUDE
from headspace_tui.service.watching.lifecycle import EXIT_WAIT, START_WAIT
from headspace_tui.shared.config import Config

TMUX_SLACK = 5.0


def test_an_answers_deadlines_nest_from_the_answerer_out_to_the_client():
    assert Config().confirm_timeout + SEND_SLACK < timeouts.ANSWER < timeouts.ANSWER_ASKED
    assert timeouts.QUESTION <= timeouts.REQUEST < timeouts.SETTLE + timeouts.REQUEST


def test_a_stops_steps_fit_in_what_a_client_waits_for_a_stop_or_a_restart():
    """/exit's steps (a screen held still, the word shown in the box, its effect, Claude gone), then a restart's new window.

    A client that gave up first would say "no answer" of a stop the service
    was still doing within its own limits (a stop over the socket had 30 s
    against these steps' 32).
    """
    held_still = max(EXIT_WAIT, 4 * SETTLE * SETTLE_STRETCH)  # /exit waits EXIT_WAIT for the screen to hold still (exit_claude)
    exit_steps = held_still + max(STEP_TIMEOUT, EXIT_WAIT) + CLAUDE.paste_gap + EXIT_WAIT + EXIT_WAIT
    # tmux's and the process table's answers between the steps, and each poll's last round past its deadline
    assert exit_steps + START_WAIT + TMUX_SLACK <= timeouts.LIFECYCLE


def test_no_front_end_module_sets_a_request_timeout_of_its_own():
    """The clients and the answer's wait read api/timeouts.py; a number of seconds for a request written beside them is a second place."""
    package = Path(headspace_tui.__file__).parent
    found = []
    for folder in ("resident", "web", "app", "cli"):
        for path in sorted((package / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, float):
                    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                    if any(name.endswith(("ASK_TIMEOUT", "SLOW_TIMEOUT", "ANSWER_WAIT", "SETTLE_WAIT")) or name == "START_WAIT" and folder == "resident" for name in names):
                        found.append(f"{path.relative_to(package)}:{node.lineno} {names}")
    assert found == [], found
