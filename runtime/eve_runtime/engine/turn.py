"""Running one turn: steps of one model call plus the tool calls that follow it, until the reply.

The runner belongs to a session's actor and is the only code emitting the turn's events. The
actor hands it steering messages and cancels while it runs:

- a steering message that arrives before the step produced any output aborts the model call
  (`step.completed` with `finishReason: "other"`) and joins the same turn; after output started
  it joins at the next step boundary, or starts a new turn if this step's reply ends the turn;
- a cancel stops the model call and the tools (`turn.cancelled`, then `session.waiting`).

Each step's events are written as they happen; before a tool runs, its start record
(`actions.requested`) is durable; the step's checkpoint commits after its events.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Sequence
from typing import Any

from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.call_batch import CallBatch
from eve_runtime.engine.compaction import compact_before_call
from eve_runtime.engine.conversation import REPLY_TOOL, build_request, unwrap_reply
from eve_runtime.engine.limits import exceeded_limit
from eve_runtime.engine.model_call import Cancelled, ModelCall, ModelResult, Steered, StepFailed
from eve_runtime.engine.parked import decide_calls, park_for_approval, park_for_limit
from eve_runtime.engine.ports import Session
from eve_runtime.engine.skills import load_skills, quiet_tools, skill_calls
from eve_runtime.engine.workflow import QuestionBoard, ServeInbox
from eve_runtime.events.actions import ActionResult, ActionsRequested, load_skill_action
from eve_runtime.events.catalog import StepAt
from eve_runtime.events.extensions import StepRetrying
from eve_runtime.events.turns import (
    MessageCompleted,
    ReasoningCompleted,
    ResultCompleted,
    StepCompleted,
    StepFailed as StepFailedEvent,
    StepStarted,
)
from eve_runtime.messages import AssistantMessage, Message, ToolCall, ToolMessage
from eve_runtime.models.base import Finish, ModelSettings
from eve_runtime.outcomes import ToolOutcome, cancelled_outcome, refused_outcome
from eve_runtime.store.base import DeliveryRecord, StoreError
from eve_runtime.tasks.calls import run_task_calls, run_tool_task, task_tool_names
from eve_runtime.tasks.delegation import (
    action_entry,
    delegation_tools,
    presentation_label,
    working_tasks,
)
from eve_runtime.tasks.flow import absorb_results, note_tasks, park_on_tasks

__all__ = ["StepEnd", "TurnRunner"]

logger = logging.getLogger("eve.turn")

OUTPUT_SCHEMA_MESSAGE = "The agent could not produce a result matching the requested schema."
CONTENT_FILTER_MESSAGE = "The model's response was blocked by the provider's content filter."


class StepEnd(enum.Enum):
    """How a step ended, for the runner's loop."""

    CONTINUE = "continue"
    DONE = "done"
    PARKED = "parked"


