"""File and image parts over HTTP: accepted as base64 or data: URLs, staged in the sandbox, never on the stream."""

from __future__ import annotations

import base64
import hashlib

from tests.server.support import Harness

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 8


def test_a_file_part_reaches_the_sandbox_and_the_stream_shows_its_metadata(api: Harness, app_root: object) -> None:
    data = b"hello from a file\n"
    digest = hashlib.sha256(data).hexdigest()[:16]
    message = [
        {"type": "text", "text": "/reply seen"},
        {"type": "file", "data": base64.b64encode(data).decode(), "mediaType": "text/plain", "filename": "../../x.txt"},
        {"type": "image", "image": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    ]
    session = api.create(message)
    events = api.wait_for(session, "session.waiting")
    received = next(e for e in events if e["type"] == "message.received")
    assert received["data"]["message"] == "/reply seen\n[file: ../../x.txt (text/plain)]\n[image: image/png]"
    assert received["data"]["parts"] == [
        {"text": "/reply seen", "type": "text"},
        {"type": "file", "mediaType": "text/plain", "filename": "../../x.txt", "size": len(data)},
        {"type": "file", "mediaType": "image/png", "size": len(PNG)},
    ]
    root = api.runtime.sandboxes.workspaces.root / session / "workspace" / ".eve" / "attachments"
    assert (root / digest / "x.txt").read_bytes() == data  # the name is kept, never a path out of the folder
    assert (root / hashlib.sha256(PNG).hexdigest()[:16] / "attachment.png").read_bytes() == PNG
    body = api.client.get(f"/eve/v1/session/{session}/stream?follow=false").content
    assert base64.b64encode(data) not in body
