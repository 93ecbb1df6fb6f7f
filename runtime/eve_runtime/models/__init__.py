"""Language models: the protocol, the offline `test` model, `FunctionModel`, and litellm for the rest.

A model id is `test` (or `test/<anything>`) for the offline test model, or a litellm
`provider/model` id (`openai/gpt-5.4-mini`, `anthropic/claude-sonnet-4-6`, ...) for a real
provider. [`resolve_model`][eve_runtime.models.resolve_model] turns an id into a
[`Model`][eve_runtime.models.base.Model]. Importing this package never imports litellm.

Tests set `ALLOW_MODEL_REQUESTS = False` so that nothing reaches a real provider by accident.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import TYPE_CHECKING, Any

from eve_runtime.errors import UserError
from eve_runtime.models.ids import is_test_model, model_id_problem

if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ imports them on first use
    from eve_runtime.models.base import (
        Finish,
        FinishReason,
        Model,
        ModelError,
        ModelEvent,
        ModelRequest,
        ModelRequestsBlockedError,
        ModelSettings,
        OutputDone,
        ReasoningDelta,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
        ToolDefinition,
        ToolInputDelta,
        Usage,
    )
    from eve_runtime.models.function import FunctionInfo, FunctionModel
    from eve_runtime.models.litellm_model import LiteLLMModel, preload_litellm
    from eve_runtime.models.test_model import TestModel

__all__ = [
    "ALLOW_MODEL_REQUESTS",
    "Finish",
    "FinishReason",
    "FunctionInfo",
    "FunctionModel",
    "LiteLLMModel",
    "Model",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "ModelRequestsBlockedError",
    "ModelSettings",
    "OutputDone",
    "ReasoningDelta",
    "TestModel",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolDefinition",
    "ToolInputDelta",
    "Usage",
    "check_allow_model_requests",
    "preload_litellm",
    "resolve_model",
    "uses_litellm",
]

_LAZY: dict[str, str] = {
    "Finish": "eve_runtime.models.base",
    "FinishReason": "eve_runtime.models.base",
    "Model": "eve_runtime.models.base",
    "ModelError": "eve_runtime.models.base",
    "ModelEvent": "eve_runtime.models.base",
    "ModelRequest": "eve_runtime.models.base",
    "ModelRequestsBlockedError": "eve_runtime.models.base",
    "ModelSettings": "eve_runtime.models.base",
    "OutputDone": "eve_runtime.models.base",
    "ReasoningDelta": "eve_runtime.models.base",
    "TextDelta": "eve_runtime.models.base",
    "ToolCallFinished": "eve_runtime.models.base",
    "ToolCallStarted": "eve_runtime.models.base",
    "ToolDefinition": "eve_runtime.models.base",
    "ToolInputDelta": "eve_runtime.models.base",
    "Usage": "eve_runtime.models.base",
    "FunctionInfo": "eve_runtime.models.function",
    "FunctionModel": "eve_runtime.models.function",
    "LiteLLMModel": "eve_runtime.models.litellm_model",
    "preload_litellm": "eve_runtime.models.litellm_model",
    "TestModel": "eve_runtime.models.test_model",
}
"""Where the names above live: the model layer (its dataclasses, asyncio) is imported only when used,
so compiling an app (`is_test_model`, `providers`) does not pay for it."""

ALLOW_MODEL_REQUESTS: bool = True
"""Whether real providers may be called. Tests set it to False; real adapters check it on every call."""


def check_allow_model_requests(model_id: str) -> None:
    """Refuse to call a real provider while `ALLOW_MODEL_REQUESTS` is False.

    Real adapters call this before every request (`resolve_model` hands it to them), so it reads
    the module global at call time.

    Args:
        model_id: The model about to be called (named in the error).

    Raises:
        ModelRequestsBlockedError: `ALLOW_MODEL_REQUESTS` is False.
    """
    if not ALLOW_MODEL_REQUESTS:
        from eve_runtime.models.base import ModelRequestsBlockedError

        raise ModelRequestsBlockedError(model_id)


def resolve_model(model_id: str) -> Model:
    """The model for an id: `test` or `test/<anything>` is the offline test model, anything else litellm.

    Args:
        model_id: `test`, `test/<anything>`, or a litellm `provider/model` id.

    Returns:
        A `TestModel` or a `LiteLLMModel` (creating one imports nothing heavy).

    Raises:
        UserError: The id is empty or not of the form `provider/model`.
    """
    from eve_runtime.models.litellm_model import LiteLLMModel
    from eve_runtime.models.test_model import TestModel

    if is_test_model(model_id):
        return TestModel(model_id)
    problem = model_id_problem(model_id)
    if problem is not None:
        raise UserError(f"Invalid model id: {problem}.")
    return LiteLLMModel(model_id, guard=check_allow_model_requests)


def uses_litellm(model_ids: Iterable[object]) -> bool:
    """Whether any of these configured models may be a litellm one (not the `test` model).

    A model chosen at run time (a resolver, not a string) counts: it is most likely a real one. None
    (a subagent on its parent's model) does not.
    """
    return any(
        model_id is not None and not (isinstance(model_id, str) and is_test_model(model_id)) for model_id in model_ids
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'eve_runtime.models' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
