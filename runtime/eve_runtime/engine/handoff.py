"""Deployment handoff: a session moves to the newest build of the app once it is idle.

Every build of the app has an id, its manifest's content hash (`RuntimeAgent.deployment`), and
every session records the build it runs on (`SessionRecord.deployment`). A newer build arrives
in two ways: `eve dev` loads a new generation in the same process, or the app is redeployed and
`eve start` runs again with changed code. Either way:

- **An idle session moves on its next message, answer, compact or clear** (a cancel or a reset
  does not move it: the session is not about to run code of the new build): the actor
  that takes the delivery runs the newest build. The move keeps the session's id, stream,
  history, usage and state, drops the `define_state` keys the new build does not define (each
  one logged), restarts the session timeout for its full duration, and records the new build,
  all in one commit, before the delivery is handled. Deliveries arriving meanwhile wait in the
  durable inbox and are handled after it, in arrival order, exactly once.
- **A busy session stays on its build until its work ends**: an open turn (running, parked on a
  person or waiting on tasks), messages queued behind it, reports for a parent not delivered yet,
  or working tasks. In one process the runtime keeps that build loaded for the session
  ([`CodePins`][eve_runtime.engine.held.CodePins]) and every actor of the session runs it until the
  session is idle again; the next delivery after that moves it.
- **After a restart the old build is gone**: a process only has the code it was started with,
  so a busy session it recovers resumes its unfinished work on the new build, and that resume is
  the handoff point (eve on Vercel keeps the old deployment running the work instead).

A build may refuse a session it cannot run: a checkpoint newer than this code reads, or a child
session whose agent the build no longer defines (its subagent was removed). The session then
stays on its build: two warnings say why, `session handoff refused` (the target build: the
checkpoint version and the reason) and `session handoff failed` (the session's build: the target
and the reason). When that build is still loaded here (the actor runs it), the delivery is
handled on it; else nothing here can run the session, and its deliveries wait in the durable
inbox for a build that can.

eve emits no stream event for a handoff; it only logs. So does this module (`eve.handoff`).
The rules live here and in the store contract (`Commit.handoff`), so every world shares them.
"""

from __future__ import annotations

import logging

from eve_runtime.checkpoint import STATE_VERSION, SessionState
from eve_runtime.engine.ports import ActorHost, ActorLoop
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.store.base import DeliveryRecord, SessionHandoff, SessionRecord

__all__ = [
    "MOVING_KINDS",
    "adopt",
    "agent_or_root",
    "busy",
    "hand_off",
    "moves_for",
    "moves_to",
    "refusal",
    "settle_build",
]

logger = logging.getLogger("eve.handoff")


def busy(state: SessionState) -> bool:
    """Whether the session has work it finishes on its current build.

    An open turn (running, parked on a person, or waiting on tasks), reports for its parent not
    delivered yet, or tasks still working.
    """
    if state.turn is not None or state.outbox:
        return True
    return any(task.status == "working" and not task.ended for task in state.tasks.values())


MOVING_KINDS = frozenset({"message", "responses", "compact", "clear"})
"""The deliveries that move an idle session to the newest build (a cancel or a reset does not)."""


def moves_for(delivery: DeliveryRecord) -> bool:
    """Whether this delivery, reaching an idle session, moves it to the newest build."""
    return delivery.kind in MOVING_KINDS


async def settle_build(actor: ActorLoop, *, move: bool = True) -> bool:
    """Choose the build an actor runs, moving the session when that is a handoff; whether it can run.

    The pinned build while the session is busy (or, before its first turn, the build that
    created it), else the newest. A subagent's session runs its parent's build while the parent
    works. An expired session is not moved: it completes. With `move=False` the build is chosen
    but the session is not moved (nor its build recorded): it is about to be cancelled or reset.
    A build that refuses the session leaves it on the build it runs (see the module docstring);
    False when no build loaded here can run it.
    """
    host = actor.host
    pinned = host.pins.get(actor.session_id)
    stays = pinned is not None and (busy(actor.state) or not actor.state.started)
    parent = actor.state.parent
    parent_root = host.pins.get(parent.session_id) if parent is not None else None
    if parent_root is not None:
        pinned, stays = parent_root, True
    root = pinned if pinned is not None and stays else host.agent
    deadline = actor.session.deadline
    expired = deadline is not None and host.now() >= deadline
    reason = refusal(actor, root)
    if reason is not None:
        if not move:
            return True  # a cancel or a reset: none of the session's code runs
        _refused(actor, root, reason)
        previous = actor.root
        if previous is root or previous.deployment != actor.session.deployment or refusal(actor, previous):
            return False  # the session's own build is not loaded here: its deliveries wait
        host.pins.keep(actor.session_id, previous)
        return True
    actor.run_on(root)
    host.pins.keep(actor.session_id, root)
    if not move:
        return True
    if moves_to(actor.session, root) and not expired:
        await hand_off(actor, root)
    elif (record := adopt(actor.session, root)) is not None:
        await actor.record_build(record)
    return True


