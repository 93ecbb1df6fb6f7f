"""Where the actor loop sends each delivery: into the running turn, or to what handles it when idle.

While a turn runs, the actor watches its inbox and routes what acts on the turn: answers to a
running tool's question, input for the served tool the session runs, task reports (applied at the
next step boundary), steering messages, cancels and resets (which cancel it). What reached the
turn too late to join it goes back to the inbox, in order. An idle session handles one delivery
at a time: a message (or answers) opens a turn; a reset ends the session; a compact or a clear
rewrites the history; a late task report or served-tool input is settled and consumed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from eve_runtime.engine.clearing import clear_context
from eve_runtime.engine.compaction import compact_on_request
from eve_runtime.engine.turn import TurnRunner
from eve_runtime.engine.turn_start import start_turn
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.tasks.delegation import settle_task
from eve_runtime.tasks.relay import relayed_answers, report_reply

if TYPE_CHECKING:
    from eve_runtime.engine.actor import SessionActor

__all__ = ["handle_idle", "run_turn"]


async def run_turn(actor: SessionActor) -> None:
    """Run the open turn to its end (or to a park), routing the deliveries that act on it meanwhile."""
    runner = TurnRunner(actor)
    actor.runner = runner
    turn_task = asyncio.create_task(runner.run(), name=f"eve-turn-{actor.session_id}")
    try:
        while not turn_task.done():
            _route_to_turn(actor, runner)
            actor.wakeup.clear()
            waiter = asyncio.create_task(actor.wakeup.wait())
            await asyncio.wait({turn_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
        await turn_task
    finally:
        if not turn_task.done():
            turn_task.cancel()
        actor.runner = None
        # Messages that reached the turn too late to join it start the next turns, in order;
        # task reports it did not absorb go to the wait (or the idle session).
        actor.inbox = sorted([*runner.steering, *runner.task_results, *actor.inbox], key=lambda d: d.seq)
    turn = actor.state.turn
    if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks and not actor.stopping:
        raise RuntimeError("the turn runner returned with the turn still open")


def _route_to_turn(actor: SessionActor, runner: TurnRunner) -> None:
    """Deliveries that act on the running turn: steering messages and cancels (and resets)."""
    turn = actor.state.turn
    keep: list[DeliveryRecord] = []
    for delivery in actor.inbox:
        if delivery.id in actor.deferred:
            keep.append(delivery)  # it waits for this turn to end
        elif delivery.kind in ("responses", "message") and runner.questions.answer(delivery):
            continue  # it answered a running tool's question
        elif runner.serve_inbox.offer(delivery):
            continue  # more input for the served tool this session runs
        elif delivery.kind == "task" or (delivery.kind == "responses" and relayed_answers(actor, delivery)):
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
    actor.inbox = keep


async def handle_idle(actor: SessionActor, delivery: DeliveryRecord) -> None:
    """Handle one delivery while no turn is open."""
    if delivery.kind == "message" and "serveInput" in delivery.payload:  # for a served tool that returned
        call_id = str(delivery.payload["serveInput"].get("callId"))
        await report_reply(actor, call_id, "The task has ended: its tool returned.", ended=True)
        await actor.commit(consumed=[delivery.id])
    elif delivery.kind == "task":  # a report after its turn ended (a task that was cancelled): nothing waits
        message = settle_task(actor, delivery.payload)
        await actor.commit(history=[message] if message is not None else [], consumed=[delivery.id])
    elif delivery.kind in ("message", "responses"):
        actor.agent = actor.base_agent  # dynamic tools are resolved again for the turn
        await start_turn(actor, delivery)
    elif delivery.kind == "reset":
        actor.emitter.delivery_ids = ()
        await actor.complete("reset", consumed=[delivery.id])
        actor.runtime.acknowledge(delivery.id)
    elif delivery.kind == "compact":
        await compact_on_request(actor, delivery)
    elif delivery.kind == "clear":
        await clear_context(actor, delivery)
    else:
        await actor.commit(consumed=[delivery.id])  # a cancel with nothing to cancel, and the like
