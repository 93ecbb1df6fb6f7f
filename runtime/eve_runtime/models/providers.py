"""Pick a default model for `eve init` from the provider keys in the environment.

This module reads nothing but the mapping it is given and never imports litellm. Every model id
below is in litellm's bundled price map (`model_prices_and_context_window_backup.json`), as a
chat model that supports function calling; the tests check that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["PROVIDER_DEFAULTS", "ProviderDefault", "default_model_from_environment"]


class ProviderDefault(NamedTuple):
    """A provider eve can pick by itself when its API key is set."""

    env_var: str
    """The environment variable holding the provider's API key."""
    provider: str
    """The provider's display name."""
    model_id: str
    """The litellm `provider/model` id eve proposes for it."""


PROVIDER_DEFAULTS: tuple[ProviderDefault, ...] = (
    ProviderDefault("OPENAI_API_KEY", "OpenAI", "openai/gpt-5.4-mini"),
    ProviderDefault("ANTHROPIC_API_KEY", "Anthropic", "anthropic/claude-sonnet-4-6"),
    ProviderDefault("GEMINI_API_KEY", "Google Gemini", "gemini/gemini-flash-latest"),
    ProviderDefault("GROQ_API_KEY", "Groq", "groq/openai/gpt-oss-120b"),
    ProviderDefault("MISTRAL_API_KEY", "Mistral", "mistral/mistral-large-latest"),
    ProviderDefault("XAI_API_KEY", "xAI", "xai/grok-4.3"),
    ProviderDefault("DEEPSEEK_API_KEY", "DeepSeek", "deepseek/deepseek-v4-flash"),
)
"""Providers in order of preference: the first whose key is set wins."""


def default_model_from_environment(env: Mapping[str, str]) -> tuple[str, str]:
    """Choose the model `eve init` proposes, from the API keys present in `env`.

    Args:
        env: The environment (usually `os.environ`). Keys set to an empty string do not count.

    Returns:
        `(model_id, reason)`: the first provider (in `PROVIDER_DEFAULTS` order) whose key is set
        gives its default model; with no key, the offline `test` model. The reason is a sentence
        naming the variable found, to show the user.
    """
    for entry in PROVIDER_DEFAULTS:
        if env.get(entry.env_var, "").strip():
            return entry.model_id, f"{entry.env_var} is set, so eve uses {entry.provider}'s {entry.model_id}"
    return (
        "test",
        "no provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) found in the environment, "
        "so the offline test model is used",
    )
