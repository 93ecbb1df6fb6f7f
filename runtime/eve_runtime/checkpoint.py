"""A session's checkpoint: where it is, as one small JSON document replaced by each commit.

The checkpoint never repeats the conversation: messages live in the store's history log. It
holds the turn in progress (its ids, next step, turn-scoped inputs), running usage, resolved
dynamic values, and how many events were durable when it was written, so that recovery knows
which events an interrupted attempt left behind.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Awaiting",
    "CallRecord",
    "DynamicValue",
    "ParentLink",
    "PendingRequest",
    "SessionState",
    "TaskState",
    "TurnState",
    "UsageTotals",
    "principal_of",
]

STATE_VERSION = 1


def principal_of(payload: dict[str, Any]) -> str | None:
    """The principal a delivery says it comes from (its `auth.principalId`), if it says one.

    The route that admitted a message writes `auth` (`authenticator`, `principalId`,
    `principalType`), never its body; see `TurnState.serves`.
    """
    auth = payload.get("auth")
    principal = auth.get("principalId") if isinstance(auth, dict) else None
    return principal if isinstance(principal, str) and principal else None


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UsageTotals(_State):
    """Token usage (and cost, when a model reported one) summed over model calls.

    `eve_runtime.events.usage` counts calls into it and turns it into its wire form.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None


class DynamicValue(_State):
    """What a dynamic instructions resolver returned (None: nothing this time)."""

    content: str
    role: Literal["system", "user"] = "system"


class CallRecord(_State):
    """A tool call kept in the checkpoint (approved calls waiting to run)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    journal: list[dict[str, Any]] | None = None
    """For a workflow tool resumed after a restart: what its body already did (replayed, not redone)."""


class PendingRequest(_State):
    """One open request for input (a tool approval), as `input.requested` showed it."""

    request_id: str
    kind: Literal["tool-approval", "session-limit", "authorization"]
    """`authorization`: a connection's sign-in (`authorization.required`), answered `authorized` or `declined`."""
    request: dict[str, Any]
    """The `input.requested` entry, verbatim."""
    call: CallRecord | None = None
    option_id: str | None = None
    """The answer so far (None while unanswered)."""
    response: dict[str, Any] | None = None


class Awaiting(_State):
    """A turn parked on a person: the requests of one step, answered as a batch."""

    step_index: int
    """The step that raised the requests."""
    requests: list[PendingRequest]


class TaskState(_State):
    """A task this session started: a subagent working in a child session."""

    task_id: str
    name: str
    """The tool that started it (the subagent's name, or `agent`)."""
    kind: Literal["agent", "tool"] = "agent"
    node_id: str
    """The agent the child session runs (`subagents/researcher`, `agent` for a copy of this one, or
    for a tool task the node of the agent whose tool it is)."""
    child_session_id: str
    call_id: str
    """The call that gave it its current work."""
    turn_id: str
    status: Literal["working", "idle"] = "working"
    deadline: float | None = None
    """When the current work times out (seconds since the epoch)."""
    relayed: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Requests the child raised that are open on this stream, by request id."""
    ended: bool = False
    """A served tool that returned: it takes no more calls."""
    principal_id: str | None = None
    """Whose turn gave the task its current work: the child's turns run as that person."""


class ParentLink(_State):
    """For a child session: the session and task it works for."""

    session_id: str
    task_id: str
    name: str
    call_id: str
    turn_id: str


