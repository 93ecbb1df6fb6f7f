"""Composing an agent's tools: authored tool files, framework tools, disables and policies."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, cast

from eve_runtime import diagnostics as dg
from eve_runtime.authoring.config import AgentConfig
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.sandbox import NetworkPolicy
from eve_runtime.authoring.schema import FunctionSchema, function_schema
from eve_runtime.authoring.tools import DisabledTool, ToolOptions, tool_options
from eve_runtime.diagnostics import Diagnostic
from eve_runtime.errors import DefinitionError
from eve_runtime.project.builtin_tools import BUILTIN_TOOLS, BuiltinTool, builtin_tool
from eve_runtime.project.loader import ModuleLoader
from eve_runtime.project.manifest import (
    CompositionEntry,
    DynamicManifest,
    FrameworkStatus,
    FrameworkToolStatus,
    SourceInfo,
    ToolManifest,
)
from eve_runtime.project.runtime_agent import RuntimeTool
from eve_runtime.project.sources import ROOT_NODE_ID, AgentSources, NamedSource
from eve_runtime.project.tool_hints import untyped_parameter_warnings
from eve_runtime.sandbox import FRAMEWORK_TOOLS, framework_function, framework_tool_name

__all__ = ["DYNAMIC_TOOL_EVENTS", "ComposedTools", "compose_tools", "framework_source", "runtime_tool", "source_info"]

DYNAMIC_TOOL_EVENTS = frozenset({"session.started", "turn.started"})


def _qualified(node_id: str, logical_path: str) -> str:
    """A logical path made unique across agents: subagent paths start with their node id."""
    return logical_path if node_id == ROOT_NODE_ID else f"{node_id}/{logical_path}"


def source_info(
    node_id: str, named: NamedSource | None = None, *, logical_path: str = "", export: str | None = None
) -> SourceInfo:
    """The `SourceInfo` of an authored source; its id is its path from the root agent's folder."""
    path = named.source.logical_path if named is not None else logical_path
    kind = named.source.kind if named is not None else "module"
    return SourceInfo(
        logical_path=path,
        source_id=_qualified(node_id, path),
        source_kind=kind,
        owner="application",
        export_name=export,
    )


def framework_source(node_id: str, logical_path: str) -> SourceInfo:
    """The `SourceInfo` of a framework default filling a slot (`eve:defaults:tools/bash.py`)."""
    return SourceInfo(
        logical_path=logical_path,
        source_id=f"eve:defaults:{_qualified(node_id, logical_path)}",
        source_kind="framework",
        owner="framework",
    )


@dataclass
class ComposedTools:
    """The outcome of composing one agent's tools."""

    tools: dict[str, RuntimeTool] = field(default_factory=dict)
    framework_tools: dict[str, RuntimeTool] = field(default_factory=dict)
    """The active framework tools the engine runs like authored ones (`bash`, `read_file`, ...)."""
    dynamic: dict[str, DynamicResolver] = field(default_factory=dict)
    dynamic_manifests: list[DynamicManifest] = field(default_factory=list)
    framework: list[FrameworkToolStatus] = field(default_factory=list)
    shadowed: list[CompositionEntry] = field(default_factory=list)
    disabled: list[CompositionEntry] = field(default_factory=list)
    disabled_by: dict[str, SourceInfo] = field(default_factory=dict)
    """Names removed with `disable_tool()` (framework tools and subagent tools), with the file that did it."""


def compose_tools(
    sources: AgentSources,
    config: AgentConfig,
    loader: ModuleLoader,
    diagnostics: list[Diagnostic],
    *,
    subagent_names: set[str],
    network: NetworkPolicy | None = None,
) -> ComposedTools:
    """Load every tool file of an agent and compose it with the framework tools.

    `network` is the agent's sandbox network policy (what `web_fetch` may reach).
    """
    node_id = sources.node_id
    composed = ComposedTools()
    for named in sources.tools:
        module = loader.load_into(named.source.path, diagnostics, node_id=node_id)
        if module is None:
            continue
        _compose_file(named, module, composed, diagnostics, node_id=node_id, subagent_names=subagent_names)
    _compose_framework(sources, config, composed, diagnostics, network or NetworkPolicy())
    return composed


