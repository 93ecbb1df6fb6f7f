"""One step's model call: streamed into the turn's events, retried, and interruptible.

Text, reasoning and tool-input deltas are emitted as they arrive (`message.appended`,
`reasoning.appended`, `action.input.appended`). The first of a remote model's call, and all of
them once it says its output is done (`OutputDone`), are *settled*:
the call reads on from the provider once it is durable (`Emitter.settle`: at once when nobody
watches the session), so a burst of buffered chunks does not hold up the first token. A steering
message aborts the call while it has produced no output yet
([`Steered`][eve_runtime.engine.model_call.Steered]); a cancel aborts it at any time, the wait
before a retry included ([`Cancelled`][eve_runtime.engine.model_call.Cancelled]).

Provider errors a retry may cure (429, 5xx, timeouts, dropped connections: `ModelError.retryable`)
are retried with exponential backoff (or after the provider's `Retry-After`), each retry announced
by a `step.retrying` event first. Any other error, or the last attempt's, fails the step with
`MODEL_CALL_FAILED` ([`StepFailed`][eve_runtime.engine.model_call.StepFailed]), its details naming
the kind of failure (`semanticErrorId`) the same way for every provider. The step is not run
again after that: its attempts were the model call's.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.conversation import REPLY_TOOL
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.events.actions import ActionInputAppended
from eve_runtime.events.catalog import StepAt, StreamEvent
from eve_runtime.events.extensions import StepRetrying
from eve_runtime.events.turns import MessageAppended, ReasoningAppended
from eve_runtime.messages import ToolCall
from eve_runtime.models.base import (
    Finish,
    Model,
    ModelError,
    ModelRequest,
    OutputDone,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
)

__all__ = ["Cancelled", "ModelCall", "ModelResult", "Pace", "StepFailed", "Steered", "error_details", "retry_delay"]

logger = logging.getLogger("eve.model")
_T = TypeVar("_T")


class Pace(Protocol):
    """The writes of a remote model's call (the session's emitter: `Emitter.hurry`, `Emitter.settle`)."""

    def hurry(self) -> None:
        """Write what was emitted so far without lingering (the request goes out meanwhile)."""

    async def settle(self, *, now: bool = False) -> None:
        """Wait until the deltas emitted so far are durable, when a stream reader waits for them now.

        With `now`, also when the last write of a delta was less than the delta interval ago.
        """


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
        pace: Pace | None = None,
    ) -> None:
        self.emit = emit
        self.pace = pace
        """How the emitted events are written around a call to a model over the network (see `Pace`)."""
        self.at = at
        self.options = options
        self.quiet = quiet | {REPLY_TOOL}
        """Tools whose input is not streamed as `action.input.appended` (the output-schema reply, skill loads)."""
        self.output_started = False
        """Whether text or a tool call came out (a steering message then waits for the boundary)."""
        self._task: asyncio.Task[Any] | None = None
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
        attempts = max(1, self.options.provider_attempts)
        for attempt in range(1, attempts + 1):
            if cancelled():
                raise Cancelled()
            if steered() and not self.output_started:
                raise Steered()  # a message arrived while the step was being prepared (or the call waited)
            if self.pace is not None and getattr(model, "remote", False):
                self.pace.hurry()  # the step's events so far get written while the request goes out
            try:
                return await self._interruptible(self._stream(model, request))
            except ModelError as exc:
                details = error_details(exc)
                if not exc.retryable or attempt == attempts:
                    if exc.retryable:
                        details["attempts"] = attempt
                    logger.info("%s: the model call failed (%s): %s", self._where(), _cause(exc), exc)
                    raise StepFailed("MODEL_CALL_FAILED", str(exc), details, terminal=exc.terminal) from exc
                delay = retry_delay(self.options, attempt, exc.retry_after)
                logger.info(
                    "%s: retrying the model call %d/%d in %.1f s (%s): %s",
                    self._where(), attempt + 1, attempts, delay, _cause(exc), exc,
                )  # fmt: skip
                self.emit(StepRetrying(self.at, attempt + 1, attempts, delay, "MODEL_CALL_FAILED", str(exc), details))
                if cancelled():
                    raise Cancelled() from exc  # asked while the call was failing: no task was there to abort
                await self._interruptible(asyncio.sleep(delay))
        raise AssertionError("unreachable")

    def preflight(self, model: Model, request: ModelRequest) -> None:
        """Fail the step now, before compaction or any request, if the model says it cannot be called (a missing key).

        Models may have a `preflight(request)` method raising `ModelError` (`LiteLLMModel` has one).
        """
        check = getattr(model, "preflight", None)
        if check is None:
            return
        try:
            check(request)
        except ModelError as exc:  # the turn's failure is logged where it ends (`end_turn_failed`)
            raise StepFailed("MODEL_CALL_FAILED", str(exc), error_details(exc)) from exc

    async def _interruptible(self, work: Awaitable[_T]) -> _T:
        """Await `work` in a task that `steer()` and `cancel()` can abort (raising `Steered` or `Cancelled`)."""
        self._task = asyncio.ensure_future(work)
        try:
            return await self._task  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the runner itself is being cancelled (shutdown): not ours to translate
            if self._interrupt == "steer":
                raise Steered() from None
            raise Cancelled() from None
        finally:
            self._task = None

    def _where(self) -> str:
        return f"turn {self.at.turn_id} step {self.at.step_index}"

    async def _stream(self, model: Model, request: ModelRequest) -> ModelResult:
        emit, at = self.emit, self.at
        result = ModelResult()
        # The first delta of a remote call is made durable (and so streamed) before reading on.
        unsettled = self.pace if getattr(model, "remote", False) else None
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                if event.text:
                    if not self.output_started:
                        crashpoint("during-model-call")
                    self.output_started = True
                    result.text += event.text
                    emit(MessageAppended(at, event.text))
                    if unsettled is not None:
                        await unsettled.settle()
                        unsettled = None
            elif isinstance(event, ReasoningDelta):
                result.reasoning += event.text
                emit(ReasoningAppended(at, event.text))
                if unsettled is not None and event.text:
                    await unsettled.settle()
                    unsettled = None
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
            elif isinstance(event, OutputDone):
                if self.pace is not None and getattr(model, "remote", False):
                    await self.pace.settle(now=True)  # the last words go out before the provider's client ends
            elif isinstance(event, Finish):
                result.finish = event
        if result.finish is None:
            result.finish = Finish(reason="other")
        return result


def error_details(error: ModelError) -> dict[str, Any]:
    """The `details` of a failed model call: its kind, whether it may be retried, and what is known of it.

    Keys: `semanticErrorId` (the `ModelErrorKind`), `retryable`, and when known `statusCode`,
    `provider`, the `url` tried and the missing key's `envVar`.
    """
    details: dict[str, Any] = {"semanticErrorId": error.kind, "retryable": error.retryable}
    if error.status_code is not None:
        details["statusCode"] = error.status_code
    if error.provider is not None:
        details["provider"] = error.provider
    if error.url is not None:
        details["url"] = error.url
    if error.variable is not None:
        details["envVar"] = error.variable
    return details


def retry_delay(options: RuntimeOptions, attempt: int, retry_after: float | None = None) -> float:
    """Seconds before retry number `attempt` (1 for the first).

    The provider's `Retry-After` when it sent one, else `provider_backoff` doubled per retry, give
    or take a fifth (so that sessions a rate limit hit together do not all come back at once).
    """
    if retry_after is not None:
        return retry_after
    return options.provider_backoff * 2.0 ** (attempt - 1) * random.uniform(0.8, 1.2)


def _cause(error: ModelError) -> str:
    cause = error.__cause__
    return error.kind if cause is None else f"{error.kind}, {type(cause).__module__}.{type(cause).__name__}"
