"""Turns parked on a person: raising approval requests and applying what comes back.

When a step's calls need approval, the step ends (`step.completed`), the requests go out
(`input.requested`), and the turn waits (`turn.waiting` with `on: "input"`, no
`session.waiting`). The actor then holds no task: the parked state is in the checkpoint.

While parked, deliveries are applied here, in arrival order:

- `inputResponses` answer requests by id; each answer is `approval.settled`, another
  `turn.waiting` follows while the batch is incomplete, and the complete batch is one
  `input.resolved`; denied calls are rejected at once, approved ones run first thing in the
  next step. An answer naming no option is `invalid` (no `approval.settled`; the call is
  rejected). Answers that name no open request withdraw the open ones (`ignored`) and reach the
  model as text that authorizes nothing, at once (in eve's way, without their delivery id on
  the events); while a session-limit prompt is open they wait for the turn to end instead.
- a plain message that names an option of the first open request (id, label or number) answers
  it; any other message withdraws the open requests (`ignored`, calls rejected; those events
  carry the old and the new delivery id) and steers the turn, which goes on with the message.
- a message, or answers naming no open request, from someone other than the person the turn
  serves waits for the turn to end (`TurnState.serves`): it neither answers nor
  withdraws anything. Structured answers to open requests count from anyone, and
  `approval.settled.responderPrincipalId` names who gave them.
- a cancel withdraws them (`cancelled`), then `turn.cancelled` and `session.waiting`.
- a clear withdraws them too (`cancelled`: the history that raised them is going), ends the turn
  (`turn.cancelled`), then clears: `context.cleared` and `session.waiting`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from eve_runtime.authoring.approval import ApprovalCheck, Decision, decide
from eve_runtime.checkpoint import Awaiting, CallRecord, PendingRequest, principal_of
from eve_runtime.crashpoints import armed, crashpoint
from eve_runtime.engine.authorization import (
    AUTHORIZED,
    DECLINED,
    authorization_requests,
    settle_authorization,
    sign_ins,
)
from eve_runtime.engine.clearing import clear_context
from eve_runtime.engine.connection_tools import connection_tool, tool_info
from eve_runtime.engine.limits import Exceeded, grant, limit_request
from eve_runtime.engine.ports import Handled, Session
from eve_runtime.events.actions import ActionResult, ApprovalSettled, InputRequested, InputResolved
from eve_runtime.events.catalog import StepAt, TurnAt
from eve_runtime.events.requests import APPROVE, NEGATIVE_OPTIONS, approval_request, match_option, new_request_id
from eve_runtime.events.turns import TurnWaiting
from eve_runtime.messages import Message, ToolCall, ToolMessage
from eve_runtime.outcomes import ToolOutcome, cancelled_outcome, refused_outcome
from eve_runtime.store.base import DeliveryRecord
from eve_runtime.tasks.relay import relay_to_parent

__all__ = ["SIGN_IN_ONLY", "decide_calls", "handle_while_parked", "park_for_approval", "park_for_limit"]

SIGN_IN_ONLY = "sign-in"
"""The reason of a `user-approval` decision for a call that needs no approval, only a connection's sign-in."""


async def decide_calls(session: Session, calls: Sequence[ToolCall]) -> dict[str, tuple[Decision, str | None]]:
    """Each call's approval decision (a policy that fails refuses its call, with the reason)."""
    decisions: dict[str, tuple[Decision, str | None]] = {}
    approved = frozenset(session.state.approved_tools)
    for call in calls:
        tool = session.agent.tools.get(call.name)
        if tool is None:
            tool = connection_tool(session, call.name, await tool_info(session, call.name))
        policy = tool.options.needs_approval if tool is not None else False
        read_only = tool is not None and tool.read_only
        check = ApprovalCheck(call.name, call.arguments, call.id, session.session_id, approved, read_only=read_only)
        try:
            decisions[call.id] = await decide(policy, check)
        except Exception as exc:  # a broken policy must not run the tool unchecked
            decisions[call.id] = ("denied", f"The approval policy of {call.name} failed: {type(exc).__name__}: {exc}")
        if decisions[call.id][0] in ("not-applicable", "approved") and await sign_ins(session, call):
            decisions[call.id] = ("user-approval", SIGN_IN_ONLY)
    return decisions


async def park_for_limit(session: Session, step_index: int, exceeded: Exceeded) -> None:
    """Ask a person whether the session may go past a budget, and park the turn (durably)."""
    turn = session.turn
    request = limit_request(session.session_id, exceeded)
    pending = PendingRequest(request_id=request["requestId"], kind="session-limit", request=request)
    session.emit(InputRequested(StepAt.of(turn, step_index), [request]))
    relay_to_parent(session, "requested", {"requests": [request]})
    turn.awaiting = Awaiting(step_index=step_index, requests=[pending])
    _emit_waiting(session)
    await session.commit()


