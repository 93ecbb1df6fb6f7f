"""What the browser scenarios share: a real `eve dev` process, screenshots, the browser's path."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx

REPO = Path(__file__).resolve().parents[3]
SCREENSHOTS = REPO / "test-output" / "inspector"
"""Where every scenario's screenshot is also copied, for a person to look at (git-ignored)."""
CHROMIUM = os.environ.get("EVE_TEST_CHROMIUM", "/usr/bin/chromium")
MISSING_BROWSER = "Chromium is not installed (/usr/bin/chromium): run `make chromium` (apt-get install chromium)"
MISSING_PLAYWRIGHT = "Playwright is not installed: run `make install` (it is in the dev extra)"


def browser_missing() -> str | None:
    """Why the browser scenarios cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return MISSING_PLAYWRIGHT
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return MISSING_BROWSER
    return None


def screenshot(page: Any, folder: Path, scenario: str) -> Path:
    """Save the page as `<folder>/<scenario>.png` and copy it to `test-output/inspector/`."""
    path = folder / f"{scenario}.png"
    page.screenshot(path=str(path), full_page=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, SCREENSHOTS / path.name)
    return path


def _eve() -> list[str]:
    script = Path(sys.executable).with_name("eve")
    return [str(script)] if script.exists() else [sys.executable, "-m", "eve_cli"]


class EveDev:
    """`eve dev --no-ui` (or another serving command) on an app, as a process of its own; `kill()` is a SIGKILL."""

    def __init__(
        self, app: Path, log: Path, *, command: tuple[str, ...] = ("dev", "--no-ui"), env: dict[str, str] | None = None
    ) -> None:
        self.app = app
        self.log = log
        self.command = command
        self.env = env or {}
        self.port = 0
        self.process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *args: str, timeout: float = 30.0) -> str:
        """Start it (on the port of the previous start, if any) and wait for its listening line."""
        self._log = self.log.open("a")
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [*_eve(), *self.command, "--port", str(self.port), *args],
            cwd=self.app,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                self._close()
                raise RuntimeError(f"eve {self.command[0]} exited ({self.process.wait()}) before listening: {self.log}")
            found = re.search(r"eve listening on http://127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                return self.url
        self.kill()
        raise RuntimeError(f"eve {self.command[0]} did not listen within {timeout}s: see {self.log}")

    def kill(self) -> None:
        """SIGKILL, mid-whatever: nothing gets to finish."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self._close()

    def stop(self) -> None:
        """A graceful stop (SIGTERM), or a kill when it takes too long."""
        if self.process is None or self.process.poll() is not None:
            self._close()
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
        self._close()

    def _close(self) -> None:
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def headers(self) -> dict[str, str]:
        token = self.env.get("EVE_AUTH_TOKEN")
        return {"authorization": f"Bearer {token}"} if token else {}

    def stored_events(self, session_id: str) -> list[dict[str, Any]]:
        """The session's events as the server stores them (a bounded read)."""
        from tests.server.support import parse_ndjson

        url = f"{self.url}/eve/v1/session/{session_id}/stream?follow=false"
        response = httpx.get(url, headers=self.headers(), timeout=10)
        response.raise_for_status()
        return parse_ndjson(response.content)

    def create(self, message: str) -> str:
        response = httpx.post(
            f"{self.url}/eve/v1/session", json={"message": message}, headers=self.headers(), timeout=10
        )
        response.raise_for_status()
        return str(response.json()["sessionId"])
