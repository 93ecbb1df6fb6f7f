"""Between a child session and its parent: results reported up, prompts relayed up, answers sent down.

A child session works for a task of its parent. Everything it tells the parent goes through the
parent's inbox as a `task` delivery with an idempotency key, from an outbox saved in the child's
checkpoint, so a crash between saving and delivering only ever repeats a delivery the parent's
inbox drops:

- when one of its turns ends: the outcome (`completed` with the reply, `failed` with the error,
  `cancelled`) and the usage spent since the last report, which the parent adds to its totals;
- when it parks on a person: its `input.requested`, which the parent shows on its own stream
  (with `taskId` and `callId`) so the person talking to the parent can answer it there;
- when those requests are resolved: the `input.resolved`, which the parent shows too.

Answers to a relayed request that reach the parent are forwarded to the child, which settles
them as its own: `inputResponses` for any of them; plain text only for a question that is the
only relayed request open (like eve, a plain message never answers a relayed approval). The
parent shows an answered question's `input.resolved` as it routes the answer down, after the
`message.received` of a plain-text answer (with its delivery id); a relayed approval stays open
until the child resolves it and relays that.
"""

from __future__ import annotations

import itertools
from typing import Any

from eve_runtime.checkpoint import TaskState
from eve_runtime.events.actions import InputRequested, InputResolved
from eve_runtime.events.catalog import TaskAt, TurnAt
from eve_runtime.events.requests import match_option
from eve_runtime.events.turns import TurnWaiting
from eve_runtime.events.usage import report_wire
from eve_runtime.messages import AssistantMessage, Message
from eve_runtime.store.base import DeliveryRecord, SessionNotActive
from eve_runtime.tasks.ports import TaskSession

__all__ = [
    "apply_relay",
    "forward_answers",
    "notify_parent",
    "relay_now",
    "report_reply",
    "relay_to_parent",
    "report_turn_end",
    "withdraw_relayed",
]


# -- the child's side -------------------------------------------------------------------------


def _post(session: TaskSession, key: str, payload: dict[str, Any]) -> None:
    parent = session.state.parent
    turn = session.state.turn
    if parent is None or turn is None or turn.task_call is None:
        return  # not working for a parent's call (a person talks to the child directly)
    session.state.outbox.append(
        {"key": key, "payload": {"taskId": parent.task_id, "callId": turn.task_call, **payload}}
    )


def relay_to_parent(session: TaskSession, kind: str, data: dict[str, Any]) -> None:
    """Queue an `input.requested` or `input.resolved` of this child for its parent's stream."""
    ids = ",".join(sorted(r["requestId"] for r in data.get("requests", data.get("resolutions", []))))
    _post(session, f"relay:{kind}:{ids}", {"relay": kind, "data": data})


def report_turn_end(session: TaskSession, status: str, history: list[Message], extra: dict[str, Any]) -> None:
    """Queue the outcome of this child's turn (and the usage spent since the last report)."""
    turn = session.turn
    working = session.state.turn
    if session.state.parent is None or working is None or working.task_call is None:
        return  # not working for a parent's call (as `_post` finds): no report, no history to scan
    usage = session.state.usage
    report: dict[str, Any] = {
        "turnId": turn.turn_id,
        "status": status,
        "usage": report_wire(usage, session.state.usage_reported),
    }
    if turn.tool_call is not None:
        report["final"] = True  # a tool task's session ends with its tool
    if status == "completed":
        if "result" in extra:
            report["output"] = extra["result"]
        else:
            messages = itertools.chain(reversed(history), reversed(session.history))
            report["output"] = next((m.content for m in messages if isinstance(m, AssistantMessage) and m.content), "")
    elif "error" in extra:
        report["error"] = extra["error"]
    before = len(session.state.outbox)
    _post(session, f"task:{turn.task_call}:{turn.turn_id}", report)
    if len(session.state.outbox) > before:
        session.state.usage_reported = usage.model_copy()


async def relay_now(session: TaskSession, kind: str, data: dict[str, Any]) -> None:
    """Relay a running tool's question (or its resolution) to the parent at once.

    A tool waits inside a step, where no checkpoint is written, so this does not go through the
    outbox: it is delivered directly, under the same key, and again after a restart (the parent's
    inbox drops the repeat).
    """
    parent = session.state.parent
    turn = session.state.turn
    if parent is None or turn is None or turn.task_call is None:
        return
    ids = ",".join(sorted(r["requestId"] for r in data.get("requests", data.get("resolutions", []))))
    payload = {"taskId": parent.task_id, "callId": turn.task_call, "relay": kind, "data": data}
    try:
        await session.host.deliver(parent.session_id, "task", payload, idempotency_key=f"relay:{kind}:{ids}")
    except SessionNotActive:
        pass


async def report_reply(session: TaskSession, call_id: str, output: Any, *, ended: bool = False) -> None:
    """A served tool settled one call (`ctx.reply`): tell the parent at once (again after a restart: deduplicated).

    With `ended`, the call came after the tool had returned: it fails with `TASK_ENDED`.
    """
    parent = session.state.parent
    if parent is None:
        return
    payload: dict[str, Any] = {"taskId": parent.task_id, "callId": call_id, "status": "completed", "output": output}
    if ended:
        payload = {**payload, "status": "failed", "final": True, "error": {"code": "TASK_ENDED", "message": output}}
    try:
        await session.host.deliver(parent.session_id, "task", payload, idempotency_key=f"task:{call_id}:reply")
    except SessionNotActive:
        pass


