"""What a channel route handler works with: `ctx.from_(address)`, `ctx.attach_session(id)`, ...

Operations by address ([`AddressHandle`]) always target whichever session holds the address at
that moment; only `send` creates one. A fixed [`SessionHandle`] targets one session id and never
follows or creates another. Addresses are channel-local: `from_("t-1")` in channel `webhook` is
the store's address `webhook:t-1`, which no other channel can reach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eve_runtime.authoring.channel_auth import Principal
from eve_runtime.authoring.channels import Channel, channel_address
from eve_runtime.engine.channel_state import as_json, run_deliver, seed
from eve_runtime.server.bodies import parse_object, read_body, validate_follow_up
from eve_runtime.server.responses import ApiError
from eve_runtime.store.base import SessionNotActive

if TYPE_CHECKING:
    from starlette.requests import Request

    from eve_runtime.sessions.runtime import Runtime

__all__ = ["AddressHandle", "RouteContext", "SendResult", "SessionHandle", "channel_address"]


@dataclass(frozen=True)
class SendResult:
    """Where a send went."""

    session_id: str
    delivery_id: str
    created: bool
    """Whether the send started the session."""
    replaced: str | None = None
    """The stranded session the new one replaced, if it did."""
    duplicate: bool = False
    """Whether the send repeated an earlier idempotency key (nothing new was delivered)."""


def _control_status(session_id: str | None) -> dict[str, Any]:
    if session_id is None:
        return {"status": "no_active_session"}
    return {"status": "accepted", "sessionId": session_id}


def _signed(payload: dict[str, Any], principal: Principal | None) -> dict[str, Any]:
    """A delivery's payload with who sent it (`auth`), when the route knows."""
    return payload if principal is None else {**payload, "auth": principal.wire()}


def _message_body(message: Any, turn_policy: str | None, idempotency_key: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message}
    if turn_policy is not None:
        body["turnPolicy"] = turn_policy
    if idempotency_key is not None:
        body["idempotencyKey"] = idempotency_key
    return body


