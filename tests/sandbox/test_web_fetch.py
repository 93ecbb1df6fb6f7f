"""`web_fetch` against a real HTTP server on 127.0.0.1: formats, redirects, size cap, and the SSRF guard."""

from __future__ import annotations

import functools
import gzip
import json
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_runtime.authoring.sandbox import NetworkPolicy, define_sandbox
from eve_runtime.sandbox.tool_web_fetch import check_destination
from tests.harness import Harness, StoreKind, make_harness, of_type

pytestmark = pytest.mark.anyio

PAGE = "<html><head><title>Docs</title></head><body><h1>Hello</h1><p>See <a href='/next'>next</a>.</p></body></html>"


@functools.cache
def bomb() -> bytes:
    return gzip.compress(b"a" * (60 * 1024 * 1024), compresslevel=9)


ALLOW_LOOPBACK = {
    "agent/sandbox.py": (
        'from eve_runtime import define_sandbox\n\nsandbox = define_sandbox(network={"allow": ["127.0.0.1"]})\n'
    )
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/page":
            self._send(200, PAGE.encode())
        elif self.path == "/moved":
            self._send(302, b"", location="/page")
        elif self.path == "/to-private":
            self._send(302, b"", location="http://10.1.2.3/secret")
        elif self.path == "/loop":
            self._send(302, b"", location="/loop")
        elif self.path == "/big":
            self._send(200, b"x" * 100 + b"\n" + b"y" * (6 * 1024 * 1024), "text/plain")
        elif self.path == "/who":
            self._send(200, f"served by {self.connection.getsockname()[0]}".encode(), "text/plain")
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            for _ in range(16):  # a byte every 0.25 s: no single read waits long, the whole takes 4 s
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return  # the client gave up
                time.sleep(0.25)
        elif self.path == "/bomb":  # 60 KB on the wire, 60 MB inflated
            self._send(200, bomb(), "text/plain", **{"content-encoding": "gzip"})
        elif self.path == "/gzipped":
            self._send(200, gzip.compress(PAGE.encode()), **{"content-encoding": "gzip"})
        elif self.path == "/deflated":
            self._send(200, zlib.compress(PAGE.encode()), **{"content-encoding": "deflate"})
        elif self.path == "/binary":
            self._send(200, b"\x89PNG\r\n", "image/png")
        else:
            self._send(404, b"no such page", "text/plain")


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _on_each_store(harness_store: StoreKind) -> StoreKind:
    return harness_store


async def fetch(h: Harness, **arguments: Any) -> dict[str, Any]:
    sid = await h.create(f"/call web_fetch {json.dumps(arguments)}")
    events = await h.turns(sid, 1, timeout=20)
    result: dict[str, Any] = of_type(events, "action.result")[0]["data"]
    return result


@pytest.fixture
async def allowed(tmp_path: Path) -> Any:
    h = await make_harness(tmp_path, ALLOW_LOOPBACK)
    yield h
    await h.stop()


async def test_loopback_is_refused_by_default(tmp_path: Path, site: str) -> None:
    h = await make_harness(tmp_path)
    try:
        result = await fetch(h, url=f"{site}/page")
    finally:
        await h.stop()
    assert result["status"] == "failed"
    assert "a private, loopback or reserved address" in json.dumps(result["result"]["output"])


async def test_an_allowed_host_is_fetched_as_markdown_text_or_html(allowed: Harness, site: str) -> None:
    result = await fetch(allowed, url=f"{site}/moved")
    assert result["status"] == "completed"
    assert result["result"]["output"] == {
        "content": "# Docs\n\n# Hello\n\nSee [next](/next).\n",
        "contentType": "text/html; charset=utf-8",
        "truncated": False,
        "url": f"{site}/page",
    }
    text = (await fetch(allowed, url=f"{site}/page", format="text"))["result"]["output"]
    assert text["content"] == "Docs\n\nHello\n\nSee next.\n"
    html = (await fetch(allowed, url=f"{site}/page", format="html"))["result"]["output"]
    assert html["content"] == PAGE


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/to-private", "refuses 10.1.2.3"),
        ("/loop", "stopped after 10 redirects"),
        ("/missing", "HTTP 404 Not Found: no such page"),
        ("/binary", "web_fetch returns text"),
    ],
)
async def test_failures_are_results_the_model_reads(allowed: Harness, site: str, path: str, fragment: str) -> None:
    result = await fetch(allowed, url=site + path)
    assert result["status"] == "failed"
    assert fragment in json.dumps(result["result"]["output"])


