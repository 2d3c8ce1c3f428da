"""doctor says of each process-wide patch of Textual whether it applied, and whether to the Textual it was checked against; and of the gc pacing."""

from __future__ import annotations

import dataclasses
import sys

from headspace_tui.app import gc_pace, patches
from headspace_tui.cli.doctor import OK, WARN, check_patches, report

PINNED = patches.PINNED["textual"]


def lines(checks) -> list[tuple[str, str, str]]:
    return [(c.name, c.verdict, c.detail) for c in checks]


def test_doctor_says_each_patch_applied_to_the_pinned_textual_and_the_gc_pacing():
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert lines(check_patches()) == [
        ("patch: styles cache", OK, f"applied to Textual {PINNED}: StylesCache.get_inner_outer cached on its two colours, not on each widget's StylesCache"),
        ("patch: strips", OK, f"applied to Textual {PINNED}: a Strip that is its own crop or division is not kept in its own cache"),
        ("patch: LRU cache clear", OK, f"applied to Textual {PINNED}: a cleared LRUCache unlinks its ring, freed at once"),
        ("gc pacing", OK, f"Python {here}, 3 generations: paced as measured (app/gc_pace.py)"),
    ]


def test_another_textual_is_a_warning_for_each_patch_with_the_fix(monkeypatch):
    monkeypatch.setattr(patches, "installed", lambda package: "8.3.0")
    found = check_patches()
    assert lines(found)[1] == ("patch: strips", WARN, f"applied, but Textual 8.3.0 is not the pinned {PINNED}: patch 'strips' not checked against it")
    assert [c.verdict for c in found[:3]] == [WARN, WARN, WARN]
    text = report(found)
    assert f"warn  patch: styles cache     applied, but Textual 8.3.0 is not the pinned {PINNED}: patch 'styles cache' not checked against it" in text
    assert f"fix: install the pinned textual=={PINNED} (pip install textual=={PINNED}), or re-check the patch (app/textual_private.py) against this one" in text


def test_changed_code_and_a_patch_that_did_not_apply_are_warnings(monkeypatch):
    styles, strips, lru = patches.PATCHES
    changed = dataclasses.replace(strips, relies_on=(("textual.strip", "Strip.divide", "0" * 16),))
    refused = dataclasses.replace(lru, apply=lambda: None, applied=lambda: False)
    broken = dataclasses.replace(styles, apply=lambda: 1 / 0)
    monkeypatch.setattr(patches, "PATCHES", (broken, changed, refused))
    assert lines(check_patches())[:3] == [
        ("patch: styles cache", WARN, "not applied: ZeroDivisionError: division by zero"),
        ("patch: strips", WARN, f"applied, but Textual {PINNED} changed Strip.divide since the patch was checked: re-check it"),
        ("patch: LRU cache clear", WARN, f"not applied: the names it needs are not where it expects them (Textual {PINNED}; checked against {PINNED})"),
    ]
    monkeypatch.setattr(patches, "PATCHES", (dataclasses.replace(refused, relies_on=(("textual.cache", "LRUCache.clear", "0" * 16),)),))
    assert lines(check_patches())[0][2] == f"not applied: Textual changed LRUCache.clear (Textual {PINNED}; checked against {PINNED})"


def test_gc_pacing_on_an_unmeasured_python_is_a_warning(monkeypatch):
    monkeypatch.setattr(gc_pace, "MEASURED_ON", ((3, 99),))
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert lines(check_patches())[-1] == (
        "gc pacing",
        WARN,
        f"Python {here}: the pacing was measured on 3.99 only: not applied (the interpreter paces its own collections; keys may wait for one)",
    )
