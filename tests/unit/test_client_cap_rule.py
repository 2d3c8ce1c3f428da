"""How many control clients a tmux server gets: all its sessions up to 300 panes, then fewer as it grows.

tmux's rest costs about panes x clients² (sessions.py); the cap keeps a
server of any size at what 300 sessions with a client each cost, and
never takes a server's last client away.
"""

from __future__ import annotations

from headspace_tui.service.watching.sessions import CLIENT_CAP, client_cap


def test_every_session_of_a_server_up_to_the_cap_gets_a_client():
    assert [client_cap(n) for n in (0, 1, 20, 299, 300)] == [CLIENT_CAP] * 5


def test_a_larger_server_gets_fewer_clients_and_costs_no_more_at_rest():
    caps = [client_cap(n) for n in (301, 500, 1000, 3000, 10_000, 10**9)]
    assert caps == sorted(caps, reverse=True) and caps[0] < CLIENT_CAP
    assert client_cap(1000) == 164
    for panes in (301, 500, 1000, 3000, 10_000):
        assert panes * client_cap(panes) ** 2 <= CLIENT_CAP**3 < panes * (client_cap(panes) + 1) ** 2
    assert client_cap(10**9) == 1
