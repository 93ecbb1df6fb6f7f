"""Running one step's tool calls in parallel, each with its `ToolContext`.

Sync tools run in the runtime's thread pool, async ones as tasks; generator tools stream
`action.partial`. Each result is emitted (`action.result`) as it arrives. A cancel stops the
calls still running (answered as cancelled); a steering message fires their abort signals; and
if the runner itself is cancelled (a stop), no call outlives it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from eve_runtime.authoring.context import AbortSignal, ToolContext, lineage
from eve_runtime.authoring.schema import ToolInputError
from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.connection_tools import connection_tool
from eve_runtime.engine.ports import Session
from eve_runtime.engine.tool_runner import run_tool
from eve_runtime.engine.tool_stubs import stubbed_outcome
from eve_runtime.engine.workflow import CallHost, QuestionBoard, ServeInbox
from eve_runtime.events.actions import ActionPartial, ActionResult
from eve_runtime.events.catalog import StepAt
from eve_runtime.messages import ToolCall
from eve_runtime.outcomes import ToolOutcome, cancelled_outcome, redacted_outcome
from eve_runtime.project.runtime_agent import RuntimeTool

__all__ = ["CallBatch"]


class CallBatch:
    """The calls of one step (or the approved calls run at the start of one), while they run."""

    def __init__(
        self,
        session: Session,
        questions: QuestionBoard,
        serve_inbox: ServeInbox,
        at: StepAt,
    ) -> None:
        self.session = session
        self.questions = questions
        self.serve_inbox = serve_inbox
        self.at = at
        self._aborts: dict[str, AbortSignal] = {}

    def abort(self, reason: str) -> None:
        """Fire the abort signal of every call still running."""
        for signal in self._aborts.values():
            signal.abort(reason)

    def _context(self, call: ToolCall, journal: list[dict[str, Any]] | None) -> ToolContext:
        session = self.session
        turn = session.turn
        parent, predecessor = lineage(session.state)
        abort = AbortSignal()
        self._aborts[call.id] = abort
        return ToolContext(
            session_id=session.session_id,
            turn_id=turn.turn_id,
            sequence=turn.sequence,
            call_id=call.id,
            tool_name=call.name,
            principal_id=turn.principal_id or session.host.principal_id,
            parent=parent,
            predecessor=predecessor,
            abort_signal=abort,
            host=CallHost(session, self.questions, call, self.at.call(call.id), abort, journal, self.serve_inbox),
        )

    def _partial_sink(
        self, call: ToolCall, outcomes: dict[str, ToolOutcome], cancelled: Callable[[], bool]
    ) -> Callable[[Any], None]:
        def sink(value: Any) -> None:
            if call.id in outcomes or cancelled():
                return
            self.session.emit(ActionPartial(self.at.call(call.id), call.name, value))

        return sink

    def _stubbed(self, tool: RuntimeTool | None, call: ToolCall) -> ToolOutcome | None:
        """The call's outcome from the session's tool stubs (eve evals), when a rule answers it.

        The real tool's input schema still applies: an invalid input is the real tool's failure.
        """
        book = self.session.host.options.tool_stubs
        if not book.has(self.session.session_id) or call.invalid_arguments is not None:
            return None
        if tool is not None and tool.schema is not None and tool.invoke is None:
            try:
                tool.schema.validate(call.arguments)
            except ToolInputError:
                return None
        outcome = book.take(self.session.session_id, call)
        return None if outcome is None else redacted_outcome(stubbed_outcome(call, outcome))

    async def run(
        self,
        calls: Sequence[ToolCall],
        journals: dict[str, list[dict[str, Any]]],
        cancel: asyncio.Event,
        cancelled: Callable[[], bool],
    ) -> dict[str, ToolOutcome]:
        """Run the calls until all are done or `cancel` is set; their outcomes by call id.

        `journals` replays workflow tools resumed after a restart.
        """
        session = self.session
        outcomes: dict[str, ToolOutcome] = {}
        if not calls:
            return outcomes
        tasks: dict[asyncio.Task[ToolOutcome], ToolCall] = {}
        for call in calls:
            tool = session.agent.tools.get(call.name) or connection_tool(session, call.name)
            stubbed = self._stubbed(tool, call)
            if stubbed is not None:
                tasks[asyncio.create_task(_ready(stubbed))] = call
                continue
            task = asyncio.create_task(
                run_tool(
                    tool,
                    call,
                    self._context(call, journals.get(call.id)),
                    on_partial=self._partial_sink(call, outcomes, cancelled),
                    executor=session.host.tool_executor,
                    values=session.values,
                )
            )
            tasks[task] = call
        pending: set[asyncio.Task[Any]] = set(tasks)
        watcher: asyncio.Task[Any] = asyncio.create_task(cancel.wait())
        try:
            while pending:
                done, pending = await asyncio.wait(pending | {watcher}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(watcher)
                for finished in done:
                    if finished is watcher:
                        continue
                    call = tasks[finished]
                    outcome: ToolOutcome = finished.result()
                    self._aborts.pop(call.id, None)
                    crashpoint("after-tool-effect")
                    outcomes[call.id] = outcome
                    session.emit(ActionResult(self.at, outcome))
                if watcher in done:
                    for task in pending:
                        task.cancel()
                    for task in pending:
                        outcomes[tasks[task].id] = cancelled_outcome(tasks[task])
                    pending = set()
        finally:
            watcher.cancel()
            for task in tasks:
                task.cancel()  # the runner itself was cancelled (a stop): no tool outlives its turn's runner
            self._aborts.clear()
        return outcomes


async def _ready(outcome: ToolOutcome) -> ToolOutcome:
    return outcome
