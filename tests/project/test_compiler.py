"""The compiler: every `compile/*` code, the manifest it produces, and the artifacts it writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.compiler import CompiledApp, compile_app
from eve_runtime.project.info import agent_info, cli_info
from eve_runtime.project.manifest import AgentManifest, FrameworkStatus
from tests.helpers import (
    INSTRUCTIONS_MD,
    MINIMAL_APP,
    app_modules,
    codes,
    compiled,
    errors,
    find,
    only,
    write_app,
)

SUBAGENT_PY = """\
from eve_runtime import define_agent

agent = define_agent(model="test", description="Researches things.")
"""

TOOL_PY = '''\
def {name}(city: str) -> str:
    """Look up {name} for a city."""
    return city
'''

OPTIONAL_DEFAULTS = ["bash", "read_file", "write_file", "web_fetch", "web_search", "agent"]


def tool(name: str) -> str:
    return TOOL_PY.format(name=name)


def agent_py(arguments: str) -> str:
    return f"from eve_runtime import define_agent\n\nagent = define_agent({arguments})\n"


def build(tmp_path: Path, files: dict[str, str | bytes], *, base: bool = True, write: bool = False) -> CompiledApp:
    """Compile an app made of `files` (on top of a minimal root agent unless `base` is False), then release it."""
    app = write_app(tmp_path, {**(MINIMAL_APP if base else {}), **files})
    with compiled(app, write=write) as result:
        return result


def ok(result: CompiledApp) -> AgentManifest:
    """The root manifest of an app that must compile cleanly."""
    assert errors(result.diagnostics) == [], [(d.code, d.message) for d in result.diagnostics]
    assert result.ok and result.manifest.status == "ready"
    assert result.manifest.root is not None
    return result.manifest.root


def failed(result: CompiledApp, code: str) -> Diagnostic:
    """The one error `code` of an app that must fail."""
    assert not result.ok and result.root is None
    assert result.manifest.status == "failed"
    diagnostic = only(result.diagnostics, code)
    assert diagnostic.severity == "error"
    return diagnostic


def statuses(agent: AgentManifest) -> dict[str, FrameworkStatus]:
    return {entry.name: entry.status for entry in agent.framework_tools}


def child(agent: AgentManifest, name: str) -> AgentManifest:
    return next(sub for sub in agent.subagents if sub.name == name)


# --- compile/* codes ----------------------------------------------------------------------------


def test_module_import_failed_in_a_tool(tmp_path: Path) -> None:
    result = build(
        tmp_path, {"agent/tools/bad.py": "raise RuntimeError('boom')\n", "agent/tools/good.py": tool("good")}
    )
    diagnostic = failed(result, "compile/module-import-failed")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "tools" / "bad.py")
    assert diagnostic.line == 1
    # the rest of the agent is still described
    assert result.manifest.root is not None
    assert [t.name for t in result.manifest.root.tools] == ["good"]


def test_module_import_failed_in_agent_py_leaves_no_root(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/agent.py": "import eve_test_missing_package\n"})
    diagnostic = failed(result, "compile/module-import-failed")
    assert diagnostic.line == 1
    assert result.manifest.root is None


def test_definition_invalid(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/agent.py": agent_py('model="test", limits={"session_timeout_ms": True}')})
    diagnostic = failed(result, "compile/definition-invalid")
    assert diagnostic.line == 3
    assert "limits.session_timeout_ms" in diagnostic.message


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("agent.py", "from eve_runtime import define_agent\n"),
        ("tools/t.py", "def other(x: int) -> int:\n    '''Doc.'''\n    return x\n"),
        ("tools/not_callable.py", "not_callable = 42\n"),
        ("hooks/h.py", "X = 1\n"),
        ("instructions/extra.py", "TEXT = 'not defined with define_instructions'\n"),
        ("skills/s.py", "X = 1\n"),
        ("schedules/s.py", "X = 1\n"),
    ],
)
def test_definition_missing(tmp_path: Path, path: str, content: str) -> None:
    result = build(tmp_path, {f"agent/{path}": content})
    diagnostic = failed(result, "compile/definition-missing")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / path)


@pytest.mark.parametrize(
    ("path", "content"),
    [
        (
            "agent.py",
            'from eve_runtime import define_agent\n\nfast = define_agent(model="test")\n'
            'slow = define_agent(model="test", reasoning="high")\n',
        ),
        (
            "tools/t.py",
            "from eve_runtime import tool\n\n@tool\ndef a() -> None:\n    '''A.'''\n\n@tool\ndef b() -> None:\n"
            "    '''B.'''\n",
        ),
        (
            "hooks/h.py",
            "from eve_runtime import define_hook\n\none = define_hook({'*': print})\ntwo = define_hook({'*': print})\n",
        ),
    ],
)
def test_definition_ambiguous(tmp_path: Path, path: str, content: str) -> None:
    result = build(tmp_path, {f"agent/{path}": content})
    failed(result, "compile/definition-ambiguous")


def test_agent_named_agent_wins_over_other_configs(tmp_path: Path) -> None:
    content = (
        'from eve_runtime import define_agent\n\nbase = define_agent(model="test")\n'
        'agent = define_agent(model="test/other", reasoning="low")\n'
    )
    root = ok(build(tmp_path, {"agent/agent.py": content}))
    assert root.model.id == "test/other"
    assert root.config_source.export_name == "agent"


def test_the_same_config_under_two_names_is_not_ambiguous(tmp_path: Path) -> None:
    content = 'from eve_runtime import define_agent\n\nconfig = define_agent(model="test")\nalias = config\n'
    root = ok(build(tmp_path, {"agent/agent.py": content}))
    assert root.config_source.export_name == "config"


def test_agent_model_missing(tmp_path: Path) -> None:
    diagnostic = failed(build(tmp_path, {"agent/agent.py": agent_py("")}), "compile/agent-model-missing")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "agent.py")


def test_subagent_description_missing(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/subagents/researcher/agent.py": agent_py('model="test"')})
    diagnostic = failed(result, "compile/subagent-description-missing")
    assert diagnostic.node_id == "subagents/researcher"


def test_world_is_root_only(tmp_path: Path) -> None:
    world = 'experimental={"workflow": {"world": "local"}}'
    result = build(
        tmp_path,
        {
            "agent/agent.py": agent_py(f'model="test", {world}'),
            "agent/subagents/researcher/agent.py": agent_py(f'model="test", description="R.", {world}'),
        },
    )
    diagnostic = failed(result, "compile/root-only-field")
    assert diagnostic.node_id == "subagents/researcher"


def test_disable_unknown_tool(tmp_path: Path) -> None:
    content = "from eve_runtime import disable_tool\n\nnot_a_builtin = disable_tool()\n"
    failed(build(tmp_path, {"agent/tools/not_a_builtin.py": content}), "compile/tool-disable-unknown")


def test_connection_search_cannot_be_disabled(tmp_path: Path) -> None:
    content = "from eve_runtime import disable_tool\n\nconnection_search = disable_tool()\n"
    failed(build(tmp_path, {"agent/tools/connection_search.py": content}), "compile/tool-disable-forbidden")


def test_subagent_and_tool_with_the_same_name_collide(tmp_path: Path) -> None:
    result = build(
        tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY, "agent/tools/researcher.py": tool("researcher")}
    )
    diagnostic = failed(result, "compile/subagent-tool-collision")
    assert diagnostic.node_id == "__root__"


def test_subagent_and_dynamic_tool_with_the_same_name_collide(tmp_path: Path) -> None:
    dynamic = (
        "from eve_runtime import define_dynamic\n\nresearcher = define_dynamic({'session.started': lambda ctx: {}})\n"
    )
    result = build(tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY, "agent/tools/researcher.py": dynamic})
    failed(result, "compile/subagent-tool-collision")


@pytest.mark.parametrize(
    "signature", ["*args: str", "**kwargs: str", "x: int, /", "_private: int", "value: 'NoSuchType'"]
)
def test_tool_schema_invalid(tmp_path: Path, signature: str) -> None:
    content = f"def t({signature}) -> None:\n    '''Doc.'''\n"
    diagnostic = failed(build(tmp_path, {"agent/tools/t.py": content}), "compile/tool-schema-invalid")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "tools" / "t.py")


def test_tool_description_missing(tmp_path: Path) -> None:
    content = "X = 1\n\n\ndef t(x: int) -> int:\n    return x\n"
    diagnostic = failed(build(tmp_path, {"agent/tools/t.py": content}), "compile/tool-description-missing")
    assert diagnostic.line == 4


@pytest.mark.parametrize(
    ("path", "content", "line"),
    [
        ("skills/s.md", "---\ndescription: never closed\n", 1),
        ("skills/s.md", "---\ndescription: [unbalanced\n---\nBody\n", None),
        ("schedules/nightly.md", "---\ncron: '0 0 * * *'\n  bad: : indent\n---\nGo.\n", 3),
        ("schedules/nightly.md", "---\n- a list\n---\nGo.\n", 2),
    ],
)
def test_frontmatter_invalid(tmp_path: Path, path: str, content: str, line: int | None) -> None:
    diagnostic = failed(build(tmp_path, {f"agent/{path}": content}), "compile/frontmatter-invalid")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / path)
    if line is not None:
        assert diagnostic.line == line


@pytest.mark.parametrize(
    "content",
    [
        "---\ncron: 'every day'\n---\nGo.\n",
        "---\ncron: '0 0 * * * *'\n---\nGo.\n",
        "---\ncron: '61 0 * * *'\n---\nGo.\n",
        "---\ncron: 5\n---\nGo.\n",
        "---\ntitle: no cron\n---\nGo.\n",
        "No frontmatter, so no cron.\n",
        "---\ncron: '0 0 * * *'\n---\n\n   \n",
        "---\ncron: '0 0 * * *'\nmissed: always\n---\nGo.\n",
    ],
)
def test_schedule_invalid(tmp_path: Path, content: str) -> None:
    diagnostic = failed(build(tmp_path, {"agent/schedules/nightly.md": content}), "compile/schedule-invalid")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "schedules" / "nightly.md")


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("agent.py", agent_py("model=define_dynamic({'turn.completed': lambda ctx: 'test'})")),
        (
            "instructions/dynamic.py",
            "from eve_runtime import define_dynamic\n\nx = define_dynamic({'step.started': lambda ctx: 'Hi.'})\n",
        ),
        (
            "tools/github.py",
            "from eve_runtime import define_dynamic\n\ngithub = define_dynamic({'turn.completed': lambda ctx: {}})\n",
        ),
    ],
)
def test_dynamic_event_unsupported(tmp_path: Path, path: str, content: str) -> None:
    content = content.replace(
        "from eve_runtime import define_agent", "from eve_runtime import define_agent, define_dynamic"
    )
    diagnostic = failed(build(tmp_path, {f"agent/{path}": content}), "compile/dynamic-event-unsupported")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / path)


def test_built_in_tools_unknown_is_a_warning(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/agent.py": agent_py('model="test", built_in_tools={"allow": ["bash", "nope"]}')})
    root = ok(result)
    diagnostic = only(result.diagnostics, "compile/built-in-tools-unknown")
    assert diagnostic.severity == "warning"
    assert statuses(root)["bash"] != "denied-by-policy"


@pytest.mark.parametrize("path", ["instructions.md", "instructions/extra.md", "skills/s.md", "schedules/s.md"])
def test_source_unreadable(tmp_path: Path, path: str) -> None:
    result = build(tmp_path, {f"agent/{path}": b"\xff\xfe not utf-8 \x80"})
    diagnostic = failed(result, "compile/source-unreadable")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / path)


# --- tools in the manifest ----------------------------------------------------------------------


def test_tool_manifest(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/tools/get_weather.py": '''\
                    from typing import Literal


                    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, float]:
                        """Get the weather for a city.

                        Args:
                            city: The city name.
                            unit: Celsius or Fahrenheit.
                        """
                        return {"temperature": 21.0}
                ''',
                "agent/tools/delete_file.py": '''\
                    from eve_runtime import tool


                    @tool(needs_approval=True, ends_turn=True)
                    async def remove(path: str) -> None:
                        """Delete a file."""
                ''',
                "agent/tools/pay.py": '''\
                    from eve_runtime import tool


                    def _over_limit(arguments: dict[str, object]) -> bool:
                        return True


                    @tool(needs_approval=_over_limit, description="Pay an invoice.", to_model_output=str)
                    def pay(amount: float) -> str:
                        """Ignored docstring."""
                        return "paid"
                ''',
                "agent/tools/forecast/__init__.py": "from .impl import forecast\n",
                "agent/tools/forecast/impl.py": (
                    "def forecast(days: int) -> list[str]:\n    '''Forecast.'''\n    return []\n"
                ),
            },
        )
    )
    tools = {t.name: t for t in root.tools}
    assert sorted(tools) == ["delete_file", "forecast", "get_weather", "pay"]

    weather = tools["get_weather"]
    assert weather.description.startswith("Get the weather for a city.")
    assert weather.input_schema["type"] == "object"
    assert weather.input_schema["required"] == ["city"]
    assert weather.input_schema["properties"]["unit"]["enum"] == ["c", "f"]
    assert weather.kind == "sync"
    assert weather.approval == "never" and not weather.requires_approval
    assert weather.source.logical_path == "tools/get_weather.py"
    assert weather.source.owner == "application"
    assert weather.source.export_name == "get_weather"

    delete = tools["delete_file"]  # the name is the file's, not the function's
    assert delete.approval == "always" and delete.requires_approval
    assert delete.ends_turn
    assert delete.kind == "async"
    assert delete.source.export_name == "remove"

    pay = tools["pay"]
    assert pay.description == "Pay an invoice."
    assert pay.approval == "policy"
    assert pay.has_model_output_projection

    assert tools["forecast"].source.logical_path == "tools/forecast/__init__.py"


def test_tool_names_are_unique_and_authored_tools_stay_with_default_tools_off(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/agent.py": agent_py('model="test", default_tools=False'),
                "agent/tools/get_weather.py": tool("get_weather"),
                "agent/tools/getWeather.py": tool("getWeather"),
            },
        )
    )
    assert [t.name for t in root.tools] == ["get_weather", "getWeather"]
    status = statuses(root)
    assert {name: status[name] for name in OPTIONAL_DEFAULTS} == dict.fromkeys(OPTIONAL_DEFAULTS, "off")
    assert status["task_cancel"] != "off"  # not optional


def test_framework_tool_statuses_by_default(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {}))
    status = statuses(root)
    assert list(status)[:6] == OPTIONAL_DEFAULTS
    for name in OPTIONAL_DEFAULTS + ["task_cancel"]:
        assert status[name] in ("active", "unavailable"), name
    assert status["load_skill"] == "not-applicable"  # no skills
    assert status["connection_search"] == "not-applicable"  # no connections
    for name in ["ask_question", "glob", "grep", "sleep"]:
        assert status[name] == "off", name  # opt-in
    assert root.shadowed == [e for e in root.shadowed if e.slot == "agent.py"]
    assert root.disabled == []


def test_load_skill_is_active_once_there_is_a_skill(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/skills/summarize.md": "# Summarize things"}))
    assert statuses(root)["load_skill"] == "active"


def test_disable_tool_turns_a_framework_tool_off(tmp_path: Path) -> None:
    content = "from eve_runtime import disable_tool\n\nbash = disable_tool()\n"
    root = ok(build(tmp_path, {"agent/tools/bash.py": content}))
    assert statuses(root)["bash"] == "disabled"
    assert "bash" not in [t.name for t in root.tools]
    assert [e.slot for e in root.disabled] == ["tools/bash.py"]


def test_built_in_tools_allowlist_denies_the_rest(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/agent.py": agent_py('model="test", built_in_tools={"allow": ["bash"]}')}))
    status = statuses(root)
    assert status["bash"] in ("active", "unavailable")
    for name in ["read_file", "write_file", "web_fetch", "web_search", "agent", "task_cancel"]:
        assert status[name] == "denied-by-policy", name
    assert status["ask_question"] == "off"


def test_authored_tool_replaces_a_framework_tool(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/tools/read_file.py": tool("read_file")}))
    assert statuses(root)["read_file"] == "replaced"
    authored = next(t for t in root.tools if t.name == "read_file")
    entry = next(e for e in root.shadowed if e.slot == "tools/read_file.py")
    assert entry.source.owner == "framework"
    assert entry.winning_source_id == authored.source.source_id


def test_agent_tool_is_root_only(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY}))
    assert statuses(root)["agent"] in ("active", "unavailable")
    assert statuses(child(root, "researcher"))["agent"] == "not-applicable"


def test_root_tool_false_turns_the_agent_tool_off(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/agent.py": agent_py('model="test", tool=False')}))
    assert statuses(root)["agent"] == "off"


# --- agent.py composition and config ------------------------------------------------------------


def test_authored_agent_py_shadows_the_framework_default(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {}))
    assert root.config_source.owner == "application"
    assert root.config_source.logical_path == "agent.py"
    assert root.config_source.export_name == "agent"
    entry = next(e for e in root.shadowed if e.slot == "agent.py")
    assert entry.source.owner == "framework"
    assert entry.winning_source_id == root.config_source.source_id


def test_without_agent_py_the_framework_default_config_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eve_runtime.models.providers import PROVIDER_DEFAULTS

    for entry in PROVIDER_DEFAULTS:
        monkeypatch.delenv(entry.env_var, raising=False)
    root = ok(build(tmp_path, {"agent/instructions.md": INSTRUCTIONS_MD}, base=False))
    assert root.config_source.owner == "framework"
    assert root.config_source.logical_path == "agent.py"
    assert [e for e in root.shadowed if e.slot == "agent.py"] == []
    assert root.model.id == "test"


def test_config_defaults(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY}))
    config = root.config
    assert config["compaction"]["threshold_percent"] == 0.9
    assert config["limits"]["session_timeout_ms"] == 30 * 24 * 60 * 60 * 1000
    assert config["limits"]["max_input_tokens_per_session"] == 40_000_000
    assert config["limits"]["max_output_tokens_per_session"] is None
    assert config["limits"]["max_token_cost_usd_per_session"] is None
    assert config["experimental"]["workflow"]["model_calls_per_step"] == 1
    assert config["timeout"] == 2 * 60 * 60 * 1000
    assert config["tool"] is True and config["default_tools"] is True
    assert root.model.id == "test" and root.model.routing == "offline"
    # the 40M input cap is a root-session default only
    assert child(root, "researcher").config["limits"]["max_input_tokens_per_session"] is None


def test_false_turns_limits_off(tmp_path: Path) -> None:
    limits = '{"max_input_tokens_per_session": False, "session_timeout_ms": False, "max_output_tokens_per_session": 5}'
    root = ok(build(tmp_path, {"agent/agent.py": agent_py(f'model="test", limits={limits}, timeout=False')}))
    assert root.config["limits"]["max_input_tokens_per_session"] is False
    assert root.config["limits"]["session_timeout_ms"] is False
    assert root.config["limits"]["max_output_tokens_per_session"] == 5
    assert root.config["timeout"] is False


def test_model_routing(tmp_path: Path) -> None:
    content = agent_py('model="openai/gpt-4o-mini", reasoning="low", model_options={"temperature": 0}')
    root = ok(build(tmp_path, {"agent/agent.py": content}))
    assert root.model.id == "openai/gpt-4o-mini"
    assert root.model.routing == "gateway"
    assert root.model.reasoning == "low"
    assert root.model.options == {"temperature": 0}


def test_dynamic_model(tmp_path: Path) -> None:
    content = (
        "from eve_runtime import define_agent, define_dynamic\n\n"
        "agent = define_agent(model=define_dynamic({'turn.started': lambda ctx: 'test'}))\n"
    )
    root = ok(build(tmp_path, {"agent/agent.py": content}))
    assert root.model.routing == "dynamic"
    assert root.model.id is None


def test_output_schema_from_a_pydantic_model(tmp_path: Path) -> None:
    content = """\
        from pydantic import BaseModel

        from eve_runtime import define_agent


        class Verdict(BaseModel):
            score: int


        agent = define_agent(model="test", output_schema=Verdict)
    """
    root = ok(build(tmp_path, {"agent/agent.py": content}))
    assert root.output_schema is not None
    assert root.output_schema["properties"]["score"]["type"] == "integer"


# --- subagents ----------------------------------------------------------------------------------


def test_subagents_in_the_manifest(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/tools/root_tool.py": tool("root_tool"),
                "agent/skills/root_skill.md": "# Root skill",
                "agent/subagents/researcher/agent.py": SUBAGENT_PY,
                "agent/subagents/researcher/instructions.md": "Research.",
                "agent/subagents/researcher/tools/search.py": tool("search"),
                "agent/subagents/researcher/subagents/helper/agent.py": SUBAGENT_PY,
            },
        )
    )
    researcher = child(root, "researcher")
    assert researcher.node_id == "subagents/researcher"
    assert researcher.parent_node_id == "__root__"
    assert researcher.description == "Researches things."
    assert researcher.agent_root == "agent/subagents/researcher"
    assert [t.name for t in researcher.tools] == ["search"]  # nothing inherited from the root
    assert researcher.skills == []
    assert [i.content for i in researcher.instructions] == ["Research."]
    helper = child(researcher, "helper")
    assert helper.node_id == "subagents/researcher/subagents/helper"
    assert helper.instructions == []


def test_subagent_with_tool_false_does_not_collide(tmp_path: Path) -> None:
    sub = agent_py('model="test", description="R.", tool=False')
    ok(build(tmp_path, {"agent/subagents/researcher/agent.py": sub, "agent/tools/researcher.py": tool("researcher")}))


def test_disable_tool_named_after_a_subagent_avoids_the_collision(tmp_path: Path) -> None:
    content = "from eve_runtime import disable_tool\n\nresearcher = disable_tool()\n"
    root = ok(
        build(tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY, "agent/tools/researcher.py": content})
    )
    assert [s.name for s in root.subagents] == ["researcher"]
    assert "researcher" not in [t.name for t in root.tools]
    assert child(root, "researcher").exposed_as_tool is False


def test_subagents_are_exposed_as_tools_unless_told_otherwise(tmp_path: Path) -> None:
    hidden = agent_py('model="test", description="H.", tool=False')
    root = ok(
        build(tmp_path, {"agent/subagents/shown/agent.py": SUBAGENT_PY, "agent/subagents/hidden/agent.py": hidden})
    )
    assert child(root, "shown").exposed_as_tool is True
    assert child(root, "hidden").exposed_as_tool is False


@pytest.mark.parametrize("model", ["gpt 4", "nope", "openai/", 'openai/"x'])
def test_model_invalid(tmp_path: Path, model: str) -> None:
    diagnostic = failed(build(tmp_path, {"agent/agent.py": agent_py(f"model={model!r}")}), "compile/model-invalid")
    assert diagnostic.source_path.endswith("agent.py")


@pytest.mark.parametrize(
    "extra",
    [
        "other = define_dynamic({'turn.started': lambda ctx: None})\n",
        'def lookup(city: str) -> str:\n    """Look up."""\n    return city\n',
    ],
)
def test_dynamic_tool_file_with_something_else_is_ambiguous(tmp_path: Path, extra: str) -> None:
    content = (
        "from eve_runtime import define_dynamic\n\nlookup_dyn = define_dynamic({'session.started': lambda ctx: None})\n"
    )
    failed(build(tmp_path, {"agent/tools/lookup.py": content + extra}), "compile/definition-ambiguous")


# --- dynamic instructions and tools -------------------------------------------------------------


def test_dynamic_instructions_and_tools(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/instructions/today.py": """\
                    from eve_runtime import define_dynamic, define_instructions

                    today = define_dynamic({"session.started": lambda ctx: define_instructions("Today.")})
                """,
                "agent/tools/github.py": """\
                    from eve_runtime import define_dynamic

                    github = define_dynamic({"session.started": lambda ctx: {}})
                """,
            },
        )
    )
    assert [(d.slug, d.event_names) for d in root.dynamic_instructions] == [("today", ["session.started"])]
    assert root.dynamic_instructions[0].source.logical_path == "instructions/today.py"
    assert [(d.slug, d.event_names) for d in root.dynamic_tools] == [("github", ["session.started"])]
    assert root.tools == []


def test_static_instructions_in_order_with_roles(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/instructions/b.md": "Second.",
                "agent/instructions/a.py": (
                    "from eve_runtime import define_instructions\n\n"
                    "instructions = define_instructions('First.', role='user')\n"
                ),
                "agent/instructions/sub/c.md": "Never read.",
            },
        )
    )
    assert [(i.content, i.role) for i in root.instructions] == [
        (INSTRUCTIONS_MD, "system"),
        ("First.", "user"),
        ("Second.", "system"),
    ]
    assert [i.source.logical_path for i in root.instructions] == [
        "instructions.md",
        "instructions/a.py",
        "instructions/b.md",
    ]


# --- schedules and hooks ------------------------------------------------------------------------


def test_schedules(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/schedules/cleanup.md": "---\ncron: '0 0 * * 0'\n---\nClean up old files.\n",
                "agent/schedules/billing/sweep.py": """\
                    from eve_runtime import define_schedule

                    schedule = define_schedule(cron="*/15 * * * *", markdown="Sweep invoices.")
                """,
                "agent/schedules/report.py": """\
                    from eve_runtime import define_schedule


                    def send(ctx: object) -> None:
                        pass


                    report = define_schedule(cron="0 14 * * 1", run=send)
                """,
            },
        )
    )
    schedules = {s.name: s for s in root.schedules}
    assert sorted(schedules) == ["billing/sweep", "cleanup", "report"]
    assert (schedules["cleanup"].cron, schedules["cleanup"].markdown) == ("0 0 * * 0", "Clean up old files.")
    assert not schedules["cleanup"].has_run
    assert schedules["billing/sweep"].markdown == "Sweep invoices."
    assert schedules["billing/sweep"].source.logical_path == "schedules/billing/sweep.py"
    assert schedules["report"].has_run and schedules["report"].markdown is None
    assert {name: s.missed for name, s in schedules.items()} == {
        "billing/sweep": "latest",
        "cleanup": "latest",
        "report": "latest",
    }


def test_a_schedule_file_may_skip_missed_fires(tmp_path: Path) -> None:
    root = ok(build(tmp_path, {"agent/schedules/tick.md": "---\ncron: '* * * * *'\nmissed: skip\n---\nTick.\n"}))
    assert [(s.name, s.missed) for s in root.schedules] == [("tick", "skip")]


def test_cli_info_lists_each_schedules_next_fire_times(tmp_path: Path) -> None:
    app = build(tmp_path, {"agent/schedules/weekly.md": "---\ncron: '0 9 * * 1'\n---\nReport.\n"})
    info = cli_info(app, now=1_767_600_000.0)  # 2026-01-05 08:00 UTC, a Monday
    (weekly,) = info["schedules"]
    assert (weekly["name"], weekly["missed"], weekly["hasRun"]) == ("weekly", "latest", False)
    assert weekly["nextFireTimes"] == ["2026-01-05T09:00:00Z", "2026-01-12T09:00:00Z", "2026-01-19T09:00:00Z"]
    assert "nextFireTimes" not in agent_info(app.manifest, mode="production")["schedules"][0]


@pytest.mark.parametrize(
    "arguments",
    ["cron='not a cron', markdown='Go.'", "cron='0 0 * * *', markdown='Go.', run=print", "cron='0 0 * * *'"],
)
def test_bad_schedule_module(tmp_path: Path, arguments: str) -> None:
    content = f"from eve_runtime import define_schedule\n\nschedule = define_schedule({arguments})\n"
    diagnostic = failed(build(tmp_path, {"agent/schedules/s.py": content}), "compile/definition-invalid")
    assert diagnostic.line == 3


def test_hooks(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/hooks/auth/load-profile.py": """\
                    from eve_runtime import define_hook

                    hook = define_hook({"turn.completed": lambda event, ctx: None, "*": lambda event, ctx: None})
                """,
            },
        )
    )
    assert [(h.slug, h.event_names) for h in root.hooks] == [("auth/load-profile", ["*", "turn.completed"])]
    assert root.hooks[0].source.logical_path == "hooks/auth/load-profile.py"


def test_bad_hook_event_is_a_definition_error(tmp_path: Path) -> None:
    content = "from eve_runtime import define_hook\n\nhook = define_hook({'turn.finished': print})\n"
    failed(build(tmp_path, {"agent/hooks/h.py": content}), "compile/definition-invalid")


# --- artifacts ----------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_artifacts_on_success(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/foo/": "", "agent/tools/get_weather.py": tool("get_weather")}, write=True)
    ok(result)
    eve = tmp_path / "app" / ".eve"
    diagnostics = read_json(eve / "discovery" / "diagnostics.json")
    assert (diagnostics["errors"], diagnostics["warnings"]) == (0, 1)
    assert diagnostics["diagnostics"][0]["code"] == "discover/unsupported-directory"
    assert diagnostics["diagnostics"][0]["sourcePath"] == str(tmp_path / "app" / "agent" / "foo")
    discovery = read_json(eve / "discovery" / "agent-discovery-manifest.json")
    assert discovery["kind"] == "eve-discovery"
    assert [t["name"] for t in discovery["root"]["tools"]] == ["get_weather"]
    manifest = read_json(eve / "compile" / "manifest.json")
    assert manifest["status"] == "ready"
    assert manifest["content_hash"] == result.manifest.content_hash
    assert [t["name"] for t in manifest["root"]["tools"]] == ["get_weather"]
    metadata = read_json(eve / "compile" / "compile-metadata.json")
    assert metadata["status"] == "ready"
    assert metadata["contentHash"] == result.manifest.content_hash
    assert metadata["sourceDigest"] == result.manifest.source_digest
    assert (metadata["errors"], metadata["warnings"]) == (0, 1)


def test_artifacts_on_failure(tmp_path: Path) -> None:
    result = build(
        tmp_path, {"agent/tools/1bad.py": tool("x"), "agent/tools/t.py": "raise ValueError('x')\n"}, write=True
    )
    assert not result.ok
    eve = tmp_path / "app" / ".eve"
    diagnostics = read_json(eve / "discovery" / "diagnostics.json")
    assert diagnostics["errors"] == 2
    assert {d["code"] for d in diagnostics["diagnostics"]} == {
        "discover/tool-name-invalid",
        "compile/module-import-failed",
    }
    assert all("sourcePath" in d and "source_path" not in d for d in diagnostics["diagnostics"])
    line = next(d for d in diagnostics["diagnostics"] if d["code"] == "compile/module-import-failed")["line"]
    assert line == 1
    assert (eve / "discovery" / "agent-discovery-manifest.json").is_file()
    assert read_json(eve / "compile" / "manifest.json")["status"] == "failed"
    assert read_json(eve / "compile" / "compile-metadata.json")["status"] == "failed"


def test_errors_come_before_warnings(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/foo/": "", "agent/tools/1bad.py": ""})
    assert [d.severity for d in result.diagnostics] == ["error", "warning"]


def test_nothing_is_written_without_write(tmp_path: Path) -> None:
    build(tmp_path, {})
    assert not (tmp_path / "app" / ".eve").exists()


# --- content hash -------------------------------------------------------------------------------


FORECAST_PY = "def forecast(days: int) -> int:\n    '''Forecast.'''\n    return days\n"
HASHED_APP: dict[str, str | bytes] = {
    **MINIMAL_APP,
    "agent/tools/get_weather.py": tool("get_weather"),
    "agent/tools/forecast/__init__.py": FORECAST_PY,
    "agent/lib/helpers.py": "FACTOR = 1\n",
    "agent/lib/__init__.py": "SCALE = 1\n",
}


def content_hash(app_root: Path) -> str:
    with compiled(app_root) as result:
        assert result.ok, result.diagnostics
        return result.manifest.content_hash


def test_content_hash_is_stable_across_folders(tmp_path: Path) -> None:
    first = content_hash(write_app(tmp_path / "one", HASHED_APP))
    assert first.startswith("sha256:")
    assert content_hash(write_app(tmp_path / "one", {})) == first  # compiling again
    assert content_hash(write_app(tmp_path / "two", HASHED_APP)) == first  # same sources elsewhere


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("agent/tools/get_weather.py", tool("get_weather").replace("return city", "return city.upper()")),
        ("agent/tools/forecast/__init__.py", FORECAST_PY.replace("return days", "return -days")),
        ("agent/lib/helpers.py", "FACTOR = 2\n"),
        ("agent/lib/__init__.py", "SCALE = 2\n"),
        ("agent/instructions.md", "Different.\n"),
    ],
)
def test_content_hash_changes_with_any_source(tmp_path: Path, path: str, content: str) -> None:
    app = write_app(tmp_path, HASHED_APP)
    before = content_hash(app)
    write_app(tmp_path, {path: content})
    assert content_hash(app) != before


def test_content_hash_ignores_diagnostic_text_and_test_files(tmp_path: Path) -> None:
    app = write_app(tmp_path, HASHED_APP)
    before = content_hash(app)
    write_app(tmp_path, {"agent/tools/test_get_weather.py": "def test_x() -> None:\n    pass\n"})
    assert content_hash(app) == before


# --- module lifetime ----------------------------------------------------------------------------


def test_content_hash_ignores_environments_inside_the_agent_folder(tmp_path: Path) -> None:
    app = write_app(tmp_path, dict(MINIMAL_APP))
    before = compile_app(app, write=False)
    before.loader.release()
    (app / "agent/.venv/lib").mkdir(parents=True)
    (app / "agent/.venv/lib/site.py").write_text("x = 1\n")
    (app / "agent/node_modules").mkdir()
    (app / "agent/node_modules/a.js").write_text("1")
    after = compile_app(app, write=False)
    after.loader.release()
    assert after.manifest.source_digest == before.manifest.source_digest


def test_failed_compile_releases_its_modules(tmp_path: Path) -> None:
    app = write_app(
        tmp_path,
        {**MINIMAL_APP, "agent/tools/good.py": tool("good"), "agent/tools/bad.py": "raise ValueError('x')\n"},
    )
    before = app_modules()
    result = compile_app(app, write=False)
    assert not result.ok
    assert app_modules() == before


def test_successful_compile_keeps_modules_until_released(tmp_path: Path) -> None:
    app = write_app(tmp_path, {**MINIMAL_APP, "agent/tools/good.py": tool("good")})
    result = compile_app(app, write=False)
    try:
        assert result.ok and result.root is not None
        namespace = result.loader.namespace
        assert f"{namespace}.tools.good" in app_modules()
        assert result.root.tools["good"].function is not None
        assert result.root.tools["good"].function("Paris") == "Paris"
    finally:
        result.loader.release()
    assert not any(name.startswith(namespace + ".") for name in app_modules())


def test_every_code_is_reported_with_the_agent_that_owns_it(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        {
            "agent/subagents/researcher/agent.py": SUBAGENT_PY,
            "agent/subagents/researcher/tools/t.py": "def t() -> None:\n    pass\n",
        },
    )
    diagnostic = failed(result, "compile/tool-description-missing")
    assert diagnostic.node_id == "subagents/researcher"
    assert codes(result.diagnostics) == ["compile/tool-description-missing"]
    assert find(result.diagnostics, "compile/definition-missing") == []
