"""Compiling one agent (the root or a subagent) from its sources into a manifest entry and runtime objects."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.config import DEFAULT_MAX_INPUT_TOKENS_PER_SESSION, DEFAULT_SUBAGENT_TIMEOUT_MS, AgentConfig
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.sandbox import SandboxConfig
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.models.ids import is_test_model
from eve_runtime.project.call_sites import definer_keyword_line
from eve_runtime.project.compile_channels import compile_channels
from eve_runtime.project.compile_connections import check_collisions, compile_connections
from eve_runtime.project.compile_content import compile_hooks, compile_instructions, compile_schedules
from eve_runtime.project.compile_sandbox import compile_sandbox
from eve_runtime.project.compile_skills import compile_skills
from eve_runtime.project.compose_tools import compose_tools, framework_source, source_info
from eve_runtime.project.definitions import module_definition
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import AgentManifest, CompositionEntry, ModelManifest, SourceInfo
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.project.sources import AgentSources
from eve_runtime.redaction import REDACTOR

__all__ = ["compile_agent"]

MODEL_EVENTS = frozenset({"session.started", "turn.started", "step.started"})


def compile_agent(
    sources: AgentSources,
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    *,
    app_root: Path,
    parent_sandbox: SandboxConfig | None = None,
) -> RuntimeAgent | None:
    """Compile one agent and its subagents. Returns None when its configuration could not be loaded.

    `parent_sandbox` is the sandbox definition of the agent delegating to this one (None: the root).
    """
    node_id = sources.node_id
    loaded = _load_config(sources, loader, diagnostics)
    if loaded is None:
        return None
    config, config_source = loaded
    _check_config(sources, config, config_source, diagnostics)
    skills = compile_skills(sources, loader, diagnostics)
    sandbox = compile_sandbox(sources, loader, diagnostics, skills=skills.skills, parent=parent_sandbox)
    sandbox_config = sandbox.config if sandbox is not None else SandboxConfig()

    children: dict[str, RuntimeAgent] = {}
    for child_sources in sources.subagents:
        child = compile_agent(child_sources, loader, diagnostics, app_root=app_root, parent_sandbox=sandbox_config)
        if child is not None:
            children[child.name] = child

    instructions, dynamic_instructions, dynamic_manifests = compile_instructions(sources, loader, diagnostics)
    tools = compose_tools(
        sources, config, loader, diagnostics, subagent_names=set(children), network=sandbox_config.network
    )
    hooks, hook_manifests = compile_hooks(sources, loader, diagnostics)
    schedules, schedule_manifests = compile_schedules(sources, loader, diagnostics)
    channels = compile_channels(sources, loader, diagnostics)
    connections = compile_connections(sources, loader, diagnostics)
    named = [(n, f"tools/{n}.py") for n in [*tools.tools, *tools.dynamic]]
    check_collisions(connections, [*named, *((n, f"subagents/{n}/") for n in children)], sources, diagnostics)

    for name, child in children.items():
        exposed = child.config.tool and name not in tools.disabled_by
        if not exposed:
            child.manifest = child.manifest.model_copy(update={"exposed_as_tool": False})
        if exposed and (name in tools.tools or name in tools.dynamic):
            diagnostics.append(
                dg.error(
                    "compile/subagent-tool-collision",
                    f"Subagent {name!r} and tools/{name}.py both define the tool {name!r}. Rename one, set "
                    f"tool=False in subagents/{name}/agent.py, or make tools/{name}.py hold disable_tool().",
                    child_sources_path(sources, name),
                    node_id=node_id,
                )
            )

    shadowed = list(tools.shadowed)
    if config_source.owner == "application":
        shadowed.insert(
            0,
            CompositionEntry(
                slot="agent.py",
                source=framework_source(node_id, "agent.py"),
                winning_source_id=config_source.source_id,
            ),
        )
    manifest = AgentManifest(
        node_id=node_id,
        parent_node_id=sources.parent_node_id,
        name=sources.name,
        description=config.description,
        agent_root=sources.root.relative_to(app_root).as_posix(),
        config_source=config_source,
        model=_model_manifest(config),
        config=_config_dump(config, is_root=sources.is_root),
        output_schema=config.output_schema,
        instructions=instructions,
        dynamic_instructions=dynamic_manifests,
        tools=[tool.manifest for tool in tools.tools.values()],
        dynamic_tools=tools.dynamic_manifests,
        framework_tools=tools.framework,
        skills=skills.manifests,
        dynamic_skills=skills.dynamic_manifests,
        hooks=hook_manifests,
        schedules=schedule_manifests,
        channels=channels.manifests,
        connections=connections.manifests,
        sandbox=sandbox.manifest if sandbox is not None else None,
        subagents=[child.manifest for child in children.values()],
        shadowed=shadowed,
        disabled=tools.disabled,
    )
    return RuntimeAgent(
        manifest=manifest,
        config=config,
        tools={**tools.tools, **tools.framework_tools},
        dynamic_instructions=dynamic_instructions,
        dynamic_tools=tools.dynamic,
        skills=skills.skills,
        dynamic_skills=skills.dynamic,
        hooks=hooks,
        schedules=schedules,
        subagents=children,
        channels=channels.channels,
        eve_channel=channels.eve,
        connections=connections.definitions,
        sandbox=sandbox.spec if sandbox is not None else None,
        app_root=app_root,
    )


def child_sources_path(sources: AgentSources, name: str) -> Path:
    """The folder of subagent `name` of this agent."""
    return sources.root / "subagents" / name


def _load_config(
    sources: AgentSources, loader: ModuleLoader, diagnostics: list[Diagnostic]
) -> tuple[AgentConfig, SourceInfo] | None:
    node_id = sources.node_id
    if sources.config is None:
        if not sources.is_root:
            return None  # discovery already reported the missing agent.py
        from eve_runtime.models.providers import default_model_from_environment

        model, _reason = default_model_from_environment(os.environ)
        return AgentConfig(model=model), framework_source(node_id, "agent.py")
    found = module_definition(
        sources.config,
        (AgentConfig,),
        loader,
        diagnostics,
        node_id=node_id,
        what="agent configuration",
        example='agent = define_agent(model="test")',
        preferred="agent",
    )
    if found is None:
        return None
    config: AgentConfig = found.value
    return config, source_info(node_id, logical_path="agent.py", export=found.name)


def _check_config(
    sources: AgentSources, config: AgentConfig, source: SourceInfo, diagnostics: list[Diagnostic]
) -> None:
    path = sources.config.path if sources.config is not None else sources.root
    node_id = sources.node_id
    if config.model is None:
        diagnostics.append(
            dg.error(
                "compile/agent-model-missing",
                f"{source.logical_path} sets no model: pass model=... to define_agent() (a litellm id such as "
                "'openai/gpt-4o-mini', or 'test' for the offline model).",
                path,
                node_id=node_id,
            )
        )
    if isinstance(config.model, str):
        from eve_runtime.models.ids import model_id_problem, provider_problem

        problem = model_id_problem(config.model)
        if problem is None and "custom_llm_provider" not in config.model_options:  # that routes any id
            problem = provider_problem(config.model)
        if problem is not None:
            line = definer_keyword_line(path, "define_agent", "model") if path.is_file() else None
            message = f"{source.logical_path}: {problem}{'' if problem.endswith('?') else '.'}"
            diagnostics.append(dg.error("compile/model-invalid", message, path, line=line, node_id=node_id))
    if isinstance(config.model, DynamicResolver):
        unsupported = sorted(set(config.model.event_names) - MODEL_EVENTS)
        if unsupported:
            diagnostics.append(
                dg.error(
                    "compile/dynamic-event-unsupported",
                    f"A dynamic model resolves on session.started, turn.started or step.started, not {unsupported}.",
                    path,
                    node_id=node_id,
                )
            )
    if not sources.is_root:
        if not config.description:
            diagnostics.append(
                dg.error(
                    "compile/subagent-description-missing",
                    f"Subagent {sources.name!r} needs a description (its parent's model reads it to decide when to "
                    "delegate): pass description=... to define_agent().",
                    path,
                    node_id=node_id,
                )
            )
        if config.experimental.workflow.world is not None:
            diagnostics.append(
                dg.error(
                    "compile/root-only-field",
                    "experimental.workflow.world can only be set on the root agent; remove it from this subagent.",
                    path,
                    node_id=node_id,
                )
            )


def _model_manifest(config: AgentConfig) -> ModelManifest:
    model = config.model
    reasoning = config.reasoning
    window = config.model_context_window_tokens
    REDACTOR.remember_options(config.model_options)  # a provider error echoing one is masked too
    options = REDACTOR.options(config.model_options)  # the manifest shows them masked; calls use the config's
    if isinstance(model, DynamicResolver):
        return ModelManifest(id=None, routing="dynamic", reasoning=reasoning, context_window_tokens=window)
    if model is not None and not isinstance(model, str):
        return ModelManifest(
            id=getattr(model, "model_id", type(model).__name__),
            routing="external",
            reasoning=reasoning,
            context_window_tokens=window,
        )
    model_id = model if isinstance(model, str) else None
    offline = model_id is not None and is_test_model(model_id)
    return ModelManifest(
        id=model_id,
        routing="offline" if offline else "gateway",
        reasoning=reasoning,
        context_window_tokens=window,
        options=options,
    )


def _config_dump(config: AgentConfig, *, is_root: bool) -> dict[str, Any]:
    dumped = config.model_dump(mode="json", exclude={"model", "description", "output_schema", "model_options"})
    limits = dumped["limits"]
    if limits["max_input_tokens_per_session"] is None and is_root:
        limits["max_input_tokens_per_session"] = DEFAULT_MAX_INPUT_TOKENS_PER_SESSION
    if dumped["timeout"] is None:
        dumped["timeout"] = DEFAULT_SUBAGENT_TIMEOUT_MS
    return dumped
