from __future__ import annotations

import dataclasses
import enum
import functools
import importlib.util
import sys
import textwrap
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.schema import FunctionSchema, ToolInputError, function_schema
from eve_runtime.errors import DefinitionError

# --- types used by the tools below (module level, so string annotations resolve) ---


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str
    zip_code: str | None = None


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Window(TypedDict):
    start: str
    end: str


class Forecast(BaseModel):
    """A weather forecast."""

    city: str
    days: int = Field(default=3, ge=1, le=10, description="How many days")


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Opaque:
    """A class pydantic knows nothing about."""


def schema_of(function: Callable[..., Any]) -> dict[str, Any]:
    return function_schema(function).input_schema


def input_error(schema: FunctionSchema, arguments: Any) -> str:
    with pytest.raises(ToolInputError) as info:
        schema.validate(arguments)
    message = str(info.value)
    assert "pydantic.dev" not in message
    return message


# --- input schemas: simple types ---


def test_scalars_are_required_properties_of_a_closed_object() -> None:
    def f(name: str, count: int, ratio: float, flag: bool) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
        },
        "required": ["name", "count", "ratio", "flag"],
        "additionalProperties": False,
    }


def test_empty_signature_is_an_empty_object() -> None:
    def f() -> None: ...

    assert schema_of(f) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_optional_and_defaults() -> None:
    def f(
        a: Optional[int],  # noqa: UP045 - Optional on purpose
        b: str | None = None,
        c: int = 3,
        d: bool = False,
    ) -> None: ...

    nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "a": nullable_int,
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "c": {"type": "integer", "default": 3},
            "d": {"type": "boolean", "default": False},
        },
        "required": ["a"],
        "additionalProperties": False,
    }


def test_literal_and_enum() -> None:
    def f(unit: Literal["celsius", "fahrenheit"], color: Color = Color.RED) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "color": {"$ref": "#/$defs/Color", "default": "red"},
        },
        "required": ["unit"],
        "additionalProperties": False,
        "$defs": {"Color": {"type": "string", "enum": ["red", "blue"]}},
    }


def test_collections() -> None:
    def f(tags: list[str], scores: dict[str, float], pair: tuple[int, str], rest: tuple[int, ...] = ()) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "scores": {"type": "object", "additionalProperties": {"type": "number"}},
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
            "rest": {"type": "array", "items": {"type": "integer"}, "default": []},
        },
        "required": ["tags", "scores", "pair"],
        "additionalProperties": False,
    }


def test_unannotated_parameter_accepts_any_json_value() -> None:
    def f(anything, other=1):  # type: ignore[no-untyped-def]
        ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {"anything": {}, "other": {"default": 1}},
        "required": ["anything"],
        "additionalProperties": False,
    }


# --- nested types go under $defs, without pydantic's derived titles ---


def test_nested_model_dataclass_and_typed_dict() -> None:
    def f(address: Address, point: Point, window: Window | None = None) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "address": {"$ref": "#/$defs/Address"},
            "point": {"$ref": "#/$defs/Point"},
            "window": {"anyOf": [{"$ref": "#/$defs/Window"}, {"type": "null"}], "default": None},
        },
        "required": ["address", "point"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "zip_code": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                },
                "required": ["city"],
            },
            # stdlib dataclasses and TypedDicts have no config of their own: they inherit extra="forbid"
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
                "additionalProperties": False,
            },
            "Window": {
                "type": "object",
                "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
                "required": ["start", "end"],
                "additionalProperties": False,
            },
        },
    }


class Titled(BaseModel):
    model_config = ConfigDict(title="A titled thing")
    value: int = Field(title="The value")


def test_user_titles_are_kept() -> None:
    def f(item: Titled, count: Annotated[int, Field(title="How many")]) -> None: ...

    schema = schema_of(f)
    assert schema["properties"]["count"] == {"type": "integer", "title": "How many"}
    assert schema["$defs"]["Titled"]["title"] == "A titled thing"
    assert schema["$defs"]["Titled"]["properties"]["value"] == {"type": "integer", "title": "The value"}
    assert "title" not in schema


