"""The main screen's triage part: the next agent that needs you, snoozes, the table's order, the filter's count, and keys that can do nothing.

``Triage`` is a part the main screen holds (main_screen.py holds the
table, the preview and the answers, and calls down into this for how you
move between the agents that wait and put some off; what this changes it
tells the screen as messages, ``Snoozed`` and ``Woken``):

* ``Tab`` / ``Shift+Tab`` select the next / previous agent that needs you
  (snoozed ones skipped), wrapping round;
* ``z`` snoozes the selected agent's wait (a chooser: 5 min, 15 min, 1 h,
  until it changes); ``z`` on a snoozed agent takes the snooze back.  The
  snoozes themselves are the service's (``Service.snooze``, over the pure
  ``notifications.snooze.Snoozes``: one set for every front end), ended by
  a new report (the service sees every one), by time (the screen's
  one-second tick), or by the agent going;
* the palette's "Sort by …" orders the table by a column, reversibly;
* an open filter says how many rows it shows ("4 of 9") and how many
  agents it hides that need you;
* a key that can do nothing for the selected agent (``y`` on an idle
  agent, ``3`` on a two-option menu) rings the bell and says why, once;
  ``check_action`` hides such keys from the footer, and Textual then
  passes them on to nothing, so they are caught here, before the bindings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual import events
from textual.actions import parse
from textual.binding import Binding
from textual.screen import Screen

from ...api.facade import Facade, key_allowed
from ...model import Agent
from ...notifications.snooze import Snooze, key_of, snoozed_label
from ...shared.safe_text import clean
from .. import textual_private
from ..messages import Snoozed, Woken
from ..widgets.agent_table import SORTS, AgentTable
from ..widgets.filter_input import FilterInput
from .asking import Asking
from .flash import FLASH_SECONDS, flash, key_for
from .snooze import SnoozeScreen

TRIAGE_BINDINGS = [
    # Tab is Textual's "focus the next widget"; the main screen has one place to type (the filter), reached by /.
    Binding("tab", "next_waiting", "next waiting", id="next_waiting", show=False, tooltip="move to the next agent that needs you (wraps round; snoozed ones are skipped)"),
    Binding("shift+tab", "previous_waiting", "previous waiting", id="previous_waiting", show=False, tooltip="move to the previous agent that needs you"),
    Binding("z", "snooze", "snooze", id="snooze", show=False, tooltip="snooze the selected agent's wait (5m, 15m, 1h, until it changes); z again wakes it"),
]


def why_nothing(action: str, parameters: tuple[object, ...], agent: Agent | None) -> str:
    """Why the agent key ``action`` can do nothing for ``agent`` now, in a few words; "" when it can (or is not an agent key)."""
    if action == "option" and agent is not None and not agent.offline and agent.state.is_menu:
        prompt = agent.observation.prompt
        digit = str(parameters[0]) if parameters else ""
        offered = [option.key for option in prompt.options if option.key] if prompt is not None else []
        if offered and digit not in offered:
            return f"no option {digit} here: {clean(agent.target)} offers {', '.join(offered)}"
        return ""
    if key_allowed(action, agent):
        return ""
    if agent is None:
        return "no agent selected"
    who, state = clean(agent.target), agent.state.value
    if agent.offline:
        return f"{clean(agent.host)} is out of reach: {who}'s row is its last reading"
    if action in ("approve", "deny"):
        if agent.state.is_menu:
            return f"{who} asks a {state}, not a permission: pick its option by number"
        return f"nothing to {action}: {who} is {state}"
    return {
        "option": f"no menu to pick from: {who} is {state}",
        "nudge": f"nothing to nudge: {who} is {state} (a nudge goes to an idle agent)",
        "interrupt": f"nothing to interrupt: {who} is {state}",
        "submit": f"nothing to submit: {who} shows no multi-select question ({state})",
        "approve_all": f"no batch: {who} has no permission held by Claude's hook",
        "jump": f"nothing to jump to: {who} stands for a host headspace cannot reach",
    }.get(action, f"{action} does nothing for {who} ({state})")


class Triage:
    """How the main screen moves between waiting agents and puts some off: its snoozes, its steps, its order, its filter's count.

    It works on the screen's table and filter box (found by type on
    ``screen``, a Textual screen: no more is known of it) and tells the screen
    what changed (``Snoozed``, ``Woken``).
    """

    def __init__(self, screen: Screen, service: Facade, clock: Callable[[], float], keymap: Mapping[str, str], asking: Asking) -> None:
        self.screen = screen
        self.service = service  # the snoozes are the service's: one set for every front end
        self.asking = asking  # the calls that may wait on the service: off the UI loop
        self.clock = clock
        self.keymap = keymap  # the keys the app set (its keymap), so that a key's action is known here
        self._counting = False  # the filter's border shows a count
        self._own_keys: frozenset[str] | None = None  # the keys bound on the screen to an agent key, the keymap applied

    @property
    def table(self) -> AgentTable:
        return self.screen.query_one(AgentTable)

    def selected_agent(self) -> Agent | None:
        table = self.table
        pane_id = table.selected_pane_id
        return table.agents.get(pane_id) if pane_id else None

    # -- the next agent that needs you ---------------------------------------------------
    def needing(self, agent: Agent) -> bool:
        """It needs you and is not snoozed."""
        return agent.state.needs_you and self.service.snooze_of(agent) is None

    def step(self, step: int) -> None:
        """Select the next (``step`` 1) or previous (-1) agent that needs you, wrapping round."""
        table = self.table
        order = table.order
        waiting = [n for n, pane_id in enumerate(order) if self.needing(table.agents[pane_id])]
        if not waiting:
            flash(self.screen, "nothing needs you now" + (" in the filter" if table.hidden() else "") + (f" ({self.service.snoozed()} snoozed)" if self.service.snoozed() else ""))
            return
        here = order.index(table.selected_pane_id) if table.selected_pane_id in order else -1
        after = [n for n in waiting if (n - here) * step > 0]
        row = (after[0] if step > 0 else after[-1]) if after else (waiting[0] if step > 0 else waiting[-1])
        table.select(order[row])

    # -- snoozes --------------------------------------------------------------------------
    def snooze(self, agent: Agent) -> None:
        """``z`` on ``agent``: wake it if snoozed, else a chooser for how long (then on to the next agent that needs you)."""
        screen = self.screen

        def unsnoozed(was: bool) -> None:
            if was:
                self._snoozes_changed(agent, Woken(agent, ran_out=False))
                screen.notify(clean(f"{agent.target}: awake again"), timeout=FLASH_SECONDS, markup=False)
                return
            if not agent.state.needs_you:
                flash(screen, f"{key_for(screen, 'snooze')}: nothing to snooze: {clean(agent.target)} is {agent.state.value}")
                return
            screen.app.push_screen(SnoozeScreen(agent.target), chosen)

        def chosen(seconds: float | None) -> None:
            now = self.table_agent(agent)
            if seconds is None or now is None:
                return
            self.asking.ask(f"snoozing {clean(now.target)}", lambda: self.service.snooze(now, self.clock() + seconds), lambda snooze: snoozed(now, snooze))

        def snoozed(now: Agent, snooze: Snooze | None) -> None:
            if snooze is None:
                flash(screen, f"{key_for(screen, 'snooze')}: nothing to snooze: {clean(now.target)} is {now.state.value} now")
                return
            self._snoozes_changed(now, Snoozed(now))
            screen.notify(clean(f"{now.target}: {snoozed_label(snooze)}"), timeout=FLASH_SECONDS, markup=False)
            self._move_on(now)

        self.asking.ask(f"waking {clean(agent.target)}", lambda: self.service.unsnooze(agent), unsnoozed)

    def _move_on(self, snoozed: Agent) -> None:
        """Like after an answer: from the agent just put off to the first that needs you (if there is one)."""
        table = self.table
        if table.selected_pane_id == snoozed.pane_id:
            first = next((pane_id for pane_id in table.order if self.needing(table.agents[pane_id])), None)
            if first is not None:
                table.select(first)

    def table_agent(self, agent: Agent) -> Agent | None:
        """The table's agent in ``agent``'s pane now (a chooser was open meanwhile)."""
        return self.table.agents.get(agent.pane_id)

    def snoozed_panes(self) -> set[str]:
        if not self.service.snoozed():
            return set()
        return {pane_id for pane_id, agent in self.table.agents.items() if agent.state.needs_you and self.service.snooze_of(agent) is not None}

    def end_snoozes(self) -> None:
        """Snoozes whose time is up: the rows wake, and the app says their waits again (called once a second)."""
        if not self.service.snoozed():
            return
        ended = set(self.service.snoozes_ended(self.clock()))
        for agent in [a for a in self.table.agents.values() if key_of(a) in ended]:
            self._snoozes_changed(agent, Woken(agent, ran_out=True))

    def _snoozes_changed(self, agent: Agent, message: Snoozed | Woken) -> None:
        self.table.upsert(agent)  # its row again: greyed or not, and its place
        self.screen.post_message(message)  # the screen recounts its header

    # -- the table's order ----------------------------------------------------------------
    def sort_by(self, column: str) -> None:
        """Order the table by ``column``; the same column again reverses it."""
        table = self.table
        reverse = not table.sort_reverse if column == table.sort_column else False
        table.set_sort(column, reverse)
        self.screen.notify(f"sorted {SORTS[column]}{' (reversed)' if reverse else ''}", timeout=FLASH_SECONDS, markup=False)

    # -- the filter's count ---------------------------------------------------------------
    def show_filter_count(self, filter_text: str) -> None:
        """While filtering: "4 of 9" on the filter's border, and the agents it hides that need you."""
        if not filter_text and not self._counting:
            return  # the common case, on every update: nothing to show, nothing shown
        table = self.table
        box = self.screen.query_one("#filter", FilterInput)
        self._counting = bool(filter_text)
        if not self._counting:
            box.border_subtitle = None
            return
        hidden = sum(1 for agent in table.hidden() if self.needing(agent))
        count = Text(f"{len(table.order)} of {len(table.agents)}")
        if hidden:
            count.append(f"  ▲ {hidden} outside the filter need{'s' if hidden == 1 else ''} you", style="bold reverse")
        box.border_subtitle = count

    # -- keys that can do nothing here ------------------------------------------------------
    def _agent_keys(self) -> frozenset[str]:
        """The keys bound on the screen to an agent key's action, the keymap applied (worked out once).

        An agent key is one that needs an agent (``key_allowed`` says no
        without one).  Building the binding chain costs 0.2-0.5 ms; the
        other keys (moves in the table, ``?``) skip it.
        """
        if self._own_keys is None:
            bindings = textual_private.own_bindings(self.screen).copy()
            if self.keymap:
                bindings.apply_keymap(self.keymap)
            self._own_keys = frozenset(key for key, bound in bindings.key_to_bindings.items() if any(not key_allowed(parse(b.action)[1], None) for b in bound))
        return self._own_keys

    def explain(self, event: events.Key) -> None:
        """An agent key the selected agent does not allow: the bell and why, instead of nothing (the screen calls this with its keys live)."""
        if event.key not in self._agent_keys():
            return  # not an agent key of this screen (a move in the table, ?): not ours to explain
        screen = self.screen
        for namespace, bindings in textual_private.modal_binding_chain(screen):
            for binding in bindings.key_to_bindings.get(event.key, ()):
                target, action, parameters = parse(binding.action)
                if target or namespace is not screen:
                    if namespace.check_action(action, parameters):
                        return  # another part takes this key
                    continue
                reason = why_nothing(action, parameters, self.selected_agent())
                if reason:
                    event.stop()
                    event.prevent_default()
                    flash(screen, f"{screen.app.get_key_display(binding)}: {reason}")
                return
