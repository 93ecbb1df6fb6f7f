"""A subagent: the parent agent gets a `forecaster` tool that delegates work to it.

Each call opens a child session with its own stream; the parent's turn goes on and the
forecaster's reply comes back as the task's result.
"""

from eve_runtime import define_agent

agent = define_agent(
    model="{{model}}",
    description="Writes a short multi-day outlook for a city from the current weather.",
)
