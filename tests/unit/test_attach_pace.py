"""A session's control client is attached again only at a pace that cannot storm the tmux server."""

from __future__ import annotations

from headspace_tui.tmux.attach_pace import AttachPace


def attaches_in(pace: AttachPace, seconds: float, *, lives: float) -> list[float]:
    """Drive a pace whose every client ends ``lives`` seconds after attaching; when it attached."""
    now, times = 0.0, []
    while now < seconds:
        now = max(now, pace.next_at())
        if now >= seconds:
            break
        pace.attaching(now)
        times.append(now)
        now += lives
        pace.ended(now, times[-1])
    return times


def test_a_client_that_ends_at_once_is_attached_a_few_times_a_minute_at_most():
    times = attaches_in(AttachPace(), 600.0, lives=0.0)
    # the old loop: hundreds a second; now at most three in any minute, and slower and slower
    for start in range(600):
        assert sum(1 for t in times if start <= t < start + 60) <= 3
    assert len(times) <= 15  # 0, 1, 3, then the minute cap and the doubling delay: about one a minute (the old loop: ~150,000)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps[:2] == [1.0, 2.0] and gaps[-1] >= 60.0  # doubling, up to a minute


def test_one_that_never_attached_backs_off_the_same_way():
    pace = AttachPace()
    delays = []
    now = 0.0
    for _ in range(8):
        pace.attaching(now)
        pace.ended(now, None)
        delays.append(pace.next_at() - now)
        now = pace.next_at()
    assert delays[:2] == [1.0, 2.0]  # doubling...
    assert delays[2] == 57.0  # ...and the third attach within the minute waits for the minute to pass
    assert max(delays) == 60.0


def test_a_client_that_ran_well_is_replaced_at_once_and_the_delay_starts_over():
    pace = AttachPace()
    pace.attaching(0.0)
    pace.ended(0.5, 0.0)  # a short life: wait a second
    assert pace.next_at() == 1.5
    pace.attaching(1.5)
    pace.ended(100.0, 1.5)  # ran for minutes, then killed: replace it now
    assert pace.next_at() == 100.0
    pace.attaching(100.0)
    pace.ended(100.2, 100.0)
    assert pace.next_at() == 101.2  # a short life again: back to the first delay


def test_the_minute_cap_holds_even_for_healthy_clients():
    pace = AttachPace(healthy_after=0.0)  # every life counts as healthy: only the cap is left
    times = attaches_in(pace, 180.0, lives=1.0)
    assert len(times) == 9  # three a minute
