"""Events this project adds to eve's catalogue (`catalog.ExtensionEventType`); unknown to eve's clients."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from eve_runtime.events.catalog import EventType, StepAt, StreamEvent

__all__ = ["StepRetrying"]


@dataclass(frozen=True, slots=True)
class StepRetrying(StreamEvent):
    """An extension of eve's catalogue: the step failed, and runs again in `delay` seconds.

    Emitted before each retry: of the model call, when the provider failed in a way a retry may
    cure (`code` `MODEL_CALL_FAILED`, `details.semanticErrorId` saying how), or of the whole step,
    when it raised (`STEP_FAILED`). `attempt` is the attempt about to run (2 for the first retry),
    out of `maxAttempts`. A UI shows it as `retrying 2/4 in 1.2 s`.
    """

    type: ClassVar[EventType] = "step.retrying"
    at: StepAt
    attempt: int
    max_attempts: int
    delay: float
    code: str
    message: str
    details: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"attempt": self.attempt, "code": self.code, "delayMs": round(self.delay * 1000)}
        if self.details:
            data["details"] = self.details
        data |= {"maxAttempts": self.max_attempts, "message": self.message}
        return {**data, **self.at.wire()}
