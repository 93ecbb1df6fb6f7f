"""`eve_runtime`'s names are imported on first use: the typed imports, the lazy table and `__all__` agree."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import eve_runtime

INIT = Path(eve_runtime.__file__)


def _typed_imports() -> dict[str, str]:
    """Name -> module of every import under `if TYPE_CHECKING:` in `eve_runtime/__init__.py`."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names:
            name = alias.asname or alias.name
            found[name] = f"{node.module}.{name}" if node.module == "eve_runtime" else node.module
    return found


def test_the_lazy_table_is_the_typed_imports_and_all() -> None:
    assert _typed_imports() == eve_runtime._LAZY
    assert sorted(eve_runtime.__all__) == sorted({*eve_runtime._LAZY, "__version__"})
    assert set(eve_runtime.__all__) <= set(dir(eve_runtime))


def test_every_name_resolves_to_what_its_module_defines() -> None:
    from importlib import import_module

    for name, module in eve_runtime._LAZY.items():
        expected = import_module(module) if name == "sessions" else getattr(import_module(module), name)
        assert getattr(eve_runtime, name) is expected, name


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_importing_one_name_imports_only_what_it_needs() -> None:
    bare = _modules_after("import eve_runtime")
    assert not [m for m in bare if m.startswith("eve_runtime.authoring")]
    assert not {"pydantic", "asyncio"} & bare
    agent = _modules_after("from eve_runtime import define_agent, tool")
    assert {"eve_runtime.authoring.config", "eve_runtime.authoring.tools"} <= agent
    assert not {"eve_runtime.authoring.evals", "eve_runtime.sessions", "eve_runtime.authoring.sandbox_session"} & agent
    unknown = subprocess.run(
        [sys.executable, "-c", "from eve_runtime import nothing_here"], capture_output=True, text=True
    )
    assert unknown.returncode == 1 and "cannot import name 'nothing_here'" in unknown.stderr
