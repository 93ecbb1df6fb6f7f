"""What the runtime holds beside the manifest: the loaded callables and definitions of each agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from eve_runtime.authoring.channels import Channel, EveChannel
from eve_runtime.authoring.config import AgentConfig
from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.hooks import Hook
from eve_runtime.authoring.schedules import Schedule
from eve_runtime.authoring.schema import FunctionSchema
from eve_runtime.authoring.skills import SkillHandle
from eve_runtime.authoring.tools import ToolOptions
from eve_runtime.project.manifest import AgentManifest, SkillManifest, ToolManifest
from eve_runtime.sandbox.spec import SandboxSpec

if TYPE_CHECKING:
    from eve_runtime.authoring.connections import ConnectionDefinition  # compiling an app without any: not imported

__all__ = ["RuntimeAgent", "RuntimeSkill", "RuntimeTool"]

T = TypeVar("T")


@dataclass(frozen=True)
class RuntimeTool:
    """A tool the engine can call: its manifest entry and, for authored tools, the function."""

    manifest: ToolManifest
    function: Callable[..., Any] | None = None
    """None for framework tools (the engine provides them)."""
    schema: FunctionSchema | None = None
    options: ToolOptions = ToolOptions()
    invoke: Callable[[dict[str, Any], Any], Awaitable[Any]] | None = None
    """Framework tools the engine makes per session (connection tools): called with the raw input and the
    `ToolContext`, bypassing `schema`."""
    read_only: bool = False
    """The tool says it changes nothing (what the `auto()` approval policy reads)."""

    @property
    def name(self) -> str:
        return self.manifest.name


@dataclass(frozen=True)
class RuntimeSkill:
    """A skill the engine can load: its manifest entry and the files of its package."""

    manifest: SkillManifest
    files: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    """Every file of the package by path relative to the skill folder, `SKILL.md` included
    (what belongs in the sandbox under `$HOME/.agents/skills/<name>/`)."""

    @property
    def name(self) -> str:
        return self.manifest.name

    def handle(self) -> SkillHandle:
        """What `ctx.get_skill(name)` returns for this skill."""
        return SkillHandle(self.manifest.name, self.files)


@dataclass
class RuntimeAgent:
    """One compiled agent with everything it runs."""

    manifest: AgentManifest
    config: AgentConfig
    tools: dict[str, RuntimeTool] = field(default_factory=dict)
    dynamic_instructions: list[DynamicResolver] = field(default_factory=list)
    dynamic_tools: dict[str, DynamicResolver] = field(default_factory=dict)
    skills: dict[str, RuntimeSkill] = field(default_factory=dict)
    """The agent's skills by name (with a session's dynamic skills, once resolved)."""
    dynamic_skills: dict[str, DynamicResolver] = field(default_factory=dict)
    hooks: dict[str, Hook] = field(default_factory=dict)
    schedules: dict[str, Schedule] = field(default_factory=dict)
    subagents: dict[str, RuntimeAgent] = field(default_factory=dict)
    deployment: str = ""
    """The build this agent belongs to (the app manifest's content hash; empty when not compiled from an app)."""
    state_keys: frozenset[str] | None = None
    """The `define_state` keys the build defines (None: unknown, so a handoff drops none)."""
    channels: dict[str, Channel] = field(default_factory=dict)
    """Custom channels by name (the root agent only)."""
    eve_channel: EveChannel | None = None
    """The authored `channels/eve.py`, replacing the default HTTP channel's auth (or disabling it)."""
    connections: dict[str, ConnectionDefinition] = field(default_factory=dict)
    """The agent's connections by name (their tools are `<name>__<tool>`)."""
    sandbox: SandboxSpec | None = field(default_factory=SandboxSpec)
    """What this agent's workspaces are made from; None: it shares its parent's (`define_parent_sandbox()`)."""
    app_root: Path | None = None
    """The app's folder (its workspaces live in `.eve/sandboxes/` there); None for agents built in code."""
    derived: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """What is computed from this agent on every turn (its tool lists), by key, computed once: a compiled
    agent never changes (dynamic tools and skills make a new one, with nothing derived yet)."""

    @property
    def name(self) -> str:
        return self.manifest.name

    def derive(self, key: Hashable, make: Callable[[], T]) -> T:
        """`make()`, made once for this agent and kept under `key` in `derived`."""
        if key not in self.derived:
            self.derived[key] = make()
        known: T = self.derived[key]
        return known

    def walk(self) -> Iterator[RuntimeAgent]:
        """This agent, then its subagents depth first."""
        yield self
        for child in self.subagents.values():
            yield from child.walk()
