"""Agent info: the compiled agent as the `eve-agent-info` document (version 6).

`GET /eve/v1/info` serves it. Every key follows the strict agent-info schema of eve's own
client (`eve/client`'s `client.info()`, checked by `tests/interop/`) except `version`, which is
6: a module source carries its compiled `binding` (`backing`, `logicalPath`, `owner`),
framework defaults are `module` sources with a `programmatic` backing, and nothing the schema
does not know is served.

`eve info --json` prints more: three top-level keys that only make sense for a local build
(`status`, `messaging`, `artifacts`), each schedule's next fire times (`nextFireTimes`,
computed when it runs: a served document would go stale) and `missed` policy, the agent's
settings (`agent.settings`), the framework tools' status (`tools.framework`), the sandbox's
backend and limits, the workflow tool (`workflow`) and the diagnostics themselves
(`diagnostics.entries`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, Literal

from eve_runtime.authoring.schedules import fires_after
from eve_runtime.diagnostics import summarize
from eve_runtime.models.providers import missing_key
from eve_runtime.project.compiler import CompiledApp
from eve_runtime.project.compose_tools import framework_source
from eve_runtime.project.info_sources import Sources, connection_info, owner_of
from eve_runtime.project.manifest import (
    AgentManifest,
    ChannelManifest,
    DynamicManifest,
    Manifest,
    SourceInfo,
)
from eve_runtime.project.sources import ROOT_NODE_ID
from eve_runtime.redaction import REDACTOR
from eve_runtime.routes import DEFAULT_ROUTES, MESSAGING

__all__ = ["INFO_VERSION", "NEXT_FIRES", "agent_info", "cli_info", "missing_keys", "next_fire_times"]

INFO_VERSION = 6
NEXT_FIRES = 3
"""How many upcoming fire times `eve info` shows per schedule."""
Mode = Literal["development", "production"]
JSON = dict[str, Any]


def _diagnostics(manifest: Manifest, *, entries: bool = False) -> JSON:
    """Counts as eve reports them (and, for `eve info`, the diagnostics themselves under `entries`)."""
    summary = summarize(manifest.diagnostics)
    data: JSON = {"discoveryErrors": summary.errors, "discoveryWarnings": summary.warnings}
    if entries:
        data["entries"] = [d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in manifest.diagnostics]
    return data


def with_failed_build(info: JSON, failed: Manifest) -> JSON:
    """The info of the serving generation, counting the diagnostics of a newer build that failed (`eve dev`).

    The diagnostics themselves are in `GET /eve/v1/dev/build`.
    """
    return {**info, "diagnostics": _diagnostics(failed)}


def _model(agent: AgentManifest, describe: Sources) -> JSON:
    model = agent.model
    data: JSON
    if model.routing == "dynamic":
        resolver = DynamicManifest(slug="model", event_names=["session.started"], source=agent.config_source)
        data = {"routing": {"kind": "dynamic", "resolver": describe.resolver(resolver)}}
    elif model.routing == "gateway":
        data = {"id": model.id or "", "routing": {"kind": "gateway", "target": model.id or ""}}
    else:  # `external` (a Model instance) and `offline` (the `test` model) are not reached through a gateway
        data = {"id": model.id or "", "routing": {"kind": "external", "provider": model.id or ""}}
    if model.reasoning is not None:
        data["reasoning"] = model.reasoning
    if model.context_window_tokens is not None:
        data["contextWindowTokens"] = model.context_window_tokens
    if model.options:
        data["providerOptions"] = model.options
    return data


def _tools(agent: AgentManifest, describe: Sources) -> JSON:
    static = [
        {
            **describe(tool.source),
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
    return {"static": static, "dynamic": [describe.resolver(r) for r in agent.dynamic_tools]}


def _sandbox(agent: AgentManifest, describe: Sources) -> JSON:
    """The sandbox as eve's schema has it: its source, `provider` and `revisionHash`."""
    sandbox = agent.sandbox
    if sandbox is None:  # its file could not be used (a diagnostic says why): the framework slot is described
        return {**describe(framework_source(agent.node_id, "sandbox.py")), "revisionHash": ""}
    data: JSON = {**describe(sandbox.source)}
    provider = "parent" if sandbox.inherits_parent else sandbox.backend_kind
    if provider is not None:
        data["provider"] = provider
    data["revisionHash"] = sandbox.revision_hash or ""
    return data


