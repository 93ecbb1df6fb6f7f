"""eve for Python: agents as directories, with durable sessions.

The names here are the authoring API, the only ones an app's code needs:

```python
from eve_runtime import define_agent, tool
```
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from eve_runtime._version import __version__

if TYPE_CHECKING:  # what the names are, for type checkers and IDEs; at run time __getattr__ imports them
    from eve_runtime import sessions
    from eve_runtime.authoring.approval import always, auto, never, once
    from eve_runtime.authoring.channels import Channel, define_channel
    from eve_runtime.authoring.config import AgentConfig, define_agent
    from eve_runtime.authoring.connection_oauth import McpOAuth, mcp_oauth
    from eve_runtime.authoring.connections import (
        AuthContext,
        ConnectionAuth,
        McpClientConnection,
        OpenApiConnection,
        connection_auth,
        define_mcp_client_connection,
        define_openapi_connection,
        env,
    )
    from eve_runtime.authoring.context import ToolContext
    from eve_runtime.authoring.dynamic import DynamicResolver, define_dynamic
    from eve_runtime.authoring.evals import define_eval, define_eval_config
    from eve_runtime.authoring.hooks import Hook, HookContext, define_hook
    from eve_runtime.authoring.instructions import Instructions, define_instructions
    from eve_runtime.authoring.sandbox import ParentSandbox, SandboxConfig, define_parent_sandbox, define_sandbox
    from eve_runtime.authoring.sandbox_session import CommandResult, Sandbox, SandboxBackend, SandboxError
    from eve_runtime.authoring.schedules import Schedule, ScheduleContext, define_schedule
    from eve_runtime.authoring.skills import Skill, define_skill
    from eve_runtime.authoring.state import StateError, StateHandle, define_state
    from eve_runtime.authoring.tools import DisabledTool, ToolOptions, disable_tool, tool
    from eve_runtime.errors import CompileError, DefinitionError, EveError, UserError
    from eve_runtime.events.transcript import TranscriptMessage, transcript_of

__all__ = [
    "AgentConfig",
    "AuthContext",
    "Channel",
    "CommandResult",
    "CompileError",
    "ConnectionAuth",
    "DefinitionError",
    "DisabledTool",
    "DynamicResolver",
    "EveError",
    "Hook",
    "HookContext",
    "Instructions",
    "McpClientConnection",
    "McpOAuth",
    "OpenApiConnection",
    "ParentSandbox",
    "Sandbox",
    "SandboxBackend",
    "SandboxConfig",
    "SandboxError",
    "Schedule",
    "ScheduleContext",
    "Skill",
    "StateError",
    "StateHandle",
    "ToolContext",
    "ToolOptions",
    "TranscriptMessage",
    "UserError",
    "__version__",
    "always",
    "auto",
    "connection_auth",
    "define_agent",
    "define_channel",
    "define_dynamic",
    "define_eval",
    "define_eval_config",
    "define_hook",
    "define_instructions",
    "define_mcp_client_connection",
    "define_openapi_connection",
    "define_parent_sandbox",
    "define_sandbox",
    "define_schedule",
    "define_skill",
    "define_state",
    "disable_tool",
    "env",
    "mcp_oauth",
    "never",
    "once",
    "sessions",
    "tool",
    "transcript_of",
]

_LAZY: dict[str, str] = {
    "always": "eve_runtime.authoring.approval",
    "auto": "eve_runtime.authoring.approval",
    "never": "eve_runtime.authoring.approval",
    "once": "eve_runtime.authoring.approval",
    "Channel": "eve_runtime.authoring.channels",
    "define_channel": "eve_runtime.authoring.channels",
    "AgentConfig": "eve_runtime.authoring.config",
    "define_agent": "eve_runtime.authoring.config",
    "McpOAuth": "eve_runtime.authoring.connection_oauth",
    "mcp_oauth": "eve_runtime.authoring.connection_oauth",
    "AuthContext": "eve_runtime.authoring.connections",
    "ConnectionAuth": "eve_runtime.authoring.connections",
    "McpClientConnection": "eve_runtime.authoring.connections",
    "OpenApiConnection": "eve_runtime.authoring.connections",
    "connection_auth": "eve_runtime.authoring.connections",
    "define_mcp_client_connection": "eve_runtime.authoring.connections",
    "define_openapi_connection": "eve_runtime.authoring.connections",
    "env": "eve_runtime.authoring.connections",
    "ToolContext": "eve_runtime.authoring.context",
    "DynamicResolver": "eve_runtime.authoring.dynamic",
    "define_dynamic": "eve_runtime.authoring.dynamic",
    "define_eval": "eve_runtime.authoring.evals",
    "define_eval_config": "eve_runtime.authoring.evals",
    "Hook": "eve_runtime.authoring.hooks",
    "HookContext": "eve_runtime.authoring.hooks",
    "define_hook": "eve_runtime.authoring.hooks",
    "Instructions": "eve_runtime.authoring.instructions",
    "define_instructions": "eve_runtime.authoring.instructions",
    "ParentSandbox": "eve_runtime.authoring.sandbox",
    "SandboxConfig": "eve_runtime.authoring.sandbox",
    "define_parent_sandbox": "eve_runtime.authoring.sandbox",
    "define_sandbox": "eve_runtime.authoring.sandbox",
    "CommandResult": "eve_runtime.authoring.sandbox_session",
    "Sandbox": "eve_runtime.authoring.sandbox_session",
    "SandboxBackend": "eve_runtime.authoring.sandbox_session",
    "SandboxError": "eve_runtime.authoring.sandbox_session",
    "Schedule": "eve_runtime.authoring.schedules",
    "ScheduleContext": "eve_runtime.authoring.schedules",
    "define_schedule": "eve_runtime.authoring.schedules",
    "Skill": "eve_runtime.authoring.skills",
    "define_skill": "eve_runtime.authoring.skills",
    "StateError": "eve_runtime.authoring.state",
    "StateHandle": "eve_runtime.authoring.state",
    "define_state": "eve_runtime.authoring.state",
    "DisabledTool": "eve_runtime.authoring.tools",
    "ToolOptions": "eve_runtime.authoring.tools",
    "disable_tool": "eve_runtime.authoring.tools",
    "tool": "eve_runtime.authoring.tools",
    "CompileError": "eve_runtime.errors",
    "DefinitionError": "eve_runtime.errors",
    "EveError": "eve_runtime.errors",
    "UserError": "eve_runtime.errors",
    "TranscriptMessage": "eve_runtime.events.transcript",
    "transcript_of": "eve_runtime.events.transcript",
    "sessions": "eve_runtime.sessions",
}
"""Where each name of the API lives: imported on first use (PEP 562), so importing `eve_runtime` (or one
name from it) does not import the whole API and what it needs (asyncio, the model layer, the evals)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'eve_runtime' has no attribute {name!r}")
    value = import_module(module) if name == "sessions" else getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
