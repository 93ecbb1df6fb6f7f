"""The runtime behind `ToolContext`: questions, sleeps and steps, journaled and replayed.

Each call gets a [`CallHost`][eve_runtime.engine.workflow.CallHost]. What the tool waits for is
written to the session's stream as it happens, and that is the journal:

- `ctx.ask`: `input.requested` (a `question` request carrying the call's `callId`), then the
  turn waits (`turn.waiting` with `on: "input"`); the answer is `input.resolved`;
- `ctx.sleep`: an `action.partial` `{"status": "sleeping", "seconds", "wakeAt"}`;
- `ctx.step`: an `action.partial` `{"status": "step-completed", "step", "output"}`;
- `ctx.reply` (a served tool): `{"status": "replied", "callId", "output"}`, then the next call's
  input `{"status": "received", "callId", "input"}`.

Each is durable before the tool goes on. When a restart interrupts a workflow tool
(`@tool(workflow=True)`), recovery rebuilds its journal from those events
([`journal_from_events`][eve_runtime.engine.workflow.journal_from_events]) and runs the body again:
the host answers the first calls from the journal, in order, without emitting anything, and
only what comes after them runs for real.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from eve_runtime.authoring.context import AbortSignal, AskResult, SleepResult
from eve_runtime.authoring.sandbox_session import Sandbox
from eve_runtime.authoring.skills import SkillHandle
from eve_runtime.engine.ports import Session
from eve_runtime.engine.tool_runner import json_safe
from eve_runtime.events.actions import ActionPartial, InputRequested, InputResolved
from eve_runtime.events.catalog import CallAt, StepAt, TurnAt
from eve_runtime.events.requests import match_option, new_request_id
from eve_runtime.events.turns import TurnWaiting
from eve_runtime.messages import ToolCall
from eve_runtime.project.sources import ROOT_NODE_ID
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.tasks.delegation import CHILD_PREFIX
from eve_runtime.tasks.relay import relay_now, report_reply

__all__ = [
    "CallHost",
    "JournalMismatch",
    "OpenQuestion",
    "QuestionBoard",
    "ServeInbox",
    "answer_of",
    "journal_from_events",
    "session_sandbox",
]


class JournalMismatch(RuntimeError):
    """The tool's body asked for something else than its journal recorded (its code changed)."""


@dataclass
class OpenQuestion:
    """A question a running tool waits on."""

    request: dict[str, Any]
    call_id: str
    future: asyncio.Future[AskResult] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    resolution: dict[str, Any] | None = None
    """How it was resolved (`input.resolved`'s entry), once it was."""

    @property
    def request_id(self) -> str:
        return str(self.request["requestId"])

    def matches(self, text: str) -> dict[str, str] | None:
        """The response plain text gives: an option it names, or free text when allowed."""
        option = match_option(self.request.get("options", []), text)
        if option is not None:
            return {"optionId": option}
        if self.request.get("allowFreeform"):
            return {"text": text}
        return None


class QuestionBoard:
    """The questions a turn's running tools wait on, and the answers that reach them."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.open: dict[str, OpenQuestion] = {}
        self.step_index = 0

    def add(self, request: dict[str, Any], call_id: str) -> OpenQuestion:
        """Wait for an answer to `request` (already on the stream)."""
        question = OpenQuestion(request=request, call_id=call_id)
        self.open[question.request_id] = question
        self.session.reroute()  # an answer may already wait in the inbox (it arrived during a restart)
        return question

    def close(self, request_id: str, outcome: str, response: dict[str, str] | None = None) -> None:
        """Resolve a question: `input.resolved`, and the waiting tool gets its result."""
        question = self.open.pop(request_id, None)
        if question is None:
            return
        resolution: dict[str, Any] = {"kind": "question", "outcome": outcome, "requestId": request_id}
        if response is not None:
            resolution["response"] = {"requestId": request_id, **response}
        at = StepAt.of(self.session.turn, self.step_index).call(question.call_id)
        self.session.emit(InputResolved(at, [resolution]))
        question.resolution = resolution
        if not question.future.done():
            question.future.set_result(answer_of(resolution))

    def answer(self, delivery: DeliveryRecord) -> bool:
        """Apply a delivery that answers open questions; whether it did (it is then consumed)."""
        if not self.open:
            return False
        session = self.session
        if delivery.kind == "responses":
            items = [i for i in delivery.payload.get("inputResponses", []) if i.get("requestId") in self.open]
            for item in items:
                response = {k: str(item[k]) for k in ("optionId", "text") if k in item}
                outcome = "dismissed" if item.get("optionId") == "dismiss" and "text" not in item else "answered"
                self.close(item["requestId"], outcome, response)
            answered = bool(items)
        elif delivery.kind == "message":
            first = next(iter(self.open.values()))
            matched = first.matches(str(delivery.payload.get("message", "")))
            if matched is None:
                return False  # it steers the turn instead
            session.join_turn(delivery)  # recorded just before the input.resolved it produces
            self.close(first.request_id, "answered", matched)
            answered = True
        else:
            return False
        if answered:
            session.checkpoint_later(consumed=[delivery.id], checkpoint=False)  # mid-step: the events are the record
        return answered

    def cancel_all(self) -> None:
        """The turn ends (a cancel): every open question is resolved `cancelled`."""
        for request_id in list(self.open):
            self.close(request_id, "cancelled")


class ServeInbox:
    """The inputs later calls give a served tool (deliveries carrying `serveInput`), in order."""

    def __init__(self) -> None:
        self._items: list[DeliveryRecord] = []
        self._arrived = asyncio.Event()

    def offer(self, delivery: DeliveryRecord) -> bool:
        """Take a delivery that carries a served tool's input; whether it did."""
        if delivery.kind != "message" or "serveInput" not in delivery.payload:
            return False
        self._items.append(delivery)
        self._arrived.set()
        return True

    async def next(self) -> DeliveryRecord:
        """The next input (waiting for it)."""
        while not self._items:
            self._arrived.clear()
            await self._arrived.wait()
        return self._items.pop(0)