def _sandbox_details(agent: AgentManifest) -> JSON:
    """What `eve info` adds to the sandbox: `backendKind`, `hasBootstrap`, `network`, limits, workspace."""
    sandbox = agent.sandbox
    if sandbox is None:
        return {}
    data: JSON = {
        "backendKind": "parent" if sandbox.inherits_parent else sandbox.backend_kind,
        "hasBootstrap": sandbox.has_bootstrap,
        "hasOnSession": False,
        "network": sandbox.network,
    }
    if sandbox.description is not None:
        data["description"] = sandbox.description
    if not sandbox.inherits_parent:
        data["limits"] = {"timeoutSeconds": sandbox.timeout_seconds, "maxOutputBytes": sandbox.max_output_bytes}
        data["environmentKeys"] = sandbox.environment_keys
        data["workspace"] = {"seedFiles": sandbox.seed_files, "skills": sandbox.skills}
    return data


def _subagent(agent: AgentManifest, app_root: str) -> JSON:
    describe = Sources(str(PurePosixPath(app_root) / agent.agent_root))
    return {
        **describe(agent.config_source),
        "name": agent.name,
        "nodeId": agent.node_id,
        "parentNodeId": agent.parent_node_id or ROOT_NODE_ID,
        **({"description": agent.description} if agent.description is not None else {}),
        "entryPath": f"{agent.agent_root}/agent.py",
        "rootPath": agent.agent_root,
        "summary": {
            "channels": 0,
            "connections": len(agent.connections),
            "hooks": len(agent.hooks),
            "instructions": len(agent.instructions) + len(agent.dynamic_instructions),
            "memories": 0,
            "schedules": len(agent.schedules),
            "skills": len(agent.skills) + len(agent.dynamic_skills),
            "tools": len(agent.tools) + len(agent.dynamic_tools),
        },
    }


def _composition_entry(kind: str, source: SourceInfo, winner: str | None) -> JSON:
    entry: JSON = {
        "kind": kind,
        "logicalPath": source.logical_path,
        "owner": owner_of(source),
        "sourceId": source.source_id,
    }
    return {**entry, "winnerSourceId": winner} if winner is not None else entry


def _composition(agent: AgentManifest) -> JSON:
    return {
        "disabled": [_composition_entry("disabled", e.source, None) for e in agent.disabled],
        "shadowed": [_composition_entry("shadowed", e.source, e.winning_source_id) for e in agent.shadowed],
    }


def _eve_channel(agent: AgentManifest) -> ChannelManifest | None:
    return next((c for c in agent.channels if c.kind in ("eve", "disabled")), None)


def _routes(agent: AgentManifest, describe: Sources) -> list[JSON]:
    """The channel routes in the order the server matches them: custom channels first, then eve's."""
    routes = [
        {**describe(c.source), "name": c.name, "method": r.method, "urlPath": r.path, "adapterKind": "custom"}
        for c in sorted(agent.channels, key=lambda c: c.name)
        if c.kind == "custom"
        for r in c.routes
    ]
    eve = _eve_channel(agent)
    if eve is not None and eve.kind == "disabled":
        return routes
    source = eve.source if eve is not None else framework_source(ROOT_NODE_ID, "channels/eve.py")
    routes += [
        {**describe(source), "name": "eve", "method": r.method, "urlPath": r.path, "adapterKind": "http"}
        for r in DEFAULT_ROUTES
    ]
    return routes


def _channels(agent: AgentManifest, describe: Sources) -> JSON:
    """The routes, and the default routes an authored `channels/eve.py` shadows (one entry per route)."""
    eve = _eve_channel(agent)
    shadowed = []
    if eve is not None:
        default = framework_source(ROOT_NODE_ID, "channels/eve.py")
        described = {key: value for key, value in describe(default).items() if key != "sourceKind"}
        source = {
            "backing": described["binding"]["backing"],
            "form": "direct",
            "layer": "framework-default",
            "logicalPath": described["logicalPath"],
            "owner": described["owner"],
            "sourceId": described["sourceId"],
        }
        shadowed = [
            {"method": r.method, "source": source, "urlPath": r.path, "winnerSourceId": eve.source.source_id}
            for r in DEFAULT_ROUTES
        ]
    return {"routes": _routes(agent, describe), "shadowed": shadowed}


