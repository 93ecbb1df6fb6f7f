"""`define_hook`: code that observes a session's stream events (`agent/hooks/**.py`).

A hook maps event types (or `*`, every event) to handlers `handler(event, ctx)`, sync or
`async`. `event` is the event as the stream carries it (`{"type", "data", "meta"}`; treat it as
read-only) and `ctx` a [`HookContext`][eve_runtime.HookContext]. How and when handlers run is
described in `eve_runtime.engine.hook_dispatch`: after the event is durable, in order, once, off the
turn's path; a handler that raises or overruns its time is logged and the turn goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eve_runtime.authoring.context import ParentInfo, Predecessor
from eve_runtime.errors import DefinitionError
from eve_runtime.events.names import EVENT_TYPES, EXTENSION_EVENT_TYPES

__all__ = ["Hook", "HookChannel", "HookContext", "HookSession", "check_event_handlers", "define_hook"]

HookHandler = Callable[..., Any]


@dataclass(frozen=True)
class HookSession:
    """The session an event belongs to."""

    id: str
    parent: ParentInfo | None = None
    """For a subagent's session: the call it works for."""
    predecessor: Predecessor | None = None
    """For a session that replaced a stranded one: that session."""


@dataclass(frozen=True)
class HookChannel:
    """The custom channel that started the session (`ctx.channel` of hooks and dynamic resolvers)."""

    kind: str
    """The channel's name (`webhook` for `channels/webhook.py`)."""
    continuation_token: str
    """The channel-local address the session was started at."""
    metadata: Any = None
    """The channel's `metadata(state)` as last projected (None when it projects none)."""


@dataclass(frozen=True)
class HookContext:
    """What a hook handler receives besides the event."""

    session: HookSession
    agent_name: str
    """The agent whose hook runs (a subagent's hooks see only the subagent's sessions)."""
    node_id: str
    channel: HookChannel | None = None
    """For a session a custom channel started: that channel (None for sessions started by id)."""


@dataclass(frozen=True)
class Hook:
    """Handlers for stream events, by event type (`*` for every event)."""

    events: Mapping[str, HookHandler]

    @property
    def event_names(self) -> list[str]:
        """The event types this hook observes, sorted (`*` included)."""
        return sorted(self.events)


def define_hook(events: Mapping[str, HookHandler]) -> Hook:
    """Observe stream events. Handlers only observe: what they return is ignored.

    Args:
        events: Event type (`turn.completed`, ...) or `*` to a handler `(event, ctx)`.

    Example:
        ```python
        from eve_runtime import define_hook

        hook = define_hook({"turn.completed": lambda event, ctx: print(event.data)})
        ```
    """
    if not isinstance(events, Mapping) or not events:
        raise DefinitionError(
            "define_hook(): 'events' must be a non-empty mapping of event type to handler", field="events"
        )
    check_event_handlers("define_hook", events)
    return Hook(events=dict(events))


def check_event_handlers(caller: str, handlers: Mapping[str, Any]) -> None:
    """Refuse handlers keyed by anything but a stream event type (or `*`), or that are not callable.

    Raises:
        DefinitionError: Naming `caller` (`define_hook`, `define_channel`) and the bad entry.
    """
    for name, handler in handlers.items():
        if name != "*" and name not in EVENT_TYPES and name not in EXTENSION_EVENT_TYPES:
            raise DefinitionError(
                f"{caller}(): unknown event type {name!r}; use a stream event type such as 'turn.completed', or '*'",
                field="events",
            )
        if not callable(handler):
            raise DefinitionError(f"{caller}(): the handler for {name!r} is not callable", field="events")
