"""The connections slot: discovery of `connections/*.py`, compiling, collisions, and what info shows."""

from __future__ import annotations

import json
from pathlib import Path

from eve_runtime.authoring.connections import OpenApiConnection
from eve_runtime.project.info import cli_info
from tests.helpers import compiled, errors, minimal_app

MCP = (
    "from eve_runtime import connection_auth, define_mcp_client_connection, env, once\n\n"
    "docs = define_mcp_client_connection(\n"
    "    url='https://user:pw@mcp.example.com/mcp?key=s3cret-in-query',\n"
    "    description='The product docs.',\n"
    "    headers={'X-Team': env('DOCS_TEAM')},\n"
    "    auth=connection_auth(token_env='DOCS_TOKEN'),\n"
    "    approval=once(),\n"
    "    tools={'allow': ['search', 'read']},\n"
    ")\n"
)
OPENAPI = (
    "from eve_runtime import define_openapi_connection\n\n"
    "pets = define_openapi_connection(spec='pets.json', description='The pets API.', base_url='http://127.0.0.1:1')\n"
)


def test_connections_compile_and_info_shows_them_without_secrets(tmp_path: Path) -> None:
    root = minimal_app(tmp_path, {"agent/connections/docs.py": MCP, "agent/connections/pet-store.py": OPENAPI})
    with compiled(root) as app:
        assert app.ok, [d.message for d in app.diagnostics]
        assert app.root is not None and set(app.root.connections) == {"docs", "pet-store"}
        pets_definition = app.root.connections["pet-store"]
        assert isinstance(pets_definition, OpenApiConnection)
        assert pets_definition.spec_base == str(root / "agent" / "connections")
        info = cli_info(app)
    by_name = {c["connectionName"]: c for c in info["connections"]}
    docs = by_name["docs"]
    assert "transport" not in docs and docs["protocol"] == "mcp" and docs["url"] == "https://mcp.example.com/mcp"
    assert (docs["hasApproval"], docs["hasAuthorization"], docs["hasHeaders"]) == (True, True, True)
    assert docs["toolFilter"] == {"allow": ["search", "read"]}
    assert docs["logicalPath"] == "connections/docs.py" and docs["exportName"] == "docs"
    pets = by_name["pet-store"]
    assert pets["protocol"] == "openapi" and pets["hasApproval"] is True and "toolFilter" not in pets
    text = json.dumps(info)
    assert "s3cret-in-query" not in text and "pw@" not in text
    framework = {t["name"]: t for t in info["tools"]["framework"]}
    assert framework["connection_search"]["status"] == "active"


def test_without_connections_connection_search_is_not_offered(tmp_path: Path) -> None:
    with compiled(minimal_app(tmp_path)) as app:
        info = cli_info(app)
    framework = {t["name"]: t for t in info["tools"]["framework"]}
    assert framework["connection_search"]["status"] == "not-applicable"
    assert info["connections"] == []


def test_bad_names_bad_files_and_unknown_protocols_are_diagnostics(tmp_path: Path) -> None:
    root = minimal_app(
        tmp_path,
        {
            "agent/connections/Linear.py": MCP,
            "agent/connections/two__parts.py": MCP,
            "agent/connections/empty.py": "x = 1\n",
            "agent/connections/grpc.py": "service = {'protocol': 'grpc', 'url': 'h:1'}\n",
            "agent/connections/broken.py": "raise RuntimeError('no')\n",
        },
    )
    with compiled(root) as app:
        codes = sorted(d.code for d in errors(app.diagnostics))
        messages = " ".join(d.message for d in errors(app.diagnostics))
    assert codes.count("discover/connection-name-invalid") == 2
    assert "compile/connection-protocol-unknown" in codes and "'grpc'" in messages
    assert "compile/definition-missing" in codes or "compile/definition-not-found" in codes, codes
    assert any(code.startswith("load/") or "import" in code for code in codes), codes


def test_a_tool_or_subagent_inside_a_connections_names_collides(tmp_path: Path) -> None:
    tool = "def {name}(x: str) -> str:\n    '''Does x.'''\n    return x\n"
    root = minimal_app(
        tmp_path,
        {
            "agent/connections/docs.py": MCP,
            "agent/tools/docs__search.py": tool.format(name="docs__search"),
            "agent/tools/docs.py": tool.format(name="docs"),
        },
    )
    with compiled(root) as app:
        collisions = [d for d in errors(app.diagnostics) if d.code == "compile/connection-name-collision"]
    assert len(collisions) == 2
    assert all("connections/docs.py" in d.message for d in collisions)