def agent_info(manifest: Manifest, *, mode: Mode) -> JSON:
    """The agent-info v6 document of a compiled app (its root agent must exist)."""
    agent = manifest.root
    if agent is None:
        raise ValueError("agent info needs a manifest with a root agent")
    describe = Sources(manifest.agent_root)
    described: JSON = {
        "name": agent.name,
        "nodeId": agent.node_id,
        "agentRoot": manifest.agent_root,
        "appRoot": manifest.app_root,
        "config": describe(agent.config_source),
        "model": _model(agent, describe),
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
        "channels": _channels(agent, describe),
        "composition": _composition(agent),
        "connections": [connection_info(c, describe) for c in agent.connections],
        "diagnostics": _diagnostics(manifest),
        "hooks": [{**describe(h.source), "slug": h.slug, "eventNames": h.event_names} for h in agent.hooks],
        "instructions": {
            "static": [
                {**describe(i.source), "name": i.name, "content": i.content, "role": i.role} for i in agent.instructions
            ],
            "dynamic": [describe.resolver(r) for r in agent.dynamic_instructions],
        },
        "kernelEffects": [],
        "memories": [],
        "remoteAgents": {"entries": [], "total": 0},
        "sandbox": _sandbox(agent, describe),
        "schedules": [
            {
                **describe(s.source),
                "name": s.name,
                "cron": s.cron,
                "hasRun": s.has_run,
                **({"markdown": s.markdown} if s.markdown is not None else {}),
            }
            for s in agent.schedules
        ],
        "skills": {
            "static": [
                {
                    **describe(s.source),
                    "name": s.name,
                    "description": s.description,
                    "markdown": s.markdown,
                    **({"license": s.license} if s.license else {}),
                    **({"metadata": s.metadata} if s.metadata else {}),
                }
                for s in agent.skills
            ],
            "dynamic": [describe.resolver(r) for r in agent.dynamic_skills],
        },
        "subagents": {
            "local": [_subagent(s, manifest.app_root) for s in agent.subagents],
            "total": len(agent.subagents),
        },
        "tools": _tools(agent, describe),
        "workspace": {
            "resourceRoot": {"logicalPath": "workspace-resources/__root__", "rootEntries": []},
            "rootEntries": [],
        },
    }
    return REDACTOR.value(info)  # no secret in `GET /eve/v1/info` or `eve info` (eve_runtime.redaction)


def _cli_extras(info: JSON, agent: AgentManifest) -> None:
    """What `eve info` shows beyond the served document (see the module docstring)."""
    info["agent"]["settings"] = agent.config
    info["tools"]["framework"] = [
        {
            "name": f.name,
            "status": f.status,
            "availability": f.availability,
            **({"reason": f.reason} if f.reason else {}),
        }
        for f in agent.framework_tools
    ]
    info["sandbox"].update(_sandbox_details(agent))
    info["workflow"] = {"enabled": False, "toolName": "Workflow"}
    for schedule, compiled in zip(info["schedules"], agent.schedules, strict=True):
        schedule["missed"] = compiled.missed


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
        else {"kind": "eve-agent-info", "version": INFO_VERSION, "mode": "development"}
    )
    if manifest.root is not None:
        _cli_extras(base, manifest.root)
    base["diagnostics"] = _diagnostics(manifest, entries=True)
    at = time.time() if now is None else now
    for schedule in base.get("schedules", []):
        schedule["nextFireTimes"] = next_fire_times(schedule["cron"], at)
    spec = compiled.root.sandbox if compiled.root is not None else None
    if spec is not None and manifest.root is not None and manifest.root.sandbox is not None:
        from eve_runtime.sandbox.backends import describe_backend  # the JSON only: it brings subprocess

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
    return REDACTOR.value(base)


def missing_keys(agent: AgentManifest | None, env: Mapping[str, str]) -> dict[str, str]:
    """The models of `agent` and its subagents whose provider needs a key not set in `env`: `{model id: variable}`.

    What `eve info`, `eve dev` and `eve start` warn about before the first turn fails on it.
    """
    found: dict[str, str] = {}
    pending = [agent] if agent is not None else []
    while pending:
        current = pending.pop(0)
        model_id = current.model.id
        variable = missing_key(model_id, current.model.options, env) if model_id else None
        if model_id and variable is not None:
            found.setdefault(model_id, variable)
        pending += current.subagents
    return found
