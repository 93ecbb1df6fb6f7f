"""What a model id looks like: `test` (the offline model) or a litellm `provider/model` id.

Kept apart from `eve_runtime.models` so that the compiler and the CLI can check ids without
importing the model implementations.
"""

from __future__ import annotations

import re

__all__ = ["is_test_model", "model_id_problem", "provider_problem"]

_PROVIDER_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(/[^\s/\"'\\]+)+")
_TEST_MODEL = re.compile(r"test(/[^\s/\"'\\]+)*")


def is_test_model(model_id: str) -> bool:
    """Whether the id names the offline test model (`test` or `test/<anything>`)."""
    return _TEST_MODEL.fullmatch(model_id) is not None


def model_id_problem(model_id: str) -> str | None:
    """Why `model_id` is not a model id, or None when it is one."""
    if is_test_model(model_id) or _PROVIDER_MODEL.fullmatch(model_id):
        return None
    return (
        f"{model_id!r} is not a model id: use 'test' (the offline test model) or a litellm 'provider/model' "
        "id such as 'openai/gpt-5.4-mini' or 'anthropic/claude-sonnet-4-6', without spaces or quotes"
    )


def provider_problem(model_id: str) -> str | None:
    """Why the provider of a `provider/model` id is not one litellm routes, or None when it is (or eve cannot tell).

    The message names the closest provider (`opanai` -> `openai`). Call it on ids that pass
    `model_id_problem`; with `model_options={"custom_llm_provider": ...}` litellm routes any id, so skip it then.
    """
    from eve_runtime.diagnostics import did_you_mean
    from eve_runtime.models.provider_names import litellm_providers

    if is_test_model(model_id) or "/" not in model_id:
        return None
    providers = litellm_providers()
    provider = model_id.split("/", 1)[0]
    if providers is None or provider in providers:
        return None
    hint = did_you_mean(provider, providers) or "see https://docs.litellm.ai/docs/providers for the names"
    return f"{model_id!r} names the provider {provider!r}, which litellm does not know: {hint}"
