"""The drive API of an eval: `t` ([`EvalContext`][eve_runtime.evals.context.EvalContext]), its sessions and turns.

`t.send(message)` sends a turn on the primary session and waits for it to settle; `t.respond`
answers pending input requests; `t.new_session()` and `t.session(stubs=...)` open more sessions
(with `stubs`, tool stubs replace chosen tool executions). Every session's events feed `t`'s
run-level assertions. `t.check`, `t.require` and `t.judge` grade values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from eve_runtime.client import TurnResult, transcript_of
from eve_runtime.client.parts import Event, InputRequest
from eve_runtime.evals.assertions import Assertion
from eve_runtime.evals.scope import Scope

__all__ = ["Driver", "EvalSession", "RunState", "EvalSkipped", "EvalTurn", "RequirementFailed", "TurnFailed"]

Judge = Callable[[str, dict[str, Any]], Awaitable[tuple[float, str]]]


class Driver(Protocol):
    """What the eval drives sessions through (an `AsyncEveClient`)."""

    async def create(self, message: str | Sequence[Mapping[str, Any]] | None = None, **fields: Any) -> str: ...
    async def send(
        self,
        session_id: str,
        message: str | Sequence[Mapping[str, Any]],
        *,
        output_schema: Mapping[str, Any] | None = None,
    ) -> str: ...
    async def respond(self, session_id: str, responses: Sequence[Mapping[str, Any]]) -> str: ...
    async def event_count(self, session_id: str) -> int: ...
    async def result(self, session_id: str, start_index: int = 0, *, delivery_id: str | None = None) -> TurnResult: ...


class EvalSkipped(Exception):
    """`t.skip(reason)`: the eval is reported as skipped."""


class RequirementFailed(Exception):
    """`t.require(...)` missed: the test stops (the gate is already recorded)."""


class TurnFailed(Exception):
    """`turn.expect_ok()` on a turn that failed."""


class RunState:
    """What one eval collects: assertions, sessions, logs, pending judgments."""

    def __init__(self, driver: Driver, judge: Judge) -> None:
        self.driver = driver
        self.judge = judge
        self.assertions: list[Assertion] = []
        self.sessions: list[EvalSession] = []
        self.logs: list[str] = []
        self.judgments: list[asyncio.Task[None]] = []
        self.last: EvalTurn | None = None

    def record(self, assertion: Assertion) -> Assertion:
        self.assertions.append(assertion)
        return assertion


class EvalTurn(Scope):
    """One settled turn: its reply (`message`), status, events, and the assertions over them."""

    _scope_name = "turn"

    def __init__(self, session: EvalSession, result: TurnResult, prompt: Any) -> None:
        self.session = session
        self.result = result
        self.prompt = prompt

    @property
    def message(self) -> str | None:
        """The turn's final answer."""
        return self.result.reply

    @property
    def output(self) -> Any:
        """The turn's structured output (with an output schema), else None."""
        return self.result.data

    @property
    def session_id(self) -> str:
        """The turn's session."""
        return self.result.session_id

    @property
    def status(self) -> str:
        """`completed`, `failed`, `cancelled` or `waiting-for-input`."""
        return self.result.status

    @property
    def pending(self) -> tuple[InputRequest, ...]:
        """The input requests the turn waits on."""
        return self.result.pending

    def expect_ok(self) -> EvalTurn:
        """Raise (ending the test with an error) when the turn failed; returns the turn."""
        if self.result.status in ("failed", "cancelled"):
            error = self.result.error
            raise TurnFailed(f"the turn {self.result.status}" + (f": {error.code}: {error.message}" if error else ""))
        return self

    def _events(self) -> list[Event]:
        return list(self.result.events)

    def _parked(self) -> bool:
        return self.result.status == "waiting-for-input"

    def _record(self, assertion: Assertion) -> Assertion:
        return self.session.run.record(assertion)


