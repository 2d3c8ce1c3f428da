"""The agent table: one row per agent, the ones that need you on top.

Rows are keyed by pane id, so updates land in place (``update_cell``) and the
cursor stays on the agent the user selected even when rows re-order.  A
changed cell repaints that cell alone (DataTable's own ``update_cell``
repaints the whole table: over ssh, a seconds counter would resend every
row every second).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from ...api.facade import sort_key
from ...detect.clock import elapsed  # how long, as every time on screen says it (also `headspace status`)
from ...detect.families import label_of
from ...model import Agent
from ...notifications.snooze import SNOOZED_RANK, Snooze, snooze_words
from ...shared.safe_text import clean, cleaned
from ...state.wait_words import MODE_BADGES, wait_parts
from ...state.wait_words import RETRYING as RETRYING_TONE
from .. import textual_private
from .state_style import state_text

COLUMNS = (
    ("host", "Host"),
    ("kind", "Kind"),
    ("agent", "Agent"),
    ("folder", "Folder"),
    ("state", "State"),
    ("time", "Time"),
    ("context", "Ctx"),
    ("change", "Change"),
    ("waiting", "Waiting for"),
)
COLUMN_INDEX = {key: i for i, (key, _) in enumerate(COLUMNS)}
TIME = COLUMN_INDEX["time"]
AGENT = COLUMN_INDEX["agent"]
STATE = COLUMN_INDEX["state"]


RETRYING = "yellow"  # the retrying mark's style until the app's theme gives its warning colour

# The orders the palette offers: the column, and what its order means.
SORTS = {
    "state": "needs you first, longest waiting first",
    "time": "longest in its state first",
    "target": "by target",
    "folder": "by folder",
    "context": "fullest context first (unknown last)",
    "cost": "highest estimated cost first (unknown last)",
}


def kind_of(agent: Agent) -> str:
    """Which kind of agent the row is, as the Kind column shows it ("Claude", "Codex", "Gemini", "opencode")."""
    return label_of(agent.family)


def waiting_for(agent: Agent, retrying: Style | str = RETRYING) -> Text:
    """What the agent waits for, in a few words: tool and command, the question, the error.

    ``retrying`` is how a request Claude is retrying is marked (the theme's
    warning colour): the agent works, nothing waits for you, but the user
    should see that its turn is not getting through.

    Everything here comes from Claude's screen, hooks or files: cleaned of
    control characters (``Text`` is never read as markup).
    """
    return cleaned(_waiting_for(agent, retrying))


def _waiting_for(agent: Agent, retrying: Style | str) -> Text:
    """The one set of words (state/wait_words.py) in the theme's styles."""
    return Text.assemble(*((part.text, retrying if part.tone == RETRYING_TONE else part.tone) for part in wait_parts(agent)))


def _plain(value) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def folder_of(agent: Agent) -> str:
    """The folder's last component (the part that tells projects apart), or Claude's session name."""
    path = agent.cwd.rstrip("/")
    return clean(path.rsplit("/", 1)[-1] if path else agent.name)


def fit(text: Text | str, width: int, *, keep_end: int = 0) -> Text:
    """``text`` cut to ``width`` cells with an ellipsis where it was cut.

    ``keep_end`` keeps that many cells of the end (a target's ":0.1" says
    which pane; the session name before it is what may be cut).
    """
    text = text if isinstance(text, Text) else Text(text)
    if text.cell_len <= width:
        return text
    if width <= 1:
        return Text("…"[:width])
    keep_end = min(keep_end, width - 2) if keep_end else 0
    head = text.copy()
    head.truncate(width - 1 - keep_end)
    cut = Text.assemble(head, ("…", "dim"))
    if keep_end:
        cut.append_text(text[len(text.plain) - keep_end :])
    return cut


