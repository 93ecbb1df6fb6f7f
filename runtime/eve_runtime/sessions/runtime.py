"""The runtime: sessions of one compiled agent over one store, in one process.

It accepts deliveries (durably, before anyone is told they were accepted), keeps at most one
actor per session and only while the session has work, recovers every unfinished session when
it starts, fires session timeouts from a single timer, fires schedules (in production), and
stops at step boundaries.

`Runtime` is what the server, the channels and the actors call; the parts behind some of its
methods are modules of their own: creating sessions (`eve_runtime.sessions.creation`) and the
child sessions of tasks (`eve_runtime.sessions.children`), cancel, compact, clear and reset
(`eve_runtime.sessions.controls`), the timeout timer (`eve_runtime.sessions.timeouts`), the schedule timer
(`eve_runtime.sessions.schedules`), the agents of a build (`eve_runtime.sessions.agents`), the tunables.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from eve_runtime._version import __version__
from eve_runtime.authoring.channels import channel_address
from eve_runtime.checkpoint import TaskState
from eve_runtime.connections import ConnectionManager
from eve_runtime.engine.actor import SessionActor
from eve_runtime.engine.channel_events import ChannelEvents
from eve_runtime.engine.held import CodePins, LoadedSession
from eve_runtime.engine.hook_dispatch import HookDispatcher
from eve_runtime.engine.options import RuntimeOptions
from eve_runtime.keyed_locks import KeyedLocks
from eve_runtime.messages import ToolCall
from eve_runtime.models import resolve_model
from eve_runtime.models.base import Model
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.sessions.acceptance import accept
from eve_runtime.sessions.actors import Actors
from eve_runtime.sessions.addresses import AddressSessions
from eve_runtime.sessions.agents import agent_for, agent_for_node, delegation_timeout
from eve_runtime.sessions.availability import Availability, is_descendant, retire_safely
from eve_runtime.sessions.children import create_child, send_to_child, serve_input
from eve_runtime.sessions.controls import Acknowledgements, cancel, control, reset
from eve_runtime.sessions.creation import new_record, open_session
from eve_runtime.sessions.ownership import Ownership
from eve_runtime.sessions.reader import bind_store, unbind_default
from eve_runtime.sessions.sandboxes import SessionSandboxes, sandbox_root
from eve_runtime.sessions.schedules import ScheduleTimer
from eve_runtime.sessions.timeouts import SessionTimeouts
from eve_runtime.store.base import (
    DeliveryKind,
    DeliveryRecord,
    EnqueueResult,
    SessionRecord,
    Store,
)

__all__ = ["Runtime", "RuntimeOptions"]

logger = logging.getLogger("eve.runtime")

Mode = Literal["development", "production"]


class Runtime:
    """Runs the sessions of one agent; see the module docstring."""

    def __init__(
        self,
        agent: RuntimeAgent,
        store: Store,
        *,
        options: RuntimeOptions | None = None,
        mode: Mode = "production",
        models: dict[str, Model] | None = None,
        dormant_before: float | None = None,
    ) -> None:
        self.agent = agent
        self.availability = Availability(dormant_before)
        """Which stored sessions this process runs (dormant and stranded ones it leaves alone)."""
        self.store = store
        self.pins = CodePins()
        """The build each busy session stays on until its work ends (see `eve_runtime.engine.handoff`)."""
        self.options = options or RuntimeOptions()
        self.mode = mode
        self.tool_executor = ThreadPoolExecutor(max_workers=self.options.tool_threads, thread_name_prefix="eve-tool")
        self.retiring = KeyedLocks()
        """Per-session locks under which stranded sessions are retired (once, however many callers race)."""
        self.addresses = AddressSessions(self)
        """Sessions by channel address (what channels send to)."""
        self.hooks = HookDispatcher(
            self.tool_executor,
            self.options.hook_timeout,
            ChannelEvents(store, self.tool_executor, self.options.hook_timeout),
            self._alias_from_channel,
        )
        """Runs the channel event handlers and `agent/hooks/**` for the events sessions emit."""
        self.actors = Actors(self, cached_sessions=self.options.cached_sessions)
        """The session actors of this process."""
        self._models: dict[str, Model] = dict(models or {})
        """Models by id; `models` pre-seeds it (tests put a FunctionModel under the agent's id)."""
        self.timeouts = SessionTimeouts(self.options.clock, self._time_out)
        """Session timeouts and wakes, fired from one timer."""
        self._timer: asyncio.Task[None] | None = None
        self._stopping = False
        self.acknowledgements = Acknowledgements()
        """The deliveries someone waits for (a reset), resolved once handled."""
        self.ownership = None if self.options.lease_seconds is None else Ownership(self, self.options.lease_seconds)
        """This process's leases, when many processes share the store."""
        self.sandboxes = SessionSandboxes(self, sandbox_root(agent, self.options.sandbox_root))
        """The sessions' sandboxes (`ctx.get_sandbox()`), kept in `.eve/sandboxes/` across restarts."""
        self.connections = ConnectionManager(cwd=agent.app_root)
        """The agent's MCP and OpenAPI connections: live links, tool lists, supplied tokens."""
        self.schedules = ScheduleTimer(self)
        """The app's schedules: fired on the clock under `eve start` (never under `eve dev`), and by hand."""

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Recover every unfinished session and start the timeout timer. The store must be open.

        Every active session gets an actor; one with nothing to do ends after reading its checkpoint and inbox.
        """
        bind_store(self.store, default=True)
        if self.ownership is not None:  # before any actor asks for a lease: a dead predecessor's are free now
            await self.ownership.end_dead_siblings()
        stored = await self.store.list_sessions("active")
        sessions = [s for s in stored if self.availability.runs(s)]
        for stranded in [s for s in stored if self.availability.stranded(s)]:
            if is_descendant(stranded):  # recovering it is delivering work to it: it is cancelled
                await retire_safely(self.store, self.retiring, stranded.id)
                continue
            message = "session %s was written by eve %s (this is eve %s): it is stranded and not resumed"
            logger.warning(message, stranded.id, stranded.eve_version or "(none recorded)", __version__)
            self.timeouts.schedule_deadline(stranded)  # its own timer still retires it
        for session in sessions:
            self.timeouts.schedule_deadline(session)
            self.actors.ensure(session)
        if sessions:
            logger.info("checking %d active session(s) for unfinished work", len(sessions))
        self._timer = asyncio.create_task(self.timeouts.run(), name="eve-timeouts")
        if self.ownership is not None:
            self.ownership.start()
        if self.mode == "production":
            self.schedules.start()

    async def stop(self, deadline: float = 10.0) -> None:
        """Stop every actor at its next step boundary, waiting at most `deadline` seconds."""
        self._stopping = True
        if self._timer is not None:
            self._timer.cancel()
        await self.schedules.stop()
        await self.actors.stop(deadline)
        if self.ownership is not None:
            await self.ownership.stop()
        await self.hooks.close(deadline)
        await self.sandboxes.close()
        await self.connections.close()
        unbind_default(self.store)
        self.tool_executor.shutdown(wait=False, cancel_futures=True)
        self.acknowledgements.cancel_all()

    async def abort(self) -> None:
        """Stop at once, as a kill would: nothing finishes, nothing more is written (what crash tests simulate)."""
        self._stopping = True
        self.schedules.abort()
        await self.actors.abort()
        if self._timer is not None:
            self._timer.cancel()
        self.hooks.abort()
        await self.connections.close()
        unbind_default(self.store)
        self.tool_executor.shutdown(wait=False, cancel_futures=True)

    # -- what actors ask -------------------------------------------------------------------------

    def now(self) -> float:
        """The runtime's clock (seconds since the epoch)."""
        return self.options.clock()

    @property
    def principal_id(self) -> str:
        """Who answers prompts through this server (eve reports `local-dev` under `eve dev`)."""
        return "local-dev" if self.mode == "development" else "token"

    def runtime_info(self, agent: RuntimeAgent | None = None) -> dict[str, Any]:
        """`session.started.data.runtime` for a session of `agent` (the root agent by default)."""
        name = (agent or self.agent).name
        return {"agentId": name, "agentName": name, "eveVersion": __version__}

    def model(self, model_id: str) -> Model:
        """The model for an id (created once per runtime)."""
        model = self._models.get(model_id)
        if model is None:
            model = resolve_model(model_id)
            self._models[model_id] = model
        return model

    async def session_active(self, session_id: str) -> bool:
        """Whether a session exists and has not ended."""
        record = await self.store.get_session(session_id)
        return record is not None and record.status == "active"

    def build_of(self, session_id: str) -> RuntimeAgent:
        """The root agent of the build a session runs here (the newest when no actor runs it)."""
        actor = self.actors.get(session_id)
        return actor.root if actor is not None else self.agent

    def acknowledge(self, delivery_id: str) -> None:
        """A delivery someone waits for (a reset) was handled."""
        self.acknowledgements.acknowledge(delivery_id)

    async def _alias_from_channel(self, session_id: str, channel: str, token: str) -> None:
        await self.addresses.alias(session_id, channel_address(channel, token))

    # -- agents and children ------------------------------------------------------------------

    def replace_agent(self, agent: RuntimeAgent) -> None:
        """Serve a new generation of the app (`eve dev`'s reload): idle sessions move to it on their next delivery.

        A session with work (a running turn, a prompt, queued messages, working tasks) finishes
        it on the generation it runs, then moves (see `eve_runtime.engine.handoff`).
        """
        self.agent = agent

    def agent_for(self, session: SessionRecord, root: RuntimeAgent | None = None) -> RuntimeAgent:
        """The agent a session runs in the build of `root`, the newest by default (`eve_runtime.sessions.agents`)."""
        return agent_for(root or self.agent, session)

    def agent_for_node(self, node_id: str, root: RuntimeAgent | None = None) -> RuntimeAgent:
        """An agent by node id in the build of `root`, the newest by default (`agent`: the root agent's copy)."""
        return agent_for_node(root or self.agent, node_id)

    def delegation_timeout(self, node_id: str) -> float | None:
        """Seconds one delegated call to `node_id` may take (its `timeout`, 2 hours by default)."""
        return delegation_timeout(self.agent_for_node(node_id))

    async def create_child(
        self,
        parent_id: str,
        task: TaskState,
        message: str,
        *,
        tool_call: ToolCall | None = None,
        traceparent: str | None = None,
    ) -> str:
        """Create the child session of a new task (see `eve_runtime.sessions.children`); returns its id."""
        return await create_child(self, parent_id, task, message, tool_call=tool_call, traceparent=traceparent)

    async def send_to_child(self, task: TaskState, message: str) -> bool:
        """Give a task's child another message for the task's current call (once); False when it has ended."""
        return await send_to_child(self, task, message)

    async def serve_input(self, task: TaskState, arguments: dict[str, Any]) -> bool:
        """Give a served tool's session the input of the task's current call (once); False when it has ended."""
        return await serve_input(self, task, arguments)

    def schedule_wake(self, session_id: str, at: float) -> None:
        """Wake the session's actor at `at` (a task or a wait timing out)."""
        self.timeouts.schedule(session_id, at)

    # -- sessions --------------------------------------------------------------------------------

    def new_record(self, *, operation_id: str | None = None, agent: RuntimeAgent | None = None) -> SessionRecord:
        """A session record for this agent (or `agent`), with its deadline and build."""
        return new_record(self, operation_id=operation_id, agent=agent)

    async def create_session(
        self,
        *,
        message: dict[str, Any] | None = None,
        operation_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> SessionRecord:
        """Create a session (create-once by `operation_id`), accepting its first message if given."""
        session, _created = await self.open_session(
            message=message, operation_id=operation_id, idempotency_key=idempotency_key
        )
        return session

    async def open_session(
        self,
        *,
        message: dict[str, Any] | None = None,
        operation_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[SessionRecord, bool]:
        """`create_session`, also telling whether the session was created now (False: `operation_id` existed)."""
        return await open_session(self, message=message, operation_id=operation_id, idempotency_key=idempotency_key)

    def look_after(self, session: SessionRecord) -> None:
        """Take on a session just created in the store with its first message: its timeout, an actor."""
        self.timeouts.schedule_deadline(session)
        self.wake(session)

    async def deliver(
        self,
        session_id: str,
        kind: DeliveryKind,
        payload: dict[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> DeliveryRecord:
        """Accept a delivery durably and wake the session.

        Raises:
            SessionNotActive: The session is unknown or has ended.
            SessionDormant, SessionStranded: This process does not run the session.
        """
        return (await self.accept(session_id, kind, payload, idempotency_key=idempotency_key)).delivery

    async def accept(
        self,
        session_id: str,
        kind: DeliveryKind,
        payload: dict[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> EnqueueResult:
        """`deliver`, also telling whether the delivery repeated an earlier idempotency key (`duplicate`).

        Raises:
            SessionNotActive: The session is unknown or has ended (a stranded child's is cancelled, never run).
            SessionDormant, SessionStranded: This process does not run the session.
        """
        return await accept(self, session_id, kind, payload, idempotency_key)

    async def cancel(self, session_id: str, turn_id: str | None = None) -> bool:
        """Queue a cancel; False when the session is unknown or no longer active (`no_active_turn`)."""
        return await cancel(self, session_id, turn_id)

    async def control(self, session_id: str, kind: Literal["compact", "clear"]) -> bool:
        """Queue a compact or a clear; False when the session is unknown or no longer active.

        A stranded or dormant session has nothing to compact here (False) and refuses a clear.

        Raises:
            SessionDormant, SessionStranded: A clear for a session this process does not run.
        """
        return await control(self, session_id, kind)

    async def reset(self, session_id: str, reason: str | None = None, *, timeout: float | None = None) -> bool:
        """Retire a session for good and wait until it is done (see `eve_runtime.sessions.controls.reset`).

        Returns False when there was no active session.
        """
        return await reset(self, session_id, reason, timeout=timeout)

    # -- actors ------------------------------------------------------------------------------

    def runs_here(self, session: SessionRecord) -> bool:
        """Whether this process runs the session now (it is not stopping, and the session is available here)."""
        return not self._stopping and self.availability.runs(session)

    def wake(self, session: SessionRecord) -> None:
        """Make sure an actor will look at the session, if this process runs it."""
        if self.runs_here(session):
            self.actors.ensure(session)  # else the delivery is durable: the next process picks it up

    def actor(self, session_id: str) -> SessionActor | None:
        """The session's actor in this process, if it has one (running or ending)."""
        return self.actors.get(session_id)

    def remember(self, session_id: str, loaded: LoadedSession) -> None:
        """Keep a session an actor just left loaded, for its next turn (see `eve_runtime.sessions.actors`)."""
        self.actors.remember(session_id, loaded)

    # -- timeouts ----------------------------------------------------------------------------

    async def _time_out(self, session_id: str) -> None:
        """A timeout or a wake is due: the actor looks at what is; a stranded session is retired (trigger `timeout`)."""
        session = await self.store.get_session(session_id)
        if session is None or session.status != "active":
            return
        if self.availability.stranded(session):
            if is_descendant(session) or (session.deadline is not None and session.deadline <= self.now()):
                await retire_safely(self.store, self.retiring, session_id, "timeout")
            return
        self.wake(session)
