from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from eve_runtime.models.providers import PROVIDER_DEFAULTS, default_model_from_environment


def _price_map() -> dict[str, Any]:
    # Locate litellm's bundled price map without importing litellm.
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_no_key_means_the_test_model() -> None:
    model_id, reason = default_model_from_environment({"PATH": "/usr/bin", "OPENAI_API_KEY": "  "})
    assert model_id == "test"
    assert reason == (
        "no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) found in the environment, "
        "so the offline test model is used"
    )


@pytest.mark.parametrize("entry", PROVIDER_DEFAULTS, ids=[e.env_var for e in PROVIDER_DEFAULTS])
def test_each_provider_key_selects_its_model(entry: Any) -> None:
    model_id, reason = default_model_from_environment({entry.env_var: "sk-test"})
    assert model_id == entry.model_id
    assert entry.env_var in reason
    assert model_id in reason


def test_first_provider_in_order_wins() -> None:
    env = {"GEMINI_API_KEY": "g", "ANTHROPIC_API_KEY": "a", "MISTRAL_API_KEY": "m"}
    assert default_model_from_environment(env)[0] == "anthropic/claude-sonnet-4-6"
    assert default_model_from_environment({**env, "OPENAI_API_KEY": "o"})[0] == "openai/gpt-5.4-mini"


def test_order_starts_with_openai_and_anthropic() -> None:
    assert [e.env_var for e in PROVIDER_DEFAULTS[:3]] == ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"]


@pytest.mark.parametrize("entry", PROVIDER_DEFAULTS, ids=[e.model_id for e in PROVIDER_DEFAULTS])
def test_default_models_are_chat_models_with_tools_in_litellm_price_map(entry: Any) -> None:
    prices = _price_map()
    provider, _, bare = entry.model_id.partition("/")
    info = prices.get(entry.model_id) or prices.get(bare)
    assert info is not None, f"{entry.model_id} is not in litellm's price map"
    assert info["litellm_provider"] == provider
    assert info["mode"] == "chat"
    assert info.get("supports_function_calling") is True


def test_providers_module_does_not_import_litellm() -> None:
    import eve_runtime.models.providers as providers

    assert "litellm" not in vars(providers)
    assert all(not name.startswith("litellm") for name in getattr(providers, "__dict__", {}))
    assert "import litellm" not in Path(providers.__file__).read_text(encoding="utf-8")
    assert sys.modules["eve_runtime.models.providers"] is providers
