"""Which sandbox a session uses, and the app's workspaces behind them (`ctx.get_sandbox()` ends here).

A session owns its sandbox (its id is the sandbox's), except a child session that shares its
parent's: the built-in `agent` tool's copy of the root agent, and a subagent whose
`sandbox.py` holds `define_parent_sandbox()`. Sharing goes up the chain of parents (a parent
may itself share its own parent's), read from the store once per session and remembered: a
session's parent never changes. The owner's agent, in the build the session runs, says what a
new workspace is made from. Workspaces live in `.eve/sandboxes/` under the app root
(`RuntimeOptions.sandbox_root` overrides it; an agent built in code without an app gets a
temporary folder).
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Protocol

from eve_runtime.authoring.sandbox_session import Sandbox
from eve_runtime.checkpoint import SessionState
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.project.sources import ROOT_NODE_ID
from eve_runtime.sandbox.spec import SandboxSpec
from eve_runtime.sandbox.workspaces import Workspaces
from eve_runtime.sessions.agents import agent_for_node
from eve_runtime.store.base import Store
from eve_runtime.tasks.delegation import AGENT_TOOL, CHILD_PREFIX

__all__ = ["SandboxHost", "SessionSandboxes", "sandbox_root"]

logger = logging.getLogger("eve.sandbox")


class SandboxHost(Protocol):
    """The runtime, as sandboxes need it: the store (who a session's parent is) and the builds."""

    @property
    def store(self) -> Store: ...

    def build_of(self, session_id: str) -> RuntimeAgent:
        """The root agent of the build a session runs here."""
        ...


def sandbox_root(agent: RuntimeAgent, override: Path | None) -> Path:
    """Where the workspaces of an app's sessions live."""
    if override is not None:
        return override
    if agent.app_root is not None:
        return agent.app_root / ".eve" / "sandboxes"
    return Path(tempfile.mkdtemp(prefix="eve-sandboxes-"))


class SessionSandboxes:
    """The `SandboxAccess` port the engine's tool contexts use (see the module docstring)."""

    def __init__(self, host: SandboxHost, root: Path) -> None:
        self.host = host
        self.workspaces = Workspaces(root)
        self._owners: dict[str, tuple[str, str]] = {}

    async def sandbox_for(self, session_id: str, *, node_id: str, parent_session_id: str | None) -> Sandbox:
        owner, owner_node = await self._owner(session_id, node_id, parent_session_id)
        agent = self._agent(owner, owner_node)
        return await self.workspaces.open(owner, agent.sandbox if agent.sandbox is not None else SandboxSpec())

    def _agent(self, session_id: str, node_id: str) -> RuntimeAgent:
        return agent_for_node(self.host.build_of(session_id), node_id)

    def _shares(self, session_id: str, node_id: str) -> bool:
        return node_id == AGENT_TOOL or self._agent(session_id, node_id).sandbox is None

    async def _owner(self, session_id: str, node_id: str, parent_session_id: str | None) -> tuple[str, str]:
        """The session whose sandbox this one uses, and the node id that session runs."""
        known = self._owners.get(session_id)
        if known is not None:
            return known
        owner, owner_node = session_id, node_id
        parent = parent_session_id
        while parent is not None and self._shares(owner, owner_node):
            record = await self.host.store.get_session(parent)
            if record is None:
                logger.warning("session %s shares the sandbox of %s, which is gone: it uses its own", owner, parent)
                break
            owner = parent
            is_child = record.agent.startswith(CHILD_PREFIX)
            owner_node = record.agent.removeprefix(CHILD_PREFIX) if is_child else ROOT_NODE_ID
            parent = await self._parent_of(parent)
        self._owners[session_id] = (owner, owner_node)
        return owner, owner_node

    async def _parent_of(self, session_id: str) -> str | None:
        raw = await self.host.store.load_checkpoint(session_id)
        if raw is None:
            return None
        link = SessionState.model_validate_json(raw).parent
        return link.session_id if link is not None else None

    async def discard(self, session_id: str) -> None:
        """A retired session's own sandbox goes (one it shares with its parent stays)."""
        self._owners.pop(session_id, None)
        if (self.workspaces.root / session_id).exists():  # a session sharing its parent's never has a folder
            await self.workspaces.discard(session_id)

    async def close(self) -> None:
        """The runtime stops: running commands are stopped; the workspaces stay."""
        await self.workspaces.close()
