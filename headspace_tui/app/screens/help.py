"""The ``?`` screen: every key, generated from the bindings themselves.

The rows come from the main screen's binding chain (table, screen, app) as
they are bound now, remapped keys included, each with its binding's
tooltip: the help can never disagree with what a key does.
"""

from __future__ import annotations

from functools import lru_cache

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ...shared.safe_text import clean
from .. import textual_private


def help_rows(screen: Screen) -> list[tuple[str, str]]:
    """(keys, what they do) for every binding with a tooltip on ``screen``'s chain, keys of one action together."""
    rows: dict[str, list[str]] = {}
    # The screen's keys (the agent's answers) first, then the table's moves, then the app's.
    chain = sorted(textual_private.binding_chain(screen), key=lambda link: link[0] is not screen)
    for node, bindings in chain:
        for binding in in_bound_order(node, bindings):
            if not binding.tooltip:
                continue
            keys = rows.setdefault(binding.tooltip, [])
            shown = screen.app.get_key_display(binding)
            if shown not in keys:
                keys.append(shown)
    return [(" ".join(keys), tooltip) for tooltip, keys in rows.items()]


def in_bound_order(node: DOMNode, bindings: BindingsMap) -> list[Binding]:
    """``bindings`` (``node``'s, keymap applied) in the order ``node`` binds them.

    Textual applies a keymap by taking out each binding it names and adding
    it back at the end of the map; the app always sets one (the configured
    keys, defaults included), so the map's order put A, the digits, Esc and
    [ ] before y/n/r/c/x.  A remapped binding keeps its action.
    """
    bound: dict[str, int] = {}
    # The node's own class first, as it lists them: a key it takes over from a base
    # class (the main screen's Tab, Textual's focus key) keeps the base's place in the map.
    own = [binding for binding in type(node).__dict__.get("BINDINGS", []) if isinstance(binding, Binding)]
    for place, binding in enumerate([*own, *(binding for _key, binding in textual_private.own_bindings(node))]):
        bound.setdefault(binding.action, place)  # an action's first key (↓ before j)
    return sorted((binding for _key, binding in bindings), key=lambda binding: bound.get(binding.action, len(bound)))


class RenderedOnce:
    """A Rich renderable laid out once per width, then replayed.

    Textual lays a Static's content out several times each time the help
    opens (to measure it, for its height, for its lines, again after the
    screen resumes), and a Rich table of every key is costly to lay out:
    it was most of what ``?`` cost, and under load a key waited for it.
    The output is the table's own, unchanged.
    """

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._lines: dict[int, list[Segment]] = {}
        self._measures: dict[int, Measurement] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if width not in self._lines:
            self._lines[width] = list(console.render(self.renderable, options))
        yield from self._lines[width]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = options.max_width
        if width not in self._measures:
            self._measures[width] = Measurement.get(console, options, self.renderable)
        return self._measures[width]


@lru_cache(maxsize=4)
def keys_table(rows: tuple[tuple[str, str], ...]) -> RenderedOnce:
    """The help's two columns, keys and what they do; the same rows (the same bindings) are laid out once for every opening."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for keys, text in rows:
        table.add_row(Text(clean(keys)), Text(text))
    return RenderedOnce(table)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 100%; border: round $primary; padding: 0 1; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def __init__(self, rows: list[tuple[str, str]], config_path: str) -> None:
        super().__init__()
        self.rows = tuple(rows)
        self.config_path = config_path

    def on_screen_resume(self) -> None:
        """Each opening starts at the top (the screen is kept between openings: ``Windows.help``)."""
        self.query_one(VerticalScroll).scroll_home(animate=False)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("headspace keys", style="bold"))
            yield Static(keys_table(self.rows))
            yield Static(
                Text.assemble(
                    "\nKeys go only to the selected pane, and only if it still shows the prompt you saw.\n",
                    "Remap keys in ",
                    clean(self.config_path),
                    " under [keys]. Ctrl+P opens the palette. Esc closes this.",
                ),
                classes="dim",
            )
