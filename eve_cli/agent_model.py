"""Changing the model an agent runs on by editing `agent/agent.py` (the terminal UI's `/model`).

Only a model written as a string literal in `define_agent(model="...")` is rewritten; the rest of
the file stays byte for byte. A model computed at run time (`define_dynamic`) or a file that does
not call `define_agent` is left alone with an error that says what to edit by hand. The running
`eve dev` picks the change up like any other save: the next turn runs on the new model.
"""

from __future__ import annotations

import ast
from pathlib import Path

from eve_runtime.models.ids import model_id_problem, provider_problem

__all__ = ["ModelChangeError", "current_model", "set_model"]

_NEW_AGENT = '''"""The agent's configuration: which model it runs on and its limits."""

from eve_runtime import define_agent

agent = define_agent(model={model!r})
'''


class ModelChangeError(ValueError):
    """The model cannot be changed automatically; the message says what to do instead."""


def _define_agent_call(tree: ast.Module) -> ast.Call | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name == "define_agent":
                return node
    return None


def _offset(source: str, line: int, column: int) -> int:
    """The character offset of a (1-based line, UTF-8 byte column) position."""
    lines = source.splitlines(keepends=True)
    start = sum(len(text) for text in lines[: line - 1])
    return start + len(lines[line - 1].encode()[:column].decode())


def current_model(agent_file: Path) -> str | None:
    """The literal model of `define_agent` in `agent_file`, if it has one."""
    try:
        call = _define_agent_call(ast.parse(agent_file.read_text(encoding="utf-8")))
    except (OSError, SyntaxError, ValueError):
        return None
    for keyword in call.keywords if call is not None else []:
        if keyword.arg == "model" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
            return keyword.value.value
    return None


def set_model(agent_root: Path, model: str) -> Path:
    """Make `agent_root/agent.py` use `model`; return the file written.

    Raises:
        ModelChangeError: `model` is not a model id, or the file cannot be edited safely.
    """
    problem = model_id_problem(model) or provider_problem(model)
    if problem is not None:
        raise ModelChangeError(problem)
    agent_file = agent_root / "agent.py"
    if not agent_file.exists():
        agent_file.write_text(_NEW_AGENT.format(model=model), encoding="utf-8")
        return agent_file
    source = agent_file.read_text(encoding="utf-8")
    try:
        call = _define_agent_call(ast.parse(source))
    except SyntaxError as exc:
        raise ModelChangeError(f"{agent_file} does not parse (line {exc.lineno}): fix it first") from None
    if call is None:
        raise ModelChangeError(f"{agent_file} does not call define_agent: add `define_agent(model={model!r})`")
    literal = repr(model).replace("'", '"') if '"' not in model else repr(model)
    for keyword in call.keywords:
        if keyword.arg != "model":
            continue
        value = keyword.value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            raise ModelChangeError(
                f"The model in {agent_file} (line {value.lineno}) is computed, not a string: edit it by hand"
            )
        assert value.end_lineno is not None and value.end_col_offset is not None
        start = _offset(source, value.lineno, value.col_offset)
        end = _offset(source, value.end_lineno, value.end_col_offset)
        agent_file.write_text(source[:start] + literal + source[end:], encoding="utf-8")
        return agent_file
    assert call.end_lineno is not None and call.end_col_offset is not None
    closing = _offset(source, call.end_lineno, call.end_col_offset) - 1  # the call's ")"
    before = source[:closing].rstrip()
    separator = "" if before.endswith("(") else " " if before.endswith(",") else ", "
    agent_file.write_text(before + f"{separator}model={literal}" + source[len(before) :], encoding="utf-8")
    return agent_file
