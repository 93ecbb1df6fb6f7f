"""The agents of one build of the app, looked up by session or by node id.

A build is a root agent and the tree of subagents under it. A session runs the root agent, or
(a child session) the agent its task was delegated to, recorded in the session as
`CHILD_PREFIX` + node id; it is looked up in the build the session runs (see
`eve_runtime.engine.handoff`). How long one delegated call may take is the subagent's `timeout`.
"""

from __future__ import annotations

from eve_runtime.authoring.config import DEFAULT_SUBAGENT_TIMEOUT_MS
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.project.sources import ROOT_NODE_ID
from eve_runtime.store.base import SessionRecord
from eve_runtime.tasks.delegation import AGENT_TOOL, CHILD_PREFIX

__all__ = ["agent_for", "agent_for_node", "delegation_timeout"]


def agent_for(root: RuntimeAgent, session: SessionRecord) -> RuntimeAgent:
    """The agent a session runs in the build of `root`: the root agent, or the one a child session was created for."""
    if session.agent.startswith(CHILD_PREFIX):
        return agent_for_node(root, session.agent.removeprefix(CHILD_PREFIX))
    return root


def agent_for_node(root: RuntimeAgent, node_id: str) -> RuntimeAgent:
    """An agent by node id in the build of `root`; `agent` is the built-in copy of the root agent.

    Raises:
        KeyError: No agent of the build has that node id.
    """
    if node_id in (ROOT_NODE_ID, AGENT_TOOL):
        return root
    for candidate in root.walk():
        if candidate.manifest.node_id == node_id:
            return candidate
    raise KeyError(f"no agent {node_id!r} in this app")


def delegation_timeout(agent: RuntimeAgent) -> float | None:
    """Seconds one delegated call to `agent` may take (its `timeout`, 2 hours by default; None: no limit)."""
    timeout = agent.config.timeout
    if timeout is False:
        return None
    return (timeout if timeout is not None else DEFAULT_SUBAGENT_TIMEOUT_MS) / 1000
