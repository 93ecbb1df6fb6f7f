"""Discovery: from an app folder to a source graph and diagnostics, without running user code.

It follows eve's file conventions (`agent.py`, `instructions.md`, `tools/`, `skills/`, `hooks/`,
`schedules/`, `channels/` (root only), `connections/`, `subagents/<name>/`, `lib/`, `sandbox.py` or
`sandbox/`)
and reports every problem as a diagnostic with a stable code instead of stopping at the first one.
"""

from __future__ import annotations

import re
from pathlib import Path

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.discover_connections import discover_connections
from eve_runtime.project.discover_sandbox import discover_sandbox
from eve_runtime.project.grammar import (
    CHANNEL_NAME_PATTERN,
    CHANNEL_NAME_RULE,
    TOOL_NAME_PATTERN,
    TOOL_NAME_RULE,
    Entry,
    NamedDirectory,
    list_entries,
    name_check,
    walk_named_directory,
)
from eve_runtime.project.paths import AppPaths, app_name
from eve_runtime.project.root_entries import check_root_entries, misnamed_files
from eve_runtime.project.sources import ROOT_NODE_ID, AgentSources, NamedSource, Source, SourceGraph, SourceKind

__all__ = ["discover"]

IGNORED_ROOT_DIRECTORIES = frozenset(
    {
        ".devtools",
        ".eve",
        ".next",
        ".output",
        ".vercel",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
RESERVED_SUBAGENT_NAMES = frozenset({"agent"})


def discover(app_root: Path) -> SourceGraph:
    """Discover the agent of the app at `app_root` (the folder holding `agent/`)."""
    paths = AppPaths(app_root)
    diagnostics: list[Diagnostic] = []
    root = _discover_agent(
        paths.agent_root, node_id=ROOT_NODE_ID, parent=None, name=app_name(app_root), diagnostics=diagnostics
    )
    return SourceGraph(app_root=app_root, agent_root=paths.agent_root, root=root, diagnostics=diagnostics)


def _discover_agent(
    root: Path, *, node_id: str, parent: str | None, name: str, diagnostics: list[Diagnostic]
) -> AgentSources:
    is_root = parent is None
    entries = list_entries(root)
    by_name = {entry.name: entry for entry in entries}
    misnamed = misnamed_files(entries)
    agent = AgentSources(node_id=node_id, parent_node_id=parent, name=name, root=root)

    config = by_name.get("agent.py")
    if config is not None and not config.is_dir:
        agent.config = Source(logical_path="agent.py", path=config.path, kind="module")
    elif not is_root:
        diagnostics.append(
            dg.error(
                "discover/subagent-config-missing",
                f"Subagent {name!r} has no agent.py. Create {str(root / 'agent.py')!r} with "
                f"agent = define_agent(model=..., description=...).{_meant(misnamed, 'agent.py')}",
                root,
                node_id=node_id,
            )
        )

    agent.instructions = _discover_instructions(
        root, entries, misnamed, required=is_root, node_id=node_id, diagnostics=diagnostics
    )
    agent.tools = _walk(
        root,
        "tools",
        node_id,
        diagnostics,
        recursive=False,
        packages=True,
        code="discover/tool-name-invalid",
        what="Tool",
    )
    agent.hooks = _walk(
        root, "hooks", node_id, diagnostics, recursive=True, code="discover/hook-name-invalid", what="Hook segment"
    )
    agent.skills = _discover_skills(root, node_id, diagnostics)
    agent.connections = discover_connections(root, node_id, diagnostics)
    agent.sandbox, agent.sandbox_workspace = discover_sandbox(root, by_name, node_id, diagnostics)
    agent.has_lib = (root / "lib").is_dir()
    if (root / "lib").exists() and not agent.has_lib:
        diagnostics.append(_not_a_directory(root / "lib", "lib", node_id))

    if "schedules" in by_name:
        if is_root:
            agent.schedules = _walk(
                root,
                "schedules",
                node_id,
                diagnostics,
                recursive=True,
                markdown=True,
                code="discover/schedule-name-invalid",
                what="Schedule segment",
            )
        else:
            diagnostics.append(
                dg.error(
                    "discover/invalid-schedules-directory",
                    f"Schedules belong to the root agent only; move {str(root / 'schedules')!r} to agent/schedules/.",
                    root / "schedules",
                    node_id=node_id,
                )
            )

    if is_root:
        agent.channels = _walk(
            root,
            "channels",
            node_id,
            diagnostics,
            recursive=False,
            code="discover/channel-name-invalid",
            what="Channel",
            pattern=CHANNEL_NAME_PATTERN,
            rule=CHANNEL_NAME_RULE,
        )

    check_root_entries(
        entries, misnamed, is_root=is_root, ignored=IGNORED_ROOT_DIRECTORIES, node_id=node_id, diagnostics=diagnostics
    )
    agent.subagents = _discover_subagents(root, node_id, diagnostics)
    return agent


def _walk(
    root: Path,
    slot: str,
    node_id: str,
    diagnostics: list[Diagnostic],
    *,
    recursive: bool,
    code: str,
    what: str,
    markdown: bool = False,
    packages: bool = False,
    pattern: re.Pattern[str] = TOOL_NAME_PATTERN,
    rule: str = TOOL_NAME_RULE,
) -> list[NamedSource]:
    spec = NamedDirectory(
        name=slot,
        recursive=recursive,
        allow_markdown=markdown,
        allow_packages=packages,
        check_segment=name_check(code, what, pattern, rule, node_id),
        node_id=node_id,
    )
    found = walk_named_directory(root, spec)
    diagnostics.extend(spec.diagnostics)
    return found


def _not_a_directory(path: Path, slot: str, node_id: str) -> Diagnostic:
    return dg.error(
        f"discover/{slot}-directory-invalid",
        f"Expected {str(path)!r} to be a folder of {slot}; it is a file. Rename or remove it.",
        path,
        node_id=node_id,
    )


def _flat_slot(
    entries: list[Entry], base: str, root: Path, node_id: str, diagnostics: list[Diagnostic]
) -> tuple[Source | None, bool]:
    """Find `<base>.md` (any case) or `<base>.py` at the agent root. Returns (source, collided)."""
    markdown = [e for e in entries if not e.is_dir and e.name.lower() == f"{base}.md"]
    modules = [e for e in entries if not e.is_dir and e.name == f"{base}.py"]
    candidates = markdown + modules
    if len(candidates) > 1:
        listed = ", ".join(repr(c.name) for c in candidates)
        diagnostics.append(
            dg.error(
                "discover/slot-collision",
                f"{listed} both define the {base} slot; keep exactly one of them.",
                root,
                node_id=node_id,
            )
        )
        return None, True
    if not candidates:
        return None, False
    entry = candidates[0]
    kind: SourceKind = "markdown" if entry.is_markdown else "module"
    return Source(logical_path=entry.name, path=entry.path, kind=kind), False


def _discover_instructions(
    root: Path,
    entries: list[Entry],
    misnamed: dict[str, str],
    *,
    required: bool,
    node_id: str,
    diagnostics: list[Diagnostic],
) -> list[Source]:
    flat, collided = _flat_slot(entries, "instructions", root, node_id, diagnostics)
    sources = [flat] if flat is not None else []
    folder = root / "instructions"
    if folder.exists():
        if not folder.is_dir():
            diagnostics.append(_not_a_directory(folder, "instructions", node_id))
        else:
            spec = NamedDirectory(name="instructions", recursive=False, allow_markdown=True, node_id=node_id)
            sources.extend(named.source for named in walk_named_directory(root, spec))
            diagnostics.extend(spec.diagnostics)
    if sources or collided:
        return sources
    legacy, legacy_collided = _flat_slot(entries, "system", root, node_id, diagnostics)
    if legacy is not None:
        diagnostics.append(
            dg.warning(
                "discover/deprecated-system-slot",
                f"{legacy.logical_path!r} is deprecated: rename it to "
                f"{legacy.logical_path.replace('system', 'instructions', 1)!r}. It is still used for now.",
                legacy.path,
                node_id=node_id,
            )
        )
        return [legacy]
    if required and not legacy_collided:
        diagnostics.append(
            dg.error(
                "discover/required-instructions-missing",
                f"The agent has no instructions: create {str(root / 'instructions.md')!r} (or instructions.py, "
                "or an instructions/ folder) with the agent's always-on prompt."
                f"{_meant(misnamed, 'instructions.md', 'instructions.py')}",
                root,
                node_id=node_id,
            )
        )
    return []


def _meant(misnamed: dict[str, str], *names: str) -> str:
    """` Found 'x': did you mean 'y'?` for a misnamed file meant as one of `names` (then no longer warned about)."""
    for found, meant in list(misnamed.items()):
        if meant in names:
            del misnamed[found]
            return f" Found {found!r}: did you mean {meant!r}? Rename it."
    return ""


def _discover_skills(root: Path, node_id: str, diagnostics: list[Diagnostic]) -> list[NamedSource]:
    """Skills by eve's rules: `<name>.md`, `<name>.py`, a `<name>/` package with a `SKILL.md` (any case)."""
    folder = root / "skills"
    if not folder.exists():
        return []
    if not folder.is_dir():
        diagnostics.append(_not_a_directory(folder, "skills", node_id))
        return []
    check = name_check("discover/skill-name-invalid", "Skill", TOOL_NAME_PATTERN, TOOL_NAME_RULE, node_id)
    slots: dict[str, list[Source]] = {}
    for entry in list_entries(folder):
        if entry.name.startswith("."):
            continue
        markdown = not entry.is_dir and entry.name.lower().endswith(".md")
        package = (
            next((e for e in list_entries(entry.path) if e.name.lower() == "skill.md"), None) if entry.is_dir else None
        )
        if package is not None and not package.is_dir:
            source = Source(logical_path=f"skills/{entry.name}/{package.name}", path=package.path, kind="skill-package")
            name = entry.name
        elif markdown or entry.is_module:
            kind: SourceKind = "markdown" if markdown else "module"
            source = Source(logical_path=f"skills/{entry.name}", path=entry.path, kind=kind)
            name = entry.name[: -len(".md")] if markdown else entry.stem
        else:
            code, why = (
                ("discover/skill-markdown-missing", "a skill package folder needs a SKILL.md with a 'description'")
                if entry.is_dir
                else ("discover/skill-entry-not-directory", "skills/ holds <name>.md, <name>.py and <name>/SKILL.md")
            )
            message = f"{str(entry.path)!r} is not a skill: {why}. Fix it, or move it out of skills/."
            diagnostics.append(dg.error(code, message, entry.path, node_id=node_id))
            continue
        slots.setdefault(name, []).append(source)
    found: list[NamedSource] = []
    for name, sources in slots.items():
        problem = check(name, sources[0].path)
        if problem is not None:
            diagnostics.append(problem)
            continue
        if len(sources) > 1:
            listed = ", ".join(repr(s.logical_path) for s in sources)
            diagnostics.append(
                dg.error(
                    "discover/skill-collision",
                    f"{listed} all define skill {name!r}; keep one.",
                    folder,
                    node_id=node_id,
                )
            )
            continue
        found.append(NamedSource(name=name, source=sources[0]))
    return found


def _discover_subagents(root: Path, parent: str, diagnostics: list[Diagnostic]) -> list[AgentSources]:
    folder = root / "subagents"
    if not folder.exists():
        return []
    if not folder.is_dir():
        diagnostics.append(_not_a_directory(folder, "subagents", parent))
        return []
    check = name_check("discover/subagent-name-invalid", "Subagent", TOOL_NAME_PATTERN, TOOL_NAME_RULE, parent)
    subagents: list[AgentSources] = []
    for entry in list_entries(folder):
        if entry.is_module:
            diagnostics.append(
                dg.warning(
                    "discover/slot-unsupported",
                    f"Ignoring {entry.name}: remote and workspace subagents are not supported by this version of eve "
                    "for Python yet. Declare a local subagent as a folder subagents/<name>/ instead.",
                    entry.path,
                    node_id=parent,
                )
            )
            continue
        if not entry.is_dir:
            continue
        problem = check(entry.name, entry.path)
        if problem is not None:
            diagnostics.append(problem)
            continue
        if entry.name in RESERVED_SUBAGENT_NAMES:
            diagnostics.append(
                dg.error(
                    "discover/subagent-name-reserved",
                    f"A subagent cannot be named {entry.name!r}: the name is reserved for the built-in agent tool. "
                    "Rename the folder.",
                    entry.path,
                    node_id=parent,
                )
            )
            continue
        node_id = f"subagents/{entry.name}" if parent == ROOT_NODE_ID else f"{parent}/subagents/{entry.name}"
        subagents.append(
            _discover_agent(entry.path, node_id=node_id, parent=parent, name=entry.name, diagnostics=diagnostics)
        )
    return subagents
