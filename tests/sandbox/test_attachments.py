"""Attached files: written to `/workspace/.eve/attachments/<hash>/`, referenced in history, never on the stream."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from tests.harness import StoreKind, make_harness, of_type

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _on_each_store(harness_store: StoreKind) -> StoreKind:
    return harness_store


async def test_an_attached_file_is_written_to_the_sandbox_and_referenced(tmp_path: Path) -> None:
    data = b"city,temp\nParis,21\n"
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = f"/workspace/.eve/attachments/{digest}/report.csv"
    h = await make_harness(tmp_path)
    try:
        parts = [
            {"type": "text", "text": "/call read_file " + json.dumps({"filePath": path})},
            {"type": "file", "mediaType": "text/csv", "filename": "report.csv", "size": len(data),
             "data": base64.b64encode(data).decode()},
        ]  # fmt: skip
        sid = await h.create("read it\n[file: report.csv (text/csv)]", parts=parts)
        events = await h.turns(sid, 1, timeout=20)
    finally:
        await h.stop()
    (received,) = of_type(events, "message.received")
    assert received["data"]["parts"][1] == {
        "type": "file",
        "mediaType": "text/csv",
        "filename": "report.csv",
        "size": 19,
    }
    assert "data" not in json.dumps(received["data"]["parts"])
    assert [e["data"]["result"]["output"] for e in of_type(events, "action.result")][0][
        "content"
    ] == "1: city,temp\n2: Paris,21"
    assert (
        h.app.paths.app_root / ".eve" / "sandboxes" / sid / "workspace" / ".eve" / "attachments" / digest / "report.csv"
    ).read_bytes() == data
    raw = b"".join(
        row.line if isinstance(row.line, bytes) else row.line.encode() for row in await h.store.read_events(sid)
    )
    assert base64.b64encode(data) not in raw  # the bytes never reach the stream
