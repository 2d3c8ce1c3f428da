"""The messages of the windowless attach (tmux/direct_attach.py), checked against what tmux's server checks.

A message the server finds the wrong size is a ``fatalx`` there: the server
exits with every session in it.  These are server-client.c's checks (3.3a to
3.7c), message by message; tests/e2e/test_direct_attach.py runs them against
the real server.
"""

from __future__ import annotations

import struct

import pytest

from headspace_tui.tmux import identify as da


def _split(data: bytes) -> list[tuple[int, int, int, bytes]]:
    out = []
    while data:
        kind, length, flags, peer, _pid = da.HEADER.unpack_from(data)
        out.append((kind, flags, peer, data[da.HEADER.size : length]))
        data = data[length:]
    return out


@pytest.mark.parametrize(
    ("line", "wanted"),
    [
        ("tmux 3.3a", True),
        ("tmux 3.2", True),
        ("3.3a", True),  # the server's own #{version}
        ("tmux 3.6b", True),
        ("tmux 3.1c", False),  # no MSG_IDENTIFY_STDOUT before 3.2: the server would keep the descriptor and never answer
        ("tmux 3.0", False),
        ("tmux 2.9a", False),
        ("tmux 3.7", False),
        ("tmux 3.7c", False),
        ("tmux 4.0", False),
        ("tmux next-3.8", False),
        ("tmux master", False),
        ("", False),
        ("something else 3.3", False),
    ],
)
def test_only_the_releases_with_the_crash_attach_directly(line, wanted):
    assert da.wanted(line) is wanted


@pytest.mark.parametrize(("version", "forced"), [("tmux 3.3a", True), ("3.7", True), ("master", True), ("tmux 3.1c", False), ("tmux 2.6", False), ("", False)])
def test_forcing_the_direct_attach_never_uses_it_where_it_cannot_work(version, forced):
    assert da.chosen(version, {"HEADSPACE_TMUX_ATTACH": "direct"}) is forced
    assert da.chosen(version, {"HEADSPACE_TMUX_ATTACH": "client"}) is False


def test_the_identify_is_in_the_order_with_no_window_and_each_size_is_what_the_server_checks():
    body = da.identify_and_command(["attach-session", "-E", "-t", "$3"], pid=4242)
    messages = _split(body)
    kinds = [m[0] for m in messages]
    # flags first, DONE last of the identify, the command after it: one write, one read there
    assert kinds[0] == da.MSG_IDENTIFY_FLAGS
    assert kinds[-2:] == [da.MSG_IDENTIFY_DONE, da.MSG_COMMAND]
    # the descriptors travel before, on their own (a read stops after a descriptor)
    assert da.MSG_IDENTIFY_STDIN not in kinds and da.MSG_IDENTIFY_STDOUT not in kinds
    by_kind = {kind: data for kind, _flags, _peer, data in messages}
    assert all(peer == da.PROTOCOL_VERSION for _k, _f, peer, _d in messages)
    assert all(flags == 0 for _k, flags, _p, _d in messages)
    (flags,) = struct.unpack("=i", by_kind[da.MSG_IDENTIFY_FLAGS])  # "bad MSG_IDENTIFY_FLAGS size": sizeof(int)
    assert flags & da.CLIENT_CONTROL and flags & da.CLIENT_UTF8
    assert len(by_kind[da.MSG_IDENTIFY_FEATURES]) == 4
    assert struct.unpack("=i", by_kind[da.MSG_IDENTIFY_CLIENTPID]) == (4242,)
    for kind in (da.MSG_IDENTIFY_TERM, da.MSG_IDENTIFY_TTYNAME, da.MSG_IDENTIFY_CWD):  # "bad ... string": not empty, NUL last
        assert by_kind[kind] and by_kind[kind].endswith(b"\0")
    assert by_kind[da.MSG_IDENTIFY_DONE] == b""
    command = by_kind[da.MSG_COMMAND]
    assert struct.unpack_from("=i", command) == (4,)
    assert command[4:] == b"attach-session\0-E\0-t\0$3\0"  # "bad MSG_COMMAND string": NUL last


def test_a_descriptor_message_says_it_carries_one():
    ((kind, flags, _peer, data),) = _split(da.message(da.MSG_IDENTIFY_STDIN, fd=True))
    assert (kind, flags, data) == (da.MSG_IDENTIFY_STDIN, da.HAS_FD, b"")


@pytest.mark.parametrize("command", [[], ["attach-session", "-t", "a\0b"]])
def test_a_command_the_server_would_misread_is_refused_here(command):
    with pytest.raises(ValueError):
        da.identify_and_command(command, pid=1)


def test_a_message_longer_than_the_server_takes_is_refused_here():
    with pytest.raises(ValueError):
        da.message(da.MSG_COMMAND, b"x" * da.MAX_MESSAGE)


def test_the_servers_messages_are_taken_whole_and_a_partial_one_waits():
    exit_message = da.message(da.MSG_EXIT, struct.pack("=i", 0) + b"bye\0")
    buffer = bytearray(exit_message + da.message(da.MSG_EXITED)[:7])
    assert da.message_types(buffer) == [da.MSG_EXIT]
    assert len(buffer) == 7
    buffer += da.message(da.MSG_EXITED)[7:]
    assert da.message_types(buffer) == [da.MSG_EXITED]
    assert buffer == bytearray()


def test_a_garbled_length_from_the_server_is_an_error_not_a_loop():
    with pytest.raises(ValueError):
        da.message_types(bytearray(da.HEADER.pack(da.MSG_EXIT, 3, 0, 8, 0)))
