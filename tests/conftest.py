"""Test-wide guards (no real model calls, no network beyond 127.0.0.1) and the shared `harness` fixture."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import eve_runtime.models as models
from tests.harness import STORE_KINDS, STORES, Harness, StoreKind, make_harness

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX paths
        return True
    host = address[0] if isinstance(address, tuple) and address else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise ConnectionRefusedError(f"tests may only connect to 127.0.0.1, not {address!r}")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise ConnectionRefusedError(f"tests may only connect to 127.0.0.1, not {address!r}")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _no_network_no_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", False)
    yield


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=STORE_KINDS)
async def harness_store(request: pytest.FixtureRequest, anyio_backend: str) -> AsyncIterator[StoreKind]:
    """The kind of store `make_harness` opens for this test; the stores it opened are closed after it.

    tests/engine, tests/tasks and tests/sessions use it in every test (their conftest.py), so each
    runs on each kind; pin a test with `@pytest.mark.parametrize("harness_store", [...], indirect=True)`.
    (`anyio_backend` makes anyio run this fixture for the few synchronous tests too.)
    """
    kind: StoreKind = request.param
    STORES.kind = kind
    try:
        yield kind
    finally:
        STORES.kind = "memory"
        await STORES.close()


@pytest.fixture
async def harness(tmp_path: Path, harness_store: StoreKind) -> AsyncIterator[Harness]:
    h = await make_harness(tmp_path)
    try:
        yield h
    finally:
        await h.stop()
        h.app.loader.release()
