"""Creating a session: its record (deadline, build, eve version) and, create-once, the session itself.

A session is created once per `operation_id` (creating it again returns the first one), with
its first message in the same transaction when given. A new session is announced to the hooks,
gets its timeout, and an actor when it has a message to handle (one created without a message is
left loaded, empty, for the actor of its first message: it need not read back what was never
written). Child sessions of tasks are created in `eve_runtime.sessions.children`, channel
sessions in `eve_runtime.sessions.addresses`.
"""

from __future__ import annotations

from typing import Any, Protocol

from eve_runtime._version import __version__
from eve_runtime.checkpoint import SessionState
from eve_runtime.engine.held import LoadedSession
from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.engine.tool_stubs import StubRule
from eve_runtime.ids import new_delivery_id, new_session_id
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.timeouts import SessionTimeouts
from eve_runtime.store.base import NewDelivery, SessionRecord, Store

__all__ = ["CreationHost", "new_record", "open_session"]


class CreationHost(Protocol):
    """Creating a session (create-once) with its record."""

    @property
    def store(self) -> Store: ...

    @property
    def options(self) -> RuntimeOptions: ...

    @property
    def agent(self) -> RuntimeAgent: ...

    @property
    def hooks(self) -> HookDispatcher: ...

    @property
    def timeouts(self) -> SessionTimeouts: ...

    def look_after(self, session: SessionRecord) -> None: ...

    def remember(self, session_id: str, loaded: LoadedSession) -> None: ...


def new_record(
    runtime: CreationHost, *, operation_id: str | None = None, agent: RuntimeAgent | None = None
) -> SessionRecord:
    """A session record for the runtime's agent (or `agent`), with its deadline and build."""
    now = runtime.options.clock()
    timeout = (agent or runtime.agent).config.limits.session_timeout_ms
    deployment = (agent or runtime.agent).deployment
    deadline = now + timeout / 1000 if timeout is not False else None
    return SessionRecord(
        id=new_session_id(),
        agent=runtime.agent.name,
        created_at=now,
        eve_version=__version__,
        deadline=deadline,
        operation_id=operation_id,
        deployment=deployment or None,
    )


async def open_session(
    runtime: CreationHost,
    *,
    message: dict[str, Any] | None = None,
    operation_id: str | None = None,
    idempotency_key: str | None = None,
    stubs: tuple[StubRule, ...] = (),
) -> tuple[SessionRecord, bool]:
    """Create a session (create-once by `operation_id`), accepting its first message if given.

    `stubs` (eval tool stubs) are the session's before its first step can run.
    Returns the session and whether it was created now (False: `operation_id` existed).
    """
    record = new_record(runtime, operation_id=operation_id)
    runtime.options.tool_stubs.register(record.id, stubs)
    first = None
    if message is not None:
        first = NewDelivery(id=new_delivery_id(), kind="message", payload=message, idempotency_key=idempotency_key)
    try:
        session, created = await runtime.store.create_session(record, first)
    except BaseException:
        runtime.options.tool_stubs.forget(record.id)
        raise
    if not created:
        runtime.options.tool_stubs.forget(record.id)
    if created:
        runtime.hooks.session_created(session.id)  # no address: a channel's handlers never see it
        if first is not None:
            runtime.look_after(session)  # its timeout and an actor
        else:
            runtime.timeouts.schedule_deadline(session)
            runtime.remember(session.id, LoadedSession(session, SessionState(), [], 0))
    return session, created
