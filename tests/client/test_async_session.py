"""`AsyncEveClient.session()`: the async twin of `EveClient.session()`, against a real server."""

from __future__ import annotations

import pytest

from eve_runtime.client import ActionResult, AsyncEveClient, MessageAppended, ResponseError, Usage
from tests.client.recordings import ALERT
from tests.server.support import LiveServer

pytestmark = pytest.mark.anyio

SLOW = "/delay 50\n/reply one two three four five six"


async def test_a_turn_streams_its_text_then_its_result_and_usage(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        session = eve.session()
        turn = session.send(SLOW)
        unsent = (session.id, turn.session_id)
        assert unsent == (None, None)  # nothing goes out before the turn is iterated or awaited
        deltas = [delta async for delta in turn.text()]
        assert len(deltas) > 1 and "".join(deltas) == "one two three four five six"
        assert turn.done and session.id is not None and turn.session_id == session.id
        result = await turn.result()
        assert (result.status, result.reply, result.turn_id) == ("completed", "one two three four five six", "turn_0")
        steps = [e["data"]["usage"] for e in result.events if e["type"] == "step.completed"]
        assert turn.usage == result.turn_usage == sum((Usage.from_wire(u) for u in steps), Usage())

        follow_up = await session.send('/call get_weather {"city": "Oslo"}')  # awaited: sent now
        assert follow_up.delivery_id is not None
        events = [event async for event in follow_up]
        (call,) = [e for e in events if isinstance(e, ActionResult)]
        assert (call.tool_name, call.output["city"]) == ("get_weather", "Oslo")
        assert [e.delta for e in events if isinstance(e, MessageAppended)] == [
            'get_weather -> {"city":"Oslo","condition":"Sunny","temperatureF":72}'
        ]
        assert (await follow_up.result()).turn_id == "turn_1"


async def test_approve_deny_and_a_refused_send(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        session = eve.session()
        paused = await session.send(ALERT).result()
        assert paused.status == "waiting-for-input"
        approved = session.approve(paused.pending[0])
        assert [d async for d in approved.text()] == [
            'send_alert -> {"city":"Paris","message":"Storm tonight","sent":true}'
        ]
        refused = await session.send(ALERT).result()
        denied = await session.deny(refused.pending[0]).result()
        assert denied.reply == 'send_alert -> "Tool execution was denied."'
        assert [type(e).__name__ for e in await session.events()][0] == "SessionStarted"

        assert await session.reset() == "reset"
        with pytest.raises(ResponseError) as error:
            await session.send("still there?")
        assert (error.value.status, error.value.code) == (409, "session_not_active")


async def test_breaking_out_and_reading_on(server: LiveServer) -> None:
    async with AsyncEveClient(server.url) as eve:
        async with eve.session().send(SLOW) as turn:
            async for delta in turn.text():
                assert delta == "one "
                break
            assert not turn.done
            assert (await turn.result()).reply == "one two three four five six"
