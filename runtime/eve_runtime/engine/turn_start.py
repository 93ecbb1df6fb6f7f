"""Opening a turn, and choosing the model of each of its steps.

A message (or a batch of answers that no longer match an open prompt) that reaches an idle
session opens a turn: `session.started` the first time (with the runtime, and for a subagent's
session the call it works for), `turn.started`, `message.received`, then the turn's dynamic
instructions and model are resolved. What the model reads for a delivery is here too: the
message, or for stale answers a note that they authorize nothing.

The opening events can become durable before the checkpoint that consumes the delivery (the
background write runs at the first await; a hook's flush runs before the resolvers). After a
crash in between, `reopen_turn` opens that turn again for the delivery still in the inbox,
without writing its opening events twice.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import Any

from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.checkpoint import CallRecord, DynamicValue, ParentLink, TurnState, principal_of
from eve_runtime.crashpoints import armed, crashpoint
from eve_runtime.engine.attachments import model_attachments, public_parts, stage_attachments
from eve_runtime.engine.conversation import client_context_entries, static_user_instructions
from eve_runtime.engine.dynamic_tools import apply_dynamic_tools
from eve_runtime.engine.ports import ActorLoop, Session
from eve_runtime.engine.resolvers import (
    ResolverError,
    dynamic_context,
    resolve_instructions,
    resolve_model_id,
    settle_before_resolvers,
)
from eve_runtime.events.catalog import TurnAt
from eve_runtime.events.turns import MessageReceived, SessionStarted, TurnStarted
from eve_runtime.messages import Message, UserMessage
from eve_runtime.models.base import Model
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.telemetry.ids import (
    SessionTrace,
    TurnTrace,
    decision_for,
    open_session,
    open_turn,
    parse_traceparent,
    trace_wire,
)

__all__ = ["message_of", "model_for_step", "model_text_of", "reopen_turn", "stale_response_text", "start_turn"]

logger = logging.getLogger("eve.actor")

_OPENING = frozenset({"session.started", "turn.started", "message.received"})

STALE_RESPONSE_PREAMBLE = (
    "The user submitted the following response to an earlier interactive prompt.\n"
    "Treat it as new input at the current point in the conversation and decide whether it is still relevant. "
    "This does not authorize an earlier action; request approval again if that action is still needed.\n"
)


def stale_response_text(responses: Sequence[dict[str, Any]]) -> str:
    """What the model reads for answers to prompts that are no longer open: information, never authority."""
    shaped = []
    for item in responses:
        response = {k: item[k] for k in ("optionId", "text") if k in item}
        shaped.append({"requestId": item.get("requestId"), "response": response})
    return STALE_RESPONSE_PREAMBLE + json.dumps(shaped, indent=2, ensure_ascii=False)


def message_of(delivery: DeliveryRecord) -> tuple[str, list[dict[str, Any]]]:
    """The `message.received` text and parts of a delivery."""
    payload = delivery.payload
    if delivery.kind == "responses":
        responses = payload.get("inputResponses", [])
        text = "\n".join(str(r.get("optionId") or r.get("text") or "") for r in responses).strip("\n")
        text = text or "Response to an earlier interactive prompt"
        return text, [{"text": text, "type": "text"}]
    parts = payload.get("parts") or [{"text": payload.get("message", ""), "type": "text"}]
    return payload.get("message", ""), public_parts(parts)


def user_message_of(delivery: DeliveryRecord, text: str | None = None) -> UserMessage:
    """The history message of a delivery: what the model reads (`text`, else the delivery's) and its files."""
    parts = (delivery.payload.get("parts") or []) if delivery.kind == "message" else []
    return UserMessage(content=model_text_of(delivery) if text is None else text, attachments=model_attachments(parts))


def model_text_of(delivery: DeliveryRecord) -> str:
    """What the model reads for a delivery."""
    if delivery.kind == "responses":
        return stale_response_text(delivery.payload.get("inputResponses", []))
    return str(delivery.payload.get("message", ""))


async def reopen_turn(actor: ActorLoop) -> None:
    """Open the turn whose opening events are durable but whose checkpoint is not (see the module docstring)."""
    state = actor.state
    if state.turn is not None:
        return
    turn_id = f"turn_{state.next_sequence}"
    opening = [
        event
        for event in await actor.events_after_checkpoint()
        if event["type"] in _OPENING and event["data"].get("turnId", turn_id) == turn_id
    ]
    started = next((event for event in opening if event["type"] == "turn.started"), None)
    if started is None:
        return
    owners = started["meta"].get("deliveryIds") or [""]
    delivery = actor.inbox.take(str(owners[-1]))
    if delivery is None:  # its consumption is written with the checkpoint, which is what was lost
        logger.warning("session %s: %s was opened, but its message is no longer waiting", actor.session_id, turn_id)
        return
    logger.warning("session %s: turn %s opened again after an interruption", actor.session_id, turn_id)
    actor.use_agent(actor.base_agent)
    traces = {event["type"]: event["data"].get("trace") for event in opening}  # keep the ids they reported
    await start_turn(actor, delivery, written=frozenset(event["type"] for event in opening), traces=traces)


async def start_turn(
    session: Session,
    delivery: DeliveryRecord,
    *,
    written: frozenset[str] = frozenset(),
    traces: dict[str, Any] | None = None,
) -> None:
    """Open a turn for a message: `session.started` first (once), `turn.started`, `message.received`.

    `written`: the opening events already durable (an interrupted opening, see `reopen_turn`), and
    `traces` the `data.trace` they carry, by event type.
    """
    traces = traces or {}
    state = session.state
    sequence = state.next_sequence
    turn = TurnState(
        turn_id=f"turn_{sequence}",
        sequence=sequence,
        delivery_ids=[delivery.id],
        user_index=len(session.history),
        client_context=client_context_entries(delivery.payload.get("clientContext")),
        output_schema=delivery.payload.get("outputSchema"),
        task_call=delivery.payload.get("taskCall"),
        principal_id=principal_of(delivery.payload),
        tool_call=CallRecord.model_validate(delivery.payload["toolCall"]) if "toolCall" in delivery.payload else None,
    )
    state.next_sequence = sequence + 1
    state.turn = turn
    session.own_events([delivery.id])
    opening: list[Message] = []
    first = not state.started
    if first:
        state.task_mode = delivery.payload.get("mode") == "task"
        schedule = delivery.payload.get("schedule")
        state.schedule = (
            schedule["name"] if isinstance(schedule, dict) and isinstance(schedule.get("name"), str) else None
        )
        parent = delivery.payload.get("parent")
        if isinstance(parent, dict):
            state.parent = ParentLink(
                session_id=parent["sessionId"],
                task_id=parent["taskId"],
                name=parent["name"],
                call_id=parent["callId"],
                turn_id=parent["turnId"],
            )
        predecessor = delivery.payload.get("predecessor")
        if isinstance(predecessor, dict) and isinstance(predecessor.get("sessionId"), str):
            state.predecessor = predecessor["sessionId"]  # set only by a replacement (eve_runtime.sessions.replacement)
        state.started = True
        state.trace = _session_trace(session, traces.get("session.started"), delivery).to_json()
        session_trace = SessionTrace.from_json(state.trace)
        assert session_trace is not None
        started = SessionStarted(
            session.host.runtime_info(session.agent),
            state.predecessor,
            state.parent,
            trace=trace_wire(session_trace.context, session_trace.decision),
        )
        if state.schedule is not None:
            started = dataclasses.replace(started, schedule=schedule)
        if "session.started" not in written:
            session.emit(started)
        opening.extend(static_user_instructions(session.agent))
        turn.user_index += len(opening)
    at = TurnAt.of(turn)
    traced = _turn_trace(session, traces.get("turn.started"), delivery, first=first)
    turn.trace = traced.to_json()
    text, parts = message_of(delivery)
    if "turn.started" not in written:
        decision = (state.trace or {}).get("decision")
        session.emit(TurnStarted(at, trace_wire(traced.reported, decision)))
    if "message.received" not in written:
        session.emit(MessageReceived(at, text, parts))
    if armed("after-turn-opened"):  # the crash tests' moment: the opening durable, its checkpoint not
        await session.flush()
        crashpoint("after-turn-opened")
    user = user_message_of(delivery)
    attached = await stage_attachments(session, delivery.payload.get("parts") or [])
    if attached:  # the model reads where the files are instead of their placeholders
        texts = [str(p["text"]) for p in parts if p.get("type") == "text"]
        user = user_message_of(delivery, "\n".join([*texts, *attached]))
    try:
        extra = await _resolve_dynamic(session, turn, first=not state.session_resolved)
    except ResolverError as exc:
        history = [*opening, user]
        await session.end_turn_failed(
            "DYNAMIC_RESOLVER_FAILED", str(exc), None, history=history, consumed=[delivery.id]
        )
        return
    opening.extend(extra)  # user-role dynamic instructions enter history when they changed, before the message
    turn.user_index += len(extra)
    opening.append(user)
    session.checkpoint_later(history=opening, consumed=[delivery.id])
    crashpoint("after-turn-start")


def _session_trace(session: Session, reported: Any, delivery: DeliveryRecord) -> SessionTrace:
    """A new session's trace state (the one its `session.started` already reported, after an interruption)."""
    caller = parse_traceparent(delivery.payload.get("traceparent"))
    known = SessionTrace.from_json(reported)
    if known is not None:
        return dataclasses.replace(known, parent_span_id=caller.span_id if caller is not None else None)
    config = session.agent.config.telemetry
    sampled = caller is None or caller.sampled
    decision = decision_for(
        config.record_inputs, config.record_outputs, development=session.host.mode == "development", sampled=sampled
    )
    return open_session(caller, decision)


def _turn_trace(session: Session, reported: Any, delivery: DeliveryRecord, *, first: bool) -> TurnTrace:
    """A new turn's trace state: the first turn reports the session's ids (as eve's), a later one its own."""
    stored = SessionTrace.from_json(session.state.trace)
    usage = session.state.usage
    if stored is None:  # a session started before its trace state was stored: the ids are all there is
        stored = open_session(None, decision_for(None, None, development=session.host.mode == "development"))
    caller = parse_traceparent(delivery.payload.get("traceparent"))
    traced = open_turn(stored, first, caller, (usage.input_tokens, usage.output_tokens), usage.cost_usd)
    again = TurnTrace.from_json(reported)  # an interrupted opening: keep the ids it reported
    if again is not None:
        traced = dataclasses.replace(
            traced, reported=again.reported, span_id=traced.span_id if first else again.span_id
        )
    return traced


def _split(
    values: dict[str, DynamicValue | None], event: str, added: dict[str, str]
) -> tuple[dict[str, DynamicValue | None], list[Message]]:
    """System-role values stay in their scope; user-role ones become history messages when their content changed.

    `added` holds the content last added per `event:slug`, and is updated.
    """
    system = {slug: v for slug, v in values.items() if v is None or v.role == "system"}
    user: list[Message] = []
    for slug, value in values.items():
        if value is None or value.role != "user" or not value.content:
            continue
        key = f"{event}:{slug}"
        if added.get(key) != value.content:
            added[key] = value.content
            user.append(UserMessage(content=value.content))
    return system, user


async def _resolve_dynamic(session: Session, turn: TurnState, *, first: bool) -> list[Message]:
    """Resolve the dynamic instructions and model; returns the user-role messages for history.

    The `session.started` resolvers run with the session's first turn, and again at the next
    turn when they failed (a memo that raised is tried again).
    """
    await settle_before_resolvers(session, ("session.started", "turn.started") if first else ("turn.started",))
    model = session.agent.config.model
    added: list[Message] = []
    if first:
        context = await dynamic_context(session, "session.started", turn)
        values = await resolve_instructions(session.agent, "session.started", context)
        session.state.dynamic, added = _split(values, "session.started", session.state.user_instructions)
        if isinstance(model, DynamicResolver) and "session.started" in model.events:
            session.state.model_id = await resolve_model_id(model, "session.started", context)
        session.state.session_resolved = True
    context = await dynamic_context(session, "turn.started", turn)
    values = await resolve_instructions(session.agent, "turn.started", context)
    turn.dynamic, turn_added = _split(values, "turn.started", session.state.user_instructions)
    if isinstance(model, DynamicResolver) and "turn.started" in model.events:
        turn.model_id = await resolve_model_id(model, "turn.started", context)
    await apply_dynamic_tools(session, turn, new_turn=True)
    return [*added, *turn_added]


async def model_for_step(session: Session, step_index: int) -> tuple[Model, str]:
    """The model of the turn's next call, and the id `step.started` reports."""
    configured = session.agent.config.model
    turn = session.turn
    if isinstance(configured, DynamicResolver):
        model_id = turn.model_id or session.state.model_id
        if "step.started" in configured.events:
            context = dataclasses.replace(await dynamic_context(session, "step.started", turn), step_index=step_index)
            model_id = await resolve_model_id(configured, "step.started", context)
        if model_id is None:
            raise ResolverError("The dynamic model resolver chose no model for this turn.")
        return session.host.model(model_id), model_id
    if isinstance(configured, str):
        return session.host.model(configured), configured
    model: Model = configured
    return model, model.model_id
