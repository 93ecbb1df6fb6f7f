"""Secrets in a turn: masked in what is stored and what the model reads, unmasked where the provider needs them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.messages import Message, ToolCall, ToolMessage
from eve_runtime.models import FunctionInfo, FunctionModel
from eve_runtime.redaction import MASK, REDACTOR
from tests.harness import make_harness, of_type

pytestmark = pytest.mark.anyio

SECRET = "sk-planted-secret-0123456789"
OPTION_KEY = "sk-option-key-9876543210"

FILES = {
    "agent/agent.py": (
        "from eve_runtime import define_agent\n\n"
        f"agent = define_agent(model='test', model_options={{'api_key': '{OPTION_KEY}'}})\n"
    ),
    "agent/tools/boom.py": (
        "import os\n\ndef boom() -> str:\n"
        '    """Fails with a secret in its message."""\n'
        "    raise RuntimeError('refused: ' + os.environ['PLANTED_API_KEY'])\n"
    ),
}


async def test_a_secret_in_a_tool_error_is_masked_but_options_reach_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANTED_API_KEY", SECRET)
    REDACTOR.refresh()
    seen: list[tuple[list[Message], FunctionInfo]] = []

    async def stream(messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | ToolCall]:
        seen.append((messages, info))
        if not any(isinstance(m, ToolMessage) for m in messages):
            yield ToolCall(id="c1", name="boom", arguments={})
        else:
            yield "ok"

    h = await make_harness(tmp_path, FILES, models={"test": FunctionModel(stream_function=stream)})
    sid = await h.create("go")
    events = await h.turns(sid, 1)
    rows = await h.store.read_events(sid)
    history = await h.store.load_history(sid)
    checkpoint = await h.store.load_checkpoint(sid)
    await h.stop()
    [result] = of_type(events, "action.result")
    assert result["data"]["error"]["message"] == f"refused: {MASK}"
    stored = b"".join(r.line for r in rows) + "".join(history).encode() + (checkpoint or "").encode()
    assert SECRET.encode() not in stored and OPTION_KEY.encode() not in stored
    [answer] = [m for m in seen[-1][0] if isinstance(m, ToolMessage)]
    assert answer.content == f"RuntimeError: refused: {MASK}"  # the model is told, masked
    assert all(info.settings.model_options["api_key"] == OPTION_KEY for _, info in seen)  # the provider gets it
    assert h.app.manifest.root is not None and h.app.manifest.root.model.options == {"api_key": MASK}
