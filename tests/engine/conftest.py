"""Engine test fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.engine.harness import Harness, make_harness


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    h = await make_harness(tmp_path)
    try:
        yield h
    finally:
        await h.stop()
        h.app.loader.release()
