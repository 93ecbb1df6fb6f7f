"""The human view of `eve info`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eve_cli._console import print_diagnostics

if TYPE_CHECKING:
    from eve_runtime.project.compiler import CompiledApp
    from eve_runtime.project.manifest import AgentManifest, ChannelManifest

__all__ = ["render_info"]

STATUS_STYLE = {"active": "green", "replaced": "cyan", "disabled": "yellow", "denied-by-policy": "yellow"}


def _names(items: list[str]) -> str:
    return ", ".join(escape(item) for item in items) if items else "[dim]none[/]"


def _missing_keys(agent: AgentManifest | None) -> dict[str, str]:
    import os

    from eve_runtime.project.info import missing_keys

    return missing_keys(agent, os.environ)


def _summary(compiled: CompiledApp) -> Table:
    from eve_runtime.diagnostics import summarize
    from eve_runtime.routes import MESSAGING

    manifest = compiled.manifest
    counts = summarize(manifest.diagnostics)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    status = "[green]ready[/]" if compiled.ok else "[red]failed[/]"
    unset = sorted(set(_missing_keys(manifest.root).values()))
    if compiled.ok and unset:
        status = f"[yellow]ready, but {escape(', '.join(unset))} {'is' if len(unset) == 1 else 'are'} not set[/]"
    table.add_row("App Root", escape(manifest.app_root))
    table.add_row("Agent Root", escape(manifest.agent_root))
    table.add_row("Layout", "nested")
    table.add_row("Compile", f"{status} in {compiled.duration_ms:.0f} ms")
    table.add_row("Diagnostics", f"{counts.errors} errors, {counts.warnings} warnings")
    root = manifest.root
    if root is not None:
        _agent_rows(table, root)
    for key, route in MESSAGING.items():
        table.add_row(f"Messaging {key.title()}", route)
    table.add_row("Manifest", escape(str(compiled.paths.manifest_file)))
    table.add_row("Diagnostics File", escape(str(compiled.paths.diagnostics_file)))
    return table


def _agent_rows(table: Table, agent: AgentManifest) -> None:
    model = agent.model.id or "dynamic (define_dynamic)"
    if agent.model.reasoning:
        model += f" (reasoning {agent.model.reasoning})"
    table.add_row("Agent", escape(agent.name) + (f" [dim]{escape(agent.description)}[/]" if agent.description else ""))
    variable = _missing_keys(agent).get(agent.model.id or "") if agent.model.id else None
    unset = f" [yellow]({escape(variable)} is not set: its turns fail until it is)[/]" if variable else ""
    table.add_row("Model", escape(model) + unset)
    instructions = [f"{i.source.logical_path} ({i.role})" for i in agent.instructions]
    instructions += [f"{d.source.logical_path} (dynamic)" for d in agent.dynamic_instructions]
    table.add_row("Instructions", _names(instructions))
    skills = [s.name for s in agent.skills] + [f"{d.slug} (dynamic)" for d in agent.dynamic_skills]
    table.add_row("Skills", _names(skills))
    table.add_row("Sandbox", _sandbox(agent))
    table.add_row("Subagents", _names([s.name for s in agent.subagents]))
    table.add_row("Schedules", _names([f"{s.name} ({s.cron})" for s in agent.schedules]))
    table.add_row("Hooks", _names([h.slug for h in agent.hooks]))
    table.add_row("Channels", _names([_channel(c) for c in agent.channels]))
    table.add_row("Connections", _names([f"{c.connection_name} ({c.protocol}, {c.url})" for c in agent.connections]))


def _sandbox(agent: AgentManifest) -> str:
    sandbox = agent.sandbox
    if sandbox is None:
        return "[dim]none[/]"
    if sandbox.inherits_parent:
        return "the parent's (define_parent_sandbox)"
    where = "default" if sandbox.source.owner == "framework" else sandbox.source.logical_path
    seed = f", {sandbox.seed_files} seed files" if sandbox.seed_files else ""
    return escape(
        f"{sandbox.backend_kind} backend, network {sandbox.network}, {sandbox.timeout_seconds:g} s a command{seed} "
        f"({where})"
    )


def _channel(channel: ChannelManifest) -> str:
    if channel.kind == "disabled":
        return "eve (disabled: no /eve/v1 routes)"
    if channel.kind == "eve":
        return "eve (authored auth)"
    return f"{channel.name} ({', '.join(f'{r.method} {r.path}' for r in channel.routes) or 'no routes'})"


def _tools(agent: AgentManifest) -> Table:
    table = Table(title="Tools", title_justify="left", show_edge=False, header_style="bold")
    table.add_column("name")
    table.add_column("source")
    table.add_column("approval")
    table.add_column("description", overflow="fold")
    for tool in agent.tools:
        table.add_row(tool.name, tool.source.logical_path, tool.approval, tool.description.splitlines()[0])
    for dynamic in agent.dynamic_tools:
        table.add_row(dynamic.slug, dynamic.source.logical_path, "-", "dynamic: " + ", ".join(dynamic.event_names))
    for framework in agent.framework_tools:
        if framework.status in ("not-applicable", "replaced"):
            continue  # not for this agent, or listed above as the tool file that provides it
        style = STATUS_STYLE.get(framework.status, "dim")
        reason = f" [dim]{escape(framework.reason)}[/]" if framework.reason else ""
        table.add_row(framework.name, "framework", "-", f"[{style}]{framework.status}[/]{reason}")
    return table


def _schedules(agent: AgentManifest) -> Table:
    from eve_runtime.project.info import next_fire_times

    table = Table(title="Schedules (UTC)", title_justify="left", show_edge=False, header_style="bold")
    table.add_column("name")
    table.add_column("cron")
    table.add_column("runs")
    table.add_column("missed")
    table.add_column("next fires", overflow="fold")
    now = time.time()
    for schedule in agent.schedules:
        runs = "run handler" if schedule.has_run else "prompt (task mode)"
        upcoming = [at.replace("T", " ").removesuffix(":00Z") for at in next_fire_times(schedule.cron, now)]
        table.add_row(escape(schedule.name), schedule.cron, runs, schedule.missed, ", ".join(upcoming))
    return table


def render_info(compiled: CompiledApp, console: Console) -> None:
    """Print the summary, the tools table, the schedules with their next fire times, and the diagnostics."""
    console.print(_summary(compiled))
    root = compiled.manifest.root
    if root is not None:
        console.print()
        console.print(_tools(root))
        if root.schedules:
            console.print()
            console.print(_schedules(root))
    if compiled.manifest.diagnostics:
        console.print()
        print_diagnostics(compiled.manifest.diagnostics, console)
    for model_id, variable in _missing_keys(root).items():
        console.print()
        console.print(
            f"[yellow bold]warning:[/] the model {escape(model_id)} needs an API key in {escape(variable)}, which is "
            "not set: set it in the environment or in the app's .env file (see docs/models.md)."
        )
