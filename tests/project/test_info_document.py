"""The served agent-info document keeps to eve/client 0.80.1's strict schema; `eve info` shows more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eve_runtime.project.info import agent_info, cli_info
from tests.project.test_compiler import build
from tests.server.support import scaffold_app

EXTRAS = {("agent", "settings"), ("tools", "framework"), ("diagnostics", "entries"), ("workflow",)}


def sources(node: Any) -> list[dict[str, Any]]:
    """Every object in the document that describes a source (it has a `sourceKind`)."""
    found = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "sourceKind" in item:
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def has(document: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = document
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def test_module_sources_carry_their_binding_and_framework_ones_a_programmatic_backing(tmp_path: Path) -> None:
    app = build(tmp_path, {name: path.read_bytes() for name, path in _template(tmp_path).items()}, base=False)
    info = agent_info(app.manifest, mode="production")
    described = sources(info)
    assert described and all(s["sourceKind"] in ("markdown", "module", "skill-package") for s in described)
    for source in described:
        if source["sourceKind"] != "module":
            assert "binding" not in source
            continue
        binding = source["binding"]
        assert set(binding) == {"backing", "logicalPath", "owner"}
        assert (binding["logicalPath"], binding["owner"]) == (source["logicalPath"], source["owner"])
        if source["owner"]["kind"] == "application":
            assert binding["backing"]["kind"] == "filesystem" and Path(binding["backing"]["sourcePath"]).is_file()
        else:
            assert binding["backing"]["kind"] == "programmatic" and binding["backing"]["registryId"] == "eve:defaults"
    routes = info["channels"]["routes"]
    assert {r["sourceKind"] for r in routes} == {"module"}
    assert info["agent"]["model"]["routing"] == {"kind": "external", "provider": "test"}
    assert info["sandbox"]["sourceId"] == "eve:defaults:sandbox.py" and "revisionHash" in info["sandbox"]
    assert all("sourceKind" not in entry for entry in info["composition"]["shadowed"])
    assert "missed" not in info["schedules"][0]
    assert not any(has(info, path) for path in EXTRAS)
    everything = cli_info(app)
    assert all(has(everything, path) for path in EXTRAS)  # eve info still shows them
    assert everything["schedules"][0]["missed"] == "latest" and everything["sandbox"]["backendKind"] == "auto"


def _template(tmp_path: Path) -> dict[str, Path]:
    root = scaffold_app(tmp_path / "template")
    return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file()}
