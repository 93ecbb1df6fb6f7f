"""Serving channels over HTTP: authored channel routes, and the auth of a replaced eve channel.

[`ChannelRouter`] sits in front of the `/eve/v1` app. For each request it looks at the channels
of the generation being served (`runtime.agent`, so `eve dev`'s reloads take effect at once):
a route that matches is answered by its channel (auth chain first, then the handler); a path a
channel serves with another method is 405; anything else goes on to eve's routes. A path under
`/eve/` always goes to eve's routes, whatever a channel's pattern (`/{a}/{b}/{c}`) would match. Whatever a
handler raises becomes a JSON error body (`{"ok": false, "error", "code"}`): 4xx for bad input
(a `ValueError` is 400) and refused deliveries (409 for an address in use or a session at its
address limit), 503 with `retry-after` when an address's holder kept changing, and a logged 500
with an `errorId` for bugs.
"""

from __future__ import annotations

import inspect
import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from eve_runtime.authoring.channel_auth import AuthError, AuthFn, Principal
from eve_runtime.authoring.channels import Channel, ChannelRoute, InvalidAddress, is_eve_path
from eve_runtime.server.auth import Authenticator, AuthFailure, default_principal, duplicate_authorization
from eve_runtime.server.responses import ApiError, error_response, json_response, store_unavailable
from eve_runtime.server.route_context import RouteContext
from eve_runtime.sessions.addresses import AddressContended
from eve_runtime.sessions.availability import SessionDormant, SessionStranded
from eve_runtime.store.base import AddressInUse, AddressLimitReached, SessionNotActive, StoreUnavailable

if TYPE_CHECKING:
    from eve_runtime.project.runtime_agent import RuntimeAgent
    from eve_runtime.sessions.runtime import Runtime

__all__ = ["ChannelRouter", "eve_channel_caller", "run_auth"]

logger = logging.getLogger("eve.channels")

UNAUTHORIZED = "Missing or invalid credentials for this route."
CHALLENGE = {"www-authenticate": "Bearer"}
RETRY_SOON = {"retry-after": "1"}


async def run_auth(chain: Sequence[AuthFn], request: Request) -> Principal | AuthFailure:
    """Run an auth chain (see `eve_runtime.authoring.channel_auth`): the principal admitting the request, or why not."""
    for fn in chain:
        try:
            result = fn(request)
            if inspect.isawaitable(result):
                result = await result
        except AuthError as exc:
            status = exc.status if 400 <= exc.status < 500 else 401
            return AuthFailure(status, exc.message, exc.code, CHALLENGE if status == 401 else {})
        except Exception:  # fail closed
            logger.exception("an auth function failed; the request is refused")
            return AuthFailure(401, UNAUTHORIZED, "unauthorized", CHALLENGE)
        if isinstance(result, Principal):
            return result
        if result is not None:
            logger.warning(  # the type only: what it returned may be a credential
                "an auth function returned a %s, not a Principal or None; the request is refused", type(result).__name__
            )
            return AuthFailure(401, UNAUTHORIZED, "unauthorized", CHALLENGE)
    return AuthFailure(401, UNAUTHORIZED, "unauthorized", CHALLENGE)


async def eve_channel_caller(
    agent: RuntimeAgent, default: Authenticator, request: Request, *, guarded: bool
) -> Principal | None:
    """Who an `/eve/v1` request comes from under the served `channels/eve.py` (None for an open route).

    Without an authored one, the server's default authenticator decides (and names the caller,
    `eve_runtime.server.auth.default_principal`); an authored chain's first principal is the
    caller. Two `Authorization` headers are 400 `duplicate_authorization` either way. A disabled
    channel serves no route at all (404, health included).

    Raises:
        ApiError: The request is refused.
    """
    authored = agent.eve_channel
    if authored is not None and authored.disabled:
        where = f"[{request.method}] {request.url.path[:200]}"
        raise ApiError(404, f"Cannot find any route matching {where}.", "not_found")
    if not guarded:
        return None
    refused = duplicate_authorization(request.scope)  # whoever decides, two headers are a 400
    caller: Principal | None = None
    if refused is None and authored is None:
        refused = default.check(request.scope)
        caller = default_principal(default)
    elif refused is None and authored is not None:
        outcome = await run_auth(authored.auth, request)
        refused, caller = (outcome, None) if isinstance(outcome, AuthFailure) else (None, outcome)
    if refused is not None:
        raise ApiError(refused.status, refused.error, refused.code, headers=refused.headers)
    return caller


@dataclass(frozen=True)
class _Entry:
    route: Route
    name: str
    channel: Channel
    definition: ChannelRoute


