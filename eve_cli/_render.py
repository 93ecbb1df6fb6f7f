"""The human view of `eve info`, drawn without rich (`eve_cli._plain`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from eve_cli._console import diagnostic_spans
from eve_cli._plain import Cell, Page, uses_color
from eve_cli.main import terminal_columns

if TYPE_CHECKING:
    from eve_runtime.project.compiler import CompiledApp
    from eve_runtime.project.manifest import AgentManifest, ChannelManifest

__all__ = ["render_info"]

STATUS_STYLE = {"active": "green", "replaced": "cyan", "disabled": "yellow", "denied-by-policy": "yellow"}
NONE: Cell = [("none", "dim")]


def _names(items: list[str]) -> Cell:
    return [(", ".join(items), "")] if items else NONE


def _missing_keys(agent: AgentManifest | None) -> dict[str, str]:
    import os

    from eve_runtime.project.info import missing_keys

    return missing_keys(agent, os.environ)


def _summary(compiled: CompiledApp) -> list[tuple[str, Cell]]:
    from eve_runtime.diagnostics import summarize
    from eve_runtime.routes import MESSAGING

    manifest = compiled.manifest
    counts = summarize(manifest.diagnostics)
    status: Cell = [("ready", "green")] if compiled.ok else [("failed", "red")]
    unset = sorted(set(_missing_keys(manifest.root).values()))
    if compiled.ok and unset:
        status = [(f"ready, but {', '.join(unset)} {'is' if len(unset) == 1 else 'are'} not set", "yellow")]
    rows: list[tuple[str, Cell]] = [
        ("App Root", [(manifest.app_root, "")]),
        ("Agent Root", [(manifest.agent_root, "")]),
        ("Layout", [("nested", "")]),
        ("Compile", [*status, (f" in {compiled.duration_ms:.0f} ms", "")]),
        ("Diagnostics", [(f"{counts.errors} errors, {counts.warnings} warnings", "")]),
    ]
    if manifest.root is not None:
        rows += _agent_rows(manifest.root)
    rows += [(f"Messaging {key.title()}", [(route, "")]) for key, route in MESSAGING.items()]
    rows.append(("Manifest", [(str(compiled.paths.manifest_file), "")]))
    rows.append(("Diagnostics File", [(str(compiled.paths.diagnostics_file), "")]))
    return rows


def _agent_rows(agent: AgentManifest) -> list[tuple[str, Cell]]:
    model = agent.model.id or "dynamic (define_dynamic)"
    if agent.model.reasoning:
        model += f" (reasoning {agent.model.reasoning})"
    variable = _missing_keys(agent).get(agent.model.id or "") if agent.model.id else None
    unset: Cell = [(f" ({variable} is not set: its turns fail until it is)", "yellow")] if variable else []
    instructions = [f"{i.source.logical_path} ({i.role})" for i in agent.instructions]
    instructions += [f"{d.source.logical_path} (dynamic)" for d in agent.dynamic_instructions]
    skills = [s.name for s in agent.skills] + [f"{d.slug} (dynamic)" for d in agent.dynamic_skills]
    description: Cell = [(" " + agent.description, "dim")] if agent.description else []
    return [
        ("Agent", [(agent.name, ""), *description]),
        ("Model", [(model, ""), *unset]),
        ("Instructions", _names(instructions)),
        ("Skills", _names(skills)),
        ("Sandbox", _sandbox(agent)),
        ("Subagents", _names([s.name for s in agent.subagents])),
        ("Schedules", _names([f"{s.name} ({s.cron})" for s in agent.schedules])),
        ("Hooks", _names([h.slug for h in agent.hooks])),
        ("Channels", _names([_channel(c) for c in agent.channels])),
        ("Connections", _names([f"{c.connection_name} ({c.protocol}, {c.url})" for c in agent.connections])),
    ]


def _sandbox(agent: AgentManifest) -> Cell:
    sandbox = agent.sandbox
    if sandbox is None:
        return NONE
    if sandbox.inherits_parent:
        return [("the parent's (define_parent_sandbox)", "")]
    where = "default" if sandbox.source.owner == "framework" else sandbox.source.logical_path
    seed = f", {sandbox.seed_files} seed files" if sandbox.seed_files else ""
    return [
        (
            f"{sandbox.backend_kind} backend, network {sandbox.network}, {sandbox.timeout_seconds:g} s a command{seed} "
            f"({where})",
            "",
        )
    ]


def _channel(channel: ChannelManifest) -> str:
    if channel.kind == "disabled":
        return "eve (disabled: no /eve/v1 routes)"
    if channel.kind == "eve":
        return "eve (authored auth)"
    return f"{channel.name} ({', '.join(f'{r.method} {r.path}' for r in channel.routes) or 'no routes'})"


def _tools(agent: AgentManifest, page: Page) -> None:
    rows: list[list[Cell]] = []
    for tool in agent.tools:
        description = tool.description.splitlines()[0] if tool.description else ""
        rows.append([[(tool.name, "")], [(tool.source.logical_path, "")], [(tool.approval, "")], [(description, "")]])
    for dynamic in agent.dynamic_tools:
        dynamic_events = "dynamic: " + ", ".join(dynamic.event_names)
        rows.append([[(dynamic.slug, "")], [(dynamic.source.logical_path, "")], [("-", "")], [(dynamic_events, "")]])
    for framework in agent.framework_tools:
        if framework.status in ("not-applicable", "replaced"):
            continue  # not for this agent, or listed above as the tool file that provides it
        status: Cell = [(framework.status, STATUS_STYLE.get(framework.status, "dim"))]
        if framework.reason:
            status = [*status, (" " + framework.reason, "dim")]
        rows.append([[(framework.name, "")], [("framework", "")], [("-", "")], status])
    page.table("Tools", ["name", "source", "approval", "description"], rows)


def _schedules(agent: AgentManifest, page: Page) -> None:
    from eve_runtime.project.info import next_fire_times

    now = time.time()
    rows: list[list[Cell]] = []
    for schedule in agent.schedules:
        runs = "run handler" if schedule.has_run else "prompt (task mode)"
        upcoming = [at.replace("T", " ").removesuffix(":00Z") for at in next_fire_times(schedule.cron, now)]
        cells = (schedule.name, schedule.cron, runs, schedule.missed, ", ".join(upcoming))
        rows.append([[(cell, "")] for cell in cells])
    page.table("Schedules (UTC)", ["name", "cron", "runs", "missed", "next fires"], rows)


def render_info(compiled: CompiledApp) -> str:
    """The summary, the tools table, the schedules with their next fire times, and the diagnostics."""
    page = Page(terminal_columns(), uses_color())  # rich's width too: COLUMNS, the terminal's, or 80
    page.grid(_summary(compiled))
    root = compiled.manifest.root
    if root is not None:
        page.blank()
        _tools(root, page)
        if root.schedules:
            page.blank()
            _schedules(root, page)
    if compiled.manifest.diagnostics:
        page.blank()
        for diagnostic in compiled.manifest.diagnostics:
            head, body = diagnostic_spans(diagnostic)
            page.line(*head)
            page.line(*body, indent=2)
    for model_id, variable in _missing_keys(root).items():
        page.blank()
        page.line(
            ("warning:", "yellow bold"),
            (
                f" the model {model_id} needs an API key in {variable}, which is not set: set it in the environment "
                "or in the app's .env file (see docs/models.md).",
                "",
            ),
        )
    return page.text()
