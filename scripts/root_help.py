"""Write `eve --help`'s text, as the typer app renders it, into `eve_cli/_root_help.py`.

Run after changing a command's name or first docstring line, or typer's version:
`.venv/bin/python scripts/root_help.py` (`tests/cli/test_root_help.py` fails until then).
"""

from __future__ import annotations

import json
from pathlib import Path

from eve_cli.app import render_root_help

TARGET = Path(__file__).resolve().parents[1] / "eve_cli" / "_root_help.py"


def module_text() -> str:
    lines = "".join(
        f"    {json.dumps(line, ensure_ascii=False)}\n" for line in render_root_help().splitlines(keepends=True)
    )
    return (
        '"""`eve --help`, as `eve_cli.app` prints it from 80 columns up: written by `scripts/root_help.py`."""\n\n'
        f"ROOT_HELP = (\n{lines})\n"
    )


if __name__ == "__main__":
    TARGET.write_text(module_text())
    print(f"wrote {TARGET}")
