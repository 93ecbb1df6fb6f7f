"""eve for Python: agents as directories, with durable sessions.

The names here are the authoring API, the only ones an app's code needs:

```python
from eve_runtime import define_agent, tool
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eve_runtime._version import __version__
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

if TYPE_CHECKING:
    from eve_runtime import sessions

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


def __getattr__(name: str) -> Any:
    # `sessions` pulls in the runtime and the stores: imported on first use, so that commands that
    # only compile an app (`eve info`, `eve build`) do not pay for it.
    if name == "sessions":
        import eve_runtime.sessions

        return eve_runtime.sessions
    raise AttributeError(f"module 'eve_runtime' has no attribute {name!r}")
