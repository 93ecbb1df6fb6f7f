"""The HTTP API (`/eve/v1`, stream version 26): a starlette app over a started runtime.

The app only translates HTTP to the runtime's calls and the store's reads: the engine never sees
a request. It owns no lifecycle: whoever builds it (the `eve start`/`eve dev` server, a test)
opens the store and starts the runtime before serving, and stops them afterwards.

Every answer that is not an event stream is JSON with `cache-control: no-store`; every error is
`{"ok": false, "error": "<message>", "code"?: "<code>"}`: unknown routes 404, wrong methods 405,
and anything unexpected 500 with an `errorId` that is also logged with the traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from eve_runtime.authoring.channel_auth import Principal, auth_wire
from eve_runtime.crashpoints import crashpoint
from eve_runtime.ids import is_session_id
from eve_runtime.project.info import agent_info, with_failed_build
from eve_runtime.project.manifest import Manifest
from eve_runtime.server.auth import Authenticator, LoopbackAuth
from eve_runtime.server.bodies import (
    MAX_BODY_BYTES,
    parse_object,
    read_body,
    validate_cancel,
    validate_control,
    validate_create,
    validate_follow_up,
    validate_reset,
)
from eve_runtime.server.channels import ChannelRouter, eve_channel_caller
from eve_runtime.server.connection_routes import supply_token
from eve_runtime.server.dev import BuildStatus, fire_schedule, list_sessions
from eve_runtime.server.inspector import inspector_routes
from eve_runtime.server.openapi import openapi_document
from eve_runtime.server.responses import (
    ApiError,
    CatchAll,
    dump_json,
    error_response,
    http_error,
    internal_error,
    json_response,
    store_unavailable,
)
from eve_runtime.server.sign_in_callback import sign_in_callback
from eve_runtime.server.stream import SESSION_NOT_FOUND, StreamOptions, StreamRegistry, open_stream, parse_stream_query
from eve_runtime.server.tool_stubs import create_session
from eve_runtime.sessions.availability import SessionDormant, SessionStranded
from eve_runtime.sessions.runtime import Runtime
from eve_runtime.store.base import SessionNotActive, StoreUnavailable
from eve_runtime.telemetry.ids import parse_traceparent

__all__ = ["TASK_PROTOCOL", "WORKFLOW_ID", "create_app"]

logger = logging.getLogger("eve.server")

Mode = Literal["development", "production"]
Handler = Callable[[Request], Awaitable[Response]]

WORKFLOW_ID = "workflow//eve//workflowEntry"
RETRY_DEGRADED = 5
"""The `retry-after` of a degraded health answer, in seconds."""
TASK_PROTOCOL = 1
_NO_STORE, _JSON = {"cache-control": "no-store"}, "application/json; charset=utf-8"


def _stranded(exc: SessionStranded) -> ApiError:
    return ApiError(409, str(exc), "session_stranded", extra={"eveVersion": exc.eve_version})


def _traced(payload: dict[str, Any], request: Request) -> dict[str, Any]:
    """A delivery's payload with who sent it and the request's trace context.

    `auth` is the principal the auth chain admitted; `traceparent` the request's W3C header, when
    it sent a valid one (`eve_runtime.telemetry.ids`).
    """
    caller = getattr(request.state, "eve_caller", None)
    if isinstance(caller, Principal):
        payload = {**payload, "auth": auth_wire(caller)}
    context = parse_traceparent(request.headers.get("traceparent"))
    if context is None:
        return payload
    return {**payload, "traceparent": context.traceparent}


def _not_active() -> ApiError:
    return ApiError(409, "The session is no longer active.", "session_not_active")


class _Api:
    """The route handlers of one app."""

    def __init__(
        self,
        runtime: Runtime,
        manifest: Manifest,
        *,
        mode: Mode,
        auth: Authenticator,
        max_body_bytes: int,
        body_timeout: float,
        reset_timeout: float,
        stream_options: StreamOptions,
        inspector: bool,
    ) -> None:
        self.runtime = runtime
        self.inspector = inspector or mode == "development"
        self.auth = auth
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.reset_timeout = reset_timeout
        self.stream_options = stream_options
        self.streams = StreamRegistry()
        self.mode = mode
        self.info_body = dump_json(agent_info(manifest, mode=mode))
        self.build = BuildStatus()
        self.openapi_body = dump_json(openapi_document(mode=mode, max_body_bytes=max_body_bytes))

    def endpoint(self, handler: Handler, *, guarded: bool = True, failure: str = "Internal server error.") -> Handler:
        """Wrap a handler: auth first, `ApiError` as its JSON answer, anything else a logged 500."""

        async def run(request: Request) -> Response:
            try:
                request.state.eve_caller = await eve_channel_caller(
                    self.runtime.agent, self.auth, request, guarded=guarded
                )
                return await handler(request)
            except ApiError as exc:
                return error_response(exc)
            except StoreUnavailable as exc:  # a full disk, an unreachable database: retry later
                logger.warning("%s %s: the store is unavailable: %s", request.method, request.url.path[:200], exc)
                return error_response(store_unavailable(exc))
            except Exception:  # answered as a 500 with an errorId, and logged
                return internal_error(failure)

        return run

    async def _body(self, request: Request) -> dict[str, Any] | None:
        raw = await read_body(request, limit=self.max_body_bytes, timeout=self.body_timeout)
        return parse_object(raw)

    # -- routes ------------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        headers = {"x-eve-task-protocol": str(TASK_PROTOCOL)}
        reason = await self.runtime.store.health()
        if reason is None:
            response = json_response({"ok": True, "status": "ready", "workflowId": WORKFLOW_ID}, headers=headers)
        else:  # answers nothing new for now: a balancer sends the work elsewhere
            body = {"ok": False, "status": "degraded", "code": "store_unavailable", "reason": reason}
            body["workflowId"] = WORKFLOW_ID
            response = json_response(body, 503, headers={**headers, "retry-after": str(RETRY_DEGRADED)})
        if request.method == "HEAD":
            response.body = b""  # headers (content-length included) as for GET, no body
        return response

    def show_build(self, manifest: Manifest, *, failed: Manifest | None = None, generation: int = 0) -> None:
        """Describe a new generation in `GET /eve/v1/info` (with a newer failed build's diagnostics, if any)."""
        info = agent_info(manifest, mode=self.mode)
        self.info_body = dump_json(with_failed_build(info, failed) if failed is not None else info)
        self.build = self.build.next(generation, failed)

    async def info(self, request: Request) -> Response:
        return Response(self.info_body, headers=_NO_STORE, media_type=_JSON)

    async def openapi(self, request: Request) -> Response:
        return Response(self.openapi_body, headers=_NO_STORE, media_type=_JSON)

    async def create(self, request: Request) -> Response:
        body = validate_create(raw := await self._body(request))
        message = _traced(body.message, request) if body.message is not None else None
        session = await create_session(self.runtime, raw or {}, body, message)
        crashpoint("after-enqueue")  # durable, not acknowledged yet: the client must retry (create-once)
        return json_response(
            {"ok": True, "sessionId": session.id, "status": "accepted"},
            202,
            headers={"x-eve-session-id": session.id},
        )

    async def follow_up(self, request: Request) -> Response:
        session_id = request.path_params["sessionId"]
        body = validate_follow_up(await self._body(request))
        if not is_session_id(session_id):
            raise _not_active()
        try:
            delivery = await self.runtime.deliver(
                session_id, body.kind, _traced(body.payload, request), idempotency_key=body.idempotency_key
            )
        except SessionNotActive:
            raise _not_active() from None
        except SessionDormant as exc:
            raise ApiError(409, str(exc), "session_dormant") from None
        except SessionStranded as exc:
            raise _stranded(exc) from None
        crashpoint("after-enqueue")  # durable, not acknowledged yet: the client retries with its idempotency key
        return json_response(
            {"ok": True, "sessionId": session_id, "status": "accepted", "deliveryId": delivery.id},
            202,
            headers={"x-eve-session-id": session_id},
        )

    async def cancel(self, request: Request) -> Response:
        session_id = request.path_params["sessionId"]
        turn_id = validate_cancel(await self._body(request))
        if is_session_id(session_id) and await self.runtime.cancel(session_id, turn_id):
            return json_response({"ok": True, "sessionId": session_id, "status": "accepted"}, 202)
        return json_response({"ok": True, "status": "no_active_turn"})

    async def reset(self, request: Request) -> Response:
        session_id = request.path_params["sessionId"]
        reason = validate_reset(await self._body(request))
        if not is_session_id(session_id):
            return json_response({"ok": True, "status": "no_active_session"})
        # At most reset_timeout: a reset still queued by then will be applied, and answers as done.
        if not await self.runtime.reset(session_id, reason, timeout=self.reset_timeout):
            return json_response({"ok": True, "status": "no_active_session"})
        return json_response({"ok": True, "previousSessionId": session_id, "status": "reset"})

    def control(self, kind: Literal["compact", "clear"]) -> Handler:
        """Compact and clear: queued for an active session (202), no-ops on inactive ones (200)."""

        async def handle(request: Request) -> Response:
            session_id = request.path_params["sessionId"]
            validate_control(await self._body(request))
            try:  # a stranded session has nothing to compact, as eve answers
                queued = is_session_id(session_id) and await self.runtime.control(session_id, kind)
            except SessionDormant as exc:
                raise ApiError(409, str(exc), "session_dormant") from None
            except SessionStranded as exc:
                raise _stranded(exc) from None
            if not queued:
                return json_response({"ok": True, "status": "no_active_session"})
            return json_response({"ok": True, "sessionId": session_id, "status": "accepted"}, 202)

        return handle

    async def stream(self, request: Request) -> Response:
        query = parse_stream_query(request.query_params)
        session_id = request.path_params["sessionId"]
        if query.follow and is_session_id(session_id):
            session = await self.runtime.store.get_session(session_id)
            if session is not None and session.status == "active" and self.runtime.availability.stranded(session):
                raise _stranded(SessionStranded(session.eve_version))  # nothing will ever be written to follow
        return await open_stream(self.runtime.store, session_id, query, self.stream_options, self.streams)

    async def child_stream(self, request: Request) -> Response:
        """A subagent's stream, reached through its parent (404 unless the call opened that child)."""
        parent = request.path_params["sessionId"]
        child = request.path_params["childSessionId"]
        query = parse_stream_query(request.query_params)
        first = await self.runtime.store.read_events(child, 0, 1) if is_session_id(child) else []
        invocation = json.loads(first[0].line).get("data", {}).get("invocation", {}) if first else {}
        if (invocation.get("parentSessionId"), invocation.get("parentCallId")) != (
            parent,
            request.path_params["callId"],
        ):
            raise ApiError(404, SESSION_NOT_FOUND)
        return await open_stream(self.runtime.store, child, query, self.stream_options, self.streams)

    async def dev_sessions(self, request: Request) -> Response:
        """`GET /eve/v1/dev/sessions` (development, or the inspector): every session in the store, newest first."""
        return json_response(
            {"ok": True, "sessions": await list_sessions(self.runtime.store, self.runtime.availability)}
        )

    async def connection_token(self, request: Request) -> Response:
        return await supply_token(self.runtime, request, await self._body(request))

    async def connection_callback(self, request: Request) -> Response:
        return await sign_in_callback(self.runtime, request)

    async def dev_build(self, request: Request) -> Response:
        """`GET /eve/v1/dev/build` (development, or the inspector): the serving generation and the newest rebuild."""
        return json_response({"ok": True, **self.build.to_json()})

    async def dev_schedule(self, request: Request) -> Response:
        """`POST /eve/v1/dev/schedules/{scheduleId}` (development mode only): fire a schedule once, by hand."""
        return json_response(await fire_schedule(self.runtime.schedules, request.path_params["scheduleId"]))

    def routes(self) -> list[Route]:
        """The routes, in eve's order (`routes.DEFAULT_ROUTES`), plus the OpenAPI document."""
        session = "/eve/v1/session/{sessionId}"
        routes = [
            Route("/eve/v1/health", self.endpoint(self.health, guarded=False), methods=["GET", "HEAD"]),
            Route("/eve/v1/info", self.endpoint(self.info), methods=["GET"]),
            Route("/eve/v1/openapi.json", self.endpoint(self.openapi), methods=["GET"]),
            Route(
                "/eve/v1/session", self.endpoint(self.create, failure="Failed to create the session."), methods=["POST"]
            ),
            Route(
                session, self.endpoint(self.follow_up, failure="Failed to send the session message."), methods=["POST"]
            ),
            Route(
                f"{session}/cancel", self.endpoint(self.cancel, failure="Failed to cancel the turn."), methods=["POST"]
            ),
            Route(f"{session}/compact", self.endpoint(self.control("compact")), methods=["POST"]),
            Route(f"{session}/clear", self.endpoint(self.control("clear")), methods=["POST"]),
            Route(
                f"{session}/reset", self.endpoint(self.reset, failure="Failed to reset the session."), methods=["POST"]
            ),
            Route(f"{session}/stream", self.endpoint(self.stream), methods=["GET"]),
            Route("/eve/v1/connections/{name}/token", self.endpoint(self.connection_token), methods=["POST"]),
            Route(  # a browser back from a sign-in: the single-use OAuth `state` is the capability
                "/eve/v1/connections/{name}/callback",
                self.endpoint(self.connection_callback, guarded=False),
                methods=["GET", "POST"],
            ),
            Route(
                f"{session}/subagents/{{callId}}/{{childSessionId}}/stream",
                self.endpoint(self.child_stream),
                methods=["GET"],
            ),
        ]
        if self.inspector:  # what the inspector reads: also under `eve start --inspector` (behind the token)
            routes.append(Route("/eve/v1/dev/sessions", self.endpoint(self.dev_sessions), methods=["GET"]))
            routes.append(Route("/eve/v1/dev/build", self.endpoint(self.dev_build), methods=["GET"]))
        if self.mode == "development":
            schedules = "/eve/v1/dev/schedules/{scheduleId:path}"  # nested names hold a '/'
            routes.append(Route(schedules, self.endpoint(self.dev_schedule), methods=["POST"]))
        for route in routes[1:]:
            if route.methods is not None:
                route.methods.discard("HEAD")  # starlette adds HEAD to GET routes; only health serves it
        return routes + (inspector_routes(self.auth) if self.inspector else [])


def create_app(
    runtime: Runtime,
    manifest: Manifest,
    *,
    mode: Mode,
    auth: Authenticator,
    max_body_bytes: int = MAX_BODY_BYTES,
    body_timeout: float = 30.0,
    reset_timeout: float = 30.0,
    stream_options: StreamOptions | None = None,
    generation: int = 0,
    rebuilds: int = 0,
    inspector: bool = False,
) -> Starlette:
    """The `/eve/v1` HTTP API over a runtime whose store is open and which is started (or will be).

    Args:
        runtime: The runtime that accepts deliveries; its store serves the streams.
        manifest: The compiled manifest (with a root agent): `GET /eve/v1/info` describes it.
        mode: `development` (`eve dev`) or `production` (`eve start`); reported by info.
        auth: Who may use the guarded routes (every route but health) unless the app's
            `channels/eve.py` replaces it: [`LoopbackAuth`][eve_runtime.server.auth.LoopbackAuth]
            for `eve dev`, [`BearerTokenAuth`][eve_runtime.server.auth.BearerTokenAuth] for `eve start`.
            The app's custom channels are served in front of these routes
            ([`ChannelRouter`][eve_runtime.server.channels.ChannelRouter]).
        max_body_bytes: The largest request body (413 beyond; never buffered past it).
        body_timeout: Seconds a client may take to send its body (408 after).
        reset_timeout: Seconds a reset waits for the session to end before answering anyway.
        stream_options: Heartbeat and lease timing of live streams.
        generation: The generation of `manifest` (`GET /eve/v1/dev/build` reports it in development).
        rebuilds: The rebuilds before this app (`eve dev` that started on a broken agent).
        inspector: Serve the web inspector at `/` with the dev routes it reads (always in development).

    Returns:
        The app. `app.state.streams` ([`StreamRegistry`][eve_runtime.server.stream.StreamRegistry])
        ends every live stream on `close_all()`, which a server calls when it shuts down.
    """
    api = _Api(
        runtime,
        manifest,
        mode=mode,
        auth=auth,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        reset_timeout=reset_timeout,
        stream_options=stream_options or StreamOptions(),
        inspector=inspector,
    )
    app = Starlette(
        routes=api.routes(),
        middleware=[Middleware(CatchAll), Middleware(ChannelRouter, runtime=runtime, max_body_bytes=max_body_bytes)],
        exception_handlers={HTTPException: http_error},
    )
    api.build = BuildStatus(generation=generation, rebuilds=rebuilds)
    app.router.redirect_slashes = False
    app.state.streams = api.streams
    app.state.runtime = runtime
    app.state.eve_mode = mode
    app.state.eve_loopback = auth if isinstance(auth, LoopbackAuth) else LoopbackAuth()  # what `local_dev()` checks
    app.state.show_build = api.show_build
    return app
