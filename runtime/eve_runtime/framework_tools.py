"""eve's opt-in framework tools that a tool file turns on by re-exporting them.

```python
# agent/tools/ask_question.py
from eve_runtime.framework_tools import ask_question
```

Both are workflow tools: a restart while they wait resumes the wait (an answered question is
not asked again; a sleep wakes at its original time).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from eve_runtime.authoring.context import ToolContext, option_id
from eve_runtime.authoring.tools import tool

__all__ = ["ask_question", "sleep"]


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
