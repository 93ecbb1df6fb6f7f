"""Fixtures of the client tests: the compiled template app, a live server, and recorded event lists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.server.stream import StreamOptions
from tests.client.recordings import record_scenarios
from tests.server.support import LiveServer, scaffold_app

QUICK_LEASES = StreamOptions(heartbeat_interval=0.05, lease_duration=0.25)
"""Leases short enough that a turn of a few hundred milliseconds crosses one."""


@pytest.fixture(scope="session")
def compiled_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledApp]:
    app_root = scaffold_app(tmp_path_factory.mktemp("client") / "weather-agent")
    compiled = compile_app(app_root, write=False)
    assert compiled.ok, compiled.diagnostics
    yield compiled
    compiled.loader.release()


@pytest.fixture(scope="module")
def server(compiled_app: CompiledApp) -> Iterator[LiveServer]:
    """The template app on a real uvicorn (development mode, memory store), with short stream leases."""
    assert compiled_app.root is not None
    with LiveServer(compiled_app.root, compiled_app.manifest, stream_options=QUICK_LEASES) as live:
        yield live


@pytest.fixture(scope="session")
def recordings(compiled_app: CompiledApp) -> dict[str, list[dict[str, Any]]]:
    """Event lists recorded from the real server, by scenario name (see `recordings.SCENARIOS`)."""
    assert compiled_app.root is not None
    return record_scenarios(compiled_app.root, compiled_app.manifest)
