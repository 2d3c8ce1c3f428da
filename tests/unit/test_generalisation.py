"""A Claude Code version nobody has recorded yet is still read right.

For each recorded version the detector reads every screen as if that version
were new: once with the nearest *other* version family's table (its own
removed) and once with the structural rules alone (no version's words).
Measured, not assumed: the numbers are printed (``pytest -s``) and
docs/testing.md shows them (``python -m tests.harness.accuracy``).
"""

from __future__ import annotations

import pytest

from headspace_tui.detect.claude import BASE, family_of, rules_for
from tests.harness.accuracy import measure
from tests.harness.versions import RECORDED


@pytest.mark.parametrize("version", RECORDED)
def test_structure_alone_reads_at_least_95_percent_of_each_version(version):
    score = measure(version, BASE)
    print(f"\n{version} structural only: {score.percent(score.state_right):.1f}% state, {score.percent(score.full_right):.1f}% in full")
    assert score.total > 0
    assert score.percent(score.state_right) >= 95.0, score.misses
    assert score.menu_as_not_menu == 0, "a numbered menu must never read as starting or idle"


@pytest.mark.parametrize("version", RECORDED)
def test_without_its_own_table_a_version_never_hides_an_agent_that_needs_you(version):
    for rules in (rules_for(version, exclude=family_of(version)), BASE):
        score = measure(version, rules)
        assert score.menu_as_not_menu == 0, score.misses
        assert score.needs_you_missed == 0, score.misses
