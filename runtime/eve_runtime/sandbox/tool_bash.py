"""The framework's `bash` tool: one shell command in the session's sandbox.

Input `{"command"}`; result `{"status": "completed", "exitCode", "stdout", "stderr", "truncated"}`,
eve's shape. A nonzero exit code is a result the model reads, not a failure. A command that
outlives the sandbox's time limit is killed with everything it started and reports exit code
124, with a note at the end of stderr. Each stream keeps its last 2000 lines / 50 KiB, with a
note in front when it was cut.

Unlike eve, a long command does not turn into a background job after 30 s: it runs until it
ends or reaches the limit (see docs/departures.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.tools import tool
from eve_runtime.sandbox.truncate import truncate

__all__ = ["BASH_DESCRIPTION", "BASH_INPUT_SCHEMA", "BASH_OUTPUT_SCHEMA", "bash"]

BASH_DESCRIPTION = (
    "Execute a shell command in the shared workspace environment (/workspace is the working directory). "
    "The result has the exit code, stdout and stderr; each stream keeps its last 2000 lines (50 KB). "
    "A command running past the sandbox's time limit is killed with everything it started (exit code 124)."
)

BASH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The shell command to execute."}},
    "required": ["command"],
    "additionalProperties": False,
}

BASH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"const": "completed"},
        "exitCode": {"type": "number"},
        "stderr": {"type": "string"},
        "stdout": {"type": "string"},
        "truncated": {"type": "boolean"},
    },
    "required": ["status", "exitCode", "stderr", "stdout", "truncated"],
    "additionalProperties": False,
}


def _stream(name: Literal["stdout", "stderr"], text: str, dropped: bool) -> tuple[str, bool]:
    cut = truncate(text, "tail")
    if not cut.truncated and not dropped:
        return cut.output, False
    if dropped:
        note = f"[{name} truncated: showing last {cut.output_lines} lines; earlier output omitted]"
    else:
        note = f"[{name} truncated: showing last {cut.output_lines} of {cut.total_lines} lines]"
    return f"{note}\n{cut.output}", True


@tool(description=BASH_DESCRIPTION)
async def bash(
    command: Annotated[str, Field(description="The shell command to execute.")],
    ctx: ToolContext,
) -> dict[str, Any]:
    """Execute a shell command in the sandbox."""
    sandbox = await ctx.get_sandbox()
    result = await sandbox.run(command)
    limit_hit = result.truncated  # the process kept only the end of a stream
    stdout, stdout_cut = _stream("stdout", result.stdout, limit_hit and len(result.stdout) >= len(result.stderr))
    stderr, stderr_cut = _stream("stderr", result.stderr, limit_hit and len(result.stderr) > len(result.stdout))
    return {
        "status": "completed",
        "exitCode": result.exit_code,
        "stderr": stderr,
        "stdout": stdout,
        "truncated": stdout_cut or stderr_cut,
    }
