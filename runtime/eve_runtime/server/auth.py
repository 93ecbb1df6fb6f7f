"""Who may call the guarded `/eve/v1` routes (every route but health).

- `eve dev` ([`LoopbackAuth`][eve_runtime.server.auth.LoopbackAuth]): requests from this machine
  only (the peer address is loopback), addressed to a local name (the `Host` header is
  `localhost`, `127.0.0.1` or `[::1]`, any port, or the configured bind host) so a web page
  cannot reach the server through DNS rebinding, and, when a browser sends an `Origin`, coming
  from a local page. Anything else is 403.
- `eve start` ([`BearerTokenAuth`][eve_runtime.server.auth.BearerTokenAuth]):
  `Authorization: Bearer <EVE_AUTH_TOKEN>`, compared in constant time. Missing or wrong is 401
  with `www-authenticate: Bearer`; with no token configured at all, every guarded route is 401
  with a message that says how to configure one. The token never appears in a response or a log.

Who an admitted request comes from (its principal, carried into the turns it starts): under
`eve dev`, `local-dev` (a user: the person at this machine); under `eve start`, `token` (a
service: everyone holding `EVE_AUTH_TOKEN` is one principal). An app that serves several
people replaces the chain in `agent/channels/eve.py` with auth functions that return each
caller's own [`Principal`][eve_runtime.authoring.channel_auth.Principal] (their subject).

Two `Authorization` headers are 400 `duplicate_authorization` on every guarded route, whichever
authenticator decides (`duplicate_authorization`; the one parser is
`eve_runtime.authoring.authorization`, shared with channel routes).

Request headers such as `X-Forwarded-For` never change a decision (uvicorn runs without proxy
headers, so the peer address is the socket's).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from starlette.types import Scope

from eve_runtime.authoring.authorization import (
    DUPLICATE_AUTHORIZATION,
    DuplicateAuthorization,
    bearer_matches,
    read_authorization,
)
from eve_runtime.authoring.channel_auth import Principal

__all__ = [
    "Authenticator",
    "AuthFailure",
    "BearerTokenAuth",
    "LoopbackAuth",
    "default_principal",
    "duplicate_authorization",
    "is_loopback_host",
    "token_problem",
]

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
TEST_CLIENT_HOST = "testclient"
"""The peer address starlette's TestClient reports; local only when a test says so."""
TEST_SERVER_NAME = "testserver"
"""The `Host` starlette's TestClient sends; local only when a test says so."""


@dataclass(frozen=True)
class AuthFailure:
    """Why a request is refused: answered as `{"ok": false, "error", "code"}`."""

    status: int
    error: str
    code: str
    headers: dict[str, str] = field(default_factory=dict)


class Authenticator(Protocol):
    """Decides whether a request may use a guarded route."""

    def check(self, scope: Scope) -> AuthFailure | None:
        """None when the request may proceed, else why not."""
        ...


LOCAL_DEV = Principal("local-dev", "user", "local-dev")
TOKEN = Principal("token", "service", "bearer")


def default_principal(auth: Authenticator) -> Principal:
    """Who a request the server's own authenticator admitted comes from (see the module docstring)."""
    principal = getattr(auth, "principal", None)
    return principal if isinstance(principal, Principal) else LOCAL_DEV


def duplicate_authorization(scope: Scope) -> AuthFailure | None:
    """400 `duplicate_authorization` when the request has more than one `Authorization` header."""
    try:
        read_authorization(scope.get("headers", ()))
    except DuplicateAuthorization:
        return AuthFailure(400, DUPLICATE_AUTHORIZATION, "duplicate_authorization")
    return None


def is_loopback_host(host: str) -> bool:
    """Whether an address or host name is this machine's loopback (`127.0.0.0/8`, `::1`, `localhost`)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _header(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope.get("headers", ()) if key.lower() == name]


def _host_name(value: str) -> str | None:
    """The host name of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lowercased."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
    else:
        name, _, port = value.partition(":")
        rest = ":" + port if port else ""
    if rest and (not rest.startswith(":") or not rest[1:].isdigit()):
        return None
    return name or None