def _compose_file(
    named: NamedSource,
    module: ModuleType,
    composed: ComposedTools,
    diagnostics: list[Diagnostic],
    *,
    node_id: str,
    subagent_names: set[str],
) -> None:
    path = named.source.path
    disabled = [value for value in vars(module).values() if isinstance(value, DisabledTool)]
    if disabled:
        builtin = builtin_tool(named.name)
        if builtin is None and named.name not in subagent_names:
            diagnostics.append(
                dg.error(
                    "compile/tool-disable-unknown",
                    f"{named.source.logical_path} disables {named.name!r}, which is not a framework tool or a subagent "
                    "of this agent. Remove the file, or rename it after the tool to disable "
                    f"({', '.join(t.name for t in BUILTIN_TOOLS)}).",
                    path,
                    node_id=node_id,
                )
            )
        elif builtin is not None and not builtin.can_disable:
            diagnostics.append(
                dg.error(
                    "compile/tool-disable-forbidden",
                    f"{named.name!r} cannot be disabled: agents with connections need it. "
                    f"Remove {named.source.logical_path}.",
                    path,
                    node_id=node_id,
                )
            )
        else:
            attribute = next(k for k, v in vars(module).items() if isinstance(v, DisabledTool))
            composed.disabled_by[named.name] = source_info(node_id, named, export=attribute)
        return
    resolvers = {
        id(v): (k, v) for k, v in vars(module).items() if isinstance(v, DynamicResolver) and not k.startswith("_")
    }
    if resolvers:
        if len(resolvers) > 1 or _defines_tool_function(named, module):
            diagnostics.append(
                dg.error(
                    "compile/definition-ambiguous",
                    f"{named.source.logical_path} defines a dynamic tool and something else (another define_dynamic "
                    "or a tool function); a tool file holds exactly one of them.",
                    path,
                    node_id=node_id,
                )
            )
            return
        attribute, resolver = next(iter(resolvers.values()))
        unsupported = sorted(set(resolver.event_names) - DYNAMIC_TOOL_EVENTS)
        if unsupported:
            diagnostics.append(
                dg.error(
                    "compile/dynamic-event-unsupported",
                    f"Dynamic tools resolve on session.started or turn.started only, not {unsupported}.",
                    path,
                    node_id=node_id,
                )
            )
            return
        composed.dynamic[named.name] = resolver
        composed.dynamic_manifests.append(
            DynamicManifest(
                slug=named.name, event_names=resolver.event_names, source=source_info(node_id, named, export=attribute)
            )
        )
        return
    function = _tool_function(named, module, diagnostics, node_id=node_id)
    if function is None:
        return
    try:
        schema = function_schema(function)
    except DefinitionError as exc:
        diagnostics.append(
            dg.error("compile/tool-schema-invalid", f"{named.source.logical_path}: {exc}", path, node_id=node_id)
        )
        return
    options = tool_options(function) or ToolOptions()
    description = options.description or schema.description
    if not description:
        diagnostics.append(
            dg.error(
                "compile/tool-description-missing",
                f"Tool {named.name!r} has no description: add a docstring to {function.__name__}() saying what the "
                "tool does (the model reads it), or pass @tool(description=...).",
                path,
                line=_line_of(function),
                node_id=node_id,
            )
        )
        return
    diagnostics.extend(untyped_parameter_warnings(named.name, function, schema, path, node_id=node_id))
    source = source_info(node_id, named, export=function.__name__)
    tool = runtime_tool(named.name, function, schema, options, description, source)
    if framework_tool_name(function) == named.name:  # an opt-in framework tool turned on: eve's input schema
        tool = _with_schema(tool, FRAMEWORK_TOOLS[named.name][1])
    composed.tools[named.name] = tool


def _with_schema(tool: RuntimeTool, input_schema: dict[str, Any]) -> RuntimeTool:
    manifest = tool.manifest.model_copy(update={"input_schema": input_schema})
    return RuntimeTool(manifest=manifest, function=tool.function, schema=tool.schema, options=tool.options)


def runtime_tool(
    name: str,
    function: Callable[..., Any],
    schema: FunctionSchema,
    options: ToolOptions,
    description: str,
    source: SourceInfo,
) -> RuntimeTool:
    """The engine's view of an authored tool function (static, or returned by a dynamic resolver)."""
    approval = options.needs_approval
    manifest = ToolManifest(
        name=name,
        description=description,
        input_schema=schema.input_schema,
        output_schema=schema.output_schema,
        kind=schema.kind,
        approval="policy" if callable(approval) else ("always" if approval else "never"),
        ends_turn=options.ends_turn,
        workflow=options.workflow,
        task=options.task,
        serve=options.serve,
        has_model_output_projection=options.to_model_output is not None,
        context_parameter=schema.context_parameter,
        source=source,
    )
    return RuntimeTool(manifest=manifest, function=function, schema=schema, options=options)


def _defines_tool_function(named: NamedSource, module: ModuleType) -> bool:
    """Whether the module defines a function decorated with @tool or one named like the file."""
    return any(
        inspect.isfunction(value)
        and value.__module__ == module.__name__
        and (tool_options(value) is not None or attribute == named.name)
        for attribute, value in vars(module).items()
    )


