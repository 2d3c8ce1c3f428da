"""The detector's pacing, driven by numbers: when is a pane read again?"""

from __future__ import annotations

from headspace_tui.service.watching.schedule import CAPTURE_GAP, FOCUS_GAP, FOCUS_LAZY_GAP, LAZY_GAP, MAX_WAIT, POLL_GAP, QUIET, PaneTiming, due_at


def _read_at(t: float) -> PaneTiming:
    timing = PaneTiming()
    timing.read(t)
    return timing


def test_a_new_pane_is_read_at_once():
    assert due_at(PaneTiming(), 100.0, polling=False, focused=False) <= 100.0


def test_an_unchanged_pane_is_not_read():
    assert due_at(_read_at(100.0), 200.0, polling=False, focused=False) is None


def test_a_burst_is_read_once_it_pauses():
    timing = _read_at(100.0)
    for i in range(5):  # output every 10 ms
        timing.output(101.0 + i * 0.01, 5000, working=False)
    assert due_at(timing, 101.04, polling=False, focused=False) == 101.04 + QUIET


def test_a_burst_that_goes_on_is_read_after_max_wait():
    timing = _read_at(100.0)
    t = 101.0
    while t < 101.5:  # output every 10 ms, never pausing
        timing.output(t, 5000, working=False)
        t += 0.01
    assert due_at(timing, t, polling=False, focused=False) == 101.0 + MAX_WAIT


def test_no_pane_is_read_more_often_than_the_capture_gap():
    timing = _read_at(100.0)
    timing.output(100.001, 5000, working=False)
    assert due_at(timing, 100.05, polling=False, focused=False) == 100.0 + CAPTURE_GAP
    assert due_at(timing, 100.05, polling=False, focused=True) == 100.0 + FOCUS_GAP


def test_a_spinner_is_read_lazily_and_the_previewed_one_at_the_previews_pace():
    timing = _read_at(100.0)
    timing.output(100.3, 40, working=True)
    assert due_at(timing, 100.3, polling=False, focused=False) == 100.0 + LAZY_GAP
    assert due_at(timing, 100.3, polling=False, focused=True) == 100.0 + FOCUS_LAZY_GAP


def test_a_large_write_ends_the_lazy_pace():
    timing = _read_at(100.0)
    timing.output(100.3, 40, working=True)
    timing.output(100.31, 9000, working=True)  # a dialog drawn
    assert due_at(timing, 100.31, polling=False, focused=False) == 100.31 + QUIET


def test_a_large_write_split_by_tmux_stays_eager_when_its_tail_is_small():
    # tmux reports one write of a dialog as several %output lines (its pty
    # reads): 2423 then 308 bytes, measured with the fleet benchmark. The small
    # tail must not make the pane lazy: the dialog was seen up to LAZY_GAP late.
    timing = _read_at(100.0)
    timing.output(100.3, 2423, working=True)
    timing.output(100.3001, 308, working=True)
    assert due_at(timing, 100.3001, polling=False, focused=False) == 100.3001 + QUIET


def test_small_writes_of_an_agent_not_working_are_not_lazy():
    timing = _read_at(100.0)
    timing.output(100.3, 40, working=False)  # an idle agent's prompt being typed into
    assert due_at(timing, 100.3, polling=False, focused=False) == 100.3 + QUIET


def test_without_a_control_client_every_pane_is_polled():
    timing = _read_at(100.0)
    assert due_at(timing, 100.1, polling=True, focused=False) == 100.0 + POLL_GAP


def test_many_sessions_waiting_for_their_clients_are_polled_slowly_but_a_change_said_is_read_at_the_usual_pace():
    timing = _read_at(100.0)
    assert due_at(timing, 100.1, polling=True, focused=False, poll_gap=15.0) == 115.0
    timing.look_again(103.0)  # idle grace running out: its time, not the slow poll's
    assert due_at(timing, 100.1, polling=True, focused=False, poll_gap=15.0) == 103.0
    timing.changed(100.2)  # a hook, a key sent
    assert due_at(timing, 100.2, polling=True, focused=False, poll_gap=15.0) == 100.0 + POLL_GAP


def test_a_recheck_brings_a_quiet_pane_back_when_idle_grace_runs_out():
    timing = _read_at(100.0)
    timing.look_again(105.05)
    assert due_at(timing, 101.0, polling=False, focused=False) == 105.05
    assert due_at(timing, 105.06, polling=False, focused=False) <= 105.06 + MAX_WAIT
    assert timing.recheck is None and timing.dirty


def test_of_several_rechecks_the_earliest_wins():
    timing = _read_at(100.0)
    timing.look_again(105.0)
    timing.look_again(100.5)
    timing.look_again(103.0)
    assert timing.recheck == 100.5
