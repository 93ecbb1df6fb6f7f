"""The framework's `web_fetch` tool: a URL's content as Markdown, text or HTML, fetched by the server.

Input `{"url", "format"?, "timeout"?}` (eve's); result `{"content", "contentType", "truncated",
"url"}` (`url` is where the last redirect led). It fetches with httpx from the app's process,
not from the sandbox, and guards against server-side request forgery: `http(s)` only, at most
10 redirects, and every destination's addresses resolved and checked first. A private,
loopback, link-local or otherwise non-public address is refused unless the agent's sandbox
network policy allows that host (`define_sandbox(network={"allow": ["127.0.0.1"]})`) or
everything (`"allow-all"`). The body is read up to 5 MB; the content then keeps its first 2000
lines / 50 KiB. A non-success status fails the call with the status and the start of the body.

Proxy variables of the server's environment are ignored (a proxy would bypass the address check).
The connection goes to the very address the check passed (the request keeps the name in its
`Host` header and, for https, in TLS's server name, against which the certificate is verified),
so a name whose DNS answer changes in between (DNS rebinding) cannot lead it elsewhere. An IPv6
address that carries an IPv4 one (`::ffff:127.0.0.1`, NAT64, 6to4, Teredo) is judged by that
too. The whole fetch, redirects included, ends at its timeout, however slowly a server answers.
"""

from __future__ import annotations

import ipaddress
import socket
import zlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from eve_runtime.authoring.sandbox import NetworkPolicy, is_public
from eve_runtime.authoring.tools import tool
from eve_runtime.sandbox.truncate import truncate

if TYPE_CHECKING:
    import httpx  # imported when a fetch runs: it costs a quarter of a second, and `eve info` never needs it

__all__ = [
    "WEB_FETCH_DESCRIPTION",
    "WEB_FETCH_INPUT_SCHEMA",
    "check_destination",
    "web_fetch",
    "web_fetch_tool",
]

MAX_REDIRECTS = 10
MAX_RESPONSE_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
_ERROR_BODY = 2000

WEB_FETCH_DESCRIPTION = "\n".join(
    [
        "Fetch a webpage and return its content in the requested format. Use this to retrieve and analyze "
        "content from URLs.",
        "",
        "Usage notes:",
        "- The URL must be a fully-formed valid http:// or https:// URL",
        "- HTML responses are converted to markdown or plain text based on the requested format",
        '- Format options: "markdown" (default), "text", or "html"',
        "- Default timeout is 30 seconds (max 120 seconds)",
        "- Maximum response size is 5 MB; content is further capped at 50 KB / 2000 lines",
        "- Private and loopback addresses are refused unless the agent allows them",
        "- This tool is read-only and does not modify any files",
    ]
)
WEB_FETCH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "format": {
            "type": "string",
            "enum": ["markdown", "text", "html"],
            "description": "The format to return the content in (text, markdown, or html). HTML responses are "
            'automatically converted to the requested format. Defaults to "markdown".',
        },
        "timeout": {"type": "number", "description": "Optional timeout in seconds. Defaults to 30, max 120."},
        "url": {"type": "string", "description": "The fully-formed URL to fetch content from."},
    },
    "required": ["url"],
    "additionalProperties": False,
}

Format = Literal["markdown", "text", "html"]


async def check_destination(url: httpx.URL, policy: NetworkPolicy) -> str:
    """The address to connect to for a URL; refuses one that is not http(s) or resolves where the policy forbids.

    Every address the name resolves to must be allowed (the first one is returned).
    """
    import asyncio

    if url.scheme not in ("http", "https"):
        raise ValueError(f"web_fetch fetches http and https URLs only, not {url.scheme or 'this'}: {url}")
    host = url.host
    if not host:
        raise ValueError(f"{url} names no host")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ConnectionError(f"web_fetch could not resolve {host}: {exc}") from None
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]  # a scope (fe80::1%eth0) is link-local: never public
        if not is_public(address) and not policy.permits_private(host, address):
            raise PermissionError(
                f"web_fetch refuses {host} ({address}): a private, loopback or reserved address. "
                f'An agent that needs it allows it in its sandbox: define_sandbox(network={{"allow": ["{host}"]}}).'
            )
        addresses.append(address)
    if not addresses:
        raise ConnectionError(f"web_fetch could not resolve {host}")
    return addresses[0]


def _pinned(url: httpx.URL, address: str) -> tuple[httpx.URL, dict[str, str], dict[str, Any]]:
    """The request for `url` sent to `address`: its URL, the `Host` header and the TLS server name."""
    try:
        ipaddress.ip_address(url.host)
    except ValueError:
        pass
    else:
        return url, {}, {}  # an address already: nothing to resolve again
    host_header = url.netloc.decode("ascii")
    extensions: dict[str, Any] = {"sni_hostname": url.raw_host.decode("ascii")} if url.scheme == "https" else {}
    return url.copy_with(host=address), {"host": host_header}, extensions


