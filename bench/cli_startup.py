"""How long `eve --help` and `eve info` take on a fresh template app, against `python -c pass`.

Target (DESIGN.md): `eve --help` under 100 ms and `eve info` under 200 ms, and litellm never
imported on these paths. Every command runs several times in alternation and the median is
reported, with its ratio to the baseline measured in the same run (machines here are shared and
noisy), and the CPU time (user + system) the process used, which a loaded machine inflates less.
The commands run with bytecode writing on (`PYTHONDONTWRITEBYTECODE` removed), so the warm-up
run leaves `.pyc` files behind as an installed wheel has them: otherwise every run would compile
every module of eve again.

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

TARGETS = {"eve --help": 0.1, "eve info": 0.2}
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def eve_command() -> list[str]:
    script = Path(sys.executable).with_name("eve")
    return [str(script)] if script.exists() else [sys.executable, "-m", "eve_cli"]


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def imports_litellm(command: list[str], cwd: Path) -> bool:
    env = {**ENV, "PYTHONPROFILEIMPORTTIME": "1"}
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
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, (command, cwd) in commands.items():
                wall, used = timed(command, cwd)
                samples[name].append(wall)
                cpu[name].append(used)
        baseline = statistics.median(samples["python -c pass"])
        targets = ", ".join(f"{name} under {seconds * 1000:.0f} ms" for name, seconds in TARGETS.items())
        print(f"cli startup, median of {runs} runs each (target: {targets}; no litellm import)")
        for name, values in samples.items():
            median = statistics.median(values)
            used = statistics.median(cpu[name])
            verdict = ""
            if name in TARGETS:
                command, cwd = commands[name]
                litellm = "imports litellm!" if imports_litellm(command, cwd) else "no litellm"
                verdict = f"  {'ok' if median < TARGETS[name] else 'OVER TARGET'}, {litellm}"
            print(
                f"  {name:<16} {median * 1000:7.1f} ms (CPU {used * 1000:6.1f} ms)  "
                f"{median / baseline:5.1f}x baseline{verdict}"
            )


if __name__ == "__main__":
    main()
