"""What spans record: the agent's `telemetry` setting (eve's recordInputs/recordOutputs), reported on the events."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from eve_runtime import define_agent
from eve_runtime.errors import DefinitionError
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.runtime import RuntimeOptions
from eve_runtime.telemetry.ids import DROP, SessionTrace, TraceContext, TurnTrace, decision_for, open_session, open_turn
from tests.server.support import WEATHER_CALL, harness

CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def test_the_decision_follows_the_config_then_the_mode() -> None:
    record = {"action": "record", "recordInputs": True, "recordOutputs": True}
    assert decision_for(None, None, development=True) == record
    assert decision_for(None, None, development=False) == {**record, "recordInputs": False, "recordOutputs": False}
    assert decision_for(True, False, development=False) == {**record, "recordOutputs": False}
    assert decision_for(True, True, development=True, sampled=False) == DROP


def test_define_agent_takes_eves_record_inputs_and_outputs_in_snake_case() -> None:
    config = define_agent(model="test", telemetry={"record_inputs": True, "record_outputs": False}).telemetry
    assert (config.record_inputs, config.record_outputs) == (True, False)
    assert define_agent(model="test").telemetry.record_inputs is None
    with pytest.raises(DefinitionError, match="record_inputs"):
        define_agent(model="test", telemetry={"record_inputs": "yes"})
    with pytest.raises(DefinitionError, match="recordInputs"):
        define_agent(model="test", telemetry={"recordInputs": True})


def test_a_turns_stored_trace_state_round_trips_and_later_turns_link_to_the_session() -> None:
    caller = TraceContext("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", 1)
    session = open_session(caller, decision_for(None, None, development=True))
    assert session.context.trace_id == caller.trace_id and session.parent_span_id == caller.span_id
    assert SessionTrace.from_json(session.to_json()) == session
    first = open_turn(session, True, None, (0, 0))
    assert (
        first.reported == session.context
        and first.parent == session.context
        and first.span_id != session.context.span_id
    )
    later = open_turn(session, False, None, (10, 2))
    assert (
        later.reported.trace_id != session.context.trace_id and later.link == session.context and later.parent is None
    )
    assert TurnTrace.from_json(later.to_json()) == later


def test_in_production_spans_carry_no_content_unless_the_agent_asks(
    agent: RuntimeAgent, manifest: Manifest, traced: RuntimeOptions, exporter: InMemorySpanExporter
) -> None:
    with harness(agent, manifest, mode="production", options=traced) as api:
        session_id = api.create(WEATHER_CALL)
        events = api.wait_for(session_id, "session.waiting")
    (started,) = [e["data"]["trace"] for e in events if e["type"] == "session.started"]
    assert started["decision"] == {"action": "record", "recordInputs": False, "recordOutputs": False}
    assert traced.telemetry is not None and traced.telemetry.force_flush()
    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} >= {"chat test", "execute_tool get_weather", "invoke_agent weather-agent"}
    assert not [key for s in spans for key in (s.attributes or {}) if key in CONTENT]
