"""The `bwrap` backend isolates: no network unless allowed, the system read-only, only the workspace writable.

Skipped only where bubblewrap cannot run (the reason is in the skip message: not installed, or the
kernel forbids the namespaces it needs). `make test` installs bubblewrap when it runs as root.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eve_runtime.authoring.sandbox import define_sandbox
from eve_runtime.sandbox import bwrap
from eve_runtime.sandbox.bwrap import BwrapBackend
from tests.sandbox.support import needs_bwrap, open_sandbox

pytestmark = [pytest.mark.anyio, needs_bwrap]


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    """A TCP server on the host's 127.0.0.1 (the port), answering `pong`."""

    async def answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"pong\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port
    finally:
        server.close()
        await server.wait_closed()


async def test_the_backend_is_bwrap_and_commands_run_in_workspace(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path, define_sandbox(backend="bwrap"))
    assert sandbox.backend == "bwrap"
    result = await sandbox.run('pwd; echo "$HOME"; ls /')
    lines = result.stdout.split()
    assert lines[:2] == ["/workspace", "/home/eve"]
    assert "workspace" in lines and "root" not in lines and "work" not in lines  # nothing else of the host


async def test_no_network_by_default(tmp_path: Path, listener: int) -> None:
    sandbox = await open_sandbox(tmp_path)
    result = await sandbox.run(f"exec 3<>/dev/tcp/127.0.0.1/{listener} && cat <&3")
    assert result.exit_code != 0 and "pong" not in result.stdout
    interfaces = await sandbox.run("cat /proc/net/dev")
    assert "eth" not in interfaces.stdout  # only the sandbox's own loopback


async def test_allow_all_shares_the_network(tmp_path: Path, listener: int) -> None:
    sandbox = await open_sandbox(tmp_path, define_sandbox(network="allow-all"))
    result = await sandbox.run(f"exec 3<>/dev/tcp/127.0.0.1/{listener} && cat <&3")
    assert (result.exit_code, result.stdout) == (0, "pong\n")


async def test_the_system_is_read_only_and_only_the_workspace_and_home_are_writable(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path)
    for target in ("/usr/eve-test", "/etc/eve-test", "/eve-test"):
        result = await sandbox.run(f"touch {target}")
        assert result.exit_code != 0, target
    assert "Read-only file system" in (await sandbox.run("touch /usr/eve-test")).stderr
    result = await sandbox.run("echo hi > /workspace/a.txt && echo there > $HOME/b.txt && echo tmp > /tmp/c.txt")
    assert result.exit_code == 0, result.stderr
    assert (sandbox.layout.workspace_dir / "a.txt").read_text() == "hi\n"
    assert (sandbox.layout.home_dir / "b.txt").read_text() == "there\n"
    assert not (Path("/tmp") / "c.txt").exists() or (Path("/tmp") / "c.txt").read_text() != "tmp\n"  # a private /tmp
    remount = await sandbox.run("mount -o remount,rw /usr")
    assert remount.exit_code != 0  # no capabilities to undo it


async def test_a_runaway_command_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path, define_sandbox(timeout_seconds=1))
    started = time.monotonic()
    result = await sandbox.run("(sleep 4; echo late > /workspace/late.txt) & while :; do :; done")
    assert time.monotonic() - started < 6
    assert result.timed_out and result.exit_code == 124
    await asyncio.sleep(4.5)
    assert not (sandbox.layout.workspace_dir / "late.txt").exists()


async def test_the_server_environment_does_not_reach_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    sandbox = await open_sandbox(tmp_path, define_sandbox(environment={"GREETING": "hello"}))
    result = await sandbox.run("env")
    assert "sk-test-secret" not in result.stdout
    assert "GREETING=hello" in result.stdout and "HOME=/home/eve" in result.stdout


async def test_an_app_under_a_system_folder_is_hidden_from_its_sandboxes() -> None:
    app = Path(tempfile.mkdtemp(prefix="eve-app-", dir="/var/tmp"))  # /var is bound read-only
    try:
        (app / ".env").write_text("API_KEY=s3cret\n")
        other = app / ".eve" / "sandboxes" / "wrun_other" / "workspace"
        other.mkdir(parents=True)
        (other / "theirs.txt").write_text("another session's file\n")
        sandbox = await open_sandbox(app / ".eve" / "sandboxes", define_sandbox(backend="bwrap"))
        result = await sandbox.run(f"cat {app}/.env; cat {other}/theirs.txt; ls -A {app}; echo mine > /workspace/a")
        assert "s3cret" not in result.stdout and "another session" not in result.stdout
        assert result.stdout.strip() == ""
        assert (sandbox.layout.workspace_dir / "a").read_text() == "mine\n"  # its own workspace still works
    finally:
        shutil.rmtree(app)


@pytest.mark.skipif(
    not (os.access("/etc/shadow", os.R_OK) and not os.stat("/etc/shadow").st_mode & stat.S_IROTH),
    reason="this user cannot read /etc/shadow (eve does not run as root here): nothing to hide",
)
async def test_what_only_eves_user_may_read_in_etc_is_hidden(tmp_path: Path) -> None:
    sandbox = await open_sandbox(tmp_path)
    result = await sandbox.run("cat /etc/shadow; head -c 5 /etc/passwd")
    assert "root:" not in result.stdout.replace(Path("/etc/passwd").read_text()[:5], "", 1)
    assert result.stdout.endswith(Path("/etc/passwd").read_text()[:5])  # the rest of /etc is there


async def test_a_file_in_var_only_eves_user_may_read_is_hidden(tmp_path: Path) -> None:
    descriptor, name = tempfile.mkstemp(prefix="eve-private-", dir="/var/tmp")  # mode 0600
    os.write(descriptor, b"db-password\n")
    os.close(descriptor)
    bwrap._scan_private_system_files.cache_clear()  # the scan is made once per process
    try:
        sandbox = await open_sandbox(tmp_path)
        result = await sandbox.run(f"cat {name}; cat /etc/hostname > /dev/null && echo system-ok")
        assert "db-password" not in result.stdout and "system-ok" in result.stdout
    finally:
        os.unlink(name)
        bwrap._scan_private_system_files.cache_clear()


async def test_a_private_file_gone_since_the_scan_breaks_no_command(tmp_path: Path) -> None:
    folder = tempfile.mkdtemp(prefix="eve-gone-", dir="/var/tmp")  # mode 0700: only eve's user reads it
    bwrap._scan_private_system_files.cache_clear()
    try:
        assert (folder, True) in bwrap._private_system_files()
        os.rmdir(folder)  # another program removes it after the scan
        result = await (await open_sandbox(tmp_path)).run("echo still-runs")
        assert result.exit_code == 0 and result.stdout == "still-runs\n", result.stderr
    finally:
        if os.path.exists(folder):
            os.rmdir(folder)
        bwrap._scan_private_system_files.cache_clear()


def test_the_probe_explains_a_missing_executable(tmp_path: Path) -> None:
    problem = BwrapBackend(str(tmp_path / "no-bwrap")).unavailable()
    assert problem is not None and "could not be started" in problem
