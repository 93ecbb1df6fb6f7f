"""The agent's configuration: which model it runs on and its limits."""

from eve_runtime import define_agent

agent = define_agent(model="{{model}}")
