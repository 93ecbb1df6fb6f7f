"""A real `eve start` on a small tmpfs: the disk fills up, then is freed, and nothing accepted is lost.

While the disk is full (or under `EVE_MIN_FREE_MB`), requests answer 503 `store_unavailable` with
`Retry-After`, never 500, and never 202 for a message that was not stored; health says
`degraded`. Once space is freed, the refused messages are sent again (same idempotency keys) and
every message ever answered 202 is in the stream.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.crash.harness import TOKEN, Client, EveProcess, check, scaffold

pytestmark = pytest.mark.scenario

SIZE_MB = 24


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A `SIZE_MB` tmpfs mounted for this test (skipped where mounting is not allowed, saying why)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (this test fills a small disk of its own)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?): {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(path: Path, leave_bytes: int) -> None:
    """Write `path` until the file system has at most `leave_bytes` free (0: until it is full)."""
    chunk = b"\0" * 65536
    with path.open("ab") as filler:
        try:
            while True:
                stats = os.statvfs(path.parent)
                free = stats.f_bavail * stats.f_frsize
                if free <= leave_bytes:
                    break
                filler.write(chunk[: max(1, min(len(chunk), free - leave_bytes))])
                filler.flush()
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise


def _health(server: EveProcess) -> httpx.Response:
    return httpx.get(f"{server.url}/eve/v1/health", timeout=10)


@pytest.mark.parametrize("floor_mb", [0, 4], ids=["disk-full", "under-the-floor"])
def test_a_full_disk_refuses_with_503_and_loses_nothing(small_disk: Path, tmp_path: Path, floor_mb: int) -> None:
    app = scaffold(small_disk)
    server = EveProcess(app, tmp_path / "ledger.ndjson", env={"EVE_MIN_FREE_MB": str(floor_mb)})
    server.start()
    try:
        client = Client(server)
        created = client.create("op-disk", "/reply ready")
        assert created.outcome == "ok" and created.session is not None
        session = created.session
        client.wait_quiet(session)
        padding = "x" * 100_000  # each message needs room of its own
        accepted: set[str] = set()
        refused: list[tuple[str, str]] = []
        statuses: list[int] = []

        def send(n: int) -> None:
            key, message = f"disk-{n}", f'/call record {{"label": "d{n}"}}\n{padding}'
            op = client.send(session, message, key, policy="queue")
            statuses.append(op.status or 0)
            if op.outcome == "ok" and op.delivery:
                accepted.add(op.delivery)
            else:
                refused.append((key, message))

        for n in range(3):
            send(n)
        filler = small_disk / "filler"
        _fill(filler, leave_bytes=floor_mb * 1024 * 1024 // 2)
        for n in range(3, 40):
            send(n)
            if len(refused) >= 5:
                break
        assert refused, f"the full disk refused nothing: {statuses}"
        assert set(statuses) <= {202, 503}, statuses  # never a 500
        health = _health(server)
        assert health.status_code == 503 and health.json()["status"] == "degraded", health.text
        answer = httpx.post(
            f"{server.url}/eve/v1/session/{session}",
            json={"message": "more", "idempotencyKey": "probe"},
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        assert answer.status_code == 503 and answer.json()["code"] == "store_unavailable"
        assert int(answer.headers["retry-after"]) > 0
        filler.unlink()  # space again
        for key, message in refused:
            op = client.send(session, message, key, policy="queue")
            assert op.outcome == "ok" and op.delivery, op
            accepted.add(op.delivery)
        events = client.wait_quiet(session, deliveries=accepted, timeout=60)
        received = {d for e in events if e["type"] == "message.received" for d in e["meta"]["deliveryIds"]}
        assert accepted <= received
        assert _health(server).json()["status"] == "ready"
        report = check(client, [session], server.ledger)
        assert report.violations() == {}, report
    finally:
        server.kill()
