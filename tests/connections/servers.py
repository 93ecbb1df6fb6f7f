"""Real servers for the connection tests: the FastMCP fixture over HTTP (a subprocess), and the OpenAPI service."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fixtures.openai_server import ThreadedServer
from tests.fixtures.openapi_service import create_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_server.py"
OAUTH_FIXTURE = FIXTURE.with_name("mcp_oauth_server.py")
STDIO_COMMAND = [sys.executable, str(FIXTURE), "stdio"]


class McpHttpServer:
    """`mcp_server.py http` (or another fixture) in a subprocess; `restart()` brings it back on the same port."""

    def __init__(
        self,
        folder: Path,
        *,
        token: str | None = None,
        call_log: Path | None = None,
        fixture: Path = FIXTURE,
        environment: dict[str, str] | None = None,
    ) -> None:
        self.folder = folder
        self.fixture = fixture
        self.environment = environment or {}
        self.token = token
        self.call_log = call_log
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> McpHttpServer:
        port_file = self.folder / f"mcp-port-{time.monotonic_ns()}"
        environment = dict(os.environ, MCP_PORT=str(self.port), **self.environment)
        if self.token:
            environment["MCP_TOKEN"] = self.token
        if self.call_log:
            environment["MCP_CALL_LOG"] = str(self.call_log)
        self.process = subprocess.Popen([sys.executable, str(self.fixture), "http", str(port_file)], env=environment)
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the MCP fixture server did not start")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()


class OpenApiServer:
    """The OpenAPI service on a `ThreadedServer`."""

    def __init__(self) -> None:
        self._server = ThreadedServer(create_app(), "openapi-fixture")

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OpenApiServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
