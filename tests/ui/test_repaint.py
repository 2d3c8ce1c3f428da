"""What reaches the terminal: only what changed, and the screen still right.

Every update the app writes is fed, as the bytes a terminal would get, into
a virtual terminal (pyte); after each change that terminal must show what a
full repaint shows, and the update must have touched only the changed cells
(a spinner's glyph, a ticking time cell), never the preview's box or the
whole table.  The pane contents are real recorded Claude screens.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pyte
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, CompositorUpdate
from textual.strip import Strip

from headspace_tui.app.widgets.agent_table import TIME
from headspace_tui.app.widgets.preview import PanePreview, changed_span, over_ssh
from tests.harness.record import DEFAULT_OUT
from tests.ui.apps import NOW, demo_app, service_of, settle, show_recorded, wait_until


def run(coro):
    return asyncio.run(coro)


def _pyte(width: int, height: int) -> tuple[pyte.Screen, pyte.Stream]:
    screen = pyte.Screen(width, height)
    return screen, pyte.Stream(screen)


def _cells(screen: pyte.Screen) -> list[list[tuple]]:
    return [[(c.data, c.fg, c.bg, c.bold, c.reverse) for c in (screen.buffer[y][x] for x in range(screen.columns))] for y in range(screen.lines)]


class Mirror:
    """A terminal fed with every update the app writes, from one full frame on."""

    def __init__(self, app) -> None:
        self.app = app
        self.screen, self.stream = _pyte(*app.size)
        self.writes: list[str] = []
        self.spans: list[tuple[int, int, int]] = []
        self.full = 0  # frames written whole (not as changed spans)
        app._display = self._display

    def _display(self, screen, renderable) -> None:
        if not isinstance(renderable, CompositorUpdate):
            return
        text = renderable.render_segments(self.app.console)
        self.writes.append(text)
        if isinstance(renderable, ChopsUpdate):
            self.spans += renderable.spans
        else:
            self.full += 1
        self.stream.feed(text)

    async def start(self, pilot) -> None:
        """From a full frame on, once the app is at rest: asked for, then waited for (a client's stream beside the loop may draw it, and a layout's last steps, a pause later)."""
        self.full = 0
        self.app.screen.refresh()
        for _ in range(100):
            await pilot.pause()
            if self.full:
                break
        else:
            raise AssertionError("the full frame asked for was never drawn")
        for _ in range(100):  # and then at rest: nothing left to draw, and a pause that draws nothing
            # A layout pass that resized a widget can leave its older repaint behind, undrawn (Textual's
            # bookkeeping: it comes out with the next change, whatever that is): drawn now, not in the measure.
            for widget in self.app.screen.walk_children():
                if getattr(widget, "_repaint_regions", None):
                    widget.refresh()
            self.clear()
            await pilot.pause()
            if not self.writes:
                return
        raise AssertionError("the app never came to rest")

    def clear(self) -> None:
        self.writes.clear()
        self.spans.clear()

    @property
    def written(self) -> int:
        return sum(len(w.encode()) for w in self.writes)

    def assert_shows_the_truth(self) -> None:
        """What the terminal shows is what a full repaint of the app now would show."""
        truth, stream = _pyte(*self.app.size)
        stream.feed(self.app.screen._compositor.render_update(full=True).render_segments(self.app.console))
        shown, expected = _cells(self.screen), _cells(truth)
        for y, (a, b) in enumerate(zip(shown, expected, strict=True)):
            assert a == b, f"row {y} differs:\nshown    {''.join(c[0] for c in a)!r}\nexpected {''.join(c[0] for c in b)!r}"


def recorded(name: str) -> str:
    return (DEFAULT_OUT / "alt" / "120x40" / f"{name}.ansi").read_text()


def spinner_frames(count: int) -> list[str]:
    """A working pane's successive frames, as Claude draws them: the spinner's glyph turns, a
    shimmer runs over its word, its timer counts (on the recorded screen's spinner row)."""
    rows = recorded("working_spinner").split("\n")
    y = next(i for i, row in enumerate(rows) if "Gro" in row)
    frames = []
    for i in range(count):
        word = "".join(f"\x1b[38;5;{216 if abs(x - i % 9) < 2 else 174}m{c}" for x, c in enumerate("Grooving…"))
        rows[y] = f"\x1b[38;5;174m{'✢✳✶✻✽'[i % 5]}\x1b[39m {word}\x1b[39m \x1b[38;5;246m({i + 1}s)\x1b[39m"
        frames.append("\n".join(rows))
    return frames


def test_changed_span_finds_the_cells_that_differ():
    style, other = Style(color="red"), Style(color="blue")
    assert changed_span(Strip([]), Strip([])) is None
    assert changed_span(Strip.blank(10), Strip.blank(10)) is None
    assert changed_span(Strip([Segment("abcdef", style)]), Strip([Segment("abXdef", style)])) == (2, 3)
    assert changed_span(Strip([Segment("abcdef", style)]), Strip([Segment("abcdef", other)])) == (0, 6)  # a colour alone counts
    assert changed_span(Strip([Segment("ab", style), Segment("cd", style)]), Strip([Segment("abcd", style)])) is None  # same cells, other segments
    assert changed_span(Strip([Segment("abc", style)]), Strip([Segment("abcde", style)])) == (3, 5)
    # A double-width character is never cut in half.
    assert changed_span(Strip([Segment("a中b", style)]), Strip([Segment("a文b", style)])) == (1, 3)
    assert changed_span(Strip([Segment("a中b", style)]), Strip([Segment("a中c", style)])) == (3, 4)
    assert changed_span(Strip([Segment("ab中", style)]), Strip([Segment("a中x", style)])) == (1, 4)


def test_over_ssh_reads_the_session_environment():
    assert not over_ssh({})
    assert over_ssh({"SSH_CONNECTION": "192.0.2.1 5000 192.0.2.2 22"})
    assert over_ssh({"SSH_TTY": "/dev/pts/3"})
    assert not over_ssh({"SSH_CONNECTION": ""})


def test_a_spinner_tick_repaints_a_few_cells_and_the_preview_stays_the_pane():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            preview = app.query_one(PanePreview)
            preview.max_fps = 1000  # every capture painted: the pace is not what is tested here
            title = "docs:0.0 (%2)"
            frames = spinner_frames(6)
            preview.show(title, frames[0], 120, 40)
            await pilot.pause()
            mirror = Mirror(app)
            await mirror.start(pilot)
            box_top = preview.region.y
            for frame in frames[1:]:
                preview.show(title, frame, 120, 40)
                await pilot.pause()
                mirror.assert_shows_the_truth()
            # Each tick: the glyph and the timer's digits, not the box (its border rows are never written).
            assert mirror.written < 5 * 400, mirror.writes
            assert {y for y, _, _ in mirror.spans} <= set(range(box_top + 1, box_top + preview.outer_size.height - 1))
            assert all(x2 - x1 <= 20 for _, x1, x2 in mirror.spans), mirror.spans  # glyph, word and timer of one row
            # Other screens of the same pane (other shapes, other rows): still the pane, without a box repaint.
            for name in ("working_streaming", "permission_bash", "idle_finished", "idle_fresh", "question_two_options", "working_spinner"):
                mirror.clear()
                preview.show(title, recorded(name), 120, 40)
                await pilot.pause()
                mirror.assert_shows_the_truth()
                assert box_top not in {y for y, _, _ in mirror.spans}, name  # the border's title row stays
            # A new title repaints the box (its border carries the title).
            mirror.clear()
            preview.show("web:0.0 (%1)", recorded("idle_fresh"), 120, 40)
            await pilot.pause()
            mirror.assert_shows_the_truth()
            assert box_top in {y for y, _, _ in mirror.spans}

    run(scenario())


PREVIEW_TITLE = "docs:0.0 (%2)"


async def paced_preview(app, pilot) -> PanePreview:
    """The demo app's preview, loaded, repainting at most twice a second."""
    await app.snapshot_loader(pilot)
    preview = app.query_one(PanePreview)
    preview.max_fps = 2
    return preview


def test_the_preview_paces_its_repaints_and_shows_the_newest_capture():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            preview = await paced_preview(app, pilot)
            title = PREVIEW_TITLE
            frames = spinner_frames(12)
            preview.show(title, frames[0], 120, 40)
            # The burst starts from rest: the first frame painted, and a pacing interval gone by since.
            await wait_until(
                pilot,
                lambda: preview._key is not None and preview._key[1] == frames[0] and time.monotonic() - preview._last_paint >= 1 / preview.max_fps,
                "the first frame painted, a pacing interval ago",
                every=0.05,
            )
            mirror = Mirror(app)
            await mirror.start(pilot)
            painted = []
            original = preview._paint
            preview._paint = lambda key: (painted.append(key[1]), original(key))  # type: ignore[method-assign]
            began = time.monotonic()
            for frame in frames[1:]:  # a burst: 11 captures in about 0.3 s (longer on a loaded machine)
                preview.show(title, frame, 120, 40)
                await asyncio.sleep(0.03)
            await wait_until(pilot, lambda: preview._pending is None, "the capture held back to be painted", every=0.02)
            await pilot.pause()  # and drawn
            took = time.monotonic() - began
            # At most twice a second over however long the burst really took, not eleven times.
            assert 1 <= len(painted) <= 1 + int(took * preview.max_fps), (len(painted), took)
            assert painted[-1] == frames[-1]  # the newest capture wins
            mirror.assert_shows_the_truth()

    run(scenario())


def test_a_capture_painted_at_once_is_not_overwritten_by_an_older_one_held_back_for_a_late_timer():
    """On a busy machine the pacing timer fires late: a newer capture, due by then, is painted
    at once; the older one the timer held must not be painted over it afterwards.  (CI saw the
    preview stay on a working agent's last frame, "esc to interrupt", with the pane at rest.)"""

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            preview = await paced_preview(app, pilot)
            title = PREVIEW_TITLE
            working, older, resting = spinner_frames(3)
            preview.show(title, working, 120, 40)
            await wait_until(pilot, lambda: preview._key is not None and preview._key[1] == working, "the first frame painted", every=0.02)
            preview.show(title, older, 120, 40)  # within the pacing interval: held for the timer
            assert preview._pending is not None and preview._pending[1] == older
            preview._last_paint -= 1  # the loop was busy: the interval has gone by, the timer not yet fired
            preview.show(title, resting, 120, 40)  # due now: painted at once
            assert preview._key[1] == resting
            await pilot.pause(1 / preview.max_fps + 0.2)  # the late timer fires
            await pilot.pause()
            assert preview._key[1] == resting, "an older capture was painted over the newest"

    run(scenario())


def test_a_ticking_time_repaints_its_cell_not_the_table():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            mirror = Mirror(app)
            await mirror.start(pilot)
            now = [NOW]
            app.table.clock = lambda: now[0]
            app.clock = lambda: now[0]
            before = {p: app.table._cells[p][TIME] for p in app.table.order}
            now[0] += 1
            app.main._tick_times()
            await pilot.pause()
            changed = [p for p in app.table.order if app.table._cells[p][TIME] != before[p]]
            needing = [p for p in app.table.order if app.table.agents[p].state.needs_you]
            assert changed == needing  # to the second for those that need you; the others to the minute
            mirror.assert_shows_the_truth()
            top = app.table.region.y + 1  # the header row
            rows = {top + app.table.order.index(p) for p in changed}
            assert {y for y, _, _ in mirror.spans} == rows
            assert all(x2 - x1 <= 8 for _, x1, x2 in mirror.spans), mirror.spans  # the time cell, padding included
            # A second where no shown text changes writes nothing at all.
            mirror.clear()
            app.table.clock = app.clock = lambda: NOW + 1.2
            app.main._tick_times()
            await pilot.pause()
            assert mirror.writes == []

    run(scenario())


def test_an_agent_reported_again_unchanged_writes_nothing():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await app.snapshot_loader(pilot)
            await pilot.pause()
            mirror = Mirror(app)
            await mirror.start(pilot)
            selected = app.table.selected_pane_id
            assert selected == "%2"
            show_recorded(app, 2, "docs", "input_plain_question", 610)  # the same screen, reported again
            await settle(pilot)  # the report has reached the app (over HTTP, down the stream)
            assert mirror.writes == [], mirror.writes  # neither the row, the prompt bar nor the preview

    run(scenario())


def test_the_preview_follows_an_agent_that_comes_to_the_top_under_an_unmoved_cursor():
    async def scenario():
        app = demo_app()
        async with app.run_test(size=(160, 48)) as pilot:
            await app.snapshot_loader(pilot)
            assert app.table.selected_pane_id == "%2" and service_of(app)._fleet.first.focused == "%2"
            show_recorded(app, 5, "notes", "permission_bash", 5000)  # now waiting longest: the top row
            # The row's change reaches the app from the service (over HTTP, down its stream): waited for, not paused for.
            await wait_until(pilot, lambda: app.table.order[0] == "%5", lambda: f"notes' row on top: {app.table.order}")
            assert app.table.cursor_row == 0 and app.table.selected_pane_id == "%5"
            preview = app.query_one(PanePreview)
            # the preview shows the row under the cursor (the app tells the service what it focuses: a call of its own)
            await wait_until(pilot, lambda: service_of(app)._fleet.first.focused == "%5" and "notes:0.0" in (preview.border_title or ""), "the preview on notes")

    run(scenario())


def test_a_new_name_that_keeps_the_widths_remakes_its_row_alone():
    """An agent's diff first counted asks for a re-plan of the columns; when the widths stay, only its row is made again.

    With 300 agents whose diffs were counted one after another, every count
    made all 300 rows again (25 ms each, on the loop that also carries the
    service's news when the app runs it in its own process), and a menu drawn
    meanwhile was seen a second late.
    """

    async def scenario():
        app = demo_app()
        async with app.run_test(size=(160, 40)) as pilot:
            await app.snapshot_loader(pilot)
            await pilot.pause()
            table = app.table
            first, agent = [a for a in table.agents.values() if not a.change][:2]
            table.upsert(replace(first, change="+1 −1"))  # the first diff: the Change column appears
            widths = table._columns
            made: list[str] = []
            real = table._cells_for

            def counted(one, now):
                made.append(one.pane_id)
                return real(one, now)

            table._cells_for = counted
            table.upsert(replace(agent, change="+2 −2"))
            assert table._columns == widths, "the setting of this test: the new name keeps the widths"
            assert made == [agent.pane_id], f"rows made again: {made}"
            assert "+2 −2" in str(table.get_row(agent.pane_id))  # and the row shows it
            table.upsert(replace(agent, target=agent.target + "-with-a-much-longer-name-than-any"))
            assert table._columns != widths and set(made[1:]) == set(table.agents), "new widths: every row is made again"

    run(scenario())
