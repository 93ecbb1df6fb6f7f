"""Shared test helpers: writing small eve apps into a temporary folder and reading their diagnostics."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.events.wire import event_line, now_iso
from eve_runtime.ids import new_event_id
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.store.base import Commit, EventRow, Store

__all__ = [
    "AGENT_PY",
    "INSTRUCTIONS_MD",
    "MINIMAL_APP",
    "app_modules",
    "codes",
    "compiled",
    "errors",
    "find",
    "minimal_app",
    "only",
    "warnings",
    "write_app",
    "write_events",
    "write_files",
]

AGENT_PY = """\
from eve_runtime import define_agent

agent = define_agent(model="test")
"""
"""An `agent.py` on the offline test model."""

INSTRUCTIONS_MD = "You are a helpful test agent.\n"

MINIMAL_APP: Mapping[str, str] = {"agent/agent.py": AGENT_PY, "agent/instructions.md": INSTRUCTIONS_MD}
"""The smallest app that compiles without needing a default model from the environment."""


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write `files` (relative path to content) under `root`.

    Text is dedented (so tests can indent their snippets), bytes are written as they are, and a
    path ending with `/` creates an empty folder. Parent folders are created as needed.
    """
    for relative, content in files.items():
        path = root / relative
        if relative.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")


def write_app(tmp_path: Path, files: Mapping[str, str | bytes], *, name: str = "app") -> Path:
    """Create an app folder `tmp_path/name` holding `files` (paths relative to the app root) and return it.

    Keys look like `agent/tools/get_weather.py`; see [`write_files`][tests.helpers.write_files].
    """
    app_root = tmp_path / name
    app_root.mkdir(parents=True, exist_ok=True)
    write_files(app_root, files)
    return app_root


def minimal_app(tmp_path: Path, files: Mapping[str, str | bytes] | None = None, *, name: str = "app") -> Path:
    """[`MINIMAL_APP`][tests.helpers.MINIMAL_APP] plus `files` (which may replace its entries)."""
    return write_app(tmp_path, {**MINIMAL_APP, **(files or {})}, name=name)


@contextmanager
def compiled(app_root: Path, *, write: bool = False) -> Iterator[CompiledApp]:
    """Compile an app and release its modules afterwards, so tests leave `sys.modules` as they found it."""
    app = compile_app(app_root, write=write)
    try:
        yield app
    finally:
        app.loader.release()


def codes(diagnostics: Iterable[Diagnostic]) -> list[str]:
    """The codes of `diagnostics`, in order."""
    return [d.code for d in diagnostics]


def errors(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Only the errors."""
    return [d for d in diagnostics if d.severity == "error"]


def warnings(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Only the warnings."""
    return [d for d in diagnostics if d.severity == "warning"]


def find(diagnostics: Iterable[Diagnostic], code: str) -> list[Diagnostic]:
    """The diagnostics with this code."""
    return [d for d in diagnostics if d.code == code]


def only(diagnostics: Iterable[Diagnostic], code: str) -> Diagnostic:
    """The one diagnostic with this code; fails with the full list when there is not exactly one."""
    items = list(diagnostics)
    found = find(items, code)
    assert len(found) == 1, f"expected exactly one {code!r}, got: {[(d.code, d.message) for d in items]}"
    return found[0]


def app_modules() -> set[str]:
    """The names in `sys.modules` that belong to a loaded generation of user code."""
    return {name for name in sys.modules if name.startswith("_eve_app_")}


async def write_events(store: Store, session_id: str, events: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Append events as given (`type`, `data`) to a session's log: what another eve version wrote."""
    start = await store.event_count(session_id)
    rows = [
        EventRow(
            index=start + offset,
            type=kind,
            line=event_line(kind, data, event_id=new_event_id(), at=now_iso(), delivery_ids=()),
        )
        for offset, (kind, data) in enumerate(events)
    ]
    await store.commit(session_id, Commit(events=rows))
