"""The source graph: which files of an agent fill which slots, as discovery found them.

Discovery produces it without importing any user code; the compiler loads the module sources
and turns the graph into a manifest. It is written to `.eve/discovery/agent-discovery-manifest.json`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from eve_runtime.diagnostics import Diagnostic

__all__ = ["ROOT_NODE_ID", "AgentSources", "NamedSource", "Source", "SourceGraph", "SourceKind"]

ROOT_NODE_ID = "__root__"

SourceKind = Literal["markdown", "module", "skill-package"]


class Source(BaseModel):
    """One authored file that fills a slot."""

    model_config = ConfigDict(frozen=True)

    logical_path: str
    """Path relative to the agent's root, with `/` separators (`tools/get_weather.py`)."""
    path: Path
    """Absolute path of the file (a package's `__init__.py`, a skill package's `SKILL.md`)."""
    kind: SourceKind


class NamedSource(BaseModel):
    """A source whose slot has a name taken from its path (tools, skills, hooks, schedules)."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: Source


class AgentSources(BaseModel):
    """The sources of one agent: the root agent or a declared subagent."""

    node_id: str
    """`__root__`, or the subagent's path from the root agent (`subagents/researcher`)."""
    parent_node_id: str | None = None
    name: str
    root: Path
    config: Source | None = None
    """`agent.py`, when authored."""
    instructions: list[Source] = Field(default_factory=list)
    """In composition order: the root file first, then `instructions/` entries sorted by name."""
    tools: list[NamedSource] = Field(default_factory=list)
    skills: list[NamedSource] = Field(default_factory=list)
    hooks: list[NamedSource] = Field(default_factory=list)
    schedules: list[NamedSource] = Field(default_factory=list)
    channels: list[NamedSource] = Field(default_factory=list)
    connections: list[NamedSource] = Field(default_factory=list)
    """`connections/<name>.py`: MCP and OpenAPI connections."""
    """`channels/<name>.py` (the root agent only); `channels/eve.py` replaces the default HTTP channel."""
    subagents: list[AgentSources] = Field(default_factory=list)
    has_lib: bool = False
    sandbox: Source | None = None
    """`sandbox.py` or `sandbox/sandbox.py`, when authored."""
    sandbox_workspace: Path | None = None
    """`sandbox/workspace/`: the seed copied into every new workspace."""

    @property
    def is_root(self) -> bool:
        return self.parent_node_id is None


class SourceGraph(BaseModel):
    """Everything discovery found in an app: the root agent's sources and the diagnostics."""

    kind: Literal["eve-discovery"] = "eve-discovery"
    version: int = 1
    app_root: Path
    agent_root: Path
    root: AgentSources
    diagnostics: list[Diagnostic] = Field(default_factory=list)

    def agents(self) -> Iterator[AgentSources]:
        """The root agent, then every subagent, depth first."""
        stack = [self.root]
        while stack:
            node = stack.pop(0)
            yield node
            stack[0:0] = node.subagents
