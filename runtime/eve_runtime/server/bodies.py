"""Reading, parsing and validating request bodies of the `/eve/v1` routes.

Bodies are read as a stream and never buffered past the size cap (413 as soon as it is
crossed, for chunked bodies too). Parsing is strict: the body must be UTF-8 JSON holding one
object, without `NaN`/`Infinity`, non-finite numbers, duplicate keys, lone surrogates (UTF-8
cannot carry them, and every stored event must stay valid UTF-8 NDJSON) or nesting deeper than
[`MAX_JSON_DEPTH`][eve_runtime.server.bodies.MAX_JSON_DEPTH]. Validation messages are eve's
where eve has one (`eve-golden/k_bad_inputs.json`); every failure is an
[`ApiError`][eve_runtime.server.responses.ApiError], answered as `{"ok": false, "error", "code"?}`.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from starlette.requests import ClientDisconnect, Request

from eve_runtime.server.file_parts import file_part
from eve_runtime.server.responses import ApiError

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "CreateRequest",
    "FollowUpRequest",
    "parse_object",
    "read_body",
    "validate_cancel",
    "validate_control",
    "validate_create",
    "validate_follow_up",
    "validate_reset",
]

MAX_BODY_BYTES = 1024 * 1024
"""The default cap on a request body (1 MiB)."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a body may have."""
MAX_ID_LENGTH = 256
"""The longest `idempotencyKey`, `operationId`, `turnId` or `requestId`."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

INVALID_JSON = "Invalid JSON body."
NOT_AN_OBJECT = "Expected a JSON object."
CONTINUATION_TOKEN = "Session-ID routes do not accept 'continuationToken'."
MESSAGE_EMPTY = "Expected 'message' to be non-empty when provided."
MESSAGE_TYPE = "Expected 'message' to be a string or an array of text/file parts."
TEXT_PART_EMPTY = "Expected every text part of 'message' to have a non-empty 'text' string."
CONTEXT_TYPE = "Expected 'clientContext' to be a string, string array, or JSON object."
CONTEXT_ENTRIES = "Expected 'clientContext' array entries to be non-empty strings."
OUTPUT_SCHEMA = "Expected 'outputSchema' to be a JSON-serializable object."
TURN_POLICY = "Expected 'turnPolicy' to be either 'queue' or 'steer'."
MODE = "Expected 'mode' to be a string such as 'conversation' or 'task'."
RESPONSES_ON_CREATE = "'inputResponses' is only accepted for an existing session."
CREATE_WITHOUT_MESSAGE = (
    "Creating a session without a message does not accept 'clientContext', 'callback', or 'outputSchema'."
)
CALLBACK = "Remote-agent callbacks ('callback') are not supported yet."
FORWARDED = "Forwarded principals ('forwardedPrincipal', 'forwardedAuth') are only accepted from trusted callers."
EXCLUSIVE = "'message' and 'inputResponses' are mutually exclusive."
NOTHING_TO_SEND = "Expected a non-empty 'message' or a non-empty 'inputResponses' array."
RESPONSES_EMPTY = "Expected 'inputResponses' to be a non-empty array."
RESPONSES_ENTRY = (
    "Expected every 'inputResponses' entry to be an object with a non-empty string 'requestId' and optional "
    "string 'optionId' and 'text'."
)
TURN_ID = "Expected 'turnId' to be a non-empty string."
REASON = "Expected 'reason' to be a non-empty string."


async def read_body(request: Request, *, limit: int, timeout: float) -> bytes:
    """Read the body, at most `limit` bytes, within `timeout` seconds.

    Raises:
        ApiError: 413 past the limit (announced by `content-length` or crossed while reading a
            chunked body; the rest is never read), 408 on a slow body, 400 on a bad
            `content-length` or a client that went away.
    """
    too_large = ApiError(413, f"The request body is larger than the limit of {limit} bytes.", "body_too_large")
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdigit():
            raise ApiError(400, "Invalid Content-Length header.", "invalid_content_length")
        if int(declared) > limit:
            raise too_large
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(timeout):
            async with contextlib.aclosing(request.stream()) as stream:
                async for chunk in stream:
                    size += len(chunk)
                    if size > limit:
                        raise too_large  # the rest of the body is never read
                    chunks.append(chunk)
    except TimeoutError:
        raise ApiError(408, f"Timed out after {timeout:g} s reading the request body.", "body_timeout") from None
    except ClientDisconnect:
        raise ApiError(400, "The client disconnected while sending the body.", "client_disconnected") from None
    return b"".join(chunks)


class _Invalid(ValueError):
    """A body that is JSON-shaped but breaks one of the strict rules."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Invalid("an object has the same key twice")
        result[key] = value
    return result


