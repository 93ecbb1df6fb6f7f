"""The OpenAPI 3.1 document of the `/eve/v1` API, served at `GET /eve/v1/openapi.json`.

It describes exactly what `server/app.py` serves: every route, parameter, request body, status
code, response body and header. The request schemas are as strict as the server (a body they
reject, the server rejects), so a schema-driven fuzzer can check both directions; the body
schemas themselves are in `openapi_schemas.py`, this module holds the paths.
"""

from __future__ import annotations

from typing import Literal

from eve_runtime._version import __version__
from eve_runtime.server.openapi_schemas import (
    JSON,
    component_schemas,
    dev_build_schema,
    dev_schedule_schema,
    dev_sessions_schema,
    ref,
)

__all__ = ["openapi_document"]

Mode = Literal["development", "production"]


def _json(schema: JSON, description: str, headers: JSON | None = None) -> JSON:
    response: JSON = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def _header(description: str, *, required: bool = True) -> JSON:
    return {"description": description, "required": required, "schema": {"type": "string"}}


_UNAVAILABLE = (
    "`store_unavailable`: the store's disk is full (or under `EVE_MIN_FREE_MB`) or its database cannot be "
    "reached; nothing was stored. Retry after `retry-after` seconds."
)


def _error(description: str) -> JSON:
    return _json(ref("Error"), description)


def _session_parameter() -> JSON:
    return {
        "name": "sessionId",
        "in": "path",
        "required": True,
        "description": "The session id (`wrun_` + ULID). Unknown and malformed ids are answered like ended sessions.",
        "schema": {"type": "string"},
    }


def _path_parameter(name: str, description: str) -> JSON:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": {"type": "string"}}


def _body(schema: str, description: str) -> JSON:
    return {
        "required": False,
        "description": description + " An empty body is the same as `{}`.",
        "content": {"application/json": {"schema": ref(schema)}},
    }


def _guard(mode: Mode) -> JSON:
    if mode == "production":
        return {
            "401": {
                **_error("Missing or wrong `Authorization: Bearer <EVE_AUTH_TOKEN>` (or no token configured)."),
                "headers": {"www-authenticate": _header("`Bearer`.")},
            }
        }
    return {"403": _error("Not from this machine, or a `Host`/`Origin` that does not name it (eve dev).")}


def _body_errors() -> JSON:
    return {
        "400": _error("Invalid JSON, not an object, or a field with the wrong type or value."),
        "408": _error("The body took longer than the body timeout to arrive."),
        "413": _error("The body is larger than the limit."),
    }


def _operation(
    operation_id: str,
    summary: str,
    responses: JSON,
    mode: Mode,
    *,
    body: JSON | None = None,
    parameters: list[JSON] | None = None,
    guarded: bool = True,
) -> JSON:
    duplicate = {"400": _error("More than one `Authorization` header (`duplicate_authorization`).")}
    guard = {**duplicate, **_guard(mode)} if guarded else {}
    all_responses = {**guard, **responses, "500": _error("Unexpected failure (logged).")}
    all_responses.setdefault("503", _error(_UNAVAILABLE))
    operation: JSON = {"operationId": operation_id, "summary": summary, "responses": all_responses}
    if parameters:
        operation["parameters"] = parameters
    if body is not None:
        operation["requestBody"] = body
        all_responses.update(_body_errors())
    if not guarded and mode == "production":
        operation["security"] = []
    return operation


_FLAG: JSON = {"type": "string", "enum": ["", "true", "false", "1", "0", "yes", "no"]}
"""A boolean query flag (the words in any case; empty is the default)."""


