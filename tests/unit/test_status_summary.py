"""``headspace status`` ends with one count line, and says how many screens it could not read."""

from __future__ import annotations

from headspace_tui.api.rows import agent_row
from headspace_tui.cli.status import summary
from headspace_tui.model import Agent, AgentState, Evidence, Observation


def agent(state: AgentState, n: int) -> dict:
    """An agent as ``status`` counts it: its row (api/rows.py), as a look or the service gives it."""
    evidence = (Evidence("unrecognised-screen", 3, "◆ new"),) if state is AgentState.UNKNOWN else ()
    return agent_row(Agent(pane_id=f"%{n}", target=f"s{n}:0.0", session=f"s{n}", observation=Observation(state, evidence=evidence)), 0.0)


def test_the_count_line_names_unknowns_and_how_to_report_them():
    agents = [agent(s, n) for n, s in enumerate([AgentState.PERMISSION, AgentState.INPUT, AgentState.WORKING, AgentState.IDLE, AgentState.UNKNOWN, AgentState.UNKNOWN])]
    line = summary(agents)
    assert line.startswith("6 agents · 2 need you · 1 working · 1 idle · 2 unknown")
    assert "headspace classify" in line


def test_no_unknowns_no_mention():
    assert "unknown" not in summary([agent(AgentState.IDLE, 1)])
    assert summary([agent(AgentState.IDLE, 1)]) == "1 agent · 0 need you · 0 working · 1 idle"


def test_a_snoozed_wait_is_counted_apart_as_the_table_counts_it():
    waiting = agent(AgentState.PERMISSION, 1)
    put_off = {**agent(AgentState.PERMISSION, 2), "snoozed": "snoozed till 14:05"}
    assert summary([waiting, put_off]) == "2 agents · 1 need you (1 snoozed) · 0 working · 0 idle"


def test_a_server_named_by_tmux_itself_is_named_as_it_is(monkeypatch):
    """Inside ``tmux -L uxa`` with no -L of its own, headspace watches uxa: its words (and the service's log) say so."""
    from headspace_tui.tmux.server import TmuxServer

    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/uxa,4242,0")
    assert TmuxServer().where() == "socket 'uxa'"
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,4242,0")
    assert TmuxServer().where() == "the default socket"
    monkeypatch.delenv("TMUX")
    assert TmuxServer().where() == "the default socket"
    assert TmuxServer(socket_name="work").where() == "socket 'work'"
