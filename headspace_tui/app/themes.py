"""Theme files into Textual's theme system, and the theme the user chose.

Each ``ThemeSpec`` (shared/theme_files.py) becomes a Textual ``Theme`` whose extra
variables carry the colour of every agent state (``$state-permission``
...), so the stylesheet and the table colour states from the theme.  A
colour Textual cannot parse makes that theme one line and unused; the
built-in default is always there.

The theme picked in the palette is remembered in the state dir
(``ui.json``); it is used until the config's ``theme`` setting changes
(a newer, deliberate choice).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from rich.style import Style
from textual.color import Color, ColorParseError
from textual.theme import Theme

from ..model import AgentState
from ..shared.safe_files import Unreadable, loads, read_regular
from ..shared.theme_files import ThemeError, ThemeSpec
from ..state.eventlog import default_path as events_path

log = logging.getLogger(__name__)

# For themes that are not headspace's (Textual's own, chosen in the palette):
# ANSI names, which every terminal shows in its own palette.
STATE_DEFAULTS = {
    "permission": "ansi_bright_yellow",
    "question": "ansi_bright_magenta",
    "plan": "ansi_bright_cyan",
    "input": "ansi_bright_blue",
    "error": "ansi_bright_red",
    "limited": "ansi_bright_yellow",
    "working": "ansi_green",
    "starting": "ansi_cyan",
    "idle": "ansi_default",
    "exited": "ansi_bright_black",
    "unknown": "ansi_bright_black",
}


def to_textual(spec: ThemeSpec) -> Theme:
    """The Textual theme for ``spec``; ThemeError (one line) if a colour is not one."""
    variables = {**{f"state-{k}": v for k, v in spec.states.items()}, **spec.variables}
    for key, value in {**spec.colors, **variables}.items():
        if key.endswith("text-style"):
            continue
        try:
            Color.parse(value)
        except ColorParseError:
            raise ThemeError(f"{spec.source}: {key} = {value!r} is not a colour; not loaded") from None
    return Theme(
        name=spec.name,
        dark=spec.dark,
        ansi=spec.ansi,
        variables=variables,
        primary=spec.colors["primary"],
        secondary=spec.colors.get("secondary"),
        accent=spec.colors.get("accent"),
        foreground=spec.colors.get("foreground"),
        background=spec.colors.get("background"),
        surface=spec.colors.get("surface"),
        panel=spec.colors.get("panel"),
        boost=spec.colors.get("boost"),
        warning=spec.colors.get("warning"),
        error=spec.colors.get("error"),
        success=spec.colors.get("success"),
    )


def state_style(variables: dict[str, str], state: AgentState, *, no_color: bool) -> Style:
    """How a state's word looks: its theme colour; bold when it needs you, and reversed where there is no colour.

    Without colour, the rows that need you must still be the most prominent
    thing on screen: bold and reverse survive NO_COLOR.
    """
    try:
        color = Color.parse(variables.get(f"state-{state.value}", STATE_DEFAULTS[state.value])).rich_color
    except ColorParseError:
        color = None
    needs = state.needs_you
    dim = state in (AgentState.EXITED, AgentState.UNKNOWN)
    return Style(color=None if no_color else color, bold=needs, reverse=needs and no_color, dim=dim and no_color)


def warning_style(variables: dict[str, str], *, no_color: bool) -> Style:
    """The theme's warning colour, for marks that are not a state (a request Claude is retrying)."""
    if no_color:
        return Style(italic=True)
    try:
        return Style(color=Color.parse(variables.get("warning", "ansi_yellow")).rich_color)
    except ColorParseError:
        return Style()


# -- the user's choice ----------------------------------------------------------------
def choice_path(env: dict[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/headspace/ui.json``: beside the event log and the log file."""
    return events_path(env).with_name("ui.json")


def remembered(path: Path, config_theme: str) -> str | None:
    """The theme last picked in the palette, unless the config's ``theme`` changed since."""
    try:
        data = loads(read_regular(path, 4096), what=str(path))
    except (OSError, Unreadable, ValueError):
        return None
    if not isinstance(data, dict) or data.get("config_theme", "") != config_theme:
        return None
    theme = data.get("theme")
    return theme if isinstance(theme, str) else None


def remember(path: Path, theme: str, config_theme: str) -> None:
    """Keep the palette's choice for the next start (a failure is logged, never shown as an error)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"theme": theme, "config_theme": config_theme}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        log.warning("could not remember the theme in %s", path, exc_info=True)
