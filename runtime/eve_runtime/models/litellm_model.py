"""`LiteLLMModel`: every real provider, through litellm's OpenAI-format streaming API.

litellm is imported lazily, on the first real call only: it takes seconds to import and, unless
`LITELLM_LOCAL_MODEL_COST_MAP` is set first, fetches its price list from the network. Commands
and models that never call a provider (`eve --help`, `eve info`, the `test` model) stay fast.
The OpenAI format itself (messages and tools out, streamed chunks in) is `openai_format.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from eve_runtime.models.base import Finish, ModelError, ModelEvent, ModelRequest, Usage
from eve_runtime.models.openai_format import (
    ToolCallAssembler,
    chunk_events,
    get_field,
    map_finish_reason,
    to_openai_messages,
    to_openai_tools,
    usage_of,
)

__all__ = ["LiteLLMModel", "classify_error"]

# Exception class names (anywhere in the MRO) of litellm, openai, httpx and the standard library.
_RETRYABLE = {"RateLimitError", "Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError"}
_RETRYABLE |= {"InternalServerError", "BadGatewayError", "TimeoutError", "ConnectionError", "TransportError"}
_NOT_RETRYABLE = {"AuthenticationError", "BadRequestError", "NotFoundError", "PermissionDeniedError"}
_NOT_RETRYABLE |= {"UnprocessableEntityError", "ContextWindowExceededError", "BudgetExceededError"}
_RETRYABLE_WORDS = ("overloaded", "service unavailable", "internal server error", "rate limit", "timed out")
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


_litellm_module: Any = None


def _setup_litellm() -> Any:
    # Without this, importing litellm fetches its price list from GitHub.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
    litellm.telemetry = False  # gone in recent versions; harmless there, off in older ones
    if not os.environ.get("LITELLM_LOG"):
        # litellm installs its own stderr handler; keep it to errors unless the user asked for logs.
        for name in _LITELLM_LOGGERS:
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.ERROR)
    return litellm


async def _litellm() -> Any:
    global _litellm_module
    if _litellm_module is None:
        # The first import takes seconds: do it off the event loop so other sessions keep running.
        _litellm_module = await asyncio.to_thread(_setup_litellm)
    return _litellm_module


def _unwrap(exc: BaseException) -> BaseException:
    # litellm wraps errors raised while streaming in MidStreamFallbackError (a 503 subclass):
    # the original exception says what really happened.
    inner = getattr(exc, "original_exception", None)
    if type(exc).__name__ == "MidStreamFallbackError" and isinstance(inner, Exception):
        return inner
    return exc


def _is_content_filter(exc: BaseException) -> bool:
    return any(cls.__name__ == "ContentPolicyViolationError" for cls in type(_unwrap(exc)).__mro__)


def classify_error(exc: BaseException, model_id: str) -> ModelError:
    """Turn a litellm (or transport) exception into a `ModelError` that says whether to retry.

    Retryable: rate limits, timeouts, dropped connections, HTTP 408/409/429/5xx, unavailable or
    overloaded providers. Not retryable: authentication, permission, bad request, unknown model,
    context window exceeded, and anything unrecognised.
    """
    inner = _unwrap(exc)
    names = {cls.__name__ for cls in type(inner).__mro__}
    status = getattr(inner, "status_code", None)
    status_code = status if isinstance(status, int) else None
    provider = getattr(inner, "llm_provider", None) or getattr(exc, "llm_provider", None)
    if not isinstance(provider, str) or not provider:
        provider = model_id.split("/", 1)[0] if "/" in model_id else None
    text = str(inner) or type(inner).__name__
    if names & _NOT_RETRYABLE:
        retryable = False
    elif names & _RETRYABLE:
        retryable = True
    elif status_code is not None:
        retryable = status_code in (408, 409, 429) or status_code >= 500
    else:
        retryable = any(word in text.lower() for word in _RETRYABLE_WORDS)
    return ModelError(
        f"The model {model_id!r} failed: {text}", retryable=retryable, status_code=status_code, provider=provider
    )


def _cost(litellm: Any, model_id: str, raw_usage: Any) -> float | None:
    if raw_usage is None:
        return None
    reported = get_field(raw_usage, "cost")
    if isinstance(reported, (int, float)) and not isinstance(reported, bool):
        return float(reported)
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model_id, usage_object=raw_usage)
        return float(prompt_cost) + float(completion_cost)
    except Exception:  # a model missing from the price map simply has no known cost
        return None


class LiteLLMModel:
    """Any provider litellm supports, by its `provider/model` id (`openai/gpt-5.4-mini`, ...).

    The call streams through `litellm.acompletion`; costs come from litellm's local price map.
    Failures become [`ModelError`][eve_runtime.models.base.ModelError]s saying whether a retry may
    help, and a content-policy refusal ends the call with `Finish(reason="content-filter")`.
    """

    def __init__(self, model_id: str, *, guard: Callable[[str], None]) -> None:
        """Create the adapter (cheap: litellm is imported on the first call).

        Args:
            model_id: The litellm model id, `provider/model`.
            guard: Called with the model id before every request; raises to refuse it
                (`eve_runtime.models.check_allow_model_requests`, which `resolve_model` passes).
        """
        self._model_id = model_id
        self._guard = guard

    @property
    def model_id(self) -> str:
        """The litellm model id."""
        return self._model_id

    def __repr__(self) -> str:
        return f"LiteLLMModel({self._model_id!r})"

    async def context_window_tokens(self) -> int | None:
        """The model's input context window from litellm's model info, or None when litellm does not know it.

        Imports litellm (only compaction asks, right before calling this model anyway).
        """
        litellm = await _litellm()
        try:
            info = litellm.get_model_info(self._model_id)
        except Exception:  # litellm raises a plain Exception for models missing from its map
            return None
        window = info.get("max_input_tokens") or info.get("max_tokens")
        return int(window) if isinstance(window, int) and window > 0 else None

    def completion_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of the `litellm.acompletion` call for a request."""
        settings = request.settings
        kwargs: dict[str, Any] = {}
        if request.tools:
            kwargs["tools"] = to_openai_tools(request.tools)
        if settings.reasoning is not None and settings.reasoning != "provider-default":
            kwargs["reasoning_effort"] = settings.reasoning
        if settings.max_output_tokens is not None:
            kwargs["max_tokens"] = settings.max_output_tokens
        # eve's settings are provider-neutral: a provider that lacks one (reasoning effort, say) ignores it
        # instead of failing the call. model_options can turn this off with drop_params=False.
        kwargs["drop_params"] = True
        kwargs.update(settings.model_options)
        kwargs.update(
            model=self._model_id,
            messages=to_openai_messages(request.messages),
            stream=True,
            stream_options={"include_usage": True},
        )
        return kwargs

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Call the provider and stream its answer.

        Raises:
            ModelRequestsBlockedError: The guard refused (`eve_runtime.models.ALLOW_MODEL_REQUESTS` is False).
            ModelError: The call failed; `retryable` says whether to try again.
        """
        self._guard(self._model_id)
        litellm = await _litellm()
        kwargs = self.completion_kwargs(request)
        tool_calls = ToolCallAssembler()
        raw_reason: str | None = None
        raw_usage: Any = None
        response: Any = None
        # Only the litellm calls sit in `try` blocks: an exception thrown in at a `yield` is not ours to map.
        try:
            try:
                response = await litellm.acompletion(**kwargs)
            except Exception as exc:
                yield self._refusal_or_raise(exc)
                return
            while True:
                try:
                    chunk = await anext(response)
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    yield self._refusal_or_raise(exc)
                    return
                if get_field(chunk, "usage") is not None:
                    raw_usage = get_field(chunk, "usage")
                for event in chunk_events(chunk, tool_calls):
                    yield event
                for choice in get_field(chunk, "choices") or ():
                    raw_reason = get_field(choice, "finish_reason") or raw_reason
        finally:
            if response is not None and hasattr(response, "aclose"):
                await response.aclose()
        for event in tool_calls.finish():
            yield event
        reason, provider_reason = map_finish_reason(raw_reason, has_tool_calls=bool(tool_calls.calls))
        yield Finish(
            reason=reason,
            usage=usage_of(raw_usage) if raw_usage is not None else Usage(),
            cost_usd=_cost(litellm, self._model_id, raw_usage),
            provider_reason=provider_reason,
        )

    def _refusal_or_raise(self, exc: Exception) -> Finish:
        if not _is_content_filter(exc):
            raise classify_error(exc, self._model_id) from exc
        # eve reports a refusal as a finished call with finish reason content-filter, not as a crash.
        return Finish(reason="content-filter", provider_reason="content_policy_violation")