async def notify_parent(session: TaskSession) -> None:
    """Deliver the outbox to the parent, in order (its inbox drops a repeat after a crash)."""
    parent = session.state.parent
    if parent is None or not session.state.outbox:
        return
    while session.state.outbox:
        item = session.state.outbox[0]
        try:
            await session.host.deliver(parent.session_id, "task", item["payload"], idempotency_key=item["key"])
        except SessionNotActive:
            pass  # the parent is gone: nobody waits for this
        session.state.outbox.pop(0)
    session.checkpoint_later()


# -- the parent's side ------------------------------------------------------------------------


def apply_relay(session: TaskSession, task: TaskState, payload: dict[str, Any]) -> None:
    """Show a child's relayed `input.requested` / `input.resolved` on this stream."""
    turn = session.state.turn
    if turn is None:
        return
    data = dict(payload.get("data") or {})
    at = TaskAt(task.call_id, turn.sequence, task.task_id, turn.turn_id)
    if payload.get("relay") == "requested":
        requests = [r for r in data.get("requests", []) if isinstance(r, dict) and "requestId" in r]
        task.relayed.update({r["requestId"]: r for r in requests})
        session.emit(InputRequested(at, requests))
    else:
        resolutions = [r for r in data.get("resolutions", []) if r.get("requestId") in task.relayed]
        if not resolutions:
            return
        for resolution in resolutions:
            task.relayed.pop(resolution["requestId"], None)
        session.emit(InputResolved(at, resolutions))
    if any(t.relayed for t in session.state.tasks.values()):
        session.emit(TurnWaiting(TurnAt.of(turn), "input", session.state.usage))


def _relayed(session: TaskSession) -> dict[str, TaskState]:
    return {request_id: task for task in session.state.tasks.values() for request_id in task.relayed}


def relayed_answers(session: TaskSession, delivery: DeliveryRecord) -> list[tuple[TaskState, dict[str, Any]]]:
    """The answers in a delivery to requests relayed from children (see the module docstring)."""
    owners = _relayed(session)
    if not owners:
        return []
    if delivery.kind == "responses":
        items = [i for i in delivery.payload.get("inputResponses", []) if i.get("requestId") in owners]
        return [(owners[i["requestId"]], i) for i in items]
    if delivery.kind == "message" and len(owners) == 1:
        request_id, task = next(iter(owners.items()))
        request = task.relayed[request_id]
        if request.get("kind") != "question":
            return []
        text = str(delivery.payload.get("message", ""))
        option = match_option(request.get("options", []), text)
        if option is not None:
            return [(task, {"requestId": request_id, "optionId": option})]
        if request.get("allowFreeform", True):
            return [(task, {"requestId": request_id, "text": text})]
    return []


async def forward_answers(session: TaskSession, delivery: DeliveryRecord) -> bool:
    """Send a delivery's answers to relayed requests down to their children; whether it held any."""
    answers = relayed_answers(session, delivery)
    by_child: dict[str, list[dict[str, Any]]] = {}
    for task, item in answers:
        by_child.setdefault(task.child_session_id, []).append(item)
    for child, items in by_child.items():
        try:
            await session.host.deliver(
                child, "responses", {"inputResponses": items}, idempotency_key=f"answer:{delivery.id}"
            )
        except SessionNotActive:
            pass  # the child ended: its requests were withdrawn there
    if answers:
        _show_answered_questions(session, delivery, answers)
        await session.commit(consumed=[delivery.id])
    return bool(answers)


def _show_answered_questions(
    session: TaskSession, delivery: DeliveryRecord, answers: list[tuple[TaskState, dict[str, Any]]]
) -> None:
    """`input.resolved` here for the relayed questions a delivery answers (after a plain answer's message)."""
    turn = session.state.turn
    questions = [
        (task, item) for task, item in answers if task.relayed.get(item["requestId"], {}).get("kind") == "question"
    ]
    if turn is None or not questions:
        return
    if delivery.kind == "message":
        session.join_turn(delivery)  # recorded just before the input.resolved it produces
    for task in {id(task): task for task, _item in questions}.values():
        resolutions: list[dict[str, Any]] = []
        for owner, item in questions:
            if owner is not task:
                continue
            response: dict[str, str] = {k: str(item[k]) for k in ("optionId", "text") if k in item}
            dismissed = response.get("optionId") == "dismiss" and "text" not in response
            task.relayed.pop(item["requestId"], None)  # the child's own resolution, relayed later, is not shown again
            resolutions.append(
                {
                    "kind": "question",
                    "outcome": "dismissed" if dismissed else "answered",
                    "requestId": item["requestId"],
                    "response": {"requestId": item["requestId"], **response},
                }
            )
        session.emit(InputResolved(TaskAt(task.call_id, turn.sequence, task.task_id, turn.turn_id), resolutions))
    if any(t.relayed for t in session.state.tasks.values()):
        session.emit(TurnWaiting(TurnAt.of(turn), "input", session.state.usage))


def withdraw_relayed(session: TaskSession, task: TaskState) -> None:
    """A task stops: its relayed requests are resolved `cancelled` here (the child withdraws its own)."""
    turn = session.state.turn
    if not task.relayed or turn is None:
        task.relayed.clear()
        return
    resolutions = [
        {"kind": request.get("kind", "tool-approval"), "outcome": "cancelled", "requestId": request_id}
        for request_id, request in task.relayed.items()
    ]
    task.relayed.clear()
    at = TaskAt(task.call_id, turn.sequence, task.task_id, turn.turn_id)
    session.emit(InputResolved(at, resolutions, withdrawn=True))
