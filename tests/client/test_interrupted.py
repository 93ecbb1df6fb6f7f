"""A stream that ends with `stream.interrupted` (its store failed) is resumed from the cursor after a pause."""

from __future__ import annotations

import json

import pytest

from eve_runtime.client import StreamReconnectExhausted
from eve_runtime.client._protocol import StreamCursor

HEADERS = {"x-eve-stream-version": "26"}
INTERRUPTED = b'{"$eve":"stream.interrupted","version":1,"code":"store_unavailable"}\n'


def _event(n: int) -> bytes:
    return json.dumps({"type": "message.delta", "data": {}, "meta": {"id": f"evt_{n}"}}).encode() + b"\n"


def test_an_interrupted_follow_reconnects_later_from_its_cursor() -> None:
    cursor = StreamCursor("wrun_x", 0, follow=True, max_reconnects=3)
    cursor.opened(HEADERS)
    assert [e["meta"]["id"] for e in cursor.feed(b"\n" + _event(0) + _event(1) + INTERRUPTED)] == ["evt_0", "evt_1"]
    assert cursor.closed() == "later" and cursor.reconnect_delay() > 0  # not the normal end ("probe")
    assert cursor.params()["startIndex"] == "2"
    cursor.opened(HEADERS)
    cursor.feed(b"\n" + INTERRUPTED)
    assert cursor.closed() == "later"
    cursor.opened(HEADERS)
    cursor.feed(b"\n" + INTERRUPTED)
    with pytest.raises(StreamReconnectExhausted):  # the store stayed down through every attempt
        cursor.closed()


def test_progress_before_an_interruption_resets_the_count() -> None:
    cursor = StreamCursor("wrun_x", 0, follow=True, max_reconnects=2)
    for n in range(5):
        cursor.opened(HEADERS)
        cursor.feed(b"\n" + _event(n) + INTERRUPTED)
        assert cursor.closed() == "later"
    assert cursor.index == 5
