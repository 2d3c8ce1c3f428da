"""Snapshots of the main screen at 80x24, 120x40 and 200x50.

The app runs with its detectors off and is shown real recorded panes from the
corpus (screens the real Claude drew, classified by the real detector), with
a fixed clock, so the picture depends only on the code.  Regenerate after an
intended change with ``pytest tests/ui --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import pytest

from tests.ui.apps import demo_app


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=["80x24", "120x40", "200x50"])
def test_main_screen(snap_compare, size):
    app = demo_app()
    assert snap_compare(app, terminal_size=size, run_before=app.snapshot_loader)
