"""`parse_event`: typed events of real recorded streams, each keeping its dict, lenient with odd input."""

from __future__ import annotations

from typing import Any

from eve_runtime.client import (
    ActionInputAppended,
    ActionsRequested,
    InputRequested,
    InputResolved,
    MessageCompleted,
    MessageReceived,
    SessionCompleted,
    StepStarted,
    StreamEvent,
    TaskSettled,
    TaskStarted,
    TurnCancelled,
    TurnFailed,
    TurnWaiting,
    parse_event,
)
from eve_runtime.events.catalog import EVENT_TYPES

Recordings = dict[str, list[dict[str, Any]]]


def _of(recordings: Recordings, scenario: str, cls: type[StreamEvent]) -> list[Any]:
    return [e for e in map(parse_event, recordings[scenario]) if isinstance(e, cls)]


def test_every_recorded_event_keeps_its_dict_and_meta(recordings: Recordings) -> None:
    for events in recordings.values():
        for raw in events:
            event = parse_event(raw)
            assert event.raw == raw and event.type == raw["type"] and event.data == raw.get("data", {})
            assert (event.id, event.at) == (raw["meta"]["id"], raw["meta"]["at"])
            assert event.delivery_ids == tuple(raw["meta"].get("deliveryIds", []))
            assert event.turn_id == raw.get("data", {}).get("turnId")
            assert type(event) is StreamEvent or type(event).TYPE == raw["type"]


def test_the_typed_classes_name_catalogue_types() -> None:
    for raw_type in EVENT_TYPES:
        event = parse_event({"type": raw_type, "data": {}, "meta": {}})
        assert event.type == raw_type


def test_fields_of_the_main_events(recordings: Recordings) -> None:
    (received,) = _of(recordings, "echo", MessageReceived)
    assert received.text == "hello there"
    assert _of(recordings, "echo", StepStarted)[0].model_id == "test"
    assert [m.text for m in _of(recordings, "echo", MessageCompleted)] == ["echo: hello there"]

    (typed,) = _of(recordings, "tool", ActionInputAppended)
    assert (typed.tool_name, typed.delta) == ("get_weather", '{"city":"Paris"}')
    (requested,) = _of(recordings, "tool", ActionsRequested)
    assert [(a["toolName"], a["input"]) for a in requested.actions] == [("get_weather", {"city": "Paris"})]
    assert [m.finish_reason for m in _of(recordings, "tool", MessageCompleted)] == ["tool-calls", "stop"]

    (asked,) = _of(recordings, "approval-waiting", InputRequested)
    (request,) = asked.requests
    assert (request.kind, request.tool_name, request.option_ids) == (
        "tool-approval",
        "send_alert",
        ["approve", "cancel"],
    )
    assert _of(recordings, "approval-waiting", TurnWaiting)[-1].on == "input"
    (resolved,) = _of(recordings, "approval-refused", InputResolved)
    assert [r["outcome"] for r in resolved.resolutions] == ["denied"]

    (started,) = _of(recordings, "subagent", TaskStarted)
    (settled,) = _of(recordings, "subagent", TaskSettled)
    assert started.task_id == settled.task_id and settled.status == "completed"

    (failed,) = _of(recordings, "failed", TurnFailed)
    assert failed.error is not None
    assert (failed.error.code, failed.error.message) == ("MODEL_CALL_FAILED", "the provider is down")
    assert _of(recordings, "cancelled", TurnCancelled)
    (ended,) = _of(recordings, "reset", SessionCompleted)
    assert ended.usage is not None


def test_odd_events_read_as_empty_fields() -> None:
    event = parse_event({"type": "message.appended", "data": {"messageDelta": 3, "stepIndex": "x"}})
    assert (event.id, event.delivery_ids, event.turn_id) == (None, (), None)
    assert (event.delta, event.step_index) == ("", None)  # type: ignore[attr-defined]
    nothing = parse_event({})
    assert (type(nothing), nothing.type, nothing.data) == (StreamEvent, "", {})
    unknown = parse_event({"type": "compaction.completed", "data": {"x": 1}})
    assert type(unknown) is StreamEvent and unknown.data == {"x": 1}
