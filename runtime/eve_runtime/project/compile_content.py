"""Compiling instructions, skills, hooks and schedules from markdown files and modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.hooks import Hook
from eve_runtime.authoring.instructions import Instructions
from eve_runtime.authoring.schedules import Schedule, cron_problem
from eve_runtime.authoring.skills import Skill, describe_markdown
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compose_tools import source_info
from eve_runtime.project.definitions import Found, find_definition
from eve_runtime.project.frontmatter import FrontmatterError, MarkdownDocument, parse_markdown
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import (
    DynamicManifest,
    HookManifest,
    InstructionManifest,
    ScheduleManifest,
    SkillManifest,
)
from eve_runtime.project.sources import AgentSources, NamedSource, Source

__all__ = ["compile_hooks", "compile_instructions", "compile_schedules", "compile_skills"]

INSTRUCTION_EVENTS = frozenset({"session.started", "turn.started"})
SKILL_PACKAGE_FOLDERS = ("references", "assets", "scripts")


def _read(path: Path, node_id: str, diagnostics: list[Diagnostic]) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.append(
            dg.error(
                "compile/source-unreadable",
                f"Cannot read {path.name}: {exc}. Save it as UTF-8 text.",
                path,
                node_id=node_id,
            )
        )
        return None


def _markdown(path: Path, node_id: str, diagnostics: list[Diagnostic]) -> MarkdownDocument | None:
    text = _read(path, node_id, diagnostics)
    if text is None:
        return None
    try:
        return parse_markdown(text)
    except FrontmatterError as exc:
        diagnostics.append(
            dg.error("compile/frontmatter-invalid", f"{path.name}: {exc}", path, line=exc.line, node_id=node_id)
        )
        return None


def _module_definition(
    source: Source,
    kinds: tuple[type, ...],
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    *,
    node_id: str,
    what: str,
    example: str,
) -> Found | None:
    module = loader.load(source.path, node_id=node_id)
    if isinstance(module, Diagnostic):
        diagnostics.append(module)
        return None
    found = find_definition(module, kinds, path=source.path, what=what, example=example, node_id=node_id)
    if isinstance(found, Diagnostic):
        diagnostics.append(found)
        return None
    return found


def compile_instructions(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[list[InstructionManifest], list[DynamicResolver], list[DynamicManifest]]:
    """Static instructions in order, plus the dynamic resolvers."""
    node_id = sources.node_id
    static: list[InstructionManifest] = []
    resolvers: list[DynamicResolver] = []
    dynamic: list[DynamicManifest] = []
    for source in sources.instructions:
        name = source.logical_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        named = NamedSource(name=name, source=source)
        if source.kind == "markdown":
            text = _read(source.path, node_id, diagnostics)
            if text is not None:
                static.append(
                    InstructionManifest(name=name, content=text, role="system", source=source_info(node_id, named))
                )
            continue
        found = _module_definition(
            source,
            (Instructions, DynamicResolver),
            loader,
            diagnostics,
            node_id=node_id,
            what="instructions",
            example='instructions = define_instructions("...")',
        )
        if found is None:
            continue
        info = source_info(node_id, named, export=found.name)
        if isinstance(found.value, Instructions):
            static.append(
                InstructionManifest(name=name, content=found.value.content, role=found.value.role, source=info)
            )
            continue
        resolver: DynamicResolver = found.value
        unsupported = sorted(set(resolver.event_names) - INSTRUCTION_EVENTS)
        if unsupported:
            diagnostics.append(
                dg.error(
                    "compile/dynamic-event-unsupported",
                    f"Dynamic instructions resolve on session.started or turn.started only, not {unsupported}.",
                    source.path,
                    node_id=node_id,
                )
            )
            continue
        resolvers.append(resolver)
        dynamic.append(DynamicManifest(slug=name, event_names=resolver.event_names, source=info))
    return static, resolvers, dynamic


def compile_skills(sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]) -> list[SkillManifest]:
    """Every skill with its description and body."""
    node_id = sources.node_id
    skills: list[SkillManifest] = []
    for named in sources.skills:
        source = named.source
        info = source_info(node_id, named)
        if source.kind == "module":
            found = _module_definition(
                source, (Skill,), loader, diagnostics, node_id=node_id, what="skill",
                example='skill = define_skill(description="...", markdown="...")',
            )  # fmt: skip
            if found is not None:
                skill: Skill = found.value
                skills.append(
                    SkillManifest(
                        name=named.name,
                        description=skill.description,
                        markdown=skill.markdown,
                        license=skill.license,
                        metadata=dict(skill.metadata),
                        files=sorted(skill.files),
                        source=info.model_copy(update={"export_name": found.name}),
                    )
                )
            continue
        document = _markdown(source.path, node_id, diagnostics)
        if document is None:
            continue
        description, described = _frontmatter_text(document.frontmatter, "description", named, node_id, diagnostics)
        license_value, licensed = _frontmatter_text(document.frontmatter, "license", named, node_id, diagnostics)
        if not (described and licensed):
            continue
        files: list[str] = []
        if source.kind == "skill-package":
            if description is None:
                diagnostics.append(
                    dg.error(
                        "compile/skill-description-missing",
                        f"{source.logical_path} needs a 'description' in its frontmatter "
                        "(a 'description: ...' line between two '---' lines): the model reads it to decide when "
                        "to load the skill.",
                        source.path,
                        node_id=node_id,
                    )
                )
                continue
            files = _package_files(source.path.parent)
        body = document.body
        if document.has_frontmatter:  # as in eve, the blank line after the frontmatter is not part of the body
            body = body.removeprefix("\r\n") if body.startswith("\r\n") else body.removeprefix("\n")
        raw_metadata = document.frontmatter.get("metadata")
        metadata: dict[str, str] = {}
        if isinstance(raw_metadata, dict) and all(isinstance(v, str) for v in raw_metadata.values()):
            metadata = {str(k): v for k, v in raw_metadata.items()}  # eve keeps it only when every value is text
        skills.append(
            SkillManifest(
                name=named.name,
                description=description.strip() if description is not None else describe_markdown(named.name, body),
                markdown=body,
                license=license_value,
                metadata=metadata,
                files=files,
                source=info,
            )
        )
    return skills


def _frontmatter_text(
    frontmatter: dict[str, Any], key: str, named: NamedSource, node_id: str, diagnostics: list[Diagnostic]
) -> tuple[str | None, bool]:
    """A frontmatter value that must be text when present: (value, ok)."""
    value = frontmatter.get(key)
    if value is None or (isinstance(value, str) and value.strip()):
        return value, True
    code = "compile/skill-description-missing" if key == "description" else "compile/frontmatter-invalid"
    diagnostics.append(
        dg.error(
            code,
            f"{named.source.logical_path}: '{key}' must be text (a '{key}: ...' line in the frontmatter).",
            named.source.path,
            node_id=node_id,
        )
    )
    return None, False


def _package_files(folder: Path) -> list[str]:
    """The files under the package's `references/`, `assets/` and `scripts/` (hidden files and caches left out)."""
    files: list[str] = []
    for sub in SKILL_PACKAGE_FOLDERS:
        base = folder / sub
        if base.is_dir():
            for path in sorted(base.rglob("*")):
                relative = path.relative_to(folder)
                if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
                    files.append(relative.as_posix())
    return files


