"""Channels: HTTP entry points an app authors in `agent/channels/<name>.py`.

A custom channel mounts routes and, optionally, handles the events of the sessions it started:

```python
from eve_runtime.authoring.channels import POST, define_channel


async def receive(request, ctx):
    body = await ctx.json()
    result = await ctx.from_(body["thread"]).send(body["text"], idempotency_key=body.get("id"))
    return {"ok": True, "sessionId": result.session_id}


def reply(data, channel):
    print(channel.address, data["message"])


channel = define_channel(routes=[POST("/webhook/messages", receive)], events={"message.completed": reply})
```

- The file stem is the channel's name (`channels/webhook.py` is `webhook`). A route's path is
  its URL as written (the name does not prefix it) and may not be under eve's own `/eve/v1/`.
  Path parameters are written `{name}` (or eve's `:name`) and reach `ctx.params`.
- A route handler `handler(request, ctx)` gets the starlette request and a
  [`RouteContext`][eve_runtime.server.route_context.RouteContext]; it returns a dict or list (JSON,
  200), `(body, status)`, a string, a starlette `Response`, or None (204). Make it `async` to
  use `ctx`'s operations; a plain function runs on the server's event loop, so keep it quick.
  Whatever it raises becomes a JSON error: 4xx for refused deliveries and bad input (a
  `ValueError` is 400), 503 when an address's holder kept changing, a logged 500 for bugs.
  Paths under `/eve/` always reach eve's own routes, whatever a route's pattern would match.
- `ctx.from_(address)` binds the operations to a channel-local address (a thread id, a phone
  number): `send` continues the address's session or starts one that claims it, `respond`,
  `cancel`, `reset` (also `end`) and `alias`. Addresses are namespaced by the channel's name.
- Event handlers `handler(data, channel)` receive each event's `data` and a
  [`ChannelEvent`][eve_runtime.engine.channel_events.ChannelEvent] (the session, its address, the whole
  event), for the sessions the channel started, before the app's hooks see the event.
- `state=` is the channel's per-session durable state (a JSON value, or a function returning
  one): a session starts from it, merged with the `state=` of the `send` that created it. Event
  handlers change `channel.state` (in place, or by assigning it); `deliver(payload, channel)`
  sees every `send`/`respond` with its `state=` and may change `channel.state` too. `metadata=`
  projects the state (`metadata(state)`, re-evaluated after the channel's handlers of each event
  and stored with it) into what hooks and dynamic resolvers read as `ctx.channel.metadata`. See
  `eve_runtime.engine.channel_state`.
- `auth=[...]` guards the routes with an auth chain (see `eve_runtime.authoring.channel_auth`); without
  it a route is open and its handler verifies the caller itself, as in eve.

`agent/channels/eve.py` replaces eve's default HTTP channel (`/eve/v1/...`): `eve_channel(auth=[...])`
swaps its authenticators, `disable_channel()` removes its routes (health and info too).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.authoring.channel_auth import AuthError, AuthFn, Principal, allow_anonymous, bearer_token, local_dev
from eve_runtime.authoring.hooks import check_event_handlers
from eve_runtime.errors import DefinitionError

__all__ = [
    "DELETE",
    "GET",
    "PATCH",
    "POST",
    "PUT",
    "AuthError",
    "Channel",
    "ChannelRoute",
    "EveChannel",
    "InvalidAddress",
    "Principal",
    "allow_anonymous",
    "bearer_token",
    "channel_address",
    "define_channel",
    "disable_channel",
    "eve_channel",
    "local_dev",
]

TurnPolicy = Literal["steer", "queue"]
RouteHandler = Callable[..., Any]
EventHandler = Callable[..., Any]

RESERVED_PREFIX = "/eve/"
_COLON_PARAM = re.compile(r":([A-Za-z_][A-Za-z0-9_]*)")
_PATH = re.compile(r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/{}-]*$")
_BRACE_PARAM = re.compile(r"\{([^{}]*)\}")

MAX_ADDRESS_LENGTH = 1024
"""The longest channel-local address (`ctx.from_(address)`, an alias)."""


class InvalidAddress(ValueError):
    """A channel-local address that is empty, not a string, or too long (a route answers 400)."""


def channel_address(channel: str, token: str) -> str:
    """The store's address for a channel-local token (`<channel>:<token>`).

    Raises:
        InvalidAddress: An empty or overlong token (a request's data reaches here).
    """
    if not isinstance(token, str) or not token:
        raise InvalidAddress("A channel address must be a non-empty string.")
    if len(token) > MAX_ADDRESS_LENGTH:
        raise InvalidAddress(f"A channel address may be at most {MAX_ADDRESS_LENGTH} characters.")
    return f"{channel}:{token}"


@dataclass(frozen=True)
class ChannelRoute:
    """One route of a channel."""

    method: str
    path: str
    """The path pattern with `{param}` placeholders."""
    handler: RouteHandler

    @property
    def display_path(self) -> str:
        """The path as eve prints it (`:param`)."""
        return _BRACE_PARAM.sub(r":\1", self.path)


def is_eve_path(path: str) -> bool:
    """Whether a request path is eve's own (`/eve` or under `/eve/`): no channel route answers it."""
    return path == RESERVED_PREFIX.rstrip("/") or path.startswith(RESERVED_PREFIX)


def may_match_eve(pattern: str) -> bool:
    """Whether a route pattern (`/{a}/{b}`) could match a path under `/eve/` (such requests go to eve)."""
    segments = pattern.split("/")[1:]
    if len(segments) < 2:
        return False
    first = "[^/]+".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", segments[0]))
    return re.fullmatch(first, "eve") is not None


def _route(method: str, path: str, handler: RouteHandler) -> ChannelRoute:
    if not isinstance(path, str) or not path.startswith("/"):
        raise DefinitionError(f"{method}(): the path must be a string starting with '/', got {path!r}", field="routes")
    path = _COLON_PARAM.sub(r"{\1}", path)
    if not _PATH.match(path) or any(not p.isidentifier() for p in _BRACE_PARAM.findall(path)):
        raise DefinitionError(
            f"{method}(): {path!r} is not a valid route path; use letters, digits, '-', '_', '.', '/' and "
            "parameters written {name}",
            field="routes",
        )
    if is_eve_path(path):
        raise DefinitionError(
            f"{method}(): {path!r} is under /eve/, which eve's own routes use; choose another path "
            "(a channel's routes are mounted exactly where their path says)",
            field="routes",
        )
    if not callable(handler):
        raise DefinitionError(f"{method}({path!r}): the handler is not callable", field="routes")
    return ChannelRoute(method, path, handler)


def GET(path: str, handler: RouteHandler) -> ChannelRoute:
    """A `GET` route: `handler(request, ctx)` answers requests to `path`."""
    return _route("GET", path, handler)


def POST(path: str, handler: RouteHandler) -> ChannelRoute:
    """A `POST` route: `handler(request, ctx)` answers requests to `path`."""
    return _route("POST", path, handler)


def PUT(path: str, handler: RouteHandler) -> ChannelRoute:
    """A `PUT` route: `handler(request, ctx)` answers requests to `path`."""
    return _route("PUT", path, handler)


def PATCH(path: str, handler: RouteHandler) -> ChannelRoute:
    """A `PATCH` route: `handler(request, ctx)` answers requests to `path`."""
    return _route("PATCH", path, handler)


def DELETE(path: str, handler: RouteHandler) -> ChannelRoute:
    """A `DELETE` route: `handler(request, ctx)` answers requests to `path`."""
    return _route("DELETE", path, handler)


@dataclass(frozen=True)
class Channel:
    """A custom channel (see the module docstring)."""

    routes: tuple[ChannelRoute, ...] = ()
    events: Mapping[str, EventHandler] = field(default_factory=dict)
    turn_policy: TurnPolicy = "steer"
    """The default `turnPolicy` of the channel's sends (a send may override it)."""
    auth: tuple[AuthFn, ...] | None = None
    """The routes' auth chain; None leaves them open (the handler verifies callers)."""
    state: Any = None
    """The initial per-session state: a JSON value, or a function returning one."""
    metadata: Callable[[Any], Any] | None = None
    """`metadata(state)`: the projection of the state that hooks and resolvers see."""
    deliver: Callable[..., Any] | None = None
    """`deliver(payload, channel)`: sees each `send`/`respond` of the channel and may change its state."""

    @property
    def stateful(self) -> bool:
        """Whether the channel keeps state or projects metadata."""
        return self.state is not None or self.metadata is not None or self.deliver is not None

    def initial_state(self) -> Any:
        """A fresh copy of the initial state (None when the channel declares none)."""
        value = self.state() if callable(self.state) else self.state
        return copy.deepcopy(value)


@dataclass(frozen=True)
class EveChannel:
    """An authored replacement of eve's default HTTP channel (`agent/channels/eve.py`)."""

    auth: tuple[AuthFn, ...] = ()
    disabled: bool = False


def _auth_chain(auth: object, what: str) -> tuple[AuthFn, ...] | None:
    if auth is None:
        return None
    if isinstance(auth, (str, bytes)) or not isinstance(auth, Sequence):
        raise DefinitionError(f"{what}: 'auth' must be a list of auth functions", field="auth")
    for fn in auth:
        if not callable(fn):
            raise DefinitionError(f"{what}: every 'auth' entry must be callable, got {fn!r}", field="auth")
    return tuple(auth)


def define_channel(
    *,
    routes: Sequence[ChannelRoute] = (),
    events: Mapping[str, EventHandler] | None = None,
    turn_policy: TurnPolicy = "steer",
    auth: Sequence[AuthFn] | None = None,
    state: Any = None,
    metadata: Callable[[Any], Any] | None = None,
    deliver: Callable[..., Any] | None = None,
) -> Channel:
    """Define a custom channel (`agent/channels/<name>.py`).

    Args:
        routes: Its routes: `GET(path, handler)`, `POST(...)`, ...; one per method and path.
        events: Event type (or `*`) to a handler `(data, channel)` for the sessions it started.
        turn_policy: `"steer"` (default) or `"queue"`: how its messages meet a running turn.
        auth: An auth chain for its routes (`[local_dev(), bearer_token()]`, your own functions);
            None (default) leaves them open for the handler to verify.
        state: The initial per-session state (a JSON value, or a function returning one).
        metadata: `metadata(state)`, the JSON projection of the state that hooks and dynamic
            resolvers read as `ctx.channel.metadata`.
        deliver: `deliver(payload, channel)`, run for each `send`/`respond` once its delivery is
            accepted (`payload["state"]` is the call's `state=`); it may change `channel.state`.

    Example:
        ```python
        channel = define_channel(routes=[POST("/webhook/messages", receive)])
        ```
    """
    if isinstance(routes, ChannelRoute) or not all(isinstance(r, ChannelRoute) for r in routes):
        raise DefinitionError(
            "define_channel(): 'routes' must be a list of routes made with GET(...), POST(...), ...", field="routes"
        )
    seen: set[tuple[str, str]] = set()
    for route in routes:
        key = (route.method, route.path)
        if key in seen:
            raise DefinitionError(f"define_channel(): two routes answer {route.method} {route.path}", field="routes")
        seen.add(key)
    handlers = dict(events or {})
    check_event_handlers("define_channel", handlers)
    if turn_policy not in ("steer", "queue"):
        raise DefinitionError("define_channel(): 'turn_policy' must be 'steer' or 'queue'", field="turn_policy")
    if state is not None and not callable(state):
        try:
            json.dumps(state, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DefinitionError(
                f"define_channel(): 'state' must be JSON data or a function returning it ({exc})", field="state"
            ) from None
    for name, fn in (("metadata", metadata), ("deliver", deliver)):
        if fn is not None and not callable(fn):
            raise DefinitionError(f"define_channel(): '{name}' must be a function", field=name)
    return Channel(
        routes=tuple(routes),
        events=handlers,
        turn_policy=turn_policy,
        auth=_auth_chain(auth, "define_channel()"),
        state=state,
        metadata=metadata,
        deliver=deliver,
    )


def eve_channel(*, auth: Sequence[AuthFn]) -> EveChannel:
    """Replace the auth of eve's default HTTP channel (in `agent/channels/eve.py`).

    The chain runs in order on every `/eve/v1` route but health: the first function returning a
    principal admits the request, None skips to the next, an `AuthError` refuses; when every
    function skips, the answer is 401.

    Example:
        ```python
        channel = eve_channel(auth=[local_dev(), bearer_token(env="MY_API_TOKEN")])
        ```
    """
    chain = _auth_chain(auth, "eve_channel()")
    if chain is None:
        raise DefinitionError(
            "eve_channel(): 'auth' is required; use disable_channel() to remove the channel", field="auth"
        )
    return EveChannel(auth=chain)


def disable_channel() -> EveChannel:
    """Remove eve's default HTTP channel (in `agent/channels/eve.py`): no `/eve/v1` route is served."""
    return EveChannel(disabled=True)
