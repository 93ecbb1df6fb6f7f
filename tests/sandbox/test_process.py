"""One command as a child process: exit codes, the time limit, capped output, nothing left behind."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from eve_runtime.sandbox.process import TIMEOUT_EXIT_CODE, run_process

pytestmark = pytest.mark.anyio

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


async def bash(tmp_path: Path, command: str, *, timeout: float = 10.0, limit: int = 1 << 20):  # type: ignore[no-untyped-def]
    return await run_process(
        ["/bin/bash", "-c", command], cwd=tmp_path, env=ENV, timeout=timeout, max_output_bytes=limit
    )


async def test_exit_code_and_streams(tmp_path: Path) -> None:
    result = await bash(tmp_path, "echo out; echo err >&2; exit 7")
    assert (result.exit_code, result.stdout, result.stderr) == (7, "out\n", "err\n")
    assert not result.truncated and not result.timed_out


async def test_a_signal_reports_128_plus_its_number(tmp_path: Path) -> None:
    assert (await bash(tmp_path, "kill -TERM $$")).exit_code == 128 + 15


async def test_the_environment_is_exactly_what_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVE_TEST_SECRET", "hunter2")
    result = await bash(tmp_path, "env")
    assert "hunter2" not in result.stdout and "EVE_TEST_SECRET" not in result.stdout


async def test_a_runaway_command_is_killed_with_its_children_at_the_time_limit(tmp_path: Path) -> None:
    marker = tmp_path / "late.txt"
    started = time.monotonic()
    result = await bash(tmp_path, f"(sleep 3; touch {marker}) & sleep 30", timeout=0.5)
    assert time.monotonic() - started < 5
    assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE
    assert result.stderr.endswith("[killed: the command ran longer than 0.5 s]\n")
    await asyncio.sleep(3.5)
    assert not marker.exists()  # the background child went with it


async def test_output_keeps_its_end_within_the_limit(tmp_path: Path) -> None:
    result = await bash(tmp_path, "seq 1 200000", limit=4096)
    assert result.truncated
    assert len(result.stdout) <= 4096
    assert result.stdout.endswith("199999\n200000\n")


async def test_cancelling_the_caller_kills_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "done.txt"
    task = asyncio.create_task(bash(tmp_path, f"sleep 2; touch {marker}"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(2.5)
    assert not marker.exists()


async def test_a_background_job_holding_the_pipes_does_not_keep_a_finished_command_running(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await bash(tmp_path, "sleep 30 & echo done", timeout=5)
    assert time.monotonic() - started < 4
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "done\n", False)


async def test_a_daemon_that_left_the_group_is_found_by_the_marker_and_killed(tmp_path: Path) -> None:
    marker = "EVE_SANDBOX_RUN=test-run-1"
    started = time.monotonic()
    result = await run_process(
        ["/bin/bash", "-c", "setsid sleep 6 & echo $! > daemon.pid; sleep 30"],
        cwd=tmp_path,
        env={**ENV, "EVE_SANDBOX_RUN": "test-run-1"},
        timeout=0.5,
        max_output_bytes=1 << 20,
        marker=marker,
    )
    assert result.timed_out and time.monotonic() - started < 4  # it held the pipes: not waited for
    pid = int((tmp_path / "daemon.pid").read_text())
    for _ in range(50):
        state = Path(f"/proc/{pid}/stat")
        if not state.exists() or state.read_text().split(") ", 1)[1].startswith("Z"):
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the daemon {pid} is still running")
    with pytest.raises(ValueError, match="entry of the environment"):
        await run_process(["true"], cwd=tmp_path, env=ENV, timeout=1, max_output_bytes=1024, marker=marker)
