"""Tool paths to sandbox paths to folders on this machine, without ever leaving the sandbox's files.

A tool names a file as the model does: `notes.md` (relative: under `/workspace`),
`/workspace/notes.md`, `$HOME/.agents/skills/x/SKILL.md` or `~/...`. It resolves to one of the
sandbox's two trees (the workspace or the home folder) and a relative path inside it; `..` that
climbs out, an absolute path elsewhere, or a symbolic link pointing outside the tree is refused
with `SandboxPathError`, which the model reads as the tool's failure. The link check here is the
early answer only: the files are opened through `tree_files`, which checks every link again as
it walks (a link swapped in after this check is refused there).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from eve_runtime.authoring.sandbox_session import WORKSPACE, SandboxPathError, WorkspaceLayout
from eve_runtime.sandbox.tree_files import TreeFiles

__all__ = ["ResolvedPath", "resolve", "trees_of"]

Tree = Literal["workspace", "home"]


@dataclass(frozen=True)
class ResolvedPath:
    """A path inside one of the sandbox's trees."""

    tree: Tree
    relative: str
    """Inside the tree, `/`-separated, no `.` or `..`; empty for the tree itself."""
    display: str
    """The absolute path the model sees (`/workspace/notes.md`, `/home/eve/.bashrc`)."""
    local: Path
    """The file on this machine."""
    command_path: str
    """The path as the sandbox's commands name it."""


def _inside(tree: Tree, rest: str, layout: WorkspaceLayout, original: str) -> ResolvedPath:
    relative = posixpath.normpath(rest) if rest else ""
    if relative == ".." or relative.startswith("../"):
        raise SandboxPathError(f"{original!r} climbs out of the sandbox: use a path under /workspace or $HOME")
    if relative == ".":
        relative = ""
    root_dir = layout.workspace_dir if tree == "workspace" else layout.home_dir
    visible = WORKSPACE if tree == "workspace" else layout.home
    command_root = layout.workspace if tree == "workspace" else layout.home
    local = root_dir / relative if relative else root_dir
    display = f"{visible}/{relative}" if relative else visible
    if relative:
        trees_of(layout)[tree].check(relative, display)  # the early answer; each open checks again
    return ResolvedPath(
        tree=tree,
        relative=relative,
        display=display,
        local=local,
        command_path=f"{command_root}/{relative}" if relative else command_root,
    )


def trees_of(layout: WorkspaceLayout) -> dict[Tree, TreeFiles]:
    """The sandbox's two trees, each with the absolute paths its links may name it by."""
    return {
        "workspace": TreeFiles(
            layout.workspace_dir, (WORKSPACE, layout.workspace, os.path.realpath(layout.workspace_dir))
        ),
        "home": TreeFiles(layout.home_dir, (layout.home, os.path.realpath(layout.home_dir))),
    }


def _under(path: str, root: str) -> str | None:
    """`path` relative to `root` when it is `root` or below it, else None."""
    root = root.rstrip("/") or "/"
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


def resolve(path: str, layout: WorkspaceLayout) -> ResolvedPath:
    """Where a tool's path is; raises `SandboxPathError` for a path outside `/workspace` and `$HOME`."""
    if not isinstance(path, str) or not path.strip():
        raise SandboxPathError("the path is empty: name a file under /workspace")
    text = path.strip()
    if "\0" in text:
        raise SandboxPathError("the path contains a NUL character")
    for prefix in ("$HOME", "${HOME}", "~"):
        if text == prefix or text.startswith(prefix + "/"):
            return _inside("home", text[len(prefix) :].lstrip("/"), layout, path)
    if not text.startswith("/"):
        return _inside("workspace", text, layout, path)
    normalized = posixpath.normpath(text)
    roots: tuple[tuple[Tree, str], ...] = (
        ("workspace", WORKSPACE),
        ("workspace", layout.workspace),
        ("home", layout.home),
    )
    for tree, root in roots:
        rest = _under(normalized, root)
        if rest is not None:
            return _inside(tree, rest, layout, path)
    raise SandboxPathError(
        f"{path!r} is outside the sandbox's files: use a path under /workspace (or $HOME); run other files through bash"
    )
