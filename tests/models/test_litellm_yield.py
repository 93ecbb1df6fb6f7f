"""While litellm parses buffered chunks, `LiteLLMModel.stream` lets the event loop run about once a millisecond.

Not after every chunk: each turn of the loop costs a poll of its sockets, and a burst is hundreds
of chunks. A fake litellm (chunks that arrive without the stream ever waiting, each taking a
fifth of a millisecond to parse) stands in for a burst read from a provider's buffer.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from eve_runtime.messages import UserMessage
from eve_runtime.models import LiteLLMModel, ModelRequest, TextDelta, litellm_model

pytestmark = pytest.mark.anyio

CHUNKS = 60
PARSE = 0.0002


class _Burst:
    """litellm's stream of buffered chunks: each `__anext__` busy for `PARSE` seconds, never suspending."""

    def __init__(self) -> None:
        self.left = CHUNKS

    def __aiter__(self) -> _Burst:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if self.left == 0:
            raise StopAsyncIteration
        self.left -= 1
        until = time.perf_counter() + PARSE
        while time.perf_counter() < until:
            pass
        finish = "stop" if self.left == 0 else None
        return {"choices": [{"delta": {"content": "w "}, "finish_reason": finish}]}

    async def aclose(self) -> None:
        pass


class _FakeLitellm:
    async def acompletion(self, **kwargs: Any) -> _Burst:
        return _Burst()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_burst_lets_the_loop_run_once_a_millisecond_not_after_every_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(litellm_model, "_litellm_module", _FakeLitellm())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = LiteLLMModel("openai/gpt-4o-mini", guard=lambda model_id: None)
    ran = False

    async def ticker() -> None:
        nonlocal ran
        while True:
            ran = True
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    texts = after_loop = 0
    started = time.perf_counter()
    try:
        ran = False
        async for event in model.stream(ModelRequest(messages=[UserMessage(content="hi")])):
            if isinstance(event, TextDelta):
                texts += 1
                after_loop += ran  # the loop ran since the previous chunk
                ran = False
    finally:
        ticking.cancel()
    elapsed = time.perf_counter() - started
    assert texts == CHUNKS
    assert after_loop >= 2  # other tasks (the stream's writes and readers) run during the burst ...
    assert after_loop <= elapsed / litellm_model.YIELD_INTERVAL + 1  # ... at most once a millisecond
