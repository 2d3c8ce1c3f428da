"""When to read a pane again: the detector's pacing, as pure functions of one pane's timing.

A pane is read only after it changed, and not at every change: a burst of
output is read once it pauses (QUIET) or once it has gone on for MAX_WAIT;
no pane more often than CAPTURE_GAP (the previewed one FOCUS_GAP).  A
working agent changed only by small writes (its spinner, a streamed word)
is read lazily, once a second (the previewed one at the preview's pace).
Without a control client there is no change signal and every pane is
polled.  A pane may also ask to be looked at again at a time of its own
(``recheck``: idle grace running out, a hook to drop, a transcript turn to
catch).

Pure: time comes in as ``now``, so tests drive it with numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

CAPTURE_GAP = 0.1  # a pane is re-read at most this often...
FOCUS_GAP = 0.05  # ...and the previewed one this often
# Read once a burst of output has paused this long...  Claude draws each frame in one write, which reaches us
# in pieces (tmux's %output lines of 2.7 KB, the kernel's 2 KB chunks): 30 dialogs of the pinned release, one
# part to the next at most 1.6 ms apart on a quiet machine, 5.6 ms with a core kept busy (docs/detection.md).
QUIET = 0.01
MAX_WAIT = 0.1  # ...or once it has been changing for this long
POLL_GAP = 0.5  # without a control client, every pane is polled this often
SMALL_WRITE = 400  # escaped bytes: a spinner tick, a streamed word; a dialog is kilobytes
LAZY_GAP = 1.0  # a working pane changed only by small writes is re-read this often...
FOCUS_LAZY_GAP = 0.2  # ...and the previewed one at the preview's pace


@dataclass
class PaneTiming:
    """What the scheduler knows of one pane."""

    dirty: bool = True  # changed since it was last read (a new pane is read at once)
    last_read: float = 0.0
    last_output: float = 0.0
    dirty_since: float | None = None
    lazy_since: float | None = None  # dirty only by small writes while working
    recheck: float | None = None  # look again then, even without a change

    def changed(self, now: float) -> None:
        """Something says the pane changed (output, a status file, a hook, a key sent)."""
        if not self.dirty:
            self.dirty = True
            self.dirty_since = now

    def output(self, now: float, size: int, working: bool) -> None:
        """tmux reported ``size`` escaped bytes of output from the pane."""
        self.last_output = now
        if size < SMALL_WRITE and working:
            # Lazy only when nothing else made it dirty: tmux reports one large
            # write (a dialog) as several %output lines, whose tail may be small.
            if self.lazy_since is None and not self.dirty:
                self.lazy_since = now
        else:
            self.lazy_since = None
        self.changed(now)

    def look_again(self, at: float) -> None:
        """Ask for a look at ``at``; of several asks the earliest wins (the look after it asks again if need be)."""
        if self.recheck is None or at < self.recheck:
            self.recheck = at

    def read(self, now: float) -> None:
        """The pane is being read now."""
        self.dirty = False
        self.dirty_since = None
        self.lazy_since = None
        self.last_read = now


def due_at(timing: PaneTiming, now: float, *, polling: bool, focused: bool, poll_gap: float = POLL_GAP) -> float | None:
    """When the pane should next be read (``<= now``: now), or None if nothing asks for it (``poll_gap``: the polling pace now)."""
    if timing.recheck is not None and timing.recheck <= now:
        timing.recheck = None
        timing.changed(now)
    if polling:
        # Many sessions waiting for their clients are polled slowly (``poll_gap``); a pane something
        # said changed (a hook, a key sent, a look it asked for) is read at the usual pace all the same.
        when = timing.last_read + (POLL_GAP if timing.dirty else poll_gap)
        return when if timing.recheck is None else min(when, timing.recheck)
    if not timing.dirty:
        return timing.recheck
    if timing.lazy_since is not None:
        when = timing.last_read + (FOCUS_LAZY_GAP if focused else LAZY_GAP)
    else:
        gap = FOCUS_GAP if focused else CAPTURE_GAP
        since = timing.dirty_since if timing.dirty_since is not None else now
        settled = min(timing.last_output + QUIET, since + MAX_WAIT)
        when = max(timing.last_read + gap, settled)
    return when if timing.recheck is None else min(when, timing.recheck)
