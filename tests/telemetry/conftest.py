"""Fixtures of the telemetry tests: an in-memory span exporter behind eve's own provider."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_runtime.sessions.runtime import RuntimeOptions
from eve_runtime.telemetry.provider import Telemetry
from tests.server.conftest import agent, compiled_app, manifest  # noqa: F401 (the server tests' app)
from tests.server.support import FAST


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def telemetry(exporter: InMemorySpanExporter) -> Iterator[Telemetry]:
    started = Telemetry.start({"memory": exporter}, batch=False, service_name="weather-agent")
    yield started
    started.shutdown()


@pytest.fixture
def traced(telemetry: Telemetry) -> RuntimeOptions:
    """The fast runtime options, recording spans."""
    return dataclasses.replace(FAST, telemetry=telemetry)