# Column layout.  State and Time never shrink; the folder goes first when
# space is short, then the target is cut (keeping its pane address) down to a
# floor, and "Waiting for" takes the rest.
STATE_WIDTH = 12  # "▲ permission"
TIME_WIDTH = 6  # "10m10s", "23h59m", "12d03h"
TARGET_FLOOR, TARGET_CAP = 12, 32
FOLDER_CAP = 20
HOST_CAP = 12
CONTEXT_WIDTH = 4  # "100%"
CONTEXT_WARN, CONTEXT_FULL = 80, 90  # % of the model's window: amber from the first, red from the second
CHANGE_CAP = 18  # "+120 −45 · 3 files"; a bigger change is cut (the diff view, d, has it whole)
WAITING_FLOOR = 20
PADDING = 2  # a DataTable cell's padding, both sides
CELL_CACHE = 1024  # rendered cells kept (DataTable keeps 10,000): 100 rows x 6 columns, with and without the cursor
ROW_CACHE = 256  # rendered rows and lines kept (DataTable keeps 1,000)


@dataclass(frozen=True)
class Columns:
    """The widths the table's columns get at one width (0: the column is left out)."""

    target: int
    folder: int
    waiting: int
    host: int = 0
    kind: int = 0
    change: int = 0
    context: int = 0

    @property
    def keys(self) -> tuple[str, ...]:
        widths = (("folder", self.folder), ("host", self.host), ("kind", self.kind), ("change", self.change), ("context", self.context))
        left_out = {key for key, width in widths if not width}
        return tuple(key for key, _ in COLUMNS if key not in left_out)


def plan_columns(
    width: int,
    targets: list[str],
    folders: list[str],
    hosts: Sequence[str] = (),
    *,
    unreached: Sequence[str] = (),
    kinds: Sequence[str] = (),
    changes: Sequence[str] = (),
    contexts: bool = False,
) -> Columns:
    """Widths for a table ``width`` cells wide showing these targets and folders.

    The host column is there only when some agent is not local, as wide as
    the longest host name (at most ``HOST_CAP``).  Where the folder must go,
    no two rows may read the same for it (two sessions named alike, cut to
    the same "project…:0.0"): the target is widened, or the folder kept, as
    narrow as tells them apart, whichever leaves "Waiting for" wider.
    ``unreached``: hosts never reached, whose one row needs the Host column
    and nothing else (its Agent cell is cut to the agents' width).  The Kind
    column (Claude, Codex, Gemini, opencode) is there only when the agents
    are of more than one kind: a table of Claudes alone reads as before.
    The Change column (this turn's ``+12 −3 · 2 files``) is there only
    when some agent changed something, as wide as the widest (at most
    ``CHANGE_CAP``): a table of agents that changed nothing reads as before.
    The Ctx column (the share of its model's window the agent's context
    fills) is there only when ``contexts``: some agent's is known.
    """
    every_host = [*hosts, *unreached]
    host = min(HOST_CAP, max(len("Host"), *(len(h) for h in every_host))) if any(h != "local" for h in every_host) else 0
    kind = max(len("Kind"), *(len(k) for k in kinds)) if len(set(kinds)) > 1 else 0
    change = min(CHANGE_CAP, max(len("Change"), *(cell_len(c) for c in changes))) if any(changes) else 0
    context = CONTEXT_WIDTH if contexts else 0
    taken = sum(column + PADDING for column in (host, kind, change, context) if column)
    planned = _plan(width - taken, targets, folders, hosts if host and hosts else [""] * len(targets))
    return Columns(planned.target, planned.folder, planned.waiting, host, kind, change, context)


