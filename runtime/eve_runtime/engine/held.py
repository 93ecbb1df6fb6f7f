"""What the engine holds in memory beside the checkpoints, and never writes.

The tools and skills a session's `define_dynamic` resolvers returned (functions and definitions),
the session as an actor leaves it (the next actor in this process reuses it instead of reading the
store), and the build each busy session stays on while this process has it loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eve_runtime.checkpoint import SessionState
from eve_runtime.messages import Message
from eve_runtime.project.runtime_agent import RuntimeAgent, RuntimeSkill, RuntimeTool
from eve_runtime.store.base import SessionRecord

__all__ = ["CodePins", "DynamicTools", "LoadedSession"]


@dataclass
class DynamicTools:
    """What an actor resolved: session-scoped tools and skills (tools None until resolved) and the turn's."""

    session: dict[str, RuntimeTool] | None = None
    turn: dict[str, RuntimeTool] = field(default_factory=dict)
    turn_id: str | None = None
    session_skills: dict[str, RuntimeSkill] = field(default_factory=dict)
    turn_skills: dict[str, RuntimeSkill] = field(default_factory=dict)


@dataclass
class LoadedSession:
    """A session as an actor left it: what the next actor may reuse instead of reading the store."""

    session: SessionRecord
    state: SessionState
    history: list[Message]
    next_index: int
    fence: int | None = None
    """The lease's fencing token when the actor left it (many processes): valid while no other owner came between."""


class CodePins:
    """The build each session last ran on, while this process has it loaded (one per runtime).

    A session is pinned while an actor runs it and while it is parked with work; it is released
    when it goes idle, so a build nothing uses any more can be unloaded.
    """

    def __init__(self) -> None:
        self._roots: dict[str, RuntimeAgent] = {}

    def get(self, session_id: str) -> RuntimeAgent | None:
        """The build the session is pinned to, if any."""
        return self._roots.get(session_id)

    def keep(self, session_id: str, root: RuntimeAgent) -> None:
        """Pin the session to `root` (the root agent of a build)."""
        self._roots[session_id] = root

    def release(self, session_id: str) -> None:
        """The session is idle (or ended): its next delivery may move it."""
        self._roots.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._roots)