def compile_hooks(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[dict[str, Hook], list[HookManifest]]:
    """Every hook, by slug."""
    node_id = sources.node_id
    hooks: dict[str, Hook] = {}
    manifests: list[HookManifest] = []
    for named in sources.hooks:
        found = _module_definition(
            named.source, (Hook,), loader, diagnostics, node_id=node_id, what="hook",
            example='hook = define_hook({"turn.completed": on_turn_completed})',
        )  # fmt: skip
        if found is None:
            continue
        hooks[named.name] = found.value
        manifests.append(
            HookManifest(
                slug=named.name,
                event_names=found.value.event_names,
                source=source_info(node_id, named, export=found.name),
            )
        )
    return hooks, manifests


def compile_schedules(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[dict[str, Schedule], list[ScheduleManifest]]:
    """Every schedule, by name."""
    node_id = sources.node_id
    schedules: dict[str, Schedule] = {}
    manifests: list[ScheduleManifest] = []
    for named in sources.schedules:
        source = named.source
        if source.kind == "module":
            found = _module_definition(
                source, (Schedule,), loader, diagnostics, node_id=node_id, what="schedule",
                example='schedule = define_schedule(cron="0 9 * * 1", markdown="...")',
            )  # fmt: skip
            if found is None:
                continue
            schedule: Schedule = found.value
            info = source_info(node_id, named, export=found.name)
        else:
            document = _markdown(source.path, node_id, diagnostics)
            if document is None:
                continue
            cron = document.frontmatter.get("cron")
            problem = cron_problem(cron)
            if problem is None and not document.body.strip():
                problem = "the body (the prompt the schedule runs) is empty"
            if problem is not None:
                diagnostics.append(
                    dg.error(
                        "compile/schedule-invalid",
                        f"{source.logical_path}: {problem}. A schedule file starts with a cron line "
                        "('cron: \"0 9 * * 1\"') between two '---' lines, followed by its prompt.",
                        source.path,
                        node_id=node_id,
                    )
                )
                continue
            assert isinstance(cron, str)
            schedule = Schedule(cron=cron, markdown=document.body.strip())
            info = source_info(node_id, named)
        schedules[named.name] = schedule
        manifests.append(
            ScheduleManifest(
                name=named.name,
                cron=schedule.cron,
                markdown=schedule.markdown,
                has_run=schedule.run is not None,
                source=info,
            )
        )
    return schedules, manifests