def _plan(width: int, targets: list[str], folders: list[str], hosts: Sequence[str]) -> Columns:
    target_want = min(TARGET_CAP, max([TARGET_FLOOR // 2, *(len(t) for t in targets)]))
    folder_want = min(FOLDER_CAP, max([0, *(len(f) for f in folders)]))
    if folder_want:
        folder_want = max(folder_want, len("Folder"))  # its header whole
    room = width - STATE_WIDTH - TIME_WIDTH - 4 * PADDING  # target and waiting, padding included above
    if folder_want and room - PADDING - folder_want - target_want >= WAITING_FLOOR:
        return Columns(target_want, folder_want, room - PADDING - folder_want - target_want)
    target = max(min(target_want, TARGET_FLOOR), min(target_want, room - WAITING_FLOOR))
    narrow = Columns(target, 0, max(WAITING_FLOOR // 2, room - target))
    if _tells_apart(narrow, targets, folders, hosts):
        return narrow
    least = WAITING_FLOOR // 2  # what "Waiting for" may shrink to, so that rows read apart
    wider = (Columns(t, 0, room - t) for t in range(target + 1, target_want + 1) if room - t >= least)
    folder = (Columns(target, f, room - PADDING - f - target) for f in range(len("Folder"), folder_want + 1) if room - PADDING - f - target >= least)
    first = [next((c for c in candidates if _tells_apart(c, targets, folders, hosts)), None) for candidates in (wider, folder)]
    found = [c for c in first if c is not None]
    return max(found, key=lambda c: c.waiting) if found else narrow


def _tells_apart(columns: Columns, targets: list[str], folders: list[str], hosts: Sequence[str]) -> bool:
    """Whether every row reads differently in its host, agent and folder cells at these widths."""
    rows = {(host, _cut(target, columns.target, target_end(target)), _cut(folder, columns.folder, 0) if columns.folder else "") for host, target, folder in zip(hosts, targets, folders, strict=True)}
    return len(rows) == len(targets)


def _cut(text: str, width: int, keep_end: int) -> str:
    """``fit(text, width, keep_end=keep_end).plain``, without building Text for the common ASCII name (planning tries many widths)."""
    if not text.isascii():
        return fit(text, width, keep_end=keep_end).plain
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    keep_end = min(keep_end, width - 2) if keep_end else 0
    return text[: width - 1 - keep_end] + "…" + (text[len(text) - keep_end :] if keep_end else "")


CHOICE_KEPT = 24  # cells of an answer's chosen option kept when its line is cut ("→ 4. No")


def choice_end(text: str) -> int:
    """How much of ``text``'s end to keep when it is cut: an answer's chosen option (``… → 4. No``), so approve and deny never read the same."""
    what, arrow, chosen = text.rpartition(" → ")
    if not arrow or not what or len(chosen) + 2 > CHOICE_KEPT:
        return 0
    return len(chosen) + 2  # "→ " and the option


BLOCKED_COMMAND = 16  # cells of a blocked call's command a cut row keeps before its reason
BLOCKED_REASON_MIN = 8  # cells of its reason worth keeping at the end ("— sends…" says little less)


def kept_end(agent: Agent, shown: str, width: int) -> int:
    """How much of a row's "Waiting for" end its cut keeps: an answer's outcome after the wait ("… · not sent"), else its chosen option.

    Only an outcome that leaves the column's first half to what it waits
    for ("sent; waiting for the pane to show it" would take all of a narrow one).
    """
    said = f" · {agent.delivery}"
    if agent.delivery and shown.endswith(said):
        return len(said) if len(said) <= width // 2 else 0
    blocked = agent.blocked_this_turn
    if blocked and blocked[-1].reason and shown.startswith(("⊘ ", f"{MODE_BADGES.get(agent.mode, ('',))[0]} · ⊘ ")):
        # A blocked call's reason is why it matters ("— sends data out"), but the command is what was blocked: it keeps
        # BLOCKED_COMMAND cells first (cut at 80 columns it was hidden whole), the reason the rest, if any is left.
        end = shown[shown.rfind(" — ") :]
        head = shown.find(": ") + 2 if ": " in shown else 0
        room = width - 1 - head - BLOCKED_COMMAND
        keep = min(len(end), room)
        return keep if keep >= BLOCKED_REASON_MIN else 0
    return choice_end(shown)


def _planned(agent: Agent) -> tuple[str | bool, ...]:
    """What of an agent the columns' widths depend on: a change here re-plans them (the same widths then leave the rows alone)."""
    return (agent.target, agent.cwd, agent.name, agent.host, agent.family, agent.change, context_pct(agent) is not None)


def context_pct(agent: Agent) -> int | None:
    """The share of its model's window the agent's context fills (None: not known)."""
    return agent.usage.context_pct if agent.usage is not None else None


def context_text(agent: Agent) -> Text:
    """Its Ctx cell: "73%", amber from CONTEXT_WARN, red from CONTEXT_FULL (theme-free: the warning is in the number too)."""
    pct = context_pct(agent)
    if pct is None:
        return Text("")
    style = "bold red" if pct >= CONTEXT_FULL else "yellow" if pct >= CONTEXT_WARN else "dim"
    return Text(f"{pct}%", style=style)


def target_end(target: str) -> int:
    """How much of a target's end its cut keeps: the pane address (":0.1"), which says which pane."""
    return len(target) - target.rfind(":") if ":" in target else 0


class AgentTable(DataTable):
    """Agents, ordered by who needs you; updates in place.

    The columns are fitted to the table's width whenever it changes (a
    resized terminal, a layout switch) or a longer name arrives: state and
    time are always shown in full, the folder goes first, the target is cut
    in its middle.  Until the user moves the cursor it stays on the top row,
    the agent that needs you most; after that it follows the agent it is on
    as rows re-order.
    """

    DEFAULT_CSS = """
    AgentTable { height: 1fr; overflow-x: hidden; scrollbar-size-vertical: 1; }
    """

    _cell_only = False  # inside set_cell: DataTable's whole-table repaint is skipped

    BINDINGS = [
        Binding("down,j", "cursor_down", "down", show=False, tooltip="select the next agent"),
        Binding("up,k", "cursor_up", "up", show=False, tooltip="select the previous agent"),
        Binding("g,home", "scroll_top", "first", show=False, tooltip="select the first agent (the one that needs you most)"),
        Binding("G,end", "scroll_bottom", "last", show=False, tooltip="select the last agent"),
        Binding("pagedown", "page_down", "page down", show=False, tooltip="a page down"),
        Binding("pageup", "page_up", "page up", show=False, tooltip="a page up"),
    ]

    def __init__(self, *, clock: Callable[[], float] = time.time, show_changes: bool = True, show_context: bool = True, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._smaller_caches()
        self.clock = clock
        self.show_changes = show_changes  # the Change column (the config's change_column; a key hides it)
        self.show_context = show_context  # the Ctx column (the config's context_column; a key hides it)
        self.agents: dict[str, Agent] = {}
        self.filter_text = ""
        self.pinned = False  # the user chose a row: follow it, not the top
        # The agent the cursor reached by itself (the inbox moving on, a row
        # re-ordered under it), not by the user's own move, and when
        # (time.monotonic()): a key that answers is not applied to it for a
        # reaction time (MainScreen).
        self.arrival: tuple[str, float] | None = None
        # Per pane, the prompt its row shows (its ``request``) and when the row
        # first showed it (time.monotonic(), again once painted): a key pressed
        # before that, or less than a reaction time after, was meant for what
        # the row showed before (MainScreen).
        self._prompts_shown: dict[str, tuple[str, float]] = {}
        self._order: list[str] = []
        self._cells: dict[str, tuple] = {}  # what each row shows now
        self._columns: Columns | None = None
        self._replan = True  # the columns must be fitted again before the next rows are drawn
        self._planned_for = 0  # the width the columns were fitted to (render_lines draws nothing for another)
        self._replan_asked = False
        self._names: dict[str, tuple[str | bool, ...]] = {}  # per pane: what the plan saw (names: ``_planned``)
        self.state_styles: dict = {}  # per state, from the app's theme (restyle)
        self.retrying_style: Style | str = RETRYING  # the theme's warning colour (restyle)
        self.snooze_of: Callable[[Agent], Snooze | None] = lambda _agent: None  # the screen's snoozes
        self.sort_column = "state"  # a key of SORTS
        self.sort_reverse = False

    def _smaller_caches(self) -> None:
        """Keep DataTable's render caches to what a screen of rows needs.

        DataTable keeps up to 10,000 rendered cells and 1,000 rendered rows
        and lines; here every cell that changes (a ticking time, churning
        agents) is a new entry, so they fill up, and each entry is lists of
        Segments and Strips (a Strip carries seven small caches of its own).
        Under churn that was hundreds of thousands of objects that every
        full garbage collection walks: pauses grew to 100-250 ms, and a key
        pressed then waited for it.  A few screens' worth is plenty.
        """
        textual_private.shrink_render_caches(self, CELL_CACHE, ROW_CACHE)

    # -- one cell, one repaint ------------------------------------------------------------
    def set_cell(self, pane_id: str, column: str, value) -> None:
        """``update_cell``, repainting that cell only.

        DataTable stores the value and invalidates its caches; its own
        ``refresh()`` of the whole widget is skipped and the cell's region is
        refreshed instead.  (Only the cell's text changes here: widths are
        the planned ones, so no other cell moves.)
        """
        self._cell_only = True
        try:
            self.update_cell(pane_id, column, value)
        finally:
            self._cell_only = False
        self.refresh_coordinate(Coordinate(self.get_row_index(pane_id), self.get_column_index(column)))

    def refresh(self, *regions, repaint: bool = True, layout: bool = False, recompose: bool = False):
        if self._cell_only and not regions and repaint and not layout and not recompose:
            return self  # set_cell refreshes the cell's region itself
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    # -- the user's own moves pin the selection -------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Enter is the screen's "jump" (one binding, shown in the footer and help), not a row "select".
        return action != "select_cursor"

    def _pin(self) -> None:
        self.pinned = True
        self.arrival = None  # the user's own move: they chose what is under the cursor

    def action_cursor_up(self) -> None:
        self._pin()
        super().action_cursor_up()

    def action_cursor_down(self) -> None:
        self._pin()
        super().action_cursor_down()

    def action_page_up(self) -> None:
        self._pin()
        super().action_page_up()

    def action_page_down(self) -> None:
        self._pin()
        super().action_page_down()

    def action_scroll_top(self) -> None:
        self._pin()
        super().action_scroll_top()

    def action_scroll_bottom(self) -> None:
        self._pin()
        super().action_scroll_bottom()

    def on_click(self, event: events.Click) -> None:
        """A click on a row is the user's own move (Textual dispatches this before DataTable's own click handling)."""
        self._pin()

    def select(self, pane_id: str, *, by_itself: bool = False) -> bool:
        """Put the cursor on ``pane_id``'s row (if it is shown); it stays with that agent.

        ``by_itself``: headspace moved it (the inbox after an answer), not
        the user: noted in ``arrival``.
        """
        if pane_id not in self._order:
            return False
        self.pinned = True
        self.arrival = None
        self.move_cursor(row=self._order.index(pane_id), animate=False)
        if by_itself:
            self._arrived(pane_id)
        return True

    def _arrived(self, pane_id: str) -> None:
        """``pane_id`` came under the cursor by itself: noted now, and again once the screen shows it.

        Under load the paint comes late, and the user can only have read the
        new agent from then on: the reaction time counts from the later one.
        """
        now = time.monotonic()
        self.arrival = (pane_id, now)

        def shown() -> None:
            if self.arrival == (pane_id, now):
                self.arrival = (pane_id, time.monotonic())

        self.call_after_refresh(shown)

    @property
    def selected_pane_id(self) -> str | None:
        if not self._order or self.cursor_row < 0 or self.cursor_row >= len(self._order):
            return None
        return self._order[self.cursor_row]

    @property
    def order(self) -> list[str]:
        """The pane ids of the rows shown, top first."""
        return list(self._order)

    def _visible(self, agent: Agent) -> bool:
        if not self.filter_text:
            return True
        needle = self.filter_text.lower()
        haystack = " ".join([agent.target, agent.cwd, agent.name, agent.state.value, kind_of(agent), waiting_for(agent).plain]).lower()
        return needle in haystack

    def prompt_shown_at(self, agent: Agent) -> float | None:
        """When this table's row began to show ``agent``'s prompt in place of something else (time.monotonic()); 0.0: from the row's
        first frame; None: it shows no prompt (or not this one yet)."""
        shown = self._prompts_shown.get(agent.pane_id)
        return shown[1] if shown is not None and agent.observation.prompt is not None and shown[0] == agent.observation.request else None

    def _note_prompt(self, agent: Agent, *, first: bool) -> None:
        """``agent``'s row may show another prompt now: noted now, and again once the screen shows it (as ``_arrived``).

        ``first``: the row's first frame (a new agent, the table loaded): its
        prompt is dated 0.0, shown from the start; only a prompt that
        replaces what the row showed before can catch a key meant for that.
        """
        request = agent.observation.request if agent.observation.prompt is not None else ""
        pane_id = agent.pane_id
        if not request:
            self._prompts_shown.pop(pane_id, None)
            return
        shown = self._prompts_shown.get(pane_id)
        if shown is not None and shown[0] == request:
            return
        if first:
            self._prompts_shown[pane_id] = (request, 0.0)
            return
        now = time.monotonic()
        self._prompts_shown[pane_id] = (request, now)

        def painted() -> None:
            if self._prompts_shown.get(pane_id) == (request, now):
                self._prompts_shown[pane_id] = (request, time.monotonic())

        self.call_after_refresh(painted)

    def upsert(self, agent: Agent) -> None:
        self._note_prompt(agent, first=agent.pane_id not in self.agents)
        self.agents[agent.pane_id] = agent
        names = _planned(agent)
        if self._names.get(agent.pane_id) != names:  # a new agent or a new name: the widths may change
            self._names[agent.pane_id] = names
            self._replan = True
        self._sync(changed=agent.pane_id)

    def load(self, agents: list[Agent]) -> None:
        """Every agent at once (what a resident service already knows, on the first frame): one sort and one layout, not one per row."""
        for agent in agents:
            self._note_prompt(agent, first=agent.pane_id not in self.agents)
            self.agents[agent.pane_id] = agent
            self._names[agent.pane_id] = _planned(agent)
        self._replan = True
        self._sync()

    def remove_agent(self, pane_id: str) -> None:
        self.agents.pop(pane_id, None)
        self._prompts_shown.pop(pane_id, None)
        self._names.pop(pane_id, None)
        self._replan = True
        self._sync()

    def hidden(self) -> list[Agent]:
        """The agents the filter hides."""
        shown = set(self._order)
        return [agent for pane_id, agent in self.agents.items() if pane_id not in shown]

    def set_sort(self, column: str, reverse: bool) -> None:
        """Order the rows by ``column`` (a key of SORTS), reversed or not; the selected agent stays selected."""
        if column not in SORTS:
            raise ValueError(f"no such order: {column}")
        self.sort_column, self.sort_reverse = column, reverse
        if self.selected_pane_id is not None:
            self.pinned = True  # the selection follows its agent to its new row
        self._sync()

    def _order_key(self, agent: Agent) -> tuple:
        if self.sort_column == "time":
            return (agent.since, agent.target)
        if self.sort_column == "target":
            return (agent.host, agent.target)
        if self.sort_column == "folder":
            return (folder_of(agent), agent.host, agent.target)
        if self.sort_column == "context":
            pct = context_pct(agent)
            return (pct is None, -(pct or 0), agent.host, agent.target)
        if self.sort_column == "cost":
            cost = agent.usage.cost_usd if agent.usage is not None else None
            return (cost is None, -(cost or 0.0), agent.host, agent.target)
        if agent.state.needs_you and self.snooze_of(agent) is not None:
            return (SNOOZED_RANK, agent.since, agent.target)
        return sort_key(agent)

    def set_show_changes(self, show: bool) -> None:
        """Show or hide the Change column (a key, or the config's ``change_column``)."""
        self.show_changes = show
        self._replan = True
        self._sync()

    def set_show_context(self, show: bool) -> None:
        """Show or hide the Ctx column (a key, or the config's ``context_column``)."""
        self.show_context = show
        self._replan = True
        self._sync()

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self._replan = True
        self._sync()

    @staticmethod
    def _elapsed(agent: Agent, now: float) -> str:
        if agent.offline:  # out of reach: how old the reading on screen is
            return elapsed(now - agent.offline_since)
        return elapsed(now - agent.since, precise=agent.state.needs_you)

    def restyle(self, styles: dict, retrying: Style | str = RETRYING) -> None:
        """The theme changed: every row is drawn again in its colours."""
        self.state_styles = styles
        self.retrying_style = retrying
        self._columns = None  # rebuilds the rows
        self._replan = True
        self._sync()

    # -- columns that fit ---------------------------------------------------------------
    def on_resize(self) -> None:
        self._replan = True
        self._replan_asked = False
        self._sync()

    def render_lines(self, crop: Region) -> list[Strip]:
        """The table's lines; blank while its rows are planned for another width than it has.

        The layout gives the table its new size, and paints, before the
        resize reaches ``on_resize``: for that frame (longer under load) the
        rows would be cut for the old width.  Blank, then right, is never
        wrong; the re-plan is asked for at once.
        """
        if self._columns is not None and self._planned_for != self.size.width:
            if not self._replan_asked:
                self._replan_asked = True
                self._replan = True
                self.call_later(self._sync)
            return [Strip.blank(crop.width, self.rich_style) for _ in range(crop.height)]
        return super().render_lines(crop)

    def _fit_columns(self, visible: list[Agent]) -> bool:
        """Re-plan the columns; True when the widths changed (the rows were cleared, to be made again).

        Only after a resize, a theme change, or an agent that came, went or
        was renamed: a state change, the common update, never re-plans.  A
        re-plan that keeps the widths (an agent's diff first counted, with
        300 agents one after another) leaves every other row alone.
        """
        self._replan = False
        self._replan_asked = False
        self._planned_for = self.size.width
        width = self.size.width - 1  # the vertical scrollbar's cell, kept free so nothing jumps when it appears
        # A host never reached (its one placeholder row) widens nothing: its Agent cell is cut to the agents' width.
        agents = [a for a in visible if not a.placeholder]
        columns = plan_columns(
            max(width, 40),
            [clean(a.target) for a in agents],
            [folder_of(a) for a in agents],
            [a.host for a in agents],
            unreached=[a.host for a in visible if a.placeholder],
            kinds=[kind_of(a) for a in agents],
            changes=[clean(a.change) for a in agents] if self.show_changes else (),
            contexts=self.show_context and any(context_pct(a) is not None for a in agents),
        )
        if columns == self._columns:
            return False
        self._columns = columns
        self.clear(columns=True)
        self._cells.clear()
        self._order = []
        widths = {
            "host": columns.host,
            "kind": columns.kind,
            "agent": columns.target,
            "folder": columns.folder,
            "state": STATE_WIDTH,
            "time": TIME_WIDTH,
            "change": columns.change,
            "context": columns.context,
            "waiting": columns.waiting,
        }
        for key, label in COLUMNS:
            if key in columns.keys:
                self.add_column(label, key=key, width=widths[key])
        return True

    def _sync(self, changed: str | None = None) -> None:
        """Bring rows in line with ``agents`` without rebuilding the table.

        New rows are added, gone ones removed, changed cells updated, and the
        order fixed with one ``sort`` (a re-index, not a redraw of every row);
        the cursor follows the agent it was on, or the top row until the user
        picks one.  ``changed``: only that agent changed (the common update,
        one per observation), so only its row's cells are computed again; with
        a hundred agents, recomputing every row on every update was most of a
        busy table's cost.
        """
        if self.size.width <= 0:
            # Mounted, not laid out yet: no size to plan for.  Rows planned at a guess were painted
            # narrow (``permiss…:0.0``, two rows alike) until the resize came, up to seconds under
            # load; the first resize plans them at the real width.
            self._replan = True
            return
        now = self.clock()
        selected, cursor = self.selected_pane_id, self.cursor_row
        if changed is not None and self._columns is not None:
            # Every other row is as it was: only the changed one can enter, leave or change.
            visible = set(self._cells)
            agent = self.agents.get(changed)
            if agent is not None and self._visible(agent):
                visible.add(changed)
            else:
                visible.discard(changed)
            recompute = [changed] if changed in visible else []
        else:
            visible = {pane_id for pane_id, agent in self.agents.items() if self._visible(agent)}
            recompute = list(visible)
        if (self._replan or self._columns is None) and self._fit_columns([self.agents[p] for p in visible]):
            recompute = list(visible)  # new widths: every row is made again
        assert self._columns is not None
        keys = self._columns.keys
        for pane_id in [p for p in self._cells if p not in visible]:
            self.remove_row(pane_id)
            del self._cells[pane_id]
        for pane_id in recompute:
            cells = self._cells_for(self.agents[pane_id], now)
            old = self._cells.get(pane_id)
            if old is None:
                self.add_row(*(cells[COLUMN_INDEX[k]] for k in keys), key=pane_id)
            else:
                kept = list(cells)
                for key in keys:
                    i = COLUMN_INDEX[key]
                    if _plain(cells[i]) != _plain(old[i]) or getattr(cells[i], "style", None) != getattr(old[i], "style", None):
                        self.set_cell(pane_id, key, cells[i])
                    else:
                        kept[i] = old[i]  # the object the table holds (the sort below knows rows by it)
                cells = tuple(kept)
            self._cells[pane_id] = cells
        order = [a.pane_id for a in sorted((self.agents[p] for p in visible), key=self._order_key, reverse=self.sort_reverse)]
        if order != self._order:
            # DataTable sorts by cell values; the first cell's object says which row it is.
            rank = {id(self._cells[pane_id][AGENT]): i for i, pane_id in enumerate(order)}
            self.sort("agent", key=lambda cell: rank.get(id(cell), len(rank)))
            self._order = order
        if not self.pinned and order:
            if self.cursor_row != 0:
                self.move_cursor(row=0, animate=False)
        elif selected in order and self._order.index(selected) != self.cursor_row:
            self.move_cursor(row=order.index(selected), animate=False)
        now_selected = self.selected_pane_id
        if now_selected is not None and now_selected != selected:
            self._arrived(now_selected)  # the top row's new agent, or one that came under the cursor
        if now_selected is not None and now_selected != selected and self.cursor_row == cursor:
            # Another agent came to the cursor's row (a re-order under an unmoved
            # cursor): DataTable says nothing, so say it, or the preview and the
            # keys would stay with the agent that left the row.
            self.post_message(DataTable.RowHighlighted(self, self.cursor_row, RowKey(now_selected)))

    def _cells_for(self, agent: Agent, now: float) -> tuple:
        """Every column's cell for ``agent``, cut to its column's width (in COLUMNS order)."""
        columns = self._columns or Columns(TARGET_CAP, FOLDER_CAP, 40)
        label = Text(clean(agent.target), style="dim" if agent.offline else "bold" if agent.state.needs_you else "")
        state = state_text(agent.state, self.state_styles)
        if agent.offline:  # the last reading, not a live one
            state = Text(state.plain, style="dim")
        waiting = waiting_for(agent, self.retrying_style)
        snoozed = snooze_words(agent, self.snooze_of(agent))
        if snoozed:  # greyed: it waits, but the user put it off
            label, state = Text(label.plain, style="dim"), Text(state.plain, style="dim")
            waiting = Text.assemble((f"{snoozed} · ", "dim italic"), (waiting.plain, "dim"))
        return (
            fit(Text(agent.host, style="dim" if agent.offline else ""), columns.host),
            fit(Text(kind_of(agent), style="dim"), columns.kind),
            fit(label, columns.target, keep_end=target_end(clean(agent.target))),
            fit(Text(folder_of(agent), style="dim"), columns.folder),
            state,
            self._elapsed(agent, now),
            fit(context_text(agent), columns.context),
            fit(Text(clean(agent.change), style="dim"), columns.change),
            fit(waiting, columns.waiting, keep_end=kept_end(agent, waiting.plain, columns.waiting)),
        )

    def tick(self) -> None:
        """Advance the time column once a second (only cells whose text changes)."""
        now = self.clock()
        for pane_id in self._order:
            text = self._elapsed(self.agents[pane_id], now)
            cells = self._cells.get(pane_id)
            if cells is not None and cells[TIME] != text:
                self._cells[pane_id] = (*cells[:TIME], text, *cells[TIME + 1 :])
                self.set_cell(pane_id, "time", text)
