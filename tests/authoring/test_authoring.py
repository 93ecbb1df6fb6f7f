"""The public authoring API (`eve_runtime.__all__`) on its own: validation and what each `define_*` returns."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

import eve_runtime
from eve_runtime import (
    AgentConfig,
    DefinitionError,
    DisabledTool,
    DynamicResolver,
    Hook,
    Instructions,
    Schedule,
    Skill,
    ToolContext,
    ToolOptions,
    UserError,
    define_agent,
    define_dynamic,
    define_hook,
    define_instructions,
    define_schedule,
    define_skill,
    disable_tool,
    tool,
)
from eve_runtime.authoring.config import DEFAULT_SESSION_TIMEOUT_MS
from eve_runtime.authoring.schedules import APP_AUTH, cron_problem, fires_after, is_schedule_auth, latest_fire
from eve_runtime.authoring.skills import SkillHandle, describe_markdown
from eve_runtime.authoring.tools import tool_options
from eve_runtime.models.base import ModelEvent, ModelRequest
from eve_runtime.project.frontmatter import FrontmatterError, parse_markdown


def handler(*args: Any) -> None:
    return None


def definition_error(call: Any, *args: Any, **kwargs: Any) -> DefinitionError:
    """Call `call` and return the `DefinitionError` it must raise."""
    with pytest.raises(DefinitionError) as info:
        call(*args, **kwargs)
    return info.value


def test_public_names() -> None:
    assert set(eve_runtime.__all__) >= {
        "define_agent",
        "define_dynamic",
        "define_hook",
        "define_instructions",
        "define_schedule",
        "define_skill",
        "disable_tool",
        "tool",
        "DefinitionError",
    }
    for name in eve_runtime.__all__:
        assert hasattr(eve_runtime, name), name
    assert issubclass(DefinitionError, UserError)


# --- define_agent -------------------------------------------------------------------------------


def test_define_agent_defaults() -> None:
    config = define_agent(model="test")
    assert isinstance(config, AgentConfig)
    assert config.model == "test"
    assert config.compaction.threshold_percent == 0.9
    assert config.limits.session_timeout_ms == DEFAULT_SESSION_TIMEOUT_MS == 2_592_000_000
    assert config.limits.max_input_tokens_per_session is None  # the 40M root default is applied by the compiler
    assert config.limits.max_output_tokens_per_session is None
    assert config.limits.max_token_cost_usd_per_session is None
    assert config.experimental.workflow.model_calls_per_step == 1
    assert config.experimental.workflow.world is None
    assert config.tool is True and config.default_tools is True
    assert config.built_in_tools is None and config.timeout is None and config.description is None


def test_define_agent_without_model_is_allowed_here() -> None:
    # the compiler reports compile/agent-model-missing; define_agent itself accepts it
    assert define_agent().model is None


def test_define_agent_is_frozen() -> None:
    config = define_agent(model="test")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        config.model = "other"


def test_define_agent_full() -> None:
    config = define_agent(
        model="openai/gpt-4o-mini",
        description="Does things.",
        reasoning="xhigh",
        model_options={"temperature": 0.2},
        model_context_window_tokens=128_000,
        compaction={"threshold_percent": 1},
        limits={
            "max_input_tokens_per_session": False,
            "max_output_tokens_per_session": 10,
            "max_token_cost_usd_per_session": 1.5,
            "session_timeout_ms": False,
        },
        experimental={"workflow": {"world": "postgres", "model_calls_per_step": 3, "retention": 0}},
        tool=False,
        timeout=False,
        default_tools=False,
        built_in_tools={"allow": ["bash"]},
    )
    assert config.reasoning == "xhigh"
    assert config.model_options == {"temperature": 0.2}
    assert config.limits.max_input_tokens_per_session is False
    assert config.limits.max_token_cost_usd_per_session == 1.5
    assert config.limits.session_timeout_ms is False
    assert config.experimental.workflow.world == "postgres"
    assert config.experimental.workflow.retention == 0
    assert config.built_in_tools is not None and config.built_in_tools.allow == ["bash"]
    assert config.timeout is False and config.tool is False and config.default_tools is False


@pytest.mark.parametrize("reasoning", ["provider-default", "none", "minimal", "low", "medium", "high", "xhigh"])
def test_reasoning_values(reasoning: Any) -> None:
    assert define_agent(model="test", reasoning=reasoning).reasoning == reasoning


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reasoning": "max"}, "reasoning"),
        ({"reasoning": "HIGH"}, "reasoning"),
        ({"description": ""}, "description"),
        ({"description": "   "}, "description"),
        ({"description": 3}, "description"),
        ({"model_context_window_tokens": 0}, "model_context_window_tokens"),
        ({"model_context_window_tokens": True}, "model_context_window_tokens"),
        ({"compaction": {"threshold_percent": 0}}, "compaction.threshold_percent"),
        ({"compaction": {"threshold_percent": 1.01}}, "compaction.threshold_percent"),
        ({"compaction": {"threshold_percent": -0.5}}, "compaction.threshold_percent"),
        ({"compaction": {"threshold_percent": True}}, "compaction.threshold_percent"),
        ({"compaction": {"threshold_percent": "0.5"}}, "compaction.threshold_percent"),
        ({"compaction": {"thresholdPercent": 0.5}}, "compaction.thresholdPercent"),
        ({"limits": {"session_timeout_ms": True}}, "limits.session_timeout_ms"),
        ({"limits": {"session_timeout_ms": 0}}, "limits.session_timeout_ms"),
        ({"limits": {"session_timeout_ms": 1.5}}, "limits.session_timeout_ms"),
        ({"limits": {"session_timeout_ms": None}}, "limits.session_timeout_ms"),
        ({"limits": {"max_input_tokens_per_session": True}}, "limits.max_input_tokens_per_session"),
        ({"limits": {"max_input_tokens_per_session": -1}}, "limits.max_input_tokens_per_session"),
        ({"limits": {"max_output_tokens_per_session": "100"}}, "limits.max_output_tokens_per_session"),
        ({"limits": {"max_token_cost_usd_per_session": 0}}, "limits.max_token_cost_usd_per_session"),
        ({"limits": {"max_token_cost_usd_per_session": 0.0}}, "limits.max_token_cost_usd_per_session"),
        ({"limits": {"max_input_tokens_per_session": 0}}, "limits.max_input_tokens_per_session"),
        ({"limits": {"max_output_tokens_per_session": 0}}, "limits.max_output_tokens_per_session"),
        ({"limits": {"max_token_cost_usd_per_session": True}}, "limits.max_token_cost_usd_per_session"),
        ({"limits": {"max_subagent_depth": 3}}, "limits.max_subagent_depth"),
        ({"experimental": {"workflow": {"world": "@workflow/world-postgres"}}}, "experimental.workflow.world"),
        ({"experimental": {"workflow": {"world": "sqlite"}}}, "experimental.workflow.world"),
        ({"experimental": {"workflow": {"model_calls_per_step": 0}}}, "experimental.workflow.model_calls_per_step"),
        ({"experimental": {"workflow": {"model_calls_per_step": True}}}, "experimental.workflow.model_calls_per_step"),
        ({"experimental": {"workflow": {"model_calls_per_step": 1.0}}}, "experimental.workflow.model_calls_per_step"),
        ({"experimental": {"workflow": {"retention": -1}}}, "experimental.workflow.retention"),
        ({"experimental": {"workflow": {"retention": True}}}, "experimental.workflow.retention"),
        ({"experimental": {"flags": True}}, "experimental.flags"),
        ({"tool": "yes"}, "tool"),
        ({"tool": 1}, "tool"),
        ({"default_tools": 0}, "default_tools"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": 0.0}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"built_in_tools": {"allow": "bash"}}, "built_in_tools.allow"),
        ({"built_in_tools": {"allow": ["bash"], "deny": []}}, "built_in_tools.deny"),
        ({"built_in_tools": {}}, "built_in_tools.allow"),
        ({"model_options": {"a": 1}, "limits": 5}, "limits"),
    ],
)
def test_define_agent_rejects_bad_fields(kwargs: dict[str, Any], field: str) -> None:
    error = definition_error(define_agent, model="test", **kwargs)
    assert error.field == field
    assert repr(field) in str(error)
    assert str(error).startswith("define_agent(): invalid field")


def test_zero_is_not_false() -> None:
    # 0 == False in Python; a limit of 0 must be rejected, never read as "turned off"
    error = definition_error(define_agent, model="test", limits={"max_token_cost_usd_per_session": 0})
    assert "False" in str(error)
    config = define_agent(model="test", limits={"max_token_cost_usd_per_session": 0.01}, timeout=1)
    assert config.limits.max_token_cost_usd_per_session == 0.01
    assert config.timeout == 1


def test_unknown_field_message_points_at_snake_case() -> None:
    error = definition_error(define_agent, model="test", limits={"sessionTimeoutMs": 5})
    assert error.field == "limits.sessionTimeoutMs"
    assert "unknown field" in str(error)


def test_every_bad_field_is_a_problem_of_its_own() -> None:
    error = definition_error(define_agent, model="test", reasoning="max", tool="no", default_tools="no")
    assert error.field == "reasoning"
    assert [problem.field for problem in error.problems] == ["reasoning", "tool", "default_tools"]
    assert all(problem.message.startswith("define_agent(): invalid field") for problem in error.problems)
    assert str(error).splitlines() == [problem.message for problem in error.problems]


def test_a_bad_model_is_reported_with_the_other_bad_fields() -> None:
    error = definition_error(define_agent, model=42, limits={"session_timeout_ms": 0}, output_schema="x")
    assert [problem.field for problem in error.problems] == ["model", "output_schema", "limits.session_timeout_ms"]


def test_one_field_with_two_failing_union_members_is_one_problem() -> None:
    error = definition_error(define_agent, model="test", limits={"session_timeout_ms": -1})
    assert len(error.problems) == 1
    assert "greater than 0" in error.problems[0].message and "False" in error.problems[0].message


@pytest.mark.parametrize(
    ("kwargs", "suggestion"),
    [
        ({"limits": {"sesion_timeout_ms": 5}}, "session_timeout_ms"),
        ({"experimental": {"workflow": {"worl": "local"}}}, "world"),
        ({"compaction": {"threshold": 0.5}}, "threshold_percent"),
    ],
)
def test_an_unknown_nested_field_names_the_closest_one(kwargs: dict[str, Any], suggestion: str) -> None:
    error = definition_error(define_agent, model="test", **kwargs)
    assert f"did you mean {suggestion!r}?" in str(error)


def test_define_agent_takes_keywords_only() -> None:
    with pytest.raises(TypeError):
        define_agent("test")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        define_agent(model="test", name="bot")  # type: ignore[call-arg]


class _Model:
    """A minimal object satisfying the `Model` protocol."""

    @property
    def model_id(self) -> str:
        return "custom"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return
        yield


def test_model_types() -> None:
    assert define_agent(model="anthropic/claude-sonnet-4-5").model == "anthropic/claude-sonnet-4-5"
    resolver = define_dynamic({"session.started": handler})
    assert define_agent(model=resolver).model is resolver
    model = _Model()
    assert define_agent(model=model).model is model


@pytest.mark.parametrize("model", ["", "  ", " test", "test\n", 42, ["test"], object()])
def test_bad_model(model: object) -> None:
    assert definition_error(define_agent, model=model).field == "model"


class Verdict(BaseModel):
    score: int
    reason: str = ""


def test_output_schema() -> None:
    schema = define_agent(model="test", output_schema=Verdict).output_schema
    assert schema is not None
    assert schema["properties"]["score"]["type"] == "integer"
    assert schema["required"] == ["score"]
    raw = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert define_agent(model="test", output_schema=raw).output_schema == raw


@pytest.mark.parametrize("schema", ["object", 42, Verdict(score=1), int])
def test_bad_output_schema(schema: Any) -> None:
    assert definition_error(define_agent, model="test", output_schema=schema).field == "output_schema"


# --- define_instructions ------------------------------------------------------------------------


def test_define_instructions() -> None:
    assert define_instructions("Be brief.") == Instructions(content="Be brief.", role="system")
    assert define_instructions("Context.", role="user").role == "user"
    assert define_instructions("", role="system").content == ""


@pytest.mark.parametrize(
    ("args", "field"), [((3,), "content"), (("x", "assistant"), "role"), (("x", "SYSTEM"), "role")]
)
def test_bad_instructions(args: tuple[Any, ...], field: str) -> None:
    assert definition_error(define_instructions, *args).field == field


# --- @tool and disable_tool ---------------------------------------------------------------------


def test_bare_tool_returns_the_same_function() -> None:
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    decorated = tool(get_weather)
    assert decorated is get_weather
    assert tool_options(get_weather) == ToolOptions()
    assert decorated("Paris") == "Paris"


def test_tool_with_options_returns_the_same_function() -> None:
    def policy(arguments: dict[str, Any]) -> bool:
        return True

    async def pay(amount: float) -> str:
        return "ok"

    decorated = tool(needs_approval=policy, description="Pay.", ends_turn=True, to_model_output=str)(pay)
    assert decorated is pay
    assert tool_options(pay) == ToolOptions(
        needs_approval=policy, description="Pay.", ends_turn=True, to_model_output=str
    )


def test_undecorated_function_has_no_options() -> None:
    def plain() -> None:
        pass

    assert tool_options(plain) is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"needs_approval": "yes"}, "needs_approval"),
        ({"needs_approval": 1}, "needs_approval"),
        ({"description": ""}, "description"),
        ({"description": "  "}, "description"),
        ({"description": 5}, "description"),
        ({"ends_turn": "yes"}, "ends_turn"),
        ({"to_model_output": "str"}, "to_model_output"),
    ],
)
def test_bad_tool_options(kwargs: dict[str, Any], field: str) -> None:
    assert definition_error(tool, **kwargs).field == field


def test_tool_must_decorate_a_function() -> None:
    class NotAFunction:
        pass

    definition_error(tool, NotAFunction)
    definition_error(tool(), 42)


def test_disable_tool() -> None:
    assert isinstance(disable_tool(), DisabledTool)


# --- define_dynamic and define_hook -------------------------------------------------------------


def test_define_dynamic() -> None:
    resolver = define_dynamic({"turn.started": handler, "session.started": handler}, build=handler)
    assert isinstance(resolver, DynamicResolver)
    assert resolver.event_names == ["session.started", "turn.started"]
    assert resolver.build is handler


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        (({},), {}, "events"),
        (([("session.started", handler)],), {}, "events"),
        (({"session.begun": handler},), {}, "events"),
        (({"*": handler},), {}, "events"),
        (({1: handler},), {}, "events"),
        (({"session.started": "handler"},), {}, "events"),
        (({"session.started": handler},), {"build": "nope"}, "build"),
    ],
)
def test_bad_dynamic(args: tuple[Any, ...], kwargs: dict[str, Any], field: str) -> None:
    assert definition_error(define_dynamic, *args, **kwargs).field == field


def test_define_hook() -> None:
    hook = define_hook({"turn.completed": handler, "*": handler, "session.started": handler})
    assert isinstance(hook, Hook)
    assert hook.event_names == ["*", "session.started", "turn.completed"]


@pytest.mark.parametrize("events", [{}, {"turn.finished": handler}, {"turn.completed": None}, "turn.completed"])
def test_bad_hook(events: Any) -> None:
    assert definition_error(define_hook, events).field == "events"


# --- define_skill -------------------------------------------------------------------------------


def test_define_skill() -> None:
    skill = define_skill(
        description="  Plan a trip. ",
        markdown="# Steps",
        files={"references/api.md": "API", "scripts/run.sh": "echo"},
        license="MIT",
        metadata={"owner": "me"},
    )
    assert isinstance(skill, Skill)
    assert skill.description == "Plan a trip."
    assert dict(skill.files) == {"references/api.md": "API", "scripts/run.sh": "echo"}
    assert skill.license == "MIT" and dict(skill.metadata) == {"owner": "me"}
    assert define_skill(description="d", markdown="").files == {}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"description": ""}, "description"),
        ({"description": "  "}, "description"),
        ({"description": None}, "description"),
        ({"markdown": None}, "markdown"),
        ({"files": {"/etc/passwd": "x"}}, "files"),
        ({"files": {"../outside.md": "x"}}, "files"),
        ({"files": {"a/../../b": "x"}}, "files"),
        ({"files": {"ok.md": 3}}, "files"),
        ({"files": {"SKILL.md": "x"}}, "files"),
        ({"files": {"Skill.md": "x"}}, "files"),
        ({"metadata": {"count": 3}}, "metadata"),
    ],
)
def test_bad_skill(kwargs: dict[str, Any], field: str) -> None:
    arguments: dict[str, Any] = {"description": "d", "markdown": "m", **kwargs}
    assert definition_error(define_skill, **arguments).field == field


@pytest.mark.parametrize(
    ("body", "description"),
    [
        ("# Summarize\nMore", "Summarize"),
        ("\n\n  ## Plan a trip  \n", "Plan a trip"),
        ("> quoted", "quoted"),
        ("* starred", "starred"),
        ("- dashed", "dashed"),
        ("```python\nprint()\n```\n", "print()"),
        ("```\n```\nAfter the fence", "After the fence"),
        ("#\n-\n\n", "Instructions for the s skill."),
        ("#\nA later line is not tried", "Instructions for the s skill."),
        ("~~~\nOnly backtick fences", "~~~"),
        ("", "Instructions for the s skill."),
    ],
)
def test_describe_markdown(body: str, description: str) -> None:
    assert describe_markdown("s", body) == description


def test_a_skill_handle_reads_package_files() -> None:
    handle = SkillHandle("research", {"SKILL.md": b"# R", "references/api.md": "Ärger".encode()})
    assert handle.paths == ["SKILL.md", "references/api.md"]
    assert handle.file("references/api.md").text() == "Ärger"
    assert handle.file("SKILL.md").bytes() == b"# R"
    with pytest.raises(FileNotFoundError, match="no file 'references/missing.md'"):
        handle.file("references/missing.md").text()
    for bad in ("/etc/passwd", "../x", "a/../../b", "", "a//b", "a\\b"):
        with pytest.raises(ValueError, match="not a relative path inside the skill"):
            handle.file(bad)


def test_ctx_get_skill_asks_the_host() -> None:
    class Host:
        def skill(self, name: str) -> SkillHandle | None:
            return SkillHandle(name, {"SKILL.md": b"x"}) if name == "known" else None

    ctx = ToolContext("s", "t", 0, "c", "tool", host=Host())  # type: ignore[arg-type]
    assert ctx.get_skill("known").file("SKILL.md").text() == "x"
    with pytest.raises(LookupError, match="no skill named 'other'"):
        ctx.get_skill("other")
    with pytest.raises(RuntimeError, match="needs a running eve session"):
        ToolContext("s", "t", 0, "c", "tool").get_skill("known")


# --- define_schedule ----------------------------------------------------------------------------


def test_define_schedule() -> None:
    prompt = define_schedule(cron="0 14 * * 1", markdown="Weekly report.")
    assert prompt == Schedule(cron="0 14 * * 1", markdown="Weekly report.", run=None)
    coded = define_schedule(cron="*/5 * * * *", run=handler)
    assert coded.run is handler and coded.markdown is None


def test_missed_fires_run_the_latest_by_default_or_are_skipped() -> None:
    assert define_schedule(cron="0 9 * * *", markdown="Go.").missed == "latest"
    assert define_schedule(cron="0 9 * * *", markdown="Go.", missed="skip").missed == "skip"
    error = definition_error(define_schedule, cron="0 9 * * *", markdown="Go.", missed="all")
    assert error.field == "missed" and "'latest'" in str(error) and "'skip'" in str(error)


def test_the_app_principal_is_eves() -> None:
    assert (APP_AUTH.id, APP_AUTH.type, APP_AUTH.authenticator) == ("eve:app", "runtime", "app")
    assert is_schedule_auth(APP_AUTH)
    assert not is_schedule_auth(None)
    assert not is_schedule_auth(dataclasses.replace(APP_AUTH, authenticator="bearer"))


T_MONDAY = 1_767_600_000.0  # 2026-01-05 08:00:00 UTC, a Monday


def test_fire_times_are_whole_minutes_in_utc() -> None:
    assert fires_after("0 9 * * 1", T_MONDAY, 2) == [T_MONDAY + 3600, T_MONDAY + 3600 + 7 * 86400]
    assert fires_after("*/15 * * * *", T_MONDAY + 1, 2) == [T_MONDAY + 900, T_MONDAY + 1800]
    assert fires_after("*/15 * * * *", T_MONDAY, 1) == [T_MONDAY + 900]  # strictly after


def test_the_latest_fire_is_at_or_before_now() -> None:
    assert latest_fire("*/15 * * * *", T_MONDAY) == T_MONDAY  # a fire time is its own latest
    assert latest_fire("*/15 * * * *", T_MONDAY + 899.9) == T_MONDAY
    assert latest_fire("*/15 * * * *", T_MONDAY + 900) == T_MONDAY + 900
    assert latest_fire("0 9 * * 1", T_MONDAY) == T_MONDAY + 3600 - 7 * 86400


@pytest.mark.parametrize("cron", ["0 0 * * 0", "*/15 9-17 * * 1-5", "0 0 1 1 *", "30 2 * * sun"])
def test_valid_cron(cron: str) -> None:
    assert cron_problem(cron) is None
    assert define_schedule(cron=cron, markdown="Go.").cron == cron


@pytest.mark.parametrize(
    "cron", ["", "   ", "every day", "* * * *", "0 0 * * * *", "61 * * * *", "* 25 * * *", 5, None]
)
def test_bad_cron(cron: Any) -> None:
    assert cron_problem(cron) is not None
    assert definition_error(define_schedule, cron=cron, markdown="Go.").field == "cron"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "markdown"),
        ({"markdown": "Go.", "run": handler}, "markdown"),
        ({"markdown": ""}, "markdown"),
        ({"markdown": "   "}, "markdown"),
        ({"markdown": 3}, "markdown"),
        ({"run": "not callable"}, "run"),
    ],
)
def test_bad_schedule(kwargs: dict[str, Any], field: str) -> None:
    assert definition_error(define_schedule, cron="0 0 * * *", **kwargs).field == field


# --- frontmatter --------------------------------------------------------------------------------


def test_markdown_without_frontmatter() -> None:
    document = parse_markdown("# Title\n\nBody\n")
    assert document.frontmatter == {}
    assert document.body == "# Title\n\nBody\n"
    assert not document.has_frontmatter


def test_markdown_with_frontmatter() -> None:
    document = parse_markdown("\ufeff---\ncron: '0 0 * * 0'\ndescription: Hi\n---\nBody\n")
    assert document.has_frontmatter
    assert document.frontmatter == {"cron": "0 0 * * 0", "description": "Hi"}
    assert document.body == "Body\n"
    empty = parse_markdown("---\n---\nBody")
    assert empty.frontmatter == {} and empty.body == "Body" and empty.has_frontmatter


def test_a_later_rule_is_not_frontmatter() -> None:
    document = parse_markdown("Intro\n---\nkey: value\n---\n")
    assert not document.has_frontmatter
    assert document.frontmatter == {}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\ndescription: open\n", 1),
        ("---\n- a\n- b\n---\n", 2),
        ("---\njust text\n---\n", 2),
        ("---\nok: 1\nbad: [1, 2\n---\n", None),
        ("---\nok: 1\n  nested: : x\n---\n", 3),
    ],
)
def test_bad_frontmatter(text: str, line: int | None) -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_markdown(text)
    if line is not None:
        assert info.value.line == line


def test_define_state_validates_its_arguments() -> None:
    from eve_runtime import define_state

    with pytest.raises(DefinitionError) as info:
        define_state("", lambda: 0)
    assert info.value.field == "name"
    with pytest.raises(DefinitionError) as info:
        define_state("x", 0)  # type: ignore[arg-type]
    assert info.value.field == "initial"
    assert define_state("x", lambda: 0).name == "x"
