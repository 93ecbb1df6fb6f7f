"""Files attached to a message: written into the session's sandbox, and handed to the model.

A file part's bytes go to `/workspace/.eve/attachments/<hash>/<name>` (the first 16 hex digits
of their SHA-256: the same bytes land in the same place, so staging again after a crash changes
nothing). The model reads `Attached file <path> (<media type>)` and can open the file with
`read_file` or `bash`; a part given by URL reads `Attached file <url> (<media type>)`. When
the sandbox cannot be reached the model reads why instead, and the turn goes on. The stream
keeps only the part's `mediaType`, `filename` and `size` (or `url`), never the bytes.

Every part also reaches the model as an [`Attachment`][eve_runtime.messages.Attachment] of the
user message (the litellm adapter makes content parts of them: `models.openai_format`), so
history keeps the bytes of the message's files (bounded by the server's part and body caps).

A message that joins a running turn (steering) is not staged: its files reach the model as
`[file: name (type)]` and as attachments.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
from collections.abc import Sequence
from typing import Any

from eve_runtime.engine.ports import Session
from eve_runtime.engine.workflow import session_sandbox
from eve_runtime.messages import Attachment

__all__ = ["ATTACHMENTS", "model_attachments", "public_parts", "stage_attachments"]

logger = logging.getLogger("eve.actor")

ATTACHMENTS = "/workspace/.eve/attachments"
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_EXTENSIONS = {"text/plain": ".txt", "text/csv": ".csv", "application/json": ".json", "application/pdf": ".pdf"}


def public_parts(parts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts as the stream shows them: file parts without their bytes."""
    return [{k: v for k, v in part.items() if k != "data"} if part.get("type") == "file" else part for part in parts]


def model_attachments(parts: Sequence[dict[str, Any]]) -> tuple[Attachment, ...]:
    """The file parts of a delivery as the model's attachments (bytes or URL), in order."""
    return tuple(
        Attachment(
            media_type=str(part.get("mediaType")),
            filename=part.get("filename"),
            size=part.get("size"),
            data=part.get("data"),
            url=part.get("url"),
        )
        for part in parts
        if part.get("type") == "file" and (isinstance(part.get("data"), str) or isinstance(part.get("url"), str))
    )


def _name(part: dict[str, Any]) -> str:
    filename = str(part.get("filename") or "")
    cleaned = _UNSAFE.sub("_", filename.replace("\\", "/").rsplit("/", 1)[-1]).strip(" .")
    if cleaned:
        return cleaned[:120]
    media = str(part.get("mediaType", ""))
    return "attachment" + _EXTENSIONS.get(media, "." + media.split("/")[-1] if media.startswith("image/") else "")


async def stage_attachments(session: Session, parts: Sequence[dict[str, Any]]) -> list[str]:
    """Write the file parts' bytes into the sandbox; the lines the model reads for them (in order)."""
    files = [part for part in parts if part.get("type") == "file" and isinstance(part.get("data"), str)]
    linked = [f"Attached file {part['url']} ({part.get('mediaType')})" for part in parts if _linked(part)]
    if not files:
        return linked
    try:
        sandbox = await session_sandbox(session)
    except Exception as exc:  # the sandbox cannot start here: the model is told, the turn goes on
        logger.warning("session %s: attachments not staged: %s", session.session_id, exc)
        return [
            f"Attached file {_name(part)} ({part.get('mediaType')}) could not be stored in the sandbox: {exc}"
            for part in files
        ] + linked
    lines = []
    for part in files:
        data = base64.b64decode(part["data"])
        path = f"{ATTACHMENTS}/{hashlib.sha256(data).hexdigest()[:16]}/{_name(part)}"
        await sandbox.write_file(path, data)
        lines.append(f"Attached file {path} ({part.get('mediaType')})")
    return lines + linked


def _linked(part: dict[str, Any]) -> bool:
    return part.get("type") == "file" and isinstance(part.get("url"), str)