def _constant(name: str) -> Any:
    raise _Invalid(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Invalid(f"the number {text[:40]} is too large")
    return value


def _check_tree(value: Any) -> None:
    """Reject lone surrogates in strings and keys, and nesting deeper than `MAX_JSON_DEPTH` (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise _Invalid(f"it is nested deeper than {MAX_JSON_DEPTH} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    _check_text(key)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid("a string holds a lone surrogate (\\ud800-\\udfff), which UTF-8 cannot carry") from None


def parse_object(raw: bytes) -> dict[str, Any] | None:
    """The body as a JSON object; None when there is no body (zero bytes).

    Raises:
        ApiError: 400 for anything but strict UTF-8 JSON holding one object.
    """
    if not raw:
        return None  # no body at all (whitespace alone is not JSON)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "Invalid JSON body: it is not valid UTF-8.", "invalid_json") from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
        _check_tree(value)
    except _Invalid as exc:
        raise ApiError(400, f"Invalid JSON body: {exc}.", "invalid_json") from None
    except RecursionError:
        raise ApiError(
            400, f"Invalid JSON body: it is nested deeper than {MAX_JSON_DEPTH} levels.", "invalid_json"
        ) from None
    except ValueError:  # JSONDecodeError, and integers longer than Python converts
        raise ApiError(400, INVALID_JSON) from None
    if not isinstance(value, dict):
        raise ApiError(400, NOT_AN_OBJECT)
    return value


# -- validation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateRequest:
    """A validated `POST /eve/v1/session` body."""

    message: dict[str, Any] | None
    """The engine's `message` delivery payload, or None to create a parked session."""
    operation_id: str | None
    idempotency_key: str | None


@dataclass(frozen=True)
class FollowUpRequest:
    """A validated `POST /eve/v1/session/:id` body."""

    kind: Literal["message", "responses"]
    payload: dict[str, Any]
    idempotency_key: str | None


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def _given(body: Mapping[str, Any], key: str) -> bool:
    """Whether a field is present (a present `null` is a value, and has the wrong type)."""
    return key in body


def _id_field(body: Mapping[str, Any], key: str, message: str | None = None) -> str | None:
    """An optional id-like string: non-empty, at most `MAX_ID_LENGTH` characters, no control characters."""
    if key not in body:
        return None
    value = body[key]
    problem = message or f"Expected '{key}' to be a non-empty string of at most {MAX_ID_LENGTH} characters."
    if not isinstance(value, str) or not value:
        raise _bad(problem)
    if len(value) > MAX_ID_LENGTH:
        raise _bad(f"Expected '{key}' to be at most {MAX_ID_LENGTH} characters long.")
    if _CONTROL.search(value):
        raise _bad(f"Expected '{key}' to contain no control characters (such as NUL or line breaks).")
    return value


def _no_continuation_token(body: Mapping[str, Any]) -> None:
    if "continuationToken" in body:
        raise _bad(CONTINUATION_TOKEN)


def _message(value: Any) -> tuple[str, list[dict[str, Any]]]:
    """A `message` as flattened text and its parts (file parts keep their bytes: see `server.file_parts`)."""
    if isinstance(value, str):
        if not value:
            raise _bad(MESSAGE_EMPTY)
        return value, [{"text": value, "type": "text"}]
    if not isinstance(value, list):
        raise _bad(MESSAGE_TYPE)
    if not value:
        raise _bad(MESSAGE_EMPTY)
    parts: list[dict[str, Any]] = []
    lines: list[str] = []
    for part in value:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("file", "image"):
            kept, line = file_part(part)
            parts.append(kept)
            lines.append(line)
            continue
        if kind != "text":
            raise _bad(MESSAGE_TYPE)
        text = part.get("text")
        if not isinstance(text, str) or not text:
            raise _bad(TEXT_PART_EMPTY)
        parts.append({"text": text, "type": "text"})
        lines.append(text)
    return "\n".join(lines), parts


def _client_context(value: Any) -> Any:
    if isinstance(value, str | dict):
        return value
    if isinstance(value, list):
        if not all(isinstance(entry, str) and entry for entry in value):
            raise _bad(CONTEXT_ENTRIES)
        return value
    raise _bad(CONTEXT_TYPE)


def _turn_fields(body: Mapping[str, Any], payload: dict[str, Any]) -> None:
    """`clientContext` and `outputSchema`, validated into `payload`."""
    if _given(body, "clientContext"):
        payload["clientContext"] = _client_context(body["clientContext"])
    if _given(body, "outputSchema"):
        if not isinstance(body["outputSchema"], dict):
            raise _bad(OUTPUT_SCHEMA)
        payload["outputSchema"] = body["outputSchema"]


def _turn_policy(body: Mapping[str, Any]) -> str:
    if "turnPolicy" not in body:
        return "steer"
    policy = body["turnPolicy"]
    if policy not in ("queue", "steer"):
        raise _bad(TURN_POLICY)
    return str(policy)


def _message_payload(body: Mapping[str, Any]) -> dict[str, Any]:
    text, parts = _message(body["message"])
    payload: dict[str, Any] = {"message": text, "parts": parts, "turnPolicy": _turn_policy(body)}
    _turn_fields(body, payload)
    return payload


def validate_create(body: Mapping[str, Any] | None) -> CreateRequest:
    """Validate a create body (None: no body, the same as `{}`).

    `mode` `"task"` runs the session without a person; any other string (`"conversation"`, and
    `"background"` as eve 0.80.1 answers it with 202) is an ordinary conversation. Departures from
    eve: `turnPolicy` is validated on create too (eve ignores it there), and a `mode` that is not
    a string is refused (eve 0.80.1 accepts anything).
    """
    body = body or {}
    _no_continuation_token(body)
    if "inputResponses" in body:
        raise _bad(RESPONSES_ON_CREATE)
    if _given(body, "forwardedPrincipal") or _given(body, "forwardedAuth"):
        raise ApiError(403, FORWARDED, "forbidden")
    if _given(body, "mode") and not isinstance(body["mode"], str):
        raise _bad(MODE)
    operation_id = _id_field(body, "operationId")
    idempotency_key = _id_field(body, "idempotencyKey")
    if not _given(body, "message"):
        if any(_given(body, key) for key in ("clientContext", "callback", "outputSchema")):
            raise _bad(CREATE_WITHOUT_MESSAGE)
        _turn_policy(body)
        return CreateRequest(message=None, operation_id=operation_id, idempotency_key=idempotency_key)
    if _given(body, "callback"):
        raise ApiError(400, CALLBACK, "not_implemented")
    message = _message_payload(body)
    if body.get("mode") == "task":
        message["mode"] = "task"  # the session runs without a person: budgets crossed fail instead of asking
    return CreateRequest(message=message, operation_id=operation_id, idempotency_key=idempotency_key)


def _input_responses(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise _bad(RESPONSES_EMPTY)
    responses: list[dict[str, Any]] = []
    for entry in value:
        if not isinstance(entry, dict):
            raise _bad(RESPONSES_ENTRY)
        request_id = _id_field(entry, "requestId", RESPONSES_ENTRY)
        if request_id is None:
            raise _bad(RESPONSES_ENTRY)
        response: dict[str, Any] = {"requestId": request_id}
        for key in ("optionId", "text"):
            if _given(entry, key):
                if not isinstance(entry[key], str):
                    raise _bad(RESPONSES_ENTRY)
                response[key] = entry[key]
        responses.append(response)
    return responses


def validate_follow_up(body: Mapping[str, Any] | None) -> FollowUpRequest:
    """Validate a follow-up body: exactly one of `message` and `inputResponses`."""
    body = body or {}
    _no_continuation_token(body)
    has_message, has_responses = _given(body, "message"), _given(body, "inputResponses")
    if has_message and has_responses:
        raise _bad(EXCLUSIVE)
    if not has_message and not has_responses:
        raise _bad(NOTHING_TO_SEND)
    idempotency_key = _id_field(body, "idempotencyKey")
    if has_message:
        return FollowUpRequest("message", _message_payload(body), idempotency_key)
    _turn_policy(body)  # validated, though answers never steer
    payload: dict[str, Any] = {"inputResponses": _input_responses(body["inputResponses"])}
    _turn_fields(body, payload)
    return FollowUpRequest("responses", payload, idempotency_key)


def validate_cancel(body: Mapping[str, Any] | None) -> str | None:
    """Validate a cancel body; the turn id it names, if any."""
    body = body or {}
    _no_continuation_token(body)
    return _id_field(body, "turnId", TURN_ID)


def validate_reset(body: Mapping[str, Any] | None) -> str | None:
    """Validate a reset body; its reason, if any."""
    body = body or {}
    _no_continuation_token(body)
    if "reason" not in body:
        return None
    reason = body["reason"]
    if not isinstance(reason, str) or not reason:
        raise _bad(REASON)
    return reason


def validate_control(body: Mapping[str, Any] | None) -> None:
    """Validate a compact or clear body (none, or an object)."""
    _no_continuation_token(body or {})
