"""A TCP relay on 127.0.0.1 that holds every chunk for half a round trip each way.

Why: the remote-host tests and the fleet benchmark need a real round trip
between ``ssh`` and ``sshd``, and this kernel has no ``tc netem`` (the qdisc
is unknown) and no iptables.  So the delay is added in user space: ssh
connects to the relay's port, the relay connects to the sshd, and every
chunk read from one side is written to the other ``rtt / 2`` seconds after
it arrived, in the order it arrived (one queue per direction), which is what
a link with that latency and plenty of bandwidth does to a TCP stream.

What it does not model: loss, jitter, a bandwidth limit, or the TCP
handshake itself (the client's ``connect`` returns at once, so a new
connection is one round trip quicker to open than on a real link; every
byte after that, the SSH banner included, pays the delay).

Two ways to use it:

* in a test's own event loop: ``async with DelayRelay(port, rtt) as relay:``
  then connect to ``relay.port``;
* in its own process, so its work is not counted as (or queued behind) the
  measured program's (the benchmarks do this)::

      with relay_process([sshd_port, ...], rtt=0.05) as relay:
          ...  # relay.ports[i] reaches the i-th target with 50 ms added

Standard library only: it also runs as ``python delay_relay.py --rtt 0.05
PORT...``, printing one listening port per target and serving until its
stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 16
QUEUE = 256  # chunks held per direction before the relay stops reading (back-pressure, as a full window would)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy one direction: each chunk (and the end of the stream) leaves ``delay`` seconds after it came."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(QUEUE)

    async def take() -> None:
        try:
            while chunk := await reader.read(CHUNK):
                await queue.put((loop.time() + delay, chunk))
        except OSError:  # reset by the peer
            pass
        await queue.put((loop.time() + delay, b""))  # the end, delayed like the data before it

    taker = asyncio.create_task(take())
    try:
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not chunk:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(chunk)
            await writer.drain()
    except OSError:  # the other side is gone (reset, or not connected any more for the end of stream)
        return
    finally:
        taker.cancel()
        await asyncio.gather(taker, return_exceptions=True)


class DelayRelay:
    """Listens on 127.0.0.1 (``port``, the kernel's pick) and relays each connection to ``target_port`` with ``rtt`` added."""

    def __init__(self, target_port: int, rtt: float, target_host: str = "127.0.0.1") -> None:
        if rtt < 0:
            raise ValueError("a round trip cannot be negative")
        self.target = (target_host, target_port)
        self.rtt = rtt
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def _accepted(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links.add(task)
        writers = [client_writer]
        try:
            try:
                server_reader, server_writer = await asyncio.open_connection(*self.target)
            except OSError:
                return  # the target refuses: so does the relay
            writers.append(server_writer)
            half = self.rtt / 2
            await asyncio.gather(_pump(client_reader, server_writer, half), _pump(server_reader, client_writer, half))
        finally:
            for writer in writers:  # also when the link is cancelled (close): both ends see it closed at once
                writer.close()
            self._links.discard(task)

    async def close(self) -> None:
        """Stop listening and drop every relayed connection (both ends see it closed)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> DelayRelay:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


@dataclass(frozen=True)
class RelayProcess:
    """A relay running in its own process: its pid (for CPU accounting) and one listening port per target."""

    pid: int
    ports: list[int]


@contextlib.contextmanager
def relay_process(target_ports: list[int], rtt: float, timeout: float = 10.0) -> Iterator[RelayProcess]:
    """One relay process for these targets (``ports`` in the same order); ended on exit.

    A separate process so that the relay's work neither counts as the
    measured program's CPU nor waits behind its event loop.
    """
    proc = subprocess.Popen(
        [sys.executable, "-S", str(Path(__file__).resolve()), "--rtt", repr(rtt), *map(str, target_ports)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        ports = []
        for _ in target_ports:
            line = proc.stdout.readline()
            if not line.strip():
                raise RuntimeError(f"the delay relay did not start (exit status {proc.poll()})")
            ports.append(int(line))
        yield RelayProcess(proc.pid, ports)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()  # its signal to stop
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()  # our own child, by its handle
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


async def _serve(target_ports: list[int], rtt: float) -> None:
    relays = [DelayRelay(port, rtt) for port in target_ports]
    for relay in relays:
        print(await relay.start(), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin (or dies)
    for relay in relays:
        await relay.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="a delaying TCP relay on 127.0.0.1 (a round trip without netem)")
    parser.add_argument("--rtt", type=float, required=True, help="round trip to add, in seconds (half each way)")
    parser.add_argument("ports", type=int, nargs="+", help="target ports on 127.0.0.1")
    args = parser.parse_args()
    asyncio.run(_serve(args.ports, args.rtt))


if __name__ == "__main__":
    main()
