"""What a model id looks like: `test` (the offline model) or a litellm `provider/model` id.

Kept apart from `eve_runtime.models` so that the compiler and the CLI can check ids without
importing the model implementations.
"""

from __future__ import annotations

import re

__all__ = ["is_test_model", "model_id_problem"]

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
