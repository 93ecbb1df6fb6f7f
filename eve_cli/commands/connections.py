"""`eve connections test NAME`: connect to one of the app's connections and list its tools.

Exit 0 with the tools (as the model would call them, `<name>__<tool>`); exit 1 with what failed
and how to fix it: no such connection, a server that cannot be reached, a missing token.
"""

from __future__ import annotations

from typing import Annotated

import typer

from eve_cli._console import escape, fail, out
from eve_cli.commands._project import compile_current_app

__all__ = ["connections_app"]

connections_app = typer.Typer(
    help="The app's connections (agent/connections/): MCP servers and OpenAPI services.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # plain help: rendering it with rich costs more than the rest of `eve --help`
)

NameArgument = Annotated[str, typer.Argument(help="The connection's name: its file name under agent/connections/.")]


@connections_app.command("test")
def test(name: NameArgument) -> None:
    """Connect to a connection and list its tools, or say what failed and how to fix it."""
    from eve_runtime.serving.connection_check import check_connection, find_connection

    compiled = compile_current_app()
    if compiled.root is None:
        problems = "; ".join(d.message for d in compiled.diagnostics if d.severity == "error")
        fail(f"the app does not compile, so its connections cannot be tested: {problems}")
    found = find_connection(compiled.root, name)
    if found is None:
        known = sorted({n for agent in compiled.root.walk() for n in agent.connections})
        listed = ", ".join(known) if known else "none: add agent/connections/<name>.py"
        fail(f"there is no connection named {name!r} (connections: {listed}).")
    definition, _agent = found
    import asyncio

    report = asyncio.run(check_connection(name, definition, compiled.paths.app_root))
    if not report.ok:
        problem = (report.problem or "").removeprefix(f"connection {name!r}: ")
        ending = "" if problem.endswith((".", "?", "!")) else "."
        fail(f"connection {name!r} ({report.protocol}, {report.where}): {problem}{ending} Fix: {report.fix}.")
    out.print(f"[bold]{escape(name)}[/] ({report.protocol}, {escape(report.where)}): {len(report.tools)} tools")
    for tool in report.tools:
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        marker = " [dim](read-only)[/]" if tool.read_only else ""
        out.print(f"  {escape(tool.qualified)}{marker}  {escape(summary)}")
