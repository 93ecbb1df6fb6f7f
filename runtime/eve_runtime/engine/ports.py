"""The engine's ports: what its helpers see of the session actor, and of the runtime that hosts it.

Helpers (the turn runner, parking, recovery, compaction, workflow tools, ...) take a
[`Session`][eve_runtime.engine.ports.Session], never the actor itself; the actor's own loop takes
an [`ActorLoop`][eve_runtime.engine.ports.ActorLoop]. `SessionActor` and `Runtime` satisfy these
Protocols without inheriting from them. Every member is read-only: a helper changes the session
through the methods, never by setting its fields.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Literal, Protocol

from eve_runtime.authoring.connection_access import ConnectionAccess
from eve_runtime.authoring.sandbox_session import SandboxAccess
from eve_runtime.authoring.state import SessionValues
from eve_runtime.engine.held import CodePins, DynamicTools, LoadedSession
from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.engine.inbox import Inbox
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.messages import Message
from eve_runtime.models.base import Finish, Model
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryRecord, SessionHandoff, SessionRecord, SessionStatus, Store
from eve_runtime.tasks.ports import Handled, TaskHost, TaskSession

__all__ = ["ActorHost", "ActorLoop", "Handled", "Host", "LeaseHolder", "Session"]


class Host(TaskHost, Protocol):
    """The runtime, as a session's helpers use it."""

    @property
    def options(self) -> RuntimeOptions: ...

    @property
    def principal_id(self) -> str:
        """Who answers prompts through this server."""
        ...

    @property
    def mode(self) -> Literal["development", "production"]:
        """`development` under `eve dev` (where eve records prompts and outputs on spans by default)."""
        ...

    @property
    def tool_executor(self) -> Executor:
        """Where sync tools and steps run."""
        ...

    @property
    def hooks(self) -> HookDispatcher: ...

    @property
    def connections(self) -> ConnectionAccess:
        """The agent's MCP and OpenAPI connections (what connection tools call)."""
        ...

    @property
    def sandboxes(self) -> SandboxAccess:
        """The sessions' sandboxes (what `ctx.get_sandbox()` reaches)."""
        ...

    def model(self, model_id: str) -> Model:
        """The model for an id."""
        ...

    def runtime_info(self, agent: RuntimeAgent | None = None) -> dict[str, Any]:
        """`session.started.data.runtime` for a session of `agent`."""
        ...

    def schedule_wake(self, session_id: str, at: float) -> None:
        """Wake the session's actor at `at`."""
        ...

    def acknowledge(self, delivery_id: str) -> None:
        """A delivery someone waits for (a reset) was handled."""
        ...


