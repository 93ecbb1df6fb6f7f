"""Connections in sessions: connection_search, qualified calls, results, approvals, sign-in parking, restarts.

Every test runs real servers: the FastMCP fixture over stdio (started by the connection) and over
streamable HTTP (a subprocess, once per test run), and the OpenAPI service (uvicorn, once per run).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.messages import Message, ToolCall
from eve_runtime.models.function import FunctionInfo, FunctionModel
from tests.connections.servers import STDIO_COMMAND, McpHttpServer, OpenApiServer
from tests.harness import Event, Harness, make_harness, of_type

pytestmark = pytest.mark.anyio


def _stdio(extra: str = "") -> str:
    return (
        "from eve_runtime import always, define_mcp_client_connection\n\n"
        f"srv = define_mcp_client_connection(command={STDIO_COMMAND!r}, description='The test server.'{extra})\n"
    )


def _http(url: str, extra: str = "") -> str:
    return (
        "from eve_runtime import connection_auth, define_mcp_client_connection\n\n"
        f"web = define_mcp_client_connection(url={url!r}, description='The test server over HTTP.'{extra})\n"
    )


def _pets(url: str) -> str:
    return (
        "from eve_runtime import define_openapi_connection\n\n"
        f"pets = define_openapi_connection(spec={url + '/openapi.json'!r}, description='The pets API.')\n"
    )


@pytest.fixture
async def stopping() -> AsyncIterator[list[Harness]]:
    harnesses: list[Harness] = []
    yield harnesses
    for harness in harnesses:
        await harness.stop()


async def _harness(tmp_path: Path, files: dict[str, str], stopping: list[Harness], **kwargs: object) -> Harness:
    harness = await make_harness(tmp_path, files, **kwargs)  # type: ignore[arg-type]
    stopping.append(harness)
    return harness


def _call(name: str, arguments: dict[str, object]) -> str:
    return f"/call {name} {json.dumps(arguments)}"


def _results(events: list[Event]) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, "action.result")]


async def test_search_then_call_by_qualified_name(tmp_path: Path, stopping: list[Harness]) -> None:
    offered: list[list[str]] = []

    def respond(messages: Sequence[Message], info: FunctionInfo) -> str | ToolCall:
        offered.append([t.name for t in info.tools])
        if info.call_count == 1:
            return ToolCall(id="c1", name="connection_search", arguments={"query": "add integers"})
        if info.call_count == 2:
            return ToolCall(id="c2", name="srv__add", arguments={"a": 20, "b": 22})
        return "done"

    h = await _harness(
        tmp_path, {"agent/connections/srv.py": _stdio()}, stopping, models={"test": FunctionModel(respond)}
    )
    sid = await h.create("add them")
    events = await h.turns(sid, 1, timeout=30)
    search, added = _results(events)
    found = [t["name"] for t in search["result"]["output"]["tools"]]
    assert found[0] == "srv__add"
    assert "connection_search" in offered[0] and "srv__add" not in offered[0]
    assert "srv__add" in offered[1]  # found by the search: offered from the next step on
    assert added["status"] == "completed"
    assert added["result"]["output"]["structuredContent"] == {"total": 42}
    assert "command" not in json.dumps(offered) and "mcp_server.py" not in json.dumps(events)


async def test_results_errors_and_images(tmp_path: Path, stopping: list[Harness]) -> None:
    h = await _harness(tmp_path, {"agent/connections/srv.py": _stdio()}, stopping)
    sid = await h.create(
        "\n".join(
            [
                _call("srv__echo", {"text": "hi"}),
                _call("srv__explode", {"reason": "bad input"}),
                _call("srv__picture", {}),
                _call("srv__missing", {}),
            ]
        )
    )
    events = await h.turns(sid, 1, timeout=30)
    by_name = {r["result"]["toolName"]: r for r in _results(events)}
    assert by_name["srv__echo"]["status"] == "completed"
    failed = by_name["srv__explode"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "MCP_TOOL_ERROR"
    assert "exploded: bad input" in failed["error"]["message"]
    (image,) = by_name["srv__picture"]["result"]["output"]["content"]
    assert image["type"] == "file" and image["mediaType"] == "image/png"
    assert by_name["srv__missing"]["status"] == "failed"
    reply = of_type(events, "message.completed")[-1]["data"]["message"]
    assert 'srv__echo -> "echo: hi"' in reply and "[file: image/png]" in reply


async def test_an_http_server_restarting_mid_session(
    tmp_path: Path, stopping: list[Harness], mcp_http: McpHttpServer
) -> None:
    h = await _harness(tmp_path, {"agent/connections/web.py": _http(mcp_http.url)}, stopping)
    sid = await h.create(_call("web__whoami", {}))
    first = _results(await h.turns(sid, 1, timeout=30))[0]
    mcp_http.restart()
    await h.send(sid, _call("web__whoami", {}))
    second = _results(await h.turns(sid, 2, timeout=30))[1]
    assert first["status"] == second["status"] == "completed"
    assert first["result"]["output"] != second["result"]["output"]


async def test_approval_of_connection_calls(
    tmp_path: Path, stopping: list[Harness], openapi_service: OpenApiServer
) -> None:
    files = {
        "agent/connections/pets.py": _pets(openapi_service.url),
        "agent/connections/srv.py": _stdio(", approval=always()"),
    }
    h = await _harness(tmp_path, files, stopping)
    sid = await h.create(
        _call("pets__listPets", {"limit": 1}) + "\n" + _call("pets__createPet", {"body": {"name": "Kit"}})
    )
    events = await h.wait_for(sid, lambda e: bool(of_type(e, "turn.waiting")), timeout=30)
    assert [r["result"]["toolName"] for r in _results(events)] == ["pets__listPets"]  # a GET runs (auto())
    (requested,) = of_type(events, "input.requested")
    (request,) = requested["data"]["requests"]
    assert request["action"]["toolName"] == "pets__createPet"
    await h.rt.deliver(
        sid, "responses", {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
    )
    events = await h.turns(sid, 1, timeout=30)
    created = _results(events)[-1]
    assert created["status"] == "completed" and created["result"]["output"]["status"] == 201
    await h.send(sid, _call("srv__echo", {"text": "x"}))
    events = await h.wait_for(sid, lambda e: len(of_type(e, "input.requested")) == 2, timeout=30)
    (request,) = of_type(events, "input.requested")[-1]["data"]["requests"]
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request["requestId"], "optionId": "deny"}]})
    events = await h.turns(sid, 2, timeout=30)
    assert _results(events)[-1]["status"] == "rejected"


async def test_sign_in_parks_the_turn_until_a_token_is_supplied(
    tmp_path: Path, stopping: list[Harness], mcp_http_token: McpHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEB_TOKEN", raising=False)
    extra = ", auth=connection_auth(token_env='WEB_TOKEN', sign_in_url='https://example.com/tokens')"
    h = await _harness(tmp_path, {"agent/connections/web.py": _http(mcp_http_token.url, extra)}, stopping)
    sid = await h.create(_call("web__echo", {"text": "after sign-in"}))
    events = await h.wait_for(sid, lambda e: bool(of_type(e, "turn.waiting")), timeout=30)
    (required,) = of_type(events, "authorization.required")
    assert (
        required["data"]["name"] == "web" and required["data"]["authorization"]["url"] == "https://example.com/tokens"
    )
    assert "WEB_TOKEN" in required["data"]["authorization"]["instructions"]
    assert of_type(events, "action.result") == [] and of_type(events, "input.requested") == []
    assert of_type(events, "session.waiting") == []
    h.rt.connections.supply_token("web", "s3cret-token")
    attempt = required["data"]["attemptId"]
    await h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": attempt, "optionId": "authorized"}]})
    events = await h.turns(sid, 1, timeout=30)
    (completed,) = of_type(events, "authorization.completed")
    assert completed["data"]["outcome"] == "authorized" and completed["data"]["attemptId"] == attempt
    (result,) = _results(events)
    assert result["status"] == "completed" and "echo: after sign-in" in json.dumps(result)
    assert "s3cret-token" not in json.dumps(await h.events(sid))


async def test_cancel_while_waiting_for_sign_in_declines_it(
    tmp_path: Path, stopping: list[Harness], mcp_http_token: McpHttpServer
) -> None:
    extra = ", auth=connection_auth(get_token=lambda ctx: None)"
    h = await _harness(tmp_path, {"agent/connections/web.py": _http(mcp_http_token.url, extra)}, stopping)
    sid = await h.create(_call("connection_search", {"query": "*"}))
    events = await h.wait_for(sid, lambda e: bool(of_type(e, "authorization.required")), timeout=30)
    await h.rt.cancel(sid, None)
    events = await h.turns(sid, 1, timeout=30)
    (completed,) = of_type(events, "authorization.completed")
    assert completed["data"]["outcome"] == "declined"
    assert of_type(events, "turn.cancelled")
