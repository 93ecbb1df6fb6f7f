"""Agent info: the compiled agent as the `eve-agent-info` document (version 6).

`GET /eve/v1/info` serves it, and `eve info --json` prints it with three more top-level keys
(`status`, `messaging`, `artifacts`) that only make sense for a local build, and each schedule's
next fire times (`nextFireTimes`, computed when it runs: a served document would go stale). Names follow eve's
agent-info schema in camelCase; every capability carries its source and owner.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, Literal

from eve_runtime.authoring.schedules import fires_after
from eve_runtime.diagnostics import Diagnostic, summarize
from eve_runtime.project.compiler import CompiledApp
from eve_runtime.project.compose_tools import framework_source
from eve_runtime.project.manifest import AgentManifest, ChannelManifest, DynamicManifest, Manifest, SourceInfo
from eve_runtime.project.sources import ROOT_NODE_ID
from eve_runtime.redaction import REDACTOR
from eve_runtime.routes import DEFAULT_ROUTES, MESSAGING
from eve_runtime.sandbox import describe_backend

__all__ = ["INFO_VERSION", "NEXT_FIRES", "agent_info", "cli_info", "next_fire_times"]

INFO_VERSION = 6
NEXT_FIRES = 3
"""How many upcoming fire times `eve info` shows per schedule."""
Mode = Literal["development", "production"]
JSON = dict[str, Any]


def _source(source: SourceInfo) -> JSON:
    owner: JSON = (
        {"kind": "application"} if source.owner == "application" else {"kind": "framework", "feature": "eve:defaults"}
    )
    data: JSON = {
        "logicalPath": source.logical_path,
        "sourceId": source.source_id,
        "sourceKind": source.source_kind,
        "owner": owner,
    }
    if source.source_kind == "module":
        data["exportName"] = source.export_name
        data["binding"] = {"exportName": source.export_name}
    return data


def _resolver(resolver: DynamicManifest) -> JSON:
    return {**_source(resolver.source), "slug": resolver.slug, "eventNames": resolver.event_names}


def _diagnostic(diagnostic: Diagnostic) -> JSON:
    return diagnostic.model_dump(mode="json", by_alias=True, exclude_none=True)


def _diagnostics(manifest: Manifest) -> JSON:
    """Counts as eve reports them, plus the diagnostics themselves under `entries`."""
    summary = summarize(manifest.diagnostics)
    return {
        "discoveryErrors": summary.errors,
        "discoveryWarnings": summary.warnings,
        "entries": [_diagnostic(d) for d in manifest.diagnostics],
    }


def with_failed_build(info: JSON, failed: Manifest) -> JSON:
    """The info of the serving generation, showing the diagnostics of a newer build that failed (`eve dev`)."""
    return {**info, "diagnostics": _diagnostics(failed)}


def _model(agent: AgentManifest) -> JSON:
    model = agent.model
    if model.routing == "dynamic":
        return {"routing": {"kind": "dynamic"}, "reasoning": model.reasoning}
    routing: JSON
    if model.routing == "external":
        routing = {"kind": "external", "provider": model.id}
    elif model.routing == "offline":
        routing = {"kind": "offline", "target": model.id}
    else:
        target = model.id or ""
        routing = {"kind": "gateway", "target": target}
    data: JSON = {"id": model.id, "routing": routing}
    if model.reasoning is not None:
        data["reasoning"] = model.reasoning
    if model.context_window_tokens is not None:
        data["contextWindowTokens"] = model.context_window_tokens
    if model.options:
        data["providerOptions"] = model.options
    return data


def _tools(agent: AgentManifest) -> JSON:
    static = [
        {
            **_source(tool.source),
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
            **({"outputSchema": tool.output_schema} if tool.output_schema is not None else {}),
            "hasAuth": False,
            "hasExecute": True,
            "hasModelOutputProjection": tool.has_model_output_projection,
            "hasOutputSchema": tool.output_schema is not None,
            "requiresApproval": tool.requires_approval,
        }
        for tool in agent.tools
    ]
    framework = [
        {
            "name": f.name,
            "status": f.status,
            "availability": f.availability,
            **({"reason": f.reason} if f.reason else {}),
        }
        for f in agent.framework_tools
    ]
    return {"static": static, "dynamic": [_resolver(r) for r in agent.dynamic_tools], "framework": framework}


def _sandbox(agent: AgentManifest) -> JSON | None:
    """The sandbox as eve describes it (`backendKind`, `hasBootstrap`, `revisionHash`, ...), plus its limits."""
    sandbox = agent.sandbox
    if sandbox is None:
        return None
    data: JSON = {
        **_source(sandbox.source),
        "backendKind": "parent" if sandbox.inherits_parent else sandbox.backend_kind,
        "hasBootstrap": sandbox.has_bootstrap,
        "hasOnSession": False,
        "revisionHash": sandbox.revision_hash,
        "network": sandbox.network,
    }
    if sandbox.description is not None:
        data["description"] = sandbox.description
    if not sandbox.inherits_parent:
        data["limits"] = {"timeoutSeconds": sandbox.timeout_seconds, "maxOutputBytes": sandbox.max_output_bytes}
        data["environmentKeys"] = sandbox.environment_keys
        data["workspace"] = {"seedFiles": sandbox.seed_files, "skills": sandbox.skills}
    return data


def _subagent(agent: AgentManifest) -> JSON:
    return {
        **_source(agent.config_source),
        "name": agent.name,
        "nodeId": agent.node_id,
        "parentNodeId": agent.parent_node_id,
        "description": agent.description,
        "entryPath": f"{agent.agent_root}/agent.py",
        "rootPath": agent.agent_root,
        "summary": {
            "channels": 0,
            "connections": 0,
            "hooks": len(agent.hooks),
            "instructions": len(agent.instructions) + len(agent.dynamic_instructions),
            "memories": 0,
            "schedules": len(agent.schedules),
            "skills": len(agent.skills) + len(agent.dynamic_skills),
            "tools": len(agent.tools) + len(agent.dynamic_tools),
        },
    }


def _composition(agent: AgentManifest) -> JSON:
    return {
        "disabled": [{"kind": "disabled", **_source(e.source)} for e in agent.disabled],
        "shadowed": [
            {"kind": "shadowed", **_source(e.source), "winnerSourceId": e.winning_source_id} for e in agent.shadowed
        ],
    }


def _eve_channel(agent: AgentManifest) -> ChannelManifest | None:
    return next((c for c in agent.channels if c.kind in ("eve", "disabled")), None)


def _routes(agent: AgentManifest) -> list[JSON]:
    """The channel routes in the order the server matches them: custom channels first, then eve's."""
    routes = [
        {**_source(c.source), "name": c.name, "method": r.method, "urlPath": r.path, "adapterKind": "custom"}
        for c in sorted(agent.channels, key=lambda c: c.name)
        if c.kind == "custom"
        for r in c.routes
    ]
    eve = _eve_channel(agent)
    if eve is not None and eve.kind == "disabled":
        return routes
    source = eve.source if eve is not None else framework_source(ROOT_NODE_ID, "channels/eve.py")
    routes += [
        {**_source(source), "name": "eve", "method": r.method, "urlPath": r.path, "adapterKind": "http"}
        for r in DEFAULT_ROUTES
    ]
    return routes


