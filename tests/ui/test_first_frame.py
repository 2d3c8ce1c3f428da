"""The first frame at the real width: no frame of a popup's open shows a row laid out for another width, and no two rows alike.

The trial: the popup's first frame showed rows as ``permiss…:0.0`` for about
0.25 s (3 s once under load) before the real layout, two rows reading the
same.  The table was planned before it had a size (the screen's mount comes
before its first layout) at a 40-column guess, and re-planned only when the
resize reached it, after that frame was painted.  Here every line the table
renders while a popup-sized app opens with its agents already known (as a
client of a resident service is) is recorded and held against the final
layout.
"""

from __future__ import annotations

import asyncio

import pytest

from headspace_tui.app.widgets.agent_table import AgentTable
from tests.ui.apps import AGENTS, demo_app, show_recorded, wait_until

SIZES = [(80, 24), (120, 30), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_frame_of_an_open_shows_a_row_planned_for_another_width(size, monkeypatch):
    frames: list[list[str]] = []
    render_lines = AgentTable.render_lines

    def recording(self, crop):
        strips = render_lines(self, crop)
        frames.append([strip.text.rstrip() for strip in strips])
        return strips

    monkeypatch.setattr(AgentTable, "render_lines", recording)
    app = demo_app()
    for n, (session, screen, age) in enumerate(AGENTS):  # known before the first frame, as a resident service knows them
        show_recorded(app, n, session, screen, age)
    app.service.connect(0.0)  # the client takes the whole state as it opens (over HTTP the replays would come down the stream after)

    async def scenario() -> list[str]:
        async with app.run_test(size=size) as pilot:
            table = app.query_one(AgentTable)
            await wait_until(pilot, lambda: len(table.rows) == len(AGENTS), "every row")
            await pilot.pause(0.3)
            final = [strip.text.rstrip() for strip in table.render_lines(table.region.reset_offset)]
            return final

    final = asyncio.run(scenario())
    sessions = [session for session, _, _ in AGENTS]
    shown = [line for line in final if any(f"{s}:0.0" in line for s in sessions)]
    assert len(shown) >= min(len(AGENTS), size[1] // 3), final  # the final frame holds the rows, each target whole
    final_set = set(final)
    drawn = [frame for frame in frames if any(f"{s}:0.0" in line for line in frame for s in sessions)]
    assert drawn, "no frame drew a row: nothing was held against the final layout"
    for frame in frames:
        rows = [line for line in frame if line.strip()]
        stray = [line for line in rows if line not in final_set]
        assert not stray, "a frame drew lines the final layout does not have:\n" + "\n".join(stray) + "\n--- final:\n" + "\n".join(final)
        agent_rows = [line for line in rows if any(s in line for s in sessions)]
        assert len(agent_rows) == len(set(agent_rows)), "two rows alike in one frame:\n" + "\n".join(agent_rows)
