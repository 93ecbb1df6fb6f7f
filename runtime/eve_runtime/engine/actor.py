"""The session actor: one task per active session, owning its inbox, its turns and its writes.

Everything a session does is serialized through its actor, so the engine needs no locks. The
actor exists only while there is work: it loads the checkpoint, recovers what an interrupted
attempt left, handles deliveries in arrival order (starting turns, steering them, cancelling,
resetting), and ends when the inbox is empty; a parked session holds no task and no memory.
Each actor runs one build of the app: the newest for an idle session (moving it there, see
`eve_runtime.engine.handoff`), the one it was working on for a busy one.

Here are its state, what the runtime hands it, what turns ask of it (ending a turn, the session's
values) and its writes (events, history and checkpoint in one commit); its loop is `engine.loop`,
each delivery's routing `engine.routing`. Its helpers see only the ports (`engine.ports`).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import Any

from eve_runtime.authoring.state import SessionValues
from eve_runtime.checkpoint import SessionState, TurnState
from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.emitter import Emitter
from eve_runtime.engine.handoff import agent_or_root, busy
from eve_runtime.engine.held import DynamicTools, LoadedSession
from eve_runtime.engine.hook_dispatch import hook_context
from eve_runtime.engine.inbox import Inbox
from eve_runtime.engine.loop import work
from eve_runtime.engine.ports import ActorHost
from eve_runtime.engine.turn_start import message_of, model_for_step, user_message_of
from eve_runtime.events.catalog import DELTA_FIELDS, StreamEvent, TurnAt
from eve_runtime.events.turns import (
    MessageReceived,
    SessionCompleted,
    SessionFailed,
    SessionWaiting,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
)
from eve_runtime.events.usage import add_call
from eve_runtime.messages import Message, MessageAdapter, UserMessage
from eve_runtime.models.base import Finish, Model
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryRecord, SessionHandoff, SessionRecord, SessionStatus
from eve_runtime.tasks.delegation import CHILD_PREFIX, cancel_tasks
from eve_runtime.tasks.relay import notify_parent, report_turn_end

__all__ = ["SessionActor"]

logger = logging.getLogger("eve.actor")


class SessionActor:
    """Runs one session while it has work; see the module docstring."""

    def __init__(self, host: ActorHost, session: SessionRecord, loaded: LoadedSession | None = None) -> None:
        self.host = host
        self.session = session
        self.session_id = session.id
        self.root: RuntimeAgent = host.pins.get(session.id) or host.agent
        """The root agent of the build this actor runs (see `eve_runtime.engine.handoff`)."""
        self.base_agent: RuntimeAgent = agent_or_root(host, session, self.root)
        """The session's agent in that build, before dynamic tools."""
        self.agent: RuntimeAgent = self.base_agent
        self.is_root = not session.agent.startswith(CHILD_PREFIX)
        """A child session (a subagent's) never offers the built-in `agent` tool and reports to its parent."""
        self.stopping = False
        self.closing = False
        """Set once the actor decided to end: a delivery arriving now needs a new actor."""
        self.task: asyncio.Task[None] | None = None
        self.state = SessionState()
        self.history: list[Message] = []
        self.emitter = Emitter(host.store, session.id, 0, linger=host.options.flush_linger)
        self.emitter.observer = host.hooks.observer(
            session.id, lambda: self.agent, lambda: hook_context(self.session_id, self.agent, self.state)
        )
        self.hurry, self.settle = self.emitter.hurry, self.emitter.settle  # the Session port's (see Emitter)
        self.dynamic_tools = DynamicTools()
        """Tools `define_dynamic` resolvers returned (functions: never in a checkpoint)."""
        self.inbox = Inbox()
        """Deliveries taken from the store and not yet handled (see `eve_runtime.engine.routing`)."""
        self._unsaved: list[Message] = []
        """Messages of completed steps inside a checkpoint batch, saved with the batch's checkpoint."""
        self._values: SessionValues | None = None
        self._loaded = loaded
        """The session as the last actor here left it, reused instead of reading the store (see `loop`)."""

    # -- the runtime's side ---------------------------------------------------------------------

    def start(self, context: contextvars.Context) -> asyncio.Task[None]:
        """Run the actor as a task (in `context`) until its work is done."""
        self.task = asyncio.create_task(self.run(), name=f"eve-session-{self.session_id}", context=context)
        return self.task

    async def run(self) -> None:
        """Load, recover, and work until the inbox is empty (or the runtime stops), holding the lease if any."""
        ownership = self.host.ownership
        if ownership is None:
            await work(self)
        else:
            await ownership.run(self, lambda: work(self))

    def push(self, delivery: DeliveryRecord) -> None:
        """Hand over a delivery accepted into the inbox (durable, or the emitter waits for it: `Emitter.after`)."""
        self.inbox.push(delivery, busy=busy(self.state))

    def reroute(self) -> None:
        """Look at the inbox again: something in the running turn changed what a delivery means."""
        self.inbox.signal()

    def accepts_deliveries(self) -> bool:
        """Whether a delivery pushed now will be handled by this actor (it is not on its way out)."""
        return self.task is not None and not self.task.done() and not self.stopping and not self.closing

    def stop(self) -> None:
        """Stop at the next step boundary (the runtime stops)."""
        self.stopping = True

    def stop_accepting(self) -> None:
        """The actor decided to end: a delivery arriving now needs a new actor."""
        self.closing = True

    def seen_deliveries(self) -> frozenset[str]:
        """The deliveries this actor took into its inbox (handled, deferred or queued)."""
        return self.inbox.seen()

    # -- leases (many processes on one store) ----------------------------------------------------

    def hold_lease(self, fence: int, *, kept: bool = False) -> None:
        """This process holds the session's lease, token `fence`; `kept`: since the last actor (`Inbox.current`).

        What the last actor here left stays usable only if nobody owned the session since (the same token, or the next).
        """
        self.emitter.fence, self.inbox.current = fence, self.inbox.current and kept
        loaded = self._loaded
        if loaded is not None and (loaded.fence is None or fence - loaded.fence not in (0, 1)):
            self._loaded = None

    @property
    def fence(self) -> int | None:
        """The fencing token of the session's lease this actor holds, if any."""
        return self.emitter.fence

    def lose_lease(self) -> None:
        """Another process took the session over: stop at once, writing nothing more."""
        self.stopping = True
        if self.task is not None:
            self.task.cancel()

    # -- loading ---------------------------------------------------------------------------------

    def take_loaded(self) -> LoadedSession | None:
        """What the last actor here left, if this one may reuse it (once)."""
        loaded, self._loaded = self._loaded, None
        return loaded

    def resume(self, loaded: LoadedSession) -> None:
        """Continue from what the last actor here left instead of reading the store."""
        self.state, self.history, self.emitter.next_index = loaded.state, loaded.history, loaded.next_index
        self.emitter.delivery_ids = tuple(self.state.turn.delivery_ids) if self.state.turn is not None else ()

    async def load(self, *, history: bool) -> None:
        """Read the checkpoint (and with `history`, the history and the event count) from the store."""
        store = self.host.store
        if not history:
            raw = await store.load_checkpoint(self.session_id)
            if raw is not None:
                self.state = SessionState.model_validate_json(raw)
            return
        stored = await store.load_history(self.session_id)
        self.history = MessageAdapter.validate_json("[" + ",".join(stored) + "]")
        self.emitter.next_index = await store.event_count(self.session_id)
        if self.state.turn is not None:
            self.emitter.delivery_ids = tuple(self.state.turn.delivery_ids)

    def loaded(self) -> LoadedSession:
        """The session as it is now, for the next actor here."""
        return LoadedSession(self.session, self.state, self.history, self.emitter.next_index, self.emitter.fence)

    async def events_after_checkpoint(self) -> list[dict[str, Any]]:
        """The events an interrupted attempt wrote after the checkpoint, but streamed deltas (nothing recovers them)."""
        if self.emitter.next_index <= self.state.event_count:
            return []
        rows = await self.host.store.read_events(self.session_id, self.state.event_count, skip=DELTA_FIELDS)
        return [json.loads(row.line) for row in rows]

    # -- builds ----------------------------------------------------------------------------------

    def run_on(self, root: RuntimeAgent) -> bool:
        """Run the build of `root` from now on (see `eve_runtime.engine.handoff`); whether that changed it."""
        if root is self.root:
            return False
        self.root = root
        self.base_agent = self.agent = self.host.agent_for(self.session, root)
        self.dynamic_tools = DynamicTools()  # the other build's resolvers made them
        return True

    async def record_build(self, handoff: SessionHandoff, *, checkpoint: str | None = None) -> None:
        """Record the build the session runs (and its deadline), with `checkpoint` when it moved."""
        await self.emitter.commit(handoff=handoff, checkpoint=(lambda _count: checkpoint) if checkpoint else None)
        self.session = dataclasses.replace(self.session, deployment=handoff.deployment, deadline=handoff.deadline)

    def use_agent(self, agent: RuntimeAgent) -> None:
        """Offer this agent's tools from now on (the base agent with dynamic tools)."""
        self.agent = agent

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

    async def model_for_step(self, step_index: int) -> tuple[Model, str]:
        """The model of the turn's next call, and the id `step.started` reports."""
        return await model_for_step(self, step_index)

    def join_turn(self, delivery: DeliveryRecord) -> UserMessage:
        """A message joins the turn: `message.received`; returns what the model reads (answers to no request: no id)."""
        turn = self.turn
        if delivery.kind != "responses":
            turn.delivery_ids.append(delivery.id)
        self.emitter.delivery_ids = tuple(turn.delivery_ids)
        text, parts = message_of(delivery)
        self.emit(MessageReceived(TurnAt.of(turn), text, parts))
        return user_message_of(delivery)

    def names_another_turn(self, delivery: DeliveryRecord) -> bool:
        """A cancel naming a turn other than the running one (consumed as a no-op)."""
        return delivery.kind == "cancel" and delivery.payload.get("turnId") not in (None, self.turn.turn_id)

    def add_usage(self, finish: Finish) -> None:
        """Count a finished model call in the session's totals."""
        add_call(self.state.usage, finish.usage, finish.cost_usd)

    async def end_turn_completed(self, *, history: Sequence[Message], result: Any = None) -> None:
        """`turn.completed` then `session.waiting`, with the turn's last messages (and its `outputSchema` result)."""
        self.emit(TurnCompleted(TurnAt.of(self.turn)))
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
        terminal: bool = False,
    ) -> None:
        """`turn.failed` (logged with its cause), then `session.waiting`, or `session.failed` if `terminal`."""
        turn = self.turn
        logger.warning("session %s: %s failed: %s: %s %s", self.session_id, turn.turn_id, code, message, details or "")
        await cancel_tasks(self, reason="turn_failed")
        self.emit(TurnFailed(TurnAt.of(turn), code, message, details, terminal))
        if terminal:
            self.emit(SessionFailed(self.session_id, code, message, details, self.state.usage))
        report = {"error": {"code": code, "message": message}}
        await self._close_turn(
            history, consumed=consumed, status="failed", report=report, waiting=not terminal, ends=terminal
        )

    async def end_turn_cancelled(
        self,
        *,
        history: Sequence[Message],
        cancel: DeliveryRecord | None,
        consumed: Sequence[str] = (),
        waiting: bool = True,
    ) -> None:
        """`turn.cancelled` then `session.waiting`; stopped calls stay in history answered as cancelled.

        With `waiting=False` the caller emits `session.waiting` itself (a clear, after `context.cleared`).
        """
        turn = self.turn
        await cancel_tasks(self, reason="turn_cancelled")
        self.emit(TurnCancelled(TurnAt.of(turn)))
        consumed = [*consumed, *([cancel.id] if cancel is not None else [])]
        await self._close_turn(history, consumed=consumed, status="cancelled", report={}, waiting=waiting)

    async def _close_turn(
        self,
        history: Sequence[Message],
        *,
        status: str,
        report: dict[str, Any],
        consumed: Sequence[str] = (),
        waiting: bool = True,
        ends: bool = False,
    ) -> None:
        crashpoint("before-turn-end")
        if waiting:
            self.emit_waiting()
        report_turn_end(self, status, list(history), report)  # for a child's parent; saved with this checkpoint
        self.state.turn = None
        await self.commit(history=history, consumed=consumed, status="failed" if ends else None)
        await notify_parent(self)

    # -- controls ----------------------------------------------------------------------------

    async def complete(self, status: SessionStatus, *, consumed: Sequence[str] = ()) -> None:
        """End the session: `session.completed` is its last event; its data is kept."""
        self.emit(SessionCompleted(self.state.usage))
        await self.commit(consumed=consumed, status=status)

    # -- writing -----------------------------------------------------------------------------

    def own_events(self, delivery_ids: Sequence[str]) -> None:
        """The deliveries that own what is emitted from now on."""
        self.emitter.delivery_ids = tuple(delivery_ids)

    async def continue_deliveries(self) -> None:
        """Between turns: what is emitted next is owned by the deliveries of the newest durable event."""
        await self.emitter.continue_deliveries()

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

    def emit_waiting(self) -> None:
        """`session.waiting`: the session is idle until the next message."""
        self.emit(SessionWaiting(self.session_id, self.state.usage))

    def emit(self, event: StreamEvent) -> None:
        """Emit one of this session's events."""
        self.emitter.emit(event)

    async def flush(self) -> None:
        """Wait until every emitted event is durable."""
        await self.emitter.flush()

    async def close(self) -> None:
        """Wait for the session's last write."""
        await self.emitter.close()

    async def commit(
        self,
        *,
        history: Sequence[Message] = (),
        consumed: Sequence[str] = (),
        status: SessionStatus | None = None,
        replace_history: bool = False,
    ) -> None:
        """Commit pending events, new history and the checkpoint in one transaction.

        The messages are appended to the in-memory history too: pass each new message exactly once.
        With `replace_history`, `history` becomes the whole history instead (a compaction, a clear).
        """
        if replace_history:  # the events emitted so far land with the replacement, in one transaction
            self.history = list(history)
            self._unsaved.clear()
            encoded = [message.model_dump_json() for message in history]
        else:
            self.history.extend(history)
            encoded = [message.model_dump_json() for message in [*self._unsaved, *history]]
            self._unsaved.clear()
        await self.emitter.commit(
            history=encoded,
            checkpoint=self._checkpoint,
            consumed=consumed,
            status=status,
            replace_history=replace_history,
        )
        if status is not None:  # the session ended with this commit
            self.session = dataclasses.replace(self.session, status=status)
