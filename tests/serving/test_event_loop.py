"""The serving loop: uvloop where installed, asyncio's own with `EVE_EVENT_LOOP=asyncio`."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from eve_runtime.serving import event_loop


async def _loop_type() -> type[asyncio.AbstractEventLoop]:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


def test_a_server_runs_on_uvloop_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.EVENT_LOOP_ENV, raising=False)
    assert issubclass(event_loop.run(_loop_type()), uvloop.Loop)


@pytest.mark.parametrize("value", ["asyncio", " AsyncIO "])
def test_the_standard_loop_when_asked_for(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(event_loop.EVENT_LOOP_ENV, value)
    loop_type = event_loop.run(_loop_type())
    assert not issubclass(loop_type, uvloop.Loop)
    assert issubclass(loop_type, asyncio.BaseEventLoop)


def test_run_returns_the_result_and_closes_its_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.EVENT_LOOP_ENV, raising=False)
    seen: list[asyncio.AbstractEventLoop] = []

    async def main() -> int:
        seen.append(asyncio.get_running_loop())
        return 42

    assert event_loop.run(main()) == 42
    assert seen[0].is_closed()
