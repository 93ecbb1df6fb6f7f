"""Tool input schemas from function signatures, and validation of the model's tool input against them.

`function_schema(fn)` reads a tool function the way eve describes it to the model: the docstring
(without its `Args:`/`Returns:`/... sections) is the description, the parameters are the fields
of a JSON object. Field descriptions come from `Annotated[X, "text"]`,
`Annotated[X, Field(description=...)]` or the docstring's `Args:` section, in that order of
precedence. Everything goes through pydantic's public API (`create_model`, `TypeAdapter` and the
`GenerateJsonSchema` subclass of `tool_json_schema.py`); the model's JSON arguments are validated
in pydantic's lax mode.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.tool_json_schema import SCHEMA_ERRORS, input_schema_error, schema_of, type_schema_error
from eve_runtime.authoring.validation import field_path
from eve_runtime.errors import DefinitionError

__all__ = ["FunctionKind", "FunctionSchema", "ToolInputError", "function_schema"]

FunctionKind = Literal["sync", "async", "generator", "async-generator"]
"""How the engine runs a tool function: in a thread, as a task, or streaming its yields."""

_Bind = Callable[[dict[str, Any]], dict[str, Any]]
_ARGS_SECTIONS = frozenset({"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"})
_DROPPED_SECTIONS = _ARGS_SECTIONS | {"returns", "return", "yields", "yield", "raises", "example", "examples"}
_SECTION = re.compile(r"^(?P<name>[A-Za-z][A-Za-z ]*):")
_ARG = re.compile(r"^\**(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")
_UNKNOWN_FIELD = "unknown field; remove it (the input schema does not define it)"
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "integer", float: "number", bool: "boolean"}


class ToolInputError(ValueError):
    """The model's tool input does not match the tool's input schema.

    The message lists each problem as `field: message` in plain words; it is meant for the model,
    so it can correct the input and call the tool again.

    Attributes:
        problems: `(field, message)` pairs; nested fields are dotted (`address.city`, `items[0]`).
    """

    def __init__(self, message: str, *, problems: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


@dataclass(frozen=True)
class FunctionSchema:
    """What eve knows about a tool function: its schemas, description, context parameter and kind."""

    input_schema: dict[str, Any]
    """JSON Schema of the tool input, always `{"type": "object", ...}`."""
    description: str | None
    """The docstring without its `Args:`/`Returns:`/`Raises:`/`Yields:`/`Example(s):` sections; None if empty."""
    context_parameter: str | None
    """The parameter annotated `ToolContext` (left out of the schema; the engine passes it), if any."""
    output_schema: dict[str, Any] | None
    """JSON Schema of the result (a generator's return type, else its yield type); None when not informative."""
    kind: FunctionKind
    """`sync`, `async`, `generator` or `async-generator`."""
    _bind: _Bind = field(repr=False, compare=False)
    untyped: tuple[str, ...] = ()
    """The input parameters without a type annotation: the model may send any JSON value for them."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the model's JSON arguments and return the keyword arguments for the call.

        Args:
            arguments: The tool input as the model sent it (parsed JSON).

        Returns:
            Keyword arguments for the function, without the context parameter. Omitted optional
            parameters are left out, so the function's own defaults apply.

        Raises:
            ToolInputError: The input is not an object, lacks a required field, has an unknown
                field or a value of the wrong type.
        """
        value: object = arguments  # parsed JSON, whatever the annotation says
        if not isinstance(value, Mapping):
            kind = _JSON_TYPES.get(type(value), "null" if value is None else type(value).__name__)
            raise ToolInputError(f"Invalid tool input: it must be a JSON object, not {kind}.")
        return self._bind(dict(arguments))


def function_schema(function: Callable[..., Any]) -> FunctionSchema:
    """Describe a tool function: input and output JSON Schemas, description, context parameter and kind.

    A function with exactly one parameter (besides the context) annotated with a pydantic model
    takes that model's schema as its input schema and receives a validated model instance.

    Args:
        function: The tool function.

    Returns:
        The function's schema, with `validate()` to turn the model's input into keyword arguments.

    Raises:
        DefinitionError: The signature cannot be a tool input: `*args`, `**kwargs`, positional-only
            parameters, parameter names starting with `_`, two `ToolContext` parameters, an
            annotation that does not resolve, or a type pydantic cannot describe as JSON Schema.
    """
    if isinstance(function, type) or not callable(function):
        raise DefinitionError(f"A tool must be a function, not {function!r}; define it with 'def' or 'async def'.")
    name = getattr(function, "__name__", repr(function))
    try:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, SyntaxError) as exc:
        raise DefinitionError(
            f"Tool function {name!r}: eve cannot resolve its signature ({exc}). Import every type used in an "
            "annotation at module level (not only under 'if TYPE_CHECKING:')."
        ) from None
    except (TypeError, ValueError) as exc:  # not a plain function (a partial, a builtin, ...)
        raise DefinitionError(f"{name!r} cannot be a tool ({exc}); define it with 'def' or 'async def'.") from None
    description, arg_docs = _parse_docstring(function.__doc__)
    context: str | None = None
    params: list[tuple[inspect.Parameter, Any]] = []
    for param in signature.parameters.values():
        where = f"Tool function {name!r}, parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise DefinitionError(
                f"{where}: '{stars}{param.name}' is not supported because tool input is a JSON object with named "
                "fields. Declare each input as its own parameter, or take one pydantic model parameter.",
                field=param.name,
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise DefinitionError(
                f"{where}: positional-only parameters are not supported because eve passes tool input by "
                "keyword. Remove the '/' from the signature.",
                field=param.name,
            )
        hint = hints.get(param.name, Any)  # unannotated: any JSON value
        if _is_context(hint):
            if context is not None:
                raise DefinitionError(
                    f"{where}: only one parameter may be a ToolContext ({context!r} already is). Remove one.",
                    field=param.name,
                )
            context = param.name
        elif param.name.startswith("_"):
            # A leading underscore reads as private; pydantic also reserves such names for private attributes.
            raise DefinitionError(
                f"{where}: a name starting with '_' cannot be a tool input field. Rename it without the underscore.",
                field=param.name,
            )
        else:
            params.append((param, hint))
    bind: _Bind
    if len(params) == 1 and _is_model(params[0][1]):
        input_schema, bind = _model_input(name, params[0][0].name, params[0][1])
    else:
        input_schema, bind = _fields_input(name, params, arg_docs)
    kind: FunctionKind = (
        "async-generator"
        if inspect.isasyncgenfunction(function)
        else "generator"
        if inspect.isgeneratorfunction(function)
        else "async"
        if inspect.iscoroutinefunction(function)
        else "sync"
    )
    output_schema = _output_schema(hints.get("return", Any), kind)
    untyped = tuple(param.name for param, _ in params if param.annotation is param.empty)
    return FunctionSchema(input_schema, description, context, output_schema, kind, bind, untyped)


