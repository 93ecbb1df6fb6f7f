"""The in-process file tools against a hostile workspace: links swapped in after the check, pipes, huge files.

The sandbox's commands may change the workspace while `read_file`, `write_file` and `grep` work
on it in the server's process. A link swapped in between the path check and the open must never
be followed out of the workspace, and a named pipe must fail the call instead of hanging it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.authoring.sandbox import define_sandbox
from eve_runtime.authoring.sandbox_session import SandboxError, SandboxPathError
from eve_runtime.sandbox import globbing, tool_search
from eve_runtime.sandbox.handle import HostSandbox
from eve_runtime.sandbox.paths import ResolvedPath
from tests.harness import Harness, make_harness
from tests.sandbox.support import open_sandbox
from tests.sandbox.test_tools import call, output, results, run

pytestmark = pytest.mark.anyio

SEARCH = {
    "agent/tools/grep.py": "from eve_runtime.framework_tools import grep\n",
    "agent/tools/glob.py": "from eve_runtime.framework_tools import glob\n",
    "agent/sandbox/workspace/a.txt": "nothing here\n",
    "agent/sandbox/workspace/b.txt": "harmless\n",
}


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    return outside


def swap_after_each_check(sandbox: HostSandbox, monkeypatch: pytest.MonkeyPatch, folder: Path, target: Path) -> None:
    """Each path check sees `folder` as a real folder; right after it, `folder` is a link to `target`.

    That is the race a sandbox command can run against the file tools, made certain.
    """
    original = HostSandbox.resolved

    def resolved(self: HostSandbox, path: str) -> ResolvedPath:
        if folder.is_symlink():
            folder.unlink()
            folder.mkdir()
        checked = original(self, path)
        shutil.rmtree(folder)
        folder.symlink_to(target)
        return checked

    monkeypatch.setattr(sandbox, "resolved", resolved.__get__(sandbox))


async def test_a_link_swapped_in_after_the_check_is_not_followed_by_reads(
    tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = await open_sandbox(tmp_path / "sb", define_sandbox(backend="local"))
    folder = sandbox.layout.workspace_dir / "docs"
    folder.mkdir()
    swap_after_each_check(sandbox, monkeypatch, folder, secret)
    with pytest.raises(SandboxPathError, match="outside the sandbox"):
        await sandbox.read_file("docs/secret.txt")


async def test_a_link_swapped_in_after_the_check_is_not_followed_by_writes(
    tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = await open_sandbox(tmp_path / "sb", define_sandbox(backend="local"))
    folder = sandbox.layout.workspace_dir / "out"
    folder.mkdir()
    swap_after_each_check(sandbox, monkeypatch, folder, secret)
    with pytest.raises(SandboxPathError, match="outside the sandbox"):
        await sandbox.write_text_file("out/planted.txt", "owned")
    assert not (secret / "planted.txt").exists()
    assert sorted(p.name for p in secret.iterdir()) == ["secret.txt"]


async def test_links_inside_the_workspace_still_work(tmp_path: Path, secret: Path) -> None:
    sandbox = await open_sandbox(tmp_path / "sb", define_sandbox(backend="local"))
    ws = sandbox.layout.workspace_dir
    (ws / "real").mkdir()
    (ws / "real" / "notes.md").write_text("inside\n")
    (ws / "alias").symlink_to("real")  # relative
    (ws / "by-sandbox-path").symlink_to("/workspace/real")  # as bubblewrap's commands name it
    (ws / "by-folder").symlink_to(ws / "real")  # as local commands name it
    (ws / "real" / "up").symlink_to("../real/notes.md")
    for path in ("alias/notes.md", "by-sandbox-path/notes.md", "by-folder/notes.md", "real/up"):
        assert await sandbox.read_text_file(path) == "inside\n", path
    await sandbox.write_text_file("alias/notes.md", "rewritten\n")
    assert (ws / "real" / "notes.md").read_text() == "rewritten\n"
    assert (ws / "alias").is_symlink()  # the write went through the link, which stays
    (ws / "climb").symlink_to("../../..")
    (ws / "loop").symlink_to("loop")
    with pytest.raises(SandboxPathError, match="outside the sandbox"):
        await sandbox.read_file("climb/outside/secret.txt")
    with pytest.raises(SandboxPathError, match="symbolic links"):
        await sandbox.read_file("loop")


@contextlib.contextmanager
def released(pipe: Path) -> Iterator[None]:
    """Whoever is left blocked reading the named pipe is released at the end (so a failing test ends)."""
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))


@contextlib.contextmanager
def fifo(path: Path) -> Iterator[Path]:
    os.mkfifo(path)
    with released(path):
        yield path


async def test_a_named_pipe_fails_reads_and_writes_instead_of_hanging(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path / "sb", define_sandbox(backend="local"))
    with fifo(sandbox.layout.workspace_dir / "pipe"):
        with pytest.raises(SandboxError, match="named pipe"):
            await asyncio.wait_for(sandbox.read_file("pipe"), 5)
        with pytest.raises(SandboxError, match="named pipe"):
            await asyncio.wait_for(sandbox.write_text_file("pipe", "x"), 5)
        assert stat.S_ISFIFO(os.lstat(sandbox.layout.workspace_dir / "pipe").st_mode)


@pytest.fixture
async def h(tmp_path: Path) -> Any:
    harness = await make_harness(tmp_path, SEARCH)
    yield harness
    await harness.stop()


async def session_file(h: Harness, name: str) -> tuple[str, Path]:
    """A new session (its sandbox made), and where a file of its workspace is on this machine."""
    sid = await h.create(call("bash", command="true"))
    await h.turns(sid, 1, timeout=20)
    assert h.runtime is not None
    return sid, h.runtime.sandboxes.workspaces.directory(sid) / "workspace" / name


async def test_the_file_tools_report_a_named_pipe_and_grep_skips_it(h: Harness, tmp_path: Path) -> None:
    sid, pipe = await session_file(h, "pipe")
    os.mkfifo(pipe)
    with released(pipe):
        events = await run(h, call("read_file", filePath="pipe"), session=sid)
        assert results(events)[-1]["status"] == "failed"
        assert "named pipe" in json.dumps(output(events))
        events = await run(h, call("write_file", filePath="pipe", content="x"), session=sid)
        assert results(events)[-1]["status"] == "failed"
        assert "named pipe" in json.dumps(output(events))
        events = await run(h, call("grep", pattern="harm"), session=sid)
        assert output(events)["content"] == "/workspace/b.txt:1:harmless"


async def test_grep_does_not_follow_a_file_swapped_for_a_link_while_it_searches(
    h: Harness, tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, target = await session_file(h, "b.txt")
    assert target.read_text() == "harmless\n"
    matches = globbing.GlobPattern.matches

    def swapping(self: globbing.GlobPattern, relative: str) -> bool:
        if relative == "b.txt" and not target.is_symlink():  # listed as a file, now a link out
            target.unlink()
            target.symlink_to(secret / "secret.txt")
        return matches(self, relative)

    monkeypatch.setattr(globbing.GlobPattern, "matches", swapping)
    events = await run(h, call("grep", pattern="SECRET|nothing", glob="*.txt"), session=sid)
    assert target.is_symlink()
    assert output(events)["content"] == "/workspace/a.txt:1:nothing here"


async def test_read_file_refuses_a_huge_file_without_reading_it(h: Harness) -> None:
    sid = await h.create(call("bash", command="truncate -s 100M huge.log && echo ok"))
    events = await h.turns(sid, 1, timeout=20)
    assert output(events)["stdout"] == "ok\n"
    events = await run(h, call("read_file", filePath="huge.log"), session=sid)
    assert results(events)[-1]["status"] == "failed"
    message = json.dumps(output(events))
    assert "104857600 bytes" in message and "bash" in message
    events = await run(h, call("write_file", filePath="huge.log", content="x"), session=sid)
    assert results(events)[-1]["status"] == "failed"


async def test_write_file_keeps_an_existing_files_mode(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path / "sb", define_sandbox(backend="local"))
    script = sandbox.layout.workspace_dir / "run.sh"
    script.write_text("#!/bin/sh\necho one\n")
    script.chmod(0o755)
    await sandbox.write_text_file("run.sh", "#!/bin/sh\necho two\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert (await sandbox.run("./run.sh")).stdout == "two\n"
    await sandbox.write_text_file("new.txt", "x")
    (sandbox.layout.workspace_dir / "plain.txt").touch()  # what any new file gets here (the umask applied)
    expected = stat.S_IMODE((sandbox.layout.workspace_dir / "plain.txt").stat().st_mode)
    assert stat.S_IMODE((sandbox.layout.workspace_dir / "new.txt").stat().st_mode) == expected


async def test_a_pattern_that_backtracks_for_ever_fails_grep_without_freezing_the_server(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_search, "SEARCH_SECONDS", 1.0)
    sid, target = await session_file(h, "aaa.txt")
    target.write_text("a" * 34 + "!\n")  # (a|aa)+$ tries ~10^7 ways here (re: 9 s, holding the GIL)
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    try:
        events = await run(h, call("grep", pattern="(a|aa)+$", glob="aaa.txt"), session=sid)
    finally:
        ticker.cancel()
    assert time.monotonic() - started < 6
    assert results(events)[-1]["status"] == "failed"
    assert "took longer than 1 s" in json.dumps(output(events))
    assert max(gaps) < 1.0  # the event loop kept running while the pattern was matched
    events = await run(h, call("grep", pattern="^a+!$", glob="aaa.txt"), session=sid)
    assert output(events)["matchCount"] == 1


async def test_a_search_past_its_time_budget_says_it_stopped(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    sid, _ = await session_file(h, "a.txt")
    monkeypatch.setattr(tool_search, "SEARCH_SECONDS", 0.0)
    events = await run(h, call("grep", pattern="nothing"), session=sid)
    found = output(events)
    assert found["truncated"] is True and "Search stopped after 0 s" in found["content"]
    listed = output(await run(h, call("glob", pattern="*.txt"), session=sid))
    assert listed["truncated"] is True and "Search stopped after 0 s" in listed["content"]