def test_parameter_names_that_clash_with_pydantic_attributes(recwarn: pytest.WarningsRecorder) -> None:
    def f(json: str, schema: dict[str, Any], model_name: str, copy: bool = False) -> None: ...

    fs = function_schema(f)
    assert list(fs.input_schema["properties"]) == ["json", "schema", "model_name", "copy"]
    assert fs.validate({"json": "{}", "schema": {}, "model_name": "m"}) == {
        "json": "{}",
        "schema": {},
        "model_name": "m",
    }
    assert not recwarn.list


def test_field_alias_renames_the_input_key() -> None:
    def f(from_: Annotated[str, Field(alias="from", description="Sender")], to: str) -> None: ...

    fs = function_schema(f)
    assert fs.input_schema["properties"] == {
        "from": {"type": "string", "description": "Sender"},
        "to": {"type": "string"},
    }
    assert fs.input_schema["required"] == ["from", "to"]
    assert fs.validate({"from": "a", "to": "b"}) == {"from_": "a", "to": "b"}
    assert "- from_: unknown field" in input_error(fs, {"from_": "a", "from": "a", "to": "b"})


def test_non_serializable_default_is_left_out(recwarn: pytest.WarningsRecorder) -> None:
    sentinel = object()

    def f(value: Any = sentinel) -> None: ...

    assert schema_of(f)["properties"] == {"value": {}}
    assert not recwarn.list


# --- descriptions ---


def test_annotated_descriptions() -> None:
    def f(
        city: Annotated[str, "The city name"],
        days: Annotated[int, Field(description="Days ahead", ge=1)] = 1,
    ) -> None: ...

    assert schema_of(f)["properties"] == {
        "city": {"type": "string", "description": "The city name"},
        "days": {"type": "integer", "description": "Days ahead", "minimum": 1, "default": 1},
    }


def test_docstring_args_describe_parameters_and_annotated_wins() -> None:
    def f(city: str, days: int, unit: Annotated[str, "From Annotated"] = "c", ctx: ToolContext | None = None) -> None:
        """Get the forecast.

        Args:
            city: The city,
                for example Paris.
            days (int): How many days.
            unit: From the docstring.
            ctx: The tool context.
        """

    assert schema_of(f)["properties"] == {
        "city": {"type": "string", "description": "The city, for example Paris."},
        "days": {"type": "integer", "description": "How many days."},
        "unit": {"type": "string", "description": "From Annotated", "default": "c"},
    }


def test_field_default_is_merged_and_passed() -> None:
    def f(limit: int = Field(10, description="Maximum rows", le=100)) -> int:
        """
        Args:
            limit: Loses to the Field.
        """
        return limit

    fs = function_schema(f)
    assert fs.input_schema["properties"] == {
        "limit": {"type": "integer", "description": "Maximum rows", "maximum": 100, "default": 10}
    }
    assert fs.validate({}) == {"limit": 10}  # the signature default is a FieldInfo, so eve passes the value
    assert "limit: Input should be less than or equal to 100 (got 101)" in input_error(fs, {"limit": 101})


def test_description_drops_sections() -> None:
    def f(city: str) -> str:
        """Get the weather for a city.

        Uses the public forecast service.

        Args:
            city: The city.

        Returns:
            A summary.

        Raises:
            ValueError: Unknown city.

        Example:
            f("Paris")

        Note:
            Results are cached.
        """
        return city

    assert function_schema(f).description == (
        "Get the weather for a city.\n\nUses the public forecast service.\n\nNote:\n    Results are cached."
    )


def test_description_is_none_without_docstring_or_with_only_sections() -> None:
    def bare(city: str) -> None: ...

    def only_args(city: str) -> None:
        """
        Args:
            city: The city.
        """

    assert function_schema(bare).description is None
    assert function_schema(only_args).description is None
    assert schema_of(only_args)["properties"]["city"] == {"type": "string", "description": "The city."}


# --- string annotations (`from __future__ import annotations`) in a user module ---


def load_module(path: Path, source: str) -> ModuleType:
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses and pydantic look the module up while building
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[path.stem]
        raise
    return module


