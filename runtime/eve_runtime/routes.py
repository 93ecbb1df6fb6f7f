"""The routes of eve's default HTTP channel (`channels/eve.py`), in the order they are matched."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_ROUTES", "MESSAGING", "SUBAGENT_STREAM", "Route"]


@dataclass(frozen=True)
class Route:
    """One HTTP route: a stable name, the method and the path pattern."""

    name: str
    method: str
    path: str
    """Path with `:param` placeholders, as eve prints them."""
    public: bool = False
    """Served without authentication."""


DEFAULT_ROUTES: tuple[Route, ...] = (
    Route("health", "GET", "/eve/v1/health", public=True),
    Route("health-head", "HEAD", "/eve/v1/health", public=True),
    Route("info", "GET", "/eve/v1/info"),
    Route("create-session", "POST", "/eve/v1/session"),
    Route("continue-session", "POST", "/eve/v1/session/:sessionId"),
    Route("cancel-session", "POST", "/eve/v1/session/:sessionId/cancel"),
    Route("compact-session", "POST", "/eve/v1/session/:sessionId/compact"),
    Route("clear-session", "POST", "/eve/v1/session/:sessionId/clear"),
    Route("reset-session", "POST", "/eve/v1/session/:sessionId/reset"),
    Route("session-stream", "GET", "/eve/v1/session/:sessionId/stream"),
)

SUBAGENT_STREAM = Route("subagent-stream", "GET", "/eve/v1/session/:sessionId/subagents/:callId/:childSessionId/stream")
"""A child session's stream, reached through its parent (served, but not among eve's listed routes)."""

MESSAGING = {
    "create": "POST /eve/v1/session",
    "continue": "POST /eve/v1/session/:sessionId",
    "stream": "GET /eve/v1/session/:sessionId/stream",
}
"""The three routes a chat client needs."""