class LeaseHolder(Protocol):
    """The leases of this process, when many share the store (`eve_runtime.sessions.ownership`)."""

    async def run(self, actor: ActorLoop, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` for the actor while holding its session's lease."""
        ...


class ActorHost(Host, Protocol):
    """The runtime, as the session actor itself uses it (its builds, its store, its leases)."""

    @property
    def store(self) -> Store: ...

    @property
    def agent(self) -> RuntimeAgent:
        """The root agent of the newest build."""
        ...

    @property
    def pins(self) -> CodePins:
        """The build each busy session stays on (see `eve_runtime.engine.handoff`)."""
        ...

    @property
    def ownership(self) -> LeaseHolder | None: ...

    def agent_for(self, session: SessionRecord, root: RuntimeAgent | None = None) -> RuntimeAgent:
        """The agent a session runs in the build of `root`."""
        ...

    def remember(self, session_id: str, loaded: LoadedSession) -> None:
        """Keep a session an actor just left loaded, for its next turn."""
        ...


class Session(TaskSession, Protocol):
    """A session actor, as the engine's helpers see it."""

    @property
    def host(self) -> Host: ...

    @property
    def session(self) -> SessionRecord: ...

    @property
    def base_agent(self) -> RuntimeAgent:
        """The session's agent in its build, before dynamic tools."""
        ...

    @property
    def is_root(self) -> bool:
        """Not a child session (a child never offers the built-in `agent` tool)."""
        ...

    @property
    def dynamic_tools(self) -> DynamicTools:
        """The tools `define_dynamic` resolvers returned for the session and its turn."""
        ...

    @property
    def values(self) -> SessionValues:
        """The session's `define_state` values, as tools see them."""
        ...

    @property
    def stopping(self) -> bool:
        """The runtime stops: the turn stops at its next step boundary."""
        ...

    def emit_waiting(self) -> None:
        """`session.waiting`: the session is idle until the next message."""
        ...

    def hurry(self) -> None:
        """Write what was emitted so far at once, without waiting for it (a network model call starts)."""
        ...

    async def settle(self, *, now: bool = False) -> None:
        """Wait until the deltas emitted so far are durable, if a stream reader waits for them now (see `Emitter`)."""
        ...

    def add_usage(self, finish: Finish) -> None:
        """Count a finished model call in the session's totals."""
        ...

    async def model_for_step(self, step_index: int) -> tuple[Model, str]:
        """The model of the turn's next call, and the id `step.started` reports."""
        ...

    async def commit(
        self,
        *,
        history: Sequence[Message] = (),
        consumed: Sequence[str] = (),
        status: SessionStatus | None = None,
        replace_history: bool = False,
    ) -> None:
        """Commit pending events, new history and the checkpoint in one transaction."""
        ...

    async def complete(self, status: SessionStatus, *, consumed: Sequence[str] = ()) -> None:
        """End the session: `session.completed` is its last event."""
        ...

    def own_events(self, delivery_ids: Sequence[str]) -> None:
        """The deliveries that own what is emitted from now on."""
        ...

    async def continue_deliveries(self) -> None:
        """Between turns: what is emitted next is owned by the deliveries of the newest durable event."""
        ...

    async def events_after_checkpoint(self) -> list[dict[str, Any]]:
        """The events an interrupted attempt wrote after the last checkpoint (recovery reads them)."""
        ...

    def use_agent(self, agent: RuntimeAgent) -> None:
        """Offer this agent's tools from now on (the base agent with dynamic tools)."""
        ...

    def reroute(self) -> None:
        """Look at the inbox again: something in the running turn changed what a delivery means."""
        ...


class ActorLoop(Session, Protocol):
    """The session actor, as its own loop sees it: its inbox, its build, its lifecycle."""

    @property
    def host(self) -> ActorHost: ...

    @property
    def inbox(self) -> Inbox: ...

    @property
    def fence(self) -> int | None:
        """The fencing token of the session's lease this actor holds, if any."""
        ...

    def loaded(self) -> LoadedSession:
        """The session as it is now, for the next actor here."""
        ...

    def take_loaded(self) -> LoadedSession | None:
        """What the last actor here left, if this one may reuse it (once)."""
        ...

    def resume(self, loaded: LoadedSession) -> None:
        """Continue from what the last actor here left instead of reading the store."""
        ...

    async def load(self, *, history: bool) -> None:
        """Read the checkpoint (and with `history`, the history and the event count) from the store."""
        ...

    def stop_accepting(self) -> None:
        """The actor decided to end: a delivery arriving now needs a new actor."""
        ...

    def push(self, delivery: DeliveryRecord) -> None:
        """Hand over a delivery that is already durable in the inbox."""
        ...

    def accepts_deliveries(self) -> bool:
        """Whether a delivery pushed now will be handled by this actor."""
        ...

    def seen_deliveries(self) -> frozenset[str]:
        """The deliveries this actor took into its inbox."""
        ...

    def hold_lease(self, fence: int, *, kept: bool = False) -> None:
        """This process holds the session's lease with fencing token `fence` (`kept`: held since the last actor)."""
        ...

    def lose_lease(self) -> None:
        """Another process took the session over: stop at once."""
        ...

    def run_on(self, root: RuntimeAgent) -> bool:
        """Run the build of `root` from now on; whether that changed the build."""
        ...

    async def record_build(self, handoff: SessionHandoff, *, checkpoint: str | None = None) -> None:
        """Record the build the session runs (and its deadline), with `checkpoint` when it moved."""
        ...

    async def close(self) -> None:
        """Wait for the session's last write."""
        ...