def test_string_annotations_resolve_against_the_user_module(tmp_path: Path) -> None:
    module = load_module(
        tmp_path / "eve_test_future_tool.py",
        '''
        from __future__ import annotations

        from dataclasses import dataclass
        from typing import Annotated, Literal

        from eve_runtime.authoring.context import ToolContext


        @dataclass
        class Target:
            host: str
            port: int = 22


        def ping(target: Target, mode: Literal["fast", "slow"], note: Annotated[str, "Free text"] = "",
                 ctx: ToolContext | None = None) -> list[int]:
            """Ping a host."""
            return []
        ''',
    )
    try:
        fs = function_schema(module.ping)
    finally:
        del sys.modules["eve_test_future_tool"]
    assert fs.context_parameter == "ctx"
    assert fs.description == "Ping a host."
    assert fs.output_schema == {"type": "array", "items": {"type": "integer"}}
    assert fs.input_schema == {
        "type": "object",
        "properties": {
            "target": {"$ref": "#/$defs/Target"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "note": {"type": "string", "description": "Free text", "default": ""},
        },
        "required": ["target", "mode"],
        "additionalProperties": False,
        "$defs": {
            "Target": {
                "type": "object",
                "properties": {"host": {"type": "string"}, "port": {"type": "integer", "default": 22}},
                "required": ["host"],
                "additionalProperties": False,
            }
        },
    }
    assert fs.validate({"target": {"host": "h"}, "mode": "fast"}) == {
        "target": module.Target(host="h", port=22),
        "mode": "fast",
    }


def test_unresolvable_string_annotation_is_a_definition_error(tmp_path: Path) -> None:
    module = load_module(
        tmp_path / "eve_test_unresolved_tool.py",
        """
        from __future__ import annotations
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from decimal import Decimal


        def price(amount: Decimal) -> str:
            return str(amount)
        """,
    )
    try:
        with pytest.raises(DefinitionError, match=r"Tool function 'price'.*'Decimal'.*TYPE_CHECKING"):
            function_schema(module.price)
    finally:
        del sys.modules["eve_test_unresolved_tool"]


# --- one pydantic model parameter: its schema is the input schema ---


def test_single_model_parameter_is_the_input() -> None:
    def f(forecast: Forecast, ctx: ToolContext) -> str:
        """Get a forecast."""
        return forecast.city

    fs = function_schema(f)
    assert fs.input_schema == {
        "type": "object",
        "description": "A weather forecast.",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "description": "How many days", "default": 3, "minimum": 1, "maximum": 10},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert fs.context_parameter == "ctx"
    assert fs.validate({"city": "Paris", "days": "5"}) == {"forecast": Forecast(city="Paris", days=5)}
    message = input_error(fs, {"days": 0, "country": "FR"})
    assert "- country: unknown field; remove it (the input schema does not define it)" in message
    assert "- city: required field is missing" in message
    assert "- days: Input should be greater than or equal to 1 (got 0)" in message


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


def test_single_model_parameter_respects_extra_allow() -> None:
    def f(item: Open) -> None: ...

    fs = function_schema(f)
    assert fs.input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": True,
    }
    (item,) = fs.validate({"name": "n", "other": 1}).values()
    assert isinstance(item, Open) and item.model_extra == {"other": 1}


def test_single_recursive_model_is_inlined_at_the_root() -> None:
    def f(tree: Node) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
        },
        "required": ["value"],
        "additionalProperties": False,
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
                },
                "required": ["value"],
            }
        },
    }


def test_model_parameter_next_to_others_is_an_ordinary_field() -> None:
    def f(forecast: Forecast, verbose: bool = False) -> None: ...

    schema = schema_of(f)
    assert schema["properties"]["forecast"] == {"$ref": "#/$defs/Forecast"}
    assert schema["$defs"]["Forecast"]["description"] == "A weather forecast."


# --- the context parameter ---


@pytest.mark.parametrize("annotation", [ToolContext, ToolContext | None, Optional[ToolContext]])  # noqa: UP045
def test_context_parameter_is_excluded(annotation: Any) -> None:
    def f(city: str, ctx: Any = None) -> None: ...

    f.__annotations__["ctx"] = annotation
    fs = function_schema(f)
    assert fs.context_parameter == "ctx"
    assert fs.input_schema["properties"] == {"city": {"type": "string"}}
    assert fs.validate({"city": "x"}) == {"city": "x"}
    assert "ctx: unknown field" in input_error(fs, {"city": "x", "ctx": {}})


def test_no_context_parameter() -> None:
    def f(city: str) -> None: ...

    assert function_schema(f).context_parameter is None


# --- kinds and output schemas ---


