"""Which stored sessions this process runs: dormant and stranded ones are left alone.

- **Dormant**: a session of an earlier `eve dev` run, when this one was started without
  `--resume`. Nothing runs it; a message to it answers 409 `session_dormant`; a reset retires it.
- **Stranded**: a session written by another version of eve (or by none recorded). Its state
  may not mean the same to this code, so none of its code runs: a message answers 409
  `session_stranded` (with the version that wrote it), a live stream too; bounded reads work;
  cancel has no turn to stop; a reset, a message at its channel address or its session timeout
  retires it by writing its end directly (`retire_stranded`). A stranded *child* session (a
  subagent's, or a tool task's run) is retired the first time work is delivered to it (a
  message from its parent, a wake, this process recovering it at start): no later message could
  resume its interrupted work, so nothing waits (`retire_descendant`).
"""

from __future__ import annotations

import logging
from typing import Literal

from eve_runtime._version import __version__
from eve_runtime.engine.emitter import Emitter
from eve_runtime.errors import RuntimeFailure
from eve_runtime.events.turns import SessionFailed
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.store.base import EventIndexConflict, SessionRecord, Store
from eve_runtime.tasks.delegation import CHILD_PREFIX

__all__ = [
    "DORMANT_MESSAGE",
    "STRANDED_END_MESSAGE",
    "RetireTrigger",
    "Availability",
    "SessionDormant",
    "SessionStranded",
    "is_descendant",
    "retire_descendant",
    "retire_once",
    "retire_safely",
    "retire_stranded",
]

logger = logging.getLogger("eve.runtime")

DORMANT_MESSAGE = (
    "This session belongs to an earlier run of eve dev, so it is dormant. Restart with 'eve dev --resume' to "
    "continue it (its stream can still be read)."
)


STRANDED_END_MESSAGE = "This session is no longer available."
"""The `message` of the `session.failed` that ends a stranded session (`code: "session_stranded"`)."""

RetireTrigger = Literal["message", "reset", "timeout"]
"""What ended a stranded session: a message at its channel address, a reset (`end()`), or its timeout."""


class SessionDormant(RuntimeFailure):
    """A delivery to a session of an earlier `eve dev` run, which was started without `--resume`."""

    def __init__(self) -> None:
        super().__init__(DORMANT_MESSAGE)


class SessionStranded(RuntimeFailure):
    """A delivery to a session written by another version of eve."""

    def __init__(self, eve_version: str) -> None:
        wrote = f"eve {eve_version}" if eve_version else "a version of eve that recorded none"
        super().__init__(
            f"This session was written by {wrote} and this server runs eve {__version__}, so it cannot continue. "
            "Start a new session (a reset retires this one; its stream can still be read)."
        )
        self.eve_version = eve_version


class Availability:
    """Decides, per session, whether this process may run it (see the module docstring)."""

    def __init__(self, dormant_before: float | None = None) -> None:
        self.dormant_before = dormant_before
        """Sessions created before this time (an earlier `eve dev` run) stay dormant."""
        self._woken: set[str] = set()
        """Dormant sessions a reset brought back just to retire them."""

    def stranded(self, session: SessionRecord) -> bool:
        """Whether another version of eve wrote the session."""
        return session.eve_version != __version__

    def dormant(self, session: SessionRecord) -> bool:
        """Whether the session belongs to an earlier `eve dev` run that this one does not resume."""
        return (
            self.dormant_before is not None
            and session.created_at < self.dormant_before
            and session.id not in self._woken
        )

    def runs(self, session: SessionRecord) -> bool:
        """Whether this process may run the session at all."""
        return not self.stranded(session) and not self.dormant(session)

    def refusal(self, session: SessionRecord) -> RuntimeFailure | None:
        """Why a delivery to the session is refused here, if it is (an ended session is refused as such elsewhere)."""
        if session.status != "active":
            return None
        if self.stranded(session):
            return SessionStranded(session.eve_version)
        if self.dormant(session):
            return SessionDormant()
        return None

    def wake_for_reset(self, session: SessionRecord) -> None:
        """Let a dormant session run once more, to retire it."""
        if self.dormant(session):
            self._woken.add(session.id)


async def retire_stranded(store: Store, session: SessionRecord, trigger: RetireTrigger) -> None:
    """End a stranded session without running any of its code, as eve records it.

    Its last event is `session.failed` with `code: "session_stranded"` and `details.trigger` (no
    usage: nothing ran here), which closes live streams; its status becomes `reset`. A warning
    `Reset stranded session` names it, both eve versions and the trigger.
    """
    emitter = Emitter(store, session.id, await store.event_count(session.id))
    emitter.emit(SessionFailed(session.id, "session_stranded", STRANDED_END_MESSAGE, {"trigger": trigger}))
    try:
        await emitter.commit(status="reset")
    finally:
        await emitter.close()
    logger.warning(
        "Reset stranded session %s (trigger %s): written by eve %s, this is eve %s",
        session.id,
        trigger,
        session.eve_version or "(none recorded)",
        __version__,
        extra={
            "previousSessionId": session.id,
            "previousEveVersion": session.eve_version or "unknown",
            "currentEveVersion": __version__,
            "trigger": trigger,
        },
    )


def is_descendant(session: SessionRecord) -> bool:
    """Whether the session is a child session (a subagent's, or a tool task's run), not a root one."""
    return session.agent.startswith(CHILD_PREFIX)


async def retire_descendant(store: Store, session: SessionRecord) -> None:
    """Cancel a stranded child session without running any of its code (its status becomes `reset`).

    Nothing is written to its stream (eve cancels the run); its live streams end as those of an
    ended session do. A warning `Retired stranded descendant run` names it and both eve versions.
    """
    emitter = Emitter(store, session.id, await store.event_count(session.id))
    try:
        await emitter.commit(status="reset")
    finally:
        await emitter.close()
    logger.warning(
        "Retired stranded descendant run %s: written by eve %s, this is eve %s",
        session.id,
        session.eve_version or "(none recorded)",
        __version__,
        extra={
            "runId": session.id,
            "previousEveVersion": session.eve_version or "unknown",
            "currentEveVersion": __version__,
        },
    )


async def retire_once(store: Store, locks: KeyedLocks, session_id: str, trigger: RetireTrigger) -> bool:
    """Retire a stranded session unless it has ended already; whether this call retired it.

    A child session is cancelled (`retire_descendant`, whatever the trigger); a root one ends with
    its `session.failed` (`retire_stranded`).

    Callers that race (a reset, messages replacing it) hold the session's lock in turn, so it is
    retired once; a race lost to another process (its write came first) is a no-op too.
    """
    async with locks.hold(session_id):
        current = await store.get_session(session_id)
        if current is None or current.status != "active":
            return False
        try:
            if is_descendant(current):
                await retire_descendant(store, current)
            else:
                await retire_stranded(store, current, trigger)
        except EventIndexConflict:
            after = await store.get_session(session_id)
            if after is not None and after.status != "active":
                return False  # someone else retired it first
            raise
        return True


async def retire_safely(store: Store, locks: KeyedLocks, session_id: str, trigger: RetireTrigger = "message") -> None:
    """`retire_once`, logging a failure instead of raising: a timer or a start goes on with the others.

    The next delivery (or start) retries it.
    """
    try:
        await retire_once(store, locks, session_id, trigger)
    except Exception:
        logger.exception("session %s: could not retire the stranded session", session_id)
