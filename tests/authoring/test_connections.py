"""define_mcp_client_connection, define_openapi_connection, connection_auth, env() and auto()."""

from __future__ import annotations

import asyncio

import pytest

from eve_runtime import (
    auto,
    connection_auth,
    define_mcp_client_connection,
    define_openapi_connection,
    env,
    mcp_oauth,
)
from eve_runtime.authoring.approval import ApprovalCheck, decide
from eve_runtime.errors import DefinitionError


def test_an_mcp_connection_takes_exactly_one_transport() -> None:
    with pytest.raises(DefinitionError, match="exactly one of url= .* or command="):
        define_mcp_client_connection(description="x")
    with pytest.raises(DefinitionError, match="exactly one"):
        define_mcp_client_connection(description="x", url="http://h/mcp", command=["srv"])
    stdio = define_mcp_client_connection(description="x", command="python", args=["server.py"])
    assert stdio.command == ("python", "server.py") and stdio.transport == "stdio"
    assert stdio.shown_url() == "stdio:python"


def test_what_info_shows_of_a_url_has_no_secrets() -> None:
    http = define_mcp_client_connection(description="x", url="https://user:pw@mcp.example.com:8443/mcp?key=abc")
    assert http.shown_url() == "https://mcp.example.com:8443/mcp"


def test_bad_definitions_say_what_to_fix() -> None:
    with pytest.raises(DefinitionError, match="description"):
        define_mcp_client_connection(description=" ", url="http://h/mcp")
    with pytest.raises(DefinitionError, match="http"):
        define_mcp_client_connection(description="x", url="ftp://h")
    with pytest.raises(DefinitionError, match="allow"):
        define_mcp_client_connection(description="x", url="http://h/mcp", tools={"only": ["a"]})
    with pytest.raises(DefinitionError, match="timeout"):
        define_mcp_client_connection(description="x", url="http://h/mcp", tool_call={"retries": 2})
    with pytest.raises(DefinitionError, match="Header"):
        define_mcp_client_connection(description="x", url="http://h/mcp", headers={"X": 3})  # type: ignore[dict-item]
    with pytest.raises(DefinitionError, match="credential_owner"):
        connection_auth(credential_owner="team")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="spec="):
        define_openapi_connection(spec="", description="x")


def test_oauth_is_for_http_mcp_connections_and_replaces_tokens() -> None:
    oauth = connection_auth(oauth=mcp_oauth(client_name=" Support agent "), credential_owner="user")
    http = define_mcp_client_connection(description="x", url="https://mcp.example.com/mcp", auth=oauth)
    assert http.auth is not None and http.auth.oauth is not None and http.auth.oauth.client_name == "Support agent"
    with pytest.raises(DefinitionError, match="needs an HTTP MCP server"):
        define_mcp_client_connection(description="x", command="srv", auth=oauth)
    with pytest.raises(DefinitionError, match="for MCP connections"):
        define_openapi_connection(spec="api.json", description="x", auth=oauth)
    with pytest.raises(DefinitionError, match="replaces token_env="):
        connection_auth(oauth=mcp_oauth(), token_env="TOKEN")
    with pytest.raises(DefinitionError, match="client_name"):
        mcp_oauth(client_name="")
    with pytest.raises(DefinitionError, match="https://"):
        mcp_oauth(client_metadata_url="http://example.com/client.json")


def test_env_values_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    connection = define_mcp_client_connection(
        description="x", url="http://h/mcp", headers={"X-Key": env("EVE_T_KEY"), "X-Fixed": "1"}
    )
    monkeypatch.delenv("EVE_T_KEY", raising=False)
    assert connection.resolved_headers() == {"X-Fixed": "1"}
    monkeypatch.setenv("EVE_T_KEY", "later")
    assert connection.resolved_headers() == {"X-Key": "later", "X-Fixed": "1"}


def test_openapi_defaults_to_auto_approval_and_auto_asks_unless_read_only() -> None:
    pets = define_openapi_connection(spec="pets.yaml", description="x", operations={"block": ["deletePet"]})
    assert not pets.tools.admits("deletePet") and pets.tools.admits("listPets")
    assert pets.tools.describe() == {"block": ["deletePet"]}

    def check(read_only: bool) -> str:
        probe = ApprovalCheck("pets__x", {}, "c1", "s1", frozenset(), read_only=read_only)
        return asyncio.run(decide(pets.approval, probe))[0]

    assert repr(pets.approval) == "auto()" and repr(auto()) == "auto()"
    assert check(read_only=True) == "not-applicable"
    assert check(read_only=False) == "user-approval"
