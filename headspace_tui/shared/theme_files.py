"""Theme files: data, not code.

A theme is a small TOML file (the shipped ones are in the top-level
``themes/`` folder, installed as ``headspace_tui/themes``; a user's go in
``$XDG_CONFIG_HOME/headspace/themes/``)::

    name = "headspace-dark"
    dark = true
    [colors]            # Textual's theme colours: primary, background, ...
    primary = "#5e9ad6"
    [states]            # the colour of every agent state
    permission = "#ffb454"
    [variables]         # optional: any other Textual CSS variable
    block-cursor-background = "#ffffff"

This module only reads and checks the structure (no Textual here: the app
turns a ``ThemeSpec`` into a Textual theme and checks each colour).  A file
that cannot be used is one line naming it, and the others still load.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..model import AgentState
from .config import default_path as config_path
from .safe_files import Unreadable, read_regular

MAX_THEME = 64 << 10
MAX_THEMES = 64  # files read from one folder
DEFAULT_THEME = "headspace-dark"
COLOR_KEYS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel", "boost", "warning", "error", "success")
STATES = tuple(state.value for state in AgentState)
# States added after themes were first written, and the state whose colour a theme without them gives them.
LATER_STATES = {"limited": "permission"}


class ThemeError(Exception):
    """A theme file that cannot be used, said in one line that names it."""


@dataclass(frozen=True)
class ThemeSpec:
    name: str
    dark: bool
    colors: Mapping[str, str]
    states: Mapping[str, str]  # AgentState value -> colour
    variables: Mapping[str, str] = field(default_factory=dict)
    ansi: bool = False
    source: str = ""  # the file it came from


def parse_theme(data: dict, where: str) -> ThemeSpec:
    """Check a theme file's structure; colours are checked where they are used (the app)."""
    unknown = sorted(set(data) - {"name", "dark", "ansi", "colors", "states", "variables"})
    if unknown:
        raise ThemeError(f"{where}: unknown key {unknown[0]!r}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
        raise ThemeError(f"{where}: name must be letters, digits, '-' or '_'")
    dark = data.get("dark", True)
    ansi = data.get("ansi", False)
    if not isinstance(dark, bool) or not isinstance(ansi, bool):
        raise ThemeError(f"{where}: dark and ansi must be true or false")
    colors = _table(data, "colors", where)
    if "primary" not in colors:
        raise ThemeError(f"{where}: [colors] needs at least primary")
    bad = sorted(set(colors) - set(COLOR_KEYS))
    if bad:
        raise ThemeError(f"{where}: [colors] has unknown colour {bad[0]!r} (known: {', '.join(COLOR_KEYS)})")
    states = dict(_table(data, "states", where))
    for state, like in LATER_STATES.items():
        if state not in states and like in states:
            states[state] = states[like]  # a theme written before the state existed: drawn as its nearest kin
    missing = [state for state in STATES if state not in states]
    if missing:
        raise ThemeError(f"{where}: [states] needs a colour for {missing[0]!r}")
    bad = sorted(set(states) - set(STATES))
    if bad:
        raise ThemeError(f"{where}: [states] has unknown state {bad[0]!r}")
    variables = _table(data, "variables", where, required=False)
    return ThemeSpec(name=name, dark=dark, colors=colors, states=states, variables=variables, ansi=ansi, source=where)


def _table(data: dict, key: str, where: str, *, required: bool = True) -> dict[str, str]:
    table = data.get(key, None if required else {})
    if not isinstance(table, dict):
        raise ThemeError(f'{where}: [{key}] must be a table of name = "colour"')
    for name, value in table.items():
        if not isinstance(value, str) or not value.strip() or len(value) > 64:
            raise ThemeError(f'{where}: [{key}] {name} must be a colour like "#ffb454" or "ansi_yellow"')
    return dict(table)


def read_theme(path: Path) -> ThemeSpec:
    """One theme file, read defensively (a regular file, size capped, UTF-8 TOML)."""
    try:
        raw = read_regular(path, MAX_THEME, follow=True).decode("utf-8")
        data = tomllib.loads(raw)
    except (OSError, Unreadable) as exc:
        raise ThemeError(f"theme {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ThemeError(f"theme {path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"theme {path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ThemeError(f"theme {path}: nested too deeply to read") from None
    return parse_theme(data, f"theme {path}")


def builtin_dir() -> Path:
    """The shipped themes: inside the installed package, or the checkout's top-level ``themes/``."""
    package = Path(__file__).resolve().parents[1]  # headspace_tui/ (this module is in shared/)
    installed = package / "themes"
    return installed if installed.is_dir() else package.parent / "themes"


def user_dir() -> Path:
    """``themes/`` beside the user's config.toml (``$XDG_CONFIG_HOME/headspace/themes``)."""
    return config_path().parent / "themes"


def load_themes(folders: list[Path]) -> tuple[list[ThemeSpec], list[str]]:
    """Every usable theme in ``folders`` (later folders override earlier names), and one line per file that is not."""
    themes: dict[str, ThemeSpec] = {}
    problems: list[str] = []
    for folder in folders:
        try:
            paths = sorted(p for p in folder.iterdir() if p.suffix == ".toml")[:MAX_THEMES]
        except OSError:
            continue  # no such folder: nothing to load
        for path in paths:
            try:
                spec = read_theme(path)
            except ThemeError as exc:
                problems.append(f"{exc}; not loaded")
                continue
            themes[spec.name] = spec
    return list(themes.values()), problems
