"""The session actor's loop: load the session, recover it, handle its deliveries until the inbox is empty.

The loop loads the checkpoint and the inbox (the history only when there is work, or reuses what
the last actor here left: a `LoadedSession`), settles the build the session runs, recovers what an
interrupted attempt left, then repeats: tell a parent what its child reported, run an open turn,
complete a session past its deadline, hand a delivery to the parked turn or the wait on tasks, or
to what handles it while idle (see `eve_runtime.engine.routing`). With nothing left to do it
schedules its next wake, keeps or releases the build, and leaves the session loaded for the next.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eve_runtime.checkpoint import SessionState
from eve_runtime.engine.dynamic_tools import restore_dynamic_tools
from eve_runtime.engine.handoff import busy, moves_for, settle_build
from eve_runtime.engine.parked import handle_while_parked
from eve_runtime.engine.recovery import recover_turn
from eve_runtime.engine.routing import handle_idle, run_turn
from eve_runtime.messages import Message, MessageAdapter
from eve_runtime.store.base import DeliveryRecord, SessionRecord
from eve_runtime.tasks.flow import handle_while_waiting, next_wake
from eve_runtime.tasks.relay import notify_parent

if TYPE_CHECKING:
    from eve_runtime.engine.actor import SessionActor

__all__ = ["LoadedSession", "work"]


@dataclass
class LoadedSession:
    """A session as an actor left it: what the next actor may reuse instead of reading the store."""

    session: SessionRecord
    state: SessionState
    history: list[Message]
    next_index: int
    fence: int | None = None
    """The lease's fencing token when the actor left it (many processes): valid while no other owner came between."""


async def work(actor: SessionActor) -> None:
    """Load, recover, and handle deliveries until the inbox is empty (or the runtime stops)."""
    try:
        if not await _load(actor):
            actor.closing = True
            if not busy(actor.state):
                actor.runtime.pins.release(actor.session_id)
            return
        # an idle session moves only for work that runs its code (not to be cancelled or reset)
        await settle_build(actor, move=busy(actor.state) or (bool(actor.inbox) and moves_for(actor.inbox[0])))
        if busy(actor.state) and actor.inbox:
            actor.queued_through = actor.inbox[-1].seq  # accepted while it worked: handled on this build
        await restore_dynamic_tools(actor)
        await recover_turn(actor)
        while not actor.stopping:
            if actor.state.outbox:
                await notify_parent(actor)
            turn = actor.state.turn
            if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks:
                await run_turn(actor)
                continue
            if turn is None:
                actor.deferred.clear()  # answers that were stale now reach the model as a new turn
                if _expired(actor):
                    await actor.complete("completed")
                    return
            elif turn.waiting_on_tasks and await handle_while_waiting(actor, None) == "resumed":
                continue  # a task timed out, or the wait did
            delivery = _take(actor, lambda d: d.id not in actor.deferred)
            if delivery is not None and turn is None and delivery.seq > actor.queued_through and moves_for(delivery):
                await settle_build(actor)  # the session is idle: a fresh message (answers, compact, clear) moves it
            if delivery is not None and turn is not None:
                if turn.awaiting is not None:
                    handled = await handle_while_parked(actor, delivery)
                else:
                    handled = await handle_while_waiting(actor, delivery)
                if handled == "deferred":
                    actor.deferred.add(delivery.id)
                    actor.inbox.append(delivery)
                    actor.inbox.sort(key=lambda d: d.seq)
                continue
            if delivery is None:
                wake = next_wake(actor)
                if wake is not None:
                    actor.runtime.schedule_wake(actor.session_id, wake)
                actor.closing = True  # from here on, the runtime starts a new actor for new deliveries
                if busy(actor.state):
                    actor.runtime.pins.keep(actor.session_id, actor.root)  # parked: it resumes on this build
                else:
                    actor.runtime.pins.release(actor.session_id)  # idle: its next delivery may move it
                actor.runtime.remember(
                    actor.session_id,
                    LoadedSession(
                        actor.session, actor.state, actor.history, actor.emitter.next_index, actor.emitter.fence
                    ),
                )
                return
            await handle_idle(actor, delivery)
            if busy(actor.state) and actor.inbox:  # what waits behind the work it started stays on this build
                actor.queued_through = max(actor.queued_through, actor.inbox[-1].seq)
            if actor.session.status != "active":
                return
    finally:
        if actor.session.status != "active":
            actor.runtime.pins.release(actor.session_id)
        await actor.emitter.close()


async def _load(actor: SessionActor) -> bool:
    """Read the checkpoint and the inbox; the history only when there is work. Returns whether there is."""
    loaded, actor.loaded = actor.loaded, None
    if loaded is not None:
        actor.state, actor.history, actor.emitter.next_index = loaded.state, loaded.history, loaded.next_index
    else:
        raw = await actor.store.load_checkpoint(actor.session_id)
        if raw is not None:
            actor.state = SessionState.model_validate_json(raw)
    for delivery in await actor.store.pending_deliveries(actor.session_id):
        if delivery.id not in actor.seen:
            actor.seen.add(delivery.id)
            actor.inbox.append(delivery)
    actor.inbox.sort(key=lambda d: d.seq)
    turn = actor.state.turn
    # parked on a person or on tasks: idle too, unless a deadline passed
    idle = turn is None or turn.awaiting is not None or turn.waiting_on_tasks
    wake = next_wake(actor)
    due = wake is not None and wake <= actor.runtime.options.clock()
    if idle and not actor.inbox and not _expired(actor) and not due and not actor.state.outbox:
        if wake is not None:
            actor.runtime.schedule_wake(actor.session_id, wake)
        if loaded is not None:
            actor.runtime.remember(actor.session_id, dataclasses.replace(loaded, fence=actor.emitter.fence))
        return False
    if loaded is None:
        stored = await actor.store.load_history(actor.session_id)
        actor.history = MessageAdapter.validate_json("[" + ",".join(stored) + "]")
        actor.emitter.next_index = await actor.store.event_count(actor.session_id)
    if actor.state.turn is not None:
        actor.emitter.delivery_ids = tuple(actor.state.turn.delivery_ids)
    return True


def _take(actor: SessionActor, predicate: Callable[[DeliveryRecord], bool]) -> DeliveryRecord | None:
    for index, delivery in enumerate(actor.inbox):
        if predicate(delivery):
            return actor.inbox.pop(index)
    return None


def _expired(actor: SessionActor) -> bool:
    deadline = actor.session.deadline
    return deadline is not None and actor.runtime.options.clock() >= deadline and actor.session.status == "active"