class TurnState(_State):
    """The turn in progress."""

    turn_id: str
    sequence: int
    delivery_ids: list[str]
    step_index: int = 0
    """The next model call's index within the turn."""
    user_index: int
    """Position in the history log of the turn's first user message (client context goes before it)."""
    client_context: list[str] = Field(default_factory=list)
    output_schema: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None
    """The turn's trace context (`traceId`, `spanId`, `traceFlags`; see `eve_runtime.telemetry.ids`)."""
    principal_id: str | None = None
    """Who the turn runs as when its message said so (`eve:app` for a schedule's); None: the runtime's person."""
    interruptions: int = 0
    """How many times a crash interrupted one of this turn's steps."""
    model_id: str | None = None
    """The model chosen for this turn by a dynamic resolver (turn.started)."""
    dynamic: dict[str, DynamicValue | None] = Field(default_factory=dict)
    """Turn-scoped dynamic instructions (turn.started resolvers), by resolver slug."""
    awaiting: Awaiting | None = None
    """Set while the turn is parked on a person."""
    execute: list[CallRecord] = Field(default_factory=list)
    """Approved calls to run at the start of the next step."""
    execute_started: bool = False
    """Whether those calls may have started (a crash then answers them as abandoned, never runs them again)."""
    task_call: str | None = None
    """In a child session: the parent's call this turn works for (its report names it)."""
    tool_call: CallRecord | None = None
    """In a tool task's session: the one call the turn runs (no model call)."""
    waiting_on_tasks: bool = False
    """Parked until a task settles (or a message arrives): no turn ends while a task works."""
    wait_call: CallRecord | None = None
    """An `eve__task_wait` call the wait answers."""
    wait_deadline: float | None = None

    def serves(self, payload: dict[str, Any]) -> bool:
        """Whether a delivery (its payload) comes from the person this turn serves, so it may steer it.

        Every message a caller sends carries `auth`, put there by the route that admitted the
        request: the server's own authenticator (`local-dev` under `eve dev`, `token` under
        `eve start`) or the principal an authored channel's auth chain returned. A turn runs as
        the principal of the message that opened it. Only that person steers it: a message from
        anyone else waits for the turn to end (as if sent with `turnPolicy: "queue"`) and does
        not withdraw the turn's open approvals or sign-ins. A delivery or a turn that names
        nobody (one written before principals were recorded, a parent's message to its
        subagent) counts as the turn's own caller's.
        """
        sender = principal_of(payload)
        return sender is None or self.principal_id is None or sender == self.principal_id


class SessionState(_State):
    """The checkpoint document."""

    version: int = STATE_VERSION
    started: bool = False
    """Whether `session.started` was emitted (it is, with the first message)."""
    next_sequence: int = 0
    turn: TurnState | None = None
    usage: UsageTotals = Field(default_factory=UsageTotals)
    event_count: int = 0
    """Events durable when this checkpoint was written; later ones come from an interrupted attempt."""
    history_length: int = 0
    model_id: str | None = None
    """The model chosen for the session by a dynamic resolver (session.started)."""
    dynamic: dict[str, DynamicValue | None] = Field(default_factory=dict)
    """Session-scoped dynamic instructions (session.started resolvers), by resolver slug."""
    approved_tools: list[str] = Field(default_factory=list)
    """Tools a person approved in this session (`once()` allows them afterwards)."""
    connection_tools: list[dict[str, Any]] = Field(default_factory=list)
    """Connection tools `connection_search` found (`connection`, `name`, `description`, `inputSchema`,
    `readOnly`): offered to the model from the next step on."""
    limit_base: dict[str, float] = Field(default_factory=dict)
    """Usage when a person last granted a fresh budget window, per budget (`input`, `output`, `cost`)."""
    tasks: dict[str, TaskState] = Field(default_factory=dict)
    tasks_note: str | None = None
    """The last `[Tasks]` note the model was given (a new one is added when it changes)."""
    parent: ParentLink | None = None
    outbox: list[dict[str, Any]] = Field(default_factory=list)
    """For a child: reports and relayed prompts not yet delivered to the parent (`key`, `payload`)."""
    usage_reported: UsageTotals = Field(default_factory=UsageTotals)
    """The usage already reported to the parent (a child adds only what is new)."""
    values: dict[str, Any] = Field(default_factory=dict)
    """`define_state` values, by name."""
    predecessor: str | None = None
    """The stranded session this one replaced at its channel address (its id)."""
    trace: dict[str, Any] | None = None
    """The session's trace context (`traceId`, `spanId`, `traceFlags`; see `eve_runtime.telemetry.ids`)."""
    user_instructions: dict[str, str] = Field(default_factory=dict)
    """The content of each user-role dynamic instruction last added to history, by `event:slug`
    (one is added again only when its content changed)."""
    session_resolved: bool = False
    """Whether the `session.started` resolvers succeeded (a failed attempt is tried again next turn)."""
    memo: dict[str, Any] = Field(default_factory=dict)
    """`ctx.memo` results of dynamic resolvers, by key (computed once per session)."""
    task_mode: bool = False
    """A task-mode session runs without a person: it cannot ask, so a budget crossed fails the turn."""
    schedule: str | None = None
    """The schedule whose fire started the session (its name), if one did."""
    summary: str | None = None
    """The last compaction's summary: history then opens with it (a user header and the summary)."""
    compacting: bool = False
    """A requested compaction started and has not ended: after a crash it ends without running again."""