async def park_for_approval(
    session: Session,
    step_index: int,
    asking: Sequence[ToolCall],
    history: Sequence[Message],
    decisions: dict[str, tuple[Decision, str | None]] | None = None,
) -> None:
    """Raise the approval and sign-in requests of a step and park the turn (durably)."""
    turn = session.turn
    requests = []
    for call in asking:
        if decisions is not None and decisions[call.id][1] == SIGN_IN_ONLY:
            continue
        request_id = new_request_id()
        requests.append(
            PendingRequest(
                request_id=request_id,
                kind="tool-approval",
                request=approval_request(request_id, call.id, call.name, call.arguments),
                call=CallRecord(id=call.id, name=call.name, arguments=call.arguments),
            )
        )
    # Asked before anything is emitted: with no wait between the requests and the commit below,
    # `input.requested` is never durable ahead of the park (recovery re-parks it if it were).
    needed = {call.id: await sign_ins(session, call) for call in asking}
    if requests:
        session.emit(InputRequested(StepAt.of(turn, step_index), [r.request for r in requests]))
        relay_to_parent(session, "requested", {"requests": [r.request for r in requests]})
        if armed("after-input-requested"):  # the crash tests' moment: the requests durable, the park not
            await session.flush()
            crashpoint("after-input-requested")
    requests += authorization_requests(session, StepAt.of(turn, step_index), asking, needed)
    turn.awaiting = Awaiting(step_index=step_index, requests=requests)
    _emit_waiting(session)
    await session.commit(history=history)


def _emit_waiting(session: Session) -> None:
    session.emit(TurnWaiting(TurnAt.of(session.turn), "input", session.state.usage))


def _open(awaiting: Awaiting) -> list[PendingRequest]:
    return [r for r in awaiting.requests if r.option_id is None]


async def handle_while_parked(session: Session, delivery: DeliveryRecord) -> Handled:
    """Apply one delivery to the parked turn (see the module docstring)."""
    turn = session.turn
    awaiting = turn.awaiting
    assert awaiting is not None
    if delivery.kind == "responses":
        pending = {r.request_id: r for r in _open(awaiting)}
        answers = [item for item in delivery.payload.get("inputResponses", []) if item.get("requestId") in pending]
        if not answers:
            if _open(awaiting)[0].kind == "session-limit" or not turn.serves(delivery.payload):
                return "deferred"  # stale: it reaches the model as text once the turn is over
            return await _steer(session, delivery)  # answers to no open request withdraw the open ones
        for item in answers:
            _answer(session, pending[item["requestId"]], item, responder(session, delivery))
        return await _after_answers(session, [delivery.id])
    if delivery.kind == "message":
        if not turn.serves(delivery.payload):
            return "deferred"  # another person's message waits for the turn, whatever it says
        first = _open(awaiting)[0]
        option = match_option(first.request.get("options", []), str(delivery.payload.get("message", "")))
        if option is not None:
            _answer(session, first, {"requestId": first.request_id, "optionId": option}, responder(session, delivery))
            return await _after_answers(session, [delivery.id])
        if first.kind == "session-limit":
            return "deferred"  # neither continue nor stop: it waits, and the prompt stays
        session.own_events([*session.turn.delivery_ids, delivery.id])  # the withdrawal is the new message's too
        return await _steer(session, delivery)
    if delivery.kind in ("cancel", "reset"):
        if session.names_another_turn(delivery):
            await session.commit(consumed=[delivery.id])
            return "parked"
        history, _ = await _resolve(session, withdraw="cancelled")
        await session.end_turn_cancelled(history=history, cancel=delivery if delivery.kind == "cancel" else None)
        return "ended"
    if delivery.kind == "clear":
        await _resolve(session, withdraw="cancelled")
        await session.end_turn_cancelled(history=[], cancel=None, waiting=False)
        await clear_context(session, delivery)
        return "ended"
    return "deferred"


async def _steer(session: Session, delivery: DeliveryRecord) -> Handled:
    """Withdraw the open requests (`ignored`) and go on with the delivery as the next thing the model reads."""
    await _resolve(session, withdraw="ignored")
    session.checkpoint_later(history=[session.join_turn(delivery)], consumed=[delivery.id])
    return "resumed"


def responder(session: Session, delivery: DeliveryRecord) -> str:
    """Who answered with a delivery: its principal, else the server's person (`local-dev`, `token`)."""
    return principal_of(delivery.payload) or session.host.principal_id


def _answer(session: Session, request: PendingRequest, response: dict[str, Any], responder_id: str) -> None:
    """Record one answer; `approval.settled` for it unless it names no option (an invalid answer)."""
    turn = session.turn
    assert turn.awaiting is not None
    option = response.get("optionId") or response.get("text") or ""
    request.option_id = option
    request.response = {
        **({"optionId": option} if option else {}),
        "requestId": request.request_id,
        **({"text": response["text"]} if "text" in response else {}),
    }
    if not option:
        return
    approved = option in (APPROVE, "continue")
    at = StepAt.of(turn, turn.awaiting.step_index)
    if request.kind == "authorization":
        settle_authorization(session, at, request, option)
        return
    session.emit(ApprovalSettled(at, request.request_id, approved, responder_id))


