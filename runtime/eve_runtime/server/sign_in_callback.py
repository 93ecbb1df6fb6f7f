"""`GET|POST /eve/v1/connections/{name}/callback`: where a person's browser comes back from an OAuth sign-in.

The route is the redirect URI eve registers for a `connection_auth(oauth=...)` connection. It
is not guarded by the server's auth (a browser coming back from an authorization server carries
no bearer token): the `state` the SDK put in the authorization URL is the capability. It is
single use and names one sign-in, which knows the parked requests (`attemptId`s of
`authorization.required`) that wait for it. The SDK exchanges the `code` for tokens; then each
waiting request is answered `authorized` (or `declined` when the person refused or the exchange
failed) and its turn goes on. Only the query (and a form body, for `response_mode=form_post`) is
read, never the request's headers or cookies.

Answers: a small HTML page for a browser (`Accept: text/html`), else JSON: 200 `{"ok": true,
"connection", "outcome": "authorized" | "declined", "resumed", "reason"?}`; 400 for an unknown or
used `state` or a callback without a code; 404 for a connection the agent does not have; 502
`sign_in_failed` when the code could not be exchanged for tokens.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from eve_runtime.authoring.connection_access import SignInCallbackError
from eve_runtime.server.responses import ApiError, json_response
from eve_runtime.store.base import SessionNotActive

if TYPE_CHECKING:
    from eve_runtime.sessions.runtime import Runtime

__all__ = ["sign_in_callback"]

MAX_FORM_BYTES = 16_384


async def _params(request: Request) -> dict[str, str]:
    params = dict(request.query_params)
    if request.method == "POST" and request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    ):
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise ApiError(413, "The callback's form is too large.", "body_too_large")
        params.update(parse_qsl(body.decode("utf-8", "replace")))
    return params


def _page(status: int, title: str, text: str) -> Response:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
        f'{html.escape(title)}</title></head><body style="font-family: sans-serif; max-width: 32rem; '
        f'margin: 4rem auto"><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>'
    )
    return HTMLResponse(body, status_code=status, headers={"cache-control": "no-store"})


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


async def sign_in_callback(runtime: Runtime, request: Request) -> Response:
    """Handle one callback (see the module docstring)."""
    name = request.path_params["name"]
    if not any(name in agent.connections for agent in runtime.agent.walk()):
        raise ApiError(404, f"This agent has no connection named {name!r}.", "connection_not_found")
    try:
        outcome, waiters, reason = await runtime.connections.complete_sign_in(name, await _params(request))
    except SignInCallbackError as exc:
        if _wants_html(request):
            return _page(exc.status, "Sign-in link not valid", exc.message)
        raise ApiError(exc.status, exc.message, exc.code) from None
    option = "authorized" if outcome == "authorized" else "declined"
    resumed = 0
    for session_id, request_id in waiters:
        responses = {"inputResponses": [{"requestId": request_id, "optionId": option}]}
        try:
            await runtime.deliver(session_id, "responses", responses)
            resumed += 1
        except SessionNotActive:
            continue
    if _wants_html(request):
        if outcome == "authorized":
            return _page(200, "Signed in", f"You signed in to {name}. You can close this tab and return to your app.")
        return _page(200, "Sign-in did not complete", f"The sign-in to {name} did not complete: {reason}.")
    if outcome == "failed":
        raise ApiError(502, f"The sign-in to {name} did not complete: {reason}.", "sign_in_failed")
    answer = {"ok": True, "connection": name, "outcome": outcome, "resumed": resumed}
    if reason is not None:
        answer["reason"] = reason
    return json_response(answer)
