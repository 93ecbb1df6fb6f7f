"""The loader: user files imported by path under a private namespace, failures as diagnostics."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from eve_runtime.diagnostics import Diagnostic
from eve_runtime.project.loader import ModuleLoader
from tests.helpers import app_modules, write_app

LoaderFactory = Callable[[Path], ModuleLoader]


@pytest.fixture
def make_loader() -> Iterator[LoaderFactory]:
    """New loaders for an app root, all released when the test ends."""
    made: list[ModuleLoader] = []

    def make(app_root: Path) -> ModuleLoader:
        loader = ModuleLoader(app_root / "agent")
        made.append(loader)
        return loader

    yield make
    for loader in made:
        loader.release()


def loaded(result: ModuleType | Diagnostic) -> ModuleType:
    assert isinstance(result, ModuleType), f"expected a module, got {result!r}"
    return result


def failed(result: ModuleType | Diagnostic) -> Diagnostic:
    assert isinstance(result, Diagnostic), f"expected a diagnostic, got {result!r}"
    assert result.severity == "error"
    return result


# --- isolation ----------------------------------------------------------------------------------


def test_tool_named_json_does_not_shadow_the_standard_library(tmp_path: Path, make_loader: LoaderFactory) -> None:
    stdlib_json = sys.modules["json"]
    app = write_app(
        tmp_path,
        {
            "agent/tools/json.py": '''\
                import json as stdlib_json

                def json(text: str) -> str:
                    """Echo as JSON."""
                    return stdlib_json.dumps({"text": text})
            ''',
        },
    )
    loader = make_loader(app)
    module = loaded(loader.load(app / "agent" / "tools" / "json.py"))
    assert module.__name__ == f"{loader.namespace}.tools.json"
    assert module.__file__ == str(app / "agent" / "tools" / "json.py")
    assert module.json("hi") == '{"text": "hi"}'
    assert sys.modules["json"] is stdlib_json
    import json as again

    assert again is stdlib_json
    assert json.dumps([1]) == "[1]"


def test_lib_module_named_like_an_installed_package_does_not_shadow_it(
    tmp_path: Path, make_loader: LoaderFactory
) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/lib/yaml.py": "SHADOW = True\n",
            "agent/tools/parse.py": "import yaml\nfrom ..lib import yaml as own\nREAL = yaml\nOWN = own\n",
        },
    )
    module = loaded(make_loader(app).load(app / "agent" / "tools" / "parse.py"))
    assert hasattr(module.REAL, "safe_load")
    assert module.OWN.SHADOW is True


def test_loading_leaves_sys_path_alone(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/a.py": "X = 1\n"})
    before = list(sys.path)
    loaded(make_loader(app).load(app / "agent" / "tools" / "a.py"))
    assert sys.path == before


def test_relative_imports_reach_lib(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/lib/weather.py": "def forecast(city: str) -> str:\n    return f'sunny in {city}'\n",
            "agent/lib/pkg/__init__.py": "from .inner import VALUE\n",
            "agent/lib/pkg/inner.py": "VALUE = 42\n",
            "agent/tools/get_weather.py": """\
                from ..lib.weather import forecast
                from ..lib.pkg import VALUE

                def get_weather(city: str) -> str:
                    \"\"\"Weather.\"\"\"
                    return f"{forecast(city)} {VALUE}"
            """,
        },
    )
    module = loaded(make_loader(app).load(app / "agent" / "tools" / "get_weather.py"))
    assert module.get_weather("Paris") == "sunny in Paris 42"


def test_subagent_tools_import_their_own_lib_and_the_roots(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/lib/shared.py": "ROOT = 'root lib'\n",
            "agent/subagents/researcher/lib/own.py": "OWN = 'own lib'\n",
            "agent/subagents/researcher/tools/search.py": """\
                from ..lib.own import OWN
                from ....lib.shared import ROOT

                def search(query: str) -> str:
                    \"\"\"Search.\"\"\"
                    return f"{OWN} + {ROOT}"
            """,
        },
    )
    loader = make_loader(app)
    module = loaded(loader.load(app / "agent" / "subagents" / "researcher" / "tools" / "search.py"))
    assert module.__name__ == f"{loader.namespace}.subagents.researcher.tools.search"
    assert module.search("q") == "own lib + root lib"


def test_packages_and_hyphenated_hook_names_load(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/tools/forecast/__init__.py": "from .helpers import HELP\n",
            "agent/tools/forecast/helpers.py": "HELP = 'ok'\n",
            "agent/hooks/auth/load-profile.py": "LOADED = True\n",
        },
    )
    loader = make_loader(app)
    package = loaded(loader.load(app / "agent" / "tools" / "forecast" / "__init__.py"))
    assert package.__name__ == f"{loader.namespace}.tools.forecast"
    assert package.HELP == "ok"
    hook = loaded(loader.load(app / "agent" / "hooks" / "auth" / "load-profile.py"))
    assert hook.LOADED is True


def test_module_name(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/": ""})
    loader = make_loader(app)
    agent = app / "agent"
    assert loader.module_name(agent / "agent.py") == f"{loader.namespace}.agent"
    assert loader.module_name(agent / "tools" / "x" / "__init__.py") == f"{loader.namespace}.tools.x"
    assert loader.module_name(agent / "hooks" / "a" / "b.py") == f"{loader.namespace}.hooks.a.b"


# --- generations --------------------------------------------------------------------------------


def test_generations_are_independent_and_see_edits(
    tmp_path: Path, make_loader: LoaderFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bytecode caching is on for users; an edit of the same size within the same second must still be seen.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    app = write_app(tmp_path, {"agent/lib/state.py": "CALLS = []\n", "agent/tools/a.py": "VALUE = 1\n"})
    tool_path = app / "agent" / "tools" / "a.py"
    lib_path = app / "agent" / "lib" / "state.py"
    first = make_loader(app)
    one = loaded(first.load(tool_path))
    first_lib = loaded(first.load(lib_path))
    first_lib.CALLS.append("first")

    tool_path.write_text("VALUE = 2\n", encoding="utf-8")
    second = make_loader(app)
    assert second.namespace != first.namespace
    two = loaded(second.load(tool_path))
    second_lib = loaded(second.load(lib_path))

    assert one is not two
    assert (one.VALUE, two.VALUE) == (1, 2)
    assert first_lib is not second_lib
    assert second_lib.CALLS == []  # module state is per generation
    assert not (app / "agent" / "tools" / "__pycache__").exists()  # no bytecode written into the user's folder


def test_new_files_are_seen_by_the_next_generation(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/a.py": "X = 1\n"})
    loaded(make_loader(app).load(app / "agent" / "tools" / "a.py"))
    (app / "agent" / "tools" / "b.py").write_text("Y = 2\n", encoding="utf-8")
    assert loaded(make_loader(app).load(app / "agent" / "tools" / "b.py")).Y == 2


def test_release_forgets_only_its_generation(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/a.py": "from ..lib import helper\n", "agent/lib/helper.py": "H = 1\n"})
    first, second = make_loader(app), make_loader(app)
    loaded(first.load(app / "agent" / "tools" / "a.py"))
    loaded(second.load(app / "agent" / "tools" / "a.py"))
    assert {f"{first.namespace}.tools.a", f"{first.namespace}.lib.helper"} <= app_modules()

    first.release()
    remaining = app_modules()
    assert not any(n == first.namespace or n.startswith(first.namespace + ".") for n in remaining)
    assert f"{second.namespace}.tools.a" in remaining
    second.release()
    assert not any(n.startswith(second.namespace) for n in app_modules())


# --- failures become diagnostics ----------------------------------------------------------------


def test_syntax_error(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/bad.py": "X = 1\n\ndef bad(:\n    pass\n"})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "bad.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.source_path == str(app / "agent" / "tools" / "bad.py")
    assert diagnostic.line == 3
    assert "agent/tools/bad.py" in diagnostic.message


def test_exception_at_import_time(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/bad.py": "X = 1\nraise RuntimeError('boom at import')\n"})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "bad.py", node_id="subagents/x"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.source_path == str(app / "agent" / "tools" / "bad.py")
    assert diagnostic.line == 2
    assert diagnostic.node_id == "subagents/x"
    assert "RuntimeError" in diagnostic.message and "boom at import" in diagnostic.message
    assert "agent/tools/bad.py" in diagnostic.message


def test_exception_inside_a_lib_module_points_at_the_lib(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/lib/broken.py": "import os\n\nVALUE = 1 / 0\n",
            "agent/tools/uses_lib.py": "from ..lib.broken import VALUE\n",
        },
    )
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "uses_lib.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.source_path == str(app / "agent" / "lib" / "broken.py")
    assert diagnostic.line == 3
    assert "ZeroDivisionError" in diagnostic.message
    assert "agent/tools/uses_lib.py" in diagnostic.message  # the file being loaded is named too


def test_exception_in_a_lib_function_called_at_import(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/lib/config.py": "def load():\n    raise KeyError('API_TOKEN')\n",
            "agent/tools/t.py": "from ..lib.config import load\n\nSETTINGS = load()\n",
        },
    )
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.source_path == str(app / "agent" / "lib" / "config.py")
    assert diagnostic.line == 2


def test_syntax_error_in_a_lib_module(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/lib/bad.py": "def (\n", "agent/tools/t.py": "from ..lib import bad\n"})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.source_path == str(app / "agent" / "lib" / "bad.py")
    assert diagnostic.line == 1


def test_missing_third_party_package_suggests_installing_it(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/t.py": '"""Doc."""\nimport eve_test_missing_package.sub\n'})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.line == 2
    assert "ModuleNotFoundError" in diagnostic.message
    assert "Install it" in diagnostic.message
    assert "'eve_test_missing_package'" in diagnostic.message


def test_missing_own_module_does_not_suggest_installing(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/t.py": "from ..lib.nope import thing\n"})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.line == 1
    assert "Install it" not in diagnostic.message


def test_definition_error_names_the_field_and_the_line(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/agent.py": """\
                from eve_runtime import define_agent

                agent = define_agent(model="test", reasoning="max")
            """
        },
    )
    diagnostic = failed(make_loader(app).load(app / "agent" / "agent.py"))
    assert diagnostic.code == "compile/definition-invalid"
    assert diagnostic.source_path == str(app / "agent" / "agent.py")
    assert diagnostic.line == 3
    assert "'reasoning'" in diagnostic.message
    assert "agent/agent.py" in diagnostic.message


def test_definition_error_in_a_tool_decorator(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(
        tmp_path,
        {
            "agent/tools/t.py": """\
                from eve_runtime import tool


                @tool(needs_approval="sometimes")
                def t() -> None:
                    \"\"\"Doc.\"\"\"
            """
        },
    )
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.code == "compile/definition-invalid"
    assert diagnostic.line == 4
    assert "needs_approval" in diagnostic.message


@pytest.mark.parametrize("call", ["sys.exit()", "sys.exit(3)", "raise SystemExit('bye')"])
def test_sys_exit_at_import_does_not_exit(tmp_path: Path, make_loader: LoaderFactory, call: str) -> None:
    app = write_app(tmp_path, {"agent/tools/t.py": f"import sys\n{call}\n"})
    diagnostic = failed(make_loader(app).load(app / "agent" / "tools" / "t.py"))
    assert diagnostic.code == "compile/module-import-failed"
    assert diagnostic.line == 2
    assert "SystemExit" in diagnostic.message


def test_a_failed_module_can_be_fixed_in_the_next_generation(tmp_path: Path, make_loader: LoaderFactory) -> None:
    app = write_app(tmp_path, {"agent/tools/t.py": "raise ValueError('not yet')\n"})
    path = app / "agent" / "tools" / "t.py"
    failed(make_loader(app).load(path))
    path.write_text("READY = True\n", encoding="utf-8")
    assert loaded(make_loader(app).load(path)).READY is True


def test_a_missing_relative_import_names_the_agent_folder_not_the_namespace(tmp_path: Path) -> None:
    app = write_app(tmp_path, {"agent/tools/t.py": "from ..lib.missing import x\n"})
    loader = ModuleLoader(app / "agent")
    try:
        result = loader.load(app / "agent/tools/t.py")
    finally:
        loader.release()
    assert isinstance(result, Diagnostic)
    assert "'agent.lib'" in result.message
    assert loader.namespace not in result.message


def test_release_is_safe_while_another_thread_imports(tmp_path: Path) -> None:
    # `release` also runs from a finalizer (a reloaded generation collected), at any moment, while
    # another thread may be importing (litellm's background import, a tool's thread).
    import threading

    stop = threading.Event()

    def churn() -> None:
        number = 0
        while not stop.is_set():
            sys.modules[f"_eve_test_churn_{number % 50}"] = sys
            sys.modules.pop(f"_eve_test_churn_{(number + 25) % 50}", None)
            number += 1

    worker = threading.Thread(target=churn)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over as often as the interpreter can
    worker.start()
    try:
        for _ in range(300):
            loader = ModuleLoader(tmp_path)
            for index in range(20):
                sys.modules[f"{loader.namespace}.m{index}"] = sys
            loader.release()
            assert not [name for name in tuple(sys.modules) if loader.owns(name)]
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(previous)
        for number in range(50):
            sys.modules.pop(f"_eve_test_churn_{number}", None)
