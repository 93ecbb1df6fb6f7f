"""Discovery: file conventions to a source graph, every `discover/*` code, and no user code run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from eve_runtime.project.discovery import discover
from eve_runtime.project.sources import AgentSources, SourceGraph
from tests.helpers import AGENT_PY, INSTRUCTIONS_MD, MINIMAL_APP, app_modules, codes, find, only, write_app

SUBAGENT_PY = """\
from eve_runtime import define_agent

agent = define_agent(model="test", description="Researches things.")
"""

TOOL_PY = '''\
def {name}(city: str) -> str:
    """Look something up."""
    return city
'''


def tool(name: str) -> str:
    return TOOL_PY.format(name=name)


def run(tmp_path: Path, files: dict[str, str | bytes], *, base: bool = True) -> SourceGraph:
    """Discover an app made of `files`, on top of a minimal valid root agent unless `base` is False."""
    return discover(write_app(tmp_path, {**(MINIMAL_APP if base else {}), **files}))


def tool_names(agent: AgentSources) -> list[str]:
    return [named.name for named in agent.tools]


def subagent(graph: SourceGraph, node_id: str) -> AgentSources:
    for agent in graph.agents():
        if agent.node_id == node_id:
            return agent
    raise AssertionError(f"no agent {node_id!r} in {[a.node_id for a in graph.agents()]}")


# --- the baseline -------------------------------------------------------------------------------


def test_minimal_app_has_no_diagnostics(tmp_path: Path) -> None:
    graph = run(tmp_path, {})
    assert graph.diagnostics == []
    assert graph.root.node_id == "__root__"
    assert graph.root.is_root
    assert graph.root.config is not None and graph.root.config.logical_path == "agent.py"
    assert [s.logical_path for s in graph.root.instructions] == ["instructions.md"]
    assert graph.app_root == tmp_path / "app"
    assert graph.agent_root == tmp_path / "app" / "agent"


def test_root_name_comes_from_pyproject_else_folder(tmp_path: Path) -> None:
    assert run(tmp_path, {}).root.name == "app"
    named = write_app(tmp_path, {**MINIMAL_APP, "pyproject.toml": '[project]\nname = "weather-bot"\n'}, name="other")
    assert discover(named).root.name == "weather-bot"


def test_agent_py_is_optional_at_the_root(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/instructions.md": INSTRUCTIONS_MD}, base=False)
    assert graph.diagnostics == []
    assert graph.root.config is None


# --- tools --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["get_weather", "getWeather", "get-weather", "a", "x" * 64, "Tool_2"])
def test_tool_name_is_the_file_name_verbatim(tmp_path: Path, name: str) -> None:
    graph = run(tmp_path, {f"agent/tools/{name}.py": tool("f")})
    assert graph.diagnostics == []
    assert tool_names(graph.root) == [name]
    assert graph.root.tools[0].source.logical_path == f"tools/{name}.py"
    assert graph.root.tools[0].source.kind == "module"


@pytest.mark.parametrize("name", ["1bad", "get weather", "_private", "x" * 65, "naïve", "-dash"])
def test_bad_tool_name(tmp_path: Path, name: str) -> None:
    graph = run(tmp_path, {f"agent/tools/{name}.py": tool("f")})
    diagnostic = only(graph.diagnostics, "discover/tool-name-invalid")
    assert diagnostic.severity == "error"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "tools" / f"{name}.py")
    assert tool_names(graph.root) == []


def test_tool_package(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {"agent/tools/forecast/__init__.py": tool("forecast"), "agent/tools/forecast/helpers.py": "X = 1\n"},
    )
    assert graph.diagnostics == []
    assert tool_names(graph.root) == ["forecast"]
    source = graph.root.tools[0].source
    assert source.logical_path == "tools/forecast/__init__.py"
    assert source.path == tmp_path / "app" / "agent" / "tools" / "forecast" / "__init__.py"


def test_tool_module_and_package_collide(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/tools/forecast.py": tool("forecast"), "agent/tools/forecast/__init__.py": ""})
    diagnostic = only(graph.diagnostics, "discover/module-slot-collision")
    assert diagnostic.severity == "error"
    assert tool_names(graph.root) == []


def test_tool_subfolder_without_init_is_ignored_with_a_warning(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/tools/github/create_issue.py": tool("create_issue"), "agent/tools/ok.py": tool("ok")})
    diagnostic = only(graph.diagnostics, "discover/unsupported-directory")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "tools" / "github")
    assert tool_names(graph.root) == ["ok"]


def test_unrecognised_files_in_tools_are_ignored_silently(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/tools/notes.txt": "notes",
            "agent/tools/README.md": "# Tools",
            "agent/tools/data.json": "{}",
            "agent/tools/get_weather.py": tool("get_weather"),
        },
    )
    assert graph.diagnostics == []
    assert tool_names(graph.root) == ["get_weather"]


def test_test_files_stubs_caches_and_init_are_never_sources(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/tools/test_weather.py": tool("test_weather"),
            "agent/tools/weather_test.py": tool("weather_test"),
            "agent/tools/conftest.py": "",
            "agent/tools/weather.pyi": "def weather(city: str) -> str: ...\n",
            "agent/tools/__init__.py": "",
            "agent/tools/__pycache__/weather.cpython-311.pyc": b"\0",
            "agent/tools/weather.py": tool("weather"),
            "agent/hooks/test_audit.py": "",
            "agent/skills/test_skill.py": "",
            "agent/schedules/test_nightly.py": "",
        },
    )
    assert graph.diagnostics == []
    assert tool_names(graph.root) == ["weather"]
    assert graph.root.hooks == graph.root.skills == graph.root.schedules == []


def test_tools_are_sorted_case_insensitively(tmp_path: Path) -> None:
    graph = run(tmp_path, {f"agent/tools/{n}.py": tool("f") for n in ["b_tool", "Alpha", "c", "a_tool"]})
    assert tool_names(graph.root) == ["a_tool", "Alpha", "b_tool", "c"]


# --- root directories ---------------------------------------------------------------------------


def test_unknown_root_directory_warns(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/foo/bar.py": "X = 1\n"})
    diagnostic = only(graph.diagnostics, "discover/unsupported-directory")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "foo")


@pytest.mark.parametrize(
    "folder",
    [
        ".eve",
        "node_modules",
        ".venv",
        "__pycache__",
        ".devtools",
        ".next",
        ".output",
        ".vercel",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    ],
)
def test_known_ignored_root_directories_are_silent(tmp_path: Path, folder: str) -> None:
    graph = run(tmp_path, {f"agent/{folder}/tools/x.py": tool("x"), f"agent/{folder}/file.txt": ""})
    assert graph.diagnostics == []
    assert tool_names(graph.root) == []


def test_unknown_root_files_are_not_slots(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/README.md": "# hi", "agent/helpers.py": "X = 1\n", "agent/notes.txt": ""})
    assert graph.diagnostics == []


@pytest.mark.parametrize("slot", ["memory", "instrumentation", "extensions"])
def test_unsupported_slot_directory_warns(tmp_path: Path, slot: str) -> None:
    graph = run(tmp_path, {f"agent/{slot}/thing.py": "X = 1\n"})
    diagnostic = only(graph.diagnostics, "discover/slot-unsupported")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / slot)


@pytest.mark.parametrize("slot", ["memory", "instrumentation", "extensions"])
def test_unsupported_slot_file_warns(tmp_path: Path, slot: str) -> None:
    graph = run(tmp_path, {f"agent/{slot}.py": "X = 1\n"})
    diagnostic = only(graph.diagnostics, "discover/slot-unsupported")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / f"{slot}.py")


def test_connection_files_are_discovered_by_name(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/connections/docs.py": "X = 1\n", "agent/connections/pet-store.py": "X = 1\n"})
    assert [c.name for c in graph.root.connections] == ["docs", "pet-store"]
    assert graph.root.connections[0].source.logical_path == "connections/docs.py"
    assert graph.diagnostics == []


def test_remote_subagent_module_is_unsupported(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/subagents/remote.py": "X = 1\n", "agent/subagents/notes.md": "# notes"})
    diagnostic = only(graph.diagnostics, "discover/slot-unsupported")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path.endswith("remote.py")
    assert graph.root.subagents == []


@pytest.mark.parametrize("slot", ["tools", "hooks", "skills", "schedules", "subagents", "lib", "instructions"])
def test_slot_that_is_a_file_is_an_error(tmp_path: Path, slot: str) -> None:
    graph = run(tmp_path, {f"agent/{slot}": "not a folder\n"})
    diagnostic = only(graph.diagnostics, f"discover/{slot}-directory-invalid")
    assert diagnostic.severity == "error"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / slot)


def test_lib_is_never_a_capability(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/lib/get_weather.py": tool("get_weather"),
            "agent/lib/tools/x.py": tool("x"),
            "agent/lib/instructions.md": "not instructions",
            "agent/lib/skills/s.md": "# s",
            "agent/lib/deep/nested/thing.py": "X = 1\n",
        },
    )
    assert graph.diagnostics == []
    assert graph.root.has_lib
    assert graph.root.tools == graph.root.skills == graph.root.hooks == []
    assert graph.root.subagents == []
    assert [s.logical_path for s in graph.root.instructions] == ["instructions.md"]


# --- instructions -------------------------------------------------------------------------------


def test_missing_instructions_at_the_root(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/agent.py": AGENT_PY}, base=False)
    diagnostic = only(graph.diagnostics, "discover/required-instructions-missing")
    assert diagnostic.severity == "error"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent")


def test_empty_agent_folder_needs_instructions(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/": ""}, base=False)
    assert codes(graph.diagnostics) == ["discover/required-instructions-missing"]


@pytest.mark.parametrize("module", ["instructions.py", "instructions/a.md", "instructions/a.py"])
def test_other_instruction_forms_satisfy_the_requirement(tmp_path: Path, module: str) -> None:
    graph = run(tmp_path, {"agent/agent.py": AGENT_PY, f"agent/{module}": "x = 1\n"}, base=False)
    assert graph.diagnostics == []
    assert [s.logical_path for s in graph.root.instructions] == [module]


def test_instructions_md_and_py_collide(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/instructions.py": "X = 1\n"})
    diagnostic = only(graph.diagnostics, "discover/slot-collision")
    assert diagnostic.severity == "error"
    assert find(graph.diagnostics, "discover/required-instructions-missing") == []
    assert graph.root.instructions == []


def test_instructions_order_root_file_then_sorted_folder(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/instructions/b.md": "B",
            "agent/instructions/a.md": "A",
            "agent/instructions/C.py": "X = 1\n",
            "agent/instructions/notes.txt": "ignored",
            "agent/instructions/sub/deep.md": "not read",
        },
    )
    assert graph.diagnostics == []
    assert [s.logical_path for s in graph.root.instructions] == [
        "instructions.md",
        "instructions/a.md",
        "instructions/b.md",
        "instructions/C.py",
    ]
    assert [s.kind for s in graph.root.instructions] == ["markdown", "markdown", "markdown", "module"]


def test_instructions_md_is_found_case_insensitively(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/agent.py": AGENT_PY, "agent/INSTRUCTIONS.md": "hi"}, base=False)
    assert graph.diagnostics == []
    assert [s.logical_path for s in graph.root.instructions] == ["INSTRUCTIONS.md"]
    assert graph.root.instructions[0].kind == "markdown"


def test_system_md_is_a_deprecated_fallback(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/agent.py": AGENT_PY, "agent/system.md": "legacy"}, base=False)
    diagnostic = only(graph.diagnostics, "discover/deprecated-system-slot")
    assert diagnostic.severity == "warning"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "system.md")
    assert codes(graph.diagnostics) == ["discover/deprecated-system-slot"]
    assert [s.logical_path for s in graph.root.instructions] == ["system.md"]


def test_system_md_is_ignored_when_instructions_exist(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/system.md": "legacy"})
    assert graph.diagnostics == []
    assert [s.logical_path for s in graph.root.instructions] == ["instructions.md"]


def test_system_md_and_py_collide(tmp_path: Path) -> None:
    graph = run(
        tmp_path, {"agent/agent.py": AGENT_PY, "agent/system.md": "a", "agent/system.py": "X = 1\n"}, base=False
    )
    assert codes(graph.diagnostics) == ["discover/slot-collision"]


# --- hooks, schedules, skills -------------------------------------------------------------------


def test_hooks_are_recursive_and_named_by_relative_path(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/hooks/auth/load-profile.py": "X = 1\n",
            "agent/hooks/audit.py": "X = 1\n",
            "agent/hooks/auth/notes.md": "ignored: hooks are modules only",
        },
    )
    assert graph.diagnostics == []
    # subfolders are walked before the files of the same level
    assert [(h.name, h.source.logical_path) for h in graph.root.hooks] == [
        ("auth/load-profile", "hooks/auth/load-profile.py"),
        ("audit", "hooks/audit.py"),
    ]


@pytest.mark.parametrize("path", ["hooks/1bad.py", "hooks/bad dir/x.py", "hooks/ok/9nope.py"])
def test_bad_hook_segment(tmp_path: Path, path: str) -> None:
    graph = run(tmp_path, {f"agent/{path}": "X = 1\n"})
    assert only(graph.diagnostics, "discover/hook-name-invalid").severity == "error"
    assert graph.root.hooks == []


def test_schedules_are_recursive_with_markdown_and_modules(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/schedules/billing/sweep.py": "X = 1\n",
            "agent/schedules/cleanup.md": "---\ncron: '0 0 * * 0'\n---\nClean up.\n",
        },
    )
    assert graph.diagnostics == []
    assert [(s.name, s.source.logical_path, s.source.kind) for s in graph.root.schedules] == [
        ("billing/sweep", "schedules/billing/sweep.py", "module"),
        ("cleanup", "schedules/cleanup.md", "markdown"),
    ]


def test_schedule_markdown_and_module_collide(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/schedules/nightly.md": "x", "agent/schedules/nightly.py": "X = 1\n"})
    assert only(graph.diagnostics, "discover/slot-collision").severity == "error"
    assert graph.root.schedules == []


@pytest.mark.parametrize("path", ["schedules/1bad.md", "schedules/bad.dir/x.py"])
def test_bad_schedule_segment(tmp_path: Path, path: str) -> None:
    graph = run(tmp_path, {f"agent/{path}": "X = 1\n"})
    assert only(graph.diagnostics, "discover/schedule-name-invalid").severity == "error"
    assert graph.root.schedules == []


def test_skill_forms(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/skills/summarize.md": "# Summarize\n",
            "agent/skills/shout.MD": "# Shout\n",
            "agent/skills/research/SKILL.md": "---\ndescription: Research.\n---\nBody\n",
            "agent/skills/research/references/api.md": "ref",
            "agent/skills/weather/skill.md": "---\ndescription: Weather.\n---\nBody\n",
            "agent/skills/coded.py": "X = 1\n",
            "agent/skills/.DS_Store": "hidden files are not entries",
        },
    )
    assert graph.diagnostics == []
    assert [(s.name, s.source.logical_path, s.source.kind) for s in graph.root.skills] == [
        ("coded", "skills/coded.py", "module"),
        ("research", "skills/research/SKILL.md", "skill-package"),
        ("shout", "skills/shout.MD", "markdown"),
        ("summarize", "skills/summarize.md", "markdown"),
        ("weather", "skills/weather/skill.md", "skill-package"),  # eve finds SKILL.md in any case
    ]


def test_a_skill_package_without_skill_md_is_an_error(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/skills/research/README.md": "no SKILL.md here"})
    diagnostic = only(graph.diagnostics, "discover/skill-markdown-missing")
    assert diagnostic.severity == "error"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "skills" / "research")
    assert graph.root.skills == []


def test_a_file_that_is_no_skill_is_an_error(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/skills/notes.txt": "not a skill", "agent/skills/ok.md": "Fine."})
    diagnostic = only(graph.diagnostics, "discover/skill-entry-not-directory")
    assert diagnostic.severity == "error" and diagnostic.source_path.endswith("notes.txt")
    assert [s.name for s in graph.root.skills] == ["ok"]


@pytest.mark.parametrize(
    "files",
    [
        {"agent/skills/summarize.md": "a", "agent/skills/summarize.py": "X = 1\n"},
        {"agent/skills/summarize.md": "a", "agent/skills/summarize/SKILL.md": "---\ndescription: d\n---\n"},
    ],
)
def test_skill_forms_collide(tmp_path: Path, files: dict[str, str | bytes]) -> None:
    graph = run(tmp_path, files)
    assert only(graph.diagnostics, "discover/skill-collision").severity == "error"
    assert graph.root.skills == []


@pytest.mark.parametrize("path", ["skills/1bad.md", "skills/bad name/SKILL.md", "skills/x.y.md"])
def test_bad_skill_name(tmp_path: Path, path: str) -> None:
    graph = run(tmp_path, {f"agent/{path}": "---\ndescription: d\n---\n"})
    assert only(graph.diagnostics, "discover/skill-name-invalid").severity == "error"
    assert graph.root.skills == []


# --- subagents ----------------------------------------------------------------------------------


def test_subagents_node_ids_and_nesting(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/subagents/researcher/agent.py": SUBAGENT_PY,
            "agent/subagents/researcher/tools/search.py": tool("search"),
            "agent/subagents/researcher/subagents/helper/agent.py": SUBAGENT_PY,
            "agent/subagents/writer/agent.py": SUBAGENT_PY,
            "agent/subagents/writer/instructions.md": "Write.",
        },
    )
    assert graph.diagnostics == []
    assert [(a.node_id, a.parent_node_id, a.name) for a in graph.agents()] == [
        ("__root__", None, "app"),
        ("subagents/researcher", "__root__", "researcher"),
        ("subagents/researcher/subagents/helper", "subagents/researcher", "helper"),
        ("subagents/writer", "__root__", "writer"),
    ]
    researcher = subagent(graph, "subagents/researcher")
    assert not researcher.is_root
    assert researcher.root == tmp_path / "app" / "agent" / "subagents" / "researcher"
    assert tool_names(researcher) == ["search"]
    assert tool_names(graph.root) == []  # the root does not see the subagent's tools
    assert researcher.instructions == []  # a subagent without instructions is fine
    assert [s.logical_path for s in subagent(graph, "subagents/writer").instructions] == ["instructions.md"]


def test_subagent_without_agent_py(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/subagents/researcher/instructions.md": "Research."})
    diagnostic = only(graph.diagnostics, "discover/subagent-config-missing")
    assert diagnostic.severity == "error"
    assert diagnostic.node_id == "subagents/researcher"
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / "subagents" / "researcher")


def test_subagent_named_agent_is_reserved(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/subagents/agent/agent.py": SUBAGENT_PY})
    assert only(graph.diagnostics, "discover/subagent-name-reserved").severity == "error"
    assert graph.root.subagents == []


@pytest.mark.parametrize("name", ["1bad", "bad name", "bad.name"])
def test_bad_subagent_name(tmp_path: Path, name: str) -> None:
    graph = run(tmp_path, {f"agent/subagents/{name}/agent.py": SUBAGENT_PY})
    assert only(graph.diagnostics, "discover/subagent-name-invalid").severity == "error"
    assert graph.root.subagents == []


@pytest.mark.parametrize("form", ["schedules/nightly.md", "schedules"])
def test_schedules_in_a_subagent_are_invalid(tmp_path: Path, form: str) -> None:
    graph = run(
        tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY, f"agent/subagents/researcher/{form}": "x"}
    )
    diagnostic = only(graph.diagnostics, "discover/invalid-schedules-directory")
    assert diagnostic.severity == "error"
    assert diagnostic.node_id == "subagents/researcher"
    assert subagent(graph, "subagents/researcher").schedules == []


def test_channels_in_a_subagent_are_an_unsupported_directory(tmp_path: Path) -> None:
    graph = run(
        tmp_path, {"agent/subagents/researcher/agent.py": SUBAGENT_PY, "agent/subagents/researcher/channels/x.py": ""}
    )
    diagnostic = only(graph.diagnostics, "discover/unsupported-directory")
    assert diagnostic.node_id == "subagents/researcher"
    assert find(graph.diagnostics, "discover/slot-unsupported") == []


def test_subagent_diagnostics_carry_its_node_id(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/subagents/researcher/agent.py": SUBAGENT_PY,
            "agent/subagents/researcher/tools/1bad.py": tool("x"),
            "agent/subagents/researcher/subagents/deep/agent.py": SUBAGENT_PY,
            "agent/subagents/researcher/subagents/deep/hooks/2bad.py": "",
        },
    )
    assert {(d.code, d.node_id) for d in graph.diagnostics} == {
        ("discover/tool-name-invalid", "subagents/researcher"),
        ("discover/hook-name-invalid", "subagents/researcher/subagents/deep"),
    }


# --- discovery never runs user code -------------------------------------------------------------


def test_discovery_imports_no_user_code(tmp_path: Path) -> None:
    marker = tmp_path / "imported.marker"
    side_effect = f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\nraise RuntimeError('boom')\n"
    before_modules = app_modules()
    before_path = list(sys.path)
    graph = run(
        tmp_path,
        {
            "agent/agent.py": side_effect,
            "agent/tools/boom.py": side_effect,
            "agent/tools/pkg/__init__.py": side_effect,
            "agent/hooks/h.py": side_effect,
            "agent/skills/s.py": side_effect,
            "agent/schedules/s.py": side_effect,
            "agent/instructions/i.py": side_effect,
            "agent/lib/l.py": side_effect,
            "agent/subagents/sub/agent.py": side_effect,
            "agent/tools/exits.py": "import sys\nsys.exit(3)\n",
        },
    )
    assert graph.diagnostics == []
    assert not marker.exists()
    assert app_modules() == before_modules
    assert sys.path == before_path
    assert tool_names(graph.root) == ["boom", "exits", "pkg"]


def test_discovery_manifest_round_trips(tmp_path: Path) -> None:
    graph = run(tmp_path, {"agent/tools/get_weather.py": tool("get_weather"), "agent/foo/": ""})
    again = SourceGraph.model_validate_json(graph.model_dump_json())
    assert again == graph
    assert again.kind == "eve-discovery"


def test_channels_are_discovered_at_the_root_without_importing_them(tmp_path: Path) -> None:
    graph = run(
        tmp_path,
        {
            "agent/channels/webhook.py": "raise RuntimeError('discovery imported me')\n",
            "agent/channels/eve.py": "raise RuntimeError('discovery imported me')\n",
            "agent/channels/Bad_Name.py": "X = 1\n",
            "agent/channels/notes.md": "# not a channel",
        },
    )
    assert [c.name for c in graph.root.channels] == ["eve", "webhook"]
    assert graph.root.channels[1].source.logical_path == "channels/webhook.py"
    diagnostic = only(graph.diagnostics, "discover/channel-name-invalid")
    assert diagnostic.severity == "error" and "Bad_Name" in diagnostic.message
