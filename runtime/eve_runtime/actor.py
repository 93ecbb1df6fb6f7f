"""The session actor: one task per active session, owning its inbox, its turns and its writes.

Everything a session does is serialized through its actor, so the engine needs no locks. The
actor exists only while there is work: it loads the checkpoint, recovers what an interrupted
attempt left, handles deliveries in arrival order (starting turns, steering them, cancelling,
resetting), and ends when the inbox is empty; a parked session holds no task and no memory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eve_runtime.conversation import client_context_entries, static_user_instructions
from eve_runtime.crashpoints import crashpoint
from eve_runtime.delegation import CHILD_PREFIX, cancel_tasks, settle_task, working_tasks
from eve_runtime.dynamic import DynamicResolver
from eve_runtime.emitter import Emitter
from eve_runtime.messages import Message, MessageAdapter, UserMessage
from eve_runtime.models.base import Finish, Model
from eve_runtime.parked import handle_while_parked
from eve_runtime.recovery import recover_executed, recover_steps
from eve_runtime.relay import notify_parent, relayed_answers, report_reply, report_turn_end
from eve_runtime.resolvers import DynamicContext, ResolverError, resolve_instructions, resolve_model_id
from eve_runtime.runtime_agent import RuntimeAgent
from eve_runtime.session_state import CallRecord, ParentLink, SessionState, TurnState
from eve_runtime.state import SessionValues
from eve_runtime.store.base import DeliveryRecord, SessionRecord, SessionStatus
from eve_runtime.task_flow import handle_while_waiting, next_wake, recover_tasks
from eve_runtime.turn import TurnRunner

if TYPE_CHECKING:
    from eve_runtime.runtime import Runtime

__all__ = ["LoadedSession", "SessionActor", "stale_response_text"]

logger = logging.getLogger("eve.actor")

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


@dataclass
class LoadedSession:
    """A session as an actor left it: what the next actor may reuse instead of reading the store."""

    session: SessionRecord
    state: SessionState
    history: list[Message]
    next_index: int


class SessionActor:
    """Runs one session while it has work; see the module docstring."""

    def __init__(self, runtime: Runtime, session: SessionRecord, loaded: LoadedSession | None = None) -> None:
        self.runtime = runtime
        self.session = session
        self.session_id = session.id
        self.agent: RuntimeAgent = runtime.agent_for(session)
        self.is_root = not session.agent.startswith(CHILD_PREFIX)
        """A child session (a subagent's) never offers the built-in `agent` tool and reports to its parent."""
        self.store = runtime.store
        self.stopping = False
        self.closing = False
        """Set once the actor decided to end: a delivery arriving now needs a new actor."""
        self.task: asyncio.Task[None] | None = None
        self.state = SessionState()
        self.history: list[Message] = []
        self.emitter = Emitter(self.store, session.id, 0, linger=runtime.options.flush_linger)
        self.runner: TurnRunner | None = None
        self._unsaved: list[Message] = []
        self._values: SessionValues | None = None
        """Messages of completed steps inside a checkpoint batch, saved with the batch's checkpoint."""
        self._inbox: list[DeliveryRecord] = []
        self._deferred: set[str] = set()
        """Deliveries that wait for the parked turn to end (stale answers)."""
        self._seen: set[str] = set()
        self._wakeup = asyncio.Event()
        self._loaded = loaded

    # -- the runtime's side ---------------------------------------------------------------------

    def push(self, delivery: DeliveryRecord) -> None:
        """Hand over a delivery that is already durable in the inbox."""
        if delivery.id in self._seen:
            return
        self._seen.add(delivery.id)
        self._inbox.append(delivery)
        self._wakeup.set()

    def reroute(self) -> None:
        """Look at the inbox again: something in the running turn changed what a delivery means."""
        self._wakeup.set()

    def accepts_deliveries(self) -> bool:
        """Whether a delivery pushed now will be handled by this actor (it is not on its way out)."""
        return self.task is not None and not self.task.done() and not self.stopping and not self.closing

    # -- the loop --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Load, recover, and work until the inbox is empty (or the runtime stops)."""
        try:
            if not await self._load():
                self.closing = True
                return
            await self._recover()
            while not self.stopping:
                if self.state.outbox:
                    await notify_parent(self)
                turn = self.state.turn
                if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks:
                    await self._run_turn()
                    continue
                if turn is None:
                    self._deferred.clear()  # answers that were stale now reach the model as a new turn
                    if self._expired():
                        await self._complete("completed")
                        return
                elif turn.waiting_on_tasks and await handle_while_waiting(self, None) == "resumed":
                    continue  # a task timed out, or the wait did
                delivery = self._take(lambda d: d.id not in self._deferred)
                if delivery is not None and turn is not None:
                    if turn.awaiting is not None:
                        handled = await handle_while_parked(self, delivery)
                    else:
                        handled = await handle_while_waiting(self, delivery)
                    if handled == "deferred":
                        self._deferred.add(delivery.id)
                        self._inbox.append(delivery)
                        self._inbox.sort(key=lambda d: d.seq)
                    continue
                if delivery is None:
                    wake = next_wake(self)
                    if wake is not None:
                        self.runtime.schedule_wake(self.session_id, wake)
                    self.closing = True  # from here on, the runtime starts a new actor for new deliveries
                    self.runtime.remember(
                        self.session_id, LoadedSession(self.session, self.state, self.history, self.emitter.next_index)
                    )
                    return
                await self._handle_idle(delivery)
                if self.session.status != "active":
                    return
        finally:
            await self.emitter.close()

    async def _load(self) -> bool:
        """Read the checkpoint and the inbox; the history only when there is work. Returns whether there is."""
        loaded, self._loaded = self._loaded, None
        if loaded is not None:
            self.state, self.history, self.emitter.next_index = loaded.state, loaded.history, loaded.next_index
        else:
            raw = await self.store.load_checkpoint(self.session_id)
            if raw is not None:
                self.state = SessionState.model_validate_json(raw)
        for delivery in await self.store.pending_deliveries(self.session_id):
            if delivery.id not in self._seen:
                self._seen.add(delivery.id)
                self._inbox.append(delivery)
        self._inbox.sort(key=lambda d: d.seq)
        turn = self.state.turn
        # parked on a person or on tasks: idle too, unless a deadline passed
        idle = turn is None or turn.awaiting is not None or turn.waiting_on_tasks
        wake = next_wake(self)
        due = wake is not None and wake <= self.runtime.options.clock()
        if idle and not self._inbox and not self._expired() and not due and not self.state.outbox:
            if wake is not None:
                self.runtime.schedule_wake(self.session_id, wake)
            if loaded is not None:
                self.runtime.remember(self.session_id, loaded)
            return False
        if loaded is None:
            stored = await self.store.load_history(self.session_id)
            self.history = MessageAdapter.validate_json("[" + ",".join(stored) + "]")
            self.emitter.next_index = await self.store.event_count(self.session_id)
        if self.state.turn is not None:
            self.emitter.delivery_ids = tuple(self.state.turn.delivery_ids)
        return True

    async def _recover(self) -> None:
        turn = self.state.turn
        if turn is None:
            return
        events: list[dict[str, Any]] = []
        if self.emitter.next_index > self.state.event_count:
            rows = await self.store.read_events(self.session_id, self.state.event_count)
            events = [json.loads(row.line) for row in rows]
        executed: list[Message] = []
        resumed: list[CallRecord] = []
        if turn.execute and turn.execute_started:
            # Approved calls that may have started: never run again (recorded results kept),
            # except workflow tools, which resume from their journals.
            executed, resumed = recover_executed(self.agent, turn.execute, events)
            turn.execute = resumed
            turn.execute_started = False
        if not events and not executed and not resumed:
            return
        await recover_tasks(self, events)
        recovered = recover_steps(self.agent, turn.turn_id, events, turn.step_index)
        recovered.history[0:0] = executed
        turn.execute.extend(recovered.resume)
        for usage, cost in recovered.usage:
            self.state.usage.add(usage, cost)
        turn.step_index = recovered.next_step
        # a workflow tool resumed from its journal lost nothing: that alone is no interruption
        if (recovered.interrupted and not recovered.resume) or executed:
            turn.interruptions += 1
            logger.warning("session %s: turn %s resumed after an interruption", self.session_id, turn.turn_id)
        if recovered.replied and not working_tasks(self.state):
            # The final reply was durable; only the turn's end was lost with the crash.
            await self.end_turn_completed(history=recovered.history)
            return
        if recovered.replied:  # ... but its tasks still work: the turn waits for them
            turn.waiting_on_tasks = True
        if turn.interruptions > self.runtime.options.max_interruptions:
            await self.end_turn_failed(
                "STEP_INTERRUPTED",
                f"The turn was interrupted {turn.interruptions} times (more than "
                f"{self.runtime.options.max_interruptions}); it was stopped.",
                None,
                history=recovered.history,
            )
            return
        await self.commit(history=recovered.history)

    def _take(self, predicate: Any) -> DeliveryRecord | None:
        for index, delivery in enumerate(self._inbox):
            if predicate(delivery):
                return self._inbox.pop(index)
        return None

    async def _run_turn(self) -> None:
        runner = TurnRunner(self)
        self.runner = runner
        turn_task = asyncio.create_task(runner.run(), name=f"eve-turn-{self.session_id}")
        try:
            while not turn_task.done():
                self._route_to_turn(runner)
                self._wakeup.clear()
                waiter = asyncio.create_task(self._wakeup.wait())
                await asyncio.wait({turn_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
            await turn_task
        finally:
            if not turn_task.done():
                turn_task.cancel()
            self.runner = None
            # Messages that reached the turn too late to join it start the next turns, in order;
            # task reports it did not absorb go to the wait (or the idle session).
            self._inbox = sorted([*runner.steering, *runner.task_results, *self._inbox], key=lambda d: d.seq)
        turn = self.state.turn
        if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks and not self.stopping:
            raise RuntimeError("the turn runner returned with the turn still open")

    def _route_to_turn(self, runner: TurnRunner) -> None:
        """Deliveries that act on the running turn: steering messages and cancels (and resets)."""
        turn = self.state.turn
        keep: list[DeliveryRecord] = []
        for delivery in self._inbox:
            if delivery.id in self._deferred:
                keep.append(delivery)  # it waits for this turn to end
            elif delivery.kind in ("responses", "message") and runner.questions.answer(delivery):
                continue  # it answered a running tool's question
            elif runner.serve_inbox.offer(delivery):
                continue  # more input for the served tool this session runs
            elif delivery.kind == "task" or (delivery.kind == "responses" and relayed_answers(self, delivery)):
                runner.task_results.append(delivery)  # applied at the next step boundary
            elif delivery.kind == "message" and delivery.payload.get("turnPolicy", "steer") == "steer":
                runner.steer(delivery)
            elif delivery.kind == "cancel" and turn is not None:
                target = delivery.payload.get("turnId")
                if target is None or target == turn.turn_id:
                    runner.cancel(delivery)
                else:
                    keep.append(delivery)  # names another turn: consumed as a no-op once idle
            elif delivery.kind == "reset":
                runner.cancel(None)
                keep.append(delivery)
            else:
                keep.append(delivery)
        self._inbox = keep

    async def _handle_idle(self, delivery: DeliveryRecord) -> None:
        if delivery.kind == "message" and "serveInput" in delivery.payload:  # for a served tool that returned
            call_id = str(delivery.payload["serveInput"].get("callId"))
            await report_reply(self, call_id, "The task has ended: its tool returned.", ended=True)
            await self.commit(consumed=[delivery.id])
        elif delivery.kind == "task":  # a report after its turn ended (a task that was cancelled): nothing waits
            message = settle_task(self, delivery.payload)
            await self.commit(history=[message] if message is not None else [], consumed=[delivery.id])
        elif delivery.kind in ("message", "responses"):
            await self._start_turn(delivery)
        elif delivery.kind == "reset":
            await self._reset(delivery)
        else:
            await self.commit(consumed=[delivery.id])  # a cancel with nothing to cancel, and the like

    # -- turns -------------------------------------------------------------------------------

    @property
    def values(self) -> SessionValues:
        """The session's `define_state` values, as tools see them (saved with each checkpoint)."""
        if self._values is None or self._values.values is not self.state.values:
            self._values = SessionValues(self.state.values)
        return self._values

    @property
    def turn(self) -> TurnState:
        """The turn in progress (only valid while one is)."""
        turn = self.state.turn
        assert turn is not None
        return turn

    def message_of(self, delivery: DeliveryRecord) -> tuple[str, list[dict[str, Any]]]:
        """The `message.received` text and parts of a delivery."""
        payload = delivery.payload
        if delivery.kind == "responses":
            responses = payload.get("inputResponses", [])
            text = "\n".join(str(r.get("optionId") or r.get("text") or "") for r in responses)
            return text, [{"text": text, "type": "text"}]
        parts = payload.get("parts") or [{"text": payload.get("message", ""), "type": "text"}]
        return payload.get("message", ""), parts

    def model_text_of(self, delivery: DeliveryRecord) -> str:
        """What the model reads for a delivery."""
        if delivery.kind == "responses":
            return stale_response_text(delivery.payload.get("inputResponses", []))
        return str(delivery.payload.get("message", ""))

    async def _start_turn(self, delivery: DeliveryRecord) -> None:
        self.agent = self.runtime.agent_for(self.session)  # a new turn runs the newest generation
        state = self.state
        sequence = state.next_sequence
        turn = TurnState(
            turn_id=f"turn_{sequence}",
            sequence=sequence,
            delivery_ids=[delivery.id],
            user_index=len(self.history),
            client_context=client_context_entries(delivery.payload.get("clientContext")),
            output_schema=delivery.payload.get("outputSchema"),
            task_call=delivery.payload.get("taskCall"),
            tool_call=CallRecord.model_validate(delivery.payload["toolCall"])
            if "toolCall" in delivery.payload
            else None,
        )
        state.next_sequence = sequence + 1
        state.turn = turn
        self.emitter.delivery_ids = (delivery.id,)
        opening: list[Message] = []
        first = not state.started
        if first:
            state.task_mode = delivery.payload.get("mode") == "task"
            parent = delivery.payload.get("parent")
            if isinstance(parent, dict):
                state.parent = ParentLink(
                    session_id=parent["sessionId"],
                    task_id=parent["taskId"],
                    name=parent["name"],
                    call_id=parent["callId"],
                    turn_id=parent["turnId"],
                )
            state.started = True
            started: dict[str, Any] = {"runtime": self.runtime.runtime_info(self.agent)}
            if state.parent is not None:
                started["invocation"] = {
                    "kind": "subagent",
                    "name": state.parent.name,
                    "parentCallId": state.parent.call_id,
                    "parentSessionId": state.parent.session_id,
                    "parentTurnId": state.parent.turn_id,
                }
            self.emit("session.started", started)
            opening.extend(static_user_instructions(self.agent))
            turn.user_index += len(opening)
        self.emit("turn.started", {"sequence": sequence, "turnId": turn.turn_id})
        text, parts = self.message_of(delivery)
        self.emit("message.received", {"message": text, "parts": parts, "sequence": sequence, "turnId": turn.turn_id})
        user = UserMessage(content=self.model_text_of(delivery))
        opening.append(user)
        try:
            await self._resolve_dynamic(turn, first=first)
        except ResolverError as exc:
            await self.end_turn_failed(
                "DYNAMIC_RESOLVER_FAILED", str(exc), None, history=opening, consumed=[delivery.id]
            )
            return
        self.checkpoint_later(history=opening, consumed=[delivery.id])
        crashpoint("after-turn-start")

    async def _resolve_dynamic(self, turn: TurnState, *, first: bool) -> None:
        if first:
            context = DynamicContext(session_id=self.session_id, agent_name=self.agent.name, event="session.started")
            self.state.dynamic = await resolve_instructions(self.agent, "session.started", context)
            model = self.agent.config.model
            if isinstance(model, DynamicResolver) and "session.started" in model.events:
                self.state.model_id = await resolve_model_id(model, "session.started", context)
        context = DynamicContext(
            session_id=self.session_id,
            agent_name=self.agent.name,
            event="turn.started",
            turn_id=turn.turn_id,
            sequence=turn.sequence,
        )
        turn.dynamic = await resolve_instructions(self.agent, "turn.started", context)
        model = self.agent.config.model
        if isinstance(model, DynamicResolver) and "turn.started" in model.events:
            turn.model_id = await resolve_model_id(model, "turn.started", context)

    async def model_for_step(self, step_index: int) -> tuple[Model, str]:
        """The model of the turn's next call, and the id `step.started` reports."""
        configured = self.agent.config.model
        turn = self.turn
        if isinstance(configured, DynamicResolver):
            model_id = turn.model_id or self.state.model_id
            if "step.started" in configured.events:
                context = DynamicContext(
                    session_id=self.session_id,
                    agent_name=self.agent.name,
                    event="step.started",
                    turn_id=turn.turn_id,
                    sequence=turn.sequence,
                    step_index=step_index,
                )
                model_id = await resolve_model_id(configured, "step.started", context)
            if model_id is None:
                raise ResolverError("The dynamic model resolver chose no model for this turn.")
            return self.runtime.model(model_id), model_id
        if isinstance(configured, str):
            return self.runtime.model(configured), configured
        model: Model = configured
        return model, model.model_id

    def join_turn(self, delivery: DeliveryRecord) -> UserMessage:
        """A message joins the running turn: `message.received` (its delivery id on every later event).

        Returns what the model reads for it (the caller decides whether it enters history).
        """
        self.add_delivery_id(delivery.id)
        text, parts = self.message_of(delivery)
        turn = self.turn
        self.emit(
            "message.received", {"message": text, "parts": parts, "sequence": turn.sequence, "turnId": turn.turn_id}
        )
        return UserMessage(content=self.model_text_of(delivery))

    def names_another_turn(self, delivery: DeliveryRecord) -> bool:
        """A cancel naming a turn other than the running one (consumed as a no-op)."""
        target = delivery.payload.get("turnId")
        return delivery.kind == "cancel" and target is not None and target != self.turn.turn_id

    def add_delivery_id(self, delivery_id: str) -> None:
        """A steering message joins the turn: its delivery id goes on every later event."""
        turn = self.turn
        turn.delivery_ids.append(delivery_id)
        self.emitter.delivery_ids = tuple(turn.delivery_ids)

    def add_usage(self, finish: Finish) -> None:
        """Count a finished model call in the session's totals."""
        self.state.usage.add(finish.usage, finish.cost_usd)

    async def end_turn_completed(self, *, history: Sequence[Message], result: Any = None) -> None:
        """`turn.completed` then `session.waiting`, with the turn's last messages (and its `outputSchema` result)."""
        turn = self.turn
        self.emit("turn.completed", {"sequence": turn.sequence, "turnId": turn.turn_id})
        report: dict[str, Any] = {"result": result} if result is not None else {}
        await self._close_turn(history, status="completed", report=report)

    async def end_turn_failed(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None,
        *,
        history: Sequence[Message] = (),
        consumed: Sequence[str] = (),
    ) -> None:
        """`turn.failed` (not terminal: the session stays open) then `session.waiting`."""
        turn = self.turn
        await cancel_tasks(self, reason="turn_failed")
        data: dict[str, Any] = {"code": code, "message": message}
        if details:
            data["details"] = details
        self.emit("turn.failed", {**data, "sequence": turn.sequence, "terminal": False, "turnId": turn.turn_id})
        await self._close_turn(
            history, consumed=consumed, status="failed", report={"error": {"code": code, "message": message}}
        )

    async def end_turn_cancelled(
        self, *, history: Sequence[Message], cancel: DeliveryRecord | None, consumed: Sequence[str] = ()
    ) -> None:
        """`turn.cancelled` then `session.waiting`; stopped calls stay in history answered as cancelled."""
        turn = self.turn
        await cancel_tasks(self, reason="turn_cancelled")
        self.emit("turn.cancelled", {"sequence": turn.sequence, "turnId": turn.turn_id})
        consumed = [*consumed, *([cancel.id] if cancel is not None else [])]
        await self._close_turn(history, consumed=consumed, status="cancelled", report={})

    async def _close_turn(
        self, history: Sequence[Message], *, status: str, report: dict[str, Any], consumed: Sequence[str] = ()
    ) -> None:
        crashpoint("before-turn-end")
        self.emit(
            "session.waiting",
            {"continuationToken": self.session_id, "usage": self.state.usage.wire(), "wait": "next-user-message"},
        )
        report_turn_end(self, status, list(history), report)  # for a child's parent; saved with this checkpoint
        self.state.turn = None
        await self.commit(history=history, consumed=consumed)
        await notify_parent(self)

    # -- controls ----------------------------------------------------------------------------

    async def _reset(self, delivery: DeliveryRecord) -> None:
        self.emitter.delivery_ids = ()
        await self._complete("reset", consumed=[delivery.id])
        self.runtime.acknowledge(delivery.id)

    def _expired(self) -> bool:
        deadline = self.session.deadline
        return deadline is not None and self.runtime.options.clock() >= deadline and self.session.status == "active"

    async def _complete(self, status: SessionStatus, *, consumed: Sequence[str] = ()) -> None:
        """End the session: `session.completed` is its last event; its data is kept."""
        self.emit("session.completed", {"usage": self.state.usage.wire()})
        await self.commit(consumed=consumed, status=status)
        self.session = dataclasses.replace(self.session, status=status)

    # -- writing -----------------------------------------------------------------------------

    def checkpoint_later(
        self, *, history: Sequence[Message] = (), consumed: Sequence[str] = (), checkpoint: bool = True
    ) -> None:
        """Save history, consumed deliveries and the checkpoint with the next write, without waiting.

        They become durable atomically with every event emitted so far. With `checkpoint=False`
        (inside a checkpoint batch) the messages wait for the batch's checkpoint; until then,
        recovery rebuilds them from the events.
        """
        self.history.extend(history)
        if not checkpoint:
            self._unsaved.extend(history)
            self.emitter.attach(consumed=consumed)
            return
        encoded = [message.model_dump_json() for message in [*self._unsaved, *history]]
        self._unsaved.clear()
        self.emitter.attach(history=encoded, consumed=consumed, checkpoint=self._checkpoint)

    def _checkpoint(self, event_count: int) -> str:
        """The checkpoint document of the current state, covering the first `event_count` events."""
        self.state.event_count = event_count
        return self.state.model_dump_json()

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        """Emit one of this session's events."""
        self.emitter.emit(event_type, data)

    async def flush(self) -> None:
        """Wait until every emitted event is durable."""
        await self.emitter.flush()

    async def commit(
        self,
        *,
        history: Sequence[Message] = (),
        consumed: Sequence[str] = (),
        status: SessionStatus | None = None,
    ) -> None:
        """Commit pending events, new history and the checkpoint in one transaction.

        The messages are appended to the in-memory history too: pass each new message exactly once.
        """
        self.history.extend(history)
        encoded = [message.model_dump_json() for message in [*self._unsaved, *history]]
        self._unsaved.clear()
        await self.emitter.commit(history=encoded, checkpoint=self._checkpoint, consumed=consumed, status=status)