def answer_of(resolution: dict[str, Any]) -> AskResult:
    """What `ctx.ask` returns for an `input.resolved` resolution."""
    outcome = resolution.get("outcome")
    if outcome == "answered":
        response = resolution.get("response") or {}
        result: AskResult = {"status": "answered"}
        if "optionId" in response:
            result["optionId"] = str(response["optionId"])
        if "text" in response:
            result["text"] = str(response["text"])
        return result
    return {"status": "dismissed"} if outcome == "dismissed" else {"status": "cancelled"}


def journal_from_events(call_id: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The journal of call `call_id` in these events, in order."""
    entries: list[dict[str, Any]] = []
    asks: dict[str, dict[str, Any]] = {}
    for event in events:
        data = event.get("data", {})
        kind = event.get("type")
        if kind == "action.partial" and data.get("result", {}).get("callId") == call_id:
            output = data["result"].get("output")
            if isinstance(output, dict) and output.get("status") == "sleeping":
                entries.append({"kind": "sleep", "wakeAt": output["wakeAt"]})
            elif isinstance(output, dict) and output.get("status") == "step-completed":
                entries.append({"kind": "step", "output": output.get("output")})
            elif isinstance(output, dict) and output.get("status") == "replied":
                entries.append({"kind": "reply", "callId": output.get("callId"), "output": output.get("output")})
            elif isinstance(output, dict) and output.get("status") == "received":
                entries.append({"kind": "input", "callId": output.get("callId"), "input": output.get("input")})
        elif kind == "input.requested" and data.get("callId") == call_id and "taskId" not in data:
            for request in data.get("requests", []):
                entry = {"kind": "ask", "request": request}
                asks[request["requestId"]] = entry
                entries.append(entry)
        elif kind == "input.resolved":
            for resolution in data.get("resolutions", []):
                if resolution.get("requestId") in asks:
                    asks[resolution["requestId"]]["answer"] = answer_of(resolution)
    return entries


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def _timestamp(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class CallHost:
    """The runtime side of one call's `ToolContext` (see the module docstring)."""

    def __init__(
        self,
        session: Session,
        board: QuestionBoard,
        call: ToolCall,
        at: CallAt,
        abort: AbortSignal,
        journal: list[dict[str, Any]] | None = None,
        inbox: ServeInbox | None = None,
    ) -> None:
        self.session = session
        self.board = board
        self.inbox = inbox
        self.call = call
        self.at = at
        self.abort = abort
        self._journal = list(journal or [])
        self._position = 0

    def _replay(self, kind: str) -> dict[str, Any] | None:
        if self._position >= len(self._journal):
            return None
        entry = self._journal[self._position]
        self._position += 1
        if entry["kind"] != kind:
            raise JournalMismatch(
                f"{self.call.name}: after a restart the tool asked for {kind!r} where its journal recorded "
                f"{entry['kind']!r}; a workflow tool must make the same ctx calls in the same order"
            )
        return entry

    async def _aborted_within(self, waiting: asyncio.Future[Any] | None, timeout: float | None = None) -> bool:
        """Wait until `waiting` is done, the timeout passes, or the abort signal fires; whether it fired first."""
        aborted = asyncio.ensure_future(self.abort.wait())
        try:
            await asyncio.wait(
                {aborted} | ({waiting} if waiting is not None else set()),
                timeout=timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            aborted.cancel()
        return self.abort.aborted and (waiting is None or not waiting.done())

    async def ask(self, request: dict[str, Any]) -> AskResult:
        entry = self._replay("ask")
        if entry is not None and "answer" in entry:
            answer: AskResult = entry["answer"]
            return answer
        session = self.session
        if entry is None:
            if session.state.task_mode:
                return {"status": "unavailable"}  # nobody to ask
            if self.abort.aborted:
                return {"status": "cancelled"}
            full = {"requestId": new_request_id(), "kind": "question", **request}
            session.emit(InputRequested(self.at, [full]))
        else:
            full = entry["request"]  # asked before a restart: the same question waits again, not asked twice
        session.emit(TurnWaiting(TurnAt.of(session.turn), "input", session.state.usage))
        await session.flush()  # the question is durable (and the wait shown) before anyone can answer it
        await relay_now(session, "requested", {"requests": [full]})  # a subagent's person is its parent's
        question = self.board.add(full, self.call.id)
        if await self._aborted_within(question.future):
            self.board.close(question.request_id, "cancelled")  # withdrawn: the turn was steered
        if question.resolution is not None:
            await relay_now(session, "resolved", {"resolutions": [question.resolution]})
        return question.future.result() if question.future.done() else {"status": "cancelled"}

    async def sleep(self, seconds: float) -> SleepResult:
        entry = self._replay("sleep")
        clock = self.session.host.now
        if entry is not None:
            wake_at = _timestamp(entry["wakeAt"])
        else:
            wake_at = clock() + seconds
            output = {"status": "sleeping", "seconds": seconds, "wakeAt": _iso(wake_at)}
            self._journal_partial(output)
            await self.session.flush()
        remaining = wake_at - clock()
        if remaining > 0 and await self._aborted_within(None, timeout=remaining):
            return {"interrupted": True}
        return {"status": "slept"}

    async def step(self, name: str, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        entry = self._replay("step")
        if entry is not None:
            return entry["output"]
        if inspect.iscoroutinefunction(function):
            result = await function(*args)
        else:
            copied = contextvars.copy_context()
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.session.host.tool_executor, lambda: copied.run(function, *args))
        output = json_safe(result)
        self._journal_partial({"status": "step-completed", "step": name, "output": output})
        await self.session.flush()  # journaled before the body goes on
        return output

    def skill(self, name: str) -> SkillHandle | None:
        """A skill of the session's agent, with its package files (`ctx.get_skill`)."""
        found = self.session.agent.skills.get(name)
        return found.handle() if found is not None else None

    async def reply(self, output: Any) -> dict[str, Any]:
        session = self.session
        turn = session.turn
        if self.inbox is None or turn.tool_call is None:
            raise RuntimeError("ctx.reply() works in a tool marked @tool(serve=True), running as a task")
        entry = self._replay("reply")
        value = entry["output"] if entry is not None else json_safe(output)
        call_id = entry["callId"] if entry is not None else turn.task_call
        if entry is None:
            self._journal_partial({"status": "replied", "callId": call_id, "output": value})
            await session.flush()
        await report_reply(session, str(call_id), value)  # again after a restart: the parent drops the repeat
        received = self._replay("input")
        if received is None:
            delivery = await self.inbox.next()
            item = delivery.payload["serveInput"]
            received = {"callId": item["callId"], "input": item.get("arguments", {})}
            self._journal_partial({"status": "received", **received})
            session.checkpoint_later(consumed=[delivery.id], checkpoint=False)  # with its journal entry
            await session.flush()
        turn.task_call = str(received["callId"])  # the turn now works for that call
        result: dict[str, Any] = received["input"]
        return result

    async def get_sandbox(self) -> Sandbox:
        return await session_sandbox(self.session)

    def _journal_partial(self, output: dict[str, Any]) -> None:
        self.session.emit(ActionPartial(self.at, self.call.name, output))


async def session_sandbox(session: Session) -> Sandbox:
    """The session's sandbox: its own, or (for a child that shares it) its parent's."""
    record = session.session.agent
    node_id = record.removeprefix(CHILD_PREFIX) if record.startswith(CHILD_PREFIX) else ROOT_NODE_ID
    parent = session.state.parent
    return await session.host.sandboxes.sandbox_for(
        session.session_id, node_id=node_id, parent_session_id=parent.session_id if parent is not None else None
    )
