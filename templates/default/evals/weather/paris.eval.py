"""An eval: the agent calls get_weather for Paris and answers with what it found.

The message uses the `test` model's directives (`/call`, `/reply`), so this passes offline; with
a real model, write the question a person would ask instead.
"""

from eve_runtime import define_eval
from eve_runtime.evals import includes


async def test(t):
    await t.send('/call get_weather {"city": "Paris"}\n/reply It is sunny in Paris.')
    t.completed()
    t.called_tool("get_weather", input={"city": "Paris"}, output={"condition": "Sunny"}, times=1)
    t.not_called_tool("send_alert")
    t.check(t.reply, includes("sunny"))


eval = define_eval(test, description="The weather in Paris comes from get_weather", tags=["smoke"])
