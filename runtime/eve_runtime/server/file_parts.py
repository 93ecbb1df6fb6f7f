"""File and image parts of a `message`: validated here, their bytes kept in the delivery for the sandbox.

eve's message parts (the AI SDK's `UserContent`): `{"type": "file", "data", "mediaType",
"filename"?}` and `{"type": "image", "image", "mediaType"?}`, where the data is base64 or a
`data:` URL. Both become `{"type": "file", "mediaType", "filename"?, "size", "data"}` in the
delivery; when the turn starts, the engine writes the bytes to
`/workspace/.eve/attachments/<hash>/<name>` and the model reads a reference to that file. The
stream never carries the bytes. URLs are not fetched (send the bytes), and eve's internal
reference schemes (`eve-sandbox:`, `eve-url:`) are refused.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from eve_runtime.server.responses import ApiError

__all__ = ["file_part"]

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


def _decode(data: str) -> tuple[bytes, str | None]:
    """The bytes of base64 text or a `data:` URL, and the media type a data URL names."""
    if data.startswith(("eve-sandbox:", "eve-url:")):
        raise _bad("File data may not use eve's internal reference schemes (eve-sandbox:, eve-url:).")
    if data.startswith(("http://", "https://")):
        raise _bad("File parts carry their bytes (base64, or a data: URL): URLs are not fetched.")
    media: str | None = None
    if data.startswith("data:"):
        match = _DATA_URL.match(data)
        if match is None or ";base64" not in match.group("params"):
            raise _bad("A data: URL in a file part must be base64 (data:<type>;base64,<data>).")
        media = match.group("media") or None
        data = match.group("payload")
    try:
        return base64.b64decode(data, validate=True), media
    except (binascii.Error, ValueError):
        raise _bad("Expected a file part's data to be base64 (or a data: URL).") from None


def _sniff(content: bytes) -> str:
    for signature, media in _IMAGE_SIGNATURES:
        if content.startswith(signature):
            return media
    return "application/octet-stream"


def file_part(part: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """A file or image part as the delivery keeps it, and its line in the flattened message text.

    Raises:
        ApiError: 400 for data that is not base64, a URL, a bad media type or filename.
    """
    kind = part.get("type")
    raw = part.get("image") if kind == "image" else part.get("data")
    if not isinstance(raw, str) or not raw:
        field = "image" if kind == "image" else "data"
        raise _bad(f"Expected a {kind} part's '{field}' to be base64 text or a data: URL.")
    content, from_url = _decode(raw.strip())
    media = part.get("mediaType") or from_url or (_sniff(content) if kind == "image" else None)
    if not isinstance(media, str) or not _MEDIA_TYPE.match(media):
        raise _bad(f"Expected a {kind} part's 'mediaType' to be a media type such as text/csv.")
    filename = part.get("filename")
    if filename is not None and (not isinstance(filename, str) or not filename.strip() or "\0" in filename):
        raise _bad("Expected a file part's 'filename' to be a non-empty string.")
    kept: dict[str, Any] = {"type": "file", "mediaType": media}
    if filename is not None:
        kept["filename"] = filename
    kept["size"] = len(content)
    kept["data"] = base64.b64encode(content).decode("ascii")
    text = f"[image: {media}]" if kind == "image" else f"[file: {filename or 'attachment'} ({media})]"
    return kept, text
