"""`eve dev --trace` prints each turn's tree, and with `OTEL_EXPORTER_OTLP_ENDPOINT` the spans reach a collector."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_serve import _converse, serving
from tests.server.support import scaffold_app
from tests.telemetry.collector import collector

pytestmark = pytest.mark.scenario


def test_dev_trace_prints_a_tree_per_turn_and_exports_over_otlp(tmp_path: Path) -> None:
    app = scaffold_app(tmp_path / "weather-agent")
    with collector() as received:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": received.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
        with serving(app, "dev", "--no-ui", "--trace", env=env) as server:
            events = _converse(server.url, {})
            spans = received.wait_for(7)
            server.stop()
    assert server.returncode == 0, server.stderr
    (started,) = [e["data"]["trace"] for e in events if e["type"] == "session.started"]
    assert {s.trace_id for s in spans} == {started["traceId"]}
    assert {s.service for s in spans} == {"weather-agent"}
    lines = server.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if f"trace {started['traceId']}" in line)
    tree = lines[start : start + 8]
    assert "weather-agent turn_0 · completed" in tree[0]
    assert tree[1].startswith("agent.session weather-agent")
    assert tree[2].startswith("└── invoke_agent weather-agent") and " tokens" in tree[2]
    assert tree[3].startswith("    ├── agent.step #0")
    assert tree[4].startswith("    │   ├── chat test") and tree[4].endswith("tool-calls")
    assert tree[5].startswith("    │   └── execute_tool get_weather")
    assert tree[6].startswith("    └── agent.step #1")
    assert tree[7].startswith("        └── chat test") and tree[7].endswith("stop")
    assert server.stdout_rest.splitlines() == [f"eve inspector at {server.url}/"]  # the trees go to stderr
