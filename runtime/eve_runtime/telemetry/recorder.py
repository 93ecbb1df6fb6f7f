"""A session's spans, recorded from its events as the emitter writes them.

One recorder per session actor is told every event the session emits (`Emitter.tap`), so the
engine carries no span code: a step's span runs from `step.started` to `step.completed` (or
`step.failed`), its model call's from `step.started` to the call's first result (its usage and
finish reason come with `step.completed`), a tool call's (or a task's) from `actions.requested`
to its `action.result`. Ended spans are made into the SDK's on another thread
(`eve_runtime.telemetry.spans`).

A turn may last days (parked on an approval) and a session lives for weeks, across restarts:
their spans cannot stay open. They are recorded when they end, from the state stored with the
checkpoint (`eve_runtime.telemetry.ids`), with the ids their events reported and the time they
started: a turn's span when the turn ends, the session's when its first turn ends (it covers
the session's opening; later turns, each in a trace of its own as eve's, link to it).

Nothing here may fail or slow a turn: a recorder that raises logs once and stops recording
that session.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from opentelemetry.trace import SpanKind

from eve_runtime.checkpoint import SessionState
from eve_runtime.telemetry import attributes as attrs
from eve_runtime.telemetry.ids import SessionTrace, TurnTrace, call_context
from eve_runtime.telemetry.spans import PendingSpan, SpanBuilder, new_span_id

__all__ = ["Event", "RecorderState", "SessionRecorder"]

logger = logging.getLogger("eve.telemetry")

RecorderState = Callable[[], SessionState]
"""The session's state as it is now (the actor's checkpoint document)."""

_OUTCOMES = {"turn.completed": "completed", "turn.failed": "failed", "turn.cancelled": "cancelled"}


class Event(Protocol):
    """A stream event as the emitter has it (`eve_runtime.events`): its `type` and typed fields."""

    @property
    def type(self) -> str: ...


class SessionRecorder:
    """Records one session's spans from its events; see the module docstring."""

    def __init__(
        self, builder: SpanBuilder, session_id: str, state: RecorderState, agent_name: Callable[[], str]
    ) -> None:
        self._submit = builder.submit
        self._session_id = session_id
        self._state = state
        self._agent_name = agent_name
        self._step: PendingSpan | None = None
        self._model: PendingSpan | None = None
        self._model_end = 0
        self._calls: dict[str, PendingSpan] = {}
        self._inputs: list[dict[str, Any]] = []
        """Messages the next model call reads that the last did not (recorded inputs only)."""
        self._turn_inputs: list[dict[str, Any]] = []
        self._output: str | None = None
        self._broken = False
        self._decision_of: object = None
        self._record = {"recordInputs": False, "recordOutputs": False}
        self._turn_of: object = None
        self._turn: TurnTrace | None = None
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
        trace_state = self._state().trace
        if trace_state is not self._decision_of:  # set once, when the session starts: read it once
            decision = (trace_state or {}).get("decision") or {}
            self._decision_of = trace_state
            self._record = {
                k: bool(decision.get("action") == "record" and decision.get(k))
                for k in ("recordInputs", "recordOutputs")
            }
        return self._record[key]

    def _turn_trace(self) -> TurnTrace | None:
        turn = self._state().turn
        if turn is None:
            return None
        if turn.trace is not self._turn_of:
            self._turn_of, self._turn = turn.trace, TurnTrace.from_json(turn.trace)
        return self._turn

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
        outcome = _OUTCOMES[event.type]
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
            if turn.span_id == session.context.span_id:  # a turn opened before turns had spans of their own
                return
        usage = state.usage
        cost = None if usage.cost_usd is None else usage.cost_usd - (turn.cost_at_start or 0.0)
        span_attributes: dict[str, Any] = {
            **attrs.identity(self._session_id, state.parent),
            **attrs.naming(f"invoke_agent {name}", "invoke_agent"),
            **attrs.usage_attributes(
                usage.input_tokens - turn.usage_at_start[0], usage.output_tokens - turn.usage_at_start[1], cost_usd=cost
            ),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "agent.name": name,
            "agent.turn.id": event.at.turn_id,
            "agent.turn.sequence": event.at.sequence,
            "agent.turn.outcome": outcome,
        }
        if self._turn_inputs:
            span_attributes["gen_ai.input.messages"] = attrs.content(self._turn_inputs)
        if self._output is not None and self._decision("recordOutputs"):
            span_attributes["gen_ai.output.messages"] = attrs.content([attrs.text_message("assistant", self._output)])
        span = PendingSpan(
            f"invoke_agent {name}",
            int(turn.reported.trace_id, 16),
            int(turn.span_id, 16),
            int(turn.parent.span_id, 16) if turn.parent is not None else None,
            turn.started_ns,
            span_attributes,
            flags=turn.reported.trace_flags,
            end=now,
            error=error,
        )
        if turn.link is not None:
            link = turn.link
            span.links = [(int(link.trace_id, 16), int(link.span_id, 16), {"eve.link.type": "agent.session"})]
        self._submit(span)

    def _record_session(self, session: SessionTrace, name: str, now: int) -> None:
        parent = session.parent_span_id
        span_attributes = {
            **attrs.identity(self._session_id, self._state().parent),
            **attrs.naming(f"agent.session {name}", "agent.session"),
            "agent.name": name,
            "gen_ai.agent.name": name,
        }
        context = session.context
        self._submit(
            PendingSpan(
                f"agent.session {name}",
                int(context.trace_id, 16),
                int(context.span_id, 16),
                int(parent, 16) if parent is not None else None,
                session.started_ns,
                span_attributes,
                flags=context.trace_flags,
                end=now,
            )
        )

    # -- steps and model calls -----------------------------------------------------------------

    def _step_started(self, event: Any) -> None:
        self._close_step("the step was tried again")
        turn = self._turn_trace()
        if turn is None or not turn.reported.sampled:
            return
        now = time.time_ns()
        trace_id, flags = int(turn.reported.trace_id, 16), turn.reported.trace_flags
        step_attributes = {
            "agent.name": self._agent_name(),
            "agent.turn.id": event.at.turn_id,
            "agent.step.index": event.at.step_index,
            "agent.model.id": event.model_id,
        }
        step = PendingSpan(
            "agent.step", trace_id, new_span_id(), int(turn.span_id, 16), now, step_attributes, flags=flags
        )
        provider = attrs.provider_of(event.model_id)
        model_attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": provider,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": event.model_id,
            "gen_ai.response.model": event.model_id,
            "gen_ai.conversation.id": self._session_id,
        }
        if self._inputs:
            model_attributes["gen_ai.input.messages"] = attrs.content(self._inputs)
            self._inputs = []
        self._step, self._model_end = step, 0
        self._model = PendingSpan(
            f"chat {event.model_id}",
            trace_id,
            new_span_id(),
            step.span_id,
            now,
            model_attributes,
            SpanKind.CLIENT,
            flags,
        )

    def _model_output(self, event: Any) -> None:
        if self._model is not None and not self._model_end:
            self._model_end = time.time_ns()

    def _message_completed(self, event: Any) -> None:
        self._model_output(event)
        self._output = event.message
        if self._model is not None and self._decision("recordOutputs") and event.message:
            message = attrs.text_message("assistant", event.message, event.finish_reason)
            self._model.attributes["gen_ai.output.messages"] = attrs.content([message])

    def _actions_requested(self, event: Any) -> None:
        self._model_output(event)
        step, turn = self._step, self._turn_trace()
        if step is None or turn is None:
            return
        now = time.time_ns()
        inputs = self._decision("recordInputs")
        if self._model is not None and self._decision("recordOutputs"):
            message = attrs.tool_calls_message(event.actions)
            self._model.attributes["gen_ai.output.messages"] = attrs.content([message])
        for action in event.actions:
            call_id = str(action.get("callId"))
            task = action.get("kind") == "subagent-call"
            tool = str(action.get("toolName") or action.get("name") or "load_skill")
            span_attributes: dict[str, Any] = {
                "gen_ai.operation.name": "invoke_agent" if task else "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": call_id,
                "agent.action.kind": str(action.get("kind")),
            }
            if inputs:
                span_attributes["gen_ai.tool.call.arguments"] = attrs.content(action.get("input"))
            self._calls[call_id] = PendingSpan(
                f"agent.action {tool}" if task else f"execute_tool {tool}",
                step.trace_id,
                int(call_context(turn.reported, self._session_id, call_id).span_id, 16),
                step.span_id,
                now,
                span_attributes,
                SpanKind.CLIENT if task else SpanKind.INTERNAL,
                step.flags,
            )

    def _action_result(self, event: Any) -> None:
        outcome = event.outcome
        call = outcome.call
        span = self._calls.pop(call.id, None)
        if self._decision("recordInputs"):
            self._inputs.append(attrs.tool_result_message(call.id, outcome.model_content))
        step = self._step
        if span is None and step is not None:  # approved after a wait: it ran as this step began
            span_attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
            }
            span = PendingSpan(
                f"execute_tool {call.name}",
                step.trace_id,
                new_span_id(),
                step.span_id,
                step.start,
                span_attributes,
                flags=step.flags,
            )
        if span is None:
            return
        span.attributes["agent.action.outcome"] = str(outcome.status)
        if self._decision("recordOutputs"):
            span.attributes["gen_ai.tool.call.result"] = attrs.content(outcome.model_content)
        if outcome.is_error:
            span.error = attrs.content(outcome.model_content)[:512]
        span.end = time.time_ns()
        self._submit(span)

    def _step_retrying(self, event: Any) -> None:
        if self._step is not None:
            self._step.events.append(("step.retrying", time.time_ns(), {"agent.retry.code": str(event.code)}))

    def _step_completed(self, event: Any) -> None:
        usage, cost = event.usage, event.cost_usd
        model, step = self._model, self._step
        if model is not None:
            model.attributes["gen_ai.response.finish_reasons"] = (event.finish_reason,)
            if usage is not None:
                model.attributes.update(
                    attrs.call_usage(
                        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens, cost
                    )
                )
        if step is not None and usage is not None:
            step.attributes.update(attrs.step_usage(usage.input_tokens, usage.output_tokens, cost))
        self._close_step(None)

    def _step_failed(self, event: Any) -> None:
        self._close_step(f"{event.code}: {event.message}")

    def _close_step(self, error: str | None, now: int = 0) -> None:
        """End the open step and model call spans (with `error` as their status, when given)."""
        model, step = self._model, self._step
        if model is None and step is None:
            return
        self._model = self._step = None
        now = now or time.time_ns()
        if model is not None:
            if error is not None and not self._model_end:
                model.error = error
            model.end = self._model_end or now
            self._submit(model)
        if step is not None:
            step.error = error
            step.end = now
            self._submit(step)

    def _end_calls(self, outcome: str, now: int = 0) -> None:
        """End the call spans still open when their turn ends (their results never came here)."""
        if not self._calls:
            return
        calls, self._calls = self._calls, {}
        now = now or time.time_ns()
        for span in calls.values():
            span.attributes["agent.action.outcome"] = outcome
            span.end = now
            self._submit(span)