def _fields_input(
    name: str, params: list[tuple[inspect.Parameter, Any]], arg_docs: dict[str, str]
) -> tuple[dict[str, Any], _Bind]:
    # Fields get neutral names and the parameter name as alias: parameters such as `json`, `schema`
    # or `model_name` would otherwise clash with BaseModel attributes or its protected namespace.
    fields: dict[str, Any] = {}
    always: set[str] = set()  # parameters whose signature default is not a real value must always be passed
    for index, (param, hint) in enumerate(params):
        base, metadata = (get_args(hint)[0], get_args(hint)[1:]) if get_origin(hint) is Annotated else (hint, ())
        doc = arg_docs.get(param.name)
        ours = Field(alias=param.name, description=doc) if doc else Field(alias=param.name)
        # pydantic merges Annotated metadata left to right, so the user's own descriptions win over the docstring.
        user = [Field(description=item) if isinstance(item, str) else item for item in metadata]
        default = ... if param.default is param.empty else param.default
        if default is ... or isinstance(default, FieldInfo):
            always.add(f"p{index}")
        fields[f"p{index}"] = (cast(Any, Annotated)[(base, ours, *user)], default)
    try:
        model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
        schema = schema_of(model)
    except SCHEMA_ERRORS as exc:
        raise input_schema_error(name, params, exc) from None
    names = {f"p{index}": param.name for index, (param, _) in enumerate(params)}
    keys = [model.model_fields[key].alias or key for key in names]  # a user's Field(alias=...) renames the key
    for key in keys:
        if keys.count(key) > 1:
            raise DefinitionError(
                f"Tool function {name!r}: two parameters are named {key!r} in the tool input (one through a "
                "Field alias). Give them different names.",
                field=key,
            )

    def bind(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            instance = model.model_validate(arguments)
        except ValidationError as exc:
            raise _input_error(_problems(exc)) from None
        given = instance.model_fields_set | always
        return {param: getattr(instance, key) for key, param in names.items() if key in given}

    return schema, bind


def _model_input(name: str, param: str, model: type[BaseModel]) -> tuple[dict[str, Any], _Bind]:
    try:
        schema = schema_of(model)
    except SCHEMA_ERRORS as exc:
        raise type_schema_error(name, param, model, exc) from None
    # Unknown keys are an error unless the model's config says otherwise (`extra="allow"` or an explicit "ignore").
    extra = model.model_config.get("extra")
    allowed = frozenset(schema.get("properties", {})) if extra is None else None
    if extra is None:
        schema["additionalProperties"] = False

    def bind(arguments: dict[str, Any]) -> dict[str, Any]:
        problems = [(key, _UNKNOWN_FIELD) for key in arguments if allowed is not None and key not in allowed]
        try:
            instance = model.model_validate(arguments)
        except ValidationError as exc:
            problems += _problems(exc)
        if problems:
            raise _input_error(problems)
        return {param: instance}

    return schema, bind


def _output_schema(hint: Any, kind: FunctionKind) -> dict[str, Any] | None:
    if kind in ("generator", "async-generator"):
        origin, args = get_origin(hint), get_args(hint)
        if origin is abc.Generator and len(args) == 3:
            hint = args[0] if args[2] in (None, type(None)) else args[2]
        elif origin in (abc.AsyncGenerator, abc.Iterator, abc.Iterable, abc.AsyncIterator, abc.AsyncIterable) and args:
            hint = args[0]
        else:
            return None
    if hint in (Any, None, type(None)):
        return None
    try:
        schema = schema_of(TypeAdapter(hint), mode="serialization")
    except SCHEMA_ERRORS:
        return None  # the output schema is advisory: a result type pydantic cannot describe just has none
    return schema or None


def _is_context(hint: Any) -> bool:
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    if get_origin(hint) in (Union, types.UnionType):
        return [arg for arg in get_args(hint) if arg is not type(None)] == [ToolContext]
    return hint is ToolContext


def _is_model(hint: Any) -> bool:
    # A RootModel may describe a non-object (a list, a string), so it stays an ordinary field.
    return isinstance(hint, type) and issubclass(hint, BaseModel) and not issubclass(hint, RootModel)


def _parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a Google-style docstring into the description and the `Args:` entries."""
    if not doc:
        return None, {}
    kept: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None
    indent: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header and header["name"].strip().lower() in _DROPPED_SECTIONS:
            section, indent, current = header["name"].strip().lower(), None, None
            continue
        if section is not None and (not line.strip() or line[0].isspace()):
            if section in _ARGS_SECTIONS and line.strip():
                width = len(line) - len(line.lstrip())
                indent = width if indent is None else indent
                entry = _ARG.match(line.strip()) if width <= indent else None
                if entry:
                    current = entry["name"]
                    args[current] = [entry["text"]]
                elif current is not None:
                    args[current].append(line.strip())
            continue
        section = None
        kept.append(line)
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return description or None, {key: " ".join(part for part in parts if part) for key, parts in args.items()}


def _problems(exc: ValidationError) -> list[tuple[str, str]]:
    # One line per field: a union reports one error per member, joined here with "or".
    grouped: dict[str, list[str]] = {}
    inputs: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        path = field_path(tuple(error["loc"])) or "(input)"
        if error["type"] == "missing":
            message = "required field is missing"
        elif error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):  # the latter: dataclasses
            message = _UNKNOWN_FIELD
        else:
            message = error["msg"]
            inputs.setdefault(path, f" (got {_short_json(error['input'])})")
        messages = grouped.setdefault(path, [])
        if message not in messages:
            messages.append(message)
    return [(path, " or ".join(messages) + inputs.get(path, "")) for path, messages in grouped.items()]


def _short_json(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _input_error(problems: list[tuple[str, str]]) -> ToolInputError:
    lines = "\n".join(f"- {path}: {message}" for path, message in problems)
    return ToolInputError(f"Invalid tool input; fix these fields and call the tool again:\n{lines}", problems=problems)
