"""Fold a session's stream events into the state of its conversation.

```python
conversation = Conversation()
for event in client.stream(session_id):
    conversation.apply(event)
    print(conversation.status, conversation.messages[-1].text if conversation.messages else "")
```

The fold is deterministic: the same events in the same order give the same state, and an event
seen before (same `meta.id`) changes nothing, so reconnects and rewinds are safe. What it keeps:

- `items`: the timeline (user messages, assistant text blocks, reasoning blocks, tool calls);
  `messages`, `reasoning` and `tool_calls` are views of it;
- `pending`: the requests waiting for a person (`input.requested` minus `input.resolved`);
- `tasks`: background work by `taskId`, with the child session of agent tasks;
- `usage`: the session's running total (the newest total a `turn.waiting`, `session.*` event
  reported, plus the steps completed since);
- `status`: `idle`, `running`, `waiting-on-input`, `waiting-on-tasks` or `ended`.

A `context.cleared` event empties the timeline: the state describes the current conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from eve_runtime.client.parts import (
    Event,
    InputRequest,
    Item,
    Message,
    Reasoning,
    Task,
    ToolCall,
    TurnError,
    Usage,
)
from eve_runtime.outcomes import ABANDONED_CODE

__all__ = ["Conversation", "Status"]

Status = Literal["idle", "running", "waiting-on-input", "waiting-on-tasks", "ended"]
_Key = tuple[str | None, int | None]


def _data(event: Event) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def _key(data: dict[str, Any]) -> _Key:
    turn, step = data.get("turnId"), data.get("stepIndex")
    return (turn if isinstance(turn, str) else None, step if isinstance(step, int) else None)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class Conversation:
    """The state of one session's conversation, built event by event with `apply`."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.pending: dict[str, InputRequest] = {}
        """Open requests by `requestId`, in the order they were asked."""
        self.tasks: dict[str, Task] = {}
        self.status: Status = "idle"
        self.turn_id: str | None = None
        """The newest turn."""
        self.turns = 0
        """How many turns started."""
        self.result: Any = None
        """The newest turn's `result.completed` value (output schemas), if any."""
        self.error: TurnError | None = None
        """Why the newest turn failed, if it did."""
        self.event_count = 0
        """How many events were applied (duplicates not counted)."""
        self._calls: dict[str, ToolCall] = {}
        self._open_text: dict[_Key, Message] = {}
        self._open_reasoning: dict[_Key, Reasoning] = {}
        self._total = Usage()
        self._since_total = Usage()
        self._seen: set[str] = set()
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "turn.started": self._turn_started,
            "message.received": self._message_received,
            "step.started": self._step_started,
            "reasoning.appended": self._reasoning_appended,
            "reasoning.completed": self._reasoning_completed,
            "message.appended": self._message_appended,
            "message.completed": self._message_completed,
            "action.input.appended": self._input_appended,
            "actions.requested": self._actions_requested,
            "action.partial": self._action_partial,
            "action.result": self._action_result,
            "input.requested": self._input_requested,
            "input.resolved": self._input_resolved,
            "task.started": self._task_started,
            "task.settled": self._task_settled,
            "agent.started": self._agent_started,
            "result.completed": self._result_completed,
            "context.cleared": self._context_cleared,
            "step.completed": self._step_completed,
            "step.failed": self._step_ended,
            "turn.waiting": self._turn_waiting,
            "turn.completed": self._turn_ended,
            "turn.failed": self._turn_failed,
            "turn.cancelled": self._turn_ended,
            "session.waiting": self._session_waiting,
            "session.completed": self._session_ended,
            "session.failed": self._session_failed,
        }

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> Conversation:
        """The state after applying `events` in order."""
        conversation = cls()
        for event in events:
            conversation.apply(event)
        return conversation

    # -- views ------------------------------------------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """User messages and assistant text blocks, oldest first (reasoning and tool calls left out)."""
        return [item for item in self.items if isinstance(item, Message)]

    @property
    def reasoning(self) -> list[Reasoning]:
        """The reasoning blocks, oldest first."""
        return [item for item in self.items if isinstance(item, Reasoning)]

    @property
    def tool_calls(self) -> dict[str, ToolCall]:
        """The tool calls of the current conversation by `callId`, in the order they appeared."""
        return dict(self._calls)

    @property
    def usage(self) -> Usage:
        """The session's running total: the newest reported total plus the steps completed since."""
        return self._total + self._since_total

    def reply(self, turn_id: str | None = None) -> str | None:
        """The text of the newest completed reply (narration left out), in `turn_id` if given."""
        for item in reversed(self.items):
            if (
                isinstance(item, Message)
                and item.role == "assistant"
                and item.state == "completed"
                and not item.narration
                and (turn_id is None or item.turn_id == turn_id)
            ):
                return item.text
        return None

    # -- folding ----------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Fold one event in. Unknown event types, and events seen before (by `meta.id`), change nothing."""
        meta = event.get("meta")
        event_id = meta.get("id") if isinstance(meta, dict) else None
        if isinstance(event_id, str):
            if event_id in self._seen:
                return
            self._seen.add(event_id)
        self.event_count += 1
        handler = self._handlers.get(str(event.get("type")))
        if handler is not None:
            handler(_data(event))

    def _turn_started(self, data: dict[str, Any]) -> None:
        self.turn_id = _str(data.get("turnId"))
        self.turns += 1
        self.status = "running"
        self.result = None
        self.error = None

    def _message_received(self, data: dict[str, Any]) -> None:
        if data.get("kind") == "task.result":  # v25 streams: a task's result, not something a person wrote
            return
        text = data.get("message")
        self.items.append(Message("user", text if isinstance(text, str) else "", turn_id=_str(data.get("turnId"))))

    def _step_started(self, data: dict[str, Any]) -> None:
        self._interrupt(lambda key: key == _key(data))  # a step running again: its earlier partial output is void
        self.turn_id = _str(data.get("turnId")) or self.turn_id  # a read that started inside a turn
        self.status = "running"

    def _reasoning_appended(self, data: dict[str, Any]) -> None:
        key = _key(data)
        block = self._open_reasoning.get(key)
        if block is None:
            block = self._open_reasoning[key] = Reasoning("", turn_id=key[0], step_index=key[1])
            self.items.append(block)
        block.text += _str(data.get("reasoningDelta")) or ""

    def _reasoning_completed(self, data: dict[str, Any]) -> None:
        key = _key(data)
        block = self._open_reasoning.pop(key, None)
        if block is None:
            block = Reasoning("", turn_id=key[0], step_index=key[1])
            self.items.append(block)
        text = data.get("reasoning")
        block.text = text if isinstance(text, str) else block.text
        block.state = "completed"

    def _message_appended(self, data: dict[str, Any]) -> None:
        key = _key(data)
        block = self._open_text.get(key)
        if block is None:
            block = self._open_text[key] = Message(
                "assistant", "", turn_id=key[0], step_index=key[1], state="streaming"
            )
            self.items.append(block)
        block.text += _str(data.get("messageDelta")) or ""

    def _message_completed(self, data: dict[str, Any]) -> None:
        key = _key(data)
        block = self._open_text.pop(key, None)
        if block is None:
            block = Message("assistant", "", turn_id=key[0], step_index=key[1])
            self.items.append(block)
        text = data.get("message")
        block.text = text if isinstance(text, str) else block.text
        block.state = "completed"
        block.finish_reason = _str(data.get("finishReason"))

    def _call(self, call_id: str, name: str, data: dict[str, Any]) -> ToolCall:
        call = self._calls.get(call_id)
        if call is None:
            turn, step = _key(data)
            call = self._calls[call_id] = ToolCall(call_id, name, turn_id=turn, step_index=step)
            self.items.append(call)
        return call

    def _input_appended(self, data: dict[str, Any]) -> None:
        call_id = _str(data.get("callId"))
        if call_id is not None:
            call = self._call(call_id, _str(data.get("toolName")) or "", data)
            call.input_text += _str(data.get("inputTextDelta")) or ""

    def _actions_requested(self, data: dict[str, Any]) -> None:
        for action in data.get("actions") or []:
            if not isinstance(action, dict) or not isinstance(action.get("callId"), str):
                continue
            kind = _str(action.get("kind")) or "tool-call"
            name = _str(action.get("toolName")) or _str(action.get("name")) or _str(action.get("subagentName")) or kind
            call = self._call(action["callId"], name, data)
            call.name, call.kind, call.state = name, kind, "input-available"
            call.input = action.get("input") if isinstance(action.get("input"), dict) else {}

    def _action_partial(self, data: dict[str, Any]) -> None:
        result = data.get("result")
        if isinstance(result, dict) and isinstance(result.get("callId"), str):
            call = self._call(result["callId"], _str(result.get("toolName")) or "", data)
            call.partial, call.state = result.get("output"), "output-partial"

    def _action_result(self, data: dict[str, Any]) -> None:
        result = data.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("callId"), str):
            return
        name = _str(result.get("toolName")) or _str(result.get("subagentName")) or _str(result.get("name")) or ""
        call = self._call(result["callId"], name, data)
        call.output = result.get("output")
        status = data.get("status")
        call.state = status if status in ("failed", "rejected") else "completed"
        call.error = data["error"] if isinstance(data.get("error"), dict) else None
        if call.error is not None and call.error.get("code") == ABANDONED_CODE:
            call.state = "abandoned"

    def _input_requested(self, data: dict[str, Any]) -> None:
        for entry in data.get("requests") or []:
            if not isinstance(entry, dict):
                continue
            request = InputRequest.from_wire(entry, data)
            self.pending[request.request_id] = request
            call = self._calls.get(request.call_id or "") if request.task_id is None else None
            if call is not None:  # a relayed request's callId belongs to the child session, not to us
                call.approval, call.request_id = "pending", request.request_id
        self.status = "waiting-on-input"

    def _input_resolved(self, data: dict[str, Any]) -> None:
        for resolution in data.get("resolutions") or []:
            if not isinstance(resolution, dict):
                continue
            request = self.pending.pop(str(resolution.get("requestId")), None)
            call = self._calls.get(request.call_id or "") if request is not None and request.task_id is None else None
            if call is not None:
                call.approval = _str(resolution.get("outcome")) or "resolved"

    def _task_started(self, data: dict[str, Any]) -> None:
        task_id = _str(data.get("taskId"))
        if task_id is None:
            return
        task = self.tasks.setdefault(task_id, Task(task_id))
        task.call_id, task.turn_id = _str(data.get("callId")), _str(data.get("turnId"))
        task.name, task.kind = _str(data.get("name")) or task.name, _str(data.get("kind")) or task.kind
        task.status, task.output, task.error = "working", None, None
        call = self._calls.get(task.call_id or "")
        if call is not None:
            call.task_id = task_id

    def _task_settled(self, data: dict[str, Any]) -> None:
        task_id = _str(data.get("taskId"))
        if task_id is None:
            return
        task = self.tasks.setdefault(task_id, Task(task_id, call_id=_str(data.get("callId"))))
        status = data.get("status")
        task.status = status if status in ("completed", "failed", "cancelled") else "completed"
        task.output = data.get("output")
        error = data.get("error") if isinstance(data.get("error"), dict) else data.get("cancel")
        task.error = error if isinstance(error, dict) else None

    def _agent_started(self, data: dict[str, Any]) -> None:
        task_id = _str(data.get("taskId")) or _str(data.get("callId"))
        if task_id is None:
            return
        task = self.tasks.setdefault(
            task_id, Task(task_id, call_id=_str(data.get("callId")), name=_str(data.get("name")), kind="agent")
        )
        task.child_session_id, task.stream_path = _str(data.get("sessionId")), _str(data.get("streamPath"))

    def _result_completed(self, data: dict[str, Any]) -> None:
        self.result = data.get("result")

    def _context_cleared(self, data: dict[str, Any]) -> None:
        self.items.clear()
        self._calls.clear()
        self._open_text.clear()
        self._open_reasoning.clear()

    def _step_completed(self, data: dict[str, Any]) -> None:
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._since_total = self._since_total + Usage.from_wire(usage)
        self._step_ended(data)

    def _step_ended(self, data: dict[str, Any]) -> None:
        self._interrupt(lambda key: key == _key(data))

    def _turn_waiting(self, data: dict[str, Any]) -> None:
        self._take_total(data)
        self.turn_id = _str(data.get("turnId")) or self.turn_id
        self.status = "waiting-on-input" if data.get("on") == "input" else "waiting-on-tasks"

    def _turn_ended(self, data: dict[str, Any]) -> None:
        turn = _str(data.get("turnId"))
        self.turn_id = turn or self.turn_id
        self._interrupt(lambda key: key[0] == turn)
        self.status = "idle"

    def _turn_failed(self, data: dict[str, Any]) -> None:
        self._turn_ended(data)
        self.error = TurnError(
            str(data.get("code", "")), str(data.get("message", "")), terminal=data.get("terminal") is True
        )

    def _session_waiting(self, data: dict[str, Any]) -> None:
        self._take_total(data)
        self.status = "idle"

    def _session_ended(self, data: dict[str, Any]) -> None:
        self._take_total(data)
        self._interrupt(lambda key: True)
        self.status = "ended"

    def _session_failed(self, data: dict[str, Any]) -> None:
        self._session_ended(data)
        self.error = TurnError(str(data.get("code", "")), str(data.get("message", "")), terminal=True)

    def _take_total(self, data: dict[str, Any]) -> None:
        usage = data.get("usage")
        if isinstance(usage, dict):
            self._total, self._since_total = Usage.from_wire(usage), Usage()

    def _interrupt(self, matches: Callable[[_Key], bool]) -> None:
        """Mark the open text and reasoning blocks whose (turn, step) matches as interrupted."""
        for blocks in (self._open_text, self._open_reasoning):
            for key in [key for key in blocks if matches(key)]:
                blocks.pop(key).state = "interrupted"
