"""Run the interop scenarios against our server and against the original eve; print one table.

    python -m tests.interop.compare [--original http://127.0.0.1:2000]

Ours is `eve start` serving the template app (bearer token set). The original is an `eve dev`
of `../shared/tools/eve-oracle` (see its README: `setup.sh`, `run.sh`), whose app names its tools
differently (`dangerous_action` needs approval) and has no subagent unless one was added to the
scratch copy (`agent/subagents/forecaster/`, answering the same directives).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from tests.cli.test_serve import serving
from tests.interop.test_client import BOB, PEOPLE_CHANNEL, SCENARIOS, TEMPLATE_CALLS, TOKEN, run_scenarios
from tests.server.support import scaffold_app

ORACLE_CALLS = {
    "weather": '/call get_weather {"city": "Paris"}',
    "approval": '/call dangerous_action {"target": "db"}',
    "subagent": '/call forecaster {"message": "/reply Sunny all week."}',
}


def _cell(line: dict[str, Any] | None) -> str:
    if line is None:
        return "not run"
    if not line["ok"]:
        return f"FAIL: {line['error']}"[:160]
    return "pass " + json.dumps(line["detail"], separators=(",", ":"))[:120]


def main() -> None:
    """Print the table (markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--original", help="the original eve's URL (eve-oracle run.sh serves http://127.0.0.1:2000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        app = scaffold_app(Path(scratch) / "weather-agent")
        (app / "agent/channels/eve.py").write_text(PEOPLE_CHANNEL)
        with serving(app, "start", env={"EVE_AUTH_TOKEN": TOKEN}) as server:
            ours = run_scenarios(server.url, token=TOKEN, app=TEMPLATE_CALLS, people={"bob": BOB})
            server.stop()
    original = run_scenarios(args.original, token=None, app=ORACLE_CALLS, serial=True) if args.original else {}
    print("| scenario | ours | original eve 0.80.1 |\n|---|---|---|")
    for name in SCENARIOS:
        print(f"| {name} | {_cell(ours.get(name))} | {_cell(original.get(name)) if args.original else 'not run'} |")


if __name__ == "__main__":
    main()
