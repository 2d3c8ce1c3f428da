"""Issue 25's papercuts: each one seen by the user, each with the check that it is gone."""

from __future__ import annotations

import asyncio

import pytest
from textual.geometry import Region
from textual.widgets._toast import Toast

from headspace_tui.app.widgets.preview import PanePreview, PromptBar
from tests.ui.apps import demo_app, wait_until
from tests.ui.test_repaint import Mirror


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("size", [(120, 40), (160, 48)], ids=["stacked", "side"])
def test_a_toast_leaves_the_prompt_area_free_and_nothing_behind(size):
    """A toast (a refused key's reason, 5 s) must not cover where Claude's prompt is: the preview's bottom, the prompt bar."""

    async def scenario():
        app = demo_app()
        async with app.run_test(size=size, notifications=True) as pilot:
            await app.snapshot_loader(pilot)
            mirror = Mirror(app)
            await mirror.start(pilot)
            app.notify("docs:0.0: the pane is not at Claude's input box (it is question); nothing sent", severity="warning", timeout=1.0)
            await wait_until(pilot, lambda: any(t.region.height for t in app.screen.query(Toast)), "the toast shown")
            toast = app.screen.query_one(Toast).region
            preview, bar = app.query_one(PanePreview).region, app.query_one(PromptBar).region
            assert not toast.overlaps(bar), (toast, bar)
            lower_half = Region(preview.x, preview.y + preview.height // 2, preview.width, preview.height - preview.height // 2)
            assert not toast.overlaps(lower_half), (toast, preview)
            assert toast.y >= 1  # the summary line stays readable
            await wait_until(pilot, lambda: not app.screen.query(Toast), "the toast gone")
            await pilot.pause()
            mirror.assert_shows_the_truth()  # its border ('▌') went with it

    run(scenario())
