"""Fixtures of the server tests: one scaffolded, compiled test-model app per session."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from tests.server.support import Harness, harness, scaffold_app


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give schemathesis' per-operation items their operation in the node id.

    Under pytest 9 they share one id (`test_fuzz.py::test_api_conforms`: its structured node id
    drops the bracket schemathesis puts in the name), and pytest-xdist, which schedules and reports
    by node id, counted the 18 as one.
    """
    for item in items:
        if type(item).__name__ != "SchemathesisFunction" or "[" not in item.name or "[" in item.nodeid:
            continue
        params = item.name[item.name.index("[") + 1 : -1]  # (pytest 8 ids keep the bracket: skipped above)
        setattr(item, "_id", dataclasses.replace(getattr(item, "_id"), params=params))  # noqa: B009, B010


@pytest.fixture(scope="session")
def compiled_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CompiledApp]:
    app_root = scaffold_app(tmp_path_factory.mktemp("server") / "weather-agent")
    compiled = compile_app(app_root, write=False)
    assert compiled.ok, compiled.diagnostics
    yield compiled
    compiled.loader.release()


@pytest.fixture
def agent(compiled_app: CompiledApp) -> RuntimeAgent:
    assert compiled_app.root is not None
    return compiled_app.root


@pytest.fixture
def manifest(compiled_app: CompiledApp) -> Manifest:
    return compiled_app.manifest


@pytest.fixture
def api(agent: RuntimeAgent, manifest: Manifest) -> Iterator[Harness]:
    """The app in development mode, for a TestClient treated as local."""
    with harness(agent, manifest) as h:
        yield h


@pytest.fixture
def app_root(compiled_app: CompiledApp) -> Path:
    return compiled_app.paths.app_root