def _channels(agent: AgentManifest) -> JSON:
    eve = _eve_channel(agent)
    shadowed = []
    if eve is not None:
        default = framework_source(ROOT_NODE_ID, "channels/eve.py")
        shadowed = [{"kind": "shadowed", **_source(default), "winnerSourceId": eve.source.source_id}]
    return {"routes": _routes(agent), "shadowed": shadowed}


def agent_info(manifest: Manifest, *, mode: Mode) -> JSON:
    """The agent-info v6 document of a compiled app (its root agent must exist)."""
    agent = manifest.root
    if agent is None:
        raise ValueError("agent info needs a manifest with a root agent")
    described: JSON = {
        "name": agent.name,
        "nodeId": agent.node_id,
        "agentRoot": manifest.agent_root,
        "appRoot": manifest.app_root,
        "config": _source(agent.config_source),
        "model": _model(agent),
        "settings": agent.config,
    }
    if agent.description is not None:
        described["description"] = agent.description
    if agent.output_schema is not None:
        described["outputSchema"] = agent.output_schema
    info: JSON = {
        "kind": "eve-agent-info",
        "version": INFO_VERSION,
        "mode": mode,
        "agent": described,
        "capabilities": {"devRoutes": mode == "development"},
        "channels": _channels(agent),
        "composition": _composition(agent),
        "connections": [],
        "diagnostics": _diagnostics(manifest),
        "hooks": [{**_source(h.source), "slug": h.slug, "eventNames": h.event_names} for h in agent.hooks],
        "instructions": {
            "static": [
                {**_source(i.source), "name": i.name, "content": i.content, "role": i.role} for i in agent.instructions
            ],
            "dynamic": [_resolver(r) for r in agent.dynamic_instructions],
        },
        "kernelEffects": [],
        "memories": [],
        "remoteAgents": {"entries": [], "total": 0},
        "sandbox": _sandbox(agent),
        "schedules": [
            {
                **_source(s.source),
                "name": s.name,
                "cron": s.cron,
                "hasRun": s.has_run,
                "missed": s.missed,
                **({"markdown": s.markdown} if s.markdown is not None else {}),
            }
            for s in agent.schedules
        ],
        "skills": {
            "static": [
                {
                    **_source(s.source),
                    "name": s.name,
                    "description": s.description,
                    "markdown": s.markdown,
                    **({"license": s.license} if s.license else {}),
                    **({"metadata": s.metadata} if s.metadata else {}),
                }
                for s in agent.skills
            ],
            "dynamic": [_resolver(r) for r in agent.dynamic_skills],
        },
        "subagents": {"local": [_subagent(s) for s in agent.subagents], "total": len(agent.subagents)},
        "tools": _tools(agent),
        "workflow": {"enabled": False, "toolName": "Workflow"},
        "workspace": {
            "resourceRoot": {"logicalPath": "workspace-resources/__root__", "rootEntries": []},
            "rootEntries": [],
        },
    }
    masked: JSON = REDACTOR.value(info)  # no secret in `GET /eve/v1/info` or `eve info` (eve_runtime.redaction)
    return masked


