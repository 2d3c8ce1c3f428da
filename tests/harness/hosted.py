"""A test's service as a resident one: the real HTTP server (``resident.server.Resident``) on a Unix socket, its own loop on a thread.

The pilot tests run every app over both transports (tests/conftest.py
``transport``): in process, as ``--no-service`` runs it, and as users run
it, a client of a resident service over HTTP.  The service here is the very
one the test built (so a test can still show it a recorded pane or look at
its insides), served exactly as ``headspace serve`` serves it, but on a
thread of the test's process: its loop is not the app's, as a resident
service's is not, and the app holds only what crossed the socket.

What the in-process transport gives at once (an event reaches the app as it
is made) takes a moment over the socket: ``caught_up`` waits until the
client has read everything the service said before it was asked, by sending
a mark down the same stream.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import enum
import gc
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headspace_tui.api import timeouts
from headspace_tui.api.call import Call
from headspace_tui.resident.facade_client import ServiceClient
from headspace_tui.resident.ringer import Ringer
from headspace_tui.resident.server import Resident, Watched
from headspace_tui.service.facade import Service
from headspace_tui.shared.fanout import sse
from headspace_tui.shared.resident_place import make_folder, place_of

TRANSPORTS = ("in-process", "http")  # how tests/ui/apps.py ``app_of`` reaches its service: ``--no-service``, or this
MARK = "test-mark"  # a stream item no client acts on (``ServiceClient._take`` passes over kinds it does not know)
STARTED = 20.0  # s: the server listens (a loaded machine; about 0.05 s here)


class OnItsLoop:
    """An object of the service's (the service itself first), each method run on the service's own loop: a test's way in, as the in-process ``service_of``.

    Plain data is read as it is (a test looks at the insides); a method
    called here runs where the service runs (the caller waits), so what it
    tells goes down the stream from there, as a change the service made
    itself would; an object of headspace's reached through it is wrapped the
    same way, and an attribute set through it is set on the object (a test's
    stand-in for a method).
    """

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_loop", loop)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if callable(value) and not isinstance(value, type):
            return _on_loop(value, self._loop)
        if type(value).__module__.startswith("headspace_tui.") and not dataclasses.is_dataclass(value) and not isinstance(value, enum.Enum):
            return OnItsLoop(value, self._loop)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)


def _on_loop(method: Callable[..., Any], loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    """``method``, called on ``loop``'s thread (at once when already there): its result."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:
            here = False
        if here:
            return method(*args, **kwargs)

        async def run() -> Any:
            return method(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(run(), loop).result(STARTED)

    return call


class HostedClient(ServiceClient):
    """A client of ``Hosted``'s server over HTTP; ends that server when the app ends with it (``stop``)."""

    hosted: Hosted

    def _timeout(self, call: Call, args: dict[str, Any]) -> float:
        """As the client's own, but the whole state is asked with the patience of the app's start (cli/launch.py).

        A test's app asks for it without waiting for the first look
        (``connect(0.0)``), which gives it a question's 2 s; the app's own
        start gives it ``SETTLE`` more.  The service here was started a moment
        before, in this process, and its loop's first steps import what they
        use: on a loaded machine (the live stage's start, four workers
        starting Claude at once) two of them failed the 2 s in a clean-clone run.
        """
        patience = timeouts.SETTLE if call.name == "state" else 0.0
        return super()._timeout(call, args) + patience

    async def stop(self) -> None:
        await super().stop()
        await asyncio.to_thread(self.hosted.close)


OPEN: list[Hosted] = []  # the hosted services not closed yet, oldest first


def close_all() -> None:
    """End every hosted service still open: a test that built an app and never ran it, or failed before its end."""
    for hosted in list(OPEN):
        hosted.close()


class Hosted:
    """``service`` served on a Unix socket of a private folder by a thread of this process, until ``close``."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.folder = Path(tempfile.mkdtemp(prefix="hs-hosted-", dir="/tmp"))  # short: a socket's path has 108 bytes
        key = f"test:{self.folder.name}"
        self.place = place_of(key, {"XDG_RUNTIME_DIR": str(self.folder)})
        make_folder(self.place)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="hosted-service", daemon=True)
        self.thread.start()
        self.ringer = Ringer(service, service.config, service.socket_file(), clock=service.clock, env=dict(os.environ), elsewhere=service.rings_elsewhere)
        # Its tmux watch is handed a pid that always answers: the test ends it (``close``), as the app's end does.
        self.resident = Resident(service, Watched(key, "a test's tmux server", lambda: 1), self.place, ringer=self.ringer)
        self.running: concurrent.futures.Future[str] = asyncio.run_coroutine_threadsafe(self.resident.run(), self.loop)
        deadline = time.monotonic() + STARTED
        while not self.place.card.exists():  # written once it listens (the socket's file comes a moment before)
            if self.running.done():
                self.running.result()  # its error, raised here
                raise AssertionError("the hosted service ended before it listened")
            if time.monotonic() > deadline:
                raise AssertionError(f"the hosted service did not listen within {STARTED:g}s")
            time.sleep(0.01)
        self._marks = itertools.count(1)
        self.seen = 0  # the newest mark the client read
        OPEN.append(self)  # until closed

    def client(self) -> HostedClient:
        """Its client, with the service's whole state taken, marks counted as they arrive (``caught_up``)."""
        client = HostedClient(self.place, config=self.service.config)
        client.hosted = self
        client.clock, client.live = self.service.clock, self.service.live  # as the in-process client takes them
        take = client._take

        def taking(data: bytes) -> None:
            if MARK.encode() in data:
                with contextlib.suppress(ValueError):
                    item = json.loads(data)
                    if isinstance(item, dict) and item.get("kind") == MARK:
                        self.seen = max(self.seen, int(item["n"]))
                        return
            take(data)

        client._take = taking  # type: ignore[method-assign]
        client.connect(0.0)
        return client

    def mark(self) -> int:
        """A mark sent down every client's stream after all the service has said so far; its number."""
        n = next(self._marks)
        self.loop.call_soon_threadsafe(lambda: self.resident._facade_streams.put(sse({"kind": MARK, "n": n})))
        return n

    def on_its_loop(self) -> OnItsLoop:
        return OnItsLoop(self.service, self.loop)

    def close(self) -> None:
        """End the server (its service stops with it), its loop and its thread, and remove its folder."""
        if self not in OPEN:
            return  # closed already
        OPEN.remove(self)
        self.loop.call_soon_threadsafe(self.resident.end, "the test is over")
        with contextlib.suppress(Exception):
            self.running.result(STARTED)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STARTED)
        if not self.thread.is_alive():
            # A subprocess's transport the service let go of (an ssh it killed on a hung link) closes itself when
            # collected, by a call on its loop: collected now, while the loop is stopped but not yet closed.
            gc.collect()
            self.loop.close()
        shutil.rmtree(self.folder, ignore_errors=True)


async def caught_up(client: ServiceClient, timeout: float = STARTED, pause: Callable[[], Any] | None = None) -> None:
    """Everything the hosted service said before now has been read by ``client`` (nothing to wait for in process)."""
    if not isinstance(client, HostedClient):
        return
    hosted = client.hosted
    n = hosted.mark()
    deadline = time.monotonic() + timeout
    while hosted.seen < n:
        if time.monotonic() > deadline:
            raise AssertionError(f"the app's stream did not bring the service's mark within {timeout:g}s")
        await (pause() if pause is not None else asyncio.sleep(0.01))
