"""The connection manager against real servers: the FastMCP fixture (stdio and HTTP) and the OpenAPI service."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import pytest

from eve_runtime import connection_auth, define_mcp_client_connection, define_openapi_connection, env
from eve_runtime.authoring.connection_access import ConnectionCallError
from eve_runtime.authoring.connections import AuthContext
from eve_runtime.connections import ConnectionManager, model_text
from tests.connections.servers import STDIO_COMMAND, McpHttpServer, OpenApiServer

pytestmark = pytest.mark.anyio

CALLER = AuthContext(connection="x", session_id="s1", principal_id="alice")
STDIO = define_mcp_client_connection(command=STDIO_COMMAND, description="The test server over stdio.")


@pytest.fixture
async def manager() -> AsyncIterator[ConnectionManager]:
    connections = ConnectionManager()
    yield connections
    await connections.close()


async def test_stdio_lists_calls_and_maps_results(manager: ConnectionManager) -> None:
    tools = {t.name: t for t in await manager.list_tools("srv", STDIO, CALLER)}
    assert {"echo", "add", "explode", "picture"} <= set(tools)
    assert tools["echo"].qualified == "srv__echo"
    assert tools["echo"].read_only and not tools["record"].read_only
    assert tools["add"].input_schema["required"] == ["a", "b"]
    added = await manager.call("srv", STDIO, "add", {"a": 2, "b": 3}, CALLER)
    assert added["structuredContent"] == {"total": 5}
    assert "5" in model_text(added) and "structuredContent" not in model_text(added)
    picture = await manager.call("srv", STDIO, "picture", {}, CALLER)
    (part,) = picture["content"]
    assert part["type"] == "file" and part["mediaType"] == "image/png" and part["data"].startswith("iVBOR")
    assert model_text(picture) == "[file: image/png]"


async def test_errors_are_failures_carrying_the_mcp_error(manager: ConnectionManager) -> None:
    failed = await manager.call("srv", STDIO, "explode", {"reason": "boom"}, CALLER)
    assert failed["code"] == "MCP_TOOL_ERROR"
    assert failed["message"].startswith("Tool call failed:") and "exploded: boom" in failed["message"]
    unknown = await manager.call("srv", STDIO, "nope", {}, CALLER)
    assert unknown["code"] in ("MCP_ERROR", "MCP_TOOL_ERROR") and "nope" in unknown["message"]


async def test_a_tool_filter_hides_tools_and_refuses_their_calls(manager: ConnectionManager) -> None:
    only = define_mcp_client_connection(command=STDIO_COMMAND, description="x", tools={"allow": ["echo"]})
    assert [t.name for t in await manager.list_tools("srv", only, CALLER)] == ["echo"]
    with pytest.raises(ConnectionCallError) as raised:
        await manager.call("srv", only, "add", {"a": 1, "b": 1}, CALLER)
    assert raised.value.code == "UNKNOWN_TOOL"


async def test_a_killed_stdio_server_is_started_again(manager: ConnectionManager) -> None:
    first = model_text(await manager.call("srv", STDIO, "whoami", {}, CALLER))
    os.kill(int(first), signal.SIGKILL)
    await asyncio.sleep(0.2)
    second = model_text(await manager.call("srv", STDIO, "whoami", {}, CALLER))
    assert second != first and int(second) > 0


async def test_the_list_is_refreshed_when_the_server_says_it_changed(manager: ConnectionManager) -> None:
    before = {t.name for t in await manager.list_tools("srv", STDIO, CALLER)}
    assert "late" not in before
    await manager.call("srv", STDIO, "grow", {"name": "late"}, CALLER)
    for _ in range(100):
        after = {t.name for t in await manager.list_tools("srv", STDIO, CALLER)}
        if "late" in after:
            break
        await asyncio.sleep(0.02)
    assert "late" in after


async def test_http_server_restart_mid_session(manager: ConnectionManager, mcp_http: McpHttpServer) -> None:
    http = define_mcp_client_connection(url=mcp_http.url, description="The test server over HTTP.")
    assert "echo" in {t.name for t in await manager.list_tools("web", http, CALLER)}
    first = model_text(await manager.call("web", http, "whoami", {}, CALLER))
    mcp_http.restart()
    second = model_text(await manager.call("web", http, "whoami", {}, CALLER))
    assert second != first
    assert model_text(await manager.call("web", http, "echo", {"text": "hi"}, CALLER)) == "echo: hi"


async def test_an_unreachable_server_says_so(manager: ConnectionManager) -> None:
    gone = define_mcp_client_connection(url="http://127.0.0.1:9/mcp", description="x")
    with pytest.raises(ConnectionCallError) as raised:
        await manager.list_tools("gone", gone, CALLER)
    assert raised.value.code == "CONNECTION_UNAVAILABLE" and "is the MCP server running" in raised.value.message
    missing = define_mcp_client_connection(command=["/nonexistent/mcp-server"], description="x")
    with pytest.raises(ConnectionCallError) as raised:
        await manager.list_tools("missing", missing, CALLER)
    assert "no such program" in raised.value.message


async def test_tokens_from_the_environment_or_supplied(
    manager: ConnectionManager, mcp_http_token: McpHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCS_TOKEN", raising=False)
    guarded = define_mcp_client_connection(
        url=mcp_http_token.url, description="x", auth=connection_auth(token_env="DOCS_TOKEN", credential_owner="user")
    )
    needed = await manager.sign_in_needed("docs", guarded, CALLER)
    assert (
        needed is not None
        and "DOCS_TOKEN" in needed.instructions
        and "/eve/v1/connections/docs/token" in needed.instructions
    )
    with pytest.raises(ConnectionCallError) as raised:
        await manager.list_tools("docs", guarded, CALLER)
    assert raised.value.code == "AUTHORIZATION_REQUIRED"
    manager.supply_token("docs", "wrong", principal_id="alice")
    with pytest.raises(ConnectionCallError) as raised:
        await manager.list_tools("docs", guarded, CALLER)
    assert "401" in raised.value.message
    manager.supply_token("docs", "s3cret-token", principal_id="alice")
    assert await manager.sign_in_needed("docs", guarded, CALLER) is None
    assert "echo" in {t.name for t in await manager.list_tools("docs", guarded, CALLER)}
    bob = AuthContext(connection="docs", session_id="s2", principal_id="bob")
    assert await manager.sign_in_needed("docs", guarded, bob) is not None  # the user's token is alice's only
    monkeypatch.setenv("DOCS_TOKEN", "s3cret-token")
    assert await manager.sign_in_needed("docs", guarded, bob) is None


async def test_openapi_operations_become_tools(manager: ConnectionManager, openapi_service: OpenApiServer) -> None:
    monkey_token = "api-key-1"
    pets = define_openapi_connection(
        spec=f"{openapi_service.url}/openapi.json",
        description="The pets API.",
        auth=connection_auth(get_token=lambda ctx: {"token": monkey_token}),
        headers={"X-Trace": env("EVE_TEST_UNSET_HEADER")},
    )
    tools = {t.name: t for t in await manager.list_tools("pets", pets, CALLER)}
    assert set(tools) == {"listPets", "createPet", "getPet", "deletePet", "whoami"}
    assert tools["listPets"].read_only and not tools["createPet"].read_only
    assert tools["getPet"].input_schema["required"] == ["petId"]
    assert tools["createPet"].input_schema["properties"]["body"]["required"] == ["name"]  # the $ref resolved
    listed = await manager.call("pets", pets, "listPets", {"limit": 1}, CALLER)
    assert listed == {"status": 200, "body": [{"id": "1", "name": "Rex", "kind": "dog"}]}
    created = await manager.call("pets", pets, "createPet", {"body": {"name": "Tom", "kind": "cat"}}, CALLER)
    assert created["status"] == 201 and created["body"]["name"] == "Tom"
    fetched = await manager.call("pets", pets, "getPet", {"petId": created["body"]["id"]}, CALLER)
    assert fetched["body"]["kind"] == "cat"
    missing = await manager.call("pets", pets, "getPet", {"petId": "404"}, CALLER)
    assert missing["code"] == "HTTP_404" and "no such pet" in missing["message"]
    assert (await manager.call("pets", pets, "whoami", {}, CALLER))["body"] == {"authorization": "Bearer api-key-1"}


async def test_openapi_from_a_file_with_an_operation_filter(
    manager: ConnectionManager, openapi_service: OpenApiServer, tmp_path: object
) -> None:
    import json
    from pathlib import Path

    from tests.fixtures.openapi_service import DOCUMENT

    folder = Path(str(tmp_path))
    (folder / "pets.json").write_text(json.dumps(DOCUMENT))
    pets = define_openapi_connection(
        spec="pets.json", description="x", base_url=f"{openapi_service.url}/api", operations=["listPets"]
    )
    from dataclasses import replace

    pets = replace(pets, spec_base=str(folder))
    assert [t.name for t in await manager.list_tools("pets", pets, CALLER)] == ["listPets"]
    assert (await manager.call("pets", pets, "listPets", {}, CALLER))["status"] == 200
    broken = replace(pets, spec="missing.json")
    with pytest.raises(ConnectionCallError) as raised:
        await manager.list_tools("pets2", broken, CALLER)
    assert raised.value.code == "CONNECTION_UNAVAILABLE"


async def test_a_call_that_takes_too_long_times_out(manager: ConnectionManager) -> None:
    hasty = define_mcp_client_connection(command=STDIO_COMMAND, description="x", tool_call={"timeout": 0.5})
    with pytest.raises(ConnectionCallError) as raised:
        await manager.call("srv", hasty, "record", {"text": "slow", "seconds": 3}, CALLER)
    assert raised.value.code == "CONNECTION_INTERRUPTED" and "did not answer within 0.5 s" in raised.value.message
    assert model_text(await manager.call("srv", hasty, "echo", {"text": "after"}, CALLER)) == "echo: after"


async def test_a_new_definition_of_a_connection_retires_the_old_link(manager: ConnectionManager) -> None:
    first = define_mcp_client_connection(command=STDIO_COMMAND, description="x")
    pid = int(model_text(await manager.call("srv", first, "whoami", {}, CALLER)))
    second = define_mcp_client_connection(command=STDIO_COMMAND, description="x")  # a rebuild
    assert int(model_text(await manager.call("srv", second, "whoami", {}, CALLER))) != pid
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the old stdio server still runs")
