"""The Claude Code versions the corpus is recorded from, and how each is driven.

Everything that differs between versions *for the harness* lives here as
data: which renderers a version has and which environment selects each.
(What differs in how a version *draws* is the detector's business:
``headspace_tui/detect/claude/``.)

Measured on the binaries themselves:

* 2.0.31, 2.0.60, 2.1.30 and 2.1.100 (node ``cli.js``) draw inline only:
  they have no alternate-screen renderer.
* 2.1.160 (native) has the full-screen renderer behind
  ``CLAUDE_CODE_NO_FLICKER=1``; inline is its default.
* 2.1.250, 2.1.283 and 2.1.330 (native) draw on the alternate screen by default;
  ``CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN=1`` draws inline.  (The corpus test
  caught this: 2.1.250's "inline" screens first came out on the alternate screen.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")

# The version the live tests run and CI installs (keep .ci/run in step).
CLAUDE_VERSION = "2.1.330"

# version -> renderer -> the environment that selects it (nothing: the default)
RENDERERS: dict[str, dict[str, dict[str, str]]] = {
    "2.0.31": {"inline": {}},
    "2.0.60": {"inline": {}},
    "2.1.30": {"inline": {}},
    "2.1.100": {"inline": {}},
    "2.1.160": {"alt": {"CLAUDE_CODE_NO_FLICKER": "1"}, "inline": {}},
    "2.1.250": {"alt": {}, "inline": {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}},
    "2.1.283": {"alt": {}, "inline": {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}},
    "2.1.330": {"alt": {}, "inline": {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}},
    "2.1.332": {"alt": {}, "inline": {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}},
}
# The versions in snapshots/panes/, oldest first.
RECORDED = tuple(RENDERERS)
# When each was published on npm (``npm view @anthropic-ai/claude-code time``).
RELEASED = {
    "2.0.31": "2025-11-03",
    "2.0.60": "2025-12-06",
    "2.1.30": "2026-04-01",
    "2.1.100": "2026-04-10",
    "2.1.160": "2026-06-02",
    "2.1.250": "2026-08-28",
    "2.1.283": "2026-09-25",
    "2.1.330": "2026-11-20",
    "2.1.332": "2026-11-24",
}
# Versions recorded only in part: groups of scenarios, each at its sizes in
# its renderers; EVERY is each scenario that applies to the version.  2.1.332
# (issue 37): its approval menus offer auto mode ("Yes, and switch to auto
# mode", the plan's "Yes, and use auto mode"), which an approve key must never
# choose, also at 200x50; then (issue 42) the release canary's grid, every
# scenario at 80x24, 150x45 and 72x22 (the narrow split a laptop's tmux often
# gives a pane) on both renderers.
Group = tuple[tuple[str, ...], tuple[tuple[int, int], ...], tuple[str, ...]]
EVERY = "*"
AUTO_MODE = ("permission_bash", "permission_edit", "plan_exit_plan_mode", "plan_exit_short", "plan_exit_clear_context", "idle_fresh", "idle_half_typed")
# Issue 53: auto mode's own screens (Claude's default permission mode since
# 2.1.283, the first release that starts in it), narrow and wide, on both
# renderers: 2.1.283 holds only these.
AUTO_SCREENS = (
    "auto_idle_fresh",
    "auto_blocked_once",
    "auto_blocked_once_notice",
    "auto_blocked_working",
    "auto_pause_consecutive",
    "auto_pause_total",
    "auto_check_unavailable",
    "auto_gateway_dialog",
    "auto_gateway_notice",
)
PARTIAL: dict[str, tuple[Group, ...]] = {
    "2.1.283": (
        (tuple(n for n in AUTO_SCREENS if n != "auto_gateway_notice"), ((80, 24), (200, 50)), ("alt", "inline")),
        (("auto_gateway_notice",), ((200, 50),), ("alt", "inline")),
    ),
    "2.1.332": (
        ((EVERY,), ((80, 24), (150, 45), (72, 22)), ("alt", "inline")),
        (AUTO_MODE, ((200, 50),), ("alt",)),
        (AUTO_SCREENS, ((200, 50),), ("alt", "inline")),  # and at 80x24 (and the canary's sizes) with EVERY
    ),
}
# 2.0.31, 2.1.100 and 2.1.250 were recorded after the reader was written, and
# read blind first (docs/testing.md's "held out" numbers); then they joined.


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def renderers(version: str) -> tuple[str, ...]:
    """The renderers ``version`` has (an unlisted version: those of the nearest older listed one)."""
    return tuple(_profile(version))


def renderer_env(version: str, renderer: str) -> dict[str, str]:
    """The environment that makes ``version`` draw with ``renderer``; KeyError if it has none."""
    profile = _profile(version)
    if renderer not in profile:
        raise KeyError(f"Claude Code {version} has no {renderer!r} renderer (it has: {', '.join(profile)})")
    return dict(profile[renderer])


def _profile(version: str) -> dict[str, dict[str, str]]:
    return nearest_older(RENDERERS, version)


def nearest_older(table: Mapping[str, T], version: str) -> T:
    """``table``'s entry for ``version``; for an unlisted one, the newest listed version's before it (the oldest's when none is)."""
    if version in table:
        return table[version]
    older = [v for v in table if _key(v) <= _key(version)]
    return table[max(older, key=_key)] if older else table[min(table, key=_key)]
