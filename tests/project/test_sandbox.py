"""The sandbox slot: discovery of `sandbox.py` / `sandbox/`, compiling the definition, what info shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eve_runtime.project.info import cli_info
from eve_runtime.project.sources import ROOT_NODE_ID
from tests.helpers import compiled, errors, minimal_app, only

DEFINED = "from eve_runtime import define_sandbox\n\nsandbox = define_sandbox({args})\n"
PARENT = "from eve_runtime import define_parent_sandbox\n\nsandbox = define_parent_sandbox()\n"
SUBAGENT = {
    "agent/subagents/helper/agent.py": (
        "from eve_runtime import define_agent\nagent = define_agent(model='test', description='Helps.')\n"
    ),
    "agent/subagents/helper/instructions.md": "Help.\n",
}


def test_without_a_sandbox_file_the_framework_default_applies(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path)) as app:
        assert app.ok and app.root is not None and app.root.sandbox is not None
        assert app.root.sandbox.config.backend == "auto" and app.root.sandbox.config.network.mode == "deny-all"
        info = cli_info(app)
    sandbox = info["sandbox"]
    assert sandbox["sourceId"] == "eve:defaults:sandbox.py" and sandbox["owner"]["kind"] == "framework"
    assert (sandbox["backendKind"], sandbox["hasBootstrap"], sandbox["hasOnSession"]) == ("auto", False, False)
    assert sandbox["revisionHash"].startswith("sha256:")
    assert sandbox["backend"] in ("bwrap", "local")


def test_the_folder_form_adds_the_seed_and_the_definition_shows_in_info(tmp_path: Path) -> None:
    args = (
        'bootstrap=["make"], environment={"API_TOKEN": "s3cret-value"}, network={"allow": ["127.0.0.1"]}, '
        'description="Data box"'
    )
    root = minimal_app(
        tmp_path,
        {
            "agent/sandbox/sandbox.py": DEFINED.format(args=args),
            "agent/sandbox/workspace/schema.sql": "create table t;\n",
            "agent/sandbox/workspace/data/rows.csv": "1\n",
        },
    )
    with compiled(root) as app:
        assert app.ok, [d.message for d in app.diagnostics]
        info = cli_info(app)
        manifest_text = app.manifest.to_json()
    sandbox = info["sandbox"]
    assert sandbox["logicalPath"] == "sandbox/sandbox.py" and sandbox["exportName"] == "sandbox"
    assert sandbox["description"] == "Data box" and sandbox["hasBootstrap"] is True
    assert sandbox["network"] == "allow 127.0.0.1"
    assert sandbox["environmentKeys"] == ["API_TOKEN"]
    assert sandbox["workspace"] == {"seedFiles": 2, "skills": []}
    assert "s3cret-value" not in json.dumps(info) and "s3cret-value" not in manifest_text  # never the values


def test_a_changed_seed_changes_the_revision(tmp_path: Path) -> None:
    root = minimal_app(tmp_path, {"agent/sandbox/workspace/a.txt": "1"})
    with compiled(root) as app:
        before = cli_info(app)["sandbox"]["revisionHash"]
    (root / "agent" / "sandbox" / "workspace" / "a.txt").write_text("2")
    with compiled(root) as app:
        assert cli_info(app)["sandbox"]["revisionHash"] != before


@pytest.mark.parametrize(
    ("files", "code"),
    [
        (
            {"agent/sandbox.py": DEFINED.format(args=""), "agent/sandbox/sandbox.py": DEFINED.format(args="")},
            "discover/slot-collision",
        ),
        ({"agent/sandbox": "not a folder"}, "discover/sandbox-directory-invalid"),
        ({"agent/sandbox.py": "X = 1\n"}, "compile/definition-missing"),
        ({"agent/sandbox.py": DEFINED.format(args="backend='podman'")}, "compile/definition-invalid"),
        (
            {"agent/sandbox.py": "from eve_runtime import define_parent_sandbox\nsandbox = define_parent_sandbox()\n"},
            "compile/parent-sandbox-root",
        ),
        (
            {
                **SUBAGENT,
                "agent/subagents/helper/sandbox/sandbox.py": PARENT,
                "agent/subagents/helper/sandbox/workspace/x.txt": "x",
            },
            "compile/parent-sandbox-workspace",
        ),
    ],
)
def test_bad_sandbox_definitions_are_diagnostics(tmp_path: Path, files: dict[str, str], code: str) -> None:
    with compiled(minimal_app(tmp_path, files)) as app:
        assert only(errors(app.diagnostics), code)


def test_an_unexpected_entry_in_the_sandbox_folder_warns(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path, {"agent/sandbox/notes.txt": "x"})) as app:
        assert app.ok
        assert (
            "a sandbox folder holds sandbox.py and workspace/"
            in only(app.diagnostics, "discover/unsupported-directory").message
        )


def test_a_subagent_sharing_its_parents_sandbox(tmp_path: Path) -> None:
    files = {
        **SUBAGENT,
        "agent/subagents/helper/sandbox.py": PARENT,
    }
    root = minimal_app(
        tmp_path, {**files, "agent/sandbox.py": DEFINED.format(args='network={"allow": ["10.0.0.0/8"]}')}
    )
    with compiled(root) as app:
        assert app.ok and app.root is not None
        helper = app.root.subagents["helper"]
        assert helper.sandbox is None  # its workspaces are its parent's
        assert helper.manifest.sandbox is not None and helper.manifest.sandbox.inherits_parent
        assert helper.manifest.sandbox.network == "allow 10.0.0.0/8"  # web_fetch follows the parent's policy
        assert app.root.manifest.node_id == ROOT_NODE_ID


def test_skill_files_are_placed_for_packages_markdown_and_modules(tmp_path: Path) -> None:
    root = minimal_app(
        tmp_path,
        {
            "agent/skills/sql/SKILL.md": "---\ndescription: SQL help\n---\nUse sqlite3.\n",
            "agent/skills/sql/references/cheatsheet.md": "SELECT 1;\n",
            "agent/skills/tone.md": "---\ndescription: Tone\n---\nBe kind.\n",
            "agent/skills/coded.py": (
                "from eve_runtime import define_skill\n"
                "skill = define_skill(description='Coded', markdown='Do it.', files={'scripts/run.sh': 'echo run'})\n"
            ),
        },
    )
    with compiled(root) as app:
        assert app.ok, [d.message for d in app.diagnostics]
        assert app.root is not None and app.root.sandbox is not None
        trees = {tree.name: dict(tree.files) for tree in app.root.sandbox.skills}
    assert set(trees) == {"sql", "tone", "coded"}
    assert set(trees["sql"]) == {"SKILL.md", "references/cheatsheet.md"}
    assert trees["coded"]["scripts/run.sh"] == b"echo run"
    assert b"Do it." in trees["coded"]["SKILL.md"]
    assert set(trees["tone"]) == {"SKILL.md"}


def test_info_says_why_framework_tools_are_not_active(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path)) as app:
        framework = {f["name"]: f for f in cli_info(app)["tools"]["framework"]}
    for name in ("bash", "read_file", "write_file", "web_fetch"):
        assert framework[name]["status"] == "active" and "reason" not in framework[name]
    assert framework["web_search"]["status"] == "unavailable"
    assert "no search provider is set" in framework["web_search"]["reason"]
    assert framework["glob"]["status"] == "off"
    assert "from eve_runtime.framework_tools import glob" in framework["glob"]["reason"]


def test_a_search_provider_turns_web_search_on(tmp_path: Path) -> None:
    provider = (
        "from eve_runtime.framework_tools import web_search_tool\n\n"
        "async def search(query, max_results):\n"
        "    return [{'title': 'T', 'url': 'https://example.com', 'snippet': query}]\n\n"
        "web_search = web_search_tool(search)\n"
    )
    with compiled(minimal_app(tmp_path, {"agent/tools/web_search.py": provider})) as app:
        assert app.ok and app.root is not None
        framework = {f["name"]: f for f in cli_info(app)["tools"]["framework"]}
        tool = app.root.tools["web_search"]
    assert framework["web_search"]["status"] == "replaced"
    assert tool.manifest.input_schema["required"] == ["query"]
