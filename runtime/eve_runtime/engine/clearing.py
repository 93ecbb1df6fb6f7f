"""Clear: a session's model-message history emptied in place (`POST .../clear`).

What goes: every message of the history (including user-role instructions, static ones that
opened the session and dynamic ones resolved for it, and a compaction summary). What stays: the
session's identity and stream, system-role instructions, tools and skills, `define_state`
values, usage totals and limits, tasks. Instruction resolvers do not run again.

A clear applies when the session is idle; a turn parked on a person is ended first: its open
requests are withdrawn (`input.resolved` with `cancelled`) and the turn is cancelled. Then
`context.cleared` (carrying the next turn's id, as eve does) and `session.waiting`, in the same
transaction as the emptied history, so no request remains open once the session waits again.
"""

from __future__ import annotations

from eve_runtime.engine.ports import Session
from eve_runtime.events.catalog import TurnAt
from eve_runtime.events.turns import ContextCleared
from eve_runtime.store.base import DeliveryRecord

__all__ = ["clear_context"]


async def clear_context(session: Session, delivery: DeliveryRecord) -> None:
    """Empty the idle session's history: `context.cleared`, then `session.waiting`."""
    await session.continue_deliveries()
    state = session.state
    state.dynamic = {slug: value for slug, value in state.dynamic.items() if value is None or value.role == "system"}
    state.summary = None
    state.user_instructions = {}  # history is empty: user-role instructions are added again when they resolve
    state.compacting = False
    state.tasks_note = None  # working tasks are announced to the model again
    sequence = state.next_sequence
    session.emit(ContextCleared(TurnAt(sequence, f"turn_{sequence}"), session.session_id))
    session.emit_waiting()
    await session.commit(history=[], replace_history=True, consumed=[delivery.id])
