"""Connection sign-ins of a parked turn: `authorization.required` out, `authorization.completed` back.

Before a step's calls run, each connection call (and `connection_search`, which lists the
connections) is checked with the runtime's `ConnectionAccess.sign_in_needed`: a connection
whose `auth` finds no token needs someone to sign in. Such calls park the turn with the
approvals of the same step: one `authorization` request per connection (its `attemptId` is the
request id), answered by `inputResponses` `{"requestId", "optionId": "authorized" | "declined"}`,
which `POST /eve/v1/connections/<name>/token` sends once it holds the token, and the OAuth
callback route once the person signed in (the runtime is told which requests wait for which
sign-in, and when they stop waiting). A call runs once every request of its own (sign-in and
approval) is positive; cancelling or steering withdraws a sign-in as `declined`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eve_runtime.authoring.connection_access import SignIn
from eve_runtime.checkpoint import CallRecord, PendingRequest
from eve_runtime.engine.connection_tools import SEARCH, caller_of, connection_of, search_active
from eve_runtime.engine.ports import Session
from eve_runtime.events.authorization import AuthorizationCompleted, AuthorizationRequired
from eve_runtime.events.catalog import StepAt
from eve_runtime.events.requests import new_request_id
from eve_runtime.messages import ToolCall

__all__ = ["AUTHORIZED", "DECLINED", "authorization_requests", "settle_authorization", "sign_ins"]

AUTHORIZED = "authorized"
DECLINED = "declined"


async def sign_ins(session: Session, call: ToolCall) -> list[SignIn]:
    """The sign-ins a call waits for (none for a call that is not a connection's)."""
    agent = session.agent
    if call.name == SEARCH and search_active(agent):
        wanted = call.arguments.get("connection")
        targets = [(n, d) for n, d in agent.connections.items() if not wanted or n == wanted]
    else:
        target = connection_of(agent, call.name) if call.name not in agent.tools else None
        targets = [(target[0], target[1])] if target is not None else []
    needed = []
    for name, definition in targets:
        sign_in = await session.host.connections.sign_in_needed(name, definition, caller_of(session, name))
        if sign_in is not None:
            needed.append(sign_in)
    return needed


def authorization_requests(
    session: Session, at: StepAt, calls: Sequence[ToolCall], needed: dict[str, list[SignIn]]
) -> list[PendingRequest]:
    """One request per connection and call waiting for a sign-in, each announced with `authorization.required`."""
    requests = []
    principal = session.turn.principal_id
    for call in calls:
        for sign_in in needed.get(call.id, []):
            request_id = new_request_id()
            shown: dict[str, Any] = {"instructions": sign_in.instructions}
            if sign_in.url:
                shown["url"] = sign_in.url
            event = AuthorizationRequired(at, sign_in.connection, sign_in.description, request_id, shown, principal)
            session.emit(event)
            session.host.connections.sign_in_awaited(sign_in, session.session_id, request_id)
            requests.append(
                PendingRequest(
                    request_id=request_id,
                    kind="authorization",
                    request={**event.wire(), "requestId": request_id, "kind": "authorization"},
                    call=CallRecord(id=call.id, name=call.name, arguments=call.arguments),
                )
            )
    return requests


def settle_authorization(session: Session, at: StepAt, request: PendingRequest, outcome: str) -> None:
    """Say how one sign-in ended (`authorized`, or `declined` for anything else)."""
    name = str(request.request.get("name", ""))
    final = AUTHORIZED if outcome == AUTHORIZED else DECLINED
    session.host.connections.sign_in_settled(session.session_id, request.request_id)
    principal = request.request.get("principalId")  # who started it, as `authorization.required` said
    principal = principal if isinstance(principal, str) else None
    session.emit(AuthorizationCompleted(at, name, final, request.request_id, principal_id=principal))  # type: ignore[arg-type]
