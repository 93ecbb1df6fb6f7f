"""An eval with a person in the loop: send_alert waits for approval, and a stub stands in for it.

The stub answers the call instead of the real tool (no alert goes out), and the events still
show the call. The eval approves the request with `t.respond`, then checks what happened.
"""

from eve_runtime import define_eval


async def test(t):
    t.session(
        stubs=[{"id": "alert", "tool": "send_alert", "outcome": {"response": {"sent": True, "stubbed": True}}}]
    )
    await t.send('/call send_alert {"city": "Oslo", "message": "Snow tonight."}')
    (request,) = t.expect_input_requests(tool="send_alert", count=1)
    await t.respond((request, "approve"))
    t.completed()
    t.called_tool("send_alert", input={"city": "Oslo"}, output={"stubbed": True}, status="completed")
    t.max_tool_calls(1)
    t.message_includes("send_alert ->")


eval = define_eval(test, description="An alert waits for approval and is sent once approved")