def _answers(responses: Sequence[Any]) -> list[dict[str, Any]]:
    answers = []
    for response in responses:
        if isinstance(response, tuple) and len(response) == 2:
            request, option = response
            request_id = request.request_id if isinstance(request, InputRequest) else str(request)
            answers.append({"requestId": request_id, "optionId": option})
        elif isinstance(response, Mapping):
            answer = {"requestId": response.get("requestId", response.get("request_id"))}
            for wire, snake in (("optionId", "option_id"), ("text", "text")):
                if wire in response or snake in response:
                    answer[wire] = response.get(wire, response.get(snake))
            answers.append(answer)
        else:
            raise TypeError("respond() takes (request, option_id) pairs or {'requestId', 'optionId' | 'text'} dicts")
    return answers


class EvalSession(Scope):
    """One session of the eval (created by its first `send`), with its own assertions."""

    _scope_name = "session"

    def __init__(self, run: RunState, stubs: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.run = run
        self.stubs = [dict(stub) for stub in stubs or []]
        self.session_id: str | None = None
        self.events: list[Event] = []
        self.turns: list[EvalTurn] = []
        run.sessions.append(self)

    async def _settle(self, start: int, delivery_id: str | None, prompt: Any) -> EvalTurn:
        assert self.session_id is not None
        result = await self.run.driver.result(self.session_id, start, delivery_id=delivery_id)
        self.events.extend(result.events)
        turn = EvalTurn(self, result, prompt)
        self.turns.append(turn)
        self.run.last = turn
        return turn

    async def send(
        self, message: str | Sequence[Mapping[str, Any]], *, output_schema: Mapping[str, Any] | None = None
    ) -> EvalTurn:
        """Send a message (the first one creates the session) and wait for the turn to settle.

        With `output_schema`, the turn answers with structured output (`output_equals`, `output_matches`).
        """
        if self.session_id is None:
            fields: dict[str, Any] = {"stubs": self.stubs} if self.stubs else {}
            if output_schema is not None:
                fields["output_schema"] = dict(output_schema)
            self.session_id = await self.run.driver.create(message, **fields)
            return await self._settle(0, None, message)
        start = await self.run.driver.event_count(self.session_id)
        delivery_id = await self.run.driver.send(self.session_id, message, output_schema=output_schema)
        return await self._settle(start, delivery_id, message)

    async def respond(self, *responses: Any) -> EvalTurn:
        """Answer pending requests (`(request, "approve")` pairs or answer dicts); the turn that goes on."""
        if self.session_id is None:
            raise RuntimeError("respond(): the session has no turn yet; send() first")
        start = await self.run.driver.event_count(self.session_id)
        await self.run.driver.respond(self.session_id, _answers(responses))
        prompt = self.turns[-1].prompt if self.turns else None
        return await self._settle(start, None, prompt)

    async def respond_all(self, option_id: str) -> EvalTurn:
        """Answer every pending request with the same option (`approve`, `cancel`, ...)."""
        return await self.respond(*[(request, option_id) for request in self.pending])

    @property
    def pending(self) -> tuple[InputRequest, ...]:
        """The requests the last turn waits on."""
        return self.turns[-1].pending if self.turns else ()

    def expect_input_requests(self, *, tool: str | None = None, count: int | None = None) -> list[InputRequest]:
        """Record a gate that the last turn waits on input (for `tool`; exactly `count`); the requests."""
        picked = [request for request in self.pending if tool is None or request.tool_name == tool]
        ok = bool(picked) and (count is None or len(picked) == count)
        what = f" for {tool}" if tool else ""
        self.run.record(
            Assertion("expect_input_requests", float(ok), f"{len(picked)} pending request(s){what}", scope="session")
        )
        return picked

    @property
    def reply(self) -> str | None:
        """The last answer of this session."""
        for turn in reversed(self.turns):
            if turn.message is not None:
                return turn.message
        return None

    @property
    def transcript(self) -> list[dict[str, str]]:
        """The user and assistant messages in order (`{"role", "text"}`), for the judge."""
        return [{"role": message["role"], "text": message["text"]} for message in transcript_of(self.events)]

    def _events(self) -> list[Event]:
        return self.events

    def _parked(self) -> bool:
        return bool(self.turns) and self.turns[-1].status == "waiting-for-input"

    def _record(self, assertion: Assertion) -> Assertion:
        return self.run.record(assertion)
