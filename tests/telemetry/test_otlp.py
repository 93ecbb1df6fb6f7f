"""OTLP export through the standard environment variables, and an endpoint that fails never failing a turn."""

from __future__ import annotations

import dataclasses
import logging
import socket
from typing import Any

import pytest

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.telemetry.server import telemetry_from_environment, wanted
from tests.server.support import FAST, WEATHER_CALL, harness
from tests.telemetry.collector import collector


def test_telemetry_is_off_without_an_endpoint_or_trace() -> None:
    assert not wanted({}) and telemetry_from_environment({}) is None
    assert wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert not wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"})
    assert not wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"})
    assert wanted({}, trace=True)


def test_spans_reach_an_otlp_collector_named_by_the_environment(
    agent: RuntimeAgent, manifest: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    with collector() as received:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", received.url)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "weather-service")
        telemetry = telemetry_from_environment(service_name="weather-agent")
        assert telemetry is not None
        with harness(agent, manifest, options=dataclasses.replace(FAST, telemetry=telemetry)) as api:
            session_id = api.create(WEATHER_CALL)
            events = api.wait_for(session_id, "session.waiting")
        telemetry.shutdown(timeout=10)  # flushes the batch
        spans = received.wait_for(7)
    (started,) = [e["data"]["trace"] for e in events if e["type"] == "session.started"]
    names = sorted(s.name for s in spans)
    assert names == sorted(
        [
            "agent.session weather-agent",
            "invoke_agent weather-agent",
            "agent.step",
            "agent.step",
            "chat test",
            "chat test",
            "execute_tool get_weather",
        ]
    )
    assert {s.trace_id for s in spans} == {started["traceId"]}
    (session,) = [s for s in spans if s.name.startswith("agent.session")]
    assert session.span_id == started["spanId"] and session.service == "weather-service"
    chat = next(s for s in spans if s.name == "chat test")
    assert chat.attributes["gen_ai.system"] == "test" and chat.attributes["gen_ai.usage.input_tokens"] > 0


@pytest.fixture
def refused() -> Any:
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("endpoint", ["refused", "hanging"])
def test_an_endpoint_that_refuses_or_hangs_never_fails_a_turn_and_is_logged_once(
    agent: RuntimeAgent,
    manifest: Manifest,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    refused: str,
    endpoint: str,
) -> None:
    with collector(hang=True) as hanging:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", refused if endpoint == "refused" else hanging.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "0.5")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
        telemetry = telemetry_from_environment()
        assert telemetry is not None
        with caplog.at_level(logging.WARNING, logger="eve.telemetry"):
            with harness(agent, manifest, options=dataclasses.replace(FAST, telemetry=telemetry)) as api:
                sessions = [api.create(WEATHER_CALL) for _ in range(3)]
                for session_id in sessions:
                    events = api.wait_for(session_id, "session.waiting")
                    assert [e["type"] for e in events][-2:] == ["turn.completed", "session.waiting"]
                telemetry.force_flush(timeout=1)
                api.create("hello again")  # a turn while the exporter is failing
            telemetry.shutdown(timeout=1)
    failures = [r for r in caplog.records if "could not export spans" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in caplog.records]
