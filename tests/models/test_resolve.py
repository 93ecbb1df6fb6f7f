from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import eve_runtime.models as models
from eve_runtime.errors import UserError
from eve_runtime.models import LiteLLMModel, Model, ModelRequestsBlockedError, TestModel, check_allow_model_requests


@pytest.mark.parametrize("model_id", ["test", "test/anything", "test/a/b"])
def test_test_ids_resolve_to_the_test_model(model_id: str) -> None:
    model = models.resolve_model(model_id)
    assert isinstance(model, TestModel)
    assert isinstance(model, Model)
    assert model.model_id == model_id


@pytest.mark.parametrize(
    "model_id",
    ["openai/gpt-5.4-mini", "anthropic/claude-sonnet-4-6", "groq/openai/gpt-oss-120b", "ollama/llama3:8b", "testing/x"],
)
def test_other_ids_resolve_to_litellm(model_id: str) -> None:
    model = models.resolve_model(model_id)
    assert isinstance(model, LiteLLMModel)
    assert model.model_id == model_id


@pytest.mark.parametrize(
    "model_id", ["", " ", "test/", "gpt-4o", "openai/", "/gpt-4o", "openai//x", "openai/gpt 4o", " test"]
)
def test_malformed_ids_are_user_errors(model_id: str) -> None:
    with pytest.raises(UserError) as info:
        models.resolve_model(model_id)
    message = str(info.value)
    assert repr(model_id) in message
    assert "'test'" in message and "provider/model" in message


def test_check_allow_model_requests_reads_the_global(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelRequestsBlockedError):
        check_allow_model_requests("openai/x")
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    check_allow_model_requests("openai/x")


def test_public_names() -> None:
    for name in models.__all__:
        assert hasattr(models, name), name
    assert models.ALLOW_MODEL_REQUESTS is False  # set by tests/conftest.py


def test_the_test_path_never_imports_litellm() -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        import eve_runtime.models as models
        from eve_runtime.messages import UserMessage

        async def main():
            model = models.resolve_model("test")
            models.resolve_model("openai/gpt-5.4-mini")
            request = models.ModelRequest(messages=[UserMessage(content="/call t\\nhello")])
            return [event async for event in model.stream(request)]

        events = asyncio.run(main())
        assert events, events
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("litellm", "openai", "tiktoken")))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_uses_litellm_counts_every_model_but_the_test_one() -> None:
    from eve_runtime.authoring.dynamic import DynamicResolver

    assert not models.uses_litellm(["test", "test/other", None])
    assert models.uses_litellm(["test", "openai/gpt-5.4-mini"])
    assert models.uses_litellm([DynamicResolver(events={})])  # chosen at run time: most likely a real one


def test_preload_imports_litellm_in_a_background_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from eve_runtime.models import litellm_model

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setattr(litellm_model, "_litellm_module", None)  # (other tests here may have imported it already)
    release = threading.Event()
    setup = litellm_model._setup_litellm

    counted: list[str] = []

    def held_setup() -> object:
        release.wait(60)  # the thread stays alive until it is seen, however fast an import already done is
        module = setup()
        count = module.token_counter

        def counting(**options: object) -> object:
            counted.append(str(options["model"]))
            return count(**options)

        monkeypatch.setattr(module, "token_counter", counting)
        return module

    monkeypatch.setattr(litellm_model, "_setup_litellm", held_setup)
    models.preload_litellm()
    threads = [t for t in threading.enumerate() if t.name == "eve-litellm-import"]
    assert len(threads) == 1
    release.set()
    threads[0].join(120)
    assert litellm_model._litellm_module is sys.modules["litellm"]
    assert counted == [litellm_model.WARM_TOKENIZER_MODEL]  # the tokenizer's tables are loaded too
    models.preload_litellm()  # loaded: nothing more starts
    assert not [t for t in threading.enumerate() if t.name == "eve-litellm-import"]
