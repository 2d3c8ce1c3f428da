"""A pane's address: tmux's ``%N`` and its host, written one way and read back the same."""

from __future__ import annotations

import pytest

from headspace_tui.model import PaneAddress
from headspace_tui.service.watching.fleet import host_of
from headspace_tui.tmux.server import TmuxServer


@pytest.mark.parametrize(
    "text,pane,host",
    [("%3", "%3", "local"), ("%3@box", "%3", "box"), ("@box", "", "box"), ("%12@dev.example", "%12", "dev.example")],
)
def test_an_address_reads_back_as_written(text, pane, host):
    address = PaneAddress.parse(text)
    assert (address.pane, address.host) == (pane, host)
    assert str(address) == text
    assert host_of(text) == host
    assert address.placeholder is (pane == "")


def test_only_targets_become_tmux_ids():
    class Remote(TmuxServer):
        def tmux_id(self, address: str) -> str:
            return address.removesuffix("@box")

    args = Remote().targets_to_tmux(["send-keys", "-l", "-t", "%1@box", "--", "-t", "%1@box"])
    assert args == ["send-keys", "-l", "-t", "%1", "--", "-t", "%1@box"]
