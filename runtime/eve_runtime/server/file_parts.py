"""File and image parts of a `message`: validated here, their bytes kept in the delivery for the engine.

eve's message parts (the AI SDK's `UserContent`): `{"type": "file", "data", "mediaType",
"filename"?}` and `{"type": "image", "image", "mediaType"?}`, where the data is base64, a
`data:` URL or an `http(s)` URL. Bytes become `{"type": "file", "mediaType", "filename"?,
"size", "data"}` in the delivery, a URL `{"type": "file", "mediaType", "filename"?, "url"}`.
The engine writes bytes to `/workspace/.eve/attachments/<hash>/<name>` and hands every part to
the model as a content part (`engine.attachments`). The stream never carries the bytes.

The server never fetches a URL (the model's provider does): it refuses schemes other than
`http(s)`, credentials in the URL, and hosts that name this machine or a private network, as
well as eve's internal reference schemes (`eve-sandbox:`, `eve-url:`). A part's bytes may be at
most [`MAX_FILE_BYTES`][eve_runtime.server.file_parts.MAX_FILE_BYTES] (413 beyond), on top of
the body's own cap.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from eve_runtime.authoring.sandbox import is_public
from eve_runtime.server.responses import ApiError

__all__ = ["MAX_FILE_BYTES", "MAX_URL_LENGTH", "file_part"]

MAX_FILE_BYTES = 20 * 1024 * 1024
"""The most bytes one file or image part may carry (decoded)."""
MAX_URL_LENGTH = 2048
_IMAGE_EXTENSIONS = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif"}
_IMAGE_EXTENSIONS["webp"] = "image/webp"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
_MEDIA_TYPE = re.compile(r"^[\w.+-]+/[\w.+*-]+$")
_DATA_URL = re.compile(r"^data:(?P<media>[^;,]*)(?P<params>(;[^;,]*)*),(?P<payload>.*)$", re.DOTALL)
_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"RIFF", "image/webp"),
)


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "invalid_part")


def _url(url: str) -> str:
    """An `http(s)` URL the model's provider may fetch; 400 for one the server will not hand on."""
    refused = "The server does not pass on this file URL: "
    if len(url) > MAX_URL_LENGTH or _CONTROL_OR_SPACE.search(url):
        raise _bad(f"{refused}it is longer than {MAX_URL_LENGTH} characters or holds spaces or control characters.")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        raise _bad(f"{refused}it is not a valid URL.") from None
    if parts.username is not None or parts.password is not None:
        raise _bad(f"{refused}it carries credentials (user:password@).")
    if not host or host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        raise _bad(f"{refused}it names no public host.")
    try:
        public = is_public(host)
    except ValueError:  # a name, not an address
        return url
    if not public:
        raise _bad(f"{refused}it names a loopback, private or reserved address.")
    return url


def _decode(data: str) -> tuple[bytes | str, str | None]:
    """The bytes of base64 text or a `data:` URL (and the media type it names), or an `http(s)` URL."""
    if data.startswith(("eve-sandbox:", "eve-url:")):
        raise _bad("File data may not use eve's internal reference schemes (eve-sandbox:, eve-url:).")
    if data.startswith(("http://", "https://")):
        return _url(data), None
    media: str | None = None
    if data.startswith("data:"):
        match = _DATA_URL.match(data)
        if match is None or ";base64" not in match.group("params"):
            raise _bad("A data: URL in a file part must be base64 (data:<type>;base64,<data>).")
        media = match.group("media") or None
        data = match.group("payload")
    elif _SCHEME.match(data):
        raise _bad("The server does not pass on this file URL: only http(s) URLs (or the bytes) are accepted.")
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _bad("Expected a file part's data to be base64, a data: URL or an http(s) URL.") from None
    if len(content) > MAX_FILE_BYTES:
        raise ApiError(413, f"A file part may carry at most {MAX_FILE_BYTES} bytes.", "file_too_large")
    return content, media


def _sniff(content: bytes) -> str:
    for signature, media in _IMAGE_SIGNATURES:
        if content.startswith(signature):
            return media
    return "application/octet-stream"


def file_part(part: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """A file or image part as the delivery keeps it, and its line in the flattened message text.

    Raises:
        ApiError: 400 for data that is not base64, a URL the server will not pass on, a bad
            media type or filename; 413 for more than `MAX_FILE_BYTES`.
    """
    kind = part.get("type")
    raw = part.get("image") if kind == "image" else part.get("data")
    if not isinstance(raw, str) or not raw:
        field = "image" if kind == "image" else "data"
        raise _bad(f"Expected a {kind} part's '{field}' to be base64 text, a data: URL or an http(s) URL.")
    content, from_url = _decode(raw.strip())
    media = part.get("mediaType") or from_url
    if media is None and kind == "image":
        media = _sniff(content) if isinstance(content, bytes) else _image_type_of(content)
    if not isinstance(media, str) or not _MEDIA_TYPE.match(media):
        raise _bad(f"Expected a {kind} part's 'mediaType' to be a media type such as text/csv.")
    if kind == "image" and not media.startswith("image/"):
        raise _bad(f"Expected an image part's 'mediaType' to be an image type such as image/png, not {media}.")
    filename = part.get("filename")
    if filename is not None and (not isinstance(filename, str) or not filename.strip() or "\0" in filename):
        raise _bad("Expected a file part's 'filename' to be a non-empty string.")
    kept: dict[str, Any] = {"type": "file", "mediaType": media}
    if filename is not None:
        kept["filename"] = filename
    if isinstance(content, str):
        kept["url"] = content
    else:
        kept["size"] = len(content)
        kept["data"] = base64.b64encode(content).decode("ascii")
    text = f"[image: {media}]" if kind == "image" else f"[file: {filename or media} ({media})]"
    return kept, text


def _image_type_of(url: str) -> str:
    extension = urlsplit(url).path.rsplit(".", 1)[-1].lower()
    if extension not in _IMAGE_EXTENSIONS:
        raise _bad("Expected an image part given by URL to name its 'mediaType' (such as image/png).")
    return _IMAGE_EXTENSIONS[extension]
