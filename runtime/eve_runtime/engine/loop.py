"""The session actor's loop: load the session, recover it, handle its deliveries until the inbox is empty.

The loop loads the checkpoint and the inbox (the history only when there is work, or reuses what
the last actor here left: a `LoadedSession`), settles the build the session runs, recovers what an
interrupted attempt left, then repeats: tell a parent what its child reported, run an open turn,
complete a session past its deadline, hand a delivery to the parked turn or the wait on tasks, or
to what handles it while idle (see `eve_runtime.engine.routing`). With nothing left to do it
schedules its next wake, keeps or releases the build, and leaves the session loaded for the next;
a schedule's task-mode session, whose output nobody reads and to which nobody writes, completes
instead (also when a crash came between its turn's end and its completion).
"""

from __future__ import annotations

import dataclasses

from eve_runtime.engine.dynamic_tools import restore_dynamic_tools
from eve_runtime.engine.handoff import busy, moves_for, settle_build
from eve_runtime.engine.parked import handle_while_parked
from eve_runtime.engine.ports import ActorLoop
from eve_runtime.engine.recovery import recover_turn
from eve_runtime.engine.routing import handle_idle, run_turn
from eve_runtime.engine.turn_start import reopen_turn
from eve_runtime.tasks.flow import handle_while_waiting, next_wake
from eve_runtime.tasks.relay import notify_parent

__all__ = ["work"]


async def work(actor: ActorLoop) -> None:
    """Load, recover, and handle deliveries until the inbox is empty (or the runtime stops)."""
    host = actor.host
    inbox = actor.inbox
    try:
        if not await _load(actor):
            actor.stop_accepting()
            if not busy(actor.state):
                host.pins.release(actor.session_id)
            return
        # an idle session moves only for work that runs its code (not to be cancelled or reset)
        first = inbox.first()
        if not await settle_build(actor, move=busy(actor.state) or (first is not None and moves_for(first))):
            actor.stop_accepting()  # no build here can run it: its deliveries stay in the inbox
            return
        if busy(actor.state):
            inbox.queue_all()  # accepted while it worked: handled on this build
        await restore_dynamic_tools(actor)
        await recover_turn(actor)
        await reopen_turn(actor)
        while not actor.stopping:
            if actor.state.outbox:
                await notify_parent(actor)
            turn = actor.state.turn
            if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks:
                await run_turn(actor)
                if actor.session.status != "active":
                    return  # a failure ended the session (`session.failed`)
                continue
            if turn is None:
                inbox.release_deferred()  # answers that were stale now reach the model as a new turn
                if _expired(actor):
                    await actor.complete("completed")
                    return
            elif turn.waiting_on_tasks and await handle_while_waiting(actor, None) == "resumed":
                continue  # a task timed out, or the wait did
            delivery = inbox.take_next()
            if delivery is not None and turn is None and not inbox.queued(delivery) and moves_for(delivery):
                if not await settle_build(actor):  # idle: a fresh message (answers, compact, clear) moves it
                    actor.stop_accepting()  # no build here can run it: the delivery stays in the inbox
                    return
            if delivery is not None and turn is not None:
                if turn.awaiting is not None:
                    handled = await handle_while_parked(actor, delivery)
                else:
                    handled = await handle_while_waiting(actor, delivery)
                if handled == "deferred":
                    inbox.defer(delivery)
                continue
            if delivery is None and _finished(actor):
                await actor.complete("completed")
                return
            if delivery is None:
                wake = next_wake(actor)
                if wake is not None:
                    host.schedule_wake(actor.session_id, wake)
                actor.stop_accepting()  # from here on, the runtime starts a new actor for new deliveries
                if busy(actor.state):
                    host.pins.keep(actor.session_id, actor.root)  # parked: it resumes on this build
                else:
                    host.pins.release(actor.session_id)  # idle: its next delivery may move it
                host.remember(actor.session_id, actor.loaded())
                return
            await handle_idle(actor, delivery)
            if busy(actor.state):  # what waits behind the work it started stays on this build
                inbox.queue_all()
            if actor.session.status != "active":
                return
    finally:
        if actor.session.status != "active":
            host.pins.release(actor.session_id)
        await actor.close()


async def _load(actor: ActorLoop) -> bool:
    """Read the checkpoint and the inbox; the history only when there is work. Returns whether there is."""
    host = actor.host
    loaded = actor.take_loaded()
    if loaded is not None:
        actor.resume(loaded)
    else:
        await actor.load(history=False)
    if not actor.inbox.current:  # else the enqueue that woke it read them, with the lease held since
        actor.inbox.take_stored(await host.store.pending_deliveries(actor.session_id))
    turn = actor.state.turn
    # parked on a person or on tasks: idle too, unless a deadline passed
    idle = turn is None or turn.awaiting is not None or turn.waiting_on_tasks
    wake = next_wake(actor)
    due = wake is not None and wake <= host.now()
    if idle and not actor.inbox and not _expired(actor) and not due and not actor.state.outbox and not _finished(actor):
        if wake is not None:
            host.schedule_wake(actor.session_id, wake)
        if loaded is not None:
            host.remember(actor.session_id, dataclasses.replace(loaded, fence=actor.fence))
        return False
    if loaded is None:
        await actor.load(history=True)
    return True


def _expired(actor: ActorLoop) -> bool:
    deadline = actor.session.deadline
    return deadline is not None and actor.host.now() >= deadline and actor.session.status == "active"


def _finished(actor: ActorLoop) -> bool:
    """A schedule's task-mode session whose work is done (it ran its prompt; nothing more comes)."""
    state = actor.state
    return state.task_mode and state.schedule is not None and state.started and not busy(state)