def test_kinds() -> None:
    def sync() -> None: ...

    async def coroutine() -> None: ...

    def generator() -> Iterator[int]:
        yield 1

    async def async_generator() -> AsyncIterator[int]:
        yield 1

    assert function_schema(sync).kind == "sync"
    assert function_schema(coroutine).kind == "async"
    assert function_schema(generator).kind == "generator"
    assert function_schema(async_generator).kind == "async-generator"


def test_output_schema_from_return_annotation() -> None:
    def text() -> str:
        return ""

    async def model() -> Point:
        return Point(x=1)

    def no_result() -> None: ...

    def anything() -> Any: ...

    def unannotated():  # type: ignore[no-untyped-def]
        ...

    def opaque() -> Opaque:
        return Opaque()

    assert function_schema(text).output_schema == {"type": "string"}
    assert function_schema(model).output_schema == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert function_schema(no_result).output_schema is None
    assert function_schema(anything).output_schema is None
    assert function_schema(unannotated).output_schema is None
    assert function_schema(opaque).output_schema is None  # advisory only: no schema rather than an error


def test_output_schema_of_generators() -> None:
    def returns(ticks: int) -> Generator[int, None, str]:
        yield ticks
        return "done"

    def only_yields() -> Generator[Color, None, None]:
        yield Color.RED

    def iterator() -> Iterator[float]:
        yield 1.0

    async def async_generator() -> AsyncGenerator[bool, None]:
        yield True

    async def async_iterator() -> AsyncIterator[dict[str, int]]:
        yield {}

    def mislabelled() -> int:  # type: ignore[misc]
        yield 1

    assert function_schema(returns).output_schema == {"type": "string"}
    assert function_schema(only_yields).output_schema == {"type": "string", "enum": ["red", "blue"]}
    assert function_schema(iterator).output_schema == {"type": "number"}
    assert function_schema(async_generator).output_schema == {"type": "boolean"}
    assert function_schema(async_iterator).output_schema == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert function_schema(mislabelled).output_schema is None


# --- validate() ---


def weather(
    city: str,
    days: int = 3,
    unit: Literal["c", "f"] = "c",
    color: Color | None = None,
    tags: list[str] | None = None,
    point: Point | None = None,
    ctx: ToolContext | None = None,
) -> str:
    """Get the weather."""
    return city


def test_validate_returns_keyword_arguments_with_coercion() -> None:
    fs = function_schema(weather)
    assert fs.validate({"city": "Paris", "days": "5", "color": "blue", "point": {"x": "1"}}) == {
        "city": "Paris",
        "days": 5,
        "color": Color.BLUE,
        "point": Point(x=1, y=0),
    }
    assert fs.validate({"city": "Paris"}) == {"city": "Paris"}  # omitted: the function's own defaults apply
    assert fs.validate({"city": "Paris", "tags": None}) == {"city": "Paris", "tags": None}


def test_validate_reports_every_problem_by_field() -> None:
    fs = function_schema(weather)
    message = input_error(
        fs, {"days": "soon", "unit": "k", "tags": ["a", 2], "point": {"y": 1, "z": 0}, "country": "FR"}
    )
    assert message == "\n".join(
        [
            "Invalid tool input; fix these fields and call the tool again:",
            "- city: required field is missing",
            '- days: Input should be a valid integer, unable to parse string as an integer (got "soon")',
            "- unit: Input should be 'c' or 'f' (got \"k\")",
            "- tags[1]: Input should be a valid string (got 2)",
            "- point.x: required field is missing",
            "- point.z: unknown field; remove it (the input schema does not define it)",
            "- country: unknown field; remove it (the input schema does not define it)",
        ]
    )


def test_validate_error_attributes_and_type() -> None:
    fs = function_schema(weather)
    with pytest.raises(ToolInputError) as info:
        fs.validate({"city": 3})
    assert isinstance(info.value, ValueError)
    assert info.value.problems == [("city", "Input should be a valid string (got 3)")]


def test_validate_joins_union_members() -> None:
    def f(value: int | list[int]) -> None: ...

    message = input_error(function_schema(f), {"value": "x"})
    assert "- value: Input should be a valid integer, unable to parse string as an integer or " in message
    assert message.endswith('Input should be a valid list (got "x")')


