"""Compiling an agent's skills: markdown files, `SKILL.md` packages, `define_skill` and dynamic resolvers.

eve's rules, as `agent/skills/` holds them:

- `skills/<name>.md`: frontmatter optional; without a `description`, eve advertises the body's
  first text line (`describe_markdown`);
- `skills/<name>/SKILL.md`: a package; its frontmatter must carry `description`, and the files
  under `references/`, `assets/` and `scripts/` belong to it;
- `description` and `license` must be text when present; `metadata` is kept only when every
  value is a string; other frontmatter is accepted and ignored;
- `skills/<name>.py` holds `define_skill(...)`, or a `define_dynamic` resolver whose
  `session.started` / `turn.started` handler returns skills while a session runs.

Each skill compiles to a manifest entry and a `RuntimeSkill` holding every file of its package,
`SKILL.md` included (generated for skills that are not packages), for `ctx.get_skill` and the
sandbox.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.skills import Skill, describe_markdown
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compile_content import read_markdown
from eve_runtime.project.compose_tools import DYNAMIC_TOOL_EVENTS, source_info
from eve_runtime.project.definitions import module_definition
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import DynamicManifest, SkillManifest, SourceInfo
from eve_runtime.project.runtime_agent import RuntimeSkill
from eve_runtime.project.sources import AgentSources, NamedSource

__all__ = ["DYNAMIC_SKILL_EVENTS", "SKILL_FILE", "CompiledSkills", "compile_skills", "runtime_skill", "skill_document"]

SKILL_FILE = "SKILL.md"
SKILL_PACKAGE_FOLDERS = ("references", "assets", "scripts")
DYNAMIC_SKILL_EVENTS = DYNAMIC_TOOL_EVENTS
"""Dynamic skills resolve when dynamic tools do: `session.started` and `turn.started`."""


@dataclass
class CompiledSkills:
    """The outcome of compiling one agent's skills."""

    skills: dict[str, RuntimeSkill] = field(default_factory=dict)
    dynamic: dict[str, DynamicResolver] = field(default_factory=dict)
    dynamic_manifests: list[DynamicManifest] = field(default_factory=list)

    @property
    def manifests(self) -> list[SkillManifest]:
        return [skill.manifest for skill in self.skills.values()]


def skill_document(name: str, description: str, markdown: str, license: str | None, metadata: dict[str, str]) -> str:
    """The `SKILL.md` of a skill that is not a package (the Agent Skills format: frontmatter, then the body)."""
    lines = ["---", f"name: {json.dumps(name)}", f"description: {json.dumps(description, ensure_ascii=False)}"]
    if license is not None:
        lines.append(f"license: {json.dumps(license, ensure_ascii=False)}")
    if metadata:
        lines.append("metadata:")
        lines.extend(
            f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in metadata.items()
        )
    return "\n".join([*lines, "---", ""]) + markdown


def runtime_skill(name: str, skill: Skill, source: SourceInfo) -> RuntimeSkill:
    """The engine's view of a `define_skill` (authored in a file, or returned by a dynamic resolver)."""
    metadata = dict(skill.metadata)
    manifest = SkillManifest(
        name=name,
        description=skill.description,
        markdown=skill.markdown,
        license=skill.license,
        metadata=metadata,
        files=sorted(skill.files),
        source=source,
    )
    files = {path: text.encode() for path, text in skill.files.items()}
    files[SKILL_FILE] = skill_document(name, skill.description, skill.markdown, skill.license, metadata).encode()
    return RuntimeSkill(manifest=manifest, files=files)


def compile_skills(sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]) -> CompiledSkills:
    """Every skill of the agent, with its description, body and files, and its dynamic skill resolvers."""
    compiled = CompiledSkills()
    for named in sources.skills:
        if named.source.kind == "module":
            _compile_module(named, sources, loader, diagnostics, compiled)
            continue
        skill = _compile_markdown(named, sources.node_id, diagnostics)
        if skill is not None:
            compiled.skills[named.name] = skill
    return compiled


