"""The wheel ships both packages, the templates and the inspector; `eve --help`, `eve info` never import litellm."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EVE = Path(sys.executable).with_name("eve")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return built


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "eve_cli/main.py" in names
    assert "eve_runtime/__init__.py" in names and "eve_runtime/py.typed" in names
    assert "eve_runtime/models/test_model.py" in names
    inspector = REPO / "runtime" / "eve_runtime" / "server" / "inspector"
    shipped = {n.removeprefix("eve_runtime/server/inspector/") for n in names if "/server/inspector/" in n}
    assert shipped == {path.name for path in inspector.iterdir()} >= {"index.html", "app.js", "inspector.css"}
    for template_file in ("agent/agent.py", "agent/instructions.md", "agent/tools/get_weather.py", "gitignore"):
        assert f"eve_cli/templates/default/{template_file}" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith(".eve")]
    metadata = next(n for n in names if n.endswith("entry_points.txt"))
    assert "eve = eve_cli.main:main" in zipfile.ZipFile(wheel).read(metadata).decode()


def test_installed_wheel_finds_its_packaged_templates(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); "
        "from eve_cli._templates import templates_root, list_templates; "
        "print(templates_root()); print(list_templates())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    root, names = result.stdout.splitlines()
    assert Path(root) == site / "eve_cli" / "templates"
    assert names == "['default']"


def test_checkout_falls_back_to_the_top_level_templates() -> None:
    from eve_cli._templates import templates_root

    assert templates_root() == REPO / "templates"


def _imported_modules(args: list[str], cwd: Path) -> set[str]:
    command = [str(EVE)] if EVE.exists() else [sys.executable, "-m", "eve_cli"]
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "100"}  # the stored help is for 80+
    result = subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")]
    return set(lines)


def test_help_and_info_never_import_litellm(tmp_path: Path) -> None:
    shutil.copytree(REPO / "templates" / "default", tmp_path / "app")
    for agent in (tmp_path / "app" / "agent").rglob("agent.py"):
        agent.write_text(agent.read_text().replace("{{model}}", "test"))
    help_modules = _imported_modules(["--help"], tmp_path)
    info_modules = _imported_modules(["info"], tmp_path / "app")
    assert "eve_cli._root_help" in help_modules and "eve_runtime.project.compiler" in info_modules
    for modules in (help_modules, info_modules):
        assert not [m for m in modules if m == "litellm" or m.startswith("litellm.")]
    assert "eve_runtime.project.compiler" not in help_modules  # help stays light: commands import lazily
    assert not {"httpx", "eve_runtime.client", "prompt_toolkit", "eve_cli.tui"} & help_modules  # client and UI too
    # rich renders eve's output, not its help; compiling an app needs neither the runtime nor the stores
    assert not [m for m in help_modules if m == "rich" or m.startswith("rich.")]
    assert not {"asyncio", "pydantic", "typer"} & help_modules  # the stored help (tests/cli/test_root_help.py)
    assert not {"eve_runtime.sessions", "eve_runtime.store", "regex"} & info_modules
