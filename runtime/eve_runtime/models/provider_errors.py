"""What a failed provider call was: litellm, openai, httpx and socket exceptions as one `ModelError` kind.

Every provider litellm speaks to fails in its own words and classes (a missing OpenAI key is a 500
`InternalServerError`, a missing Anthropic key a 401, a missing Gemini key an
`APIConnectionError`; a refused connection is a 500 whose message is just "Connection error.").
[`classify_error`][eve_runtime.models.provider_errors.classify_error] reads the whole exception
chain (causes, contexts, litellm's `original_exception`) down to the transport error, and returns
a [`ModelError`][eve_runtime.models.base.ModelError] whose `kind` is the same for the same failure
on every provider, whose `retryable` says whether trying again may help, and whose message names
the URL tried when the connection failed. Nothing here imports litellm.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from eve_runtime.models.base import ModelError, ModelErrorKind
from eve_runtime.models.providers import PROVIDER_KEYS

__all__ = ["RETRYABLE_KINDS", "classify_error", "is_content_filter"]

RETRYABLE_KINDS: frozenset[ModelErrorKind] = frozenset(
    {"model-rate-limited", "model-server-error", "model-timeout", "model-connection-lost"}
)
"""The kinds a retry may cure: 429, 5xx, timeouts, connections reset or dropped mid-answer."""

# Exception class names (anywhere in an MRO): litellm's and openai's first, in the order they are tried
# (ContextWindowExceededError is a BadRequestError, so it comes before it).
_BY_CLASS: tuple[tuple[str, ModelErrorKind], ...] = (
    ("ContextWindowExceededError", "model-context-window-exceeded"),
    ("AuthenticationError", "model-authentication-failed"),
    ("PermissionDeniedError", "model-permission-denied"),
    ("NotFoundError", "model-not-found"),
    ("BadRequestError", "model-bad-request"),
    ("UnprocessableEntityError", "model-bad-request"),
    ("RateLimitError", "model-rate-limited"),
    ("Timeout", "model-timeout"),
    ("APITimeoutError", "model-timeout"),
    ("ServiceUnavailableError", "model-server-error"),
    ("InternalServerError", "model-server-error"),
    ("BadGatewayError", "model-server-error"),
    ("BudgetExceededError", "model-call-failed"),
)
_BY_STATUS: dict[int, ModelErrorKind] = {
    400: "model-bad-request",
    401: "model-authentication-failed",
    403: "model-permission-denied",
    404: "model-not-found",
    408: "model-timeout",
    413: "model-bad-request",
    422: "model-bad-request",
    429: "model-rate-limited",
}
# The transport underneath: the standard library's, httpx's and aiohttp's exception class names.
_TIMEOUTS = {"TimeoutError", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "ServerTimeoutError"}
_UNREACHABLE = {"ConnectionRefusedError", "gaierror", "ClientConnectorDNSError", "InvalidURL", "UnsupportedProtocol"}
_LOST = {"ConnectionResetError", "ConnectionAbortedError", "BrokenPipeError", "RemoteProtocolError", "ReadError"}
_LOST |= {"WriteError", "ServerDisconnectedError", "ClientPayloadError", "IncompleteRead", "ClientOSError"}
_LOST |= {"ConnectError", "ClientConnectorError", "APIConnectionError"}  # last: the vaguest ones
_MISSING_KEY = re.compile(
    r"missing credentials|missing \w+ api key|api[_ ]key client option must be set|no api key|"
    r"api[_ ]key (?:is )?(?:not set|missing|required)",
    re.IGNORECASE,
)
_WORDS: tuple[tuple[str, ModelErrorKind], ...] = (
    ("rate limit", "model-rate-limited"),
    ("overloaded", "model-server-error"),
    ("service unavailable", "model-server-error"),
    ("internal server error", "model-server-error"),
    ("timed out", "model-timeout"),
)
_PHRASES = {
    "ConnectionRefusedError": "connection refused",
    "gaierror": "host not found",
    "ClientConnectorDNSError": "host not found",
    "ConnectionResetError": "connection reset by the server",
    "RemoteProtocolError": "the server closed the connection mid-answer",
    "ServerDisconnectedError": "the server closed the connection mid-answer",
    "ClientPayloadError": "the answer was cut off",
    "IncompleteRead": "the answer was cut off",
}
_MAX_RETRY_AFTER = 60.0


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        original = getattr(current, "original_exception", None)
        for nxt in (original, current.__cause__, current.__context__):
            if isinstance(nxt, BaseException):
                pending.append(nxt)


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _unwrap(exc: BaseException) -> BaseException:
    # litellm wraps errors raised while streaming in MidStreamFallbackError (a 503 subclass):
    # the original exception says what really happened.
    inner = getattr(exc, "original_exception", None)
    if type(exc).__name__ == "MidStreamFallbackError" and isinstance(inner, Exception):
        return inner
    return exc


def is_content_filter(exc: BaseException) -> bool:
    """Whether the provider refused the request on content policy (eve reports it as a finish, not a crash)."""
    return "ContentPolicyViolationError" in _names(_unwrap(exc))


def _transport(chain: list[BaseException]) -> tuple[ModelErrorKind, str] | None:
    """The kind of the deepest transport failure in the chain, and a few words on it."""
    ordered: tuple[tuple[set[str], ModelErrorKind], ...] = (
        (_TIMEOUTS, "model-timeout"),
        (_UNREACHABLE, "model-unreachable"),
        (_LOST, "model-connection-lost"),
    )
    for names, kind in ordered:
        for exc in reversed(chain):
            name = type(exc).__name__
            if name in names and not type(exc).__module__.startswith("litellm"):
                return kind, _PHRASES.get(name) or ("timed out" if kind == "model-timeout" else _text(exc))
    return None


def _url(chain: list[BaseException], api_base: str | None) -> str | None:
    """The URL the transport tried (without its query string, which may carry a key), else the configured base."""
    for exc in reversed(chain):
        if type(exc).__module__.startswith("litellm"):
            continue  # litellm's own exceptions carry placeholder requests (api.openai.com, its docs)
        try:
            url = getattr(exc, "request", None).url  # type: ignore[union-attr]
        except (AttributeError, RuntimeError):  # httpx raises RuntimeError when an error has no request
            continue
        if url is not None:
            return str(url).split("?", 1)[0]
    return api_base


# litellm's messages start with its class name, the SDK's, then the provider's ("litellm.RateLimitError:
# RateLimitError: OpenAIException - Rate limit reached"): the provider's words are the part worth reading.
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(?:\w+:\s*)?(?:\w+Exception\s*-\s*)?")


def _text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return _LITELLM_PREFIX.sub("", text) or text or type(exc).__name__


def _status(chain: list[BaseException]) -> int | None:
    for exc in chain:
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and not isinstance(status, bool):
            return status
    return None


def _retry_after(chain: list[BaseException]) -> float | None:
    for exc in chain:
        headers = getattr(getattr(exc, "response", None), "headers", None)
        if not isinstance(headers, Mapping):
            continue
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            try:
                seconds = float(headers.get(name) or "") * scale
            except ValueError:
                continue
            if 0 <= seconds <= _MAX_RETRY_AFTER:
                return seconds
    return None


def _kind(inner: BaseException, chain: list[BaseException], status: int | None, text: str) -> ModelErrorKind:
    names = _names(inner)
    for name, kind in _BY_CLASS:
        if name in names:
            return kind
    if "APIConnectionError" in names:  # litellm says 500 for these: the class says more
        return "model-connection-lost"
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status is not None and status >= 500:
        return "model-server-error"
    lowered = text.lower()
    return next((kind for word, kind in _WORDS if word in lowered), "model-call-failed")


def classify_error(exc: BaseException, model_id: str, *, api_base: str | None = None) -> ModelError:
    """Turn a litellm (or transport) exception into a `ModelError` of one `kind`, retryable or not.

    Args:
        exc: What the call raised.
        model_id: The model called (named in the message).
        api_base: The base URL the call was configured with, when it was (named when the
            exception itself does not say which URL it tried).
    """
    inner = _unwrap(exc)
    chain = list(_chain(exc))
    status = _status(chain)
    provider = getattr(inner, "llm_provider", None) or getattr(exc, "llm_provider", None)
    if not isinstance(provider, str) or not provider:
        provider = model_id.split("/", 1)[0] if "/" in model_id else None
    text = _text(inner)
    common: dict[str, Any] = {"status_code": status, "provider": provider}
    if _MISSING_KEY.search(text) and status != 429:
        variables = PROVIDER_KEYS.get(model_id.split("/", 1)[0], ())
        variable = variables[0] if variables else None
        where = f" (set {variable})" if variable else ""
        return ModelError(
            f"The model {model_id!r} has no API key{where}: {text}",
            retryable=False,
            kind="model-api-key-missing",
            variable=variable,
            **common,
        )
    transport = _transport(chain)
    if transport is not None:
        kind, why = transport
        url = _url(chain, api_base)
        at = f" at {url}" if url else ""
        if kind == "model-unreachable":
            message = (
                f"Could not reach the model {model_id!r}{at}: {why}. Check that the server runs there and that "
                "the URL is right (OPENAI_BASE_URL, or model_options={'api_base': ...})."
            )
        elif kind == "model-timeout":
            message = f"The model {model_id!r}{at} did not answer in time: {why}."
        else:
            message = f"The connection to the model {model_id!r}{at} failed: {why}."
        # litellm reports these as HTTP 500s, but no server answered: there is no status to show.
        common["status_code"] = None
        return ModelError(message, retryable=kind in RETRYABLE_KINDS, kind=kind, url=url, **common)
    kind = _kind(inner, chain, status, text)
    http = f" (HTTP {status})" if status is not None and kind != "model-connection-lost" else ""
    return ModelError(
        f"The model {model_id!r} failed{http}: {text}",
        retryable=kind in RETRYABLE_KINDS,
        kind=kind,
        retry_after=_retry_after(chain) if kind == "model-rate-limited" else None,
        **common,
    )
