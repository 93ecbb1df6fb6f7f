"""Compiling skills by eve's rules: descriptions, frontmatter, package files, `define_skill`, dynamic skills, info."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime.project.compiler import CompiledApp
from eve_runtime.project.info import agent_info, cli_info
from eve_runtime.project.runtime_agent import RuntimeAgent, RuntimeSkill
from tests.project.test_compiler import SUBAGENT_PY, build, child, failed, ok, statuses


def runtime(result: CompiledApp) -> RuntimeAgent:
    ok(result)
    assert result.root is not None
    return result.root


def skill(result: CompiledApp, name: str) -> RuntimeSkill:
    return runtime(result).skills[name]


# --- descriptions: eve's rules for a missing one ------------------------------------------------


def test_skill_descriptions(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/skills/framed.md": "---\ndescription: ' Plan a trip. '\nlicense: MIT\n---\n# Body\n",
                "agent/skills/heading.md": "\n\n## Summarize  a document\nMore.\n",
                "agent/skills/quote.md": "> - * Quoted line\n",
                "agent/skills/fenced.md": "```\ncode\n```\n- Real line\n",
                "agent/skills/empty.md": "\n   \n#\n",
                "agent/skills/marker.md": "#\nThe line after a bare marker is not tried.\n",
                "agent/skills/tilde.md": "~~~\nOnly backtick fences are skipped.\n",
                "agent/skills/nulled.md": "---\ndescription:\n---\nFrom the body.\n",
                "agent/skills/coded.py": """\
                    from eve_runtime import define_skill

                    skill = define_skill(
                        description="Coded.", markdown="Do it.", files={"references/a.md": "A"}, license="MIT"
                    )
                """,
                "agent/skills/research/SKILL.md": "---\ndescription: Research.\n---\nBody\n",
            },
        )
    )
    skills = {s.name: s for s in root.skills}
    assert skills["framed"].description == "Plan a trip."
    assert skills["framed"].license == "MIT"
    assert skills["framed"].markdown == "# Body\n"
    assert skills["heading"].description == "Summarize  a document"
    assert skills["quote"].description == "Quoted line"
    assert skills["fenced"].description == "code"  # the fence lines are skipped, not the lines inside
    assert skills["empty"].description == "Instructions for the empty skill."
    assert skills["marker"].description == "Instructions for the marker skill."
    assert skills["tilde"].description == "~~~"
    assert skills["nulled"].description == "From the body."  # an empty `description:` counts as absent
    assert skills["coded"].description == "Coded."
    assert skills["coded"].files == ["references/a.md"]
    assert skills["coded"].source.export_name == "skill"
    assert skills["research"].description == "Research."
    assert skills["research"].source.source_kind == "skill-package"


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("skills/research/SKILL.md", "---\nlicense: MIT\n---\nBody\n"),
        ("skills/research/SKILL.md", "No frontmatter at all.\n"),
        ("skills/research/SKILL.md", "---\ndescription:\n---\nBody\n"),
        ("skills/summarize.md", "---\ndescription: 42\n---\nBody\n"),
        ("skills/summarize.md", "---\ndescription: '  '\n---\nBody\n"),
    ],
)
def test_skill_description_missing(tmp_path: Path, path: str, content: str) -> None:
    diagnostic = failed(build(tmp_path, {f"agent/{path}": content}), "compile/skill-description-missing")
    assert diagnostic.source_path == str(tmp_path / "app" / "agent" / path)


def test_define_skill_without_a_description_fails_the_build(tmp_path: Path) -> None:
    content = 'from eve_runtime import define_skill\n\nskill = define_skill(description="", markdown="Body")\n'
    diagnostic = failed(build(tmp_path, {"agent/skills/coded.py": content}), "compile/definition-invalid")
    assert "description" in diagnostic.message


# --- the rest of the frontmatter ----------------------------------------------------------------


def test_license_must_be_text(tmp_path: Path) -> None:
    content = "---\ndescription: Research.\nlicense: [MIT]\n---\nBody\n"
    diagnostic = failed(build(tmp_path, {"agent/skills/research/SKILL.md": content}), "compile/frontmatter-invalid")
    assert "'license' must be text" in diagnostic.message


def test_metadata_is_kept_only_when_every_value_is_a_string(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/skills/strings/SKILL.md": "---\ndescription: d\nmetadata:\n  owner: me\n  tier: gold\n---\nB\n",
                "agent/skills/mixed/SKILL.md": "---\ndescription: d\nmetadata:\n  owner: me\n  count: 3\n---\nB\n",
                "agent/skills/listed/SKILL.md": "---\ndescription: d\nmetadata: [a, b]\n---\nB\n",
            },
        )
    )
    metadata = {s.name: s.metadata for s in root.skills}
    assert metadata == {"listed": {}, "mixed": {}, "strings": {"owner": "me", "tier": "gold"}}


def test_other_frontmatter_is_ignored_and_the_blank_line_after_it_dropped(tmp_path: Path) -> None:
    content = "---\nname: other-name\ndescription: Weather.\nargument-hint: '[city]'\n---\n\nCall get_weather.\n"
    found = skill(build(tmp_path, {"agent/skills/weather/SKILL.md": content}), "weather")
    assert found.manifest.name == "weather"  # the folder names it, never the frontmatter
    assert found.manifest.markdown == "Call get_weather.\n"


# --- package files ------------------------------------------------------------------------------


def test_a_package_holds_its_skill_md_and_the_files_of_its_three_folders(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        {
            "agent/skills/research/SKILL.md": "---\ndescription: Research.\n---\nRead references/api.md.\n",
            "agent/skills/research/references/api.md": "api",
            "agent/skills/research/scripts/run.sh": "echo",
            "agent/skills/research/assets/img/logo.png": b"\x89PNG\x00",
            "agent/skills/research/assets/.hidden": "left out",
            "agent/skills/research/other/ignored.md": "not a package folder",
            "agent/skills/research/notes.md": "not in a package folder either",
        },
    )
    research = skill(result, "research")
    assert research.manifest.files == ["assets/img/logo.png", "references/api.md", "scripts/run.sh"]
    assert research.files == {
        "SKILL.md": b"---\ndescription: Research.\n---\nRead references/api.md.\n",
        "assets/img/logo.png": b"\x89PNG\x00",
        "references/api.md": b"api",
        "scripts/run.sh": b"echo",
    }
    assert research.handle().file("references/api.md").text() == "api"


def test_skills_that_are_not_packages_get_a_generated_skill_md(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        {
            "agent/skills/summarize.md": "# Summarize\nShort.\n",
            "agent/skills/coded.py": """\
                from eve_runtime import define_skill

                skill = define_skill(
                    description='Say "hi".', markdown="Body.\\n", files={"references/a.md": "A"},
                    license="MIT", metadata={"owner": "me"},
                )
            """,
        },
    )
    assert skill(result, "summarize").files == {
        "SKILL.md": b'---\nname: "summarize"\ndescription: "Summarize"\n---\n# Summarize\nShort.\n'
    }
    coded = skill(result, "coded")
    assert coded.files == {
        "SKILL.md": (
            b'---\nname: "coded"\ndescription: "Say \\"hi\\"."\nlicense: "MIT"\n'
            b'metadata:\n  "owner": "me"\n---\nBody.\n'
        ),
        "references/a.md": b"A",
    }


# --- dynamic skills -----------------------------------------------------------------------------

DYNAMIC = """\
from eve_runtime import define_dynamic, define_skill

