"""Compiling instructions, hooks and schedules from markdown files and modules (skills: `compile_skills`)."""

from __future__ import annotations

from pathlib import Path

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.hooks import Hook
from eve_runtime.authoring.instructions import Instructions
from eve_runtime.authoring.schedules import Schedule, cron_problem, missed_problem
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compose_tools import source_info
from eve_runtime.project.definitions import module_definition
from eve_runtime.project.frontmatter import FrontmatterError, MarkdownDocument, parse_markdown
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import (
    DynamicManifest,
    HookManifest,
    InstructionManifest,
    ScheduleManifest,
)
from eve_runtime.project.sources import AgentSources, NamedSource

__all__ = [
    "compile_hooks",
    "compile_instructions",
    "compile_schedules",
    "read_markdown",
    "read_text",
]

INSTRUCTION_EVENTS = frozenset({"session.started", "turn.started"})


def read_text(path: Path, node_id: str, diagnostics: list[Diagnostic]) -> str | None:
    """The file's text, or None with `compile/source-unreadable` reported."""
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


def read_markdown(path: Path, node_id: str, diagnostics: list[Diagnostic]) -> MarkdownDocument | None:
    """The file split into frontmatter and body, or None with the problem reported."""
    text = read_text(path, node_id, diagnostics)
    if text is None:
        return None
    try:
        return parse_markdown(text)
    except FrontmatterError as exc:
        diagnostics.append(
            dg.error("compile/frontmatter-invalid", f"{path.name}: {exc}", path, line=exc.line, node_id=node_id)
        )
        return None


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
            text = read_text(source.path, node_id, diagnostics)
            if text is not None:
                static.append(
                    InstructionManifest(name=name, content=text, role="system", source=source_info(node_id, named))
                )
            continue
        found = module_definition(
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


def compile_hooks(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[dict[str, Hook], list[HookManifest]]:
    """Every hook, by slug."""
    node_id = sources.node_id
    hooks: dict[str, Hook] = {}
    manifests: list[HookManifest] = []
    for named in sources.hooks:
        found = module_definition(
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
            found = module_definition(
                source, (Schedule,), loader, diagnostics, node_id=node_id, what="schedule",
                example='schedule = define_schedule(cron="0 9 * * 1", markdown="...")',
            )  # fmt: skip
            if found is None:
                continue
            schedule: Schedule = found.value
            info = source_info(node_id, named, export=found.name)
        else:
            document = read_markdown(source.path, node_id, diagnostics)
            if document is None:
                continue
            cron = document.frontmatter.get("cron")
            missed = document.frontmatter.get("missed", "latest")
            problem = cron_problem(cron) or missed_problem(missed)
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
            schedule = Schedule(cron=cron, markdown=document.body.strip(), missed=missed)
            info = source_info(node_id, named)
        schedules[named.name] = schedule
        manifests.append(
            ScheduleManifest(
                name=named.name,
                cron=schedule.cron,
                markdown=schedule.markdown,
                has_run=schedule.run is not None,
                missed=schedule.missed,
                source=info,
            )
        )
    return schedules, manifests
