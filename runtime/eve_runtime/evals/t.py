"""`t`: what an eval's `test(t)` gets ([`EvalContext`][eve_runtime.evals.t.EvalContext]).

`t` drives a primary session (`t.send`, `t.respond`, `t.expect_input_requests`), opens others
(`t.new_session()`, `t.session(stubs=...)`, which also becomes the session `t.send` drives), and
asserts over everything it ran (the scoped assertions of
[`Scope`][eve_runtime.evals.scope.Scope]), over values (`t.check`, `t.require`), and with the
LLM judge (`t.judge`, soft by default; judgments run in the background and the runner waits for them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from eve_runtime.client.parts import Event, InputRequest
from eve_runtime.evals.assertions import Assertion
from eve_runtime.evals.context import Driver, EvalSession, EvalSkipped, EvalTurn, Judge, RequirementFailed, RunState
from eve_runtime.evals.expect import Check
from eve_runtime.evals.scope import Scope

__all__ = ["EvalContext"]


class EvalContext(Scope):
    """The `t` of `async def test(t)`."""

    _scope_name = "run"

    def __init__(self, eval_id: str, driver: Driver, judge: Judge) -> None:
        self.eval_id = eval_id
        self._run = RunState(driver, judge)
        self._current = EvalSession(self._run)

    @property
    def state(self) -> RunState:
        """What the eval collected: assertions, sessions, logs, pending judgments (the runner reads it)."""
        return self._run

    # -- driving ----------------------------------------------------------------------------

    async def send(
        self, message: str | Sequence[Mapping[str, Any]], *, output_schema: Mapping[str, Any] | None = None
    ) -> EvalTurn:
        """Send a message on the current session and wait for the turn to settle (`output_schema`: structured)."""
        return await self._current.send(message, output_schema=output_schema)

    async def respond(self, *responses: Any) -> EvalTurn:
        """Answer pending requests: `(request, "approve")` pairs or `{"requestId", "optionId" | "text"}` dicts."""
        return await self._current.respond(*responses)

    async def respond_all(self, option_id: str) -> EvalTurn:
        """Answer every pending request with one option (`approve`, `cancel`, ...)."""
        return await self._current.respond_all(option_id)

    def expect_input_requests(self, *, tool: str | None = None, count: int | None = None) -> list[InputRequest]:
        """Gate: the last turn waits on input (for `tool`, exactly `count` requests); returns them."""
        return self._current.expect_input_requests(tool=tool, count=count)

    def new_session(self, *, stubs: Sequence[Mapping[str, Any]] | None = None) -> EvalSession:
        """An independent session on the same agent (created by its first `send`)."""
        return EvalSession(self._run, stubs)

    def session(self, *, stubs: Sequence[Mapping[str, Any]] | None = None) -> EvalSession:
        """A new session (with tool `stubs`), which `t.send` drives from now on.

        A stub: `{"id", "tool", "match"?: {arg: JSON Schema}, "outcome" | "outcomes": [{"response": ...} |
        {"throw": {"message", "name"?}}]}`. The first matching rule wins; `outcomes` advance per call.
        """
        self._current = EvalSession(self._run, stubs)
        return self._current

    @property
    def reply(self) -> str | None:
        """The last answer of the turn that settled last."""
        last = self._run.last
        return last.message if last is not None else None

    @property
    def session_id(self) -> str | None:
        """The current session's id (None before its first send)."""
        return self._current.session_id

    @property
    def events(self) -> list[Event]:
        """Every event of every session so far."""
        return [event for session in self._run.sessions for event in session.events]

    def log(self, message: str) -> None:
        """A debug line for the eval's artifact."""
        self._run.logs.append(str(message))

    def skip(self, reason: str) -> None:
        """Stop here and report the eval as skipped."""
        raise EvalSkipped(reason)

    # -- value assertions -------------------------------------------------------------------

    def check(self, value: Any, check: Check) -> Assertion:
        """Grade a value (`includes`, `equals`, `matches`, `similarity`, `satisfies`)."""
        try:
            score, message = check.score(value)
        except Exception as exc:  # a broken predicate is this assertion's error, not the run's
            return self._record(
                Assertion(
                    check.name, 0.0, "could not check", severity=check.severity, error=f"{type(exc).__name__}: {exc}"
                )
            )
        return self._record(Assertion(check.name, score, message, severity=check.severity, scope="value"))

    def require(self, value: Any, check: Check) -> Any:
        """`check` as a gate that stops the test when it misses; the value when it passes."""
        assertion = self.check(value, check).gate()
        if not assertion.passed:
            raise RequirementFailed(assertion.message)
        return value

    def judge(self, criteria: str, *, on: Any = None) -> Assertion:
        """Ask the judge model whether the latest answer (or `on`) meets `criteria`; soft, scored 0-1."""
        last = self._run.last
        state = {"input": last.prompt if last is not None else None, "output": on if on is not None else self.reply}
        assertion = self._record(Assertion("judge", 0.0, "pending", severity="soft", details={"criteria": criteria}))

        async def decide() -> None:
            try:
                assertion.score, reason = await self._run.judge(criteria, state)
                assertion.message = reason or f"score {assertion.score:.2f}"
            except Exception as exc:  # the judge could not judge: an error, which fails the eval
                assertion.error = str(exc)
                assertion.message = "the judge failed"

        self._run.judgments.append(asyncio.ensure_future(decide()))
        return assertion

    # -- the run scope ----------------------------------------------------------------------

    def _events(self) -> list[Event]:
        return self.events

    def _parked(self) -> bool:
        return any(session.turns and session.turns[-1].status == "waiting-for-input" for session in self._run.sessions)

    def _record(self, assertion: Assertion) -> Assertion:
        return self._run.record(assertion)
