"""The delaying TCP relay the fleet benchmark puts between ssh and each sshd.

This kernel has no ``tc netem``, so a round trip is added in user space
(tests/harness/delay_relay.py).  If these fail, a latency measured through
it says nothing: the relay did not delay, delayed twice, reordered or lost
bytes, swallowed the end of a stream, or ssh could not log in through it.
A round trip's lower bound is physical (the bytes were held that long); the
upper bounds are loose, for a loaded machine.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.harness.delay_relay import DelayRelay, relay_process
from tests.harness.sshd import running_sshd

pytestmark = pytest.mark.e2e


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Echo everything; after the client's end of stream, say ``bye`` and close."""
    while data := await reader.read(1 << 16):
        writer.write(data)
        await writer.drain()
    writer.write(b"bye")
    await writer.drain()
    writer.close()


async def _with_echo(rtt: float, body):
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    try:
        async with DelayRelay(server.sockets[0].getsockname()[1], rtt) as relay:
            return await body(relay.port)
    finally:
        server.close()
        await server.wait_closed()


def test_a_round_trip_takes_the_added_time_once() -> None:
    async def body(port: int) -> list[float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        trips = []
        for n in range(5):
            started = time.monotonic()
            writer.write(b"ping %d" % n)
            assert await reader.readexactly(6) == b"ping %d" % n
            trips.append(time.monotonic() - started)
        writer.close()
        return trips

    trips = asyncio.run(_with_echo(0.2, body))
    assert min(trips) >= 0.2, trips  # held rtt/2 each way
    assert min(trips) < 0.4, trips  # ...and not twice: held twice, every trip would take 0.4 s; load only makes some longer


def test_bytes_arrive_intact_and_in_order_both_ways_and_the_end_of_stream_passes() -> None:
    payload = os.urandom(3 << 20)

    async def body(port: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)

        async def send() -> None:
            for at in range(0, len(payload), 7001):  # odd-sized writes, many chunks in flight
                writer.write(payload[at : at + 7001])
                await writer.drain()
            writer.write_eof()

        sender = asyncio.create_task(send())
        received = await reader.read(-1)  # everything until the server's close
        await sender
        writer.close()
        return received

    received = asyncio.run(_with_echo(0.03, body))
    assert received[-3:] == b"bye", "the client's end of stream did not reach the server, or the server's close did not come back"
    assert received[:-3] == payload


def test_a_refused_target_is_a_closed_connection() -> None:
    async def run() -> bytes:
        probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = probe.sockets[0].getsockname()[1]
        probe.close()
        await probe.wait_closed()  # nothing listens there now
        async with DelayRelay(port, 0.05) as relay:
            reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
            data = await asyncio.wait_for(reader.read(-1), 5)
            writer.close()
            return data

    assert asyncio.run(run()) == b""


def test_ssh_logs_in_through_a_relay_process_and_pays_the_round_trips(tmp_path: Path) -> None:
    rtt = 0.25
    with running_sshd(tmp_path) as box, relay_process([box.port], rtt) as relay:
        assert relay.pid != os.getpid()
        box.add_alias("far", relay.ports[0], HostKeyAlias=f"[127.0.0.1]:{box.port}")  # the relay's port, the sshd's key
        started = time.monotonic()
        result = subprocess.run(["ssh", "-F", str(box.client_config), "far", "echo over-the-relay"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "over-the-relay"
    # Banner, key exchange, auth and the session's open and exec are each at least one round trip.
    assert took >= 4 * rtt, took
