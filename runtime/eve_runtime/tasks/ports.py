"""What tasks need of the session they work in, of its turn, and of the runtime: narrow ports.

The session actor (`eve_runtime.engine.actor.SessionActor`), its turn runner and the runtime
(`eve_runtime.sessions.runtime.Runtime`) satisfy these Protocols without inheriting from them;
the engine's own ports (`eve_runtime.engine.ports`) extend them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from eve_runtime.checkpoint import SessionState, TaskState, TurnState
from eve_runtime.events.catalog import StepAt, StreamEvent
from eve_runtime.messages import Message, ToolCall, UserMessage
from eve_runtime.models.base import ToolDefinition
from eve_runtime.outcomes import ToolOutcome
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryKind, DeliveryRecord

__all__ = ["Handled", "TaskHost", "TaskSession", "TaskTurn"]

Handled = Literal["parked", "resumed", "ended", "deferred"]
"""What a delivery did to a parked turn: nothing yet, resumed it, ended it, or must wait for its end."""


class TaskHost(Protocol):
    """The runtime, as tasks use it: child sessions, deliveries to other sessions, cancels, the clock."""

    def now(self) -> float:
        """The runtime's clock (seconds since the epoch)."""
        ...

    def agent_for_node(self, node_id: str, root: RuntimeAgent | None = None) -> RuntimeAgent:
        """An agent by node id in the build of `root` (the newest by default)."""
        ...

    def delegation_timeout(self, node_id: str) -> float | None:
        """Seconds one delegated call to `node_id` may take."""
        ...

    async def session_active(self, session_id: str) -> bool:
        """Whether a session exists and has not ended."""
        ...

    async def create_child(
        self,
        parent_id: str,
        task: TaskState,
        message: str,
        *,
        tool_call: ToolCall | None = None,
        traceparent: str | None = None,
    ) -> str:
        """Create the child session of a new task (in the trace of `traceparent`, if given); returns its id."""
        ...

    async def send_to_child(self, task: TaskState, message: str) -> bool:
        """Give a task's child another message (once); False when it has ended."""
        ...

    async def serve_input(self, task: TaskState, arguments: dict[str, Any]) -> bool:
        """Give a served tool's session the input of the task's current call (once); False when it ended."""
        ...

    async def deliver(
        self, session_id: str, kind: DeliveryKind, payload: dict[str, Any], *, idempotency_key: str | None = None
    ) -> DeliveryRecord:
        """Accept a delivery for another session durably (raises `SessionNotActive` for an ended one)."""
        ...

    async def cancel(self, session_id: str, turn_id: str | None = None) -> bool:
        """Queue a cancel for another session."""
        ...


class TaskSession(Protocol):
    """A session actor, as tasks see it: its state and turn, its writes, and how its turns end."""

    @property
    def session_id(self) -> str: ...

    @property
    def agent(self) -> RuntimeAgent:
        """The session's agent (with this turn's dynamic tools)."""
        ...

    @property
    def root(self) -> RuntimeAgent:
        """The root agent of the build the session runs."""
        ...

    @property
    def state(self) -> SessionState: ...

    @property
    def turn(self) -> TurnState:
        """The turn in progress (only valid while one is)."""
        ...

    @property
    def history(self) -> Sequence[Message]: ...

    @property
    def host(self) -> TaskHost: ...

    def emit(self, event: StreamEvent) -> None:
        """Emit one of the session's events."""
        ...

    async def flush(self) -> None:
        """Wait until every emitted event is durable."""
        ...

    async def commit(self, *, history: Sequence[Message] = (), consumed: Sequence[str] = ()) -> None:
        """Commit pending events, new history and the checkpoint in one transaction."""
        ...

    def checkpoint_later(
        self, *, history: Sequence[Message] = (), consumed: Sequence[str] = (), checkpoint: bool = True
    ) -> None:
        """Save history, consumed deliveries and the checkpoint with the next write, without waiting."""
        ...

    def join_turn(self, delivery: DeliveryRecord) -> UserMessage:
        """A message joins the running turn (`message.received`); returns what the model reads for it."""
        ...

    def names_another_turn(self, delivery: DeliveryRecord) -> bool:
        """A cancel naming a turn other than the running one."""
        ...

    async def end_turn_completed(self, *, history: Sequence[Message], result: Any = None) -> None: ...

    async def end_turn_failed(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None,
        *,
        history: Sequence[Message] = (),
        consumed: Sequence[str] = (),
        terminal: bool = False,
    ) -> None: ...

    async def end_turn_cancelled(
        self,
        *,
        history: Sequence[Message],
        cancel: DeliveryRecord | None,
        consumed: Sequence[str] = (),
        waiting: bool = True,
    ) -> None: ...


class TaskTurn(Protocol):
    """The turn runner, as a step's task calls use it."""

    @property
    def session(self) -> TaskSession: ...

    @property
    def delegation(self) -> dict[str, tuple[str, ToolDefinition]]:
        """The tools that start tasks, by name: `(node id of the agent they delegate to, definition)`."""
        ...

    @property
    def task_results(self) -> list[DeliveryRecord]:
        """Task reports that reached the running turn (applied at the next step boundary)."""
        ...

    @property
    def cancel_requested(self) -> bool: ...

    def step_at(self, step_index: int) -> StepAt:
        """Where a step of this turn is, for its events."""
        ...

    async def run_tools(
        self, calls: Sequence[ToolCall], step_index: int, *, journals: dict[str, list[dict[str, Any]]] | None = None
    ) -> dict[str, ToolOutcome]:
        """Run calls in parallel; a cancel stops them."""
        ...

    async def finish_cancelled(self, history: list[Message]) -> None:
        """End the turn as cancelled."""
        ...
