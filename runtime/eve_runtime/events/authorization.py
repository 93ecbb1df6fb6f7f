"""Sign-in events: a connection needs a token before its call can go out (`authorization.*`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from eve_runtime.events.catalog import EventType, StepAt, StreamEvent

__all__ = ["AuthorizationCompleted", "AuthorizationRequired"]


@dataclass(frozen=True, slots=True)
class AuthorizationRequired(StreamEvent):
    """A parked turn waits for someone to sign in to connection `name` (never carries a token)."""

    type: ClassVar[EventType] = "authorization.required"
    at: StepAt
    name: str
    description: str
    attempt_id: str
    authorization: dict[str, Any]
    """`url` (where to sign in) and `instructions`, as far as the connection says."""
    principal_id: str | None = None

    def wire(self) -> dict[str, Any]:
        data = {
            "name": self.name,
            "description": self.description,
            "authorization": self.authorization,
            "attemptId": self.attempt_id,
            **self.at.wire(),
        }
        if self.principal_id is not None:
            data["principalId"] = self.principal_id
        return data


@dataclass(frozen=True, slots=True)
class AuthorizationCompleted(StreamEvent):
    """How a sign-in ended: `authorized`, `declined` (withdrawn, cancelled), `failed` or `timed-out`."""

    type: ClassVar[EventType] = "authorization.completed"
    at: StepAt
    name: str
    outcome: Literal["authorized", "declined", "failed", "timed-out"]
    attempt_id: str
    reason: str | None = None
    principal_id: str | None = None
    """Who started the sign-in (the same as its `authorization.required`'s)."""

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "outcome": self.outcome,
            "attemptId": self.attempt_id,
            **self.at.wire(),
        }
        if self.reason is not None:
            data["reason"] = self.reason
        if self.principal_id is not None:
            data["principalId"] = self.principal_id
        return data
