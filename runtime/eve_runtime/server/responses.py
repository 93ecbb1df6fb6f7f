"""JSON answers of the `/eve/v1` routes: `ApiError`, the error body it is answered with, compact JSON.

Every refusal is an [`ApiError`][eve_runtime.server.responses.ApiError], answered as
`{"ok": false, "error", "code"?}` with its status and headers. `json_response` answers compact UTF-8
JSON with `cache-control: no-store`, U+2028 and U+2029 escaped.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eve_runtime.store.base import StoreUnavailable

__all__ = [
    "JSON_TYPE",
    "ApiError",
    "CatchAll",
    "dump_json",
    "error_response",
    "http_error",
    "internal_error",
    "json_response",
    "store_unavailable",
]

JSON_TYPE = "application/json"
logger = logging.getLogger("eve.server")
_SEPARATOR_ESCAPES = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})


class ApiError(Exception):
    """A request the API refuses: answered as `{"ok": false, "error", "code"?}` with `status`."""

    def __init__(
        self,
        status: int,
        error: str,
        code: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.code = code
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        """More fields of the body (`eveVersion` of a stranded session)."""


def dump_json(value: Any) -> bytes:
    """Compact UTF-8 JSON (ASCII escapes only where UTF-8 cannot carry a character)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.translate(_SEPARATOR_ESCAPES).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def json_response(
    data: Any,
    status: int = 200,
    *,
    headers: Mapping[str, str] | None = None,
    media_type: str = JSON_TYPE,
) -> Response:
    """A JSON response with `cache-control: no-store`."""
    all_headers = {"cache-control": "no-store", **(headers or {})}
    return Response(dump_json(data), status_code=status, headers=all_headers, media_type=media_type)


def error_response(error: ApiError) -> Response:
    """The JSON response of an [`ApiError`][eve_runtime.server.responses.ApiError]."""
    body: dict[str, Any] = {"ok": False, "error": error.error, **error.extra}
    if error.code is not None:
        body["code"] = error.code
    return json_response(body, error.status, headers=error.headers)


def store_unavailable(exc: StoreUnavailable) -> ApiError:
    """503 `store_unavailable` with `Retry-After`: nothing was stored, the client retries later."""
    message = f"The session store is unavailable ({exc.reason}): nothing was stored; retry in {exc.retry_after} s."
    return ApiError(503, message, "store_unavailable", headers={"retry-after": str(exc.retry_after)})


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's 404 and 405 (and any other HTTPException) as eve's JSON errors."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    where = f"[{request.method}] {request.url.path[:200]}"
    if exc.status_code == 404:
        return error_response(ApiError(404, f"Cannot find any route matching {where}.", "not_found"))
    if exc.status_code == 405:
        allowed = headers.get("Allow", "")
        message = f"Method not allowed: {where}. Allowed: {allowed}."
        return error_response(ApiError(405, message, "method_not_allowed", headers=headers))
    return error_response(ApiError(exc.status_code, str(exc.detail), headers=headers))


def internal_error(message: str) -> Response:
    """A logged 500 answer whose `errorId` is also in the log line with the traceback."""
    error_id = uuid.uuid4().hex
    logger.exception("%s (errorId %s)", message, error_id)
    return json_response({"ok": False, "error": message, "code": "internal_error", "errorId": error_id}, 500)


class CatchAll:
    """The last line: an exception that escaped everything else becomes a logged 500 JSON answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except StoreUnavailable as exc:
            logger.warning("the store is unavailable: %s", exc)
            if not started:
                await error_response(store_unavailable(exc))(scope, receive, send)
        except Exception:  # everything else: a logged 500
            response = internal_error("Internal server error.")
            if not started:
                await response(scope, receive, send)