def _compile_module(
    named: NamedSource,
    sources: AgentSources,
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    compiled: CompiledSkills,
) -> None:
    node_id = sources.node_id
    found = module_definition(
        named.source, (Skill, DynamicResolver), loader, diagnostics, node_id=node_id, what="skill",
        example='skill = define_skill(description="...", markdown="...")',
    )  # fmt: skip
    if found is None:
        return
    info = source_info(node_id, named, export=found.name)
    if isinstance(found.value, Skill):
        compiled.skills[named.name] = runtime_skill(named.name, found.value, info)
        return
    resolver: DynamicResolver = found.value
    unsupported = sorted(set(resolver.event_names) - DYNAMIC_SKILL_EVENTS)
    if unsupported:
        diagnostics.append(
            dg.error(
                "compile/dynamic-event-unsupported",
                f"Dynamic skills resolve on session.started or turn.started only, not {unsupported}.",
                named.source.path,
                node_id=node_id,
            )
        )
        return
    compiled.dynamic[named.name] = resolver
    compiled.dynamic_manifests.append(DynamicManifest(slug=named.name, event_names=resolver.event_names, source=info))


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


def _compile_markdown(named: NamedSource, node_id: str, diagnostics: list[Diagnostic]) -> RuntimeSkill | None:
    source = named.source
    document = read_markdown(source.path, node_id, diagnostics)
    if document is None:
        return None
    frontmatter = document.frontmatter
    description, described = _frontmatter_text(frontmatter, "description", named, node_id, diagnostics)
    license_value, licensed = _frontmatter_text(frontmatter, "license", named, node_id, diagnostics)
    if not (described and licensed):
        return None
    package = source.kind == "skill-package"
    if package and description is None:
        diagnostics.append(
            dg.error(
                "compile/skill-description-missing",
                f"{source.logical_path} needs a 'description' in its frontmatter (a 'description: ...' line "
                "between two '---' lines): the model reads it to decide when to load the skill.",
                source.path,
                node_id=node_id,
            )
        )
        return None
    body = document.body
    if document.has_frontmatter:
        body = body.removeprefix("\r\n") if body.startswith("\r\n") else body.removeprefix("\n")
    raw_metadata = frontmatter.get("metadata")
    metadata: dict[str, str] = {}
    if isinstance(raw_metadata, dict) and all(isinstance(v, str) for v in raw_metadata.values()):
        metadata = {str(k): v for k, v in raw_metadata.items()}
    name = named.name
    if description is None:
        description = describe_markdown(name, body)
    files: dict[str, bytes] = {}
    if package:
        files = _package_files(source.path.parent, node_id, diagnostics)
        files[SKILL_FILE] = source.path.read_bytes()
    manifest = SkillManifest(
        name=name,
        description=description.strip(),
        markdown=body,
        license=license_value,
        metadata=metadata,
        files=sorted(path for path in files if path != SKILL_FILE),
        source=source_info(node_id, named),
    )
    if not package:
        files[SKILL_FILE] = skill_document(name, manifest.description, body, license_value, metadata).encode()
    return RuntimeSkill(manifest=manifest, files=files)


def _package_files(folder: Path, node_id: str, diagnostics: list[Diagnostic]) -> dict[str, bytes]:
    """The files under the package's `references/`, `assets/` and `scripts/` (hidden files and caches left out)."""
    files: dict[str, bytes] = {}
    for sub in SKILL_PACKAGE_FOLDERS:
        base = folder / sub
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            relative = path.relative_to(folder)
            if not path.is_file() or any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
                continue
            try:
                files[relative.as_posix()] = path.read_bytes()
            except OSError as exc:
                diagnostics.append(
                    dg.error("compile/source-unreadable", f"Cannot read {relative}: {exc}.", path, node_id=node_id)
                )
    return files
