"""Every shipped theme's state colours at least 4.5:1 (WCAG AA) against each of its own backgrounds.

The rendered table is checked in tests/ui/test_papercuts_37.py (the cell's
background as drawn); this is the theme files' promise for everything else
that draws a state on ``background``, ``surface`` or ``panel`` (the why and
timeline windows, the header).  headspace-16 uses the terminal's own ANSI
colours, which the terminal defines: no ratio can be computed for it, and it
is left out here (the UI test says what is checked of it instead).
"""

from __future__ import annotations

import pytest
from rich.color import Color, ColorTriplet

from headspace_tui.shared.theme_files import builtin_dir, load_themes


def luminance(colour) -> float:
    """WCAG 2 relative luminance of an sRGB colour (a rich ColorTriplet)."""

    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.red) + 0.7152 * channel(colour.green) + 0.0722 * channel(colour.blue)


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio (1 to 21)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_wcag_contrast_as_the_standard_computes_it():
    assert round(contrast(ColorTriplet(0, 0, 0), ColorTriplet(255, 255, 255)), 2) == 21.0
    assert round(contrast(ColorTriplet(0x77, 0x77, 0x77), ColorTriplet(255, 255, 255)), 2) == 4.48  # the classic near miss
    assert contrast(ColorTriplet(9, 9, 9), ColorTriplet(9, 9, 9)) == 1.0


SPECS = {spec.name: spec for spec in load_themes([builtin_dir()])[0]}


@pytest.mark.parametrize("name", sorted(name for name, spec in SPECS.items() if not spec.ansi))
def test_state_colours_against_every_background_of_the_theme(name):
    spec = SPECS[name]
    low = []
    for where in ("background", "surface", "panel"):
        ground = Color.parse(spec.colors[where]).get_truecolor()
        for state, colour in spec.states.items():
            ratio = contrast(Color.parse(colour).get_truecolor(), ground)
            if ratio < 4.5:
                low.append((state, where, round(ratio, 2)))
    assert not low, low


def test_every_shipped_theme_is_checked_or_said_to_be_the_terminals():
    assert {"headspace-dark", "headspace-light", "headspace-high-contrast", "headspace-16"} <= set(SPECS)
    assert [name for name, spec in SPECS.items() if spec.ansi] == ["headspace-16"]