def _decode(body: bytes, response: httpx.Response) -> str:
    try:
        return body.decode(response.encoding or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


async def _fetch(url: str, policy: NetworkPolicy, timeout: float) -> tuple[httpx.Response, httpx.URL, bytes, bool]:
    """The final response, the URL it answered (as named, not the address), its body (capped), whether cut."""
    import httpx

    target = httpx.URL(url)
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            address = await check_destination(target, policy)
            pinned, host, extensions = _pinned(target, address)
            headers = {"accept": "text/html, text/*;q=0.9, */*;q=0.5", **host}
            async with client.stream("GET", pinned, headers=headers, extensions=extensions) as response:
                if response.is_redirect and "location" in response.headers:
                    target = target.join(response.headers["location"])
                    continue
                body = _Body(response.headers.get("content-encoding", ""))
                async for chunk in response.aiter_raw():
                    if body.add(chunk):
                        break
                return response, target, body.value(), body.cut
    raise ConnectionError(f"web_fetch stopped after {MAX_REDIRECTS} redirects from {url}")


class _Body:
    """A response body decompressed here, never past `MAX_RESPONSE_BYTES` (httpx would inflate a whole chunk).

    A small gzip "bomb" can inflate a thousandfold; each chunk is inflated only as far as the cap.
    """

    def __init__(self, encoding: str) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip().lower() not in ("", "identity")]
        if any(c not in ("gzip", "x-gzip", "deflate") for c in codings) or len(codings) > 1:
            raise ValueError(f"web_fetch cannot decode a body encoded as {encoding!r}")
        self.inflater = None
        if codings:
            wbits = zlib.MAX_WBITS | 16 if codings[0] != "deflate" else zlib.MAX_WBITS
            self.inflater = zlib.decompressobj(wbits)
            self.raw_deflate = codings[0] == "deflate"
        self.data = bytearray()
        self.cut = False

    def add(self, chunk: bytes) -> bool:
        """Take one raw chunk; True once the cap is reached (the rest is not read)."""
        if self.inflater is None:
            self.data += chunk
        else:
            pending = chunk
            while pending and len(self.data) <= MAX_RESPONSE_BYTES:
                try:
                    self.data += self.inflater.decompress(pending, MAX_RESPONSE_BYTES + 1 - len(self.data))
                except zlib.error:
                    if not self.raw_deflate or self.data:
                        raise ValueError("web_fetch could not decompress the response body") from None
                    self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # "deflate" sent without its zlib header
                    self.raw_deflate = False
                    continue
                pending = self.inflater.unconsumed_tail
        if len(self.data) > MAX_RESPONSE_BYTES:
            del self.data[MAX_RESPONSE_BYTES:]
            self.cut = True
        return self.cut

    def value(self) -> bytes:
        return bytes(self.data)


def web_fetch_tool(policy: NetworkPolicy) -> Callable[..., Coroutine[Any, Any, dict[str, Any]]]:
    """The `web_fetch` tool for an agent whose sandbox has this network policy."""

    @tool(description=WEB_FETCH_DESCRIPTION)
    async def web_fetch(
        url: Annotated[str, Field(description="The fully-formed URL to fetch content from.")],
        format: Annotated[Format | None, Field(description='"markdown" (default), "text" or "html".')] = None,
        timeout: Annotated[float | None, Field(gt=0, description="Timeout in seconds (30; at most 120).")] = None,
    ) -> dict[str, Any]:
        """Fetch a web page and return its content."""
        import asyncio

        import httpx

        seconds = min(timeout or DEFAULT_TIMEOUT, MAX_TIMEOUT)
        try:
            async with asyncio.timeout(seconds):
                response, where, body, cut = await _fetch(url, policy, seconds)
        except httpx.HTTPError as exc:
            raise ConnectionError(f"web_fetch could not fetch {url}: {exc}") from None
        except TimeoutError:
            raise TimeoutError(f"web_fetch gave up on {url} after {seconds:g} s") from None
        content_type = response.headers.get("content-type", "application/octet-stream")
        text = _decode(body, response)
        if not response.is_success:
            raise RuntimeError(
                f"{where} answered HTTP {response.status_code} {response.reason_phrase}"
                + (f": {text[:_ERROR_BODY].strip()}" if text.strip() else "")
            )
        kind = content_type.split(";", 1)[0].strip().lower()
        textual = kind.startswith("text/") or kind.endswith(("+xml", "+json", "/json", "/xml", "/javascript"))
        if not textual:
            raise ValueError(f"web_fetch returns text, and {where} is {kind} ({len(body)} bytes)")
        wanted: Format = format or "markdown"
        if kind in ("text/html", "application/xhtml+xml") and wanted != "html":
            from eve_runtime.sandbox.html_text import html_to_text  # only a fetch needs the HTML parser

            text = html_to_text(text, wanted)
        shaped = truncate(text, "head")
        return {
            "content": shaped.output,
            "contentType": content_type,
            "truncated": shaped.truncated or cut,
            "url": str(where),
        }

    return web_fetch


web_fetch = web_fetch_tool(NetworkPolicy())
"""`web_fetch` under the default policy: public addresses only."""
