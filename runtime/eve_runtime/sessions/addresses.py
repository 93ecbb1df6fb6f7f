"""Sessions by channel address: continue-or-create, aliases, controls.

A channel address (`<channel>:<token>`: a Slack thread, a webhook's thread id, ...) is held by at
most one active session, durably, in the store (see `eve_runtime.store.base`). A channel's
message for an address goes through [`AddressSessions.continue_or_create`]: to the session that
holds the address, or to a new session that claims it in the same transaction that creates it.
Two first messages racing for one address therefore start one session, and the loser's message
is delivered to the winner. An idempotency key makes a retried send a no-op: the retry finds the
session the first send created and the key already in its inbox, and gets the first delivery's id.

When the holder is *stranded* (written by another eve version), a message replaces it with one
fresh session (see `eve_runtime.sessions.replacement`); answers for it raise `SessionStranded`. Controls by
address (cancel, compact, clear, reset) never create a session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.ids import new_delivery_id
from eve_runtime.sessions.availability import Availability, SessionStranded
from eve_runtime.sessions.replacement import RecordHost, replace_stranded
from eve_runtime.store.base import (
    AddressInUse,
    DeliveryKind,
    NewDelivery,
    SessionNotActive,
    SessionRecord,
    StoreError,
)

__all__ = ["AddressContended", "AddressHost", "AddressSessions", "Continued", "SeedState"]

SeedState = Callable[[], Awaitable[str | None]]
"""Computes the encoded channel state a session created for a message starts with."""

_ATTEMPTS = 8
"""Holder changes one delivery may see (each means the holder ended meanwhile) before giving up."""


class AddressContended(StoreError):
    """The session holding an address kept changing while a message was delivered (try again)."""


@dataclass(frozen=True)
class Continued:
    """Where a channel message went."""

    session: SessionRecord
    """The session that holds the address now."""
    delivery_id: str
    """The message's delivery id (the first delivery's, for a repeated idempotency key)."""
    created: bool
    """Whether a new session was started with the message."""
    replaced: str | None = None
    """The stranded session the new one replaced, if it did."""
    duplicate: bool = False
    """Whether the message repeated an earlier idempotency key (nothing new was delivered)."""


class AddressHost(RecordHost, Protocol):
    """Sessions by channel address: continue or create, and the controls by address."""

    @property
    def availability(self) -> Availability: ...

    @property
    def hooks(self) -> HookDispatcher: ...

    async def cancel(self, session_id: str, turn_id: str | None = None) -> bool: ...

    async def control(self, session_id: str, kind: Literal["compact", "clear"]) -> bool: ...

    async def reset(self, session_id: str, reason: str | None = None, *, timeout: float | None = None) -> bool: ...


class AddressSessions:
    """A runtime's sessions by channel address (see the module docstring)."""

    def __init__(self, runtime: AddressHost) -> None:
        self.runtime = runtime

    async def holder(self, address: str) -> SessionRecord | None:
        """The active session holding the address, if any."""
        session_id = await self.runtime.store.address_holder(address)
        if session_id is None:
            return None
        record = await self.runtime.store.get_session(session_id)
        return record if record is not None and record.status == "active" else None

    async def continue_or_create(
        self,
        address: str,
        kind: DeliveryKind,
        payload: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        channel_state: SeedState | None = None,
    ) -> Continued:
        """Deliver a channel message to the address's session, starting one when there is none.

        Only a message starts a session; other deliveries (answers) need a holder. A session it
        starts holds what `channel_state()` returns (see `eve_runtime.engine.channel_state`) from its
        creation; it is called only when a session is about to be created.

        Raises:
            SessionNotActive: No session holds the address and the delivery is not a message.
            SessionStranded: The holder is stranded and the delivery carries answers.
            SessionDormant: The holder belongs to an earlier `eve dev` run.
            AddressContended: The holder kept changing (ended, replaced) while delivering.
        """
        store = self.runtime.store
        for _attempt in range(_ATTEMPTS):
            holder_id = await store.address_holder(address)
            if holder_id is None:
                if kind != "message":
                    raise SessionNotActive("No session holds this address, and only a message starts one.")
                first = NewDelivery(new_delivery_id(), "message", payload, idempotency_key)
                seeded = await channel_state() if channel_state is not None else None
                session, created = await store.create_at_address(
                    self.runtime.new_record(), first, address, channel_state=seeded
                )
                if created:
                    self.runtime.look_after(session)
                    return Continued(session=session, delivery_id=first.id, created=True)
                holder_id = session.id  # lost the race: the message goes to the winner
            record = await store.get_session(holder_id)
            if record is None or record.status != "active":
                continue  # it ended meanwhile: the address is free again
            if self.runtime.availability.stranded(record):
                if kind != "message":
                    raise SessionStranded(record.eve_version)
                seeded = await channel_state() if channel_state is not None else None
                replaced = await replace_stranded(self.runtime, record, address, payload, idempotency_key, seeded)
                return Continued(
                    replaced.session,
                    replaced.delivery_id,
                    replaced.created,
                    replaced=record.id,
                    duplicate=replaced.duplicate,
                )
            try:
                accepted = await self.runtime.accept(holder_id, kind, payload, idempotency_key=idempotency_key)
            except SessionNotActive:
                continue
            return Continued(record, accepted.delivery.id, created=False, duplicate=accepted.duplicate)
        raise AddressContended(f"The session holding {address!r} kept changing; try again.")

    async def alias(self, session_id: str, address: str) -> None:
        """Add another address to an active session (repeating one it holds is a no-op).

        Raises:
            AddressInUse: Another active session holds the address.
            SessionNotActive: The session has ended.
        """
        holder = await self.runtime.store.claim_address(session_id, address)
        if holder != session_id:
            raise AddressInUse(address, holder)
        self.runtime.hooks.channels_changed(session_id)

    async def cancel(self, address: str, turn_id: str | None = None) -> str | None:
        """Cancel the running turn of the address's session; its id, or None when no session holds it."""
        holder = await self.holder(address)
        if holder is None or not await self.runtime.cancel(holder.id, turn_id):
            return None
        return holder.id

    async def control(self, address: str, kind: Literal["compact", "clear"]) -> str | None:
        """Queue a compact or a clear for the address's session; its id, or None when no session holds it.

        As by session id (`Runtime.control`): a stranded holder has nothing to compact (None) and
        refuses a clear.

        Raises:
            SessionStranded: A clear for a stranded holder.
            SessionDormant: A clear for a holder of an earlier `eve dev` run.
        """
        holder = await self.holder(address)
        if holder is None or not await self.runtime.control(holder.id, kind):
            return None
        return holder.id

    async def reset(self, address: str, reason: str | None = None) -> str | None:
        """End the address's session for good (its addresses are free again); its id, or None when none held it."""
        holder = await self.holder(address)
        if holder is None or not await self.runtime.reset(holder.id, reason):
            return None
        return holder.id
