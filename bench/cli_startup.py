"""How long `eve --help` and `eve info` take on a fresh template app, against `python -c pass`.

Target (DESIGN.md): both under 0.5 s, and litellm never imported on these paths. Every command
runs several times in alternation and the median is reported, with its ratio to the baseline
measured in the same run (machines here are shared and noisy).

Run: `.venv/bin/python bench/cli_startup.py [runs]`
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.5


def eve_command() -> list[str]:
    script = Path(sys.executable).with_name("eve")
    return [str(script)] if script.exists() else [sys.executable, "-m", "eve_cli"]


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def imports_litellm(command: list[str], cwd: Path) -> bool:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, check=True)
    modules = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    return any(name == "litellm" or name.startswith("litellm.") for name in modules)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    eve = eve_command()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        subprocess.run([*eve, "init", "app", "--model", "test", "-n"], cwd=root, check=True, capture_output=True)
        app = root / "app"
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], root),
            "eve --help": ([*eve, "--help"], root),
            "eve info": ([*eve, "info"], app),
        }
        for command, cwd in commands.values():
            timed(command, cwd)  # warm the page cache and bytecode
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, (command, cwd) in commands.items():
                samples[name].append(timed(command, cwd))
        baseline = statistics.median(samples["python -c pass"])
        print(f"cli startup, median of {runs} runs each (target: under {TARGET_SECONDS:.1f} s, no litellm import)")
        for name, values in samples.items():
            median = statistics.median(values)
            verdict = ""
            if name != "python -c pass":
                command, cwd = commands[name]
                litellm = "imports litellm!" if imports_litellm(command, cwd) else "no litellm"
                verdict = f"  {'ok' if median < TARGET_SECONDS else 'OVER TARGET'}, {litellm}"
            print(f"  {name:<16} {median * 1000:7.1f} ms  {median / baseline:5.1f}x baseline{verdict}")


if __name__ == "__main__":
    main()
