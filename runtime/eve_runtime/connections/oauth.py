"""OAuth sign-ins of MCP connections, through the `mcp` SDK's `OAuthClientProvider`.

One `Grant` per connection and credential owner holds the SDK's provider (an `httpx.Auth`) and
its storage, both in this process's memory only: tokens and the client registration are never
written to the store, the stream or a log, and a restarted server asks for a sign-in again.

A sign-in starts when a session first needs a connection that has no tokens yet: a probe (one
MCP `initialize` POST through the provider) meets the server's 401, and the SDK discovers the
authorization server, registers the client and builds the authorization URL with PKCE and a
`state`. The redirect handler hands that URL to the parked turn (`authorization.required`);
the SDK's callback handler then waits, in the probe's task, for the browser to come back to
`GET /eve/v1/connections/<name>/callback?code=...&state=...`. `complete` matches the `state`
(single use) to its sign-in, gives the SDK the code (which it exchanges for tokens) and
returns the parked requests that waited for it, so the route can resume them.

Links send every request through the provider, which refreshes an expired access token with
its refresh token. When the server refuses a call and the SDK would need a new sign-in, the
redirect handler refuses instead (no one is there to open a URL): the call fails with
`AUTHORIZATION_REQUIRED`, the tokens are dropped, and the next call parks for a sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.types import LATEST_PROTOCOL_VERSION

from eve_runtime.authoring.connection_access import SignIn, SignInCallbackError
from eve_runtime.authoring.connections import McpClientConnection

__all__ = ["Grant", "OAuthSignIns", "SignInRefused", "initialize"]

logger = logging.getLogger("eve.connections")

START_TIMEOUT = 20.0
"""Seconds discovery and registration may take before a turn is told the sign-in could not start."""
EXCHANGE_TIMEOUT = 60.0


_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": LATEST_PROTOCOL_VERSION}
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "eve", "version": "sign-in"},
    },
}


async def initialize(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """POST one MCP `initialize` (what meets the server's 401 and so starts the SDK's sign-in)."""
    return await client.post(url, json=_INITIALIZE, headers=_HEADERS)


class SignInRefused(Exception):
    """The sign-in cannot go on: the person refused, the exchange failed, or a call met a 401 with no one to ask."""


class _MemoryStorage:
    """The SDK's `TokenStorage`, kept in this process only."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass(eq=False)
class _Pending:
    """One sign-in under way: its URL once the SDK built it, the browser's answer, who waits for it."""

    handle: str
    connection: str
    url: asyncio.Future[str]
    answer: asyncio.Future[tuple[str, str | None]]
    task: asyncio.Task[None] | None = None
    state: str | None = None
    waiters: set[tuple[str, str]] = field(default_factory=set)


