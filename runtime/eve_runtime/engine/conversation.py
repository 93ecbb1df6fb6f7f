"""What a model call sees: instructions, the session's history, turn-scoped context, and the tools.

Every call gets the agent's static instructions (system-role ones as system messages; user-role
static instructions are part of the history from the session's start), then the dynamic
instructions resolved for the session and the turn, then the agent's skills (names and
descriptions, see `eve_runtime.engine.skills`), then the history, with the turn's client
context inserted just before the turn's first user message (it is never stored in history).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from eve_runtime.checkpoint import SessionState, TurnState
from eve_runtime.engine.connection_tools import connection_definitions
from eve_runtime.engine.skills import skill_tools, skills_message
from eve_runtime.messages import Message, SystemMessage, UserMessage
from eve_runtime.models.base import ModelRequest, ModelSettings, ToolDefinition
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.tasks.calls import task_tool_names, with_task_id
from eve_runtime.tasks.delegation import delegation_tools, task_tool_definitions

__all__ = ["REPLY_TOOL", "build_request", "client_context_entries", "reply_tool", "static_user_instructions"]

REPLY_TOOL = "eve__reply"
"""The framework tool through which the model returns a result matching the turn's output schema."""

_REPLY_DESCRIPTION = (
    "Reply with the final result of this turn as structured data matching the requested schema. "
    "Call it exactly once, when the result is ready."
)


def client_context_entries(value: Any) -> list[str]:
    """`clientContext` (a string, strings, or a JSON object) as the texts of context messages."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return [json.dumps(value, separators=(",", ":"), ensure_ascii=False)]


def reply_tool(schema: dict[str, Any]) -> ToolDefinition:
    """The `eve__reply` tool for an output schema (non-object schemas are wrapped in `{"result": ...}`)."""
    if schema.get("type") == "object":
        parameters = schema
    else:
        parameters = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return ToolDefinition(name=REPLY_TOOL, description=_REPLY_DESCRIPTION, input_schema=parameters)


def unwrap_reply(schema: dict[str, Any], arguments: dict[str, Any]) -> Any:
    """The result an `eve__reply` call carries."""
    return arguments if schema.get("type") == "object" else arguments.get("result")


def static_user_instructions(agent: RuntimeAgent) -> list[UserMessage]:
    """User-role static instructions: they open a new session's history."""
    return [UserMessage(content=i.content) for i in agent.manifest.instructions if i.role == "user"]


def _instruction_messages(agent: RuntimeAgent, state: SessionState, turn: TurnState | None) -> list[Message]:
    messages: list[Message] = [
        SystemMessage(content=i.content) for i in agent.manifest.instructions if i.role == "system"
    ]
    dynamic = [*state.dynamic.values(), *(turn.dynamic.values() if turn is not None else [])]
    for value in dynamic:
        if value is not None:
            messages.append(
                SystemMessage(content=value.content) if value.role == "system" else UserMessage(content=value.content)
            )
    skills = skills_message(agent)
    if skills is not None:
        messages.append(skills)
    return messages


def tool_definitions(agent: RuntimeAgent, turn: TurnState | None, *, is_root: bool = True) -> list[ToolDefinition]:
    """The tools offered on every call of the turn: authored, `load_skill`, delegation, task tools, `eve__reply`."""
    tools = list(_agent_tools(agent, is_root))
    if turn is not None and turn.output_schema is not None:
        tools.append(reply_tool(turn.output_schema))
    return tools


def _agent_tools(agent: RuntimeAgent, is_root: bool) -> tuple[ToolDefinition, ...]:
    """The tools the agent offers on every call, made once per agent (`RuntimeAgent.derive`)."""
    return agent.derive(("tools", is_root), lambda: _made_tools(agent, is_root))


def _made_tools(agent: RuntimeAgent, is_root: bool) -> tuple[ToolDefinition, ...]:
    tools = [
        ToolDefinition(
            name=t.name,
            description=t.manifest.description,
            input_schema=with_task_id(t.manifest.input_schema) if t.options.serve else t.manifest.input_schema,
        )
        for t in agent.tools.values()
    ]
    tools.extend(skill_tools(agent))
    tools.extend(definition for _node, definition in delegation_tools(agent, is_root=is_root).values())
    if task_tool_names(agent, is_root=is_root):
        tools.extend(task_tool_definitions())
    return tuple(tools)


def build_request(
    agent: RuntimeAgent,
    state: SessionState,
    history: Sequence[Message],
    settings: ModelSettings,
    *,
    is_root: bool = True,
) -> ModelRequest:
    """The request of the turn's next model call."""
    turn = state.turn
    messages = _instruction_messages(agent, state, turn)
    if turn is not None and turn.client_context:
        context = [UserMessage(content=f"Client context:\n{entry}") for entry in turn.client_context]
        split = min(turn.user_index, len(history))
        messages.extend(history[:split])
        messages.extend(context)
        messages.extend(history[split:])
    else:
        messages.extend(history)
    tools = [*tool_definitions(agent, turn, is_root=is_root), *connection_definitions(agent, state)]
    return ModelRequest(messages=messages, tools=tools, settings=settings)
