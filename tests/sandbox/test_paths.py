"""Tool paths: relative ones under /workspace, $HOME, and nothing that leaves the sandbox's two trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eve_runtime.authoring.sandbox_session import SandboxPathError, WorkspaceLayout
from eve_runtime.sandbox.paths import resolve


@pytest.fixture
def layout(tmp_path: Path) -> WorkspaceLayout:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return WorkspaceLayout(workspace_dir=tmp_path / "ws", home_dir=tmp_path / "home", home="/home/eve")


@pytest.mark.parametrize(
    ("path", "display", "relative"),
    [
        ("notes.md", "/workspace/notes.md", "notes.md"),
        ("./a/../b.txt", "/workspace/b.txt", "b.txt"),
        ("/workspace", "/workspace", ""),
        ("/workspace/src/app.py", "/workspace/src/app.py", "src/app.py"),
        ("/workspace//src/./app.py", "/workspace/src/app.py", "src/app.py"),
        ("$HOME/.agents/skills/x/SKILL.md", "/home/eve/.agents/skills/x/SKILL.md", ".agents/skills/x/SKILL.md"),
        ("~/notes", "/home/eve/notes", "notes"),
        ("/home/eve/.bashrc", "/home/eve/.bashrc", ".bashrc"),
    ],
)
def test_paths_resolve_inside_the_two_trees(layout: WorkspaceLayout, path: str, display: str, relative: str) -> None:
    resolved = resolve(path, layout)
    assert resolved.display == display
    assert resolved.relative == relative
    root = layout.home_dir if display.startswith("/home/eve") else layout.workspace_dir
    assert resolved.local == (root / relative if relative else root)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("../outside.txt", "climbs out"),
        ("/workspace/../etc/passwd", "outside the sandbox"),
        ("$HOME/../../etc/passwd", "climbs out"),
        ("/etc/passwd", "outside the sandbox"),
        ("/workspaces/x", "outside the sandbox"),
        ("", "empty"),
        ("a\0b", "NUL"),
    ],
)
def test_paths_outside_the_sandbox_are_refused(layout: WorkspaceLayout, path: str, fragment: str) -> None:
    with pytest.raises(SandboxPathError, match=fragment):
        resolve(path, layout)


def test_a_symbolic_link_out_of_the_workspace_is_refused(layout: WorkspaceLayout, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    os.symlink(secret, layout.workspace_dir / "link.txt")
    os.symlink(tmp_path, layout.workspace_dir / "up")
    with pytest.raises(SandboxPathError, match="symbolic link"):
        resolve("link.txt", layout)
    with pytest.raises(SandboxPathError, match="symbolic link"):
        resolve("/workspace/up/secret.txt", layout)
    os.symlink("inside.txt", layout.workspace_dir / "ok.txt")
    assert resolve("ok.txt", layout).display == "/workspace/ok.txt"  # a link that stays inside is fine


def test_the_local_layout_also_accepts_the_folder_path(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    layout = WorkspaceLayout(workspace_dir=ws, home_dir=home, home=str(home), workspace=str(ws))
    resolved = resolve(f"{ws}/a.txt", layout)
    assert (resolved.display, resolved.command_path) == ("/workspace/a.txt", f"{ws}/a.txt")
    assert resolve("/workspace/a.txt", layout).local == ws / "a.txt"
