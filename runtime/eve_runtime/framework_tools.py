"""eve's opt-in framework tools that a tool file turns on by re-exporting them.

```python
# agent/tools/ask_question.py
from eve_runtime.framework_tools import ask_question
```

`ask_question` and `sleep` are workflow tools: a restart while they wait resumes the wait (an
answered question is not asked again; a sleep wakes at its original time). `glob` and `grep`
search the session's sandbox. `web_search_tool(provider)` makes the `web_search` tool
(`agent/tools/web_search.py`: `web_search = web_search_tool(my_search)`).

The default framework tools (`bash`, `read_file`, `write_file`, `web_fetch`) are importable
too, for a tool file that wraps one:

```python
# agent/tools/bash.py
from eve_runtime import ToolContext, tool
from eve_runtime.framework_tools import bash as framework_bash

@tool(needs_approval=True)
async def bash(command: str, ctx: ToolContext) -> dict:
    \"\"\"Run an approved shell command in the sandbox.\"\"\"
    return await framework_bash(command, ctx)
```
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from eve_runtime.authoring.context import ToolContext, option_id
from eve_runtime.authoring.tools import tool
from eve_runtime.sandbox.tool_bash import bash
from eve_runtime.sandbox.tool_files import read_file, write_file
from eve_runtime.sandbox.tool_search import glob, grep
from eve_runtime.sandbox.tool_web_fetch import web_fetch
from eve_runtime.sandbox.tool_web_search import WebSearchProvider, web_search_tool

__all__ = [
    "WebSearchProvider",
    "ask_question",
    "bash",
    "glob",
    "grep",
    "read_file",
    "sleep",
    "web_fetch",
    "web_search_tool",
    "write_file",
]


@tool(workflow=True)
async def ask_question(
    prompt: Annotated[str, Field(description="The question, in one or two sentences.")],
    ctx: ToolContext,
    options: Annotated[list[str] | None, Field(description="Answers to choose from, if any.")] = None,
    allowFreeform: Annotated[bool | None, Field(description="Whether a free-text answer is allowed.")] = None,
) -> dict[str, Any]:
    """Ask the person a question, optionally with options to choose from, and wait for the answer."""
    result = await ctx.ask(prompt, options=options or None, allow_freeform=allowFreeform)
    status = result.get("status")
    if status == "answered":
        labels = {option_id(option): option for option in options or []}
        option = result.get("optionId")
        answer = result.get("text") or (labels.get(option, option) if option else "")
        return {"status": "answered", "answer": answer}
    if status == "cancelled":
        return {"interrupted": True}
    return {"status": status}


@tool(workflow=True)
async def sleep(
    seconds: Annotated[int, Field(ge=1, description="How long to wait.")],
    ctx: ToolContext,
) -> dict[str, Any]:
    """Wait for a number of seconds before going on (a new message ends the wait early)."""
    return dict(await ctx.sleep(seconds))