async def _unused(request: Request) -> Response:  # pragma: no cover - routes here only match
    raise AssertionError


def _table(agent: RuntimeAgent) -> list[_Entry]:
    return [
        _Entry(Route(r.path, _unused, methods=[r.method]), name, channel, r)
        for name, channel in sorted(agent.channels.items())
        for r in channel.routes
    ]


def _response(result: Any) -> Response:
    if isinstance(result, Response):
        return result
    if result is None:
        return Response(status_code=204)
    if isinstance(result, str):
        return PlainTextResponse(result)
    status = 200
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], int):
        result, status = result
    if isinstance(result, (dict, list)):
        return json_response(result, status)
    raise TypeError(f"a channel route returned {type(result).__name__}; return a dict, a list, a Response or None")


def _internal_error(message: str) -> Response:
    error_id = uuid.uuid4().hex
    logger.exception("%s (errorId %s)", message, error_id)
    return json_response({"ok": False, "error": message, "code": "internal_error", "errorId": error_id}, 500)


class ChannelRouter:
    """ASGI middleware answering the authored channels' routes (see the module docstring)."""

    def __init__(self, app: ASGIApp, runtime: Runtime, max_body_bytes: int) -> None:
        self.app = app
        self.runtime = runtime
        self.max_body_bytes = max_body_bytes
        self._agent: RuntimeAgent | None = None
        self._entries: list[_Entry] = []

    def _current(self) -> list[_Entry]:
        agent = self.runtime.agent
        if agent is not self._agent:  # a new generation: rebuild the table once
            self._agent, self._entries = agent, _table(agent)
        return self._entries

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        entries = self._current() if scope["type"] == "http" and not is_eve_path(scope["path"]) else []
        partial = False
        for entry in entries:
            match, child = entry.route.matches(scope)
            if match is Match.FULL:
                response = await self._handle(entry, Request({**scope, **child}, receive))
                await response(scope, receive, send)
                return
            partial = partial or match is Match.PARTIAL
        if partial:
            where = f"[{scope['method']}] {scope['path'][:200]}"
            await error_response(ApiError(405, f"Method not allowed: {where}.", "method_not_allowed"))(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)

    async def _handle(self, entry: _Entry, request: Request) -> Response:
        try:
            principal = None
            duplicate = duplicate_authorization(request.scope)  # refused on every route, open ones too
            if duplicate is not None:
                raise ApiError(duplicate.status, duplicate.error, duplicate.code)
            if entry.channel.auth is not None:
                outcome = await run_auth(entry.channel.auth, request)
                if isinstance(outcome, AuthFailure):
                    raise ApiError(outcome.status, outcome.error, outcome.code, headers=outcome.headers)
                principal = outcome
            ctx = RouteContext(
                self.runtime,
                request,
                channel=entry.name,
                turn_policy=entry.channel.turn_policy,
                principal=principal,
                max_body_bytes=self.max_body_bytes,
            )
            result = entry.definition.handler(request, ctx)
            if inspect.isawaitable(result):
                result = await result
            return _response(result)
        except ApiError as exc:
            return error_response(exc)
        except SessionStranded as exc:
            return error_response(ApiError(409, str(exc), "session_stranded", extra={"eveVersion": exc.eve_version}))
        except SessionDormant as exc:
            return error_response(ApiError(409, str(exc), "session_dormant"))
        except SessionNotActive as exc:
            return error_response(ApiError(409, str(exc), "session_not_active"))
        except AddressInUse as exc:
            return error_response(ApiError(409, str(exc), "address_in_use"))
        except AddressLimitReached as exc:
            return error_response(ApiError(409, str(exc), "address_limit_reached"))
        except AddressContended as exc:
            return error_response(ApiError(503, str(exc), "address_contended", headers=RETRY_SOON))
        except StoreUnavailable as exc:
            logger.warning("the %s channel: the store is unavailable: %s", entry.name, exc)
            return error_response(store_unavailable(exc))
        except InvalidAddress as exc:
            return error_response(ApiError(400, str(exc), "invalid_address"))
        except json.JSONDecodeError:
            return error_response(ApiError(400, "Invalid JSON body.", "invalid_json"))
        except UnicodeDecodeError:
            return error_response(ApiError(400, "The request body is not valid UTF-8.", "invalid_body"))
        except ValueError as exc:  # a body the handler could not use
            logger.info("the %s channel refused a request: %s", entry.name, exc)
            return error_response(ApiError(400, str(exc)[:500] or "Bad request.", "bad_request"))
        except Exception:  # a bug in the handler: a logged 500
            return _internal_error(
                f"The {entry.name} channel failed to answer {entry.definition.method} {request.url.path[:200]}."
            )
