"""Auth (reliability plan §3.10 X2, X3): loopback-only `eve dev`, bearer-token `eve start`, health always open."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.auth import BearerTokenAuth, LoopbackAuth, is_loopback_host
from eve_runtime.server.channels import run_auth
from tests.server.support import Harness, harness

TOKEN = "s3cret-token-9f8e7d6c5b4a"
UNKNOWN = "wrun_01AAAAAAAAAAAAAAAAAAAAAAAA"
GUARDED = [
    ("GET", "/eve/v1/info"),
    ("GET", "/eve/v1/openapi.json"),
    ("POST", "/eve/v1/session"),
    ("POST", f"/eve/v1/session/{UNKNOWN}"),
    ("POST", f"/eve/v1/session/{UNKNOWN}/cancel"),
    ("POST", f"/eve/v1/session/{UNKNOWN}/compact"),
    ("POST", f"/eve/v1/session/{UNKNOWN}/clear"),
    ("POST", f"/eve/v1/session/{UNKNOWN}/reset"),
    ("GET", f"/eve/v1/session/{UNKNOWN}/stream?follow=false"),
]


@pytest.fixture
def dev(agent: RuntimeAgent, manifest: Manifest) -> Iterator[Harness]:
    """eve dev as a real loopback client reaches it: peer 127.0.0.1, Host 127.0.0.1:2000."""
    with harness(
        agent, manifest, auth=LoopbackAuth(), client=("127.0.0.1", 50000), base_url="http://127.0.0.1:2000"
    ) as h:
        yield h


# -- eve dev -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), GUARDED)
def test_dev_serves_loopback(dev: Harness, method: str, path: str) -> None:
    response = dev.client.request(method, path)
    assert response.status_code not in (401, 403), response.text


@pytest.mark.parametrize("peer", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
def test_dev_accepts_every_loopback_peer(agent: RuntimeAgent, manifest: Manifest, peer: str) -> None:
    with harness(agent, manifest, auth=LoopbackAuth(), client=(peer, 1), base_url="http://localhost:2000") as h:
        assert h.client.get("/eve/v1/info").status_code == 200


@pytest.mark.parametrize("peer", ["192.168.1.20", "10.0.0.1", "203.0.113.9", "::2", "testclient"])
def test_dev_refuses_other_peers(agent: RuntimeAgent, manifest: Manifest, peer: str) -> None:
    with harness(agent, manifest, auth=LoopbackAuth(), client=(peer, 1), base_url="http://127.0.0.1:2000") as h:
        for method, path in GUARDED:
            response = h.client.request(method, path, headers={"x-forwarded-for": "127.0.0.1", "x-eve-dev": "1"})
            assert response.status_code == 403, (method, path)
            assert response.json()["code"] == "forbidden"
            assert response.headers["cache-control"] == "no-store"
        assert h.client.get("/eve/v1/health").status_code == 200  # health stays open


@pytest.mark.parametrize("host", ["localhost", "localhost:2000", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:2000"])
def test_dev_accepts_local_host_headers(dev: Harness, host: str) -> None:
    assert dev.client.get("/eve/v1/info", headers={"host": host}).status_code == 200


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:2000", "localhost.evil.example", "127.0.0.1.nip.io:2000", "localhost:x", "[::1"],
)
def test_dev_refuses_foreign_host_headers(dev: Harness, host: str) -> None:
    for method, path in GUARDED:
        response = dev.client.request(method, path, headers={"host": host})
        assert response.status_code == 403, (host, method, path)
        assert response.json()["code"] == "forbidden_host"


def test_dev_accepts_the_bind_host(agent: RuntimeAgent, manifest: Manifest) -> None:
    auth = LoopbackAuth(bind_host="0.0.0.0")
    with harness(agent, manifest, auth=auth, client=("127.0.0.1", 1), base_url="http://0.0.0.0:2000") as h:
        assert h.client.get("/eve/v1/info").status_code == 200


@pytest.mark.parametrize("origin", ["http://localhost:5173", "https://127.0.0.1", "http://[::1]:3000"])
def test_dev_accepts_local_origins(dev: Harness, origin: str) -> None:
    response = dev.client.post("/eve/v1/session", headers={"origin": origin}, json={})
    assert response.status_code == 202


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "file://",
        "http://localhost.evil.example",
        "ftp://localhost",
        "http://localhost:x",
    ],
)
def test_dev_refuses_foreign_origins(dev: Harness, origin: str) -> None:
    response = dev.client.post(
        "/eve/v1/session", headers={"origin": origin, "content-type": "text/plain"}, content=b'{"message":"hi"}'
    )
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden_origin"
    assert dev.client.get(f"/eve/v1/session/{UNKNOWN}/stream", headers={"origin": origin}).status_code == 403


def test_loopback_hosts() -> None:
    assert all(map(is_loopback_host, ["localhost", "127.0.0.1", "127.255.0.1", "::1", "[::1]", "::ffff:127.0.0.1"]))
    assert not any(map(is_loopback_host, ["0.0.0.0", "::", "10.0.0.1", "example.com", "testclient", ""]))


# -- eve start ---------------------------------------------------------------------------------


@pytest.fixture
def start_no_token(agent: RuntimeAgent, manifest: Manifest) -> Iterator[Harness]:
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth(None), client=("127.0.0.1", 1)) as h:
        yield h


@pytest.fixture
def start(agent: RuntimeAgent, manifest: Manifest) -> Iterator[Harness]:
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth(TOKEN), client=("127.0.0.1", 1)) as h:
        yield h


@pytest.mark.parametrize(("method", "path"), GUARDED)
def test_start_without_a_configured_token_explains_how_to_set_one(
    start_no_token: Harness, method: str, path: str
) -> None:
    for headers in ({}, {"authorization": "Bearer "}, {"authorization": "Bearer anything"}):
        response = start_no_token.client.request(method, path, headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.headers["cache-control"] == "no-store"
        body = response.json()
        assert body["ok"] is False and body["code"] == "auth_not_configured"
        assert "EVE_AUTH_TOKEN" in body["error"] and "Authorization: Bearer <token>" in body["error"]


@pytest.mark.parametrize(("method", "path"), GUARDED)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": f"Bearer {TOKEN}x"},
        {"authorization": f"Bearer {TOKEN[:-1]}"},
        {"authorization": f"Basic {TOKEN}"},
        {"authorization": TOKEN},
        {"x-forwarded-for": "127.0.0.1", "host": "localhost", "x-eve-dev": "1"},
        {"authorization": "Bearer s3cret-token-9f8e7d6c5b4\u00e9".encode("latin-1")},
    ],
    ids=["none", "longer", "shorter", "basic", "no-scheme", "spoofed-local", "non-ascii"],
)
def test_start_refuses_wrong_credentials(
    start: Harness, method: str, path: str, headers: dict[str, str | bytes]
) -> None:
    raw = [(k.encode(), v if isinstance(v, bytes) else v.encode()) for k, v in headers.items()]
    response = start.client.request(method, path, headers=raw)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["code"] == "unauthorized"
    assert TOKEN not in response.text and TOKEN not in str(response.headers)


@pytest.mark.parametrize(("method", "path"), GUARDED)
@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_start_accepts_the_token(start: Harness, method: str, path: str, scheme: str) -> None:
    response = start.client.request(method, path, headers={"authorization": f"{scheme} {TOKEN}"})
    assert response.status_code not in (401, 403), response.text
    assert TOKEN not in response.text and TOKEN not in str(response.headers)


@pytest.mark.parametrize(("method", "path"), GUARDED)
@pytest.mark.parametrize(
    "values",
    [[f"Bearer {TOKEN}", "Bearer wrong"], ["Bearer wrong", f"Bearer {TOKEN}"], [f"Bearer {TOKEN}"] * 2, ["", ""]],
    ids=["right first", "right last", "the same twice", "both empty"],
)
def test_start_refuses_two_authorization_headers(start: Harness, method: str, path: str, values: list[str]) -> None:
    response = start.client.request(method, path, headers=[(b"authorization", v.encode()) for v in values])
    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["ok"], body["code"]) == (False, "duplicate_authorization")
    assert "more than one Authorization header" in body["error"]
    assert TOKEN not in response.text


@pytest.mark.parametrize(("method", "path"), GUARDED)
def test_dev_refuses_two_authorization_headers(dev: Harness, method: str, path: str) -> None:
    response = dev.client.request(method, path, headers=[(b"authorization", b"Bearer a")] * 2)
    assert (response.status_code, response.json()["code"]) == (400, "duplicate_authorization")


def test_start_info_reports_production(start: Harness) -> None:
    info = start.client.get("/eve/v1/info", headers={"authorization": f"Bearer {TOKEN}"}).json()
    assert (info["mode"], info["capabilities"]["devRoutes"]) == ("production", False)


@pytest.mark.parametrize("which", ["start", "start_no_token"])
def test_health_is_always_open(request: pytest.FixtureRequest, which: str) -> None:
    h: Harness = request.getfixturevalue(which)
    assert h.client.get("/eve/v1/health").status_code == 200
    assert h.client.head("/eve/v1/health").status_code == 200


def test_the_token_is_never_logged(start: Harness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    start.client.post("/eve/v1/session", headers={"authorization": f"Bearer {TOKEN}"}, json={"message": "hi"})
    start.client.post("/eve/v1/session", headers={"authorization": f"Bearer {TOKEN}!"}, json={"message": "hi"})
    assert TOKEN not in caplog.text


@pytest.mark.anyio
async def test_what_a_channel_auth_function_returned_is_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    def leaky(request: Any) -> str:
        return TOKEN  # a bug: the credential itself instead of a Principal

    caplog.set_level("DEBUG")
    outcome = await run_auth([leaky], None)  # type: ignore[arg-type]
    assert getattr(outcome, "status", None) == 401
    assert "str" in caplog.text and TOKEN not in caplog.text