def next_fire_times(cron: str, now: float, count: int = NEXT_FIRES) -> list[str]:
    """The next `count` fire times of a cron expression after `now`, as ISO 8601 UTC strings."""
    return [
        datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        for at in fires_after(cron, now, count)
    ]


def cli_info(compiled: CompiledApp, *, now: float | None = None) -> JSON:
    """What `eve info --json` prints: agent info plus the local build's status, routes and artifacts.

    Each schedule also lists its next fire times after `now` (default: the current time). When
    the app failed so early that no agent exists, the agent-specific keys are absent.
    """
    manifest = compiled.manifest
    paths = compiled.paths
    base: JSON = (
        agent_info(manifest, mode="development")
        if manifest.root is not None
        else {
            "kind": "eve-agent-info",
            "version": INFO_VERSION,
            "mode": "development",
            "diagnostics": _diagnostics(manifest),
        }
    )
    at = time.time() if now is None else now
    for schedule in base.get("schedules", []):
        schedule["nextFireTimes"] = next_fire_times(schedule["cron"], at)
    spec = compiled.root.sandbox if compiled.root is not None else None
    if spec is not None and isinstance(base.get("sandbox"), dict):
        backend, note = describe_backend(spec.config)  # what would run commands on this machine
        base["sandbox"]["backend"] = backend
        if note is not None:
            base["sandbox"]["backendNote"] = note
    base["status"] = manifest.status
    base["messaging"] = dict(MESSAGING)
    base["artifacts"] = {
        "compiledManifest": str(paths.manifest_file),
        "discoveryManifest": str(paths.discovery_manifest_file),
        "diagnostics": str(paths.diagnostics_file),
        "metadata": str(paths.compile_metadata_file),
    }
    masked: JSON = REDACTOR.value(base)
    return masked
