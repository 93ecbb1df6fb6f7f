"""Compiling skills by eve's rules: their descriptions and frontmatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_compiler import build, failed, ok

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
    [found] = ok(build(tmp_path, {"agent/skills/weather/SKILL.md": content})).skills
    assert found.name == "weather"  # the folder names it, never the frontmatter
    assert found.markdown == "Call get_weather.\n"


def test_package_files_are_those_of_its_three_folders(tmp_path: Path) -> None:
    root = ok(
        build(
            tmp_path,
            {
                "agent/skills/research/SKILL.md": "---\ndescription: Research.\n---\nBody\n",
                "agent/skills/research/references/api.md": "api",
                "agent/skills/research/scripts/run.sh": "echo",
                "agent/skills/research/assets/img/logo.txt": "logo",
                "agent/skills/research/assets/.hidden": "left out",
                "agent/skills/research/other/ignored.md": "not a package folder",
            },
        )
    )
    [research] = root.skills
    assert sorted(research.files) == ["assets/img/logo.txt", "references/api.md", "scripts/run.sh"]
