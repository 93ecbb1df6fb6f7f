"""Replacement of stranded holders: a channel message for a stranded session starts one fresh session.

When the session holding a channel address is *stranded* (written by another eve version, see
`eve_runtime.sessions.availability`), a message for the address ends it without running any of its code
(a `Reset stranded session` warning with trigger `message`) and starts one fresh session at the
address ([`replace_stranded`], called by `eve_runtime.sessions.addresses.AddressSessions`):

- the fresh session names the one it replaced: `session.started.data.predecessor` is
  `{"sessionId": <old id>}`, and `ctx.session.predecessor` (tools, hooks, dynamic resolvers) is
  a [`Predecessor`][eve_runtime.authoring.context.Predecessor];
- it starts with no history of the old one; a dynamic user-role instruction may read the old
  conversation with `sessions.attach(...)` and `transcript_of(...)` (see docs/skills-schedules-hooks.md);
- concurrent messages for the stranded session all reach the same one fresh session (it is
  created once, by an operation id derived from the old session's id, and takes the address
  from the old session in the same transaction), and the old session is retired once;
- a send that carries answers (`inputResponses`) raises `SessionStranded` and leaves the
  stranded session in place: the fresh session has no request for those answers.

Messages addressed by session id (the eve HTTP channel) never get here: they answer 409
`session_stranded`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from eve_runtime.ids import new_delivery_id
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.availability import retire_once
from eve_runtime.store.base import DeliveryKind, EnqueueResult, NewDelivery, SessionRecord, Store

__all__ = ["REPLACEMENT_OPERATION", "RecordHost", "Replacement", "replace_stranded"]

REPLACEMENT_OPERATION = "replace:{session_id}"
"""The create-once key of the one fresh session that replaces a stranded session."""


@dataclass(frozen=True)
class Replacement:
    """Where a message for a stranded holder went."""

    session: SessionRecord
    """The fresh session that holds the address now."""
    delivery_id: str
    created: bool
    """Whether this message created it (False: a concurrent one did)."""
    duplicate: bool = False
    """Whether the message repeated an earlier idempotency key."""


class RecordHost(Protocol):
    """Creating sessions in the store and taking them on (replacements of stranded sessions)."""

    @property
    def store(self) -> Store: ...

    @property
    def retiring(self) -> KeyedLocks:
        """Per-session locks under which stranded sessions are retired."""
        ...

    def new_record(self, *, operation_id: str | None = None, agent: RuntimeAgent | None = None) -> SessionRecord:
        """A session record for the runtime's agent (or `agent`), with its deadline and build."""
        ...

    def look_after(self, session: SessionRecord) -> None:
        """Take on a session just created in the store with its first message."""
        ...

    async def accept(
        self, session_id: str, kind: DeliveryKind, payload: dict[str, Any], *, idempotency_key: str | None = None
    ) -> EnqueueResult:
        """Accept a delivery durably and wake the session."""
        ...


async def replace_stranded(
    runtime: RecordHost,
    stranded: SessionRecord,
    address: str,
    payload: dict[str, Any],
    idempotency_key: str | None,
    channel_state: str | None,
) -> Replacement:
    """Deliver a message for `address` to the one fresh session replacing `stranded`, and retire it.

    A session this call creates starts with `channel_state` (see `eve_runtime.engine.channel_state`).
    """
    first = NewDelivery(
        new_delivery_id(), "message", {**payload, "predecessor": {"sessionId": stranded.id}}, idempotency_key
    )
    record = runtime.new_record(operation_id=REPLACEMENT_OPERATION.format(session_id=stranded.id))
    session, created = await runtime.store.create_at_address(
        record, first, address, replacing=stranded.id, channel_state=channel_state
    )
    delivery_id, duplicate = first.id, False
    if created:
        runtime.look_after(session)
    else:  # another message replaced it first (or the address moved on): an ordinary delivery there
        accepted = await runtime.accept(session.id, "message", payload, idempotency_key=idempotency_key)
        delivery_id, duplicate = accepted.delivery.id, accepted.duplicate
    await retire_once(runtime.store, runtime.retiring, stranded.id, "message")  # once, however many race
    return Replacement(session, delivery_id, created, duplicate)
