"""`define_agent`: an agent's runtime configuration (`agent/agent.py`).

Every field of eve's `defineAgent` has a snake_case equivalent here. Nothing names the agent:
its name comes from the app folder (or `pyproject.toml`), a subagent's from its folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
)

from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.authoring.validation import validated
from eve_runtime.errors import DefinitionError, DefinitionProblem

__all__ = [
    "DEFAULT_MAX_INPUT_TOKENS_PER_SESSION",
    "DEFAULT_SESSION_TIMEOUT_MS",
    "DEFAULT_SUBAGENT_TIMEOUT_MS",
    "AgentConfig",
    "BuiltInToolsPolicy",
    "CompactionConfig",
    "ExperimentalConfig",
    "LimitsConfig",
    "Reasoning",
    "TelemetryConfig",
    "WorkflowConfig",
    "define_agent",
]

DEFAULT_SESSION_TIMEOUT_MS = 30 * 24 * 60 * 60 * 1000
"""30 days: how long a session lives, counted from its creation."""
DEFAULT_MAX_INPUT_TOKENS_PER_SESSION = 40_000_000
"""The input-token cap of root sessions unless the agent sets another."""
DEFAULT_SUBAGENT_TIMEOUT_MS = 2 * 60 * 60 * 1000
"""2 hours of active time per delegated call."""

Reasoning = Literal["provider-default", "none", "minimal", "low", "medium", "high", "xhigh"]
"""Provider-neutral reasoning effort."""


def _zero_is_not_false(value: object) -> object:
    # `0 == False`, so pydantic's `Literal[False]` accepts 0 and 0.0: a limit of 0 would silently mean "no limit".
    if not isinstance(value, bool) and isinstance(value, int | float) and value == 0:
        raise ValueError("must be greater than 0 (use False to turn it off)")
    return value


_NotZero = BeforeValidator(_zero_is_not_false)
PositiveInt = Annotated[StrictInt, Field(gt=0)]
PositiveIntOrOff = Annotated[PositiveInt | Literal[False], _NotZero]
TokenLimit = Annotated[PositiveInt | Literal[False] | None, _NotZero]
CostLimit = Annotated[Annotated[StrictFloat | StrictInt, Field(gt=0)] | Literal[False] | None, _NotZero]


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CompactionConfig(_Config):
    """When eve compacts older turns of a session."""

    threshold_percent: Annotated[StrictFloat | StrictInt, Field(gt=0, le=1)] = 0.9
    """Compact once the estimated context use crosses this fraction of the model's context window."""


class LimitsConfig(_Config):
    """Per-session caps. `False` turns a cap off; None keeps eve's default."""

    max_input_tokens_per_session: TokenLimit = None
    """Default 40,000,000 on root sessions. Crossing it pauses the session with a continue/stop prompt."""
    max_output_tokens_per_session: TokenLimit = None
    max_token_cost_usd_per_session: CostLimit = None
    session_timeout_ms: PositiveIntOrOff = DEFAULT_SESSION_TIMEOUT_MS
    """Session lifetime from creation (30 days); `False` means no timeout."""


class WorkflowConfig(_Config):
    """How the agent's durable workflow runs."""

    world: Literal["local", "postgres"] | None = None
    """The workflow world (root agent only): `local` (SQLite in `.eve/workflow-data`) or `postgres`."""
    model_calls_per_step: PositiveInt = 1
    """Sequential model calls batched into one durable step."""
    retention: Annotated[StrictInt, Field(ge=0)] | None = None
    """How long finished runs are kept, in ms (`0` deletes them when they finish); None = the world's default."""


class ExperimentalConfig(_Config):
    """Options eve marks experimental."""

    workflow: WorkflowConfig = WorkflowConfig()


class TelemetryConfig(_Config):
    """What the agent's spans record beyond their structure (eve's `recordInputs` / `recordOutputs`).

    None follows eve: recorded under `eve dev`, not in production. Secrets are masked either way.
    """

    record_inputs: StrictBool | None = None
    """Put prompts (the messages a model call reads, tool arguments) on spans."""
    record_outputs: StrictBool | None = None
    """Put outputs (the model's replies and tool calls, tool results) on spans."""


class BuiltInToolsPolicy(_Config):
    """An allowlist of framework tools; the ones it omits are denied by policy."""

    allow: list[str]


