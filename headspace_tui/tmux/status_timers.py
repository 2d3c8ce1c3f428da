"""tmux's status timers, one per client, lined up so that they wake tmux once per ``status-interval`` together.

Every client of tmux has a status timer, control clients too: every
``status-interval`` seconds (15 by default) it marks the client's status
line for a redraw and wakes tmux's loop, and each turn of that loop walks
every pane's clients.  A timer is dated when its client attaches, so
timers attached one after another fire one after another: 300 control
clients woke tmux 20 times a second at rest, each turn a walk of 300 panes
x 300 clients (2.4% of a core on a 2-core machine, about 14 ns a pair).

tmux restarts every client's timer at once when ``status`` or
``status-interval`` is set: set to the value it already has, nothing
changes but the timers' dates, which are then the same, and tmux wakes
once per interval for all of them (0.03% at 300).  That set is the one
write headspace makes to a user's server, and it is made so that it can
change nothing:

* the global value is read first and set only if it is still that value,
  in one command (``if-shell -F``), so a user's change in between is never
  undone;
* never where a user's hook would run on it or on the reads before it
  (``after-set-option``, ``after-show-options``, globally or on the
  session it runs in; the hooks are read first, and ``show-hooks`` has no
  hook of its own): a user's hook is theirs to run;
* only with the status line on, and when the timers out of line cost
  tmux more than LINE_UP_FROM pane-client walks a second (about 0.04% of
  a core): each set also redraws every attached terminal once, which is
  not worth it for a handful of sessions.

Pure: the decisions and the command; ``Sessions`` sends it.
"""

from __future__ import annotations

LINE_UP_FROM = 30_000  # pane x client walks a second that the timers out of line may cost tmux before they are lined up
LINE_UP_QUIET = 3.0  # seconds without an attach of ours before a line-up (the end of a wave, not a pause within it)
LINE_UP_GAP = 60.0  # seconds at least between two line-ups (each redraws every attached terminal once)
HOOKS = ("after-set-option", "after-show-options")  # the hooks the line-up would run (if-shell has none)


def worth_lining_up(out_of_line: int, panes: int, clients: int, interval: int, least: float = LINE_UP_FROM) -> bool:
    """Whether ``out_of_line`` timers (clients attached since the last line-up) cost tmux enough to line them up.

    Each fires once per ``interval`` and each firing walks ``panes`` x
    ``clients``; with the interval at 0 tmux keeps no timers at all.
    ``least``: the walks a second worth it.
    """
    return interval > 0 and out_of_line > 0 and out_of_line * panes * clients / interval >= least


def interval_of(lines: list[str]) -> int | None:
    """The global ``status-interval`` from ``show-options -gv status-interval``'s answer (None: unreadable)."""
    text = "".join(lines).strip()
    return int(text) if text.isdigit() and len(text) <= 9 else None


def hooked(lines: list[str]) -> bool:
    """Whether ``show-hooks``'s answer sets a hook the line-up would run (a set hook is listed with its index: ``name[0] command``)."""
    return any(line.startswith(f"{hook}[") for line in lines for hook in HOOKS)


def line_up(interval: int) -> tuple[str, ...]:
    """The command: set ``status-interval`` to ``interval`` only if that is what it still is (tmux then restarts every client's timer)."""
    return ("if-shell", "-F", f"#{{==:#{{status-interval}},{interval}}}", f"set-option -g status-interval {interval}")
