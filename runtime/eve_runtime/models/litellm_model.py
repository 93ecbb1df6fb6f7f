"""`LiteLLMModel`: every real provider, through litellm's OpenAI-format streaming API.

litellm is imported lazily, on the first real call only: it takes seconds to import and, unless
`LITELLM_LOCAL_MODEL_COST_MAP` is set first, fetches its price list from the network. Commands
and models that never call a provider (`eve --help`, `eve info`, the `test` model) stay fast.
The OpenAI format itself (messages and tools out, streamed chunks in) is `openai_format.py`, and
what a failure was (its kind, whether to retry) `provider_errors.py`.

A provider that needs a key which is not set fails before anything is imported or sent. The SDKs'
own retries are off (`max_retries=0`): eve retries the call itself, visibly (`step.retrying`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from eve_runtime.models.base import Finish, ModelError, ModelEvent, ModelRequest, OutputDone, Usage
from eve_runtime.models.openai_format import (
    ToolCallAssembler,
    chunk_events,
    get_field,
    map_finish_reason,
    to_openai_messages,
    to_openai_tools,
    usage_of,
)
from eve_runtime.models.provider_errors import classify_error, is_content_filter
from eve_runtime.models.providers import missing_key, missing_key_message

__all__ = ["YIELD_INTERVAL", "LiteLLMModel", "classify_error", "preload_litellm"]

_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
logger = logging.getLogger("eve.model")


_litellm_module: Any = None

YIELD_INTERVAL = 0.001
"""Seconds of reading a provider's stream after which the call lets the event loop run (see `stream`)."""


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
        # The first import takes seconds: do it off the event loop so other sessions keep running
        # (a preload under way holds the import lock: this thread then just waits for it).
        _litellm_module = await asyncio.to_thread(_setup_litellm)
    return _litellm_module


def _preload() -> None:
    global _litellm_module
    try:
        module = _setup_litellm()
    except Exception:  # the first call imports it again and reports what is wrong
        logger.debug("preloading litellm failed", exc_info=True)
        return
    try:  # litellm counts tokens on a call's first response; the first count loads tiktoken's tables
        module.token_counter(model=WARM_TOKENIZER_MODEL, text="warm")
    except Exception:
        logger.debug("warming litellm's tokenizer failed", exc_info=True)
    _litellm_module = module


WARM_TOKENIZER_MODEL = "gpt-4o"
"""A model whose tokenizer the preload warms: OpenAI's, which litellm also counts other models with."""


def preload_litellm() -> None:
    """Start importing litellm in a background thread (a server with a real model calls it at start).

    The import takes seconds, and litellm's first token count (on a call's first response) 0.3 s
    more to load tiktoken's tables: both done while the server starts, the first turn pays neither.
    """
    if _litellm_module is None:
        threading.Thread(target=_preload, name="eve-litellm-import", daemon=True).start()


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


def _api_base(model_id: str, kwargs: dict[str, Any]) -> str | None:
    """The base URL a call is configured with, if any (`api_base` or `base_url`, else `OPENAI_BASE_URL` for openai)."""
    for key in ("api_base", "base_url"):
        if isinstance(kwargs.get(key), str) and kwargs[key]:
            return str(kwargs[key])
    if model_id.startswith("openai/"):
        return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None
    return None


class LiteLLMModel:
    """Any provider litellm supports, by its `provider/model` id (`openai/gpt-5.4-mini`, ...).

    The call streams through `litellm.acompletion`; costs come from litellm's local price map.
    Failures become [`ModelError`][eve_runtime.models.base.ModelError]s saying whether a retry may
    help, and a content-policy refusal ends the call with `Finish(reason="content-filter")`.
    """

    remote = True
    """The answer comes over the network: the engine writes a step's events so far while the request goes out."""

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
        # eve retries failed calls itself (and says so on the stream): the SDK's silent retries would multiply them.
        kwargs["max_retries"] = 0
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
            ModelError: The call failed; `kind` says how, `retryable` whether to try again. A provider
                key that is not set fails here, before any request (`model-api-key-missing`).
        """
        self._guard(self._model_id)
        self.preflight(request)
        litellm = await _litellm()
        kwargs = self.completion_kwargs(request)
        api_base = _api_base(self._model_id, kwargs)
        tool_calls = ToolCallAssembler()
        raw_reason: str | None = None
        raw_usage: Any = None
        response: Any = None
        yielded = time.perf_counter()
        # Only the litellm calls sit in `try` blocks: an exception thrown in at a `yield` is not ours to map.
        try:
            try:
                response = await litellm.acompletion(**kwargs)
            except Exception as exc:
                yield self._refusal_or_raise(exc, api_base)
                return
            while True:
                try:
                    chunk = await anext(response)
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    yield self._refusal_or_raise(exc, api_base)
                    return
                if get_field(chunk, "usage") is not None:
                    raw_usage = get_field(chunk, "usage")
                for event in chunk_events(chunk, tool_calls):
                    yield event
                finished = raw_reason
                for choice in get_field(chunk, "choices") or ():
                    raw_reason = get_field(choice, "finish_reason") or raw_reason
                if raw_reason is not None and finished is None:
                    # The output is whole; litellm now assembles the whole response before it ends the stream.
                    yield OutputDone()
                # litellm's stream does not reach the event loop while chunks are buffered (a burst):
                # yield to it, so the text emitted so far is written and streamed meanwhile. Once a
                # millisecond, not after every chunk: each turn of the loop costs a poll of its sockets.
                now = time.perf_counter()
                if now - yielded >= YIELD_INTERVAL:
                    await asyncio.sleep(0)
                    yielded = time.perf_counter()
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

    def preflight(self, request: ModelRequest) -> None:
        """Refuse a request that cannot succeed, without importing litellm: the provider's key is not set.

        The engine calls it before anything else of a step (compaction would import litellm first).

        Raises:
            ModelError: `model-api-key-missing`, naming the variable (not retryable).
        """
        options = request.settings.model_options
        variable = missing_key(self._model_id, options, os.environ)
        if variable is not None:
            raise ModelError(
                missing_key_message(self._model_id, variable, options, os.environ),
                retryable=False,
                provider=self._model_id.split("/", 1)[0],
                kind="model-api-key-missing",
                variable=variable,
            )

    def _refusal_or_raise(self, exc: Exception, api_base: str | None) -> Finish:
        if not is_content_filter(exc):
            raise classify_error(exc, self._model_id, api_base=api_base) from exc
        # eve reports a refusal as a finished call with finish reason content-filter, not as a crash.
        return Finish(reason="content-filter", provider_reason="content_policy_violation")