def test_validate_shortens_long_inputs() -> None:
    def f(count: int) -> None: ...

    message = input_error(function_schema(f), {"count": "x" * 200})
    assert message.endswith(' (got "' + "x" * 76 + "...)")


@pytest.mark.parametrize(("arguments", "kind"), [([1], "array"), ("text", "string"), (None, "null"), (3, "integer")])
def test_validate_rejects_non_objects(arguments: Any, kind: str) -> None:
    def f(count: int = 1) -> None: ...

    assert input_error(function_schema(f), arguments) == f"Invalid tool input: it must be a JSON object, not {kind}."


# --- definition errors ---


def test_var_positional_is_rejected() -> None:
    def f(*names: str) -> None: ...

    with pytest.raises(
        DefinitionError, match=r"Tool function 'f', parameter 'names': '\*names' is not supported"
    ) as info:
        function_schema(f)
    assert info.value.field == "names"


def test_var_keyword_is_rejected() -> None:
    def f(city: str, **options: Any) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter 'options': '\*\*options' is not supported.*own parameter"):
        function_schema(f)


def test_positional_only_is_rejected() -> None:
    def f(city: str, /) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter 'city': positional-only .* Remove the '/'"):
        function_schema(f)


def test_underscore_name_is_rejected() -> None:
    def f(_secret: str) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter '_secret': a name starting with '_'.*Rename it"):
        function_schema(f)


def test_underscore_context_name_is_fine() -> None:
    def f(city: str, _ctx: ToolContext) -> None: ...

    assert function_schema(f).context_parameter == "_ctx"


def test_second_context_parameter_is_rejected() -> None:
    def f(ctx: ToolContext, again: ToolContext | None = None) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter 'again': only one parameter may be a ToolContext \('ctx'"):
        function_schema(f)


def test_unknown_type_is_rejected() -> None:
    def f(city: str, thing: Opaque) -> None: ...

    with pytest.raises(DefinitionError) as info:
        function_schema(f)
    message = str(info.value)
    assert message.startswith("Tool function 'f', parameter 'thing': eve cannot describe ")
    assert "Opaque" in message and "Use JSON-friendly types" in message
    assert "pydantic.dev" not in message and "arbitrary_types_allowed" not in message
    assert info.value.field == "thing"


def test_type_without_json_schema_is_rejected() -> None:
    def f(callback: Callable[[int], int]) -> None: ...

    with pytest.raises(DefinitionError, match=r"parameter 'callback': eve cannot describe .*JSON Schema") as info:
        function_schema(f)
    assert info.value.field == "callback"


class Holder(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    thing: Opaque


def test_model_parameter_whose_schema_fails_is_rejected() -> None:
    def f(holder: Holder) -> None: ...

    with pytest.raises(
        DefinitionError, match=r"Tool function 'f', parameter 'holder': eve cannot describe Holder as JSON Schema"
    ):
        function_schema(f)


def test_alias_collision_is_rejected() -> None:
    def f(sender: Annotated[str, Field(alias="to")], to: str) -> None: ...

    with pytest.raises(DefinitionError, match=r"Tool function 'f': two parameters are named 'to' in the tool input"):
        function_schema(f)


def test_malformed_string_annotation_is_rejected() -> None:
    def f(count: int) -> None: ...

    f.__annotations__["count"] = "int["

    with pytest.raises(DefinitionError, match=r"Tool function 'f': eve cannot resolve its signature"):
        function_schema(f)


def test_callable_without_signature_is_rejected() -> None:
    with pytest.raises(DefinitionError, match=r"Tool function 'print', parameter 'args': '\*args' is not supported"):
        function_schema(print)


def test_partial_is_rejected() -> None:
    def g(a: int, b: str) -> None: ...

    with pytest.raises(DefinitionError, match=r"cannot be a tool .*; define it with 'def' or 'async def'"):
        function_schema(functools.partial(g, 1))


@pytest.mark.parametrize("target", [Forecast, 42, "text"])
def test_non_function_is_rejected(target: Any) -> None:
    with pytest.raises(DefinitionError, match="A tool must be a function"):
        function_schema(target)


def test_schema_is_frozen() -> None:
    fs = function_schema(weather)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fs.kind = "async"  # type: ignore[misc]
    assert "_bind" not in repr(fs)