class AgentConfig(_Config):
    """An agent's validated configuration, as made by [`define_agent`][eve_runtime.define_agent]."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: Any = None
    """A model id string (`test`, `openai/gpt-4o`, any litellm id), a `define_dynamic` resolver, or a Model instance."""
    description: str | None = None
    reasoning: Reasoning | None = None
    model_options: dict[str, Any] = Field(default_factory=dict)
    model_context_window_tokens: PositiveInt | None = None
    compaction: CompactionConfig = CompactionConfig()
    limits: LimitsConfig = LimitsConfig()
    output_schema: dict[str, Any] | None = None
    """JSON Schema of the structured result (for subagent, schedule or remote calls)."""
    experimental: ExperimentalConfig = ExperimentalConfig()
    tool: StrictBool = True
    """Expose this agent to its parent as a tool (on the root: the built-in `agent` tool)."""
    timeout: PositiveIntOrOff | None = None
    """Limit of one delegated call in ms (default 2 hours); `False` for none."""
    default_tools: StrictBool = True
    """`False` removes the optional framework tools."""
    built_in_tools: BuiltInToolsPolicy | None = None
    telemetry: TelemetryConfig = TelemetryConfig()
    """What spans record: `record_inputs`, `record_outputs` (see `docs/telemetry.md`)."""

    @field_validator("description")
    @classmethod
    def _description_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value


def _normalize_model(model: object) -> object:
    if model is None or isinstance(model, DynamicResolver):
        return model
    if isinstance(model, str):
        if not model.strip() or model != model.strip():
            raise DefinitionError(
                f"define_agent(): invalid field 'model': {model!r} is not a model id such as 'test' or 'openai/gpt-4o'",
                field="model",
            )
        return model
    from eve_runtime.models.base import Model  # not at import time: it pulls in asyncio

    if isinstance(model, Model):
        return model
    raise DefinitionError(
        "define_agent(): invalid field 'model': expected a model id string, a define_dynamic() resolver "
        f"or a Model instance, got {type(model).__name__}",
        field="model",
    )


def _normalize_schema(schema: object) -> dict[str, Any] | None:
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, Mapping):
        return dict(schema)
    raise DefinitionError(
        "define_agent(): invalid field 'output_schema': expected a JSON Schema dict or a pydantic model class",
        field="output_schema",
    )


def define_agent(
    *,
    model: object = None,
    description: str | None = None,
    reasoning: Reasoning | None = None,
    model_options: Mapping[str, Any] | None = None,
    model_context_window_tokens: int | None = None,
    compaction: CompactionConfig | Mapping[str, Any] | None = None,
    limits: LimitsConfig | Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | type[BaseModel] | None = None,
    experimental: ExperimentalConfig | Mapping[str, Any] | None = None,
    tool: bool = True,
    timeout: int | Literal[False] | None = None,
    default_tools: bool = True,
    built_in_tools: BuiltInToolsPolicy | Mapping[str, Any] | None = None,
    telemetry: TelemetryConfig | Mapping[str, Any] | None = None,
) -> AgentConfig:
    """Configure an agent. Assign the result to `agent` in `agent/agent.py`.

    Args:
        model: The model: a litellm id (`anthropic/claude-sonnet-4-5`), `test` for the offline
            model, a `define_dynamic` resolver, or a Model instance. Required in `agent.py`.
        description: What the agent does; required for subagents (their parent sees it).
        reasoning: Reasoning effort, `provider-default`, `none`, `minimal`, `low`, `medium`, `high` or `xhigh`.
        model_options: Extra keyword arguments for every model call.
        model_context_window_tokens: The model's context window, when litellm does not know it.
        compaction: `{"threshold_percent": 0.9}`: when to compact older turns.
        limits: Session caps: `max_input_tokens_per_session`, `max_output_tokens_per_session`,
            `max_token_cost_usd_per_session`, `session_timeout_ms` (`False` turns one off).
        output_schema: JSON Schema (or pydantic model) of a structured result.
        experimental: `{"workflow": {"world": "local"|"postgres", "model_calls_per_step": 1, "retention": ms}}`.
        tool: Expose this agent to its parent as a tool.
        timeout: Limit of one delegated call to this agent, in ms, or `False`.
        default_tools: `False` drops the optional framework tools.
        built_in_tools: `{"allow": [...]}`: the framework tools allowed.
        telemetry: `{"record_inputs": bool, "record_outputs": bool}`: whether spans carry prompts and
            outputs (eve's `recordInputs`/`recordOutputs`; default: under `eve dev` only).

    Returns:
        The validated configuration.

    Raises:
        DefinitionError: A field is invalid; the message names it.

    Example:
        ```python
        from eve_runtime import define_agent

        agent = define_agent(model="openai/gpt-4o-mini", limits={"max_output_tokens_per_session": 200_000})
        ```
    """
    earlier: list[DefinitionProblem] = []  # every problem is reported at once, these with pydantic's
    normalized_model = _normalized(_normalize_model, model, earlier)
    schema = _normalized(_normalize_schema, output_schema, earlier)
    fields: dict[str, Any] = {
        "model": normalized_model,
        "description": description,
        "reasoning": reasoning,
        "model_options": dict(model_options) if isinstance(model_options, Mapping) else model_options or {},
        "model_context_window_tokens": model_context_window_tokens,
        "output_schema": schema,
        "tool": tool,
        "timeout": timeout,
        "default_tools": default_tools,
    }
    for name, value in (
        ("compaction", compaction),
        ("limits", limits),
        ("experimental", experimental),
        ("built_in_tools", built_in_tools),
        ("telemetry", telemetry),
    ):
        if value is not None:
            fields[name] = value
    return validated("define_agent", lambda: AgentConfig.model_validate(fields), model=AgentConfig, earlier=earlier)


def _normalized(normalize: Callable[[Any], Any], value: object, problems: list[DefinitionProblem]) -> Any:
    """`normalize(value)`, or None with its problems added to `problems`."""
    try:
        return normalize(value)
    except DefinitionError as exc:
        problems.extend(exc.problems)
        return None
