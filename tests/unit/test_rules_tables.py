"""Which rules table reads which version: its own family's, else the nearest; unknown versions the newest."""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude import TABLES, family_of, rules_for, screen_version
from headspace_tui.detect.claude.tables import version_key


@pytest.mark.parametrize(
    "version,family",
    [
        ("2.0.60", "2.0"),
        ("2.0.1", "2.0"),
        ("2.1.30", "2.1.30"),
        ("2.1.149", "2.1.30"),
        ("2.1.160", "2.1.160"),
        ("2.1.250", "2.1.160"),
        ("2.1.330", "2.1.330"),
        ("2.1.999", "2.1.330"),
        ("3.0.0", "2.1.330"),
        ("1.0.100", "2.0"),  # older than every table: the nearest, the oldest
    ],
)
def test_a_version_gets_its_familys_table_or_the_nearest(version, family):
    assert family_of(version) == family


def test_an_unknown_version_is_read_with_the_newest_table():
    newest = max(TABLES, key=lambda t: version_key(t.since))
    assert rules_for(None) is newest and rules_for("") is newest


def test_removing_a_versions_own_table_falls_back_to_the_nearest_other():
    assert rules_for("2.1.330", exclude="2.1.330").family == "2.1.160"
    assert rules_for("2.0.60", exclude="2.0").family == "2.1.30"
    assert rules_for("2.1.160", exclude="2.1.160").family == "2.1.30"


def test_the_banner_names_the_version_when_nothing_else_does():
    assert screen_version("╭─── Claude Code v2.0.60 ───╮") == "2.0.60"
    assert screen_version(" ▐▛███▛█   Claude Code v2.1.330") == "2.1.330"
    assert screen_version("no banner here") is None


def test_a_banner_with_an_absurd_version_is_not_a_crash():
    """Found by the fuzz run: "Claude Code v1111…" with 6,706 digits raised ValueError (int conversion limit)."""
    from headspace_tui.detect.claude import classify_capture
    from headspace_tui.detect.claude.tables import version_key

    assert version_key("2.1.330") == (2, 1, 330)
    assert len(version_key("1" * 7000 + ".2.3")) <= 3
    observation = classify_capture(f"Claude Code v{'9' * 7000}.1.1\n\n❯ \n", command="claude")
    assert observation.state is not None