class Grant:
    """One connection's OAuth for one credential owner."""

    def __init__(self, sign_ins: OAuthSignIns, name: str, definition: McpClientConnection, redirect_uri: str) -> None:
        assert definition.url is not None and definition.auth is not None and definition.auth.oauth is not None
        self.sign_ins = sign_ins
        self.name = name
        self.url = definition.url
        self.definition = definition
        self.storage = _MemoryStorage()
        self.provider = OAuthClientProvider(
            server_url=definition.url,
            client_metadata=OAuthClientMetadata(
                redirect_uris=[redirect_uri],  # type: ignore[list-item]
                client_name=definition.auth.oauth.client_name,
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            storage=self.storage,
            redirect_handler=self._redirect,
            callback_handler=self._callback,
            client_metadata_url=definition.auth.oauth.client_metadata_url,
        )
        self.pending: _Pending | None = None
        self.open = False
        """The server answered without asking for a sign-in."""
        self.problem: str | None = None
        """Why the last sign-in could not start (told once to the call that meets it)."""
        self.rejected = False
        """A call met a 401 that only a new sign-in could answer."""

    @property
    def signed_in(self) -> bool:
        return self.open or self.storage.tokens is not None

    async def _redirect(self, url: str) -> None:
        pending = self.pending
        if pending is None or pending.url.done():
            self.rejected = True
            self.storage.tokens = None
            raise SignInRefused("the MCP server asks for a new sign-in")
        state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        pending.state = state
        self.sign_ins.states[state] = pending
        pending.url.set_result(url)

    async def _callback(self) -> tuple[str, str | None]:
        assert self.pending is not None
        return await self.pending.answer

    def start(self) -> _Pending:
        """The sign-in under way, or a new one (its probe runs in its own task)."""
        if self.pending is not None and self.pending.task is not None and not self.pending.task.done():
            return self.pending
        loop = asyncio.get_running_loop()
        pending = _Pending(secrets.token_urlsafe(12), self.name, loop.create_future(), loop.create_future())
        self.pending = pending
        self.problem = None
        self.rejected = False
        pending.task = loop.create_task(self._probe(pending), name=f"eve-oauth-{self.name}")
        pending.task.add_done_callback(_retrieve)
        self.sign_ins.handles[pending.handle] = pending
        return pending

    async def _probe(self, pending: _Pending) -> None:
        """One MCP `initialize` through the provider: the SDK signs in on the server's 401."""
        try:
            async with create_mcp_http_client(
                headers=self.definition.resolved_headers(), timeout=httpx.Timeout(30.0), auth=self.provider
            ) as client:
                response = await initialize(client, self.url)
                if response.status_code in (401, 403):
                    raise SignInRefused(f"the MCP server still refuses the sign-in (HTTP {response.status_code})")
                session = response.headers.get("mcp-session-id")
                if session:  # the probe's own MCP session is not needed: end it
                    with contextlib.suppress(httpx.HTTPError):
                        await client.delete(self.url, headers={**_HEADERS, "mcp-session-id": session})
                if not pending.url.done():
                    self.open = response.is_success
                    if not self.open:
                        self.problem = f"the MCP server answered HTTP {response.status_code}"
        except Exception as exc:
            if not pending.url.done():
                self.problem = _describe(exc)
            raise
        finally:
            if not pending.url.done():
                pending.url.cancel()
            self.sign_ins.forget(pending)


class OAuthSignIns:
    """Every OAuth grant of the process, and the sign-ins under way (keyed by `state` and by handle)."""

    def __init__(self, public_url: str | None) -> None:
        self.public_url = public_url
        """Where browsers reach this server: the redirect URI is `<public_url>/eve/v1/connections/<name>/callback`."""
        self.grants: dict[tuple[str, str], Grant] = {}
        self.states: dict[str, _Pending] = {}
        self.handles: dict[str, _Pending] = {}

    def grant(self, name: str, definition: McpClientConnection, owner: str) -> Grant | None:
        """The grant of connection `name` for `owner` (None while the server's own address is unknown)."""
        found = self.grants.get((name, owner))
        if found is not None and found.url == definition.url:
            found.definition = definition
            return found
        if self.public_url is None:
            return None
        redirect = f"{self.public_url.rstrip('/')}/eve/v1/connections/{name}/callback"
        found = Grant(self, name, definition, redirect)
        self.grants[(name, owner)] = found
        return found

    async def sign_in_needed(self, name: str, definition: McpClientConnection, owner: str) -> SignIn | None:
        """None once signed in (or when the sign-in could not start: the call says why); else the URL to open."""
        grant = self.grant(name, definition, owner)
        if grant is None:
            return SignIn(
                connection=name,
                description=definition.description,
                instructions=f"Connection {name!r} signs in with OAuth, but this server does not know the address "
                "browsers reach it at: set EVE_PUBLIC_URL (for example https://agent.example.com).",
            )
        if grant.signed_in:
            return None
        pending = grant.start()
        assert pending.task is not None
        started: set[asyncio.Future[Any]] = {pending.url, pending.task}
        await asyncio.wait(started, timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if not pending.url.done() or pending.url.cancelled():
            if not pending.task.done():
                pending.task.cancel()
                grant.problem = f"the sign-in did not start within {START_TIMEOUT:.0f} s"
            return None
        return SignIn(
            connection=name,
            description=definition.description,
            url=pending.url.result(),
            instructions=f"Open the URL to sign in to {name!r}; the turn goes on once the sign-in is complete.",
            handle=pending.handle,
        )

    def awaited(self, handle: str | None, session_id: str, request_id: str) -> None:
        """A parked request waits for the sign-in `handle`."""
        pending = self.handles.get(handle or "")
        if pending is not None:
            pending.waiters.add((session_id, request_id))

    def settled(self, session_id: str, request_id: str) -> None:
        """A parked request got its answer (or was withdrawn): it waits for no sign-in any more."""
        for pending in self.handles.values():
            pending.waiters.discard((session_id, request_id))

    def forget(self, pending: _Pending) -> None:
        self.handles.pop(pending.handle, None)
        if pending.state is not None:
            self.states.pop(pending.state, None)

    async def complete(self, name: str, params: dict[str, str]) -> tuple[str, list[tuple[str, str]], str | None]:
        """Finish the sign-in a callback names: `(outcome, waiting requests, why it failed)`.

        Raises `SignInCallbackError` for a `state` that names no sign-in of connection `name`.
        """
        pending = self.states.get(params.get("state", ""))
        if pending is None or pending.connection != name:
            raise SignInCallbackError(
                400,
                f"This sign-in link for connection {name!r} is unknown, was already used, or its server restarted: "
                "ask the agent to use the connection again for a new one.",
                "unknown_sign_in",
            )
        error = params.get("error")
        if not error and not params.get("code"):
            raise SignInCallbackError(400, "The callback has no 'code' (nor an 'error').", "invalid_callback")
        self.states.pop(pending.state or "", None)
        waiters = sorted(pending.waiters)
        assert pending.task is not None
        if error:
            reason = f"the authorization server answered {error}" + (
                f": {params['error_description']}" if params.get("error_description") else ""
            )
            pending.answer.set_exception(SignInRefused(reason))
            with contextlib.suppress(BaseException):
                await pending.task
            return "declined", waiters, reason
        pending.answer.set_result((params["code"], params.get("state")))
        try:
            await asyncio.wait_for(asyncio.shield(pending.task), EXCHANGE_TIMEOUT)
        except Exception as exc:
            logger.info("OAuth sign-in of %s failed: %s", name, _describe(exc))
            return "failed", waiters, _describe(exc)
        return "authorized", waiters, None

    async def close(self) -> None:
        """Stop every sign-in under way and forget every grant (tokens included)."""
        tasks = [p.task for p in self.handles.values() if p.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.grants.clear()
        self.states.clear()
        self.handles.clear()


def _retrieve(task: asyncio.Task[None]) -> None:
    """Take a probe's failure (its grant keeps what it means) so asyncio does not report it as lost."""
    if not task.cancelled():
        task.exception()


def _describe(exc: BaseException) -> str:
    """What went wrong, without a URL, a code or a token."""
    if isinstance(exc, SignInRefused):
        return str(exc)
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect to the MCP server: is the MCP server running?"
    if isinstance(exc, httpx.TimeoutException):
        return "the MCP server or its authorization server did not answer in time"
    if isinstance(exc, asyncio.TimeoutError):
        return f"the authorization server did not finish the exchange within {EXCHANGE_TIMEOUT:.0f} s"
    return f"{type(exc).__name__} during the OAuth sign-in"
