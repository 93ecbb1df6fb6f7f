"""Compiling an agent's sandbox: its definition, its seed, and the skill files its workspaces get.

Without a sandbox file the framework default applies (`define_sandbox()`: the best backend
here, no network). `define_parent_sandbox()` in a subagent shares the delegating session's
sandbox; it cannot bring a seed of its own, and the root agent has no parent to share with.
Each skill's files go to `$HOME/.agents/skills/<skill>/`: a package's `SKILL.md` and its
`references/`, `assets/`, `scripts/`; a markdown skill's file as `SKILL.md`; a `define_skill`
module's markdown and `files`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.sandbox import ParentSandbox, SandboxConfig
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compose_tools import framework_source, source_info
from eve_runtime.project.definitions import module_definition
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import SandboxManifest, SourceInfo
from eve_runtime.project.runtime_agent import RuntimeSkill
from eve_runtime.project.sources import AgentSources
from eve_runtime.sandbox import SandboxSpec, SkillFiles

__all__ = ["CompiledSandbox", "compile_sandbox"]


@dataclass(frozen=True)
class CompiledSandbox:
    """An agent's sandbox: what info shows, and what its workspaces are made from (None: the parent's)."""

    manifest: SandboxManifest
    spec: SandboxSpec | None
    config: SandboxConfig
    """The definition in force: the agent's own, or (sharing the parent's) the parent's."""


def _definition(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[SandboxConfig | ParentSandbox, SourceInfo] | None:
    node_id = sources.node_id
    if sources.sandbox is None:
        return SandboxConfig(), framework_source(node_id, "sandbox.py")
    found = module_definition(
        sources.sandbox,
        (SandboxConfig, ParentSandbox),
        loader,
        diagnostics,
        node_id=node_id,
        what="sandbox definition",
        example='sandbox = define_sandbox(backend="bwrap")',
        preferred="sandbox",
    )
    if found is None:
        return None
    value: SandboxConfig | ParentSandbox = found.value
    return value, source_info(node_id, logical_path=sources.sandbox.logical_path, export=found.name)


def _skill_files(skills: Mapping[str, RuntimeSkill]) -> tuple[SkillFiles, ...]:
    return tuple(SkillFiles(name=name, files=skill.files) for name, skill in skills.items())


def compile_sandbox(
    sources: AgentSources,
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    *,
    skills: Mapping[str, RuntimeSkill],
    parent: SandboxConfig | None,
) -> CompiledSandbox | None:
    """The agent's sandbox; None when its sandbox file could not be used (a diagnostic says why).

    `parent` is the definition of the agent that delegates to this one (None for the root).
    """
    node_id = sources.node_id
    defined = _definition(sources, loader, diagnostics)
    if defined is None:
        return None
    value, source = defined
    where = sources.sandbox.path if sources.sandbox is not None else sources.root
    if isinstance(value, ParentSandbox):
        if parent is None:
            diagnostics.append(
                dg.error(
                    "compile/parent-sandbox-root",
                    f"{source.logical_path}: the root agent has no parent sandbox to share; use define_sandbox().",
                    where,
                    node_id=node_id,
                )
            )
            return None
        if sources.sandbox_workspace is not None:
            diagnostics.append(
                dg.error(
                    "compile/parent-sandbox-workspace",
                    "A subagent sharing its parent's sandbox (define_parent_sandbox()) cannot seed a workspace of its "
                    "own: remove sandbox/workspace/, or define_sandbox() instead.",
                    sources.sandbox_workspace,
                    node_id=node_id,
                )
            )
            return None
        if any(s.manifest.files or s.manifest.source.source_kind != "module" for s in skills.values()):
            diagnostics.append(
                dg.warning(
                    "compile/parent-sandbox-skills",
                    "This subagent shares its parent's sandbox, so its skills' files are not placed in it "
                    "(load_skill still works).",
                    where,
                    node_id=node_id,
                )
            )
        manifest = SandboxManifest(inherits_parent=True, network=parent.network.describe(), source=source)
        return CompiledSandbox(manifest=manifest, spec=None, config=parent)
    spec = SandboxSpec(config=value, seed_dir=sources.sandbox_workspace, skills=_skill_files(skills))
    manifest = SandboxManifest(
        backend_kind=value.backend_kind,
        description=value.description,
        has_bootstrap=bool(value.bootstrap),
        network=value.network.describe(),
        timeout_seconds=value.timeout_seconds,
        max_output_bytes=value.max_output_bytes,
        environment_keys=sorted(value.environment),
        seed_files=spec.seed_count,
        skills=[tree.name for tree in spec.skills],
        revision_hash=spec.revision,
        source=source,
    )
    return CompiledSandbox(manifest=manifest, spec=spec, config=value)
