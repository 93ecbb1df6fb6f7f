"""`eve eval [IDS...]`: run the app's evals (`evals/**/*.eval.py`) and report.

Exit codes: 0 every eval passed its gates, 1 an eval failed (a gate, an error, a timeout; under
`--strict` a soft bar too), 2 the evals cannot run as laid out (no `evals/evals_config.py`, a
file that fails to load, an id that picks nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from eve_cli._console import err, fail, out

if TYPE_CHECKING:
    from rich.table import Table

    from eve_runtime.evals import EvalResult, EvalRun, LoadedEval

__all__ = ["CONFIG_ERROR", "eval_command"]

CONFIG_ERROR = 2
_STYLE = {"passed": "green", "failed": "red", "error": "red", "scored": "yellow", "skipped": "dim"}


def _summary_table(run: EvalRun) -> Table:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="eve eval", show_lines=False)
    table.add_column("eval")
    table.add_column("status")
    table.add_column("assertions", justify="right")
    table.add_column("time", justify="right")
    table.add_column("why", overflow="fold")
    for result in run.results:
        style = _STYLE.get(result.status, "")
        passed = sum(1 for item in result.assertions if item.passed)
        why = (
            result.error
            or result.skip_reason
            or "; ".join(f"{item.name}: {item.error or item.message}" for item in result.failures)
        )
        table.add_row(
            escape(result.id),
            f"[{style}]{result.status}[/]",
            f"{passed}/{len(result.assertions)}",
            f"{result.duration_ms / 1000:.2f}s",
            escape(why.splitlines()[0] if why else ""),
        )
    return table


def _list(picked: list[LoadedEval]) -> None:
    from rich.markup import escape

    for item in picked:
        tags = f"  [dim]{', '.join(item.definition.tags)}[/]" if item.definition.tags else ""
        out.print(f"{escape(item.id)}{tags}")


def eval_command(
    ids: Annotated[list[str] | None, typer.Argument(help="Eval ids or directory prefixes (default: all).")] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", help="Run against this server (token: $EVE_EVAL_AUTH_TOKEN) instead of in process."),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only evals with this tag.")] = None,
    exclude_tag: Annotated[
        list[str] | None, typer.Option("--exclude-tag", help="Leave out evals with this tag.")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Soft assertions below their bar fail too.")] = False,
    max_concurrency: Annotated[
        int | None, typer.Option("--max-concurrency", min=1, help="Evals at once (default: the config's, 8).")
    ] = None,
    timeout: Annotated[
        int | None, typer.Option("--timeout", min=1, help="Per-eval timeout in ms (default: the config's).")
    ] = None,
    list_only: Annotated[bool, typer.Option("--list", help="Print the picked eval ids; run nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run's summary.json on stdout, no table.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print each eval's t.log lines as it ends.")] = False,
) -> None:
    """Run the app's evals (exit 0: all gates passed, 1: a failure, 2: a configuration error)."""
    from eve_cli.commands.start import app_root_or_fail
    from eve_runtime.evals import (
        EvalConfigError,
        EvalLoadError,
        EvalRunOptions,
        TargetUnavailable,
        list_evals,
        run_evals,
    )

    options = EvalRunOptions(
        app_root=app_root_or_fail(),
        selectors=ids or [],
        url=url,
        tags=tag or [],
        exclude_tags=exclude_tag or [],
        strict=strict,
        max_concurrency=max_concurrency,
        timeout_ms=timeout,
        junit=junit.resolve() if junit is not None else None,
    )
    if list_only:
        try:
            _list(list_evals(options)[1])
        except (EvalConfigError, EvalLoadError) as exc:
            fail(str(exc), code=CONFIG_ERROR)
        return
    import asyncio  # rich and asyncio only when evals run: `eve --help` stays light

    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("[bold]eve eval[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
    )
    task = progress.add_task("", total=None)

    def started(picked: list[LoadedEval]) -> None:
        progress.update(task, total=len(picked))
        progress.start()

    def done(result: EvalResult) -> None:
        progress.update(task, advance=1, description=escape(f"{result.id}: {result.status}"))
        if verbose:
            for line in result.logs:
                progress.console.print(f"[dim]{escape(result.id)}:[/] {escape(line)}")

    try:
        run = asyncio.run(run_evals(options, on_run_start=started, on_done=done))
    except (EvalConfigError, EvalLoadError) as exc:
        fail(str(exc), code=CONFIG_ERROR)
    except TargetUnavailable as exc:
        fail(str(exc))
    finally:
        progress.stop()
    if as_json:
        typer.echo((run.artifacts / "summary.json").read_text(encoding="utf-8").rstrip("\n"))
    elif not run.results:
        err.print("[yellow]No evals picked.[/]")
    else:
        out.print(_summary_table(run))
    report = err if as_json else out
    report.print(f"[dim]artifacts: {escape(str(run.artifacts))}[/]")
    if run.junit is not None:
        report.print(f"[dim]junit: {escape(str(run.junit))}[/]")
    if not run.ok:
        raise typer.Exit(1)
