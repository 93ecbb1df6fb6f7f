"""What a running tool knows about the call it serves."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolContext"]


@dataclass(frozen=True)
class ToolContext:
    """Passed to a tool that declares a parameter annotated `ToolContext` (it never appears in the input schema).

    Example:
        ```python
        from eve_runtime import ToolContext

        def get_weather(city: str, ctx: ToolContext) -> dict[str, str]:
            \"\"\"Get the weather for a city.\"\"\"
            return {"city": city, "asked_in": ctx.session_id}
        ```
    """

    session_id: str
    turn_id: str
    sequence: int
    """The turn's ordinal in the session."""
    call_id: str
    """Matches the `callId` of this call's stream events."""
    tool_name: str
