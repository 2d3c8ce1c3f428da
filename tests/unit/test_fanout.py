"""One policy for every event stream (shared/fanout.py): what the service's streams and the phone page's share.

Each item is handed to every follower in order; one that falls its limit
behind is cut off (its stream ends, nothing more is put to it) while the
others go on; the end gives each its last word, room made for it, then the end.
"""

from __future__ import annotations

import asyncio

from headspace_tui.shared.fanout import Fanout


def drain(queue: asyncio.Queue) -> list:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


def test_every_follower_gets_every_item_in_order_and_a_slow_one_is_cut_off_alone():
    async def scenario() -> None:
        streams = Fanout(3, "a test client")
        fast, slow = streams.follow("fast"), streams.follow("slow")
        assert streams and len(streams) == 2 and streams.follows("slow")
        for n in range(3):
            streams.put(f"{n}".encode())
            assert drain(fast) == [f"{n}".encode()]
        streams.put(b"3")  # the slow one holds 0, 1, 2: no room
        assert drain(fast) == [b"3"]
        assert not streams.follows("slow") and len(streams) == 1
        assert drain(slow)[-1] is None  # its stream ends (it reconnects and reads the state again)
        streams.put(b"4")
        assert drain(slow) == [] and drain(fast) == [b"4"]

    asyncio.run(scenario())


def test_the_end_gives_each_its_last_word_then_the_end_even_when_full():
    async def scenario() -> None:
        streams = Fanout(3, "a test client")
        full, empty = streams.follow(), streams.follow()
        streams.put(b"a", b"b", b"c")
        drain(empty)
        streams.end(b"why")
        assert drain(full)[-2:] == [b"why", None]
        assert drain(empty) == [b"why", None]
        streams.leave(full)
        streams.leave(empty)
        assert not streams

    asyncio.run(scenario())


def test_put_to_one_follower_reaches_only_it_and_none_once_it_left():
    async def scenario() -> None:
        streams = Fanout(5, "a page")
        one, other = streams.follow("one"), streams.follow("other")
        assert [name for _, name in streams.items()] == ["one", "other"]
        streams.put_to(one, b"screen")
        assert drain(one) == [b"screen"] and drain(other) == []
        streams.leave(one)
        streams.put_to(one, b"late")
        assert drain(one) == []

    asyncio.run(scenario())
