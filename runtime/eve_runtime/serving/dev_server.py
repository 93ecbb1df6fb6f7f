"""One `eve dev` server per app: its record in `.eve/dev-server-state.v1.json`.

A running `eve dev` writes its URL and process id there once it listens, and removes the record
when it stops. A second `eve dev` on the same app reads the record and, when that server answers
its health check, uses it instead of starting a second writer on the same store. A record whose
server does not answer (a crash, a kill) is stale and replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from eve_runtime._version import __version__

__all__ = ["DevServer", "STATE_FILE", "clear_record", "read_record", "running_server", "write_record"]

STATE_FILE = Path(".eve") / "dev-server-state.v1.json"


@dataclass(frozen=True)
class DevServer:
    """A running `eve dev`, as its record describes it."""

    url: str
    pid: int
    started_at: str
    version: str
    log_file: str | None = None
    """Where it logs (its terminal UI's `/trace` reads tracebacks there); None when it logs to stderr."""


def _path(app_root: Path) -> Path:
    return app_root / STATE_FILE


def write_record(app_root: Path, url: str, *, log_file: Path | None = None) -> DevServer:
    """Record this process as the app's `eve dev` server (atomically)."""
    logs = str(log_file) if log_file is not None else None
    server = DevServer(
        url=url, pid=os.getpid(), started_at=datetime.now(UTC).isoformat(), version=__version__, log_file=logs
    )
    path = _path(app_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    document = {"url": server.url, "pid": server.pid, "startedAt": server.started_at, "version": server.version}
    if logs is not None:
        document["logFile"] = logs
    temporary.write_text(json.dumps(document, indent=2) + "\n")
    temporary.replace(path)
    return server


def read_record(app_root: Path) -> DevServer | None:
    """The recorded server, or None (no record, or one that cannot be read)."""
    try:
        data = json.loads(_path(app_root).read_text())
        logs = data.get("logFile")
        return DevServer(
            url=str(data["url"]),
            pid=int(data["pid"]),
            started_at=str(data["startedAt"]),
            version=str(data["version"]),
            log_file=logs if isinstance(logs, str) else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def clear_record(app_root: Path) -> None:
    """Remove the record if it is this process's."""
    record = read_record(app_root)
    if record is not None and record.pid == os.getpid():
        with contextlib.suppress(OSError):
            _path(app_root).unlink()


def running_server(app_root: Path, *, timeout: float = 1.0) -> DevServer | None:
    """The app's `eve dev` server when its record names one that answers its health check."""
    record = read_record(app_root)
    if record is None or record.pid == os.getpid():
        return None
    try:
        response = httpx.get(f"{record.url}/eve/v1/health", timeout=timeout)
    except httpx.HTTPError:
        return None
    if response.status_code == 503:  # a full disk or a broken agent: it still runs, never start a second one
        try:
            return record if response.json().get("status") in ("degraded", "failed") else None
        except ValueError:
            return None
    return record if response.status_code == 200 else None
