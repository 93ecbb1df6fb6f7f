"""Events per second delivered to a streaming client, against a bare starlette NDJSON endpoint.

Both servers run in this process on 127.0.0.1 under uvicorn, one at a time; an httpx client reads
the whole response line by line. eve serves a bounded read (`follow=false`) of a session holding
N stored events (each a real event line) from the local world (SQLite); the baseline is a bare
starlette `StreamingResponse` yielding the same lines from memory. Target (DESIGN.md): eve
delivers at least 0.8x the baseline's events per second.

The session's events were just committed, as a client streaming its own session reads them, so
the store serves them from its cache of the newest lines; a third line reads them from the
database instead (the cache swapped for an empty one), as after a restart or for an old session.

Run: `.venv/bin/python bench/stream_throughput.py [events] [runs]`
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median, verdict
from eve_runtime.events.wire import event_line, now_iso
from eve_runtime.ids import new_event_id
from eve_runtime.server.app import create_app
from eve_runtime.server.auth import BearerTokenAuth
from eve_runtime.serving.serve import run_app
from eve_runtime.store.base import Commit, EventRow
from eve_runtime.store.tail_cache import TailCache

TOKEN = "bench-token"
TARGET_RATIO = 0.8


def _lines(count: int) -> list[bytes]:
    """Event lines shaped like a streamed reply (message.appended deltas)."""
    return [
        event_line(
            "message.appended",
            {"messageDelta": f"word{n} ", "sequence": 0, "stepIndex": 0, "turnId": "turn_0"},
            event_id=new_event_id(),
            at=now_iso(),
            delivery_ids=["d0"],
        )
        for n in range(count)
    ]


def _bare_app(lines: list[bytes]) -> Starlette:
    async def stream(request: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            yield b"\n"
            for start in range(0, len(lines), 256):
                yield b"".join(line + b"\n" for line in lines[start : start + 256])

        return StreamingResponse(body(), media_type="application/x-ndjson")

    return Starlette(routes=[Route("/stream", stream)])


async def _serve_and_read(app: Any, path: str, headers: dict[str, str]) -> tuple[int, float]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    ready = asyncio.Event()
    stop = asyncio.Event()
    server = asyncio.create_task(
        run_app(app, sock, on_listening=lambda _port: ready.set(), stop=stop, handle_signals=False)
    )
    await ready.wait()
    port = sock.getsockname()[1]
    count = 0
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60) as client:
        started = time.perf_counter()
        async with client.stream("GET", path) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line:
                    count += 1
        elapsed = time.perf_counter() - started
    stop.set()
    await server
    return count, elapsed


async def run_async(events: int = 20_000, runs: int = 3) -> dict[str, Any]:
    lines = _lines(events)
    async with local_world("stream") as world:
        session = await world.runtime.create_session()
        for start in range(0, events, 1000):
            rows = [
                EventRow(index=i, type="message.appended", line=lines[i])
                for i in range(start, min(events, start + 1000))
            ]
            await world.store.commit(session.id, Commit(events=rows))
        bare_app = _bare_app(lines)
        eve_rates: list[float] = []
        cold_rates: list[float] = []
        bare_rates: list[float] = []
        path = f"/eve/v1/session/{session.id}/stream?follow=false"
        for _ in range(runs):
            count, elapsed = await _serve_and_read(bare_app, "/stream", {})
            assert count == events
            bare_rates.append(count / elapsed)
            # A served app closes its streams when its server stops: one app per server.
            eve_app = create_app(world.runtime, world.app.manifest, mode="production", auth=BearerTokenAuth(TOKEN))
            count, elapsed = await _serve_and_read(eve_app, path, {"authorization": f"Bearer {TOKEN}"})
            assert count == events, count
            eve_rates.append(count / elapsed)
            held, world.store.tail_cache = world.store.tail_cache, TailCache(0)
            try:
                eve_app = create_app(world.runtime, world.app.manifest, mode="production", auth=BearerTokenAuth(TOKEN))
                count, elapsed = await _serve_and_read(eve_app, path, {"authorization": f"Bearer {TOKEN}"})
            finally:
                world.store.tail_cache = held
            assert count == events, count
            cold_rates.append(count / elapsed)
    return {
        "events": events,
        "eve_per_s": median(eve_rates),
        "cold_per_s": median(cold_rates),
        "bare_per_s": median(bare_rates),
    }


def run(events: int = 20_000, runs: int = 3) -> dict[str, Any]:
    """Measure both servers; returns the medians."""
    return asyncio.run(run_async(events, runs))


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    figures = run(events, runs)
    ratio = figures["eve_per_s"] / figures["bare_per_s"]
    print(f"stream throughput, {events} events, median of {runs} runs (target: at least {TARGET_RATIO:.0%} of bare)")
    print(f"  bare starlette NDJSON  {figures['bare_per_s']:>10,.0f} events/s")
    eve = figures["eve_per_s"]
    print(f"  eve stream (SQLite)    {eve:>10,.0f} events/s  {ratio:.2f}x  {verdict(ratio >= TARGET_RATIO)}")
    cold = figures["cold_per_s"]
    print(f"  eve, no line cache     {cold:>10,.0f} events/s  {cold / figures['bare_per_s']:.2f}x  (no cache)")


if __name__ == "__main__":
    main()