class AddressHandle:
    """The operations of one channel-local address (`ctx.from_(address)`)."""

    def __init__(
        self, runtime: Runtime, channel: str, token: str, turn_policy: str, principal: Principal | None = None
    ) -> None:
        self._runtime = runtime
        self.channel = channel
        self.token = token
        self.address = channel_address(channel, token)
        self._turn_policy = turn_policy
        self._principal = principal

    def _definition(self) -> Channel | None:
        return self._runtime.agent.channels.get(self.channel)

    async def _delivered(self, session_id: str, payload: dict[str, Any]) -> None:
        definition = self._definition()
        channels = self._runtime.hooks.channels
        if definition is not None and channels is not None:
            await run_deliver(channels.states, self.channel, definition, session_id, self.token, payload)

    async def send(
        self,
        message: str | Sequence[Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
        turn_policy: str | None = None,
        state: Any = None,
        auth: Principal | None = None,
    ) -> SendResult:
        """Send a message: to the address's session, or to a new one that claims the address.

        A repeated `idempotency_key` delivers nothing new (nor runs `deliver` again) and returns
        the first delivery, with `duplicate` set.
        `turn_policy` (`"steer"` or `"queue"`) overrides the channel's default for this message.
        `state` (JSON data) seeds the channel state of a session this send creates (merged into
        the channel's initial state) and reaches the channel's `deliver` hook as `payload["state"]`.
        `auth` names the person the message comes from (by default the principal the route's
        auth chain admitted): only that person's messages steer the turn their message starts,
        and another person's wait for it to end.

        Raises:
            ApiError: 400 for a bad message, key or policy.
            SessionStranded, SessionDormant: The holder cannot run here.
            TypeError: `state` is not JSON data.
        """
        request = validate_follow_up(_message_body(message, turn_policy or self._turn_policy, idempotency_key))
        if state is not None:
            as_json(state)  # not JSON data: TypeError before anything is delivered
        definition = self._definition()

        async def seeded() -> str | None:  # only for a session this send creates
            channels = self._runtime.hooks.channels
            if definition is None or channels is None:
                return None
            return await seed(self.channel, definition, state, channels.states.executor, channels.states.timeout)

        continued = await self._runtime.addresses.continue_or_create(
            self.address,
            request.kind,
            _signed(request.payload, auth or self._principal),
            idempotency_key=request.idempotency_key,
            channel_state=seeded,
        )
        result = SendResult(
            continued.session.id, continued.delivery_id, continued.created, continued.replaced, continued.duplicate
        )
        if not continued.duplicate:  # a retry delivers nothing new: `deliver` saw it the first time
            payload = {"kind": "message", "message": message, "state": state, "created": continued.created}
            await self._delivered(continued.session.id, {**payload, "deliveryId": continued.delivery_id})
        return result

    async def respond(
        self,
        input_responses: Sequence[Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
        state: Any = None,
        auth: Principal | None = None,
    ) -> SendResult:
        """Answer pending requests (approvals, questions) of the address's session; never starts one.

        `state` reaches the channel's `deliver` hook as `payload["state"]`; `auth` names who
        answers (by default the route's principal), reported as `approval.settled.responderPrincipalId`.

        Raises:
            ApiError: 400 for bad responses; 409 `session_not_active` when no session holds the address.
        """
        body: dict[str, Any] = {"inputResponses": list(input_responses)}
        if idempotency_key is not None:
            body["idempotencyKey"] = idempotency_key
        request = validate_follow_up(body)
        try:
            continued = await self._runtime.addresses.continue_or_create(
                self.address,
                request.kind,
                _signed(request.payload, auth or self._principal),
                idempotency_key=request.idempotency_key,
            )
        except SessionNotActive:
            raise ApiError(409, "No active session holds this address.", "session_not_active") from None
        if not continued.duplicate:
            payload = {"kind": "input-responses", "inputResponses": list(input_responses), "state": state}
            payload.update(created=False, deliveryId=continued.delivery_id)
            await self._delivered(continued.session.id, payload)
        return SendResult(continued.session.id, continued.delivery_id, False, duplicate=continued.duplicate)

    async def cancel(self, turn_id: str | None = None) -> dict[str, Any]:
        """Cancel the running turn: `{"status": "accepted", "sessionId"}` or `{"status": "no_active_turn"}`."""
        session_id = await self._runtime.addresses.cancel(self.address, turn_id)
        if session_id is None:
            return {"status": "no_active_turn"}
        return {"status": "accepted", "sessionId": session_id}

    async def compact(self) -> dict[str, Any]:
        """Summarize the address's session's context (queued behind a running turn).

        Returns `{"status": "accepted", "sessionId"}` or `{"status": "no_active_session"}` (also
        for a stranded holder: nothing to compact here).
        """
        return _control_status(await self._runtime.addresses.control(self.address, "compact"))

    async def clear(self) -> dict[str, Any]:
        """Empty the address's session's model history in place (it keeps its id, address and state).

        Returns `{"status": "accepted", "sessionId"}` or `{"status": "no_active_session"}`.

        Raises:
            SessionStranded, SessionDormant: The holder cannot run here (409 from a route).
        """
        return _control_status(await self._runtime.addresses.control(self.address, "clear"))

    async def reset(self, reason: str | None = None) -> dict[str, Any]:
        """End the address's session for good (a later send starts a fresh one).

        Returns `{"status": "reset", "previousSessionId"}` or `{"status": "no_active_session"}`.
        """
        session_id = await self._runtime.addresses.reset(self.address, reason)
        if session_id is None:
            return {"status": "no_active_session"}
        return {"status": "reset", "previousSessionId": session_id}

    end = reset

    async def alias(self, token: str) -> str | None:
        """Add another address of this channel to the session holding this one; its id (None: none holds it).

        Raises:
            AddressInUse: Another active session holds `token`.
        """
        holder = await self._runtime.addresses.holder(self.address)
        if holder is None:
            return None
        await self._runtime.addresses.alias(holder.id, channel_address(self.channel, token))
        return holder.id


class SessionHandle:
    """Operations pinned to one session id (`ctx.attach_session(session_id)`)."""

    def __init__(self, runtime: Runtime, session_id: str, turn_policy: str, principal: Principal | None = None) -> None:
        self._runtime = runtime
        self.id = session_id
        self._turn_policy = turn_policy
        self._principal = principal

    async def send(
        self,
        message: str | Sequence[Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
        turn_policy: str | None = None,
        auth: Principal | None = None,
    ) -> str:
        """Send a message to this session; its delivery id (`auth`: who sends it, as for an address).

        Raises:
            SessionNotActive: The session is unknown or has ended.
        """
        request = validate_follow_up(_message_body(message, turn_policy or self._turn_policy, idempotency_key))
        delivery = await self._runtime.deliver(
            self.id,
            request.kind,
            _signed(request.payload, auth or self._principal),
            idempotency_key=request.idempotency_key,
        )
        return delivery.id

    async def cancel(self, turn_id: str | None = None) -> bool:
        """Cancel its running turn; False when it is not active."""
        return await self._runtime.cancel(self.id, turn_id)

    async def compact(self) -> bool:
        """Queue a compaction; False when it is not active (or stranded: nothing to compact)."""
        return await self._runtime.control(self.id, "compact")

    async def clear(self) -> bool:
        """Queue a clear of its model history; False when it is not active.

        Raises:
            SessionStranded, SessionDormant: It cannot run here.
        """
        return await self._runtime.control(self.id, "clear")

    async def reset(self, reason: str | None = None) -> bool:
        """End it for good; False when it was not active."""
        return await self._runtime.reset(self.id, reason)


class RouteContext:
    """The second argument of a channel route handler."""

    def __init__(
        self,
        runtime: Runtime,
        request: Request,
        *,
        channel: str,
        turn_policy: str,
        principal: Principal | None,
        max_body_bytes: int,
    ) -> None:
        self.runtime = runtime
        self.request = request
        self.channel = channel
        """The channel's name (the file stem)."""
        self.principal = principal
        """Who the route's auth chain admitted (None for an open route)."""
        self.params: dict[str, Any] = dict(request.path_params)
        """The route's path parameters."""
        self._turn_policy = turn_policy
        self._max_body_bytes = max_body_bytes

    def from_(self, address: str) -> AddressHandle:
        """The operations of a channel-local address (eve's `from(address)`)."""
        return AddressHandle(self.runtime, self.channel, address, self._turn_policy, self.principal)

    async def resolve_session(self, address: str) -> str | None:
        """The id of the session holding the address now, if any."""
        holder = await self.runtime.addresses.holder(channel_address(self.channel, address))
        return None if holder is None else holder.id

    def attach_session(self, session_id: str) -> SessionHandle:
        """Operations pinned to one session id (no lookup until the first one)."""
        return SessionHandle(self.runtime, session_id, self._turn_policy, self.principal)

    async def json(self) -> dict[str, Any]:
        """The request body as a JSON object (400 for anything else; 413 past the size limit)."""
        raw = await read_body(self.request, limit=self._max_body_bytes, timeout=30.0)
        body = parse_object(raw)
        if body is None:
            raise ApiError(400, "Expected a JSON object.", "invalid_json")
        return body
