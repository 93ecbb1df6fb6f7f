"""`define_dynamic`: values an agent computes while a session runs, instead of at build time.

A dynamic resolver maps stream event names to handlers. eve calls the handler when that event
happens and uses what it returns: instructions for the session or the turn, the model for a
session, turn or step, tools for a session. Which events a resolver may listen to depends on
where it is used; the compiler checks that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.errors import DefinitionError
from eve_runtime.events.names import EVENT_TYPES

__all__ = ["DynamicResolver", "define_dynamic"]

DynamicHandler = Callable[..., Any]


@dataclass(frozen=True)
class DynamicResolver:
    """A set of event handlers that produce a value at run time (made by `define_dynamic`)."""

    events: Mapping[str, DynamicHandler]
    build: Callable[..., Any] | None = None
    """Optional build-time step whose result the handlers receive (eve's `build`)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def event_names(self) -> list[str]:
        """The event names this resolver listens to, sorted."""
        return sorted(self.events)


def define_dynamic(
    events: Mapping[str, DynamicHandler] | DynamicHandler,
    *,
    build: Callable[..., Any] | None = None,
) -> DynamicResolver:
    """Define a value resolved at run time from session events.

    Args:
        events: Event name (`session.started`, `turn.started`, `step.started`) to handler. A
            handler receives a context object (for instructions and the model a
            `DynamicContext`: `ctx.session`, `await ctx.memo(key, fn)`) and returns the value
            (or None to skip); it may be `async`. A bare function means `session.started`.
        build: Optional function run once when the agent is compiled; its result is passed to
            every handler.

    Returns:
        The resolver, to assign at module level in `agent.py`, `instructions/*.py` or `tools/*.py`.

    Example:
        ```python
        from eve_runtime import define_dynamic, define_instructions

        instructions = define_dynamic(
            {"session.started": lambda ctx: define_instructions(f"Today is {ctx.today}.")}
        )
        ```
    """
    if callable(events) and not isinstance(events, Mapping):
        events = {"session.started": events}
    if not isinstance(events, Mapping) or not events:
        raise DefinitionError(
            "define_dynamic(): 'events' must be a non-empty mapping of event name to handler", field="events"
        )
    for name, handler in events.items():
        if not isinstance(name, str) or name not in EVENT_TYPES:
            raise DefinitionError(
                f"define_dynamic(): unknown event {name!r}; use 'session.started', 'turn.started' or 'step.started'",
                field="events",
            )
        if not callable(handler):
            raise DefinitionError(f"define_dynamic(): the handler for {name!r} is not callable", field="events")
    if build is not None and not callable(build):
        raise DefinitionError("define_dynamic(): 'build' must be callable", field="build")
    return DynamicResolver(events=dict(events), build=build)
