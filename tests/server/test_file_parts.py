"""File and image parts over HTTP: bytes staged in the sandbox, URLs handed on, neither fetched nor streamed."""

from __future__ import annotations

import base64
import hashlib

import pytest

from eve_runtime.server import file_parts
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


def test_a_url_part_is_handed_on_never_fetched(api: Harness) -> None:
    message = [
        {"type": "text", "text": "look"},
        {"type": "image", "image": "https://example.com/cat.png"},
        {"type": "file", "data": "https://example.com/doc.pdf", "mediaType": "application/pdf", "filename": "doc.pdf"},
    ]
    session = api.create(message)
    events = api.wait_for(session, "session.waiting")
    received = next(e for e in events if e["type"] == "message.received")
    assert received["data"]["message"] == "look\n[image: image/png]\n[file: doc.pdf (application/pdf)]"
    assert received["data"]["parts"][1:] == [
        {"type": "file", "mediaType": "image/png", "url": "https://example.com/cat.png"},
        {"type": "file", "mediaType": "application/pdf", "filename": "doc.pdf", "url": "https://example.com/doc.pdf"},
    ]
    reply = next(e for e in events if e["type"] == "message.completed")["data"]["message"]
    assert reply.splitlines() == [
        "echo: look",
        "Attached file https://example.com/cat.png (image/png)",
        "Attached file https://example.com/doc.pdf (application/pdf)",
        "[attached https://example.com/cat.png (image/png)]",  # the test model describes what it got
        "[attached https://example.com/doc.pdf (application/pdf)]",
    ]
    assert not (api.runtime.sandboxes.workspaces.root / session).exists()  # nothing to stage: no sandbox started


def test_a_follow_up_and_a_steering_message_carry_their_parts_to_the_model(api: Harness) -> None:
    data = base64.b64encode(b"a,b\n1,2\n").decode()
    session = api.create("first")
    api.wait_for(session, "session.waiting")
    part = {"type": "file", "data": f"data:text/csv;base64,{data}", "filename": "t.csv"}
    answer = api.client.post(f"/eve/v1/session/{session}", json={"message": [{"type": "text", "text": "next"}, part]})
    assert answer.status_code == 202
    events = api.wait_for(session, "session.waiting", count=2)
    replies = [e["data"]["message"] for e in events if e["type"] == "message.completed"]
    assert replies[-1].endswith("\n[attached t.csv (text/csv, 8 bytes)]")
    received = [e for e in events if e["type"] == "message.received"][-1]
    assert received["data"]["parts"][1] == {"type": "file", "mediaType": "text/csv", "filename": "t.csv", "size": 8}


def test_a_part_over_the_cap_is_413(api: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_parts, "MAX_FILE_BYTES", 8)
    part = {"type": "file", "data": base64.b64encode(b"123456789").decode(), "mediaType": "text/plain"}
    answer = api.client.post("/eve/v1/session", json={"message": [part]})
    assert answer.status_code == 413
    assert answer.json() == {"ok": False, "error": "A file part may carry at most 8 bytes.", "code": "file_too_large"}
    part["data"] = base64.b64encode(b"12345678").decode()
    assert api.client.post("/eve/v1/session", json={"message": [part]}).status_code == 202
