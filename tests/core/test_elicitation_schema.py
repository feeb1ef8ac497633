"""Form-mode elicitation schemas: model -> `requestedSchema` per revision, and answers -> model.

Every schema produced here is also checked against the official `requestedSchema` definition of
its revision, both as published and "closed" (no unknown keywords anywhere), so a stray key such
as a leaked default on 2025-06-18 fails even though the published schema would let it through.
"""

from __future__ import annotations

import copy
import datetime
import gc
import json
import uuid
import weakref
from enum import Enum, IntEnum, StrEnum
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.protocols import Validator
from pydantic import (
    AliasChoices,
    AnyUrl,
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    WithJsonSchema,
    create_model,
)
from pydantic.fields import FieldInfo

from mcp_core._elicitation import ENUM_TITLES, FORM_REVISIONS, form_schema, validate_form_answer
from tests.schema_check import spec_dir

MODERN = ("2025-11-25", "2026-07-28")
ALL_REVISIONS = ("2025-06-18", *MODERN)

# --------------------------------------------------------------------------- official schemas

# revision -> ($schema dialect, validator, definitions key, where requestedSchema is defined).
# 2025-06-18 has no ElicitRequestFormParams: its params are written inline in ElicitRequest.
_DIALECT = {
    "2025-06-18": (
        "http://json-schema.org/draft-07/schema#",
        Draft7Validator,
        "definitions",
        "ElicitRequest/properties/params/properties/requestedSchema",
    ),
    "2025-11-25": (
        "https://json-schema.org/draft/2020-12/schema",
        Draft202012Validator,
        "$defs",
        "ElicitRequestFormParams/properties/requestedSchema",
    ),
    "2026-07-28": (
        "https://json-schema.org/draft/2020-12/schema",
        Draft202012Validator,
        "$defs",
        "ElicitRequestFormParams/properties/requestedSchema",
    ),
}


def _spec_dir() -> Path:
    return spec_dir()


@cache
def _document(revision: str) -> dict[str, Any]:
    path = _spec_dir() / revision / "schema.json"
    if not path.is_file():
        raise RuntimeError(f"official MCP schema missing: {path} (set MCP_SPEC_DIR to its folder)")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    dialect = _DIALECT[revision][0]
    assert doc["$schema"] == dialect, f"{path} is not written in {dialect}"
    return doc


