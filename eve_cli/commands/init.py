"""`eve init`: scaffold a new eve app from a template."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from eve_cli._console import fail, out
from eve_cli._templates import TemplateError, render_template

__all__ = ["init"]


def _app_name(target: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", target.name).strip("-._")
    return name or "my-agent"


def _checked(model: str) -> str:
    from eve_runtime.models.ids import model_id_problem, provider_problem

    problem = model_id_problem(model) or provider_problem(model)
    if problem is not None:
        fail(problem[0].upper() + problem[1:] + ("" if problem.endswith("?") else "."))
    return model


def _choose_model(model: str | None, *, interactive: bool) -> tuple[str, str]:
    from eve_runtime.models.providers import default_model_from_environment

    if model is not None:
        return _checked(model), "given with --model"
    default, reason = default_model_from_environment(os.environ)
    if interactive:
        chosen = _checked(
            typer.prompt("Model (a litellm provider/model id, or 'test' offline)", default=default).strip()
        )
        return chosen, "chosen at the prompt" if chosen != default else reason
    return default, reason


def _git_init(target: Path) -> bool:
    git = shutil.which("git")
    if git is None:
        return False
    inside = subprocess.run([git, "rev-parse", "--is-inside-work-tree"], cwd=target, capture_output=True, check=False)
    if inside.returncode == 0:
        return False  # already part of a repository
    return subprocess.run([git, "init", "-q"], cwd=target, capture_output=True, check=False).returncode == 0


def init(
    directory: Annotated[
        Path | None, typer.Argument(help="Folder to create the app in (default: the current folder).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model id, e.g. openai/gpt-4o-mini or test.")] = None,
    template: Annotated[str, typer.Option("--template", help="Template to scaffold from.")] = "default",
    non_interactive: Annotated[bool, typer.Option("-n", "--non-interactive", help="Never prompt.")] = False,
) -> None:
    """Create a new eve app (or add agent/ to an existing Python project)."""
    from eve_runtime import __version__

    target = (directory or Path.cwd()).resolve()
    if target.exists() and not target.is_dir():
        fail(f"{str(target)!r} is a file, not a folder. Choose a folder name: eve init my-agent")
    if (target / "agent").exists():
        fail(f"{str(target)!r} already has an agent/ folder: it is an eve app. Run 'eve info' there to inspect it.")
    existing_project = (target / "pyproject.toml").is_file()
    if target.exists() and any(target.iterdir()) and not existing_project:
        fail(
            f"{str(target)!r} is not empty and is not a Python project (no pyproject.toml), so eve will not write "
            "into it. Choose a new or empty folder: eve init my-agent"
        )
    interactive = not non_interactive and sys.stdin.isatty()
    model_id, reason = _choose_model(model, interactive=interactive)
    values = {"model": model_id, "name": _app_name(target), "eve_version": __version__}
    created = not target.exists()
    try:
        # An existing project only gets the agent/ files; its own files stay untouched.
        written = render_template(template, target, values, only="agent" if existing_project else None)
    except TemplateError as exc:
        fail(str(exc))
    git = created and _git_init(target)

    out.print(f"[bold green]Created an eve app[/] in {target}")
    for path in written:
        out.print(f"  {path.relative_to(target).as_posix()}")
    out.print(f"Model: [bold]{model_id}[/] ({reason}).")
    if git:
        out.print("Initialized a git repository.")
    if existing_project:
        out.print("Add 'eve-framework' to the dependencies of your pyproject.toml.")
    out.print("\nNext steps:")
    if directory is not None:
        out.print(f"  cd {directory}")
    out.print("  eve dev      chat with the agent in this terminal; it reloads on every save (/help inside)")
    out.print("  eve info     see what eve will run")
    out.print("  eve build    compile the agent into .eve/compile/manifest.json")
    if model_id == "test":
        out.print(
            '\nThe test model answers offline with "echo: <your message>"; lines of directives steer it, such as '
            '/call get_weather {"city": "Paris"}, /reply TEXT, /say TEXT, /delay MS and /fail TEXT.'
        )
