"""How long the web inspector takes to render a 1,000-event session, through a real browser.

A scratch local world (the default template on the offline `test` model) runs real turns (a
tool call, a streamed reply) until the session holds at least N events; the app is served on
127.0.0.1 by uvicorn in this process; headless Chromium (Debian's package, driven by
Playwright) opens `/#/session/<id>` in a fresh context and the page reports, with
`performance.now()`, when it has drawn the last event: the figure is from navigation start to
that moment, so it includes loading the page, reading the stream and folding every event. The
raw view (one row per event) is measured the same way. The baseline, measured in the same run,
is the same page on a session with one turn. Target: a 1,000-event session under 1 s.

Run: `.venv/bin/python bench/inspector_render.py [events] [runs]`
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import local_world, median, verdict
from eve_runtime.server.app import create_app
from eve_runtime.server.auth import LoopbackAuth
from eve_runtime.serving.serve import run_app

CHROMIUM = "/usr/bin/chromium"
TARGET_SECONDS = 1.0
TURN = '/call get_weather {"city":"Paris"}\n/say ' + " ".join(f"word{n}" for n in range(12))


async def _events(world: Any, session_id: str) -> int:
    return len(await world.store.read_events(session_id))


async def _session(world: Any, events: int) -> tuple[str, int]:
    """A session holding at least `events` events, made of real turns; its id and event count."""
    session = await world.runtime.create_session()
    count = await _events(world, session.id)
    while count < events:
        await world.turn(session.id, TURN)
        count = await _events(world, session.id)
    return session.id, count


async def _render_ms(browser: Any, url: str, count: int) -> float:
    """Milliseconds from navigation start until the page drew the `count`-th event."""
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = await context.new_page()
        await page.goto(url)
        # Selectors, not script: the page's CSP forbids evaluating strings, Playwright's included.
        await page.wait_for_selector(f'#session[data-events="{count}"]', state="attached", timeout=60_000)
        if "/raw" in url:
            await page.wait_for_selector(f'.raw-table tr[data-index="{count - 1}"]', state="attached", timeout=60_000)
        return float(await page.get_attribute("#session", "data-rendered-at") or "nan")
    finally:
        await context.close()


async def run_async(events: int = 1000, runs: int = 5, *, warmup: bool = True) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    async with local_world("inspector") as world:
        baseline_id, baseline_count = await _session(world, 1)
        session_id, count = await _session(world, events)
        app = create_app(world.runtime, world.app.manifest, mode="development", auth=LoopbackAuth())
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        ready, stop = asyncio.Event(), asyncio.Event()
        server = asyncio.create_task(
            run_app(app, sock, on_listening=lambda _port: ready.set(), stop=stop, handle_signals=False)
        )
        await ready.wait()
        base = f"http://127.0.0.1:{sock.getsockname()[1]}/#/session/"
        figures: dict[str, list[float]] = {"baseline": [], "conversation": [], "raw": []}
        try:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
                try:
                    if warmup:  # the first page a browser opens is slower than the next ones
                        await _render_ms(browser, base + baseline_id, baseline_count)
                    for _ in range(runs):
                        figures["baseline"].append(await _render_ms(browser, base + baseline_id, baseline_count))
                        figures["conversation"].append(await _render_ms(browser, base + session_id, count))
                        figures["raw"].append(await _render_ms(browser, base + session_id + "/raw", count))
                finally:
                    await browser.close()
        finally:
            stop.set()
            await server
    return {
        "events": count,
        "baseline_events": baseline_count,
        **{f"{name}_ms": median(values) for name, values in figures.items()},
    }


def run(events: int = 1000, runs: int = 5, *, warmup: bool = True) -> dict[str, Any]:
    """Measure; returns the medians in milliseconds."""
    return asyncio.run(run_async(events, runs, warmup=warmup))


def report(figures: dict[str, Any]) -> None:
    target_ms = TARGET_SECONDS * 1000
    print(f"inspector render, {figures['events']} events (target: under {TARGET_SECONDS:g} s), medians")
    print(f"  one-turn session ({figures['baseline_events']} events)  {figures['baseline_ms']:>7.0f} ms")
    for name in ("conversation", "raw"):
        ms = figures[f"{name}_ms"]
        ratio = ms / target_ms
        extra = ms / figures["baseline_ms"] if figures["baseline_ms"] else float("nan")
        print(
            f"  {name:<12} view            {ms:>7.0f} ms  {ratio:.2f}x the target  "
            f"({extra:.1f}x the one-turn page)  {verdict(ms < target_ms)}"
        )


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    report(run(events, runs))


if __name__ == "__main__":
    main()
