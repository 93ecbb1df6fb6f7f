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
import logging

from eve_runtime.engine.clearing import clear_context
from eve_runtime.engine.compaction import compact_on_request
from eve_runtime.engine.ports import ActorLoop
from eve_runtime.engine.turn import TurnRunner
from eve_runtime.engine.turn_start import start_turn
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.tasks.delegation import cancel_tasks, settle_task, working_tasks
from eve_runtime.tasks.relay import relayed_answers, report_reply

logger = logging.getLogger("eve.actor")

__all__ = ["handle_idle", "run_turn"]


async def run_turn(actor: ActorLoop) -> None:
    """Run the open turn to its end (or to a park), routing the deliveries that act on it meanwhile."""
    runner = TurnRunner(actor)
    turn_task = asyncio.create_task(runner.run(), name=f"eve-turn-{actor.session_id}")
    try:
        while not turn_task.done():
            actor.inbox.route(lambda delivery: _to_turn(actor, runner, delivery))
            waiter = actor.inbox.watch()
            await asyncio.wait({turn_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
        await turn_task
    finally:
        if not turn_task.done():
            turn_task.cancel()
        # Messages that reached the turn too late to join it start the next turns, in order;
        # task reports it did not absorb go to the wait (or the idle session).
        actor.inbox.give_back([*runner.steering, *runner.task_results])
    turn = actor.state.turn
    if turn is not None and turn.awaiting is None and not turn.waiting_on_tasks and not actor.stopping:
        raise RuntimeError("the turn runner returned with the turn still open")


def _to_turn(actor: ActorLoop, runner: TurnRunner, delivery: DeliveryRecord) -> bool:
    """Hand a delivery that acts on the running turn to it; whether it took the delivery.

    It takes answers to a running tool's question, input for the served tool, task reports,
    steering messages and cancels (a reset cancels the turn, and then waits for it to end).
    """
    turn = actor.state.turn
    if delivery.kind in ("responses", "message") and runner.questions.answer(delivery):
        return True  # it answered a running tool's question
    if runner.serve_inbox.offer(delivery):
        return True  # more input for the served tool this session runs
    if delivery.kind == "task" or (delivery.kind == "responses" and relayed_answers(actor, delivery)):
        runner.task_results.append(delivery)  # applied at the next step boundary
        return True
    steers = delivery.payload.get("turnPolicy", "steer") == "steer"
    if delivery.kind == "message" and steers and turn is not None and turn.serves(delivery.payload):
        runner.steer(delivery)
        return True  # another person's message waits for the turn to end
    if delivery.kind == "cancel" and turn is not None:
        target = delivery.payload.get("turnId")
        if target is None or target == turn.turn_id:
            runner.cancel(delivery)
            return True
        return False  # names another turn: consumed as a no-op once idle
    if delivery.kind == "reset":
        runner.cancel(None)
    return False


async def discard_sandbox(actor: ActorLoop) -> None:
    """Remove the sandbox a session owns (before its end is recorded: after a crash the reset runs again)."""
    try:
        await actor.host.sandboxes.discard(actor.session_id)
    except Exception:  # a workspace that cannot be removed must not keep the session alive
        logger.exception("session %s: its sandbox could not be removed", actor.session_id)


async def handle_idle(actor: ActorLoop, delivery: DeliveryRecord) -> None:
    """Handle one delivery while no turn is open."""
    if delivery.kind == "message" and "serveInput" in delivery.payload:  # for a served tool that returned
        call_id = str(delivery.payload["serveInput"].get("callId"))
        await report_reply(actor, call_id, "The task has ended: its tool returned.", ended=True)
        await actor.commit(consumed=[delivery.id])
    elif delivery.kind == "task":  # a report after its turn ended (a task that was cancelled): nothing waits
        message = settle_task(actor, delivery.payload)
        await actor.commit(history=[message] if message is not None else [], consumed=[delivery.id])
    elif delivery.kind in ("message", "responses"):
        actor.use_agent(actor.base_agent)  # dynamic tools are resolved again for the turn
        await start_turn(actor, delivery)
    elif delivery.kind == "reset":
        actor.own_events(())
        await actor.continue_deliveries()  # `session.completed` carries the last turn's delivery ids, as in eve
        await discard_sandbox(actor)  # retired for good: nothing can reach its workspace again
        await actor.complete("reset", consumed=[delivery.id])
        actor.host.acknowledge(delivery.id)
    elif delivery.kind == "compact":
        await compact_on_request(actor, delivery)
    elif delivery.kind == "clear":
        await clear_context(actor, delivery)
    elif delivery.kind == "cancel" and (stopping := _cancelled_tasks(actor, delivery)):
        # between turns a cancel stops the tasks still working (eve: `turn_cancelled`, as a cancelled turn's)
        await actor.continue_deliveries()
        await cancel_tasks(actor, reason="turn_cancelled", task_ids=stopping)
        await actor.commit(consumed=[delivery.id])
    else:
        await actor.commit(consumed=[delivery.id])  # a cancel with nothing to cancel, and the like


def _cancelled_tasks(actor: ActorLoop, delivery: DeliveryRecord) -> list[str]:
    """The working tasks a cancel between turns stops: all, or those of the turn it names."""
    turn_id = delivery.payload.get("turnId")
    return [t.task_id for t in working_tasks(actor.state) if turn_id is None or t.turn_id == turn_id]
