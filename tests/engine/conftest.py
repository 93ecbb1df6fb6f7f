"""Every test of tests/engine runs once per kind of store (`harness_store` in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.harness import StoreKind


@pytest.fixture(autouse=True)
def _on_each_store(harness_store: StoreKind) -> StoreKind:
    return harness_store
