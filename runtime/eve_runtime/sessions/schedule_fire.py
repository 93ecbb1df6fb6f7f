"""One fire of a schedule: a task-mode session for a prompt, or the `run` handler and its channel targets.

A prompt (`markdown`) starts a session of its own in task mode (it runs to completion and never
waits for a person), as the app principal (`eve:app`), marked with the schedule's name and fire
time (`session.started.data.schedule`). A fire of the clock creates it once (create-once by
`schedule:<name>:<fire time>`); a fire by hand always starts a new one.

A `run` handler gets a [`ScheduleContext`][eve_runtime.authoring.schedules.ScheduleContext]:
`ctx.to(channel, address)` is a channel-local address of one of the app's custom channels, whose
`send` continues the session holding it or starts one that claims it, exactly as a channel route's
`ctx.from_(address).send` does (the channel's state is seeded, its `deliver` hook runs). A send
carries the schedule's mark and, with `auth=`, the principal its turn runs as. The fire ends
when the handler has returned and every `ctx.wait_until(work)` is done.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any, Protocol

from eve_runtime.authoring.channel_auth import Principal, auth_wire
from eve_runtime.authoring.channels import Channel, channel_address
from eve_runtime.authoring.schedules import APP_AUTH, Schedule, ScheduleContext, ScheduledSend
from eve_runtime.engine.channel_state import as_json, run_deliver, seed
from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.errors import RuntimeFailure
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.addresses import AddressSessions
from eve_runtime.store.base import SessionRecord

__all__ = ["FireHost", "ScheduleFailed", "auth_wire", "fire", "fire_time"]


class ScheduleFailed(RuntimeFailure):
    """A schedule's fire failed: its handler raised, or its session could not be started."""


class FireHost(Protocol):
    """The runtime, as one fire of a schedule uses it."""

    @property
    def agent(self) -> RuntimeAgent:
        """The root agent of the newest build (its schedules and channels)."""
        ...

    @property
    def addresses(self) -> AddressSessions: ...

    @property
    def hooks(self) -> HookDispatcher: ...

    async def open_session(
        self,
        *,
        message: dict[str, Any] | None = None,
        operation_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[SessionRecord, bool]: ...


def fire_time(at: float) -> str:
    """A fire time as eve writes it: ISO 8601 in UTC, to the second (`2026-01-05T09:00:00Z`)."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _message(text: str, mark: dict[str, Any], turn_policy: str) -> dict[str, Any]:
    return {"message": text, "parts": [{"text": text, "type": "text"}], "turnPolicy": turn_policy, "schedule": mark}


async def fire(host: FireHost, name: str, schedule: Schedule, at: float, *, manual: bool) -> list[str]:
    """Run one fire of `schedule` (named `name`) for the fire time `at`; the ids of the sessions it reached.

    Raises:
        ScheduleFailed: The handler raised (or sent to a channel the app does not have).
    """
    mark = {"name": name, "fireAt": fire_time(at), "manual": manual}
    if schedule.markdown is not None:
        message = {**_message(schedule.markdown, mark, "queue"), "mode": "task", "auth": auth_wire(APP_AUTH)}
        operation_id = None if manual else f"schedule:{name}:{mark['fireAt']}"
        try:
            session, _created = await host.open_session(message=message, operation_id=operation_id)
        except Exception as exc:
            raise ScheduleFailed(f"schedule {name}: cannot start its session: {exc}") from exc
        return [session.id]
    assert schedule.run is not None
    targets = _Targets(host, mark)
    context = ScheduleContext(name=name, fire_at=datetime.fromtimestamp(at, UTC), manual=manual, host=targets)
    try:
        try:
            result = schedule.run(context)
            if inspect.isawaitable(result):
                await result
        finally:
            await targets.finish()
    except Exception as exc:
        raise ScheduleFailed(f"schedule {name}: its run handler failed: {type(exc).__name__}: {exc}") from exc
    return targets.session_ids


class _Targets:
    """Behind a run handler's context: its channel targets, the work it waits for, the sessions reached."""

    def __init__(self, host: FireHost, mark: dict[str, Any]) -> None:
        self.host = host
        self.mark = mark
        self.session_ids: list[str] = []
        self._work: list[asyncio.Future[Any]] = []

    def target(self, channel: str | Channel, address: str) -> _ChannelTarget:
        channels = self.host.agent.channels
        if isinstance(channel, Channel):
            named = next((n for n, c in channels.items() if c is channel), None)
        else:
            named = channel if channel in channels else None
        if named is None:
            known = ", ".join(sorted(channels)) or "none"
            raise ValueError(
                f"ctx.to(): the app has no channel {channel!r} (its channels: {known}); "
                "a schedule sends through a custom channel in agent/channels/"
            )
        channel_address(named, address)  # a bad address fails here, before anything is sent
        return _ChannelTarget(self, named, channels[named], address)

    def wait_until(self, work: Awaitable[Any]) -> None:
        self._work.append(asyncio.ensure_future(work))

    async def finish(self) -> None:
        """Wait for every `wait_until` work (also the work added meanwhile); the first failure is raised."""
        done = 0
        while done < len(self._work):
            pending = self._work[done:]
            done = len(self._work)
            results = await asyncio.gather(*pending, return_exceptions=True)
            failure = next((r for r in results if isinstance(r, BaseException)), None)
            if failure is not None:
                raise failure


class _ChannelTarget:
    """`ctx.to(channel, address)`: one channel-local address (see the module docstring)."""

    def __init__(self, targets: _Targets, name: str, channel: Channel, address: str) -> None:
        self._targets = targets
        self._name = name
        self._channel = channel
        self._address = address

    async def send(
        self,
        message: str,
        *,
        auth: Principal | None = None,
        idempotency_key: str | None = None,
        state: Any = None,
    ) -> ScheduledSend:
        if not isinstance(message, str) or not message.strip():
            raise ValueError("ctx.to(...).send(): the message must be a non-empty string")
        if state is not None:
            as_json(state)  # not JSON data: TypeError before anything is delivered
        host = self._targets.host
        payload = _message(message, self._targets.mark, self._channel.turn_policy)
        if auth is not None:
            payload["auth"] = auth_wire(auth)
        events = host.hooks.channels

        async def seeded() -> str | None:  # only for a session this send creates
            if events is None:
                return None
            return await seed(self._name, self._channel, state, events.states.executor, events.states.timeout)

        continued = await host.addresses.continue_or_create(
            channel_address(self._name, self._address),
            "message",
            payload,
            idempotency_key=idempotency_key,
            channel_state=seeded,
        )
        session_id = continued.session.id
        if not continued.duplicate and events is not None:
            delivered = {"kind": "message", "message": message, "state": state, "created": continued.created}
            delivered["deliveryId"] = continued.delivery_id
            await run_deliver(events.states, self._name, self._channel, session_id, self._address, delivered)
        if session_id not in self._targets.session_ids:
            self._targets.session_ids.append(session_id)
        return ScheduledSend(session_id=session_id, delivery_id=continued.delivery_id, created=continued.created)