playbook = define_dynamic({"session.started": lambda ctx: define_skill(description="d", markdown="m")})
"""


def test_a_dynamic_skill_resolver_compiles_to_a_resolver_and_turns_load_skill_on(tmp_path: Path) -> None:
    result = build(tmp_path, {"agent/skills/playbook.py": DYNAMIC})
    agent = runtime(result)
    root = result.manifest.root
    assert root is not None
    assert root.skills == [] and agent.skills == {}
    assert [(d.slug, d.event_names, d.source.export_name) for d in root.dynamic_skills] == [
        ("playbook", ["session.started"], "playbook")
    ]
    assert set(agent.dynamic_skills) == {"playbook"}
    assert statuses(root)["load_skill"] == "active"


def test_a_dynamic_skill_resolves_on_session_and_turn_starts_only(tmp_path: Path) -> None:
    content = DYNAMIC.replace("session.started", "step.started")
    diagnostic = failed(build(tmp_path, {"agent/skills/playbook.py": content}), "compile/dynamic-event-unsupported")
    assert "Dynamic skills" in diagnostic.message


# --- per agent, and what info shows -------------------------------------------------------------


def test_skills_belong_to_one_agent(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        {
            "agent/skills/root_skill.md": "# Root skill",
            "agent/subagents/researcher/agent.py": SUBAGENT_PY,
            "agent/subagents/researcher/instructions.md": "Research.",
            "agent/subagents/researcher/skills/own_skill.md": "# Own skill",
            "agent/subagents/plain/agent.py": SUBAGENT_PY,
            "agent/subagents/plain/instructions.md": "Plain.",
        },
    )
    root = ok(result)
    assert [s.name for s in root.skills] == ["root_skill"]
    assert [s.name for s in child(root, "researcher").skills] == ["own_skill"]
    assert statuses(child(root, "plain"))["load_skill"] == "not-applicable"
    agent = runtime(result)
    assert set(agent.skills) == {"root_skill"}
    assert set(agent.subagents["researcher"].skills) == {"own_skill"}
    assert agent.subagents["plain"].skills == {}


def test_info_lists_static_and_dynamic_skills_and_load_skill_active(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        {
            "agent/skills/plan_a_trip.md": "---\ndescription: Plan a trip.\nlicense: MIT\n---\nAsk where.\n",
            "agent/skills/playbook.py": DYNAMIC,
        },
    )
    ok(result)
    info = agent_info(result.manifest, mode="development")
    static = info["skills"]["static"]
    assert [(s["name"], s["description"], s["markdown"], s["license"]) for s in static] == [
        ("plan_a_trip", "Plan a trip.", "Ask where.\n", "MIT")
    ]
    assert static[0]["sourceKind"] == "markdown" and static[0]["logicalPath"] == "skills/plan_a_trip.md"
    [dynamic] = info["skills"]["dynamic"]
    assert (dynamic["slug"], dynamic["eventNames"], dynamic["sourceKind"]) == (
        "playbook",
        ["session.started"],
        "module",
    )
    framework = {f["name"]: f["status"] for f in cli_info(result)["tools"]["framework"]}
    assert framework["load_skill"] == "active"
    assert "framework" not in info["tools"]  # the served document has only what eve's client knows


def test_an_agent_without_skills_has_no_load_skill(tmp_path: Path) -> None:
    result = build(tmp_path, {})
    assert agent_info(result.manifest, mode="development")["skills"] == {"static": [], "dynamic": []}
    assert {f["name"]: f["status"] for f in cli_info(result)["tools"]["framework"]}["load_skill"] == "not-applicable"
