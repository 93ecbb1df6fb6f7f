"""Provider keys: the default model `eve init` picks from them, and whether a model's key is set.

This module reads nothing but the mappings it is given and never imports litellm (so `eve info`
and the check before every real model call stay instant). Every model id in `PROVIDER_DEFAULTS`
is in litellm's bundled price map (`model_prices_and_context_window_backup.json`), as a chat model
that supports function calling; the tests check that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "PROVIDER_DEFAULTS",
    "PROVIDER_KEYS",
    "ProviderDefault",
    "default_model_from_environment",
    "missing_key",
    "missing_key_message",
]


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


PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
}
"""Providers whose only credential is an API key, and the variables litellm reads it from (any one will do).

Providers not listed here (Ollama, vLLM, Azure, Bedrock, Vertex, ...) need no key or authenticate
otherwise: eve does not check them and lets the call say what is wrong.
"""


def missing_key(model_id: str, options: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The variable a model's key should be in, when its provider needs one and none is set.

    Args:
        model_id: A litellm `provider/model` id (`test` and unknown providers need no key).
        options: The agent's `model_options`: an `api_key` there is the key.
        env: The environment (usually `os.environ`); variables set to blanks do not count.

    Returns:
        The provider's first key variable (`OPENAI_API_KEY`, ...), or None when nothing is missing.
    """
    variables = PROVIDER_KEYS.get(model_id.split("/", 1)[0]) if "/" in model_id else None
    if not variables or options.get("api_key"):
        return None
    return None if any(env.get(name, "").strip() for name in variables) else variables[0]


def missing_key_message(
    model_id: str, variable: str, options: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> str:
    """What to tell the person whose model `model_id` has no key in `variable`."""
    message = (
        f"The model {model_id!r} needs an API key in {variable}, which is not set. Set it in the environment "
        "or in the app's .env file (or pass model_options={'api_key': ...})"
    )
    env = env or {}
    redirected = model_id.startswith("openai/") and (env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_BASE"))
    if options.get("api_base") or options.get("base_url") or redirected:
        message += "; a local or proxied server that takes no key still needs the variable, set to any value"
    return message + "."