def _sign_in_callback(mode: Mode) -> JSON:
    """The OAuth redirect URI of `connection_auth(oauth=...)` connections (GET, or POST for `form_post`)."""

    def both(response: JSON) -> JSON:  # a browser gets a small HTML page instead
        return {**response, "content": {**response["content"], "text/html": {"schema": {"type": "string"}}}}

    query = [
        {"name": key, "in": "query", "required": False, "schema": {"type": "string"}}
        for key in ("state", "code", "error", "error_description")
    ]
    parameters = [_path_parameter("name", "The connection's name (its file under agent/connections/)."), *query]
    responses = {
        "200": both(_json(ref("SignInDone"), "The sign-in ended; the turns waiting for it got the answer.")),
        "400": both(_error("An unknown or used `state` (`unknown_sign_in`), or no `code` (`invalid_callback`).")),
        "404": _error("No such connection (`connection_not_found`)."),
        "502": _error("The code could not be exchanged for tokens (`sign_in_failed`)."),
    }
    summary = "Where a browser comes back from a connection's OAuth sign-in (not guarded: the single-use `state` is)."
    form = {"required": False, "content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}}}
    post = {**responses, "413": _error("The form is too large.")}
    return {
        "get": _operation("signInCallback", summary, responses, mode, parameters=parameters, guarded=False),
        "post": _operation("signInCallbackForm", summary, post, mode, parameters=parameters, body=form, guarded=False),
    }


def _stream_parameters() -> list[JSON]:
    def query(name: str, schema: JSON, description: str) -> JSON:
        return {"name": name, "in": "query", "required": False, "description": description, "schema": schema}

    return [
        _session_parameter(),
        query(
            "startIndex",
            {"type": "integer"},
            "Events already consumed (0 = from the start); negative counts back from the tail (clamped at 0); "
            "past the tail a bounded read sends no event. "
            "A decimal integer: `-0` is one, `+1`, `1e2`, `1.5` and `0x10` are not (400).",
        ),
        query(
            "follow",
            _FLAG,
            "`false` (or `0`, `no`): a bounded read up to the tail seen at open. Other words are a 400.",
        ),
        query(
            "includeTailIndex",
            _FLAG,
            "`true` (or `1`, `yes`): send `x-eve-stream-tail-index` (the read is bounded too).",
        ),
        query(
            "streamControlVersion",
            {"type": "string", "enum": ["", "1"]},
            "`1`: blank heartbeat lines while quiet, then `stream.lease-ended` and the end of the response. "
            "Any other version is a 400.",
        ),
    ]


def _stream_ok() -> JSON:
    headers = {
        "x-eve-session-id": _header("The session id."),
        "x-eve-stream-format": _header("`ndjson`."),
        "x-eve-stream-version": _header("`26`."),
        "x-eve-stream-tail-index": _header(
            "Index of the last event at open (-1: none); bounded reads.", required=False
        ),
    }
    return {
        "description": "A `\\n`, then one event per line (`{data, type, meta}`); transport records are blank lines "
        'and `{"$eve": ...}` objects, never counted in `startIndex`.',
        "headers": headers,
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    }


def openapi_document(*, mode: Mode, max_body_bytes: int) -> JSON:
    """The OpenAPI 3.1 document of the API as served in `mode` with this body limit."""
    session = "/eve/v1/session/{sessionId}"
    sid = [_session_parameter()]
    accepted_headers = {"x-eve-session-id": _header("The session id.")}
    paths: JSON = {
        "/eve/v1/health": {
            "get": _operation(
                "health",
                "Liveness (never guarded).",
                {
                    "200": _json(ref("Health"), "Ready.", {"x-eve-task-protocol": _header("`1`.")}),
                    "503": _json(ref("HealthDegraded"), "Degraded: the store cannot take new work (`reason`)."),
                },
                mode,
                guarded=False,
            ),
            "head": _operation(
                "healthHead",
                "Liveness, headers only.",
                {"200": {"description": "Ready."}, "503": {"description": "Degraded."}},
                mode,
                guarded=False,
            ),
        },
        "/eve/v1/info": {
            "get": _operation("info", "The agent-info document.", {"200": _json(ref("AgentInfo"), "Agent info.")}, mode)
        },
        "/eve/v1/openapi.json": {
            "get": _operation("openapi", "This document.", {"200": _json({"type": "object"}, "OpenAPI 3.1.")}, mode)
        },
        "/eve/v1/session": {
            "post": _operation(
                "createSession",
                "Create a session, optionally with its first message.",
                {
                    "202": _json(ref("Accepted"), "Created (or found by `operationId`).", accepted_headers),
                    "403": _error("`forwardedPrincipal`/`forwardedAuth` from a caller that is not trusted."),
                },
                mode,
                body=_body("CreateSession", "Without `message` the session is created parked."),
            )
        },
        session: {
            "post": _operation(
                "sendToSession",
                "Send a message or answers (exactly one of `message` and `inputResponses`).",
                {
                    "202": _json(ref("DeliveryAccepted"), "Accepted durably.", accepted_headers),
                    "409": _error(
                        "`session_not_active`: unknown, malformed or ended session; `session_dormant` (eve dev "
                        "only): a session of an earlier run, continued with `eve dev --resume`."
                    ),
                },
                mode,
                body=_body("SendToSession", "The message or the answers."),
                parameters=sid,
            )
        },
        f"{session}/cancel": {
            "post": _operation(
                "cancelTurn",
                "Cancel the running turn.",
                {
                    "202": _json(ref("Accepted"), "The cancel is queued."),
                    "200": _json(ref("NoActiveTurn"), "Unknown or ended session."),
                },
                mode,
                body=_body("Cancel", "Optionally the turn to cancel."),
                parameters=sid,
            )
        },
        **{
            f"{session}/{name}": {
                "post": _operation(
                    f"{name}Session",
                    f"{name.capitalize()} the session (applied once the running turn, if any, has ended).",
                    {
                        "202": _json(ref("Accepted"), f"The {name} is queued."),
                        "200": _json(ref("NoActiveSession"), "Unknown or ended session."),
                        "409": _error(
                            "`session_stranded` (clear only): the session was written by another eve version; "
                            "`session_dormant` (clear only, eve dev): a session of an earlier run."
                        ),
                    },
                    mode,
                    body=_body("Control", "No fields."),
                    parameters=sid,
                )
            }
            for name in ("compact", "clear")
        },
        f"{session}/reset": {
            "post": _operation(
                "resetSession",
                "Retire the session for good.",
                {"200": _json({"oneOf": [ref("ResetDone"), ref("NoActiveSession")]}, "Reset, or nothing to reset.")},
                mode,
                body=_body("Reset", "Optionally why."),
                parameters=sid,
            )
        },
        "/eve/v1/connections/{name}/token": {
            "post": _operation(
                "supplyConnectionToken",
                "Supply a connection's token (kept in memory, never stored); with `sessionId` and `requestId`, "
                "resume the turn waiting on that `authorization.required`.",
                {
                    "200": _json(ref("TokenAccepted"), "The token is kept (and the answer delivered)."),
                    "404": _error("No such connection (`connection_not_found`), or no such active session."),
                },
                mode,
                body={
                    "required": True,
                    "description": "The token, and optionally the waiting session and request.",
                    "content": {"application/json": {"schema": ref("ConnectionToken")}},
                },
                parameters=[_path_parameter("name", "The connection's name (its file under agent/connections/).")],
            )
        },
        "/eve/v1/connections/{name}/callback": _sign_in_callback(mode),
        f"{session}/stream": {
            "get": _operation(
                "streamSession",
                "The session's events as NDJSON (stream version 26).",
                {
                    "200": _stream_ok(),
                    "400": _error("`startIndex` is not an integer, or a flag is not a boolean word."),
                    "404": _error("Session not found."),
                },
                mode,
                parameters=_stream_parameters(),
            )
        },
        f"{session}/subagents/{{callId}}/{{childSessionId}}/stream": {
            "get": _operation(
                "streamSubagentSession",
                "A subagent's session stream, by the parent session and the call that opened it.",
                {
                    "200": _stream_ok(),
                    "400": _error("`startIndex` is not an integer, or a flag is not a boolean word."),
                    "404": _error("Session not found (or not a child this call opened)."),
                },
                mode,
                parameters=[
                    *_stream_parameters(),
                    _path_parameter("callId", "The parent's call that opened the child (`agent.started.callId`)."),
                    _path_parameter("childSessionId", "The child session (`agent.started.sessionId`)."),
                ],
            )
        },
    }
    components: JSON = {"schemas": component_schemas()}
    if mode == "development":
        paths["/eve/v1/dev/sessions"] = {
            "get": _operation(
                "listDevSessions",
                "Every session in the store, newest first (served by `eve dev` only; 404 under `eve start`).",
                {"200": _json(ref("DevSessions"), "The sessions.")},
                mode,
            )
        }
        paths["/eve/v1/dev/build"] = {
            "get": _operation(
                "getDevBuild",
                "The generation serving new turns and how the newest rebuild went (served by `eve dev` only).",
                {"200": _json(ref("DevBuild"), "The build status.")},
                mode,
            )
        }
        paths["/eve/v1/dev/schedules/{scheduleId}"] = {
            "post": _operation(
                "fireDevSchedule",
                "Fire a schedule once, by hand (served by `eve dev` only, which never fires them on their cadence).",
                {
                    "200": _json(ref("DevScheduleFired"), "The schedule fired: the sessions it started or reached."),
                    "404": _error("No such schedule (`schedule_not_found`, with `availableScheduleIds`)."),
                },
                mode,
                parameters=[_path_parameter("scheduleId", "The schedule's name (its path under `schedules/`).")],
            )
        }
        components["schemas"]["DevScheduleFired"] = dev_schedule_schema()
        components["schemas"]["DevSessions"] = dev_sessions_schema()
        components["schemas"]["DevBuild"] = dev_build_schema()
    document: JSON = {
        "openapi": "3.1.0",
        "info": {
            "title": "eve",
            "version": __version__,
            "description": "Durable agent sessions over HTTP with an NDJSON event stream (eve stream version 26). "
            f"Request bodies are strict JSON objects of at most {max_body_bytes} bytes.",
        },
        "paths": paths,
        "components": components,
    }
    if mode == "production":
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document