async def _after_answers(session: Session, consumed: list[str]) -> Handled:
    awaiting = session.turn.awaiting
    assert awaiting is not None
    if _open(awaiting):
        _emit_waiting(session)
        await session.commit(consumed=consumed)
        return "parked"
    _, stop = await _resolve(session, withdraw=None)
    if stop:  # a session-limit prompt answered `stop`: the turn ends as a cancel does
        await session.end_turn_cancelled(history=[], cancel=None, consumed=consumed)
        return "ended"
    session.checkpoint_later(consumed=consumed)
    return "resumed"


async def _resolve(session: Session, *, withdraw: Literal["ignored", "cancelled"] | None) -> tuple[list[Message], bool]:
    """Close the batch: `input.resolved`, rejected calls answered, approved ones queued to run.

    Requests still open are withdrawn with `withdraw`. Returns the tool messages a cancel keeps
    (the calls that will never run, answered as cancelled), and whether a session-limit prompt
    was answered `stop`.
    """
    turn = session.turn
    awaiting = turn.awaiting
    assert awaiting is not None
    at = StepAt.of(turn, awaiting.step_index)
    resolutions = []
    refused: list[ToolOutcome] = []
    kept: list[Message] = []
    stop = False
    handled: set[str] = set()
    for request in awaiting.requests:
        resolution: dict[str, Any] = {"kind": request.kind, "requestId": request.request_id}
        if request.kind == "authorization":
            if request.option_id is None:
                settle_authorization(session, at, request, DECLINED)
            _resolve_call(session, request, resolution, withdraw, refused, kept, handled)
            continue
        if request.kind == "session-limit":
            if request.option_id is None:
                resolution["outcome"] = withdraw or "cancelled"
            elif request.option_id == "continue":
                resolution["outcome"] = "approved"
                grant(session.state, session.agent.config.limits, is_root=True)
            else:
                resolution["outcome"] = "denied"
                stop = True
        else:
            _resolve_call(session, request, resolution, withdraw, refused, kept, handled)
        if request.response is not None:
            resolution["response"] = request.response
        resolutions.append(resolution)
    if resolutions:
        session.emit(InputResolved(at, resolutions))
        relay_to_parent(session, "resolved", {"resolutions": resolutions})
    messages: list[Message] = []
    for outcome in refused:
        session.emit(ActionResult(at, outcome))
        messages.append(
            ToolMessage(
                tool_call_id=outcome.call.id, name=outcome.call.name, content=outcome.model_content, is_error=True
            )
        )
    turn.awaiting = None
    if withdraw == "cancelled":
        return [*messages, *kept], stop
    session.checkpoint_later(history=messages)
    return [], stop


def _resolve_call(
    session: Session,
    request: PendingRequest,
    resolution: dict[str, Any],
    withdraw: Literal["ignored", "cancelled"] | None,
    refused: list[ToolOutcome],
    kept: list[Message],
    handled: set[str],
) -> None:
    """The outcome of one tool-approval or sign-in request; a call is answered once, by its first refusal.

    A call with several requests (an approval and sign-ins) runs only when every one is positive.
    """
    assert request.call is not None
    call = ToolCall(id=request.call.id, name=request.call.name, arguments=request.call.arguments)
    if call.id in handled:
        if request.kind == "tool-approval":
            resolution["outcome"] = "ignored" if request.option_id is None else "denied"
        return
    positive = request.option_id == (AUTHORIZED if request.kind == "authorization" else APPROVE)
    if request.option_id is None:
        assert withdraw is not None
        resolution["outcome"] = withdraw
        handled.add(call.id)
        if withdraw == "ignored":
            refused.append(refused_outcome(call, request_id=request.request_id, status="ignored"))
        else:
            kept.append(_cancelled_message(call))
    elif positive:
        resolution["outcome"] = "approved"
        if request.kind == "tool-approval" and request.call.name not in session.state.approved_tools:
            session.state.approved_tools.append(request.call.name)
        if withdraw == "cancelled":  # approved, but the turn ends before it could run
            handled.add(call.id)
            kept.append(_cancelled_message(call))
        elif _all_positive(session, call.id):
            handled.add(call.id)
            session.turn.execute.append(request.call)
    else:
        status: Literal["denied", "invalid"] = "denied" if request.option_id in NEGATIVE_OPTIONS else "invalid"
        resolution["outcome"] = status
        handled.add(call.id)
        refused.append(refused_outcome(call, request_id=request.request_id, status=status))


def _all_positive(session: Session, call_id: str) -> bool:
    awaiting = session.turn.awaiting
    assert awaiting is not None
    return all(
        r.option_id == (AUTHORIZED if r.kind == "authorization" else APPROVE)
        for r in awaiting.requests
        if r.call is not None and r.call.id == call_id
    )


def _cancelled_message(call: ToolCall) -> ToolMessage:
    outcome = cancelled_outcome(call)
    return ToolMessage(tool_call_id=call.id, name=call.name, content=outcome.model_content, is_error=True)
