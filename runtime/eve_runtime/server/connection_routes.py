"""`POST /eve/v1/connections/{name}/token`: supply a connection's token, and resume the turn waiting for it.

Body: `{"token": "...", "sessionId"?: "...", "requestId"?: "...", "principalId"?: "..."}`. The token
is kept in this server's memory (never in the store, never on the stream) for connection `name`:
for everyone when the connection's credentials are the app's; when they are the user's, for the
caller (the principal the route's auth admitted, whose turns then use it). A `service` caller
(`eve start`'s `EVE_AUTH_TOKEN`, an app's backend) may name another principal with `principalId`;
anyone else naming someone but themselves is 403 `forbidden`. With `sessionId` and `requestId`
(the `attemptId` of `authorization.required`), the session's parked turn gets the answer
`authorized` (from the caller) and its call goes out. The route is guarded
like the session routes. Answers: 200 `{"ok": true, "connection", "deliveryId"?}`; 400 for a bad
body, or for a connection that signs in with OAuth (`oauth_connection`); 403 for a token meant for
someone else; 404 for a connection the agent does not have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from eve_runtime.authoring.channel_auth import Principal
from eve_runtime.ids import is_session_id
from eve_runtime.server.responses import ApiError, json_response
from eve_runtime.store.base import SessionNotActive

if TYPE_CHECKING:
    from eve_runtime.sessions.runtime import Runtime

__all__ = ["supply_token"]

MAX_TOKEN_CHARS = 16_384


def _string(body: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    if key not in body and not required:
        return None
    value = body.get(key)
    if not isinstance(value, str) or not value or len(value) > MAX_TOKEN_CHARS:
        raise ApiError(
            400, f"'{key}' must be a non-empty string (at most {MAX_TOKEN_CHARS} characters).", "invalid_body"
        )
    return value


async def supply_token(runtime: Runtime, request: Request, body: dict[str, Any] | None) -> Response:
    """Handle one token (see the module docstring)."""
    name = request.path_params["name"]
    definition = next((a.connections[name] for a in runtime.agent.walk() if name in a.connections), None)
    if definition is None:
        raise ApiError(404, f"This agent has no connection named {name!r}.", "connection_not_found")
    if definition.auth is not None and definition.auth.oauth is not None:
        raise ApiError(
            400,
            f"Connection {name!r} signs in with OAuth: open the URL of its authorization.required event instead.",
            "oauth_connection",
        )
    if body is None:
        raise ApiError(400, "The body must be a JSON object with a 'token'.", "invalid_body")
    token = _string(body, "token", required=True)
    assert token is not None
    session_id = _string(body, "sessionId")
    request_id = _string(body, "requestId")
    principal = _string(body, "principalId")
    if (session_id is None) != (request_id is None):
        raise ApiError(
            400, "Send 'sessionId' and 'requestId' together (the attemptId of authorization.required).", "invalid_body"
        )
    caller = getattr(request.state, "eve_caller", None)
    caller = caller if isinstance(caller, Principal) else None
    if principal is not None and caller is not None and caller.type != "service" and principal != caller.id:
        raise ApiError(403, "A token can only be supplied for yourself.", "forbidden")
    owner = principal or (caller.id if caller is not None else None)
    per_user = definition.auth is not None and definition.auth.credential_owner == "user"
    runtime.connections.supply_token(name, token, principal_id=owner if per_user else None)
    answer: dict[str, Any] = {"ok": True, "connection": name}
    if session_id is not None and request_id is not None:
        if not is_session_id(session_id):
            raise ApiError(404, "No active session with that id.", "no_active_session")
        responses: dict[str, Any] = {"inputResponses": [{"requestId": request_id, "optionId": "authorized"}]}
        if caller is not None:
            responses["auth"] = caller.wire()
        try:
            delivery = await runtime.deliver(session_id, "responses", responses)
        except SessionNotActive:
            raise ApiError(404, "No active session with that id.", "no_active_session") from None
        answer["deliveryId"] = delivery.id
    return json_response(answer)
