"""The manifest: everything eve will run, as data (`.eve/compile/manifest.json`).

The compiler produces it from the source graph and the loaded user modules. It holds no code:
the runtime keeps the loaded callables beside it (see `eve_runtime.project.compiler.CompiledApp`). Its
`content_hash` changes whenever anything the agent runs changes, source code included.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eve_runtime.diagnostics import Diagnostic

__all__ = [
    "MANIFEST_VERSION",
    "AgentManifest",
    "ChannelManifest",
    "ChannelRouteManifest",
    "CompositionEntry",
    "ConnectionManifest",
    "DynamicManifest",
    "FrameworkStatus",
    "FrameworkToolStatus",
    "HookManifest",
    "InstructionManifest",
    "Manifest",
    "ModelManifest",
    "Owner",
    "SandboxManifest",
    "ScheduleManifest",
    "SkillManifest",
    "SourceInfo",
    "ToolManifest",
]

MANIFEST_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


Owner = Literal["application", "framework"]
FrameworkStatus = Literal["active", "disabled", "replaced", "off", "denied-by-policy", "not-applicable", "unavailable"]


class SourceInfo(_Model):
    """Where a capability comes from."""

    logical_path: str
    """Relative to its agent's folder (`tools/get_weather.py`), or the framework slot it fills."""
    source_id: str
    """Stable id: `<node id>:<logical path>`."""
    source_kind: Literal["markdown", "module", "skill-package", "framework"]
    owner: Owner
    export_name: str | None = None
    """The module attribute that holds the definition, for module sources."""


class ModelManifest(_Model):
    """The agent's model as configured."""

    id: str | None
    """The model id; None when a dynamic resolver picks it at run time."""
    routing: Literal["gateway", "dynamic", "external", "offline"]
    """`gateway`: a litellm id; `offline`: the `test` model; `external`: a Model instance; `dynamic`: a resolver."""
    reasoning: str | None = None
    context_window_tokens: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class InstructionManifest(_Model):
    """One static instruction block, in composition order."""

    name: str
    content: str
    role: Literal["system", "user"]
    source: SourceInfo


class DynamicManifest(_Model):
    """A `define_dynamic` resolver (its output exists only per session)."""

    slug: str
    event_names: list[str]
    source: SourceInfo


class ToolManifest(_Model):
    """A tool offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    kind: Literal["sync", "async", "generator", "async-generator", "builtin"]
    approval: Literal["never", "always", "policy"] = "never"
    ends_turn: bool = False
    workflow: bool = False
    """Durable: resumed by replaying its journal after a restart."""
    task: bool = False
    """Runs in the background as a task (a receipt now, the result later)."""
    serve: bool = False
    """A task that accepts more calls by `taskId`."""
    has_model_output_projection: bool = False
    context_parameter: str | None = None
    source: SourceInfo

    @property
    def requires_approval(self) -> bool:
        return self.approval != "never"


class FrameworkToolStatus(_Model):
    """What became of one framework tool in this agent."""

    name: str
    status: FrameworkStatus
    """`off`: opt-in and not enabled, or dropped by `default_tools=False`; `unavailable`: this version of eve
    for Python cannot run it yet, so it is not offered."""
    availability: Literal["default", "opt-in"]
    reason: str | None = None
    """Why it is not active (None when it is): what turned it off, or what it needs."""


class SandboxManifest(_Model):
    """The agent's sandbox as defined (the framework default when there is no sandbox file)."""

    inherits_parent: bool = False
    """`define_parent_sandbox()`: the subagent uses the sandbox of the session that delegated to it."""
    backend_kind: str | None = None
    description: str | None = None
    has_bootstrap: bool = False
    network: str = "deny-all"
    timeout_seconds: float | None = None
    max_output_bytes: int | None = None
    environment_keys: list[str] = Field(default_factory=list)
    """The names of the variables commands get (never their values)."""
    seed_files: int = 0
    skills: list[str] = Field(default_factory=list)
    """The skills whose files are placed under `$HOME/.agents/skills/`."""
    revision_hash: str | None = None
    source: SourceInfo


class SkillManifest(_Model):
    """A skill the model can load with `load_skill`."""

    name: str
    description: str
    markdown: str
    license: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    files: list[str] = Field(default_factory=list)
    """Package files, relative to the skill folder."""
    source: SourceInfo


