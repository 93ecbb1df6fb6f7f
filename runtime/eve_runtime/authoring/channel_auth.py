"""Auth chains for channel routes (a custom channel's, or the eve HTTP channel's when replaced).

An auth function takes the starlette request and returns a [`Principal`] to admit it, None to
skip to the next function, or raises [`AuthError`] to refuse it (sync or `async`). A chain runs in
order (`eve_runtime.server.channels.run_auth`): the first principal wins; when every function
skips, the request is refused with 401 and `www-authenticate: Bearer`. Everything fails closed:
a function that raises anything else refuses the request too (logged, answered 401).

Helpers:

- [`local_dev`][eve_runtime.authoring.channel_auth.local_dev]: under `eve dev`, requests from this machine
  (the same checks as the default channel's: loopback peer, local `Host`, local `Origin`); never
  under `eve start`. A request header cannot switch it on.
- [`bearer_token`][eve_runtime.authoring.channel_auth.bearer_token]: `Authorization: Bearer <token>`,
  compared in constant time; the token comes from an environment variable (`EVE_AUTH_TOKEN` by
  default) read at request time, or is given. Two `Authorization` headers are refused (400
  `duplicate_authorization`), as on every channel route and `/eve/v1` route.
- [`allow_anonymous`][eve_runtime.authoring.channel_auth.allow_anonymous]: admits everyone (eve's `none()`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eve_runtime.authoring.authorization import DuplicateAuthorization, bearer_matches, read_authorization

__all__ = [
    "AuthError",
    "AuthFn",
    "Principal",
    "auth_wire",
    "allow_anonymous",
    "bearer_token",
    "local_dev",
]

AuthFn = Callable[[Any], Any]
"""`fn(request) -> Principal | None` (or an awaitable of it); raises `AuthError` to refuse."""

UNAUTHORIZED = "Missing or invalid credentials for this route."


@dataclass(frozen=True)
class Principal:
    """Who a request comes from, as an auth function established it."""

    id: str
    type: str = "user"
    """`user`, `service`, ..."""
    authenticator: str = "custom"
    attributes: dict[str, Any] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        """The principal as a message's `auth` (eve's session auth shape; attributes stay out)."""
        return {"authenticator": self.authenticator, "principalId": self.id, "principalType": self.type}


class AuthError(Exception):
    """Raised by an auth function to refuse a request (401 by default, 403 for a known caller)."""

    def __init__(self, message: str = UNAUTHORIZED, *, status: int = 401, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code or ("forbidden" if status == 403 else "unauthorized")


def local_dev() -> AuthFn:
    """Admit requests from this machine under `eve dev` (principal `local-dev`); skip otherwise."""

    def check(request: Any) -> Principal | None:
        state = request.app.state
        loopback = getattr(state, "eve_loopback", None)  # the server's loopback check (`eve dev` always has one)
        if getattr(state, "eve_mode", None) != "development" or loopback is None:
            return None
        if loopback.check(request.scope) is not None:
            return None
        return Principal("local-dev", "user", "local-dev")

    return check


def bearer_token(token: str | None = None, *, env: str = "EVE_AUTH_TOKEN") -> AuthFn:
    """Admit `Authorization: Bearer <token>` (principal `token`); skip requests without a bearer.

    Args:
        token: The expected token; when None it is read from `env` on every request (unset or
            empty: the function skips, so a later one in the chain decides).
        env: The environment variable holding the token.
    """

    def check(request: Any) -> Principal | None:
        expected = token if token is not None else os.environ.get(env) or None
        try:
            credentials = read_authorization(request.headers.raw)
        except DuplicateAuthorization as exc:
            raise AuthError(str(exc), status=400, code="duplicate_authorization") from None
        if expected is None or credentials is None:
            return None
        if not bearer_matches(credentials, expected.encode("utf-8")):
            raise AuthError("Invalid bearer token.")
        return Principal("token", "service", "bearer")

    return check


def allow_anonymous() -> AuthFn:
    """Admit every request (principal `anonymous`): only for routes that verify callers themselves."""

    def check(request: Any) -> Principal:
        return Principal("anonymous", "anonymous", "none")

    return check


def auth_wire(principal: Principal) -> dict[str, Any]:
    """A principal as a message's `auth` (`Principal.wire()`)."""
    return principal.wire()
