"""Workspaces: prepared once (seed, skills, bootstrap), kept across restarts, stopped, deleted."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from eve_runtime.authoring.sandbox import define_sandbox
from eve_runtime.authoring.sandbox_session import SandboxError, SandboxPathError
from eve_runtime.sandbox import SandboxSpec, SkillFiles, local as local_backend
from eve_runtime.sandbox.workspaces import Workspaces
from tests.sandbox.support import BACKENDS

pytestmark = pytest.mark.anyio


def seeded(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    (seed / "db").mkdir(parents=True)
    (seed / "schema.sql").write_text("create table t (id int);\n")
    (seed / "db" / "rows.csv").write_text("1\n2\n")
    (seed / "__pycache__").mkdir()
    (seed / "__pycache__" / "x.pyc").write_bytes(b"\0")
    return seed


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_new_workspace_gets_the_seed_the_skills_and_the_bootstrap(tmp_path: Path, backend: str) -> None:
    package = tmp_path / "skills" / "sql" / "SKILL.md"
    package.parent.mkdir(parents=True)
    package.write_text("---\ndescription: SQL\n---\nUse sqlite.\n")
    spec = SandboxSpec(
        config=define_sandbox(
            backend=backend, bootstrap=["echo ready > boot.txt", "ls $HOME/.agents/skills > skills.txt"]
        ),
        seed_dir=seeded(tmp_path),
        skills=(SkillFiles("sql", {"SKILL.md": package.read_bytes(), "references/notes.md": b"notes"}),),
    )
    workspaces = Workspaces(tmp_path / "sandboxes")
    sandbox = await workspaces.open("wrun_a", spec)
    assert await sandbox.read_text_file("/workspace/schema.sql") == "create table t (id int);\n"
    assert await sandbox.read_text_file("db/rows.csv") == "1\n2\n"
    assert await sandbox.read_file("__pycache__/x.pyc") is None
    assert await sandbox.read_text_file("boot.txt") == "ready\n"
    assert await sandbox.read_text_file("skills.txt") == "sql\n"
    assert await sandbox.read_text_file("$HOME/.agents/skills/sql/SKILL.md") == package.read_text()
    assert await sandbox.read_text_file("$HOME/.agents/skills/sql/references/notes.md") == "notes"
    state = json.loads((tmp_path / "sandboxes" / "wrun_a" / "sandbox.json").read_text())
    assert state["prepared"] is True and state["revision"] == spec.revision and state["backend"] == backend


async def test_a_workspace_is_kept_across_restarts_and_later_seed_changes(tmp_path: Path) -> None:
    seed = seeded(tmp_path)
    spec = SandboxSpec(config=define_sandbox(bootstrap=["echo x >> boots.txt"]), seed_dir=seed)
    first = await Workspaces(tmp_path / "sandboxes").open("wrun_a", spec)
    await first.write_text_file("work.txt", "mine")
    (seed / "schema.sql").write_text("changed\n")
    changed = SandboxSpec(config=spec.config, seed_dir=seed)
    assert changed.revision != spec.revision
    again = await Workspaces(tmp_path / "sandboxes").open("wrun_a", changed)  # a new process
    assert await again.read_text_file("work.txt") == "mine"
    assert await again.read_text_file("schema.sql") == "create table t (id int);\n"  # live state wins
    assert await again.read_text_file("boots.txt") == "x\n"  # bootstrapped once
    fresh = await Workspaces(tmp_path / "sandboxes").open("wrun_b", changed)
    assert await fresh.read_text_file("schema.sql") == "changed\n"


async def test_a_failed_bootstrap_fails_the_access_and_is_tried_again(tmp_path: Path) -> None:
    flag = tmp_path / "fail-once"
    flag.write_text("")
    config = define_sandbox(
        backend="local", bootstrap=[f"if [ -e {flag} ]; then rm {flag}; echo broken >&2; exit 3; fi"]
    )
    workspaces = Workspaces(tmp_path / "sandboxes")
    with pytest.raises(SandboxError, match="bootstrap command .* failed with exit code 3: broken"):
        await workspaces.open("wrun_a", SandboxSpec(config=config))
    sandbox = await workspaces.open("wrun_a", SandboxSpec(config=config))
    assert (await sandbox.run("echo ok")).stdout == "ok\n"


async def test_stop_keeps_the_files_and_delete_resets_them(tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path / "sandboxes")
    spec = SandboxSpec(config=define_sandbox(backend="local"))
    sandbox = await workspaces.open("wrun_a", spec)
    await sandbox.write_text_file("keep.txt", "kept")
    running = asyncio.create_task(sandbox.run(f"sleep 5; touch {tmp_path}/after-stop"))
    await asyncio.sleep(0.3)
    await sandbox.stop()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert await sandbox.read_text_file("keep.txt") == "kept"
    assert (await (await workspaces.open("wrun_a", spec)).read_text_file("keep.txt")) == "kept"
    await sandbox.delete()
    with pytest.raises(SandboxError, match="deleted"):
        await sandbox.run("true")
    assert not (tmp_path / "sandboxes" / "wrun_a").exists()
    fresh = await workspaces.open("wrun_a", spec)
    assert await fresh.read_text_file("keep.txt") is None
    assert not (tmp_path / "after-stop").exists()


async def test_files_api(tmp_path: Path) -> None:
    sandbox = await Workspaces(tmp_path).open("wrun_a", SandboxSpec(config=define_sandbox(backend="local")))
    await sandbox.write_file("/workspace/deep/er/bin.dat", b"\x00\x01")
    assert await sandbox.read_file("deep/er/bin.dat") == b"\x00\x01"
    assert sandbox.resolve_path("deep") == "/workspace/deep"
    with pytest.raises(IsADirectoryError):
        await sandbox.read_file("deep")
    with pytest.raises(SandboxPathError):
        await sandbox.write_text_file("/etc/passwd", "x")
    with pytest.raises(SandboxPathError):
        await sandbox.run("true", cwd="/tmp")
    result = await sandbox.run("pwd", cwd="deep")
    assert result.stdout.strip() == str(tmp_path / "wrun_a" / "workspace" / "deep")  # local: the folder itself
    assert not list((tmp_path / "wrun_a" / "workspace" / "deep" / "er").glob("*.eve-tmp"))


async def test_local_warns_once_that_it_isolates_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    local_backend._WARNED.clear()
    sandbox = await Workspaces(tmp_path).open("wrun_a", SandboxSpec(config=define_sandbox(backend="local")))
    with caplog.at_level(logging.WARNING, logger="eve.sandbox"):
        await sandbox.run("true")
        await sandbox.run("true")
    warnings = [r for r in caplog.records if "NOT isolated" in r.getMessage()]
    assert len(warnings) == 1


async def test_a_named_backend_that_cannot_run_fails_with_its_reason(tmp_path: Path) -> None:
    class Missing:
        name = "missing"
        isolated = True

        def unavailable(self) -> str | None:
            return "it is not installed"

        async def run(self, layout, request):  # type: ignore[no-untyped-def]
            raise AssertionError("never run")

    with pytest.raises(SandboxError, match="'missing' cannot run here: it is not installed"):
        await Workspaces(tmp_path).open("wrun_a", SandboxSpec(config=define_sandbox(backend=Missing())))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_nothing_a_command_started_outlives_it_even_after_setsid(tmp_path: Path, backend: str) -> None:
    sandbox = await Workspaces(tmp_path).open("wrun_a", SandboxSpec(config=define_sandbox(backend=backend)))
    escape = "setsid sh -c 'sleep 1; echo late > {name}' > /dev/null 2>&1 < /dev/null &"
    ended = await sandbox.run(escape.format(name="after-end.txt") + " (sh -c 'sleep 1; echo late > forked.txt' &)")
    assert ended.exit_code == 0
    timed_out = await sandbox.run(escape.format(name="after-timeout.txt") + " sleep 30", timeout=0.5)
    assert timed_out.timed_out
    await asyncio.sleep(1.5)
    assert sorted(p.name for p in (tmp_path / "wrun_a" / "workspace").iterdir()) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_servers_secrets_do_not_reach_commands_unless_the_author_passes_them(
    tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVE_AUTH_TOKEN", "server-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    config = define_sandbox(backend=backend, environment={"PASSED_KEY": "given"})
    sandbox = await Workspaces(tmp_path).open("wrun_a", SandboxSpec(config=config))
    result = await sandbox.run("env")
    assert "server-token" not in result.stdout and "sk-ant-secret" not in result.stdout
    assert "PASSED_KEY=given" in result.stdout
    bootstrap = SandboxSpec(config=define_sandbox(backend=backend, bootstrap=["env > boot-env.txt"]))
    booted = await Workspaces(tmp_path).open("wrun_b", bootstrap)
    written = await booted.read_text_file("boot-env.txt")
    assert written is not None and "PATH=" in written and "server-token" not in written
