"""Authoring errors that teach: every problem at its own line, "did you mean", the fix spelled out.

Each test compiles a small agent folder and checks the diagnostic's code, file, line and message;
the CLI tests check that `eve info` exits 1 and prints it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eve_cli.main import app as cli
from eve_runtime.diagnostics import Diagnostic
from tests.helpers import MINIMAL_APP, compiled, errors, find, only, write_app


def diagnose(tmp_path: Path, files: dict[str, str], *, base: bool = True) -> list[Diagnostic]:
    """The diagnostics of an app made of `files` (on top of a minimal root agent unless `base` is False)."""
    app = write_app(tmp_path, {**(MINIMAL_APP if base else {}), **files})
    with compiled(app) as result:
        return result.diagnostics


def where(diagnostic: Diagnostic, tmp_path: Path) -> tuple[str, str, int | None]:
    return diagnostic.code, Path(diagnostic.source_path).relative_to(tmp_path / "app").as_posix(), diagnostic.line


def eve_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path / "app")
    result = CliRunner().invoke(cli, ["info"], env={"COLUMNS": "300"})
    return result.exit_code, result.output


BROKEN_AGENT = """\
from eve_runtime import define_agent

agent = define_agent(
    model="test",
    reasoning="hgh",
    limits={
        "session_timeout_ms": -1,
    },
    default_tools="no",
)
"""


def test_every_define_agent_problem_is_reported_at_its_own_line(tmp_path: Path) -> None:
    found = errors(diagnose(tmp_path, {"agent/agent.py": BROKEN_AGENT}))
    assert [where(d, tmp_path) for d in found] == [
        ("compile/definition-invalid", "agent/agent.py", 5),
        ("compile/definition-invalid", "agent/agent.py", 7),
        ("compile/definition-invalid", "agent/agent.py", 9),
    ]
    reasoning, timeout, default_tools = (d.message for d in found)
    assert reasoning.startswith("define_agent(): invalid field 'reasoning': Input should be 'provider-default'")
    assert "'limits.session_timeout_ms': Input should be greater than 0 or Input should be False" in timeout
    assert "'default_tools': Input should be a valid boolean" in default_tools
    assert all("more problem" not in d.message and d.message.endswith("(in agent/agent.py)") for d in found)


def test_the_cli_prints_each_problem_with_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_app(tmp_path, {**MINIMAL_APP, "agent/agent.py": BROKEN_AGENT})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 1
    for line in (5, 7, 9):
        assert f"agent/agent.py:{line}" in output
    assert "3 errors" in output


def test_a_problem_in_another_definer_points_at_its_argument(tmp_path: Path) -> None:
    content = """\
        from eve_runtime import tool


        @tool(
            description="Looks things up.",
            needs_approval="sometimes",
        )
        def look_up(city: str) -> str:
            return city
    """
    (found,) = errors(diagnose(tmp_path, {"agent/tools/look_up.py": content}))
    assert where(found, tmp_path) == ("compile/definition-invalid", "agent/tools/look_up.py", 6)
    assert "needs_approval" in found.message


MISSPELLED = """\
from eve_runtime import define_agent

