"""Controls on a session: cancelling its turn, compacting or clearing it, resetting it for good.

Each is a delivery queued durably like a message; the actor applies it in order. A reset also
waits (a bounded time) until the session has ended: the actor acknowledges it here, and when
another process runs the session, its status in the store tells. A stranded session (written by
another eve version) is retired directly; a dormant one is woken just for its reset.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal, Protocol

from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.sessions.availability import Availability, SessionDormant, SessionStranded, retire_once
from eve_runtime.store.base import DeliveryKind, DeliveryRecord, SessionNotActive, Store

__all__ = ["Acknowledgements", "ControlHost", "cancel", "control", "reset"]

logger = logging.getLogger("eve.runtime")


class Acknowledgements:
    """Deliveries someone waits for (a reset), each resolved once the session handled it."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[None]] = {}

    def expect(self, delivery_id: str) -> asyncio.Future[None]:
        """The future `acknowledge` resolves for the delivery (created on first call)."""
        future = self._futures.get(delivery_id)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._futures[delivery_id] = future
        return future

    def acknowledge(self, delivery_id: str) -> None:
        """The delivery was handled: whoever waits for it goes on."""
        future = self._futures.pop(delivery_id, None)
        if future is not None and not future.done():
            future.set_result(None)

    def forget(self, delivery_id: str) -> None:
        """Nobody waits for the delivery any more."""
        self._futures.pop(delivery_id, None)

    def cancel_all(self) -> None:
        """The runtime stops: every wait ends."""
        for future in self._futures.values():
            if not future.done():
                future.cancel()


class ControlHost(Protocol):
    """The runtime, as cancel, compact, clear and reset use it."""

    @property
    def store(self) -> Store: ...

    @property
    def options(self) -> RuntimeOptions: ...

    @property
    def availability(self) -> Availability: ...

    @property
    def retiring(self) -> KeyedLocks: ...

    @property
    def acknowledgements(self) -> Acknowledgements: ...

    def acknowledge(self, delivery_id: str) -> None: ...

    async def deliver(
        self, session_id: str, kind: DeliveryKind, payload: dict[str, Any], *, idempotency_key: str | None = None
    ) -> DeliveryRecord: ...


async def cancel(runtime: ControlHost, session_id: str, turn_id: str | None = None) -> bool:
    """Queue a cancel; False when the session is unknown or no longer active (`no_active_turn`)."""
    try:
        await runtime.deliver(session_id, "cancel", {"turnId": turn_id} if turn_id is not None else {})
    except (SessionNotActive, SessionDormant, SessionStranded):
        return False  # nothing of it runs here
    return True


async def control(runtime: ControlHost, session_id: str, kind: Literal["compact", "clear"]) -> bool:
    """Queue a compact or a clear; False when the session is unknown or no longer active.

    A stranded or dormant session has nothing to compact here (False) and refuses a clear.

    Raises:
        SessionDormant, SessionStranded: A clear for a session this process does not run.
    """
    try:
        await runtime.deliver(session_id, kind, {})
    except SessionNotActive:
        return False
    except (SessionDormant, SessionStranded):
        if kind == "compact":
            return False
        raise
    return True


async def reset(
    runtime: ControlHost, session_id: str, reason: str | None = None, *, timeout: float | None = None
) -> bool:
    """Retire a session for good and wait until it is done; False when there was no active session.

    The wait lasts at most `timeout` seconds (`RuntimeOptions.reset_timeout` by default): the
    reset is durably queued by then and will be applied, so it returns True (logged). A dormant
    session can be reset too: it is woken just for that.
    """
    store = runtime.store
    record = await store.get_session(session_id)
    if record is not None and record.status == "active" and runtime.availability.stranded(record):
        await retire_once(store, runtime.retiring, session_id, "reset")  # lost to a concurrent retire: done too
        return True
    if record is not None:
        runtime.availability.wake_for_reset(record)
    try:
        delivery = await runtime.deliver(session_id, "reset", {"reason": reason} if reason else {})
    except SessionNotActive:
        return False
    future = runtime.acknowledgements.expect(delivery.id)
    try:
        session = await store.get_session(session_id)
        if session is not None and session.status != "active":
            runtime.acknowledge(delivery.id)
        limit = runtime.options.reset_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                while not future.done():  # another process may run the session: watch its status too
                    await asyncio.wait([future], timeout=0.5)
                    if not future.done():
                        session = await store.get_session(session_id)
                        if session is None or session.status != "active":
                            runtime.acknowledge(delivery.id)
                await future
        except TimeoutError:
            logger.warning("session %s: the reset was queued but not applied within %gs", session_id, limit)
    finally:
        runtime.acknowledgements.forget(delivery.id)
    return True
