"""Continue-or-create for a channel address, and replacement sessions for stranded ones.

A channel address (a Slack thread, a phone number, ...) is held by one session at a time. A
channel's message for an address goes through [`AddressSessions.continue_or_create`]: to the
session that holds the address, or to a new session when there is none or it has ended. When
the holder is *stranded* (written by another eve version, see `eve_runtime.availability`), the
message ends it without running any of its code (a `Reset stranded session` warning with
trigger `message`) and starts one fresh session at the address:

- the fresh session names the one it replaced: `session.started.data.predecessor` is
  `{"sessionId": <old id>}`, and `ctx.session.predecessor` (tools, hooks, dynamic resolvers) is
  a [`Predecessor`][eve_runtime.context.Predecessor];
- it starts with no history of the old one; a dynamic user-role instruction may read the old
  conversation with `sessions.attach(...)` and `transcript_of(...)` (see the README);
- concurrent messages for the stranded session all reach the same one fresh session (it is
  created once, by an operation id derived from the old session's id);
- a send that carries answers (`inputResponses`) raises `SessionStranded` and leaves the
  stranded session in place: the fresh session has no request for those answers.

Messages addressed by session id (the eve HTTP channel) never get here: they answer 409
`session_stranded`. The channel keeps its address-to-session binding itself and rebinds the
address to the session this returns.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eve_runtime.availability import SessionStranded, retire_stranded
from eve_runtime.store.base import DeliveryKind, DeliveryRecord, SessionNotActive, SessionRecord

if TYPE_CHECKING:
    from eve_runtime.runtime import Runtime

__all__ = ["AddressSessions", "Continued", "REPLACEMENT_OPERATION"]

REPLACEMENT_OPERATION = "replace:{session_id}"
"""The create-once key of the one fresh session that replaces a stranded session."""


@dataclass(frozen=True)
class Continued:
    """Where a channel message went."""

    session: SessionRecord
    """The session that holds the address now (bind the address to its id)."""
    delivery_id: str | None
    """The message's delivery id (None when it became the first message of a new session)."""
    created: bool
    """Whether a new session was started for the message."""
    replaced: str | None = None
    """The stranded session the new one replaced, if it did."""


class AddressSessions:
    """Continue-or-create of a runtime's sessions for channel addresses (see the module docstring)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._locks: dict[str, asyncio.Lock] = {}
        self._replacements: dict[str, str] = {}
        """Stranded session id -> its replacement's id (for messages that raced the replacement)."""

    async def continue_or_create(
        self,
        session_id: str | None,
        kind: DeliveryKind,
        payload: dict[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> Continued:
        """Deliver a channel message to the address's session (`session_id`, None for none yet).

        Raises:
            SessionStranded: The holder is stranded and the delivery carries answers.
            SessionDormant: The holder belongs to an earlier `eve dev` run.
        """
        if session_id is None:
            return await self._create(kind, payload, idempotency_key)
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                return await self._continue(session_id, kind, payload, idempotency_key)
        finally:
            if not lock.locked():
                self._locks.pop(session_id, None)

    async def _continue(
        self, session_id: str, kind: DeliveryKind, payload: dict[str, Any], idempotency_key: str | None
    ) -> Continued:
        runtime = self.runtime
        record = await runtime.store.get_session(session_id)
        replacement = self._replacements.get(session_id)
        if replacement is not None and (record is None or record.status != "active"):
            return await self._continue(replacement, kind, payload, idempotency_key)
        if record is None or record.status != "active":
            return await self._create(kind, payload, idempotency_key)
        if runtime.availability.stranded(record):
            if kind != "message":
                raise SessionStranded(record.eve_version)
            return await self._replace(record, payload, idempotency_key)
        try:
            delivery = await runtime.deliver(session_id, kind, payload, idempotency_key=idempotency_key)
        except SessionNotActive:  # it ended meanwhile: the address is free
            return await self._create(kind, payload, idempotency_key)
        return Continued(session=record, delivery_id=delivery.id, created=False)

    async def _create(self, kind: DeliveryKind, payload: dict[str, Any], idempotency_key: str | None) -> Continued:
        if kind != "message":
            raise SessionNotActive("a new session starts only with a message")
        session = await self.runtime.create_session(message=payload, idempotency_key=idempotency_key)
        return Continued(session=session, delivery_id=None, created=True)

    async def _replace(
        self, stranded: SessionRecord, payload: dict[str, Any], idempotency_key: str | None
    ) -> Continued:
        runtime = self.runtime
        first = {**payload, "predecessor": {"sessionId": stranded.id}}
        operation = REPLACEMENT_OPERATION.format(session_id=stranded.id)
        session, created = await runtime.open_session(
            message=first, operation_id=operation, idempotency_key=idempotency_key
        )
        self._replacements[stranded.id] = session.id
        delivery: DeliveryRecord | None = None
        if not created:  # another process replaced it first: this message is an ordinary delivery to it
            delivery = await runtime.deliver(session.id, "message", payload, idempotency_key=idempotency_key)
        current = await runtime.store.get_session(stranded.id)
        if current is not None and current.status == "active":
            await retire_stranded(runtime.store, current, "message")
        return Continued(
            session=session,
            delivery_id=delivery.id if delivery is not None else None,
            created=created,
            replaced=stranded.id,
        )
