"""The main screen's keys: its bindings, each with its id (the keymap's name for it) and its tooltip (its line on the help screen).

The help screen and the footer are generated from these, so the three
agree.  Kept apart from the screen (main_screen.py) as the vocabulary its
parts share (triage.py adds Tab, Shift+Tab and z).
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

from ..input_mode import LEAVE_KEY, LEAVE_SHOWN
from .triage import TRIAGE_BINDINGS

# Each binding's tooltip is its line on the help screen (generated from these, so the two agree).
MAIN_BINDINGS: list[BindingType] = [
    Binding("y", "approve", "approve", id="approve", tooltip="approve only this request or plan (widens nothing)"),
    Binding("n", "deny", "deny", id="deny", tooltip="deny: choose the 'No' option (found by its label)"),
    Binding("r", "reply", "reply", id="reply", tooltip="reply with free text: at Claude's input box, or into a question's own 'Type something.' option"),
    Binding("c", "nudge", "nudge", id="nudge", tooltip="nudge an idle agent (the configured text, default 'continue')"),
    Binding("x", "interrupt", "interrupt", id="interrupt", tooltip="interrupt a working agent (sends Esc to its pane)"),
    Binding(
        "i",
        "input_mode",
        "input",
        id="input_mode",
        show=False,
        tooltip=f"input mode: your keys go straight to the selected agent's pane (text, Enter, Backspace, arrows, Tab, Esc) until {LEAVE_SHOWN}",
    ),
    # Priority: it acts before input mode sees the key, so it is never forwarded.
    Binding(LEAVE_KEY, "leave_input", "leave INPUT", id="leave_input", priority=True, tooltip=f"{LEAVE_SHOWN}: leave input mode (never forwarded; nor are Ctrl keys, Shift+Tab, Alt, F-keys)"),
    Binding(
        "A",
        "approve_all",
        "approve all",
        id="approve_all",
        tooltip="batch: approve every waiting request identical to this one, through Claude's hook, after a list to confirm",
    ),
    *[Binding(str(n), f"option('{n}')", f"option {n}", show=False, tooltip="pick that option of a numbered menu (at a multi-select question: tick or untick its box)") for n in range(1, 10)],
    Binding(
        "S",
        "submit",
        "submit",
        id="submit",
        tooltip="submit a multi-select question's ticks (on to the next question, or to Claude's review and its 'Submit answers')",
    ),
    Binding("enter", "jump", "jump", id="jump", tooltip="jump: switch your tmux client to the agent's pane (or print the attach command)"),
    # Like `cd -`: back to where the inbox came from, when the answer given there did not land.
    Binding("minus", "back", "back", id="back", show=False, tooltip="back to the agent whose answer did not land (after the inbox moved on)"),
    # Esc is every TUI user's "close this": it never reaches an agent.
    Binding("escape", "close_overlay", "close", show=False, tooltip="close the filter, a window, or the scrolled-back preview"),
    Binding("question_mark", "help", "help", id="help", tooltip="this help"),
    # The app's quit: the screen has none (a plain "quit" here did nothing).
    Binding("q", "app.quit", "quit", id="quit", tooltip="quit (Ctrl+C too)"),
    Binding("slash", "filter", "filter", id="filter", tooltip="filter the table by target, folder, state or text"),
    Binding("e", "why", "why", id="why", tooltip="why: every source's verdict, its age and evidence"),
    Binding("t", "timeline", "timeline", id="timeline", show=False, tooltip="timeline: the agent's states, commands and outcomes"),
    Binding("d", "diff", "diff", id="diff", show=False, tooltip="diff: what the agent changed (this turn, or since it started)"),
    Binding("D", "toggle_changes", "changes column", id="toggle_changes", show=False, tooltip="show or hide the table's Change column"),
    Binding("percent_sign", "toggle_context", "context column", id="toggle_context", show=False, tooltip="show or hide the table's Ctx column (context, % of the model's window)"),
    Binding("l", "toggle_layout", "layout", id="toggle_layout", show=False, tooltip="layout: auto (beside from 140 columns, else under) → beside → under; shown on the preview's border"),
    Binding("left_square_bracket", "scroll_back", "history", id="scroll_back", show=False, tooltip="preview: a page back through the pane's history (tmux scrollback)"),
    Binding("right_square_bracket", "scroll_forward", "forward", id="scroll_forward", show=False, tooltip="preview: a page forward (at the bottom: live again)"),
    *TRIAGE_BINDINGS,  # Tab, Shift+Tab, z (triage.py)
]
