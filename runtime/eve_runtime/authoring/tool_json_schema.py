"""JSON Schema of a tool's types as eve shows them to a model, and the error when pydantic has none.

Schemas come from pydantic's public API (`TypeAdapter`, `BaseModel.model_json_schema`) with a
`GenerateJsonSchema` subclass that leaves out the titles pydantic derives from field, class and
enum names. A type pydantic cannot describe becomes a `DefinitionError` naming the tool, the
parameter and the JSON-friendly types to use instead.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, JsonSchemaWarningKind
from pydantic_core import core_schema

from eve_runtime.errors import DefinitionError

__all__ = ["SCHEMA_ERRORS", "input_schema_error", "schema_of", "type_schema_error"]

# What pydantic raises for types it cannot validate or describe (NameError: unresolved forward refs).
SCHEMA_ERRORS = (PydanticUserError, NameError, TypeError, ValueError)


class _ToolJsonSchema(GenerateJsonSchema):
    """pydantic's generator minus the titles it derives from field and class names (noise for a model)."""

    ignored_warning_kinds: set[JsonSchemaWarningKind] = {"skipped-choice", "non-serializable-default"}
    _enum_names: set[str]

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # only the derived title; pydantic still emits a `Field(title=...)` the user set

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return _untitled(super().model_schema(schema), schema["cls"])

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return _untitled(super().dataclass_schema(schema), schema["cls"])

    def typed_dict_schema(self, schema: core_schema.TypedDictSchema) -> JsonSchemaValue:
        return _untitled(super().typed_dict_schema(schema), schema.get("cls"))

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        self._enum_names.add(schema["cls"].__name__)  # pydantic titles enums after this method, see generate()
        return super().enum_schema(schema)

    def generate(self, schema: core_schema.CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        self._enum_names = set()
        json_schema = super().generate(schema, mode)
        for node in [json_schema, *json_schema.get("$defs", {}).values()]:
            if "enum" in node and node.get("title") in self._enum_names:
                del node["title"]
        return json_schema


def _untitled(json_schema: JsonSchemaValue, cls: Any) -> JsonSchemaValue:
    # A title equal to the class name is pydantic's default (a custom one equal to it is lost, harmlessly).
    if cls is not None and json_schema.get("title") == getattr(cls, "__name__", None):
        del json_schema["title"]
    return json_schema


def schema_of(adapter: TypeAdapter[Any] | type[BaseModel], mode: JsonSchemaMode = "validation") -> dict[str, Any]:
    """The JSON Schema of a type (through its `TypeAdapter`) or a model, untitled, its root never a `$ref`.

    Raises one of `SCHEMA_ERRORS` when pydantic cannot describe the type.
    """
    if isinstance(adapter, TypeAdapter):
        schema = adapter.json_schema(mode=mode, schema_generator=_ToolJsonSchema)
    else:
        schema = adapter.model_json_schema(mode=mode, schema_generator=_ToolJsonSchema)
    # A recursive model comes back as {"$ref": ..., "$defs": ...}; inline it so the root is the object itself.
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and set(schema) <= {"$ref", "$defs"}:
        return {**schema["$defs"][ref.removeprefix("#/$defs/")], "$defs": schema["$defs"]}
    return schema


def input_schema_error(name: str, params: list[tuple[inspect.Parameter, Any]], exc: Exception) -> DefinitionError:
    """The `DefinitionError` of a tool whose input schema failed: it names the parameter to blame, if one is."""
    for param, hint in params:  # find the parameter to blame
        try:
            schema_of(TypeAdapter(hint))
        except SCHEMA_ERRORS as param_exc:
            return type_schema_error(name, param.name, hint, param_exc)
    return DefinitionError(f"Tool function {name!r}: eve cannot build its input schema ({_first_sentence(exc)}).")


def type_schema_error(name: str, param: str, hint: Any, exc: Exception) -> DefinitionError:
    """The `DefinitionError` of a parameter whose type pydantic cannot describe as JSON Schema."""
    shown = hint.__qualname__ if isinstance(hint, type) else repr(hint)
    return DefinitionError(
        f"Tool function {name!r}, parameter {param!r}: eve cannot describe {shown} as JSON Schema "
        f"({_first_sentence(exc)}). Use JSON-friendly types: str, int, float, bool, None, list, dict, tuple, "
        "Literal, an Enum, a pydantic model, a dataclass or a TypedDict.",
        field=param,
    )


def _first_sentence(exc: Exception) -> str:
    # pydantic's messages go on to suggest config switches and link to its docs; neither helps here.
    return re.split(r"\.\s|\n", str(exc).strip(), maxsplit=1)[0].rstrip(".")