class TurnRunner:
    """Runs the actor's current turn to its end (or to a boundary when the actor stops)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.steering: list[DeliveryRecord] = []
        self.task_results: list[DeliveryRecord] = []
        self.questions = QuestionBoard(session)
        """Questions the turn's running tools wait on (`ctx.ask`)."""
        self.serve_inbox = ServeInbox()
        """Inputs for a served tool this session runs (its later calls)."""
        """Task reports that arrived while a step ran: they settle at the next step boundary."""
        self._batches: list[CallBatch] = []
        """The tool calls running now (a steering message fires their abort signals)."""
        self.cancel_delivery: DeliveryRecord | None = None
        self.cancel_requested = False
        self._model_call: ModelCall | None = None
        self._cancelled = asyncio.Event()
        self._batch_size = session.agent.config.experimental.workflow.model_calls_per_step
        self._batch_start = session.state.turn.step_index if session.state.turn is not None else 0
        self.delegation = delegation_tools(session.agent, is_root=session.is_root)
        self._task_tools = task_tool_names(session.agent, is_root=session.is_root)

    # -- called by the actor ------------------------------------------------------------------

    def steer(self, delivery: DeliveryRecord) -> None:
        """A message for this turn: abort a model call without output yet, else join at the boundary."""
        self.steering.append(delivery)
        for batch in self._batches:
            batch.abort("steered")  # tools waiting on a person or the clock stop early
        if self._model_call is not None:
            self._model_call.steer()

    def cancel(self, delivery: DeliveryRecord | None) -> None:
        """Stop the turn as soon as possible."""
        if self.cancel_requested:
            return
        self.cancel_requested = True
        self.cancel_delivery = delivery
        self._cancelled.set()
        if self._model_call is not None:
            self._model_call.cancel()

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Run steps until the turn ends, is cancelled, or the actor asks to stop at a boundary."""
        session = self.session
        while (turn := session.state.turn) is not None and turn.awaiting is None and not turn.waiting_on_tasks:
            if self.cancel_requested:
                await self.finish_cancelled([])
                return
            if session.stopping:
                return
            if self.steering:
                await self._absorb_steering()
                continue
            if turn.tool_call is not None:
                await run_tool_task(self, turn.tool_call)
                return
            await absorb_results(session, self.task_results)
            note_tasks(session)
            if await self._step() in (StepEnd.DONE, StepEnd.PARKED):
                return

    async def _absorb_steering(self) -> None:
        session = self.session
        for delivery in list(self.steering):
            self.steering.remove(delivery)
            session.checkpoint_later(history=[session.join_turn(delivery)], consumed=[delivery.id])

    # -- one step ----------------------------------------------------------------------------

    def step_at(self, step_index: int) -> StepAt:
        """Where a step of this turn is, for its events."""
        return StepAt.of(self.session.turn, step_index)

    async def _step(self) -> StepEnd:
        session = self.session
        options = session.host.options
        exceeded = exceeded_limit(session.state, session.agent.config.limits, is_root=session.is_root)
        if exceeded is not None:
            if session.state.task_mode:  # nobody to ask: the session fails, as eve's does
                await self._finish_failed(StepFailed(exceeded.code, exceeded.message, terminal=True))
                return StepEnd.DONE
            await park_for_limit(session, session.turn.step_index, exceeded)
            return StepEnd.PARKED
        failure: StepFailed | None = None
        for attempt in range(options.step_attempts):
            if failure is not None:
                at = self.step_at(session.turn.step_index)
                retry = StepRetrying(
                    at, attempt + 1, options.step_attempts, options.step_retry_delay, failure.code, failure.message
                )
                session.emit(retry)
                await asyncio.sleep(options.step_retry_delay)
            try:
                return await self._attempt_step()
            except StepFailed as exc:
                if exc.code == "STEP_FAILED":
                    failure = exc
                    continue
                await self._finish_failed(exc)
                return StepEnd.DONE
            except Steered:
                return StepEnd.CONTINUE
            except Cancelled:
                return StepEnd.DONE
            except StoreError:
                raise  # the store is gone: the actor stops and recovery takes over
            except Exception as exc:  # a bug or a broken resolver: retried like any failed step
                logger.warning(
                    "session %s: step %d of %s failed (attempt %d): %s",
                    session.session_id,
                    session.turn.step_index,
                    session.turn.turn_id,
                    attempt + 1,
                    exc,
                    exc_info=exc,
                )
                failure = StepFailed("STEP_FAILED", f"{type(exc).__name__}: {exc}")
        assert failure is not None
        await self._finish_failed(failure)
        return StepEnd.DONE

    async def _attempt_step(self) -> StepEnd:
        session = self.session
        turn = session.turn
        step_index = turn.step_index
        model, model_id = await session.model_for_step(step_index)
        at = self.step_at(step_index)
        session.emit(StepStarted(at, model_id))
        self._model_call = ModelCall(
            session.emit, at, session.host.options, quiet=quiet_tools(session.agent), pace=session
        )
        if turn.execute:
            await self._run_approved(step_index)
        try:
            request = build_request(
                session.agent, session.state, session.history, self._settings(), is_root=session.is_root
            )
            self._model_call.preflight(model, request)
            if await compact_before_call(session, model, model_id, step_index, request):
                request = build_request(
                    session.agent, session.state, session.history, self._settings(), is_root=session.is_root
                )
            result = await self._model_call.run(
                model, request, cancelled=lambda: self.cancel_requested, steered=lambda: bool(self.steering)
            )
        except Steered:
            session.emit(StepCompleted(at, "other"))
            turn.step_index = step_index + 1
            session.checkpoint_later()
            raise
        except Cancelled:
            await self.finish_cancelled([])
            raise
        finish = result.finish
        assert finish is not None
        if finish.reason == "content-filter":
            raise StepFailed(
                "MODEL_CALL_FAILED",
                CONTENT_FILTER_MESSAGE,
                {"semanticErrorId": "model-response-content-filtered", "finishReason": "content-filter"},
            )
        session.add_usage(finish)
        if result.reasoning:
            session.emit(ReasoningCompleted(at, result.reasoning))
        if result.calls:
            return await self._tool_step(step_index, result, finish)
        session.emit(MessageCompleted(at, finish.reason, result.text))
        session.emit(StepCompleted(at, finish.reason, finish.usage, finish.cost_usd))
        reply = AssistantMessage(content=result.text, reasoning=result.reasoning)
        if working_tasks(session.state) or self.task_results:  # no turn ends while one of its tasks works
            turn.step_index = step_index + 1
            session.checkpoint_later(history=[reply])
            await absorb_results(session, self.task_results)
            if not working_tasks(session.state):
                return StepEnd.CONTINUE  # the results arrived meanwhile: the model reads them next
            await park_on_tasks(session, [])
            return StepEnd.PARKED
        if turn.output_schema is not None:
            session.emit(StepFailedEvent(at, "OUTPUT_SCHEMA_NOT_FULFILLED", OUTPUT_SCHEMA_MESSAGE))
            await session.end_turn_failed("OUTPUT_SCHEMA_NOT_FULFILLED", OUTPUT_SCHEMA_MESSAGE, None, history=[reply])
            return StepEnd.DONE
        await session.end_turn_completed(history=[reply])
        return StepEnd.DONE

    async def _tool_step(self, step_index: int, result: ModelResult, finish: Finish) -> StepEnd:
        session = self.session
        turn = session.turn
        at = self.step_at(step_index)
        reply_calls = [c for c in result.calls if c.name == REPLY_TOOL and turn.output_schema is not None]
        task_calls = [c for c in result.calls if c.name in self._task_tools]
        skills = skill_calls(session.agent, result.calls)  # answered at once: no thread, no approval
        calls = [c for c in result.calls if c not in reply_calls and c not in task_calls and c not in skills]
        if result.text:
            session.emit(MessageCompleted(at, "tool-calls", result.text))
        for call in [c for c in result.calls if c not in reply_calls]:
            presentation = {call.id: {"label": presentation_label(call)}} if call.name in self.delegation else None
            entry = load_skill_action(call) if call in skills else action_entry(call, self.delegation)
            session.emit(ActionsRequested(at, [entry], presentation))
        decisions = await decide_calls(session, calls)
        await session.flush()  # a call's start record is durable before the call runs
        crashpoint("after-actions-requested")
        runnable = [c for c in calls if decisions[c.id][0] in ("not-applicable", "approved")]
        asking = [c for c in calls if decisions[c.id][0] == "user-approval"]
        outcomes = {**load_skills(session, skills, at), **await self.run_tools(runnable, step_index)}
        if self.cancel_requested:
            for call in task_calls:
                outcomes[call.id] = cancelled_outcome(call)
        for call in calls:
            decision, reason = decisions[call.id]
            if decision == "denied":
                outcomes[call.id] = refused_outcome(call, request_id=None, status="denied", reason=reason)
                session.emit(ActionResult(at, outcomes[call.id]))
        if self.cancel_requested:
            for call in asking:
                outcomes[call.id] = cancelled_outcome(call)
        if self.cancel_requested:
            await self.finish_cancelled(self._step_messages(result, reply_calls, outcomes))
            raise Cancelled()
        session.emit(StepCompleted(at, "tool-calls", finish.usage, finish.cost_usd))
        wait = await run_task_calls(self, task_calls, outcomes, at, asking=bool(asking))
        messages = self._step_messages(result, reply_calls, outcomes)
        if wait is not None:
            turn.step_index = step_index + 1
            await park_on_tasks(session, messages, wait=wait)
            return StepEnd.PARKED
        if asking:
            turn.step_index = step_index + 1
            await park_for_approval(session, step_index, asking, messages, decisions)
            return StepEnd.PARKED
        if reply_calls:
            assert turn.output_schema is not None
            value = unwrap_reply(turn.output_schema, reply_calls[0].arguments)
            session.emit(ResultCompleted(at, value))
            await session.end_turn_completed(history=messages, result=value)
            return StepEnd.DONE
        turn.step_index = step_index + 1
        crashpoint("before-checkpoint")
        boundary = (turn.step_index - self._batch_start) % self._batch_size == 0
        if boundary:
            self._batch_start = turn.step_index
        # Inside a batch (model_calls_per_step > 1) the messages are saved with the batch's checkpoint;
        # until then recovery rebuilds them from the events.
        session.checkpoint_later(history=messages, checkpoint=boundary)
        return StepEnd.CONTINUE

    def _step_messages(
        self, result: ModelResult, reply_calls: list[ToolCall], outcomes: dict[str, ToolOutcome]
    ) -> list[Message]:
        """The step's assistant message and the answers of its calls (a parked wait is answered later)."""
        assistant = AssistantMessage(content=result.text, reasoning=result.reasoning, tool_calls=tuple(result.calls))
        messages: list[Message] = [assistant]
        for call in result.calls:
            if call in reply_calls:
                messages.append(ToolMessage(tool_call_id=call.id, name=call.name, content="Result recorded."))
            elif call.id in outcomes:
                outcome = outcomes[call.id]
                messages.append(
                    ToolMessage(
                        tool_call_id=call.id, name=call.name, content=outcome.model_content, is_error=outcome.is_error
                    )
                )
        return messages

    async def _run_approved(self, step_index: int) -> None:
        """Run the calls a person approved, first thing in the step after the approval."""
        session = self.session
        turn = session.turn
        calls = [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in turn.execute]
        if not turn.execute_started:
            turn.execute_started = True  # from here on, a crash answers them as abandoned
            session.checkpoint_later()
            await session.flush()
        journals = {c.id: c.journal for c in turn.execute if c.journal is not None}
        outcomes = await self.run_tools(calls, step_index, journals=journals)
        messages: list[Message] = [
            ToolMessage(
                tool_call_id=c.id, name=c.name, content=outcomes[c.id].model_content, is_error=outcomes[c.id].is_error
            )
            for c in calls
        ]
        turn.execute = []
        turn.execute_started = False
        if self.cancel_requested:
            await self.finish_cancelled(messages)
            raise Cancelled()
        session.checkpoint_later(history=messages)

    # -- the model call ----------------------------------------------------------------------

    def _settings(self) -> ModelSettings:
        config = self.session.agent.config
        reasoning = config.reasoning if config.reasoning != "provider-default" else None
        return ModelSettings(reasoning=reasoning, model_options=dict(config.model_options))

    # -- tools -----------------------------------------------------------------------------

    async def run_tools(
        self, calls: Sequence[ToolCall], step_index: int, *, journals: dict[str, list[dict[str, Any]]] | None = None
    ) -> dict[str, ToolOutcome]:
        """Run calls in parallel (see `eve_runtime.engine.call_batch`); a cancel stops them."""
        self.questions.step_index = step_index
        batch = CallBatch(self.session, self.questions, self.serve_inbox, self.step_at(step_index))
        self._batches.append(batch)
        try:
            return await batch.run(calls, journals or {}, self._cancelled, lambda: self.cancel_requested)
        finally:
            self._batches.remove(batch)

    # -- endings ---------------------------------------------------------------------------

    async def finish_cancelled(self, history: list[Message]) -> None:
        self.questions.cancel_all()
        await self.session.end_turn_cancelled(history=history, cancel=self.cancel_delivery)

    async def _finish_failed(self, failure: StepFailed) -> None:
        session = self.session
        turn = session.turn
        session.emit(StepFailedEvent(StepAt.of(turn), failure.code, failure.message, failure.details))
        await session.end_turn_failed(failure.code, failure.message, failure.details, terminal=failure.terminal)
