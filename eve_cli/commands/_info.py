"""What `eve info` does, without typer: `eve_cli.main` runs it directly for `eve info [--json]`."""

from __future__ import annotations

import json
import sys

from eve_cli.commands._project import compile_current_app

__all__ = ["show_info"]


def show_info(as_json: bool) -> int:
    """Compile the app in (or above) the working folder and print it; the exit code (1: it has errors)."""
    from eve_runtime.project.info import cli_info

    compiled = compile_current_app()
    if as_json:
        sys.stdout.write(json.dumps(cli_info(compiled), indent=2) + "\n")  # cli_info masks secrets
    else:
        from eve_cli._render import render_info
        from eve_runtime.redaction import REDACTOR

        sys.stdout.write(REDACTOR.text(render_info(compiled)))  # masked like the JSON (eve_runtime.redaction)
    sys.stdout.flush()
    return 0 if compiled.ok else 1
