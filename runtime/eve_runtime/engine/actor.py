"""The session actor: one task per active session, owning its inbox, its turns and its writes.

Everything a session does is serialized through its actor, so the engine needs no locks. The
actor exists only while there is work: it loads the checkpoint, recovers what an interrupted
attempt left, handles deliveries in arrival order (starting turns, steering them, cancelling,
resetting), and ends when the inbox is empty; a parked session holds no task and no memory.
Each actor runs one build of the app: the newest for an idle session (moving it there, see
`eve_runtime.engine.handoff`), the one it was working on for a busy one.

Here are the actor's state, what the runtime hands it, what turns ask of it (ending a turn, the
session's values) and its writes (events, history and checkpoint in one commit). Its loop is in
`eve_runtime.engine.loop`, the routing of each delivery in `eve_runtime.engine.routing`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from eve_runtime.authoring.state import SessionValues
from eve_runtime.checkpoint import SessionState, TurnState
from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.dynamic_tools import DynamicTools
from eve_runtime.engine.emitter import Emitter
from eve_runtime.engine.handoff import busy
from eve_runtime.engine.hook_dispatch import hook_context
from eve_runtime.engine.loop import LoadedSession, work
from eve_runtime.engine.turn import TurnRunner
from eve_runtime.engine.turn_start import message_of, model_for_step, model_text_of
from eve_runtime.messages import Message, UserMessage
from eve_runtime.models.base import Finish, Model
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryRecord, SessionRecord, SessionStatus
from eve_runtime.tasks.delegation import CHILD_PREFIX, cancel_tasks
from eve_runtime.tasks.relay import notify_parent, report_turn_end

if TYPE_CHECKING:
    from eve_runtime.sessions.runtime import Runtime

__all__ = ["LoadedSession", "SessionActor"]

logger = logging.getLogger("eve.actor")


class SessionActor:
    """Runs one session while it has work; see the module docstring."""

    def __init__(self, runtime: Runtime, session: SessionRecord, loaded: LoadedSession | None = None) -> None:
        self.runtime = runtime
        self.session = session
        self.session_id = session.id
        self.root: RuntimeAgent = runtime.pins.get(session.id) or runtime.agent
        """The root agent of the build this actor runs (see `eve_runtime.engine.handoff`)."""
        self.base_agent: RuntimeAgent = runtime.agent_for(session, self.root)
        """The session's agent in that build, before dynamic tools."""
        self.agent: RuntimeAgent = self.base_agent
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
        self.emitter.observer = runtime.hooks.observer(session.id, lambda: self.agent, lambda: hook_context(self))
        self.runner: TurnRunner | None = None
        self.dynamic_tools = DynamicTools()
        """Tools `define_dynamic` resolvers returned (functions: never in a checkpoint)."""
        self._unsaved: list[Message] = []
        self._values: SessionValues | None = None
        """Messages of completed steps inside a checkpoint batch, saved with the batch's checkpoint."""
        self.inbox: list[DeliveryRecord] = []
        """Deliveries taken from the store and not yet handled, by arrival (see `eve_runtime.engine.routing`)."""
        self.deferred: set[str] = set()
        """Deliveries that wait for the parked turn to end (stale answers)."""
        self.seen: set[str] = set()
        """Every delivery taken into the inbox (one pushed again is not handled twice)."""
        self.queued_through = -1
        """The last delivery (by seq) accepted while the session was busy: work it finishes on its build."""
        self.wakeup = asyncio.Event()
        """Set when the inbox changed, for the loop that watches a running turn."""
        self.loaded = loaded
        """The session as the last actor here left it, reused instead of reading the store (see `actor_loop`)."""

    # -- the runtime's side ---------------------------------------------------------------------

    def push(self, delivery: DeliveryRecord) -> None:
        """Hand over a delivery that is already durable in the inbox."""
        if delivery.id in self.seen:
            return
        self.seen.add(delivery.id)
        self.inbox.append(delivery)
        if busy(self.state):
            self.queued_through = max(self.queued_through, delivery.seq)
        self.wakeup.set()

    def reroute(self) -> None:
        """Look at the inbox again: something in the running turn changed what a delivery means."""
        self.wakeup.set()

    def accepts_deliveries(self) -> bool:
        """Whether a delivery pushed now will be handled by this actor (it is not on its way out)."""
        return self.task is not None and not self.task.done() and not self.stopping and not self.closing

    # -- the loop --------------------------------------------------------------------------------

    async def run(self) -> None:
        """Load, recover, and work until the inbox is empty (or the runtime stops), holding the lease if any."""
        ownership = self.runtime.ownership
        if ownership is None:
            await work(self)
        else:
            await ownership.run(self, lambda: work(self))

    def keep_loaded_under(self, fence: int) -> None:
        """Keep the session as the last actor here left it only if no other process owned it since.

        That is when this process kept the lease (the same fencing token) or released it and took it
        back with nobody in between (the next token).
        """
        if self.loaded is not None and (self.loaded.fence is None or fence - self.loaded.fence not in (0, 1)):
            self.loaded = None

    def seen_deliveries(self) -> frozenset[str]:
        """The deliveries this actor took into its inbox (handled, deferred or queued)."""
        return frozenset(self.seen)

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
        return message_of(delivery)

    def model_text_of(self, delivery: DeliveryRecord) -> str:
        """What the model reads for a delivery."""
        return model_text_of(delivery)

    async def model_for_step(self, step_index: int) -> tuple[Model, str]:
        """The model of the turn's next call, and the id `step.started` reports."""
        return await model_for_step(self, step_index)

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
        self.emit("turn.cancelled", {"sequence": turn.sequence, "turnId": turn.turn_id})
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
    ) -> None:
        crashpoint("before-turn-end")
        if waiting:
            self.emit_waiting()
        report_turn_end(self, status, list(history), report)  # for a child's parent; saved with this checkpoint
        self.state.turn = None
        await self.commit(history=history, consumed=consumed)
        await notify_parent(self)

    # -- controls ----------------------------------------------------------------------------

    async def complete(self, status: SessionStatus, *, consumed: Sequence[str] = ()) -> None:
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

    def emit_waiting(self) -> None:
        """`session.waiting`: the session is idle until the next message."""
        self.emit(
            "session.waiting",
            {"continuationToken": self.session_id, "usage": self.state.usage.wire(), "wait": "next-user-message"},
        )

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
        replace_history: bool = False,
    ) -> None:
        """Commit pending events, new history and the checkpoint in one transaction.

        The messages are appended to the in-memory history too: pass each new message exactly once.
        With `replace_history`, `history` becomes the whole history instead (a compaction, a clear).
        """
        if replace_history:
            await self.emitter.flush()  # history attached earlier lands before it is replaced
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