agent = define_agent(
    model="test",
    reasonning="high",
    limit={"session_timeout_ms": 5},
)
"""


def test_a_misspelled_keyword_names_the_real_one(tmp_path: Path) -> None:
    found = errors(diagnose(tmp_path, {"agent/agent.py": MISSPELLED}))
    assert [(where(d, tmp_path), d.message) for d in found] == [
        (
            ("compile/definition-invalid", "agent/agent.py", 5),
            "define_agent() has no argument 'reasonning': did you mean 'reasoning'? (in agent/agent.py)",
        ),
        (
            ("compile/definition-invalid", "agent/agent.py", 6),
            "define_agent() has no argument 'limit': did you mean 'limits'? (in agent/agent.py)",
        ),
    ]


def test_a_keyword_nothing_resembles_lists_the_real_ones(tmp_path: Path) -> None:
    content = 'from eve_runtime import define_agent\n\nagent = define_agent(model="test", name="bot")\n'
    (found,) = errors(diagnose(tmp_path, {"agent/agent.py": content}))
    assert where(found, tmp_path) == ("compile/definition-invalid", "agent/agent.py", 3)
    assert "define_agent() has no argument 'name': it takes " in found.message
    assert "built_in_tools, compaction, default_tools, description" in found.message


def test_a_misspelled_keyword_of_a_user_function_is_an_import_failure(tmp_path: Path) -> None:
    content = """\
        def helper(*, city: str) -> str:
            return city


        VALUE = helper(
            citty="Paris",
        )
    """
    (found,) = errors(diagnose(tmp_path, {"agent/tools/t.py": content}))
    assert where(found, tmp_path) == ("compile/module-import-failed", "agent/tools/t.py", 6)
    assert found.message == "Importing agent/tools/t.py failed: helper() has no argument 'citty': did you mean 'city'?"


def test_a_misspelled_nested_field_names_the_real_one(tmp_path: Path) -> None:
    content = """\
        from eve_runtime import define_agent

        agent = define_agent(
            model="test",
            limits={"max_output_token_per_session": 100},
        )
    """
    (found,) = errors(diagnose(tmp_path, {"agent/agent.py": content}))
    assert where(found, tmp_path) == ("compile/definition-invalid", "agent/agent.py", 5)
    assert "'limits.max_output_token_per_session': unknown field (did you mean 'max_output_tokens_per_session'?)" in (
        found.message
    )


HELPER = "def f(city: str) -> str:\n    return city.upper()\n"
TOOL_IMPORTING = '''\
{import_line}


def weather(city: str) -> str:
    """The weather in a city."""
    return f(city)
'''


def _advice(message: str) -> str:
    match = re.search(r"write `([^`]+)`", message)
    assert match is not None, message
    return match[1]


@pytest.mark.parametrize(
    ("file", "import_line", "advice"),
    [
        ("agent/tools/weather.py", "from agent.lib.helper import f", "from ..lib.helper import f"),
        ("agent/tools/weather.py", "from agent.lib import helper as h\nf = h.f", "from ..lib import helper as h"),
        ("agent/tools/weather.py", "import agent.lib.helper as h\nf = h.f", "from ..lib import helper as h"),
        ("agent/lib/other.py", "from agent.lib.helper import f", "from .helper import f"),
        ("agent/subagents/scout/tools/weather.py", "from agent.lib.helper import f", "from ....lib.helper import f"),
    ],
)
def test_an_absolute_import_of_the_agent_folder_is_told_the_relative_import(
    tmp_path: Path, file: str, import_line: str, advice: str
) -> None:
    files = {
        "agent/lib/helper.py": HELPER,
        file: TOOL_IMPORTING.format(import_line=import_line),
        "agent/subagents/scout/agent.py": (
            'from eve_runtime import define_agent\n\nagent = define_agent(model="test", description="Scouts.")\n'
        ),
    }
    if file.startswith("agent/lib/"):
        files["agent/tools/weather.py"] = TOOL_IMPORTING.format(import_line="from ..lib.other import f")
    (found,) = errors(diagnose(tmp_path, files))
    assert where(found, tmp_path) == ("compile/module-import-failed", file, 1)
    assert "No module named 'agent'" in found.message
    assert "dependencies" not in found.message
    assert _advice(found.message) == advice

    # the advice works: applied, the app compiles
    path = tmp_path / "app" / file
    path.write_text(path.read_text().replace(import_line.split("\n")[0], advice))
    with compiled(tmp_path / "app") as result:
        assert errors(result.diagnostics) == [], [d.message for d in result.diagnostics]


def test_the_cli_gives_the_relative_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "agent/lib/helper.py": HELPER,
        "agent/tools/weather.py": TOOL_IMPORTING.format(import_line="from agent.lib.helper import f"),
    }
    write_app(tmp_path, {**MINIMAL_APP, **files})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 1
    assert "agent/tools/weather.py:1" in output
    assert "write `from ..lib.helper import f` (a relative import)" in output


def test_a_missing_third_party_package_is_still_told_to_install(tmp_path: Path) -> None:
    (found,) = errors(diagnose(tmp_path, {"agent/tools/t.py": "import eve_no_such_package_here\n"}))
    assert "add 'eve_no_such_package_here' to your app's dependencies" in found.message


def test_a_misspelt_instructions_file_is_named_in_the_missing_instructions_error(tmp_path: Path) -> None:
    found = diagnose(
        tmp_path, {"agent/agent.py": MINIMAL_APP["agent/agent.py"], "agent/instruction.md": "Hi.\n"}, base=False
    )
    (missing,) = errors(found)
    assert where(missing, tmp_path) == ("discover/required-instructions-missing", "agent", None)
    assert missing.message.endswith("Found 'instruction.md': did you mean 'instructions.md'? Rename it.")
    assert find(found, "discover/file-name-unknown") == []  # said once, in the error


def test_the_cli_names_the_misspelt_instructions_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_app(tmp_path, {"agent/agent.py": MINIMAL_APP["agent/agent.py"], "agent/instruction.md": "Hi.\n"})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 1
    assert "did you mean 'instructions.md'?" in output


@pytest.mark.parametrize(
    ("file", "meant"),
    [
        ("agent/agnet.py", "agent.py"),
        ("agent/Agent.py", "agent.py"),
        ("agent/sandbx.py", "sandbox.py"),
        ("agent/subagents/scout/instruction.md", "instructions.md"),
    ],
)
def test_a_misspelt_agent_file_is_a_warning_naming_the_real_one(tmp_path: Path, file: str, meant: str) -> None:
    scout = 'from eve_runtime import define_agent\n\nagent = define_agent(model="test", description="Scouts.")\n'
    files = {"agent/instructions.md": "Hi.\n", "agent/subagents/scout/agent.py": scout, file: "x = 1\n"}
    found = diagnose(tmp_path, files, base=False)
    assert errors(found) == []
    (warning,) = find(found, "discover/file-name-unknown")
    assert (warning.severity, where(warning, tmp_path)) == ("warning", ("discover/file-name-unknown", file, None))
    name = file.rsplit("/", 1)[1]
    assert warning.message == f"Ignoring {name!r}: eve reads no file of that name. Did you mean {meant!r}? Rename it."


def test_a_subagent_without_agent_py_is_told_of_a_misspelt_one(tmp_path: Path) -> None:
    found = diagnose(tmp_path, {"agent/subagents/scout/agents.py": "x = 1\n"})
    missing = only(found, "discover/subagent-config-missing")
    assert missing.message.endswith("Found 'agents.py': did you mean 'agent.py'? Rename it.")


@pytest.mark.parametrize(
    "name", ["README.md", "notes.md", "agent.py.bak", "agent.py~", ".agent.py.swp", "system.md", "agent2.py"]
)
def test_other_files_are_no_typos(tmp_path: Path, name: str) -> None:
    # nor is a near-miss of a file that is there: agent.py exists in the minimal app
    assert find(diagnose(tmp_path, {f"agent/{name}": "x\n"}), "discover/file-name-unknown") == []


@pytest.mark.parametrize(
    ("folder", "meant"),
    [("tool", "tools/"), ("skill", "skills/"), ("Hooks", "hooks/"), ("subagent", "subagents/"), ("libs", "lib/")],
)
def test_a_misspelt_folder_names_the_real_one(tmp_path: Path, folder: str, meant: str) -> None:
    warning = only(diagnose(tmp_path, {f"agent/{folder}/x.py": "x = 1\n"}), "discover/unsupported-directory")
    assert where(warning, tmp_path) == ("discover/unsupported-directory", f"agent/{folder}", None)
    assert warning.severity == "warning"
    assert f". Did you mean {meant!r}? Agent folders hold" in warning.message


def test_an_unrelated_folder_gets_no_guess(tmp_path: Path) -> None:
    warning = only(diagnose(tmp_path, {"agent/utils/x.py": "x = 1\n"}), "discover/unsupported-directory")
    assert "Did you mean" not in warning.message and "put helper code in lib/" in warning.message


UNTYPED_TOOL = '''\
def weather(
    city,
    days=3,
    unit: str = "celsius",
):
    """The weather in a city."""
    return city
'''


def test_a_tool_parameter_without_a_type_hint_is_a_warning_at_its_line(tmp_path: Path) -> None:
    found = diagnose(tmp_path, {"agent/tools/weather.py": UNTYPED_TOOL})
    assert errors(found) == []
    city, days = find(found, "compile/tool-parameter-untyped")
    assert [(d.severity, where(d, tmp_path)) for d in (city, days)] == [
        ("warning", ("compile/tool-parameter-untyped", "agent/tools/weather.py", 2)),
        ("warning", ("compile/tool-parameter-untyped", "agent/tools/weather.py", 3)),
    ]
    assert city.message == (
        "Tool 'weather': parameter 'city' has no type hint, so its input schema is {} and the model may send any "
        "JSON value for it. Annotate it, for example `city: str`."
    )
    assert "for example `days: int = 3`" in days.message


def test_an_untyped_decorated_tool_is_warned_about_too(tmp_path: Path) -> None:
    content = 'from eve_runtime import tool\n\n\n@tool(description="Echo.")\ndef echo(text):\n    return text\n'
    warning = only(diagnose(tmp_path, {"agent/tools/echo.py": content}), "compile/tool-parameter-untyped")
    assert where(warning, tmp_path) == ("compile/tool-parameter-untyped", "agent/tools/echo.py", 5)


def test_typed_parameters_and_the_context_are_not_warned_about(tmp_path: Path) -> None:
    content = '''\
        from typing import Any

        from eve_runtime import ToolContext


        def weather(city: str, extra: Any, ctx: ToolContext) -> str:
            """The weather in a city."""
            return city
    '''
    assert find(diagnose(tmp_path, {"agent/tools/weather.py": content}), "compile/tool-parameter-untyped") == []


def test_the_cli_shows_the_untyped_parameter_warning_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_app(tmp_path, {**MINIMAL_APP, "agent/tools/weather.py": UNTYPED_TOOL})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 0
    assert "agent/tools/weather.py:2" in output and "parameter 'city' has no type hint" in output


def agent_on(model: str, options: str = "") -> str:
    return f'from eve_runtime import define_agent\n\nagent = define_agent(\n    model="{model}",{options}\n)\n'


def test_an_unknown_provider_is_a_compile_error_naming_the_closest(tmp_path: Path) -> None:
    (found,) = errors(diagnose(tmp_path, {"agent/agent.py": agent_on("opanai/gpt-4o-mini")}))
    assert where(found, tmp_path) == ("compile/model-invalid", "agent/agent.py", 4)
    assert found.message == (
        "agent.py: 'opanai/gpt-4o-mini' names the provider 'opanai', which litellm does not know: "
        "did you mean 'openai'?"
    )


def test_an_unknown_provider_of_a_subagent_is_reported_at_its_file(tmp_path: Path) -> None:
    scout = agent_on("anthropc/claude-sonnet-4-6", '\n    description="Scouts.",')
    (found,) = errors(diagnose(tmp_path, {"agent/subagents/scout/agent.py": scout}))
    assert where(found, tmp_path) == ("compile/model-invalid", "agent/subagents/scout/agent.py", 4)
    assert found.node_id == "subagents/scout"
    assert "did you mean 'anthropic'?" in found.message


def test_a_known_provider_compiles_and_custom_llm_provider_routes_any_prefix(tmp_path: Path) -> None:
    assert errors(diagnose(tmp_path, {"agent/agent.py": agent_on("openai/gpt-4o-mini")})) == []
    custom = agent_on("mine/model-1", '\n    model_options={"custom_llm_provider": "openai"},')
    assert errors(diagnose(tmp_path, {"agent/agent.py": custom})) == []


def test_the_cli_rejects_an_unknown_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_app(tmp_path, {**MINIMAL_APP, "agent/agent.py": agent_on("opanai/gpt-4o-mini")})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 1
    assert "agent/agent.py:4" in output and "did you mean 'openai'?" in output


@pytest.mark.parametrize(
    ("file", "content", "expected"),
    [
        (
            "agent/tools/look_up.py",
            """\
            from eve_runtime import tool


            @tool(
                needs_approval="sometimes",
                ends_turn="no",
            )
            def look_up(city: str) -> str:
                \"\"\"Looks things up.\"\"\"
                return city
            """,
            [(5, "needs_approval"), (6, "ends_turn")],
        ),
        (
            "agent/sandbox.py",
            """\
            from eve_runtime import define_sandbox

            sandbox = define_sandbox(
                backend="podman",
                network="some",
                timeout_seconds=0,
            )
            """,
            [(4, "backend"), (5, "network"), (6, "timeout_seconds")],
        ),
        (
            "agent/schedules/nightly.py",
            """\
            from eve_runtime import define_schedule

            schedule = define_schedule(
                cron="every night",
                markdown="Sum up the day.",
                missed="sometimes",
            )
            """,
            [(4, "cron"), (6, "missed")],
        ),
    ],
)
def test_other_definers_report_every_problem_at_its_line(
    tmp_path: Path, file: str, content: str, expected: list[tuple[int, str]]
) -> None:
    found = errors(diagnose(tmp_path, {file: content}))
    assert [(d.code, d.line) for d in found] == [("compile/definition-invalid", line) for line, _ in expected]
    for diagnostic, (_, field) in zip(found, expected, strict=True):
        assert field in diagnostic.message
        assert Path(diagnostic.source_path) == tmp_path / "app" / file


def test_the_cli_names_the_meant_keyword(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_app(tmp_path, {**MINIMAL_APP, "agent/agent.py": MISSPELLED})
    code, output = eve_info(tmp_path, monkeypatch)
    assert code == 1
    assert "agent/agent.py:5" in output and "has no argument 'reasonning': did you mean 'reasoning'?" in output
    assert "agent/agent.py:6" in output and "has no argument 'limit': did you mean 'limits'?" in output
