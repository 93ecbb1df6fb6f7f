"""OAuth sign-in of an MCP connection, end to end, against a real OAuth-protected FastMCP server.

The MCP server (`tests/fixtures/mcp_oauth_server.py`, a subprocess) is its own authorization
server: discovery, dynamic client registration, `/authorize` that approves at once, `/token`.
eve runs on a real uvicorn on 127.0.0.1. The test plays the person's browser with httpx: it
opens the `authorization.url` of `authorization.required`, follows the authorization server's
redirect to eve's callback route, and reads what the parked turn did next.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from eve_runtime.project.compiler import compile_app
from tests.connections.servers import OAUTH_FIXTURE, McpHttpServer
from tests.helpers import minimal_app
from tests.server.support import LiveServer, parse_ndjson

CONNECTION = (
    "from eve_runtime import connection_auth, define_mcp_client_connection, mcp_oauth\n\n"
    "web = define_mcp_client_connection(url={url!r}, description='The OAuth test server.',\n"
    "    auth=connection_auth(oauth=mcp_oauth(client_name='eve tests')))\n"
)


@pytest.fixture(scope="module")
def oauth_mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpHttpServer]:
    server = McpHttpServer(tmp_path_factory.mktemp("mcp-oauth"), fixture=OAUTH_FIXTURE).start()
    yield server
    server.kill()


def _serve(tmp_path: Path, url: str) -> LiveServer:
    app = compile_app(minimal_app(tmp_path, {"agent/connections/web.py": CONNECTION.format(url=url)}), write=False)
    assert app.root is not None, [d.message for d in app.diagnostics]
    return LiveServer(app.root, app.manifest)


def _events(http: httpx.Client, session: str) -> list[dict[str, Any]]:
    response = http.get(f"/eve/v1/session/{session}/stream?follow=false")
    assert response.status_code == 200, response.text
    return parse_ndjson(response.content)


def _wait(http: httpx.Client, session: str, event_type: str, count: int = 1) -> list[dict[str, Any]]:
    return _until(http, session, lambda events: len(_of(events, event_type)) >= count)


def _until(http: httpx.Client, session: str, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        events = _events(http, session)
        if done(events):
            return events
        assert time.monotonic() < deadline, f"not there: {[e['type'] for e in events]}"
        time.sleep(0.05)


def _of(events: list[dict[str, Any]], event_type: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == event_type]


def _create(http: httpx.Client, message: str) -> str:
    response = http.post("/eve/v1/session", json={"message": message})
    assert response.status_code == 202, response.text
    return str(response.json()["sessionId"])


def _call(tool: str, arguments: dict[str, Any]) -> str:
    return f"/call {tool} {json.dumps(arguments)}"


def _parked(http: httpx.Client, message: str) -> tuple[str, dict[str, Any]]:
    session = _create(http, message)
    (required,) = _of(_wait(http, session, "turn.waiting"), "authorization.required")
    return session, required["data"]


def test_sign_in_through_the_browser_resumes_the_parked_call(tmp_path: Path, oauth_mcp: McpHttpServer) -> None:
    with _serve(tmp_path, oauth_mcp.url) as eve, httpx.Client(base_url=eve.url, timeout=30) as http:
        session, required = _parked(http, _call("web__echo", {"text": "after sign-in"}))
        url = required["authorization"]["url"]
        query = parse_qs(urlsplit(url).query)
        assert url.startswith(f"http://127.0.0.1:{oauth_mcp.port}/authorize?")
        assert query["redirect_uri"] == [f"{eve.url}/eve/v1/connections/web/callback"]
        assert query["code_challenge_method"] == ["S256"] and query["state"][0]
        assert _of(_events(http, session), "action.result") == []  # parked: the call did not go out
        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            landed = browser.get(url)
        assert landed.status_code == 200, landed.text
        assert landed.json() == {"ok": True, "connection": "web", "outcome": "authorized", "resumed": 1}
        events = _wait(http, session, "session.waiting")
        (completed,) = _of(events, "authorization.completed")
        assert completed["data"]["outcome"] == "authorized"
        assert completed["data"]["attemptId"] == required["attemptId"]
        (result,) = [e["data"] for e in _of(events, "action.result")]
        assert result["status"] == "completed" and "echo: after sign-in" in json.dumps(result)
        # signed in: the next call goes out at once, and nothing secret was written
        http.post(f"/eve/v1/session/{session}", json={"message": _call("web__grants", {})})
        events = _wait(http, session, "session.waiting", count=2)
        grants = [e["data"] for e in _of(events, "action.result")][-1]["result"]["output"]["structuredContent"]
        assert grants == {"registrations": 1, "codes": 1, "refreshes": 0}
        assert len(_of(events, "authorization.required")) == 1
        text = json.dumps(events)
        assert "access_token" not in text and "refresh_token" not in text and "client_secret" not in text
        info = http.get("/eve/v1/info").text
        assert '"hasAuthorization":true' in info and "client_secret" not in info
        # the same callback again (a replayed code): the state was single use
        replay = httpx.get(landed.url, timeout=10)
        assert replay.status_code == 400 and replay.json()["code"] == "unknown_sign_in"


def test_an_unknown_state_or_a_refusal_is_answered_clearly(tmp_path: Path, oauth_mcp: McpHttpServer) -> None:
    with _serve(tmp_path, oauth_mcp.url) as eve, httpx.Client(base_url=eve.url, timeout=30) as http:
        callback = "/eve/v1/connections/web/callback"
        bogus = http.get(callback, params={"state": "made-up", "code": "x"})
        assert bogus.status_code == 400 and bogus.json()["code"] == "unknown_sign_in"
        page = http.get(callback, params={"state": "made-up"}, headers={"accept": "text/html"})
        assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
        assert "unknown" in page.text and "<script" not in page.text
        assert http.get("/eve/v1/connections/nope/callback").status_code == 404
        token = http.post("/eve/v1/connections/web/token", json={"token": "pasted"})
        assert token.status_code == 400 and token.json()["code"] == "oauth_connection"
        session, required = _parked(http, _call("web__echo", {"text": "never"}))
        state = parse_qs(urlsplit(required["authorization"]["url"]).query)["state"][0]
        assert http.get(callback, params={"state": state}).json()["code"] == "invalid_callback"
        refused = http.get(callback, params={"state": state, "error": "access_denied"})
        assert refused.status_code == 200 and refused.json()["outcome"] == "declined", refused.text
        events = _wait(http, session, "session.waiting")
        (completed,) = _of(events, "authorization.completed")
        assert completed["data"]["outcome"] == "declined"
        (result,) = [e["data"] for e in _of(events, "action.result")]
        assert result["status"] != "completed"


def test_cancel_while_parked_declines_and_a_late_sign_in_resumes_nothing(
    tmp_path: Path, oauth_mcp: McpHttpServer
) -> None:
    with _serve(tmp_path, oauth_mcp.url) as eve, httpx.Client(base_url=eve.url, timeout=30) as http:
        session, required = _parked(http, _call("connection_search", {"query": "*"}))
        assert http.post(f"/eve/v1/session/{session}/cancel", json={}).status_code == 202
        events = _wait(http, session, "session.waiting")
        (completed,) = _of(events, "authorization.completed")
        assert completed["data"]["outcome"] == "declined" and _of(events, "turn.cancelled")
        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            late = browser.get(required["authorization"]["url"])
        assert late.json() == {"ok": True, "connection": "web", "outcome": "authorized", "resumed": 0}
        assert len(_of(_events(http, session), "turn.started")) == 1  # the withdrawn request started nothing


def test_an_expired_access_token_is_refreshed(tmp_path: Path) -> None:
    server = McpHttpServer(
        tmp_path, fixture=OAUTH_FIXTURE, environment={"MCP_TOKEN_SECONDS": "1", "MCP_TOKEN_GRACE": "60"}
    ).start()
    try:
        with _serve(tmp_path, server.url) as eve, httpx.Client(base_url=eve.url, timeout=30) as http:
            session, required = _parked(http, _call("web__grants", {}))
            with httpx.Client(timeout=30, follow_redirects=True) as browser:
                assert browser.get(required["authorization"]["url"]).json()["outcome"] == "authorized"
            _wait(http, session, "session.waiting")
            time.sleep(1.5)  # the client's one-second access token expires (the server's grace keeps a slow
            # first use valid); the refresh token does not
            http.post(f"/eve/v1/session/{session}", json={"message": _call("web__grants", {})})
            events = _wait(http, session, "session.waiting", count=2)
            last = [e["data"] for e in _of(events, "action.result")][-1]
            assert last["status"] == "completed", last
            grants = last["result"]["output"]["structuredContent"]
            assert grants["codes"] == 1 and grants["refreshes"] >= 1  # refreshed, not signed in again
            assert len(_of(events, "authorization.required")) == 1
    finally:
        server.kill()


def test_a_revoked_sign_in_fails_the_call_and_the_next_one_signs_in_again(
    tmp_path: Path, oauth_mcp: McpHttpServer
) -> None:
    with _serve(tmp_path, oauth_mcp.url) as eve, httpx.Client(base_url=eve.url, timeout=30) as http:
        session, required = _parked(http, _call("web__revoke", {}))
        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            assert browser.get(required["authorization"]["url"]).json()["outcome"] == "authorized"
        _wait(http, session, "session.waiting")  # the server forgot every token: ours is refused now
        # The link learns it at its next request: this call fails (never sent with the old token)...
        # or it already did (its event stream reconnected), and this call parks for a new sign-in.
        http.post(f"/eve/v1/session/{session}", json={"message": _call("web__echo", {"text": "again"})})
        events = _until(
            http, session, lambda e: len(_of(e, "session.waiting")) == 2 or len(_of(e, "turn.waiting")) == 2
        )
        if len(_of(events, "authorization.required")) == 1:
            failed = [e["data"] for e in _of(events, "action.result")][-1]
            assert failed["status"] == "failed" and failed["error"]["code"] == "AUTHORIZATION_REQUIRED", failed
            http.post(f"/eve/v1/session/{session}", json={"message": _call("web__echo", {"text": "again"})})
            events = _wait(http, session, "authorization.required", count=2)
        assert "echo: again" not in json.dumps(events)
        again = _of(events, "authorization.required")[-1]["data"]["authorization"]["url"]
        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            assert browser.get(again).json()["resumed"] == 1
        turns = len(_of(events, "turn.started"))
        events = _wait(http, session, "turn.completed", count=turns)
        last = [e["data"] for e in _of(events, "action.result")][-1]
        assert last["status"] == "completed" and "echo: again" in json.dumps(last)
