"""The span tree of sessions, turns, steps and calls, its GenAI attributes, and the ids on the events."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from eve_runtime.models.base import Finish, Usage
from eve_runtime.models.function import FunctionModel
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.runtime import RuntimeOptions
from tests.server.support import WEATHER_CALL, harness

SUBAGENT = '/call forecaster {"message": "/reply Sunny all week."}'


def trace_of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"]["trace"] for e in events if e["type"] == kind]


def ids(span: ReadableSpan) -> tuple[str, str]:
    return f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}"


def parent_of(span: ReadableSpan) -> str | None:
    return f"{span.parent.span_id:016x}" if span.parent is not None else None


def finished(options: RuntimeOptions, exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    """Every span recorded so far (they are made on the telemetry's thread)."""
    assert options.telemetry is not None and options.telemetry.force_flush()
    return list(exporter.get_finished_spans())


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0)


def test_a_session_records_session_turn_step_model_and_tool_spans_with_the_ids_its_events_report(
    agent: RuntimeAgent, manifest: Manifest, traced: RuntimeOptions, exporter: InMemorySpanExporter
) -> None:
    with harness(agent, manifest, options=traced) as api:
        session_id = api.create(WEATHER_CALL)
        api.wait_for(session_id, "session.waiting")
        api.client.post(f"/eve/v1/session/{session_id}", json={"message": "and tomorrow?"})
        events = api.wait_for(session_id, "session.waiting", count=2)
    spans = finished(traced, exporter)
    (started,) = trace_of(events, "session.started")
    first_turn, second_turn = trace_of(events, "turn.started")
    (session,) = named(spans, "agent.session ")
    turns = named(spans, "invoke_agent ")
    assert [s.name for s in turns] == ["invoke_agent weather-agent"] * 2
    # the ids on the events are the spans'
    assert ids(session) == (started["traceId"], started["spanId"]) and session.parent is None
    assert first_turn == started  # as eve reports them: the first turn's ids are the session's ...
    assert ids(turns[0])[0] == started["traceId"] and parent_of(turns[0]) == started["spanId"]  # ... its span a child
    assert ids(turns[1]) == (second_turn["traceId"], second_turn["spanId"]) and turns[1].parent is None
    assert [(f"{link.context.span_id:016x}", link.attributes) for link in turns[1].links] == [
        (started["spanId"], {"eve.link.type": "agent.session"})
    ]  # a later turn, in a trace of its own, links to its session
    assert turns[0].attributes is not None and turns[0].attributes["agent.turn.id"] == "turn_0"
    assert turns[0].attributes["agent.turn.outcome"] == "completed"
    assert turns[0].attributes["gen_ai.conversation.id"] == session_id
    # turn -> step -> model call and tool call
    steps = [s for s in named(spans, "agent.step") if s.context.trace_id == turns[0].context.trace_id]
    assert [parent_of(s) for s in steps] == [ids(turns[0])[1]] * len(steps) and len(steps) == 2
    chats = named(spans, "chat ")
    assert {parent_of(c) for c in chats} >= {ids(s)[1] for s in steps}
    (tool,) = named(spans, "execute_tool ")
    assert tool.name == "execute_tool get_weather" and parent_of(tool) == ids(steps[0])[1]
    assert tool.attributes is not None and tool.attributes["gen_ai.tool.call.id"]
    chat = next(c for c in chats if parent_of(c) == ids(steps[0])[1])
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.system"] == "test" and attributes["gen_ai.request.model"] == "test"
    assert attributes["gen_ai.response.model"] == "test" and attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.response.finish_reasons"] == ("tool-calls",)
    assert int(str(attributes["gen_ai.usage.input_tokens"])) > 0
    assert int(str(attributes["gen_ai.usage.output_tokens"])) > 0
    turn_tokens = dict(turns[0].attributes)["gen_ai.usage.output_tokens"]
    step_tokens = sum(int(str(dict(s.attributes or {})["agent.usage.output_tokens"])) for s in steps)
    assert turn_tokens == step_tokens  # a turn counts its steps' tokens
    assert all(s.status.status_code is StatusCode.UNSET for s in spans)


def test_a_child_session_joins_its_parents_trace_under_the_task_span(
    agent: RuntimeAgent, manifest: Manifest, traced: RuntimeOptions, exporter: InMemorySpanExporter
) -> None:
    with harness(agent, manifest, options=traced) as api:
        session_id = api.create(SUBAGENT)
        events = api.wait_for(session_id, "session.waiting")
        (agent_started,) = [e for e in events if e["type"] == "agent.started"]
        child_id = agent_started["data"]["sessionId"]
        child = api.wait_for(child_id, "session.waiting")
    spans = finished(traced, exporter)
    (turn,) = trace_of(events, "turn.started")
    (task,) = named(spans, "agent.action forecaster")
    assert ids(task)[0] == turn["traceId"]
    (child_started,) = trace_of(child, "session.started")
    (child_session,) = named(spans, "agent.session forecaster")
    assert ids(child_session) == (child_started["traceId"], child_started["spanId"])
    assert child_started["traceId"] == turn["traceId"]  # one trace: the parent's
    assert parent_of(child_session) == ids(task)[1]  # under the call that started it
    (child_turn,) = [s for s in named(spans, "invoke_agent forecaster")]
    assert parent_of(child_turn) == child_started["spanId"]
    assert dict(child_turn.attributes or {})["agent.parent_run.id"] == session_id


def test_cost_and_recorded_content_go_on_the_spans_with_secrets_masked(
    agent: RuntimeAgent, manifest: Manifest, traced: RuntimeOptions, exporter: InMemorySpanExporter, monkeypatch: Any
) -> None:
    from eve_runtime.redaction import REDACTOR

    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("WEATHER_API_KEY", secret)
    REDACTOR.refresh()

    async def answer(messages: Any, info: Any) -> Any:
        yield f"The key is {secret}."
        yield Finish(reason="stop", usage=Usage(input_tokens=12, output_tokens=7), cost_usd=0.0042)

    try:
        with harness(agent, manifest, options=traced, models={"test": FunctionModel(stream_function=answer)}) as api:
            session_id = api.create(f"my key: {secret}")
            events = api.wait_for(session_id, "session.waiting")
    finally:
        monkeypatch.delenv("WEATHER_API_KEY")
        REDACTOR.refresh()
    (started,) = trace_of(events, "session.started")
    assert started["decision"] == {"action": "record", "recordInputs": True, "recordOutputs": True}  # eve dev
    spans = finished(traced, exporter)
    (chat,) = named(spans, "chat ")
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.usage.cost"] == 0.0042
    (step,) = named(spans, "agent.step")
    assert dict(step.attributes or {})["agent.usage.cost_usd"] == 0.0042
    (turn_span,) = named(spans, "invoke_agent ")
    assert dict(turn_span.attributes or {})["gen_ai.usage.cost"] == 0.0042  # the turn's own cost
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (12, 7)
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    (turn,) = named(spans, "invoke_agent ")
    recorded = [
        str(dict(s.attributes or {}).get(k, ""))
        for s in (chat, turn)
        for k in ("gen_ai.input.messages", "gen_ai.output.messages")
    ]
    assert all("[redacted]" in text for text in recorded), recorded
    assert not any(secret in str(value) for s in spans for value in dict(s.attributes or {}).values())
