"""The page's stream reader against a server that breaks a connection mid-line and whose log holds
one event twice: the page reconnects from its cursor (the index after the last whole line) and
shows the repeated event once.

The server here is a small starlette app serving the inspector's real files and a stream of real
event lines; only the stream's misbehaviour is staged, since a correct eve server never repeats one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from eve_runtime.server.auth import LoopbackAuth
from eve_runtime.server.inspector import inspector_routes
from tests.fixtures.openai_server import ThreadedServer
from tests.server.inspector.support import screenshot

pytestmark = pytest.mark.xdist_group("inspector")  # with the other browser modules, on one worker

SESSION = "wrun_01M8S0000000000000000000AA"
AT = "2026-12-01T12:00:00.000Z"
TURN = {"sequence": 0, "turnId": "turn_0"}
STEP = {**TURN, "stepIndex": 0}


def _line(event_type: str, data: dict[str, Any], event_id: str) -> bytes:
    return json.dumps({"data": data, "type": event_type, "meta": {"at": AT, "id": event_id}}).encode()


LINES = [
    _line("turn.started", TURN, "evt_01M8S00000000000000000000A"),
    _line("message.received", {"message": "hello", **TURN}, "evt_01M8S00000000000000000000B"),
    _line("message.appended", {"messageDelta": "a ", **STEP}, "evt_01M8S00000000000000000000C"),
    _line("message.appended", {"messageDelta": "b ", **STEP}, "evt_01M8S00000000000000000000D"),
    _line("message.appended", {"messageDelta": "b ", **STEP}, "evt_01M8S00000000000000000000D"),  # again
    _line("message.appended", {"messageDelta": "c", **STEP}, "evt_01M8S00000000000000000000E"),
]


class Staged:
    """The stream: a connection from the start breaks in the middle of line 3; others serve from `startIndex`.

    Every connection from 0 breaks (not only the first: a page may open and drop one while it
    routes), so the page shows line 5 only if it reconnects from its cursor.
    """

    def __init__(self) -> None:
        self.starts: list[int] = []

    async def stream(self, request: Request) -> StreamingResponse:
        start = int(request.query_params.get("startIndex", "0"))
        self.starts.append(start)
        first = start == 0

        async def body() -> AsyncIterator[bytes]:
            yield b"\n"
            if first:
                yield b"".join(line + b"\n" for line in LINES[start:3]) + LINES[3][:25]
                await asyncio.sleep(0.05)
                raise ConnectionResetError("the staged server breaks the connection mid-line")
            yield b"".join(line + b"\n" for line in LINES[start:])
            await asyncio.sleep(2)  # quiet, then a normal end (the page reconnects again)

        return StreamingResponse(body(), media_type="application/x-ndjson")

    def app(self) -> Starlette:
        async def build(request: Request) -> JSONResponse:
            return JSONResponse({"ok": True, "generation": 0, "rebuilds": 0, "status": "ready", "diagnostics": []})

        routes = [
            Route("/eve/v1/session/{sessionId}/stream", self.stream, methods=["GET"]),
            Route("/eve/v1/dev/build", build, methods=["GET"]),
            *inspector_routes(LoopbackAuth()),
        ]
        return Starlette(routes=routes)


@pytest.fixture
def staged(browser: Any) -> Iterator[tuple[Staged, ThreadedServer]]:
    stage = Staged()
    server = ThreadedServer(stage.app(), "inspector-stream-fixture")
    server.start()
    try:
        yield stage, server
    finally:
        server.stop()


def test_a_broken_line_and_a_repeated_event_show_once(
    staged: tuple[Staged, ThreadedServer], page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    stage, server = staged
    page.goto(f"http://127.0.0.1:{server.port}/#/session/{SESSION}/raw")
    rows = page.locator(".raw-table tbody tr")
    expect(rows).to_have_count(5)
    assert rows.evaluate_all("rows => rows.map(r => Number(r.dataset.index))") == [0, 1, 2, 3, 5]
    assert 3 in stage.starts and set(stage.starts) <= {0, 3}  # reconnected after the last whole line
    page.click(".tabs a:has-text('Conversation')")
    expect(page.locator('.item.assistant[data-state="streaming"] .text')).to_have_text("a b c")
    expect(page.locator(".item.user .text")).to_have_text("hello")
    screenshot(page, tmp_path, "stream-deduplicated")
