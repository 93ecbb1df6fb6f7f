"""The model protocol: what eve asks of a language model, and what a model streams back.

A [`Model`][eve_runtime.models.base.Model] turns a [`ModelRequest`][eve_runtime.models.base.ModelRequest]
into an async stream of [`ModelEvent`][eve_runtime.models.base.ModelEvent]s: text, reasoning and
tool-input deltas as they arrive, each finished tool call, optionally an
[`OutputDone`][eve_runtime.models.base.OutputDone] once the output is whole, and exactly one final
[`Finish`][eve_runtime.models.base.Finish] carrying the finish reason, token usage and cost.
A failed call raises [`ModelError`][eve_runtime.models.base.ModelError], which says what kind of
failure it is and whether a retry may succeed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from eve_runtime.errors import RuntimeFailure
from eve_runtime.messages import Message, ToolCall

__all__ = [
    "Finish",
    "FinishReason",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelEvent",
    "ModelRequest",
    "ModelRequestsBlockedError",
    "ModelSettings",
    "OutputDone",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolDefinition",
    "ToolInputDelta",
    "Usage",
]

FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]
"""Why a model call ended, in eve's (and the AI SDK's) vocabulary."""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as the model is told about it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    """JSON Schema of the tool's input (always an object schema)."""


@dataclass(frozen=True)
class ModelSettings:
    """Per-call options taken from the agent's configuration."""

    reasoning: str | None = None
    """Provider-neutral reasoning effort (`none` ... `xhigh`), or None for the provider's default."""
    max_output_tokens: int | None = None
    model_options: Mapping[str, Any] = field(default_factory=dict)
    """Passed through to the provider call (litellm keyword arguments)."""


@dataclass(frozen=True)
class ModelRequest:
    """One model call: the conversation so far and the tools on offer."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    settings: ModelSettings = field(default_factory=ModelSettings)


@dataclass(frozen=True)
class Usage:
    """Tokens one model call used."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call; its input follows as deltas."""

    call_id: str
    name: str


@dataclass(frozen=True)
class ToolInputDelta:
    """A piece of a tool call's JSON input text."""

    call_id: str
    delta: str


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call is complete, with its parsed input."""

    call: ToolCall


@dataclass(frozen=True)
class OutputDone:
    """The model streamed all of its output; its usage and the end of the call are still to come.

    Optional. A provider's client may work a while between the two (litellm assembles the whole
    response, about a third of a burst's parsing time): on this event the engine writes and
    streams the deltas so far at once, instead of after that work.
    """


@dataclass(frozen=True)
class Finish:
    """The end of a model call. Always the last event of a stream."""

    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    """The call's cost when the provider (through litellm's price map) reported one."""
    provider_reason: str | None = None
    """The provider's own finish reason, when it differs from `reason`."""


ModelEvent = TextDelta | ReasoningDelta | ToolCallStarted | ToolInputDelta | ToolCallFinished | OutputDone | Finish
"""Anything a model stream yields."""


ModelErrorKind = Literal[
    "model-api-key-missing",
    "model-authentication-failed",
    "model-permission-denied",
    "model-not-found",
    "model-bad-request",
    "model-context-window-exceeded",
    "model-rate-limited",
    "model-server-error",
    "model-timeout",
    "model-connection-lost",
    "model-unreachable",
    "model-call-failed",
]
"""What kind of failure a model call had, the same for every provider (`details.semanticErrorId` on the stream).

Retried: `model-rate-limited` (429), `model-server-error` (5xx), `model-timeout` and
`model-connection-lost` (a connection reset or dropped mid-answer). The rest fail at once:
a missing or refused key, an unknown model, a bad request, and `model-unreachable` (nothing
answers at the URL: connection refused, or the host is not found).
"""


class ModelError(RuntimeFailure):
    """A model call failed.

    Attributes:
        retryable: Whether the same call may succeed if tried again (rate limits, timeouts,
            overloaded or unavailable providers, dropped connections).
        status_code: The provider's HTTP status, when known.
        provider: The provider (litellm's `llm_provider`), when known.
        kind: What kind of failure it is (see `ModelErrorKind`).
        url: The URL the call tried, for connection failures.
        variable: The environment variable the missing key belongs in, for `model-api-key-missing`.
        retry_after: Seconds the provider asked to wait before a retry (`Retry-After`), when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status_code: int | None = None,
        provider: str | None = None,
        kind: ModelErrorKind = "model-call-failed",
        url: str | None = None,
        variable: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status_code = status_code
        self.provider = provider
        self.kind: ModelErrorKind = kind
        self.url = url
        self.variable = variable
        self.retry_after = retry_after

    @property
    def terminal(self) -> bool:
        """Whether the failure ends the session, as eve decides: the provider refused the request itself.

        A non-retryable 4xx (authentication, permission, an unknown model, a malformed request, a
        context window exceeded): sending the session's next message would fail the same way.
        """
        status = self.status_code
        return not self.retryable and status is not None and 400 <= status < 500 and status not in (408, 409, 429)


class ModelRequestsBlockedError(ModelError):
    """A real provider was called while `ALLOW_MODEL_REQUESTS` is False (in tests)."""

    def __init__(self, model_id: str) -> None:
        super().__init__(
            f"Refusing to call the real model {model_id!r}: eve_runtime.models.ALLOW_MODEL_REQUESTS is False. "
            "Use the 'test' model or a FunctionModel in tests.",
            retryable=False,
        )


@runtime_checkable
class Model(Protocol):
    """A language model eve can call.

    Implementations stream [`ModelEvent`][eve_runtime.models.base.ModelEvent]s and end with
    exactly one [`Finish`][eve_runtime.models.base.Finish]; they raise
    [`ModelError`][eve_runtime.models.base.ModelError] when the call fails.

    A model may also have `remote = True` (it answers over the network, as `LiteLLMModel` does):
    the engine then writes the step's events so far while the request goes out, instead of
    lingering to write them with the model's first output, and `preflight(request)` (see
    `eve_runtime.engine.model_call.ModelCall.preflight`).
    """

    @property
    def model_id(self) -> str:
        """The id this model was resolved from (`test`, `openai/gpt-4o`, ...)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Call the model and stream what it produces."""
        ...
