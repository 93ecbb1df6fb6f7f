"""One step's model call: streamed into the turn's events, retried, and interruptible.

Text, reasoning and tool-input deltas are emitted as they arrive (`message.appended`,
`reasoning.appended`, `action.input.appended`). A steering message aborts the call while it has
produced no output yet ([`Steered`][eve_runtime.engine.model_call.Steered]); a cancel aborts it at any
time ([`Cancelled`][eve_runtime.engine.model_call.Cancelled]). Retryable provider errors are retried
with exponential backoff; a non-retryable one, or the last retry, fails the step
([`StepFailed`][eve_runtime.engine.model_call.StepFailed]).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.conversation import REPLY_TOOL
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.events.actions import ActionInputAppended
from eve_runtime.events.catalog import StepAt, StreamEvent
from eve_runtime.events.turns import MessageAppended, ReasoningAppended
from eve_runtime.messages import ToolCall
from eve_runtime.models.base import (
    Finish,
    Model,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
)

__all__ = ["Cancelled", "ModelCall", "ModelResult", "StepFailed", "Steered"]


class Steered(Exception):
    """The model call was aborted by a steering message before any output."""


class Cancelled(Exception):
    """The turn was cancelled."""


class StepFailed(Exception):
    """The step failed: `code` is what `step.failed` reports (`STEP_FAILED` is retried by the runner).

    With `terminal`, the failure ends the session (`turn.failed.terminal`, then `session.failed`).
    """

    def __init__(
        self, code: str, message: str, details: dict[str, Any] | None = None, *, terminal: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.terminal = terminal


@dataclass
class ModelResult:
    """What the model produced in one call."""

    text: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    finish: Finish | None = None


class ModelCall:
    """The model call of one step attempt (a new one per attempt)."""

    def __init__(
        self,
        emit: Callable[[StreamEvent], None],
        at: StepAt,
        options: RuntimeOptions,
        *,
        quiet: frozenset[str] = frozenset(),
    ) -> None:
        self.emit = emit
        self.at = at
        self.options = options
        self.quiet = quiet | {REPLY_TOOL}
        """Tools whose input is not streamed as `action.input.appended` (the output-schema reply, skill loads)."""
        self.output_started = False
        """Whether text or a tool call came out (a steering message then waits for the boundary)."""
        self._task: asyncio.Task[ModelResult] | None = None
        self._interrupt: Literal["steer", "cancel"] | None = None
        self._tool_names: dict[str, str] = {}

    def steer(self) -> None:
        """A steering message: abort the call if it has produced no output yet."""
        if self._task is not None and not self.output_started and self._interrupt is None:
            self._interrupt = "steer"
            self._task.cancel()

    def cancel(self) -> None:
        """A cancel: abort the call."""
        self._interrupt = "cancel"
        if self._task is not None:
            self._task.cancel()

    async def run(
        self, model: Model, request: ModelRequest, *, cancelled: Callable[[], bool], steered: Callable[[], bool]
    ) -> ModelResult:
        """Call the model (with retries) until it finished, or raise `Steered`, `Cancelled` or `StepFailed`."""
        options = self.options
        delay = options.provider_backoff
        for attempt in range(options.provider_attempts):
            if cancelled():
                raise Cancelled()
            if steered() and not self.output_started:
                raise Steered()  # a message arrived while the step was being prepared
            self._task = asyncio.create_task(self._stream(model, request))
            try:
                return await self._task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the runner itself is being cancelled (shutdown): not ours to translate
                if self._interrupt == "steer":
                    raise Steered() from None
                raise Cancelled() from None
            except ModelError as exc:
                if not exc.retryable:
                    raise StepFailed("MODEL_CALL_FAILED", str(exc), error_details(exc), terminal=exc.terminal) from exc
                if attempt + 1 == options.provider_attempts:
                    raise StepFailed("STEP_FAILED", str(exc), error_details(exc)) from exc
                await asyncio.sleep(delay)
                delay *= 2
            finally:
                self._task = None
        raise AssertionError("unreachable")

    async def _stream(self, model: Model, request: ModelRequest) -> ModelResult:
        emit, at = self.emit, self.at
        result = ModelResult()
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                if event.text:
                    if not self.output_started:
                        crashpoint("during-model-call")
                    self.output_started = True
                    result.text += event.text
                    emit(MessageAppended(at, event.text))
            elif isinstance(event, ReasoningDelta):
                result.reasoning += event.text
                emit(ReasoningAppended(at, event.text))
            elif isinstance(event, ToolCallStarted):
                self.output_started = True
                self._tool_names[event.call_id] = event.name
            elif isinstance(event, ToolInputDelta):
                self.output_started = True
                name = self._tool_names.get(event.call_id, "")
                if name in self.quiet:
                    continue
                emit(ActionInputAppended(at, event.call_id, event.delta, name))
            elif isinstance(event, ToolCallFinished):
                result.calls.append(event.call)
            elif isinstance(event, Finish):
                result.finish = event
        if result.finish is None:
            result.finish = Finish(reason="other")
        return result


def error_details(error: ModelError) -> dict[str, Any]:
    """The `details` of a failed model call."""
    details: dict[str, Any] = {"retryable": error.retryable}
    if error.status_code is not None:
        details["statusCode"] = error.status_code
    if error.provider is not None:
        details["provider"] = error.provider
    return details
