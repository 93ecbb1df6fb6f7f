"""Creating a session with eval tool stubs (`POST /eve/v1/session` with `stubs`).

Replacing tools is denied unless the server grants it: the eval runner's own in-process server
does, and any other server only when it runs with `EVE_ALLOW_TOOL_STUBS=1` (server configuration,
never the request). Rules naming a tool the agent does not have are refused before the session
exists (connection tools, `<connection>__<tool>`, are checked when called).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from eve_runtime.engine.tool_stubs import StubRule, StubsInvalid, parse_stubs
from eve_runtime.server.bodies import CreateRequest
from eve_runtime.server.responses import ApiError
from eve_runtime.sessions.creation import open_session
from eve_runtime.sessions.runtime import Runtime
from eve_runtime.store.base import SessionRecord

__all__ = ["ALLOW_ENV", "create_session"]

ALLOW_ENV = "EVE_ALLOW_TOOL_STUBS"
DENIED = (
    "This server does not allow tool stubs. Run evals with stubs in process (eve eval), or start the server "
    f"with {ALLOW_ENV}=1 to let its callers replace tools."
)


def _rules(body: Mapping[str, Any], runtime: Runtime) -> tuple[StubRule, ...]:
    raw = body.get("stubs")
    if raw is None or raw == []:
        return ()
    if not (runtime.options.tool_stubs.allowed or os.environ.get(ALLOW_ENV, "").strip() == "1"):
        raise ApiError(403, DENIED, "tool_stubs_not_allowed")
    try:
        rules = parse_stubs(raw)
    except StubsInvalid as exc:
        raise ApiError(400, f"Invalid stubs: {exc}", "invalid_stubs") from None
    known = runtime.agent.tools
    for rule in rules:
        head = rule.tool.split("/", 1)[0]
        if head in runtime.agent.subagents:
            raise ApiError(
                400,
                f"Invalid stubs: stub {rule.id!r} names the subagent {head!r}: stubs replace the root agent's "
                "tools only (not a delegation, nor a subagent's tools).",
                "invalid_stubs",
            )
        if rule.tool not in known and "__" not in rule.tool:
            names = ", ".join(sorted(known)) or "none"
            raise ApiError(
                400,
                f"Invalid stubs: stub {rule.id!r} names no tool of the agent: {rule.tool!r} (tools: {names}).",
                "invalid_stubs",
            )
    return rules


async def create_session(
    runtime: Runtime, raw: Mapping[str, Any], body: CreateRequest, message: dict[str, Any] | None
) -> SessionRecord:
    """Create a session as `runtime.create_session` does (`raw`'s `stubs` too, when granted).

    Raises:
        ApiError: 403 when stubs are not allowed here, 400 when they are invalid.
    """
    rules = _rules(raw, runtime)
    if not rules:
        return await runtime.create_session(
            message=message, operation_id=body.operation_id, idempotency_key=body.idempotency_key
        )
    session, _created = await open_session(
        runtime,
        message=message,
        operation_id=body.operation_id,
        idempotency_key=body.idempotency_key,
        stubs=rules,
    )
    return session
