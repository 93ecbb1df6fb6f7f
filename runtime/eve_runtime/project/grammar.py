"""The file grammar of an agent folder: name patterns, ignored entries, and the named-directory walker.

Nothing here imports user code: it only lists folders and classifies file names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.sources import NamedSource, Source, SourceKind

__all__ = [
    "CHANNEL_NAME_PATTERN",
    "CHANNEL_NAME_RULE",
    "TOOL_NAME_PATTERN",
    "Entry",
    "NamedDirectory",
    "list_entries",
    "walk_named_directory",
]

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")
"""Tool, hook segment, skill, schedule segment and subagent names: what every model provider accepts."""

IGNORED_NAMES = frozenset({"__pycache__", "__init__.py", "py.typed"})
"""Never sources, anywhere under `agent/`."""


def is_test_file(name: str) -> bool:
    """Colocated test files are never sources."""
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def sort_key(name: str) -> tuple[str, str]:
    """Case-insensitive order first (like eve's `localeCompare`), then case for a stable tie-break."""
    return (name.casefold(), name)


@dataclass(frozen=True)
class Entry:
    """One directory entry."""

    name: str
    path: Path
    is_dir: bool

    @property
    def stem(self) -> str:
        return self.name.rsplit(".", 1)[0] if not self.is_dir else self.name

    @property
    def is_module(self) -> bool:
        return not self.is_dir and self.name.endswith(".py")

    @property
    def is_markdown(self) -> bool:
        return not self.is_dir and self.name.endswith(".md")

    @property
    def is_package(self) -> bool:
        return self.is_dir and (self.path / "__init__.py").is_file()


def list_entries(directory: Path) -> list[Entry]:
    """The entries of a folder, sorted, without caches, type stubs, compiled files and test files."""
    entries: list[Entry] = []
    try:
        children = list(directory.iterdir())
    except OSError:
        return entries
    for child in children:
        name = child.name
        if name in IGNORED_NAMES or name.endswith((".pyi", ".pyc", ".pyo")) or is_test_file(name):
            continue
        is_dir = child.is_dir()
        if not is_dir and not child.is_file():
            continue  # sockets, broken links
        entries.append(Entry(name=name, path=child, is_dir=is_dir))
    entries.sort(key=lambda entry: sort_key(entry.name))
    return entries


SegmentCheck = Callable[[str, Path], Diagnostic | None]


@dataclass
class NamedDirectory:
    """How to walk one named slot directory such as `tools/` or `schedules/`."""

    name: str
    """The folder name, relative to the agent root."""
    recursive: bool
    allow_markdown: bool = False
    allow_packages: bool = False
    """Whether `<name>/__init__.py` folders are module sources (flat `tools/` only)."""
    check_segment: SegmentCheck | None = None
    node_id: str = "__root__"
    diagnostics: list[Diagnostic] = field(default_factory=list)


def walk_named_directory(agent_root: Path, spec: NamedDirectory) -> list[NamedSource]:
    """Collect the named sources of one slot directory; problems go to `spec.diagnostics`.

    Subdirectories are walked before the files of the same level; a markdown file and a module
    for the same name is a slot collision, a module and a package for the same name a module-slot
    collision. Unrecognised files are ignored silently.
    """
    directory = agent_root / spec.name
    if not directory.exists():
        return []
    if not directory.is_dir():
        spec.diagnostics.append(
            dg.error(
                f"discover/{spec.name}-directory-invalid",
                f"Expected {str(directory)!r} to be a folder of {spec.name}; it is a file. Rename or remove it.",
                directory,
                node_id=spec.node_id,
            )
        )
        return []
    found: list[NamedSource] = []
    _walk(agent_root, directory, "", spec, found)
    return found


def _walk(agent_root: Path, directory: Path, prefix: str, spec: NamedDirectory, found: list[NamedSource]) -> None:
    entries = list_entries(directory)
    if spec.recursive:
        for entry in entries:
            if entry.is_dir and not _rejected(spec, entry.name, entry.path):
                _walk(agent_root, entry.path, f"{prefix}{entry.name}/", spec, found)
    elif not spec.allow_packages:
        pass  # flat slot without packages: subfolders are not part of it
    else:
        for entry in entries:
            if entry.is_dir and not entry.is_package:
                spec.diagnostics.append(
                    dg.warning(
                        "discover/unsupported-directory",
                        f"Ignoring folder {str(entry.path)!r}: {spec.name}/ is flat. Put shared helpers in lib/, "
                        f"or add an __init__.py to make it the package of the {spec.name[:-1]} {entry.name!r}.",
                        entry.path,
                        node_id=spec.node_id,
                    )
                )
    slots: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.is_module or (spec.allow_markdown and entry.is_markdown) or (spec.allow_packages and entry.is_package):
            slots.setdefault(entry.stem, []).append(entry)
    for stem, candidates in slots.items():
        name = prefix + stem
        if _rejected(spec, stem, candidates[0].path):
            continue
        logical = f"{spec.name}/{name}"
        if len(candidates) > 1:
            listed = ", ".join(repr(c.name + ("/" if c.is_dir else "")) for c in candidates)
            code = (
                "discover/slot-collision"
                if any(c.is_markdown for c in candidates)
                else "discover/module-slot-collision"
            )
            spec.diagnostics.append(
                dg.error(
                    code,
                    f"{listed} both define {logical!r}; keep exactly one of them.",
                    directory,
                    node_id=spec.node_id,
                )
            )
            continue
        entry = candidates[0]
        if entry.is_dir:
            source = Source(logical_path=f"{logical}/__init__.py", path=entry.path / "__init__.py", kind="module")
        else:
            kind: SourceKind = "markdown" if entry.is_markdown else "module"
            source = Source(logical_path=f"{spec.name}/{prefix}{entry.name}", path=entry.path, kind=kind)
        found.append(NamedSource(name=name, source=source))


def _rejected(spec: NamedDirectory, segment: str, path: Path) -> bool:
    if spec.check_segment is None:
        return False
    problem = spec.check_segment(segment, path)
    if problem is None:
        return False
    spec.diagnostics.append(problem)
    return True


def name_check(code: str, what: str, pattern: re.Pattern[str], rule: str, node_id: str) -> SegmentCheck:
    """A segment check reporting `code` for names that do not match `pattern`."""

    def check(segment: str, path: Path) -> Diagnostic | None:
        if pattern.match(segment):
            return None
        return dg.error(
            code, f"{what} {segment!r} is not a legal name: {rule}. Rename {path.name!r}.", path, node_id=node_id
        )

    return check


CHANNEL_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
"""Channel names (the file stem under `channels/`): also the namespace of the channel's addresses."""
CHANNEL_NAME_RULE = "use lowercase ASCII letters, digits and '-' only, starting with a letter, at most 64 characters"

TOOL_NAME_RULE = "use ASCII letters, digits, '_' and '-' only, starting with a letter, at most 64 characters"
