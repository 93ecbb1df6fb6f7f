"""Hot reload by generations: new turns take the newest good build, running turns keep theirs."""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path

import pytest

from eve_runtime.project.compiler import compile_app
from eve_runtime.serving.reloader import Reloader, live_generations
from tests.harness import BASE_FILES, Harness, fast_options, last_reply, of_type
from tests.helpers import write_app

pytestmark = pytest.mark.anyio

SLOW = '''
import asyncio

async def version() -> str:
    """Say which version of the code runs."""
    await asyncio.sleep({delay})
    return "{label}"
'''


GATED = '''
import asyncio
from pathlib import Path

async def version() -> str:
    """Say which version of the code runs, once the test opens the gate."""
    while not Path({gate!r}).exists():
        await asyncio.sleep(0.01)
    return "{label}"
'''


def has_failed(reloader: Reloader) -> bool:
    return reloader.failed is not None


def write_tool(app: Path, label: str, delay: float = 0.0) -> None:
    (app / "agent" / "tools" / "version.py").write_text(SLOW.format(label=label, delay=delay))


async def reloading(tmp_path: Path) -> tuple[Harness, Reloader, Path]:
    app = write_app(tmp_path, dict(BASE_FILES))
    write_tool(app, "v1")
    compiled = compile_app(app, write=False)
    assert compiled.root is not None
    from eve_runtime.store.memory import MemoryStore

    store = MemoryStore()
    await store.open()
    h = Harness(app=compiled, store=store, options=fast_options())
    runtime = await h.start()
    return h, Reloader(app, runtime, compiled), app


async def test_a_new_build_serves_new_turns(tmp_path: Path) -> None:
    h, reloader, app = await reloading(tmp_path)
    sid = await h.create("/call version {}")
    assert last_reply(await h.turns(sid, 1)) == 'version -> "v1"'
    write_tool(app, "v2")
    outcome = await reloader.rebuild()
    assert outcome.ok and outcome.generation == reloader.generation
    await h.send(sid, "/call version {}")
    events = await h.turns(sid, 2)
    await h.stop()
    assert last_reply(events) == 'version -> "v2"'


async def test_a_running_turn_and_the_messages_queued_behind_it_finish_on_their_code(tmp_path: Path) -> None:
    h, reloader, app = await reloading(tmp_path)
    gate = tmp_path / "gate"
    (app / "agent" / "tools" / "version.py").write_text(GATED.format(gate=str(gate), label="v1-slow"))
    await reloader.rebuild()
    sid = await h.create("/call version {}")
    await h.wait_for(sid, lambda ev: "actions.requested" in [e["type"] for e in ev])
    write_tool(app, "v2")
    await reloader.rebuild()  # while the call waits at the gate
    await h.send(sid, "/call version {}", turnPolicy="queue")  # queued work: it stays on the running code
    gate.touch()
    await h.turns(sid, 2)
    await h.send(sid, "/call version {}")  # the session is idle: this delivery moves it
    events = await h.turns(sid, 3)
    await h.stop()
    results = [e["data"]["result"]["output"] for e in of_type(events, "action.result")]
    assert results == ["v1-slow", "v1-slow", "v2"]


async def test_a_broken_build_keeps_the_last_good_one_serving(tmp_path: Path) -> None:
    h, reloader, app = await reloading(tmp_path)
    good = reloader.generation
    (app / "agent" / "tools" / "version.py").write_text("def version(:\n")
    outcome = await reloader.rebuild()
    assert not outcome.ok
    assert any(d.code == "compile/module-import-failed" and d.line == 1 for d in outcome.diagnostics)
    assert reloader.generation == good and has_failed(reloader)
    sid = await h.create("/call version {}")
    assert last_reply(await h.turns(sid, 1)) == 'version -> "v1"'
    write_tool(app, "fixed")
    assert (await reloader.rebuild()).ok and not has_failed(reloader)
    await h.send(sid, "/call version {}")
    assert last_reply(await h.turns(sid, 2)) == 'version -> "fixed"'
    await h.stop()


async def test_an_unused_generation_is_released(tmp_path: Path) -> None:
    h, reloader, app = await reloading(tmp_path)
    first = reloader.generation
    h.app = None  # type: ignore[assignment]  # the harness keeps the first build otherwise
    write_tool(app, "v2")
    await reloader.rebuild()
    sid = await h.create("/call version {}")
    await h.turns(sid, 1)
    gc.collect()
    assert first not in live_generations()
    assert not [name for name in sys.modules if name.startswith(f"_eve_app_{first}.")]
    assert reloader.generation in live_generations()
    await h.stop()


async def test_saving_a_file_triggers_a_rebuild(tmp_path: Path) -> None:
    h, reloader, app = await reloading(tmp_path)
    first = reloader.generation
    stop = asyncio.Event()
    watcher = asyncio.create_task(reloader.run(stop))
    try:
        await asyncio.sleep(0.2)  # the watcher is set up
        write_tool(app, "saved")
        for _ in range(100):
            if reloader.generation != first:
                break
            await asyncio.sleep(0.05)
        assert reloader.generation != first
        (app / ".eve").mkdir(exist_ok=True)
        (app / ".eve" / "noise.txt").write_text("the store writes here")  # not watched
        current = reloader.generation
        await asyncio.sleep(0.3)
        assert reloader.generation == current
    finally:
        stop.set()
        await asyncio.wait_for(watcher, 5)
        await h.stop()


def test_only_agent_files_and_env_files_are_watched(tmp_path: Path) -> None:
    app = write_app(tmp_path, dict(BASE_FILES))
    compiled = compile_app(app, write=False)
    reloader = Reloader.__new__(Reloader)
    reloader.app_root, reloader.agent_root = app.resolve(), compiled.paths.agent_root.resolve()
    root = app.resolve()
    assert reloader.watches(root / "agent" / "tools" / "x.py")
    assert reloader.watches(root / ".env") and reloader.watches(root / ".env.local")
    assert not reloader.watches(root / ".eve" / "workflow-data" / "eve.sqlite3-wal")
    assert not reloader.watches(root / "agent" / "tools" / "__pycache__" / "x.cpython-311.pyc")
    assert not reloader.watches(root / "README.md")


def test_reloading_env_files_updates_what_they_set_and_never_the_real_environment(tmp_path: Path) -> None:
    from eve_runtime.project.paths import load_env_files

    environ = {"REAL": "from the shell"}
    (tmp_path / ".env").write_text("A=1\nB=2\nREAL=from the file\n")
    load_env_files(tmp_path, environ)
    assert environ == {"REAL": "from the shell", "A": "1", "B": "2"}
    (tmp_path / ".env").write_text("A=10\nREAL=again\n")
    (tmp_path / ".env.local").write_text("C=3\n")
    load_env_files(tmp_path, environ)
    assert environ == {"REAL": "from the shell", "A": "10", "C": "3"}  # B left with its file
