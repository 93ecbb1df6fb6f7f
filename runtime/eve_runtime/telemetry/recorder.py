"""A session's spans, recorded from its events as the emitter writes them.

One recorder per session actor is told every event the session emits (`Emitter.tap`), so the
engine carries no span code: a step's span runs from `step.started` to `step.completed` (or
`step.failed`), its model call's from `step.started` to the call's first result (its usage and
finish reason come with `step.completed`), a tool call's (or a task's) from `actions.requested`
to its `action.result`. Those are live spans of this process.

A turn may last days (parked on an approval) and a session lives for weeks, across restarts:
their spans cannot stay open. They are recorded when they end, from the state stored with the
checkpoint (`eve_runtime.telemetry.ids`), with the ids their events reported and the time they
started: a turn's span when the turn ends, the session's when its first turn ends (it covers
the session's opening; later turns, each in a trace of its own as eve's, link to it).

Nothing here may fail or slow a turn: a recorder that raises logs once and stops recording
that session; exporting happens on the SDK's batch thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
)

from eve_runtime.checkpoint import SessionState
from eve_runtime.telemetry import attributes as attrs
from eve_runtime.telemetry.adopted import AdoptedIds
from eve_runtime.telemetry.ids import SessionTrace, TraceContext, TurnTrace, call_context

__all__ = ["Event", "RecorderState", "SessionRecorder"]

logger = logging.getLogger("eve.telemetry")

RecorderState = Callable[[], SessionState]
"""The session's state as it is now (the actor's checkpoint document)."""


class Event(Protocol):
    """A stream event as the emitter has it (`eve_runtime.events`): its `type` and typed fields."""

    @property
    def type(self) -> str: ...


def _remote(context: TraceContext) -> Context:
    span = NonRecordingSpan(
        SpanContext(int(context.trace_id, 16), int(context.span_id, 16), True, TraceFlags(context.trace_flags))
    )
    return trace.set_span_in_context(span, Context())


def _link(context: TraceContext, kind: str) -> Link:
    span = SpanContext(int(context.trace_id, 16), int(context.span_id, 16), True, TraceFlags(context.trace_flags))
    return Link(span, {"eve.link.type": kind})


class SessionRecorder:
    """Records one session's spans from its events; see the module docstring."""

    def __init__(self, tracer: Tracer, session_id: str, state: RecorderState, agent_name: Callable[[], str]) -> None:
        self._tracer = tracer
        self._session_id = session_id
        self._state = state
        self._agent_name = agent_name
        self._step: Span | None = None
        self._step_context: Context | None = None
        self._step_start_ns = 0
        self._model: Span | None = None
        self._model_end: int | None = None
        self._calls: dict[str, Span] = {}
        self._inputs: list[dict[str, Any]] = []
        """Messages the next model call reads that the last did not (recorded inputs only)."""
        self._turn_inputs: list[dict[str, Any]] = []
        self._output: str | None = None
        self._broken = False
        self._handlers: dict[str, Callable[[Any], None]] = {
            "turn.started": self._turn_started,
            "message.received": self._message_received,
            "step.started": self._step_started,
            "reasoning.completed": self._model_output,
            "message.completed": self._message_completed,
            "actions.requested": self._actions_requested,
            "action.result": self._action_result,
            "step.retrying": self._step_retrying,
            "step.completed": self._step_completed,
            "step.failed": self._step_failed,
            "turn.waiting": self._turn_waiting,
            "turn.completed": self._turn_ended,
            "turn.failed": self._turn_ended,
            "turn.cancelled": self._turn_ended,
        }

    def __call__(self, event: Event) -> None:
        handler = self._handlers.get(event.type)
        if handler is None or self._broken:
            return
        try:
            handler(event)
        except Exception:  # telemetry never fails a turn: this session records no more spans
            self._broken = True
            logger.warning("telemetry: recording the spans of session %s failed", self._session_id, exc_info=True)

    # -- what the session's trace state says --------------------------------------------------

    def _decision(self, key: str) -> bool:
        trace_state = self._state().trace or {}
        decision = trace_state.get("decision") or {}
        return bool(decision.get("action") == "record" and decision.get(key))

    def _turn_trace(self) -> TurnTrace | None:
        turn = self._state().turn
        return TurnTrace.from_json(turn.trace) if turn is not None else None

    def _identity(self) -> dict[str, attrs.AttributeValue]:
        return attrs.identity(self._session_id, self._state().parent)

    # -- turns ---------------------------------------------------------------------------------

    def _turn_started(self, event: Any) -> None:
        self._close_step(None)
        self._end_calls("abandoned")
        self._inputs, self._turn_inputs, self._output = [], [], None

    def _message_received(self, event: Any) -> None:
        if self._decision("recordInputs"):
            message = attrs.text_message("user", event.message)
            self._inputs.append(message)
            self._turn_inputs.append(message)

    def _turn_waiting(self, event: Any) -> None:
        self._end_calls("waiting")  # the actor goes away while the turn is parked: nothing stays open

    def _turn_ended(self, event: Any) -> None:
        now = time.time_ns()
        outcome = {"turn.completed": "completed", "turn.failed": "failed", "turn.cancelled": "cancelled"}[event.type]
        error = getattr(event, "message", None) if outcome == "failed" else None
        self._close_step(error or ("cancelled" if outcome == "cancelled" else None), now)
        self._end_calls(outcome, now)
        state = self._state()
        turn, session = self._turn_trace(), SessionTrace.from_json(state.trace)
        if turn is None or session is None or not turn.reported.sampled:
            return
        name = self._agent_name()
        if turn.reported == session.context:  # the session's first turn: its span is the session span's child
            self._record_session(session, name, now)
        span_attributes: dict[str, attrs.AttributeValue] = {
            **self._identity(),
            **attrs.naming(f"invoke_agent {name}", "invoke_agent"),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "agent.name": name,
            "agent.turn.id": event.at.turn_id,
            "agent.turn.sequence": event.at.sequence,
            "agent.turn.outcome": outcome,
        }
        usage = state.usage
        span_attributes.update(
            attrs.usage_attributes(
                usage.input_tokens - turn.usage_at_start[0], usage.output_tokens - turn.usage_at_start[1]
            )
        )
        if self._turn_inputs:
            span_attributes["gen_ai.input.messages"] = attrs.content(self._turn_inputs)
        if self._output is not None and self._decision("recordOutputs"):
            span_attributes["gen_ai.output.messages"] = attrs.content([attrs.text_message("assistant", self._output)])
        links = [_link(turn.link, "agent.session")] if turn.link is not None else None
        parent = _remote(turn.parent) if turn.parent is not None else Context()
        with AdoptedIds.adopt(turn.span_id, None if turn.parent is not None else turn.reported.trace_id):
            span = self._tracer.start_span(
                f"invoke_agent {name}", parent, SpanKind.INTERNAL, span_attributes, links, turn.started_ns
            )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(now)

    def _record_session(self, session: SessionTrace, name: str, now: int) -> None:
        parent_span = session.parent_span_id
        parent = _remote(session.context.with_span(parent_span)) if parent_span is not None else Context()
        span_attributes = {
            **self._identity(),
            **attrs.naming(f"agent.session {name}", "agent.session"),
            "agent.name": name,
            "gen_ai.agent.name": name,
        }
        with AdoptedIds.adopt(session.context.span_id, None if parent_span is not None else session.context.trace_id):
            span = self._tracer.start_span(
                f"agent.session {name}", parent, SpanKind.INTERNAL, span_attributes, None, session.started_ns
            )
        span.end(now)

    # -- steps and model calls -----------------------------------------------------------------

    def _step_started(self, event: Any) -> None:
        self._close_step("the step was tried again")
        turn = self._turn_trace()
        if turn is None or not turn.reported.sampled:
            return
        name = self._agent_name()
        step = self._tracer.start_span(
            "agent.step",
            _remote(turn.span),
            attributes={
                **self._identity(),
                **attrs.naming("agent.step"),
                "agent.name": name,
                "agent.turn.id": event.at.turn_id,
                "agent.step.index": event.at.step_index,
                "agent.model.id": event.model_id,
            },
        )
        self._step, self._step_context = step, trace.set_span_in_context(step, Context())
        self._step_start_ns = time.time_ns()
        model_attributes: dict[str, attrs.AttributeValue] = {
            **attrs.naming(f"chat {event.model_id}", "chat"),
            "gen_ai.operation.name": "chat",
            "gen_ai.system": attrs.provider_of(event.model_id),
            "gen_ai.provider.name": attrs.provider_of(event.model_id),
            "gen_ai.request.model": event.model_id,
            "gen_ai.response.model": event.model_id,
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": self._session_id,
        }
        if self._inputs:
            model_attributes["gen_ai.input.messages"] = attrs.content(self._inputs)
            self._inputs = []
        self._model = self._tracer.start_span(
            f"chat {event.model_id}", self._step_context, SpanKind.CLIENT, model_attributes
        )
        self._model_end = None

    def _model_output(self, event: Any) -> None:
        if self._model is not None and self._model_end is None:
            self._model_end = time.time_ns()

    def _message_completed(self, event: Any) -> None:
        self._model_output(event)
        self._output = event.message
        if self._model is not None and self._decision("recordOutputs") and event.message:
            message = attrs.text_message("assistant", event.message, event.finish_reason)
            self._model.set_attribute("gen_ai.output.messages", attrs.content([message]))

    def _actions_requested(self, event: Any) -> None:
        self._model_output(event)
        if self._step_context is None:
            return
        turn = self._turn_trace()
        inputs, outputs = self._decision("recordInputs"), self._decision("recordOutputs")
        if self._model is not None and outputs:
            self._model.set_attribute(
                "gen_ai.output.messages", attrs.content([attrs.tool_calls_message(event.actions)])
            )
        for action in event.actions:
            call_id = str(action.get("callId"))
            kind = action.get("kind")
            tool = str(action.get("toolName") or action.get("name") or "load_skill")
            name = f"agent.action {tool}" if kind == "subagent-call" else f"execute_tool {tool}"
            span_attributes: dict[str, attrs.AttributeValue] = {
                **attrs.naming(name, "invoke_agent" if kind == "subagent-call" else "execute_tool"),
                "gen_ai.operation.name": "invoke_agent" if kind == "subagent-call" else "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": call_id,
                "agent.action.kind": str(kind),
            }
            if inputs:
                span_attributes["gen_ai.tool.call.arguments"] = attrs.content(action.get("input"))
            adopted = call_context(turn.reported, self._session_id, call_id).span_id if turn is not None else None
            kind_of = SpanKind.CLIENT if kind == "subagent-call" else SpanKind.INTERNAL
            if adopted is None:
                span = self._tracer.start_span(name, self._step_context, kind_of, span_attributes)
            else:
                with AdoptedIds.adopt(adopted):
                    span = self._tracer.start_span(name, self._step_context, kind_of, span_attributes)
            self._calls[call_id] = span

    def _action_result(self, event: Any) -> None:
        outcome = event.outcome
        span = self._calls.pop(outcome.call.id, None)
        if self._decision("recordInputs"):
            self._inputs.append(attrs.tool_result_message(outcome.call.id, outcome.model_content))
        if span is None and self._step_context is not None:  # approved after a wait: it ran as this step began
            name = f"execute_tool {outcome.call.name}"
            span_attributes = {
                **attrs.naming(name, "execute_tool"),
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": outcome.call.name,
                "gen_ai.tool.call.id": outcome.call.id,
            }
            span = self._tracer.start_span(
                name, self._step_context, SpanKind.INTERNAL, span_attributes, start_time=self._step_start_ns
            )
        if span is None:
            return
        span.set_attribute("agent.action.outcome", str(outcome.status))
        if self._decision("recordOutputs"):
            span.set_attribute("gen_ai.tool.call.result", attrs.content(outcome.model_content))
        if outcome.is_error:
            span.set_status(Status(StatusCode.ERROR, attrs.content(outcome.model_content)[:512]))
        span.end()

    def _step_retrying(self, event: Any) -> None:
        if self._step is not None:
            self._step.add_event("step.retrying", {"agent.retry.code": str(getattr(event, "code", ""))})

    def _step_completed(self, event: Any) -> None:
        usage, cost = event.usage, event.cost_usd
        if self._model is not None:
            self._model.set_attribute("gen_ai.response.finish_reasons", [event.finish_reason])
            if usage is not None:
                self._model.set_attributes(
                    attrs.usage_attributes(
                        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens, cost
                    )
                )
        if self._step is not None and usage is not None:
            self._step.set_attributes(attrs.usage_attributes(usage.input_tokens, usage.output_tokens, cost_usd=cost))
        self._close_step(None)

    def _step_failed(self, event: Any) -> None:
        self._close_step(f"{event.code}: {event.message}")

    def _close_step(self, error: str | None, now: int | None = None) -> None:
        """End the open step and model call spans (with `error` as their status, when given)."""
        model, step = self._model, self._step
        self._model = self._step = self._step_context = None
        if model is not None:
            if error is not None and self._model_end is None:
                model.set_status(Status(StatusCode.ERROR, error))
            model.end(self._model_end or now)
        if step is not None:
            if error is not None:
                step.set_status(Status(StatusCode.ERROR, error))
            step.end(now)

    def _end_calls(self, outcome: str, now: int | None = None) -> None:
        """End the call spans still open when their turn ends (their results never came here)."""
        calls, self._calls = self._calls, {}
        for span in calls.values():
            span.set_attribute("agent.action.outcome", outcome)
            span.end(now)
