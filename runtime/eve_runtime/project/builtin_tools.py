"""The framework's own tools (eve's built-ins), as the compiler composes them with authored tools.

An authored `tools/<name>.py` with a built-in's name replaces it; one holding `disable_tool()`
removes it; `define_agent(default_tools=False)` drops the optional defaults; and
`built_in_tools={"allow": [...]}` denies the ones it does not list. `implemented` says whether
this version of eve for Python can run the tool yet: a tool that cannot run is never offered to
the model, and info reports it as `unavailable`, with `unavailable` as the reason. The sandbox
tools and the web tools are implemented in `eve_runtime.sandbox` (their descriptions and input
schemas come from there: eve's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.sandbox import FRAMEWORK_TOOLS, NO_PROVIDER

__all__ = ["BUILTIN_TOOLS", "BuiltinTool", "builtin_tool"]

Availability = Literal["default", "opt-in"]


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_STRING = {"type": "string"}


@dataclass(frozen=True)
class BuiltinTool:
    """One framework tool."""

    name: str
    description: str
    input_schema: dict[str, Any]
    availability: Availability
    """`default`: on unless disabled; `opt-in`: on only when a tool file re-exports it."""
    optional: bool = True
    """Dropped by `define_agent(default_tools=False)`."""
    root_only: bool = False
    needs: Literal["skills", "connections"] | None = None
    """Present only when the agent has at least one of these."""
    can_disable: bool = True
    implemented: bool = False
    unavailable: str = "this version of eve for Python does not run it yet"
    """Why it is not offered when it is not `implemented`."""
    extra: dict[str, Any] = field(default_factory=dict)


def _sandboxed(name: str, availability: Availability, **options: Any) -> BuiltinTool:
    description, schema = FRAMEWORK_TOOLS[name]
    return BuiltinTool(name, description, schema, availability, **options)


BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (
    _sandboxed("bash", "default", implemented=True),
    _sandboxed("read_file", "default", implemented=True),
    _sandboxed("write_file", "default", implemented=True),
    _sandboxed("web_fetch", "default", implemented=True),
    _sandboxed("web_search", "default", unavailable=NO_PROVIDER),
    BuiltinTool(
        "agent",
        "Delegate a task to a fresh copy of this agent and get its reply.",
        _object({"message": _STRING, "taskId": _STRING}, ["message"]),
        "default",
        root_only=True,
        implemented=True,
    ),
    BuiltinTool(
        "task_cancel",
        "Cancel a background task by its id.",
        _object({"taskId": _STRING}, ["taskId"]),
        "default",
        optional=False,
        implemented=True,
    ),
    BuiltinTool(
        "load_skill",
        "Load the full instructions of one available skill by its name. Call it when a request matches the "
        "description of a skill in the Available skills list, or when someone asks for that skill. Loading adds "
        "the skill's instructions to the current turn and lists its files.",
        _object(
            {"skill": {"type": "string", "description": "The skill's name, from the Available skills list."}}, ["skill"]
        ),
        "default",
        optional=False,
        needs="skills",
        implemented=True,
    ),
    BuiltinTool(
        "connection_search",
        "Search the tools of the agent's connections (MCP servers, HTTP APIs) by what they do. The tools it "
        "finds become callable by their qualified names, `<connection>__<tool>`, from your next step on.",
        _object(
            {
                "query": {"type": "string", "description": "Words describing the tool you need; '*' lists them all."},
                "connection": {"type": "string", "description": "Only search this connection."},
            },
            ["query"],
        ),
        "default",
        optional=False,
        needs="connections",
        can_disable=False,
        implemented=True,
    ),
    BuiltinTool(
        "ask_question",
        "Ask the person a question, optionally with options to choose from, and wait for the answer.",
        _object(
            {"prompt": _STRING, "options": {"type": "array", "items": _STRING}, "allowFreeform": {"type": "boolean"}},
            ["prompt"],
        ),
        "opt-in",
    ),
    _sandboxed("glob", "opt-in", implemented=True),
    _sandboxed("grep", "opt-in", implemented=True),
    BuiltinTool(
        "sleep",
        "Wait for a number of seconds (a new message ends the wait).",
        _object({"seconds": {"type": "number"}}, ["seconds"]),
        "opt-in",
    ),
    BuiltinTool(
        "no_reply",
        "End the turn without replying.",
        _object({"reason": _STRING}, []),
        "opt-in",
    ),
)
"""Every framework tool eve knows, in eve's order."""

_BY_NAME = {tool.name: tool for tool in BUILTIN_TOOLS}


def builtin_tool(name: str) -> BuiltinTool | None:
    """The framework tool with this name, if there is one."""
    return _BY_NAME.get(name)