class LoopbackAuth:
    """`eve dev`: loopback peers addressing the server by a local name, from local pages only.

    Args:
        bind_host: The host the server listens on; also accepted in `Host` and `Origin`.
        allow_test_client: Treat starlette's TestClient (peer `testclient`, host `testserver`)
            as local. Only tests set it.
    """

    def __init__(self, *, bind_host: str | None = None, allow_test_client: bool = False) -> None:
        names = set(LOCAL_NAMES)
        if bind_host:
            names.add(bind_host.strip("[]").lower())
        if allow_test_client:
            names.add(TEST_SERVER_NAME)
        self.allowed_names = frozenset(names)
        self.allow_test_client = allow_test_client
        self.principal = LOCAL_DEV

    def _local_peer(self, scope: Scope) -> bool:
        client = scope.get("client")
        if not client:
            return False
        host = str(client[0])
        return (self.allow_test_client and host == TEST_CLIENT_HOST) or is_loopback_host(host)

    def check(self, scope: Scope) -> AuthFailure | None:
        """See the class docstring."""
        if not self._local_peer(scope):
            return AuthFailure(
                403,
                "eve dev only answers requests from this machine. To serve other machines, run 'eve start' with "
                "EVE_AUTH_TOKEN set.",
                "forbidden",
            )
        hosts = _header(scope, b"host")
        name = _host_name(hosts[0].decode("latin-1")) if len(hosts) == 1 else None
        if name is None or name not in self.allowed_names:
            return AuthFailure(
                403,
                "The Host header does not name this machine: eve dev only answers requests addressed to localhost, "
                "127.0.0.1 or [::1] (protection against DNS rebinding).",
                "forbidden_host",
            )
        origins = _header(scope, b"origin")
        if origins and not all(self._local_origin(o.decode("latin-1")) for o in origins):
            return AuthFailure(
                403,
                "Cross-origin requests are refused: eve dev only answers pages served from localhost, 127.0.0.1 "
                "or [::1].",
                "forbidden_origin",
            )
        return None

    def _local_origin(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin.strip())
            hostname = parts.hostname
            parts.port  # noqa: B018 - raises ValueError for a malformed port
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and hostname is not None and hostname in self.allowed_names


NO_TOKEN_CONFIGURED = (
    "This eve server has no EVE_AUTH_TOKEN configured, so every route but /eve/v1/health answers 401. "
    "Set EVE_AUTH_TOKEN in the server's environment (or its .env file), restart it, and send the token as "
    "'Authorization: Bearer <token>'."
)
BAD_TOKEN = "Missing or invalid credentials: send 'Authorization: Bearer <EVE_AUTH_TOKEN>'."


MIN_TOKEN_LENGTH = 16
MAKE_TOKEN = "Make one with 'openssl rand -hex 16' and set it in the environment or the app's .env."


def token_problem(token: str | None) -> str | None:
    """Why `eve start` refuses an `EVE_AUTH_TOKEN` (None: it is fine, or unset). Never shows the token."""
    if not token:
        return None
    if token != token.strip():
        return (
            "EVE_AUTH_TOKEN starts or ends with whitespace (a space, a tab or a line break), so no client's "
            f"'Authorization: Bearer' header could ever match it. Remove it. {MAKE_TOKEN}"
        )
    if len(token) < MIN_TOKEN_LENGTH:
        return (
            f"EVE_AUTH_TOKEN is too short: {len(token)} characters, and eve start needs at least "
            f"{MIN_TOKEN_LENGTH}. {MAKE_TOKEN}"
        )
    return None


class BearerTokenAuth:
    """`eve start`: `Authorization: Bearer <token>`, compared in constant time.

    Args:
        token: The expected token (`EVE_AUTH_TOKEN`); None or empty closes every guarded route.
    """

    def __init__(self, token: str | None) -> None:
        self._expected = token.encode("utf-8") if token else None
        self.principal = TOKEN

    @property
    def configured(self) -> bool:
        """Whether a token is configured."""
        return self._expected is not None

    def check(self, scope: Scope) -> AuthFailure | None:
        """See the class docstring."""
        challenge = {"www-authenticate": "Bearer"}
        if self._expected is None:
            return AuthFailure(401, NO_TOKEN_CONFIGURED, "auth_not_configured", challenge)
        try:
            credentials = read_authorization(scope.get("headers", ()))
        except DuplicateAuthorization:
            return AuthFailure(400, DUPLICATE_AUTHORIZATION, "duplicate_authorization")
        if bearer_matches(credentials, self._expected):
            return None
        return AuthFailure(401, BAD_TOKEN, "unauthorized", challenge)
