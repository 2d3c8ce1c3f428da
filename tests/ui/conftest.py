"""UI test set-up: snapshot SVGs live under ``snapshots/ui/`` beside the pane corpus."""

from __future__ import annotations

from pathlib import Path

import pytest_textual_snapshot

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots" / "ui"


def _dirname(cls, *, test_location) -> str:
    return str(SNAPSHOT_DIR)


pytest_textual_snapshot.SVGImageExtension.dirname = classmethod(_dirname)
