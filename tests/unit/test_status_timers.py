"""When the status timers are worth lining up, and the command that does it (tmux/status_timers.py)."""

from __future__ import annotations

from headspace_tui.tmux import status_timers
from headspace_tui.tmux.status_timers import hooked, interval_of, line_up, worth_lining_up


def test_many_sessions_are_worth_it_and_a_handful_are_not():
    # 300 timers out of line on 300 panes and clients: 20 turns a second, each a walk of 90,000 pairs.
    assert worth_lining_up(300, 300, 300, 15)
    assert worth_lining_up(100, 100, 100, 15)  # 66,000 walks a second
    assert not worth_lining_up(20, 20, 20, 15)  # 533: not worth a redraw of every terminal
    assert not worth_lining_up(50, 50, 50, 15)
    # Two new sessions on a server of 300 are not worth it alone; a dozen are.
    assert not worth_lining_up(2, 300, 300, 15)
    assert worth_lining_up(12, 300, 300, 15)


def test_a_longer_interval_or_none_at_all_is_worth_less():
    assert worth_lining_up(100, 100, 100, 15) and not worth_lining_up(100, 100, 100, 60)
    assert not worth_lining_up(300, 300, 300, 0), "status-interval 0: tmux keeps no timers"
    assert not worth_lining_up(0, 300, 300, 15), "nothing out of line"


def test_the_threshold_is_a_parameter():
    assert worth_lining_up(1, 2, 2, 15, least=0.1)
    assert not worth_lining_up(1, 2, 2, 15)
    assert status_timers.LINE_UP_FROM > 0


def test_the_interval_is_read_only_when_it_is_a_plain_number():
    assert interval_of(["15"]) == 15
    assert interval_of(["0"]) == 0
    assert interval_of([]) is None
    assert interval_of(["fifteen"]) is None
    assert interval_of(["-5"]) is None
    assert interval_of(["1" * 40]) is None, "a number tmux never keeps"


def test_only_a_set_hook_the_line_up_would_run_counts():
    unset = ["after-bind-key", "after-set-option", "after-show-options", "client-attached"]
    assert not hooked(unset), "show-hooks lists every hook, set or not: only an index means set"
    assert hooked(["after-set-option[0] display-message hi"])
    assert hooked(["after-show-options[3] run-shell true"]), "the reads before the set would run it"
    assert not hooked(["client-attached[0] run-shell -b 'echo x'"]), "a hook the line-up does not run"


def test_the_command_sets_the_value_only_if_it_is_still_that_value():
    assert line_up(15) == ("if-shell", "-F", "#{==:#{status-interval},15}", "set-option -g status-interval 15")