def _tool_function(
    named: NamedSource, module: ModuleType, diagnostics: list[Diagnostic], *, node_id: str
) -> Callable[..., Any] | None:
    """The function decorated with @tool in this module, else the function named like the file."""
    own = [
        value
        for value in vars(module).values()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and tool_options(value) is not None
    ]
    if len(own) > 1:
        names = ", ".join(f"{f.__name__}()" for f in own)
        diagnostics.append(
            dg.error(
                "compile/definition-ambiguous",
                f"{named.source.logical_path} decorates several functions with @tool ({names}); a tool file holds "
                "exactly one tool. Move the others to their own files.",
                named.source.path,
                node_id=node_id,
            )
        )
        return None
    if own:
        return own[0]
    candidate: object = vars(module).get(named.name)
    if callable(candidate) and not isinstance(candidate, type):
        return cast(Callable[..., Any], candidate)
    diagnostics.append(
        dg.error(
            "compile/definition-missing",
            f"{named.source.logical_path} defines no tool: write a function named {named.name!r} (its docstring is "
            "the description, its parameters the input), or decorate one function with @tool.",
            named.source.path,
            node_id=node_id,
        )
    )
    return None


def _line_of(function: Callable[..., Any]) -> int | None:
    code = getattr(function, "__code__", None)
    return code.co_firstlineno if code is not None else None


_OPT_IN_EXPORTS = frozenset({"ask_question", "sleep", "glob", "grep"})
"""The opt-in framework tools `eve_runtime.framework_tools` provides."""


@cache
def _framework_function(name: str, network: NetworkPolicy) -> tuple[Callable[..., Any], FunctionSchema] | None:
    """A framework tool's function and schema, made once a process: every agent of every generation has them."""
    function = framework_function(name, network)
    return (function, function_schema(function)) if function is not None else None


def _compose_framework(
    sources: AgentSources,
    config: AgentConfig,
    composed: ComposedTools,
    diagnostics: list[Diagnostic],
    network: NetworkPolicy,
) -> None:
    node_id = sources.node_id
    allowed = set(config.built_in_tools.allow) if config.built_in_tools is not None else None
    if allowed is not None:
        for unknown in sorted(allowed - {t.name for t in BUILTIN_TOOLS}):
            diagnostics.append(
                dg.warning(
                    "compile/built-in-tools-unknown",
                    f"built_in_tools allows {unknown!r}, which is not a framework tool.",
                    sources.config.path if sources.config else sources.root,
                    node_id=node_id,
                )
            )
    for builtin in BUILTIN_TOOLS:
        status, reason = _framework_status(builtin, sources, config, composed, allowed)
        slot = f"tools/{builtin.name}.py"
        winner: SourceInfo | None = None
        if status == "replaced":
            tool = composed.tools.get(builtin.name)
            winner = tool.manifest.source if tool is not None else source_info(node_id, logical_path=slot)
            reason = f"provided by {winner.logical_path}"
        elif status == "disabled":
            winner = composed.disabled_by[builtin.name]
            composed.disabled.append(CompositionEntry(slot=slot, source=winner))
            reason = f"disabled by {winner.logical_path}"
        if winner is not None:
            composed.shadowed.append(
                CompositionEntry(slot=slot, source=framework_source(node_id, slot), winning_source_id=winner.source_id)
            )
        found = _framework_function(builtin.name, network) if status == "active" else None
        if found is not None:
            function, schema = found
            options = tool_options(function) or ToolOptions()
            tool = runtime_tool(
                builtin.name, function, schema, options, builtin.description, framework_source(node_id, slot)
            )
            composed.framework_tools[builtin.name] = _with_schema(tool, builtin.input_schema)
        composed.framework.append(
            FrameworkToolStatus(name=builtin.name, status=status, availability=builtin.availability, reason=reason)
        )


def _framework_status(
    builtin: BuiltinTool,
    sources: AgentSources,
    config: AgentConfig,
    composed: ComposedTools,
    allowed: set[str] | None,
) -> tuple[FrameworkStatus, str | None]:
    """The tool's status in this agent, and why it is not active."""
    name = builtin.name
    if builtin.root_only and not sources.is_root:
        return "not-applicable", "only the root agent has it"
    if builtin.needs == "skills" and not sources.skills:
        return "not-applicable", "offered when the agent has skills"
    if builtin.needs == "connections" and not sources.connections:
        return "not-applicable", "offered when the agent has connections"
    if name in composed.disabled_by:
        return "disabled", None
    if name in composed.tools or name in composed.dynamic:
        return "replaced", None
    if builtin.availability == "opt-in":
        if name in _OPT_IN_EXPORTS:
            return "off", f"opt-in: add tools/{name}.py holding `from eve_runtime.framework_tools import {name}`"
        return "off", "opt-in, and this version of eve for Python does not provide it yet"
    if builtin.optional and not config.default_tools:
        return "off", "define_agent(default_tools=False) turns the optional framework tools off"
    if name == "agent" and not config.tool:
        return "off", "define_agent(tool=False) turns the built-in agent tool off"  # on the root
    if allowed is not None and name not in allowed:
        return "denied-by-policy", "built_in_tools does not allow it"
    if not builtin.implemented:
        return "unavailable", builtin.unavailable
    return "active", None
