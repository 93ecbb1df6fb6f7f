"""`AsyncEveClient` against a real server: the same calls as the sync client, awaited."""

from __future__ import annotations

import pytest

from eve_runtime.client import AsyncEveClient, ResponseError, ServerUnreachable
from tests.client.recordings import ALERT
from tests.server.support import LiveServer

pytestmark = pytest.mark.anyio


async def test_turns_approvals_and_follow_ups(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        assert (await eve.health())["status"] == "ready"
        assert (await eve.info())["kind"] == "eve-agent-info"
        session_id = await eve.create(ALERT)
        waiting = await eve.result(session_id)
        assert waiting.status == "waiting-for-input"
        (request,) = waiting.pending
        await eve.respond(session_id, [{"requestId": request.request_id, "optionId": "cancel"}])
        refused = await eve.result(session_id, waiting.next_index)
        assert (refused.status, refused.turn_id) == ("completed", "turn_0")
        assert refused.reply == 'send_alert -> "Tool execution was denied."'

        start = await eve.event_count(session_id)
        delivery_id = await eve.send(session_id, "thanks")
        thanks = await eve.result(session_id, start, delivery_id=delivery_id)
        assert (thanks.reply, thanks.turn_id) == ("echo: thanks", "turn_1")
        assert (await eve.sessions())[0]["sessionId"] == session_id


async def test_cancel_and_reset(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        session_id = await eve.create("/delay 100\n/reply one two three four five")
        async for event in eve.stream(session_id):
            if event["type"] == "message.appended":
                break
        assert await eve.cancel(session_id) == "accepted"
        assert (await eve.result(session_id)).status == "cancelled"
        assert await eve.reset(session_id) == "reset"
        assert await eve.reset(session_id) == "no_active_session"
        with pytest.raises(ResponseError) as refused:
            await eve.send(session_id, "hello?")
        assert refused.value.code == "session_not_active"


async def test_failures_and_errors(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        failed = await eve.result(await eve.create("/fail nope"))
        assert failed.status == "failed" and failed.error is not None and failed.error.message == "nope"
        with pytest.raises(ResponseError) as bad:
            await eve.create(outputSchema={})
        assert bad.value.status == 400
        with pytest.raises(ValueError):
            await eve.result("wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV", -2)
    async with AsyncEveClient("http://127.0.0.1:1") as down:
        with pytest.raises(ServerUnreachable):
            await down.health()
        with pytest.raises(ServerUnreachable):
            await down.events("wrun_01ARZ3NDEKTSV4RRFFQ69G5FAV")
