"""The framework's `load_skill` tool: what the model is told about skills, and loading one into the turn.

Every model call of an agent whose `load_skill` is active (it has skills, and no tool file
replaced or disabled it) gets the tool and an "Available skills" system message naming each
skill with its description. A `load_skill` call is answered at once, without a thread or an
approval: its result is the skill's markdown, followed by the list of its package files when it
has any, and that result is what the model reads, so the skill's instructions join the turn.

On the stream a load is a `load-skill` action (`actions.requested`) and a `load-skill-result`
(`action.result`), both carrying the skill's `name`; its input is never streamed (no
`action.input.appended`). The skills are the agent's own, with the dynamic skills its
resolvers returned for the session and the turn: a subagent sees only its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from eve_runtime.engine.ports import Session
from eve_runtime.events.actions import ActionResult, requested_skill
from eve_runtime.events.catalog import StepAt
from eve_runtime.messages import SystemMessage, ToolCall
from eve_runtime.models.base import ToolDefinition
from eve_runtime.outcomes import ToolOutcome, failed_outcome
from eve_runtime.project.builtin_tools import builtin_tool
from eve_runtime.project.runtime_agent import RuntimeAgent, RuntimeSkill

__all__ = [
    "LOAD_SKILL",
    "load_skills",
    "quiet_tools",
    "skill_calls",
    "skill_loader_active",
    "skill_outcome",
    "skill_text",
    "skill_tools",
    "skills_message",
]

LOAD_SKILL = "load_skill"

SKILLS_INTRO = (
    "Available skills. When a request matches a skill's description, or someone asks for a skill, call "
    "load_skill with its name first: its instructions are added to this turn."
)


def skill_loader_active(agent: RuntimeAgent) -> bool:
    """Whether the framework's `load_skill` serves this agent (its status is `active`)."""
    return agent.derive(
        "skill_loader_active",
        lambda: any(f.name == LOAD_SKILL and f.status == "active" for f in agent.manifest.framework_tools),
    )


def skill_calls(agent: RuntimeAgent, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls of a step that load skills (none when an authored tool took the name)."""
    if not skill_loader_active(agent):
        return []
    return [call for call in calls if call.name == LOAD_SKILL]


def quiet_tools(agent: RuntimeAgent) -> frozenset[str]:
    """Tools whose input the model streams without `action.input.appended` events."""
    return frozenset({LOAD_SKILL}) if skill_loader_active(agent) else frozenset()


def skill_tools(agent: RuntimeAgent) -> list[ToolDefinition]:
    """`load_skill` as the model is offered it (only while the agent has a skill to load)."""
    builtin = builtin_tool(LOAD_SKILL)
    if builtin is None or not agent.skills or not skill_loader_active(agent):
        return []
    return [ToolDefinition(name=builtin.name, description=builtin.description, input_schema=builtin.input_schema)]


def skills_message(agent: RuntimeAgent) -> SystemMessage | None:
    """The "Available skills" block: one line per skill, `- <name>: <description>`, sorted by name."""
    text = agent.derive("skills_text", lambda: _skills_text(agent))
    return None if text is None else SystemMessage(content=text)  # a new message each call, as instructions are


def _skills_text(agent: RuntimeAgent) -> str | None:
    if not agent.skills or not skill_loader_active(agent):
        return None
    lines = [f"- {name}: {' '.join(agent.skills[name].manifest.description.split())}" for name in sorted(agent.skills)]
    return "\n".join([SKILLS_INTRO, *lines])


def skill_text(skill: RuntimeSkill) -> str:
    """What loading a skill returns: its markdown, then its package files, if it has any."""
    manifest = skill.manifest
    if not manifest.files:
        return manifest.markdown
    listing = "\n".join(f"- {path}" for path in manifest.files)
    return (
        f"{manifest.markdown.rstrip()}\n\n"
        f"This skill's files, relative to its folder $HOME/.agents/skills/{manifest.name}/ in the sandbox:\n"
        f"{listing}\n"
    )


def skill_outcome(agent: RuntimeAgent, call: ToolCall) -> ToolOutcome:
    """The result of one `load_skill` call: the skill's text, or why there is none."""
    name = requested_skill(call)
    extra = set(call.arguments) - {"skill"} if call.invalid_arguments is None else set()
    if name is None or extra:
        return failed_outcome(
            call, "INVALID_TOOL_INPUT", 'load_skill takes {"skill": "<name>"}, the name of one of the available skills.'
        )
    skill = agent.skills.get(name)
    if skill is None:
        available = ", ".join(sorted(agent.skills))
        hint = f" Available skills: {available}." if available else ""
        return failed_outcome(call, "SKILL_NOT_FOUND", f'No skill named "{name}".{hint}')
    text = skill_text(skill)
    return ToolOutcome(call=call, status="completed", output=text, model_content=text)


def load_skills(session: Session, calls: Sequence[ToolCall], at: StepAt) -> dict[str, ToolOutcome]:
    """Answer a step's `load_skill` calls, each with its `load-skill-result`; outcomes by call id."""
    outcomes: dict[str, ToolOutcome] = {}
    for call in calls:
        outcome = skill_outcome(session.agent, call)
        outcomes[call.id] = outcome
        session.emit(ActionResult(at, outcome, load_skill=True))
    return outcomes
