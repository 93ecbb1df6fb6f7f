"""Servers started once per test run: the HTTP MCP fixture (with and without a token) and the OpenAPI service."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connections.servers import McpHttpServer, OpenApiServer


@pytest.fixture(scope="session")
def mcp_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHttpServer]:
    server = McpHttpServer(tmp_path_factory.mktemp("mcp-http")).start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def mcp_http_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHttpServer]:
    server = McpHttpServer(tmp_path_factory.mktemp("mcp-auth"), token="s3cret-token").start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def openapi_service() -> Iterator[OpenApiServer]:
    server = OpenApiServer().start()
    yield server
    server.stop()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path
