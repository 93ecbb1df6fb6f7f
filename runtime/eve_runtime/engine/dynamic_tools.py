"""Dynamic tools and skills: `define_dynamic` in `agent/tools/<name>.py` or `agent/skills/<name>.py`.

A tool handler (`session.started` or `turn.started`) returns a tool function (named after the
file), a mapping of names to tool functions (each named by its bare key), or None for no tools.
Tool functions are written as in a tool file: the docstring is the description, the signature the
input, `@tool(...)` sets options. A skill handler returns a `define_skill(...)` (named after the
file), a mapping of names to skills, or None. A dynamic tool or skill overrides an authored one
of the same name; two resolvers returning the same name fail the turn.

`session.started` results serve every turn of the session, `turn.started` ones the turn that
resolved them (the newest result of a file wins). Functions cannot be saved with a checkpoint,
so an actor that takes a session up (a later turn, a restart, a recovery) runs the session's
resolvers again: keep them idempotent (`ctx.memo` helps); the turn's resolvers run again for a
turn in progress.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from eve_runtime.authoring.schema import function_schema
from eve_runtime.authoring.skills import Skill
from eve_runtime.authoring.tools import ToolOptions, tool_options
from eve_runtime.checkpoint import TurnState
from eve_runtime.engine.ports import Session
from eve_runtime.engine.resolvers import DynamicContext, ResolverError, call_resolver, dynamic_context
from eve_runtime.errors import DefinitionError
from eve_runtime.project.compile_skills import runtime_skill
from eve_runtime.project.compose_tools import runtime_tool
from eve_runtime.project.grammar import TOOL_NAME_PATTERN
from eve_runtime.project.manifest import SourceInfo
from eve_runtime.project.runtime_agent import RuntimeAgent, RuntimeSkill, RuntimeTool

logger = logging.getLogger("eve.actor")

__all__ = ["apply_dynamic_tools", "resolve_skills", "restore_dynamic_tools"]


def _tool(name: str, value: Any, source: SourceInfo) -> RuntimeTool:
    if not callable(value) or isinstance(value, type):
        raise ResolverError(f"The dynamic tool {name!r} is {type(value).__name__}, not a tool function.")
    if not TOOL_NAME_PATTERN.match(name):
        raise ResolverError(f"The dynamic tool name {name!r} is invalid: use letters, digits, '_' and '-'.")
    function: Callable[..., Any] = value
    try:
        schema = function_schema(function)
    except DefinitionError as exc:
        raise ResolverError(f"The dynamic tool {name!r}: {exc}") from exc
    options = tool_options(function) or ToolOptions()
    description = options.description or schema.description
    if not description:
        raise ResolverError(f"The dynamic tool {name!r} has no description: give its function a docstring.")
    return runtime_tool(name, function, schema, options, description, source)


async def _resolve(base: RuntimeAgent, event: str, context: DynamicContext) -> dict[str, RuntimeTool]:
    tools: dict[str, RuntimeTool] = {}
    for manifest in base.manifest.dynamic_tools:
        resolver = base.dynamic_tools.get(manifest.slug)
        if resolver is None or event not in resolver.events:
            continue
        value = await call_resolver(resolver, event, context)
        if value is None:
            continue
        entries = value.items() if isinstance(value, Mapping) else [(manifest.slug, value)]
        for name, function in entries:
            if name in tools:
                raise ResolverError(f"Two dynamic tool resolvers returned a tool named {name!r}; rename one.")
            tools[str(name)] = _tool(str(name), function, manifest.source)
    return tools


def _skill(name: str, value: Any, source: SourceInfo) -> RuntimeSkill:
    if not isinstance(value, Skill):
        raise ResolverError(
            f"The dynamic skill {name!r} is {type(value).__name__}: return define_skill(...), a mapping of names to "
            "define_skill(...), or None."
        )
    if not TOOL_NAME_PATTERN.match(name):
        raise ResolverError(f"The dynamic skill name {name!r} is invalid: use letters, digits, '_' and '-'.")
    return runtime_skill(name, value, source)


async def resolve_skills(base: RuntimeAgent, event: str, context: DynamicContext) -> dict[str, RuntimeSkill]:
    """Run the agent's dynamic skill resolvers listening to `event`; the skills they return, by name."""
    skills: dict[str, RuntimeSkill] = {}
    for manifest in base.manifest.dynamic_skills:
        resolver = base.dynamic_skills.get(manifest.slug)
        if resolver is None or event not in resolver.events:
            continue
        value = await call_resolver(resolver, event, context)
        if value is None:
            continue
        entries = value.items() if isinstance(value, Mapping) else [(manifest.slug, value)]
        for name, skill in entries:
            if name in skills:
                raise ResolverError(f"Two dynamic skill resolvers returned a skill named {name!r}; rename one.")
            skills[str(name)] = _skill(str(name), skill, manifest.source)
    return skills


async def _resolve_all(
    session: Session, base: RuntimeAgent, event: str, turn: TurnState
) -> tuple[dict[str, RuntimeTool], dict[str, RuntimeSkill]]:
    context = await dynamic_context(session, event, turn)
    return await _resolve(base, event, context), await resolve_skills(base, event, context)


async def apply_dynamic_tools(session: Session, turn: TurnState, *, new_turn: bool) -> None:
    """Resolve what is missing and make the session's agent offer its and the turn's dynamic tools and skills.

    Called when a turn opens (`new_turn`) and when an actor takes up a turn in progress.
    """
    base = session.base_agent
    if not base.dynamic_tools and not base.dynamic_skills:
        return
    held = session.dynamic_tools
    if held.session is None:
        held.session, held.session_skills = await _resolve_all(session, base, "session.started", turn)
    if new_turn or held.turn_id != turn.turn_id:
        held.turn, held.turn_skills = await _resolve_all(session, base, "turn.started", turn)
        held.turn_id = turn.turn_id
    tools = {**base.tools, **held.session, **held.turn}
    skills = {**base.skills, **held.session_skills, **held.turn_skills}
    session.use_agent(dataclasses.replace(base, tools=tools, skills=skills))


async def restore_dynamic_tools(session: Session) -> None:
    """An actor takes up a turn in progress: resolve its dynamic tools again (a failure is logged)."""
    turn = session.state.turn
    if turn is None or not (session.agent.dynamic_tools or session.agent.dynamic_skills):
        return
    try:
        await apply_dynamic_tools(session, turn, new_turn=False)
    except ResolverError as exc:
        logger.warning(
            "session %s: its dynamic tools or skills could not be resolved again: %s", session.session_id, exc
        )
