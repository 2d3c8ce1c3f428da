"""UI test set-up: snapshot SVGs live under ``snapshots/ui/`` beside the pane corpus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_textual_snapshot

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots" / "ui"


def _dirname(cls, *, test_location) -> str:
    return str(SNAPSHOT_DIR)


pytest_textual_snapshot.SVGImageExtension.dirname = classmethod(_dirname)


_TRANSPORT_ID = re.compile(r"\[(?:in-process|http)\]|(?<=\[)(?:in-process|http)-|-(?:in-process|http)(?=\])")


def _snapshot_name(cls, *, test_location, index=0) -> str:
    """A test's snapshot, whichever transport drew it (tests/conftest.py runs each app test over both): one picture to match."""
    return _TRANSPORT_ID.sub("", _own_name(test_location=test_location, index=index))


_own_name = pytest_textual_snapshot.SVGImageExtension.get_snapshot_name
pytest_textual_snapshot.SVGImageExtension.get_snapshot_name = classmethod(_snapshot_name)
