"""`define_instructions`: the agent's always-on prompt, from markdown or from code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from eve_runtime.errors import DefinitionError

__all__ = ["InstructionRole", "Instructions", "define_instructions"]

InstructionRole = Literal["system", "user"]


@dataclass(frozen=True)
class Instructions:
    """Instructions the model receives on every call, as a system (or user) message."""

    content: str
    role: InstructionRole = "system"


def define_instructions(content: str, role: InstructionRole = "system") -> Instructions:
    """Define instructions in code (`agent/instructions.py` or `agent/instructions/<name>.py`).

    Args:
        content: The text of the instructions.
        role: `system` (default) or `user`, the role of the message the model receives.

    Example:
        ```python
        from eve_runtime import define_instructions

        instructions = define_instructions("Answer in French.")
        ```
    """
    if not isinstance(content, str):
        raise DefinitionError("define_instructions(): 'content' must be a string", field="content")
    if role not in ("system", "user"):
        raise DefinitionError(f"define_instructions(): 'role' must be 'system' or 'user', not {role!r}", field="role")
    return Instructions(content=content, role=role)