async def test_other_schemes_are_refused(allowed: Harness) -> None:
    result = await fetch(allowed, url="file:///etc/passwd")
    assert result["status"] == "failed" and "http and https URLs only" in json.dumps(result["result"]["output"])


async def test_a_large_body_is_capped(allowed: Harness, site: str) -> None:
    output = (await fetch(allowed, url=f"{site}/big"))["result"]["output"]
    assert output["truncated"] is True
    assert output["content"].startswith("x" * 100 + "\n")
    assert len(output["content"].encode()) <= 50 * 1024 + 20


async def test_the_destination_check(tmp_path: Path) -> None:
    deny = define_sandbox().network
    with pytest.raises(PermissionError):
        await check_destination(httpx.URL("http://127.0.0.1/"), deny)
    with pytest.raises(PermissionError):
        await check_destination(httpx.URL("http://[::1]/"), deny)
    with pytest.raises(PermissionError):
        await check_destination(httpx.URL("http://169.254.169.254/latest/meta-data"), deny)  # cloud metadata
    await check_destination(httpx.URL("http://10.9.8.7/"), NetworkPolicy("allow-list", ("10.0.0.0/8",)))
    await check_destination(httpx.URL("http://10.9.8.7/"), NetworkPolicy("allow-all"))
    await check_destination(httpx.URL("http://93.184.216.34/"), deny)  # a public address needs no permission


@pytest.fixture
def two_sites() -> Iterator[int]:
    """The same port on 127.0.0.2 (which the agent allows) and on 127.0.0.1 (which it does not)."""
    servers = [ThreadingHTTPServer(("127.0.0.2", 0), _Handler)]
    servers.append(ThreadingHTTPServer(("127.0.0.1", servers[0].server_address[1]), _Handler))
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield servers[0].server_address[1]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


async def test_a_name_rebound_after_the_check_cannot_reach_a_refused_address(
    tmp_path: Path, two_sites: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name first resolves to an allowed address, then to loopback."""
    real = socket.getaddrinfo
    answers = ["127.0.0.2"]

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("rebind.test", b"rebind.test"):
            return real(answers.pop(0) if answers else "127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    allow = ALLOW_LOOPBACK["agent/sandbox.py"].replace("127.0.0.1", "127.0.0.2")
    h = await make_harness(tmp_path, {"agent/sandbox.py": allow})
    try:
        result = await fetch(h, url=f"http://rebind.test:{two_sites}/who", format="text")
    finally:
        await h.stop()
    assert result["status"] == "completed", result
    assert result["result"]["output"]["content"] == "served by 127.0.0.2"
    assert result["result"]["output"]["url"] == f"http://rebind.test:{two_sites}/who"


@pytest.mark.parametrize(
    "address",
    [
        "[::ffff:127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[64:ff9b::a00:1]",
        "[2002:7f00:1::1]",
        "[::127.0.0.1]",
        "[::ffff:a9fe:a9fe]",
    ],
)
async def test_ipv6_forms_of_private_ipv4_addresses_are_refused(address: str) -> None:
    with pytest.raises(PermissionError, match="private, loopback or reserved"):
        await check_destination(httpx.URL(f"http://{address}/"), define_sandbox().network)


async def test_the_destination_check_returns_the_address_to_connect_to() -> None:
    deny = define_sandbox().network
    assert await check_destination(httpx.URL("http://[2001:4860:4860::8888]/"), deny) == "2001:4860:4860::8888"
    assert await check_destination(httpx.URL("http://93.184.216.34/"), deny) == "93.184.216.34"


async def test_a_slow_drip_ends_at_the_timeout(allowed: Harness, site: str) -> None:
    started = time.monotonic()
    result = await fetch(allowed, url=f"{site}/drip", timeout=1)
    assert time.monotonic() - started < 3
    assert result["status"] == "failed"
    assert "gave up" in json.dumps(result["result"]["output"])


async def test_a_compressed_body_is_inflated_only_up_to_the_cap(allowed: Harness, site: str) -> None:
    for path in ("/gzipped", "/deflated"):
        output = (await fetch(allowed, url=site + path, format="html"))["result"]["output"]
        assert output["content"] == PAGE, path
    bomb()  # made before memory is measured
    tracemalloc.start()
    try:
        output = (await fetch(allowed, url=f"{site}/bomb", format="text"))["result"]["output"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert output["truncated"] is True and output["content"].startswith("a" * 1000)
    assert peak < 30 * 1024 * 1024, f"{peak / 2**20:.0f} MiB at the peak"