class HookManifest(_Model):
    """A hook and the event types it observes."""

    slug: str
    event_names: list[str]
    source: SourceInfo


class ScheduleManifest(_Model):
    """A cron schedule and what it runs."""

    name: str
    cron: str
    markdown: str | None = None
    has_run: bool = False
    missed: Literal["latest", "skip"] = "latest"
    """Fires missed while no server ran: the latest runs once at start (`latest`), or none (`skip`)."""
    source: SourceInfo


class ChannelRouteManifest(_Model):
    """One route of a channel."""

    method: str
    path: str
    """As eve prints it (`/webhook/{thread}` is `/webhook/:thread`)."""


class ChannelManifest(_Model):
    """An authored channel: a custom one, or `channels/eve.py` replacing (or disabling) the default."""

    name: str
    kind: Literal["custom", "eve", "disabled"]
    routes: list[ChannelRouteManifest] = Field(default_factory=list)
    event_names: list[str] = Field(default_factory=list)
    turn_policy: Literal["steer", "queue"] = "steer"
    has_auth: bool = False
    source: SourceInfo


class ConnectionManifest(_Model):
    """A connection as info shows it: never its credentials, its headers' values or its URL's secrets."""

    connection_name: str
    description: str
    protocol: Literal["mcp", "openapi"]
    transport: Literal["http", "stdio"] = "http"
    url: str
    """The URL without user, password and query; `stdio:<program>` for a stdio server."""
    has_approval: bool
    has_authorization: bool
    has_headers: bool
    tool_filter: dict[str, list[str]] | None = None
    source: SourceInfo


class CompositionEntry(_Model):
    """A source that lost its slot (shadowed, with the winner's id) or that disabled a framework default."""

    slot: str
    source: SourceInfo
    winning_source_id: str | None = None


class AgentManifest(_Model):
    """One agent: the root or a declared subagent."""

    node_id: str
    parent_node_id: str | None = None
    name: str
    description: str | None = None
    agent_root: str
    """The agent's folder relative to the app root (`agent`, `agent/subagents/researcher`)."""
    config_source: SourceInfo
    model: ModelManifest
    config: dict[str, Any]
    """The rest of `define_agent` (limits, compaction, experimental, tool, timeout, ...), defaults applied."""
    output_schema: dict[str, Any] | None = None
    exposed_as_tool: bool = True
    """For a subagent: whether its parent's model gets it as a tool (`tool=True` and no `disable_tool()` file)."""
    instructions: list[InstructionManifest] = Field(default_factory=list)
    dynamic_instructions: list[DynamicManifest] = Field(default_factory=list)
    tools: list[ToolManifest] = Field(default_factory=list)
    dynamic_tools: list[DynamicManifest] = Field(default_factory=list)
    framework_tools: list[FrameworkToolStatus] = Field(default_factory=list)
    skills: list[SkillManifest] = Field(default_factory=list)
    dynamic_skills: list[DynamicManifest] = Field(default_factory=list)
    hooks: list[HookManifest] = Field(default_factory=list)
    schedules: list[ScheduleManifest] = Field(default_factory=list)
    channels: list[ChannelManifest] = Field(default_factory=list)
    connections: list[ConnectionManifest] = Field(default_factory=list)
    sandbox: SandboxManifest | None = None
    subagents: list[AgentManifest] = Field(default_factory=list)
    shadowed: list[CompositionEntry] = Field(default_factory=list)
    disabled: list[CompositionEntry] = Field(default_factory=list)


class Manifest(_Model):
    """The compiled app."""

    kind: Literal["eve-manifest"] = "eve-manifest"
    version: int = MANIFEST_VERSION
    eve_version: str
    app_root: str
    agent_root: str
    status: Literal["ready", "failed"]
    root: AgentManifest | None
    """None when discovery failed so badly that no agent could be described."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    source_digest: str
    """SHA-256 over every file under `agent/` (paths and bytes)."""
    content_hash: str = ""

    def with_hash(self) -> Manifest:
        """A copy whose `content_hash` covers everything else in the manifest."""
        # Absolute paths and diagnostic texts do not make a different agent: moving the app keeps its hash.
        payload = self.model_dump(mode="json", exclude={"content_hash", "app_root", "agent_root", "diagnostics"})
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        return self.model_copy(update={"content_hash": f"sha256:{digest}"})

    def to_json(self) -> str:
        """The manifest file's text."""
        return self.model_dump_json(indent=2) + "\n"