def _close(node: Any) -> None:
    """Forbid unknown keywords in every object schema that lists its properties."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


@cache
def _validator(revision: str, closed: bool) -> Validator:
    _, cls, defs_key, where = _DIALECT[revision]
    doc = copy.deepcopy(_document(revision))
    defs = doc[defs_key]
    if closed:
        primitive = defs["PrimitiveSchemaDefinition"]["anyOf"]
        for ref in primitive:
            _close(defs[ref["$ref"].rsplit("/", 1)[1]])
        requested: Any = defs
        for step in where.split("/"):
            requested = requested[step]
        _close(requested)
    # Make the requestedSchema definition the root while keeping every definition reachable.
    doc["$ref"] = f"#/{defs_key}/{where}"
    cls.check_schema(doc)
    validator: Validator = cls(doc)
    return validator


def assert_wire_valid(schema: dict[str, Any], revision: str) -> None:
    for closed in (False, True):
        errors = sorted(_validator(revision, closed).iter_errors(schema), key=str)
        assert not errors, f"{revision} (closed={closed}) rejects {schema}: {errors[0].message}"


# --------------------------------------------------------------------------- fixtures / models


class Color(StrEnum):
    """Colours of the rainbow (an Enum docstring; never a field's label)."""

    RED = "red"
    GREEN = "green"


class Plan(StrEnum):
    """An Enum whose members carry display titles."""

    def __new__(cls, value: str, title: str) -> Plan:
        member = str.__new__(cls, value)
        member._value_ = value
        member.title = title  # type: ignore[assignment,method-assign]
        return member

    FREE = "free", "Free tier"
    PRO = "pro", "Professional"


class HalfTitled(StrEnum):
    def __new__(cls, value: str, title: str | None) -> HalfTitled:
        member = str.__new__(cls, value)
        member._value_ = value
        if title is not None:
            member.title = title  # type: ignore[assignment,method-assign]
        return member

    A = "a", "Alpha"
    B = "b", None


class Mode(Enum):
    """A plain Enum (no str mixin) whose values happen to be strings."""

    FAST = "fast"
    SAFE = "safe"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    city: str


class AlternativeDate(BaseModel):
    """The seed page's model, verbatim."""

    accept_alternative: bool = Field(description="Try another date?")
    date: str = Field(default="2025-12-26", description="Alternative date (YYYY-MM-DD)")


class Everything(BaseModel):
    """One field of every supported kind, each with a default where the wire allows one."""

    name: str = Field(description="Your name", min_length=1, max_length=40)
    email: str = Field("ada@example.com", json_schema_extra={"format": "email"})
    birthday: datetime.date = datetime.date(1815, 12, 10)
    age: int = Field(36, ge=0, le=150)
    ratio: float = Field(0.5, ge=0, le=1)
    subscribe: bool = True
    color: Color = Color.GREEN
    size: Literal["s", "m", "l"] = Field(
        "m", json_schema_extra={ENUM_TITLES: {"s": "Small", "m": "Medium", "l": "Large"}}
    )
    plan: Plan = Plan.FREE
    nickname: str | None = None


class WithMultiSelect(BaseModel):
    colors: list[Color] = Field(default=[Color.RED], min_length=1, max_length=2)
    plans: set[Plan] = set()


def model(annotation: Any, spec: Any = ..., name: str = "x") -> type[BaseModel]:
    """A one-field model; `spec` is a default or a FieldInfo, `...` meaning required."""
    fields: dict[str, Any] = {name: (annotation, spec)}
    return create_model("Form", **fields)


# --------------------------------------------------------------------------- field table

TITLED_PLAN = [{"const": "free", "title": "Free tier"}, {"const": "pro", "title": "Professional"}]

FIELD_TABLE: list[tuple[str, Any, Any, dict[str, Any]]] = [
    ("str", str, ..., {"type": "string", "title": "X"}),
    ("str lengths", str, Field(min_length=2, max_length=9), {"type": "string", "title": "X", "minLength": 2, "maxLength": 9}),
    ("str default", str, "hi", {"type": "string", "title": "X", "default": "hi"}),
    ("str pattern dropped", str, Field(pattern="^a+$"), {"type": "string", "title": "X"}),
    ("date", datetime.date, ..., {"type": "string", "title": "X", "format": "date"}),
    ("date default as ISO", datetime.date, datetime.date(2025, 12, 26), {"type": "string", "title": "X", "format": "date", "default": "2025-12-26"}),
    ("datetime", datetime.datetime, ..., {"type": "string", "title": "X", "format": "date-time"}),
    ("url", AnyUrl, ..., {"type": "string", "title": "X", "format": "uri", "minLength": 1}),
    ("email via extra", str, Field(json_schema_extra={"format": "email"}), {"type": "string", "title": "X", "format": "email"}),
    ("int", int, ..., {"type": "integer", "title": "X"}),
    ("int ge/le", int, Field(ge=1, le=10), {"type": "integer", "title": "X", "minimum": 1, "maximum": 10}),
    ("int gt/lt -> inclusive", int, Field(gt=0, lt=10), {"type": "integer", "title": "X", "minimum": 1, "maximum": 9}),
    ("int tighter of ge and gt", int, Field(ge=5, gt=1, lt=100, le=50), {"type": "integer", "title": "X", "minimum": 5, "maximum": 50}),
    ("int default", int, 3, {"type": "integer", "title": "X", "default": 3}),
    ("float", float, Field(ge=0.5, le=2.5), {"type": "number", "title": "X", "minimum": 0.5, "maximum": 2.5}),
    ("float default", float, 1.5, {"type": "number", "title": "X", "default": 1.5}),
    ("bool", bool, ..., {"type": "boolean", "title": "X"}),
    ("bool default", bool, False, {"type": "boolean", "title": "X", "default": False}),
    ("description and title", str, Field(description="Label", title="Caption"), {"type": "string", "title": "Caption", "description": "Label"}),
    ("literal", Literal["a", "b"], ..., {"type": "string", "title": "X", "enum": ["a", "b"]}),
    ("literal single", Literal["only"], ..., {"type": "string", "title": "X", "enum": ["only"]}),
    ("literal default", Literal["a", "b"], "b", {"type": "string", "title": "X", "enum": ["a", "b"], "default": "b"}),
    ("str enum", Color, ..., {"type": "string", "title": "X", "enum": ["red", "green"]}),
    ("str enum described", Color, Field(Color.RED, description="Pick"), {"type": "string", "title": "X", "description": "Pick", "enum": ["red", "green"], "default": "red"}),
    ("plain enum", Mode, Mode.SAFE, {"type": "string", "title": "X", "enum": ["fast", "safe"], "default": "safe"}),
    ("optional int", int | None, None, {"type": "integer", "title": "X"}),
    ("optional constrained", int | None, Field(None, ge=2), {"type": "integer", "title": "X", "minimum": 2}),
    ("optional enum", Color | None, None, {"type": "string", "title": "X", "enum": ["red", "green"]}),
    ("titled literal", Literal["a", "b"], Field(json_schema_extra={ENUM_TITLES: {"a": "Alpha", "b": "Beta"}}), {"type": "string", "title": "X", "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}),
    ("titled enum members", Plan, Plan.PRO, {"type": "string", "title": "X", "oneOf": TITLED_PLAN, "default": "pro"}),
    ("multi literal", list[Literal["a", "b", "c"]], Field(min_length=1, max_length=2), {"type": "array", "title": "X", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2}),
    ("multi set of enum", set[Color], set(), {"type": "array", "title": "X", "items": {"type": "string", "enum": ["red", "green"]}, "default": []}),
    ("multi enum default", list[Color], [Color.GREEN], {"type": "array", "title": "X", "items": {"type": "string", "enum": ["red", "green"]}, "default": ["green"]}),
    ("multi titled members", list[Plan], ..., {"type": "array", "title": "X", "items": {"anyOf": TITLED_PLAN}}),
    ("multi titled extra", list[Literal["a", "b"]], Field(json_schema_extra={ENUM_TITLES: {"a": "Alpha", "b": "Beta"}}), {"type": "array", "title": "X", "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("annotation", "spec", "expected"),
    [pytest.param(a, s, e, id=i) for i, a, s, e in FIELD_TABLE],
)
@pytest.mark.parametrize("revision", MODERN)
def test_field_table(annotation: Any, spec: Any, expected: dict[str, Any], revision: str) -> None:
    schema = form_schema(model(annotation, spec), revision=revision)
    assert schema["properties"] == {"x": expected}
    assert schema["type"] == "object"
    required = spec is ... or (isinstance(spec, FieldInfo) and spec.is_required())
    assert schema.get("required") == (["x"] if required else None)
    assert_wire_valid(schema, revision)


def test_property_order_is_stable() -> None:
    prop = form_schema(model(int, Field(3, ge=1, description="n")))["properties"]["x"]
    assert list(prop) == ["type", "title", "description", "default", "minimum"]


# --------------------------------------------------------------------------- the seed model


def test_seed_model_renders_the_page_schema() -> None:
    assert form_schema(AlternativeDate) == {
        "type": "object",
        "properties": {
            "accept_alternative": {
                "type": "boolean",
                "title": "Accept Alternative",
                "description": "Try another date?",
            },
            "date": {
                "type": "string",
                "title": "Date",
                "description": "Alternative date (YYYY-MM-DD)",
                "default": "2025-12-26",
            },
        },
        "required": ["accept_alternative"],
    }


def test_required_lists_exactly_the_fields_without_defaults() -> None:
    class Mixed(BaseModel):
        a: str
        b: str = "b"
        c: int | None = None
        d: bool
        e: list[Color] = Field(default_factory=list)

    schema = form_schema(Mixed)
    assert schema["required"] == ["a", "d"]
    assert set(schema["properties"]) == {"a", "b", "c", "d", "e"}
    assert "default" not in schema["properties"]["c"]  # None is "absent", not a value to pre-fill
    assert "default" not in schema["properties"]["e"]  # factories are not called


def test_all_optional_model_omits_required() -> None:
    schema = form_schema(model(str, "x"))
    assert "required" not in schema
    assert form_schema(create_model("Empty")) == {"type": "object", "properties": {}}


def test_properties_use_wire_names() -> None:
    class Aliased(BaseModel):
        first_name: str = Field(alias="firstName")
        last: str = Field(validation_alias=AliasChoices("surname", "family"))

    schema = form_schema(Aliased)
    assert list(schema["properties"]) == ["firstName", "surname"]
    assert schema["required"] == ["firstName", "surname"]
    answer = validate_form_answer(Aliased, {"firstName": "Ada", "surname": "Lovelace"})
    assert (answer.first_name, answer.last) == ("Ada", "Lovelace")


def test_enum_docstring_is_not_a_label_but_the_field_description_is() -> None:
    prop = form_schema(model(Color, Field(description="Favourite colour")))["properties"]["x"]
    assert prop["description"] == "Favourite colour"
    assert "Rainbow" not in json.dumps(prop) and "rainbow" not in json.dumps(prop)
    assert "description" not in form_schema(model(Color))["properties"]["x"]


def test_field_level_titles_win_over_member_titles() -> None:
    spec = Field(json_schema_extra={ENUM_TITLES: {"free": "Gratis", "pro": "Pro"}})
    prop = form_schema(model(Plan, spec))["properties"]["x"]
    assert prop["oneOf"] == [{"const": "free", "title": "Gratis"}, {"const": "pro", "title": "Pro"}]


# --------------------------------------------------------------------------- refusals


def _message(name: str, rendered: dict[str, Any]) -> str:
    return (
        f"Elicitation schema field {name!r} rendered as {rendered!r}, "
        "which is not a valid PrimitiveSchemaDefinition"
    )


def test_nested_model_is_refused_with_the_seed_message() -> None:
    class Profile(BaseModel):
        name: str
        address: Address

    with pytest.raises(TypeError) as caught:
        form_schema(Profile)
    assert str(caught.value) == (
        "Elicitation schema field 'address' rendered as {'$ref': '#/$defs/Address'}, "
        "which is not a valid PrimitiveSchemaDefinition"
    )


@pytest.mark.parametrize(
    ("annotation", "spec", "rendered"),
    [
        pytest.param(dict[str, int], ..., {"additionalProperties": {"type": "integer"}, "title": "X", "type": "object"}, id="dict"),
        pytest.param(list[int], ..., {"items": {"type": "integer"}, "title": "X", "type": "array"}, id="list[int]"),
        pytest.param(list[str], ..., {"items": {"type": "string"}, "title": "X", "type": "array"}, id="list[str]"),
        pytest.param(int | str, ..., {"anyOf": [{"type": "integer"}, {"type": "string"}], "title": "X"}, id="union"),
        pytest.param(int | str | None, None, {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}], "default": None, "title": "X"}, id="optional union"),
        pytest.param(tuple[int, str], ..., {"maxItems": 2, "minItems": 2, "prefixItems": [{"type": "integer"}, {"type": "string"}], "title": "X", "type": "array"}, id="tuple"),
        pytest.param(Address | None, None, {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "default": None}, id="optional model"),
        pytest.param(list[Address], ..., {"items": {"$ref": "#/$defs/Address"}, "title": "X", "type": "array"}, id="list of models"),
        pytest.param(Level, ..., {"$ref": "#/$defs/Level"}, id="int enum"),
        pytest.param(Literal[1, 2], ..., {"enum": [1, 2], "title": "X", "type": "integer"}, id="int literal"),
        pytest.param(Literal["a", 1], ..., {"enum": ["a", 1], "title": "X"}, id="mixed literal"),
        pytest.param(list[Literal["a"] | None], ..., {"items": {"anyOf": [{"const": "a", "type": "string"}, {"type": "null"}]}, "title": "X", "type": "array"}, id="list of optional"),
    ],
)  # fmt: skip
def test_non_primitive_fields_are_refused_verbatim(
    annotation: Any, spec: Any, rendered: dict[str, Any]
) -> None:
    for revision in ALL_REVISIONS:
        with pytest.raises(TypeError) as caught:
            form_schema(model(annotation, spec), revision=revision)
        assert str(caught.value) == _message("x", rendered)


@pytest.mark.parametrize(
    ("annotation", "spec", "hint"),
    [
        pytest.param(uuid.UUID, ..., "format 'uuid' is not one of date, date-time, email, uri", id="uuid"),
        pytest.param(datetime.time, ..., "format 'time' is not one of", id="time"),
        pytest.param(SecretStr, ..., "secrets must be asked for in URL mode", id="secret"),
        pytest.param(float, Field(gt=0), "exclusive bounds (gt/lt) are only translated for integers", id="float gt"),
        pytest.param(str, 3, "default 3 does not fit the field", id="bad default"),
        pytest.param(Literal["a", "b"], "c", "default 'c' does not fit the field", id="default not an option"),
        pytest.param(HalfTitled, ..., "some Enum members carry a title and some do not", id="half titled"),
        pytest.param(Literal["a", "b"], Field(json_schema_extra={ENUM_TITLES: {"a": "A"}}), f"{ENUM_TITLES} must map every option", id="titles missing"),
        pytest.param(Literal["a"], Field(json_schema_extra={ENUM_TITLES: {"a": "A", "z": "Z"}}), f"{ENUM_TITLES} must map every option", id="titles extra"),
        pytest.param(str, Field(json_schema_extra={"x-widget": "textarea"}), "unsupported keyword 'x-widget'", id="unknown keyword"),
    ],
)  # fmt: skip
def test_refusals_explain_themselves(annotation: Any, spec: Any, hint: str) -> None:
    with pytest.raises(TypeError) as caught:
        form_schema(model(annotation, spec))
    text = str(caught.value)
    assert text.startswith("Elicitation schema field 'x' rendered as {")
    assert "which is not a valid PrimitiveSchemaDefinition (" in text
    assert hint in text


def test_custom_renderings_are_judged_like_any_other() -> None:
    email = Annotated[str, WithJsonSchema({"type": "string", "format": "email"})]
    assert form_schema(model(email))["properties"]["x"] == {
        "type": "string",
        "format": "email",
        "title": "X",
    }
    bare_array = Annotated[list[str], WithJsonSchema({"type": "array"})]
    with pytest.raises(TypeError) as caught:
        form_schema(model(bare_array))
    assert str(caught.value) == _message("x", {"title": "X", "type": "array"})


def test_first_bad_field_is_named_with_its_wire_name() -> None:
    class Bad(BaseModel):
        ok: str
        home: Address = Field(alias="homeAddress")

    with pytest.raises(TypeError, match=r"^Elicitation schema field 'homeAddress' rendered as "):
        form_schema(Bad)


def test_non_models_and_non_objects_are_refused() -> None:
    from pydantic import RootModel

    with pytest.raises(TypeError, match="pydantic model class"):
        form_schema(dict)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a flat object of fields"):
        form_schema(RootModel[int])


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "draft", "2025-11-26", ""])
def test_unknown_revisions_are_value_errors(revision: str) -> None:
    with pytest.raises(ValueError, match="No form-mode elicitation in revision"):
        form_schema(AlternativeDate, revision=revision)


def test_form_revisions_constant() -> None:
    assert frozenset(ALL_REVISIONS) == FORM_REVISIONS


# --------------------------------------------------------------------------- revisions


def test_2025_06_18_keeps_only_boolean_defaults_and_uses_enum_names() -> None:
    legacy = form_schema(Everything, revision="2025-06-18")
    props = legacy["properties"]
    for name, prop in props.items():
        if prop["type"] != "boolean":
            assert "default" not in prop, name
    assert props["subscribe"] == {"type": "boolean", "title": "Subscribe", "default": True}
    assert props["birthday"] == {"type": "string", "title": "Birthday", "format": "date"}
    assert props["age"] == {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150}
    assert props["color"] == {"type": "string", "title": "Color", "enum": ["red", "green"]}
    assert props["size"] == {
        "type": "string",
        "title": "Size",
        "enum": ["s", "m", "l"],
        "enumNames": ["Small", "Medium", "Large"],
    }
    assert props["plan"] == {
        "type": "string",
        "title": "Plan",
        "enum": ["free", "pro"],
        "enumNames": ["Free tier", "Professional"],
    }
    # A dropped default still leaves the field optional.
    assert legacy["required"] == ["name"]
    assert_wire_valid(legacy, "2025-06-18")


def test_2025_11_25_keeps_every_default_and_uses_one_of() -> None:
    props = form_schema(Everything)["properties"]
    assert props["name"] == {
        "type": "string",
        "title": "Name",
        "description": "Your name",
        "minLength": 1,
        "maxLength": 40,
    }
    assert props["email"]["default"] == "ada@example.com"
    assert props["birthday"]["default"] == "1815-12-10"
    assert props["age"]["default"] == 36
    assert props["ratio"]["default"] == 0.5
    assert props["color"]["default"] == "green"
    assert props["size"] == {
        "type": "string",
        "title": "Size",
        "default": "m",
        "oneOf": [
            {"const": "s", "title": "Small"},
            {"const": "m", "title": "Medium"},
            {"const": "l", "title": "Large"},
        ],
    }
    assert props["plan"]["oneOf"] == TITLED_PLAN
    assert props["nickname"] == {"type": "string", "title": "Nickname"}


def test_2026_07_28_is_identical_to_2025_11_25() -> None:
    for m in (Everything, WithMultiSelect, AlternativeDate):
        assert form_schema(m, revision="2026-07-28") == form_schema(m, revision="2025-11-25")


def test_multi_select_is_refused_on_2025_06_18_only() -> None:
    with pytest.raises(TypeError) as caught:
        form_schema(WithMultiSelect, revision="2025-06-18")
    assert str(caught.value) == (
        "Elicitation schema field 'colors' rendered as {'default': ['red'], 'items': "
        "{'$ref': '#/$defs/Color'}, 'maxItems': 2, 'minItems': 1, 'title': 'Colors', "
        "'type': 'array'}, which is not a valid PrimitiveSchemaDefinition "
        "(multi-select enums need revision 2025-11-25 or later)"
    )
    assert form_schema(WithMultiSelect)["properties"] == {
        "colors": {
            "type": "array",
            "title": "Colors",
            "items": {"type": "string", "enum": ["red", "green"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["red"],
        },
        "plans": {
            "type": "array",
            "title": "Plans",
            "items": {"anyOf": TITLED_PLAN},
            "default": [],
        },
    }


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_schema_is_valid_on_the_wire(revision: str) -> None:
    models: list[type[BaseModel]] = [Everything, AlternativeDate]
    if revision != "2025-06-18":
        models.append(WithMultiSelect)
    for _, annotation, spec, _ in FIELD_TABLE:
        candidate = model(annotation, spec)
        if revision == "2025-06-18" and "array" in json.dumps(candidate.model_json_schema()):
            continue  # multi-select: refused there, see test_multi_select_is_refused...
        models.append(candidate)
    for m in models:
        assert_wire_valid(form_schema(m, revision=revision), revision)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_the_wire_check_has_teeth(revision: str) -> None:
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}
    stray = {"type": "object", "properties": {"a": {"type": "string", "enumTitles": {}}}}
    assert list(_validator(revision, False).iter_errors(nested))
    assert list(_validator(revision, True).iter_errors(stray))
    if revision == "2025-06-18":  # no defaults on strings there
        leaked = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
        assert list(_validator(revision, True).iter_errors(leaked))


# Random flat models: every one renders wire-valid, with `required` = fields without defaults.
_KINDS: list[tuple[Any, Any, bool]] = [  # (annotation, a default or `...`, is multi-select)
    (str, ..., False),
    (str, "d", False),
    (str, Field(None, max_length=3), False),
    (datetime.date, datetime.date(2020, 2, 29), False),
    (datetime.datetime, ..., False),
    (int, Field(1, gt=0), False),
    (float, ..., False),
    (bool, True, False),
    (bool | None, None, False),
    (Color, Color.RED, False),
    (Plan, ..., False),
    (Literal["p", "q"], "q", False),
    (list[Color], ..., True),
    (set[Plan], set(), True),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(range(len(_KINDS))), max_size=8))
def test_random_flat_models_are_wire_valid(picks: list[int]) -> None:
    fields = {f"f{i}": (_KINDS[k][0], _KINDS[k][1]) for i, k in enumerate(picks)}
    random_model = create_model("Random", **fields)  # type: ignore[call-overload]
    without_default = [
        name
        for name, (_, spec) in fields.items()
        if spec is ... or (isinstance(spec, FieldInfo) and spec.is_required())
    ]
    has_multi = any(_KINDS[k][2] for k in picks)
    for revision in ALL_REVISIONS:
        if revision == "2025-06-18" and has_multi:
            with pytest.raises(TypeError, match="multi-select enums need revision"):
                form_schema(random_model, revision=revision)
            continue
        schema = form_schema(random_model, revision=revision)
        assert list(schema["properties"]) == list(fields)
        assert schema.get("required", []) == without_default
        assert_wire_valid(schema, revision)


# --------------------------------------------------------------------------- answers


def test_seed_answer_is_validated_into_the_model() -> None:
    answer = validate_form_answer(
        AlternativeDate, {"accept_alternative": True, "date": "2025-12-27"}
    )
    assert answer == AlternativeDate(accept_alternative=True, date="2025-12-27")


def test_answers_are_read_as_the_wire_sends_them() -> None:
    answer = validate_form_answer(
        Everything,
        {
            "name": "Ada",
            "birthday": "1815-12-10",  # dates travel as strings
            "ratio": 1,  # integers are fine for number fields
            "color": "red",
            "size": "l",
            "plan": "pro",
        },
    )
    assert answer.birthday == datetime.date(1815, 12, 10)
    assert answer.ratio == 1.0 and isinstance(answer.ratio, float)
    assert (answer.color, answer.size, answer.plan) == (Color.RED, "l", Plan.PRO)
    assert answer.age == 36 and answer.subscribe is True  # defaults fill the rest
    multi = validate_form_answer(WithMultiSelect, {"colors": ["green"], "plans": ["free", "pro"]})
    assert multi.colors == [Color.GREEN] and multi.plans == {Plan.FREE, Plan.PRO}


def test_missing_content_is_an_empty_form() -> None:
    assert validate_form_answer(WithMultiSelect, None) == WithMultiSelect()
    with pytest.raises(ValidationError, match="accept_alternative"):
        validate_form_answer(AlternativeDate, None)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        pytest.param({"date": "2025-12-27"}, "accept_alternative", id="missing required"),
        pytest.param({"accept_alternative": "yes"}, "accept_alternative", id="string for bool"),
        pytest.param({"accept_alternative": 1}, "accept_alternative", id="int for bool"),
        pytest.param({"accept_alternative": True, "date": 20251227}, "date", id="int for str"),
    ],
)
def test_bad_seed_answers_are_rejected(content: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_form_answer(AlternativeDate, content)
    assert [e["loc"] for e in caught.value.errors()] == [(field,)]


@pytest.mark.parametrize(
    ("content", "field"),
    [
        pytest.param({"name": ""}, "name", id="too short"),
        pytest.param({"name": "x" * 41}, "name", id="too long"),
        pytest.param({"name": "Ada", "age": 151}, "age", id="above maximum"),
        pytest.param({"name": "Ada", "age": -1}, "age", id="below minimum"),
        pytest.param({"name": "Ada", "age": "36"}, "age", id="numeric string"),
        pytest.param({"name": "Ada", "age": 36.5}, "age", id="fraction for integer"),
        pytest.param({"name": "Ada", "ratio": 1.5}, "ratio", id="float out of range"),
        pytest.param({"name": "Ada", "color": "blue"}, "color", id="bad enum value"),
        pytest.param({"name": "Ada", "size": "xl"}, "size", id="bad literal value"),
        pytest.param({"name": "Ada", "plan": "Free tier"}, "plan", id="title instead of value"),
        pytest.param({"name": "Ada", "birthday": "10/12/1815"}, "birthday", id="bad date"),
        pytest.param({"name": "Ada", "subscribe": "true"}, "subscribe", id="string for bool"),
    ],
)
def test_bad_answers_are_rejected(content: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_form_answer(Everything, content)
    assert {e["loc"][0] for e in caught.value.errors()} == {field}


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"colors": []}, id="below minItems"),
        pytest.param({"colors": ["red", "green", "red"]}, id="above maxItems"),
        pytest.param({"colors": ["blue"]}, id="bad option"),
        pytest.param({"colors": "red"}, id="string for list"),
        pytest.param({"plans": ["free", 3]}, id="non-string option"),
    ],
)
def test_bad_multi_select_answers_are_rejected(content: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        validate_form_answer(WithMultiSelect, content)


# --------------------------------------------------------------------------- cache


def test_schema_is_computed_once_per_model_and_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = model(str, "v")
    calls: list[str] = []
    original = fresh.model_json_schema

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append("call")
        return original(*args, **kwargs)

    monkeypatch.setattr(fresh, "model_json_schema", counting)
    first = form_schema(fresh)
    assert form_schema(fresh) == first
    assert form_schema(fresh, revision="2026-07-28") == first
    assert form_schema(fresh, revision="2026-07-28") == first
    assert len(calls) == 2  # one per revision


def test_cached_schema_cannot_be_corrupted_by_callers() -> None:
    fresh = model(Literal["a", "b"], "a")
    first = form_schema(fresh)
    first["properties"]["x"]["enum"].append("z")
    first["required"] = ["x"]
    assert form_schema(fresh) == {
        "type": "object",
        "properties": {"x": {"type": "string", "title": "X", "enum": ["a", "b"], "default": "a"}},
    }


def test_cache_does_not_keep_models_alive() -> None:
    temporary = model(int, 1)
    form_schema(temporary)
    ref = weakref.ref(temporary)
    del temporary
    gc.collect()
    assert ref() is None
