"""litellm's provider names, read from its files without importing it, and the check of a model id's provider."""

from __future__ import annotations

import subprocess
import sys

import pytest

from eve_runtime.models.ids import provider_problem
from eve_runtime.models.provider_names import litellm_providers


def test_the_names_read_from_litellm_files_are_the_ones_litellm_routes() -> None:
    from eve_runtime.models.litellm_model import _setup_litellm

    litellm = _setup_litellm()  # imports it offline (its local price map)
    from litellm.llms.openai_like.json_loader import JSONProviderRegistry

    JSONProviderRegistry.load()  # type: ignore[no-untyped-call]
    routed: set[str] = {provider.value for provider in litellm.provider_list} | set(JSONProviderRegistry._providers)
    assert litellm_providers() == frozenset(routed)


def test_reading_the_names_does_not_import_litellm() -> None:
    code = (
        "import sys\nfrom eve_runtime.models.provider_names import litellm_providers\n"
        "assert 'openai' in litellm_providers()\nassert 'litellm' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "model_id", ["openai/gpt-4o-mini", "groq/openai/gpt-oss-120b", "ollama_chat/llama3", "hosted_vllm/m", "test/x"]
)
def test_known_providers_pass(model_id: str) -> None:
    assert provider_problem(model_id) is None


@pytest.mark.parametrize(
    ("model_id", "hint"),
    [
        ("opanai/gpt-4o-mini", "did you mean 'openai'?"),
        ("Anthropic/claude-sonnet-4-6", "did you mean 'anthropic'?"),
        ("xyzzy/model", "see https://docs.litellm.ai/docs/providers for the names"),
    ],
)
def test_an_unknown_provider_is_named_with_the_closest_one(model_id: str, hint: str) -> None:
    provider = model_id.split("/")[0]
    assert (
        provider_problem(model_id)
        == f"{model_id!r} names the provider {provider!r}, which litellm does not know: {hint}"
    )