def agent_or_root(host: ActorHost, session: SessionRecord, root: RuntimeAgent) -> RuntimeAgent:
    """The session's agent in `root`'s build; the root agent when the build no longer defines it.

    Such a build refuses the session (`refusal`), so nothing runs on the stand-in.
    """
    try:
        return host.agent_for(session, root)
    except KeyError:
        return root


def refusal(actor: ActorLoop, root: RuntimeAgent) -> str | None:
    """Why `root`'s build cannot take the session over, if it cannot."""
    if actor.state.version > STATE_VERSION:
        return f"its checkpoint has version {actor.state.version}; this build reads up to {STATE_VERSION}"
    try:
        actor.host.agent_for(actor.session, root)
    except KeyError:
        return f"this build does not define the session's agent {actor.session.agent!r}"
    return None


def _refused(actor: ActorLoop, root: RuntimeAgent, reason: str) -> None:
    session = actor.session
    target, current = _short(root.deployment), _short(session.deployment or "")
    logger.warning(
        "session handoff refused: session %s (checkpoint version %d) cannot move to deployment %s: %s",
        session.id,
        actor.state.version,
        target,
        reason,
        extra={"sessionId": session.id, "checkpointVersion": actor.state.version, "reason": reason},
    )
    logger.warning(
        "session handoff failed: session %s stays on deployment %s; deployment %s refused it: %s",
        session.id,
        current,
        target,
        reason,
        extra={"sessionId": session.id, "targetDeployment": root.deployment, "reason": reason},
    )


def moves_to(session: SessionRecord, root: RuntimeAgent) -> bool:
    """Whether running the session on `root`'s build is a handoff (it recorded another build)."""
    return bool(root.deployment) and session.deployment is not None and session.deployment != root.deployment


async def hand_off(actor: ActorLoop, root: RuntimeAgent) -> None:
    """Move the actor's session to `root`'s build: drop undefined state, restart the timeout, record it.

    One commit writes the checkpoint (without the dropped keys) and the session record's new
    build and deadline. The checkpoint keeps the event count it had, so events an interrupted
    attempt left after it are still recovered. No event is emitted.
    """
    session = actor.session
    state = actor.state
    dropped = sorted(key for key in state.values if root.state_keys is not None and key not in root.state_keys)
    for key in dropped:
        del state.values[key]
        logger.warning(
            "session %s: dropped state %r on handoff: deployment %s does not define it",
            session.id,
            key,
            _short(root.deployment),
        )
    timeout = actor.agent.config.limits.session_timeout_ms
    deadline = actor.host.now() + timeout / 1000 if timeout is not False else None
    await actor.record_build(
        SessionHandoff(deployment=root.deployment, deadline=deadline), checkpoint=state.model_dump_json()
    )
    if deadline is not None:
        actor.host.schedule_wake(session.id, deadline)
    logger.info(
        "session %s moved from deployment %s to %s%s",
        session.id,
        _short(session.deployment or ""),
        _short(root.deployment),
        " (resuming unfinished work: its deployment is not loaded here)" if busy(state) else "",
    )


def adopt(session: SessionRecord, root: RuntimeAgent) -> SessionHandoff | None:
    """For a session that recorded no build: the record of `root`'s build (no other change), if any."""
    if session.deployment is not None or not root.deployment:
        return None
    return SessionHandoff(deployment=root.deployment, deadline=session.deadline)


def _short(deployment: str) -> str:
    return deployment.removeprefix("sha256:")[:12] or "(none recorded)"
