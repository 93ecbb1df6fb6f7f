"""The web inspector's static files: `/` (the page) and `/inspector/<file>` (its CSS and ES modules).

The inspector is a view over the public API and the dev routes: the files here hold no data, and
every piece of a session the page shows comes from the same routes any client uses, under the
same auth. So:

- under `eve dev` the files obey the API's loopback rules (a peer on this machine, a `Host` that
  names it, a local `Origin` when one is sent): anything else is the same 403;
- under `eve start --inspector` the shell is served without a token (it holds nothing), and
  the page asks for `EVE_AUTH_TOKEN` before its first data call; without `--inspector`, `/`
  is 404 as any unknown route.

Every file is answered with a Content-Security-Policy that allows only this origin's scripts,
styles and connections (no inline script, no `eval`, no framing), `nosniff` and no referrer.
The page renders what a model or a tool wrote with `textContent`, never as HTML.

The files are read once, when the routes are made, from the package folder `inspector/` (shipped
in the wheel); a name outside that folder's listing is a 404, so no path reaches the disk.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from eve_runtime.server.auth import Authenticator, LoopbackAuth
from eve_runtime.server.responses import ApiError, error_response

__all__ = ["CONTENT_SECURITY_POLICY", "INSPECTOR_FILES", "STATIC_PREFIX", "inspector_routes"]

INSPECTOR_FILES = Path(__file__).with_name("inspector")
"""The folder of the page's files."""
STATIC_PREFIX = "/inspector/"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cache-control": "no-store",  # a new eve version's page never mixes with an old module
}
_NOT_FOUND = "Not found."


def _load(folder: Path) -> dict[str, tuple[bytes, str]]:
    """Every servable file of the folder: name -> (content, media type)."""
    files: dict[str, tuple[bytes, str]] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        media = _TYPES.get(path.suffix)
        if path.is_file() and media is not None:
            files[path.name] = (path.read_bytes(), media)
    return files


def inspector_routes(auth: Authenticator, *, folder: Path = INSPECTOR_FILES) -> list[Route]:
    """The page's routes: `GET /` and `GET /inspector/{name}`.

    Args:
        auth: The server's authenticator. A [`LoopbackAuth`][eve_runtime.server.auth.LoopbackAuth]
            (`eve dev`) guards the files too; a bearer token (`eve start --inspector`) does not,
            since the files hold no data and the page sends the token on every data call.
        folder: Where the files are (tests point it elsewhere).
    """
    files = _load(folder)
    guard = auth if isinstance(auth, LoopbackAuth) else None

    def answer(request: Request, name: str) -> Response:
        if guard is not None and (refused := guard.check(request.scope)) is not None:
            return error_response(ApiError(refused.status, refused.error, refused.code))
        found = files.get(name)
        if found is None:
            return error_response(ApiError(404, _NOT_FOUND, "not_found"))
        body, media = found
        return Response(body, media_type=media, headers=_HEADERS)

    async def page(request: Request) -> Response:
        return answer(request, "index.html")

    async def asset(request: Request) -> Response:
        return answer(request, request.path_params["name"])

    return [  # a page, not the API: the OpenAPI document leaves them out
        Route("/", page, methods=["GET"], include_in_schema=False),
        Route(STATIC_PREFIX + "{name}", asset, methods=["GET"], include_in_schema=False),
    ]
