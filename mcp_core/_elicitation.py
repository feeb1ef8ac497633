"""Form-mode elicitation: a pydantic model as a `requestedSchema`, and the answer back as a model.

The wire does not take arbitrary JSON Schema: `requestedSchema` is a flat object whose properties
must each be a `PrimitiveSchemaDefinition` (string, number, boolean or one of the enum shapes),
and what counts as one differs per revision. So pydantic's own rendering is the starting point
(it already knows aliases, constraints, formats and how to serialise defaults) and every property
is *translated* into the restricted vocabulary, or refused with a `TypeError` before anything is
sent. Refusing early is the point: a form the client cannot draw fails far from its cause.

Choices worth knowing (see also `form_schema`):

- String formats: only `email`, `uri`, `date` and `date-time` exist on the wire. Any other format
  pydantic emits (`uuid`, `time`, `password`, ...) is refused rather than dropped, because it
  changes what the field *is*; a `SecretStr` in particular must never be asked for in a form.
- Constraints the wire cannot carry but the model still enforces on the answer (`pattern`,
  `multipleOf`, `uniqueItems`) are dropped: the form is a hint, `validate_form_answer` is the check.
- Exclusive bounds (`gt`/`lt`) become inclusive ones on integers (`gt=0` -> `minimum: 1`) and are
  refused on floats, where no inclusive bound means the same thing.
- Enum option titles come from either `Field(json_schema_extra={ENUM_TITLES: {value: title}})`
  or Enum members carrying a `str` attribute `title`. The field-level mapping wins.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, Final, TypeVar

import pydantic_core
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

__all__ = [
    "ENUM_TITLES",
    "FORM_REVISIONS",
    "form_schema",
    "validate_form_answer",
]

M = TypeVar("M", bound=BaseModel)

#: Key to put in a field's `json_schema_extra` to give enum options display titles:
#: `Field(json_schema_extra={ENUM_TITLES: {"s": "Small", "l": "Large"}})`.
ENUM_TITLES: Final = "enumTitles"

#: Revisions that have form-mode elicitation. 2026-07-28 kept 2025-11-25's schema unchanged.
FORM_REVISIONS: Final = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})

_LEGACY: Final = "2025-06-18"  # no defaults except on booleans, no multi-select, no oneOf titles
_STRING_FORMATS: Final = ("date", "date-time", "email", "uri")
_DEFS_PREFIX: Final = "#/$defs/"
# Private key our generator adds to enum $defs; never leaves this module.
_MEMBER_TITLES: Final = "x-mcp-sansio-member-titles"
# No wire equivalent, safe to drop: constraints the model still checks on the answer, annotations.
_DROPPED: Final = frozenset(
    {"pattern", "multipleOf", "uniqueItems", "examples", "deprecated", "$comment"}
)
_LABELS: Final = frozenset({"type", "title", "description", "default"})
_ALLOWED: Final[Mapping[str, frozenset[str]]] = {
    "string": _LABELS | {"minLength", "maxLength", "format"},
    "number": _LABELS | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "boolean": _LABELS,
    "enum": _LABELS | {"enum", "const", ENUM_TITLES, _MEMBER_TITLES},
    "array": _LABELS | {"items", "minItems", "maxItems", ENUM_TITLES},
}
# Keywords that make a property a container or a union: refused without a hint.
_STRUCTURAL: Final = frozenset(
    {
        "$ref", "additionalProperties", "allOf", "anyOf", "contains", "discriminator", "else",
        "if", "items", "not", "oneOf", "patternProperties", "prefixItems", "properties",
        "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
    }
)  # fmt: skip
_ITEM_KEYS: Final = frozenset({"type", "title", "description", "enum", "const", _MEMBER_TITLES})

# Keyed weakly on the class so dynamically created models can still be collected.
_CACHE: weakref.WeakKeyDictionary[type[BaseModel], dict[str, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


class _Refused(Exception):
    """A property has no PrimitiveSchemaDefinition form; `hint` says why when it isn't obvious."""

    def __init__(self, hint: str | None = None) -> None:
        super().__init__(hint)
        self.hint = hint


class _Generator(GenerateJsonSchema):
    """pydantic's generator, plus the Python-side titles of Enum members on enum `$defs`.

    JSON Schema has nowhere to keep them, and by the time the rendering is translated the
    Enum class is out of reach. Property renderings (quoted in errors) are unchanged.
    """

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        rendered = super().enum_schema(schema)
        titles = [_member_title(member) for member in schema["members"]]
        if any(title is not None for title in titles):
            rendered[_MEMBER_TITLES] = titles
        return rendered


def _member_title(member: Any) -> str | None:
    # `isinstance` skips str.title, the method every str-valued Enum member inherits.
    title = getattr(member, "title", None)
    return title if isinstance(title, str) and not isinstance(title, Enum) else None


def form_schema(model: type[BaseModel], *, revision: str = "2025-11-25") -> dict[str, Any]:
    """Render `model` as the `requestedSchema` of a form-mode elicitation for `revision`.

    Properties use each field's wire name (its alias). A field with a default is optional and,
    where the revision allows defaults, pre-filled; `Optional[X] = None` renders as `X`. On
    2025-06-18 defaults survive only on booleans, titled enums use `enumNames`, and multi-select
    fields are refused.

    Results are cached per (model, revision): a model class is treated as immutable once it has
    been used here. Each call returns a fresh copy, so callers may modify what they get.

    Raises:
        ValueError: `revision` has no form-mode elicitation.
        TypeError: a field is not a flat primitive the revision can express.
    """
    if revision not in FORM_REVISIONS:
        known = ", ".join(sorted(FORM_REVISIONS))
        raise ValueError(f"No form-mode elicitation in revision {revision!r}; known: {known}")
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"Elicitation schema must be a pydantic model class, got {model!r}")
    per_model = _CACHE.get(model)
    if per_model is None:
        per_model = _CACHE.setdefault(model, {})
    schema = per_model.get(revision)
    if schema is None:
        schema = per_model[revision] = _build(model, revision)
    fresh: dict[str, Any] = _copy_json(schema)
    return fresh


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars): `copy.deepcopy` without
    the memo and dispatch it pays for arbitrary objects, on every elicitation."""
    if type(value) is dict:
        return {key: _copy_json(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy_json(item) for item in value]
    return value


def validate_form_answer(model: type[M], content: Mapping[str, Any] | None) -> M:
    """Validate the `content` of an accepted form elicitation as an instance of `model`.

    The check is pydantic's strict mode on JSON input, which is exactly the wire contract:
    integers pass for float fields and ISO strings for dates, but `"3"` is not an integer and
    `"yes"` is not a boolean. Missing content counts as an empty form, so it passes only when
    every field has a default.

    Raises:
        pydantic.ValidationError: the answer does not fit the model.
    """
    payload: Mapping[str, Any] = {} if content is None else content
    return model.model_validate_json(pydantic_core.to_json(payload), strict=True)


def _build(model: type[BaseModel], revision: str) -> dict[str, Any]:
    raw = model.model_json_schema(mode="validation", schema_generator=_Generator)
    properties = raw.get("properties")
    if raw.get("type") != "object" or not isinstance(properties, dict):
        raise TypeError(
            f"Elicitation schema {model.__qualname__} rendered as {raw!r}, "
            "which is not a flat object of fields"
        )
    defs: Mapping[str, Any] = raw.get("$defs", {})
    out: dict[str, Any] = {}
    for name, rendered in properties.items():
        try:
            prop = _translate(rendered, defs, revision)
        except _Refused as refused:
            hint = f" ({refused.hint})" if refused.hint else ""
            raise TypeError(
                f"Elicitation schema field {name!r} rendered as {rendered!r}, "
                f"which is not a valid PrimitiveSchemaDefinition{hint}"
            ) from None
        if "title" not in prop:  # pydantic leaves the title off fields whose type is a $ref
            prop = {"type": prop["type"], "title": _Generator().get_title_from_name(name), **prop}
        out[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": out}
    required = list(raw.get("required", []))
    if required:
        schema["required"] = required
    return schema


def _translate(rendered: Any, defs: Mapping[str, Any], revision: str) -> dict[str, Any]:
    if not isinstance(rendered, dict):
        raise _Refused
    prop = _resolve(_drop_null(rendered), defs)
    kind = _kind(prop)
    fmt = prop.get("format")
    if kind == "string" and fmt is not None and fmt not in _STRING_FORMATS:
        # Checked before unknown keywords: SecretStr also brings `writeOnly`, but this says more.
        hint = f"format {fmt!r} is not one of {', '.join(_STRING_FORMATS)}"
        if fmt == "password":
            hint += "; secrets must be asked for in URL mode, never in a form"
        raise _Refused(hint)
    unknown = prop.keys() - _ALLOWED[kind] - _DROPPED
    if unknown:
        if unknown & _STRUCTURAL:
            raise _Refused
        raise _Refused(f"unsupported keyword {sorted(unknown)[0]!r}")
    legacy = revision == _LEGACY
    if kind == "string":
        return _string(prop, legacy)
    if kind == "number":
        return _number(prop, legacy)
    if kind == "boolean":
        return _labelled(prop, "boolean", _default(prop, lambda v: isinstance(v, bool)))
    if kind == "enum":
        return _single_select(prop, legacy)
    return _multi_select(prop, defs, legacy)


def _drop_null(prop: dict[str, Any]) -> dict[str, Any]:
    """`X | None` -> `X`: the wire has no null, and leaving a field out already means "none"."""
    branches = prop.get("anyOf")
    if branches is None:
        return prop
    kept = [b for b in branches if b != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(branches) or not isinstance(kept[0], dict):
        raise _Refused
    outer = {k: v for k, v in prop.items() if k != "anyOf"}
    return {**kept[0], **outer}


def _resolve(prop: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """Inline a `$ref` to an enum; any other reference is a nested model and is refused.

    Only the options are taken from the definition: its title is the Enum's class name and its
    description the class docstring, neither of which labels *this* question.
    """
    ref = prop.get("$ref")
    if ref is None:
        return prop
    target = defs.get(ref[len(_DEFS_PREFIX) :]) if ref.startswith(_DEFS_PREFIX) else None
    if not isinstance(target, dict) or "enum" not in target:
        raise _Refused
    inlined = {k: target[k] for k in ("type", "enum", _MEMBER_TITLES) if k in target}
    return {**inlined, **{k: v for k, v in prop.items() if k != "$ref"}}


def _kind(prop: Mapping[str, Any]) -> str:
    type_ = prop.get("type")
    if type_ == "array":
        return "array"
    if "enum" in prop or "const" in prop:
        if type_ != "string":
            raise _Refused
        return "enum"
    if type_ in ("integer", "number"):
        return "number"
    if type_ in ("string", "boolean"):
        return str(type_)
    raise _Refused


def _labelled(prop: Mapping[str, Any], type_: str, default: Any = None) -> dict[str, Any]:
    """The keys every primitive shares, in a stable order; `default` None means none."""
    out: dict[str, Any] = {"type": type_}
    for key in ("title", "description"):
        if key in prop:
            out[key] = prop[key]
    if default is not None:
        out["default"] = default
    return out


def _default(prop: Mapping[str, Any], fits: Callable[[Any], bool]) -> Any:
    """The rendered default if it is one the wire can carry, else None.

    A default of None (`Optional[X] = None`, or `X = None`) just means "optional"; any other
    default that does not fit the property's type would make the schema invalid.
    """
    value = prop.get("default")
    if value is None:
        return None
    if not fits(value):
        raise _Refused(f"default {value!r} does not fit the field")
    return value


def _string(prop: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    default = _default(prop, lambda v: isinstance(v, str))
    out = _labelled(prop, "string", None if legacy else default)
    for key in ("minLength", "maxLength"):
        if key in prop:
            out[key] = prop[key]
    if "format" in prop:
        out["format"] = prop["format"]
    return out


def _number(prop: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    integer = prop["type"] == "integer"
    low, high = prop.get("minimum"), prop.get("maximum")
    x_low, x_high = prop.get("exclusiveMinimum"), prop.get("exclusiveMaximum")
    if (x_low is not None or x_high is not None) and not integer:
        raise _Refused("exclusive bounds (gt/lt) are only translated for integers; use ge/le")
    if x_low is not None:
        bound = math.floor(x_low) + 1
        low = bound if low is None else max(low, bound)
    if x_high is not None:
        bound = math.ceil(x_high) - 1
        high = bound if high is None else min(high, bound)
    default = _default(prop, lambda v: isinstance(v, int | float) and not isinstance(v, bool))
    out = _labelled(prop, prop["type"], None if legacy else default)
    if low is not None:
        out["minimum"] = low
    if high is not None:
        out["maximum"] = high
    return out


def _options(prop: Mapping[str, Any]) -> list[str]:
    values = prop["enum"] if "enum" in prop else [prop["const"]] if "const" in prop else None
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise _Refused
    return list(values)


def _titles(
    field: Mapping[str, Any], options: Mapping[str, Any], values: list[str]
) -> list[str] | None:
    """Option titles aligned with `values`, or None when the options are untitled."""
    declared = field.get(ENUM_TITLES)
    if declared is not None:
        if (
            not isinstance(declared, Mapping)
            or set(declared) != set(values)
            or not all(isinstance(t, str) for t in declared.values())
        ):
            raise _Refused(f"{ENUM_TITLES} must map every option, and only those, to a str")
        return [str(declared[v]) for v in values]
    members: Sequence[str | None] | None = options.get(_MEMBER_TITLES)
    if members is None:
        return None
    titles = [t for t in members if t is not None]
    if len(titles) != len(members):
        raise _Refused("some Enum members carry a title and some do not")
    return titles


def _single_select(prop: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    values = _options(prop)
    titles = _titles(prop, prop, values)
    default = _default(prop, lambda v: v in values)
    out = _labelled(prop, "string", None if legacy else default)
    if titles is None:
        out["enum"] = values
    elif legacy:
        out["enum"] = values
        out["enumNames"] = titles
    else:
        out["oneOf"] = [{"const": v, "title": t} for v, t in zip(values, titles, strict=True)]
    return out


def _multi_select(prop: Mapping[str, Any], defs: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    raw_items = prop.get("items")
    if not isinstance(raw_items, dict):
        raise _Refused
    items = _resolve(raw_items, defs)
    if items.keys() - _ITEM_KEYS or items.get("type") != "string":
        raise _Refused
    values = _options(items)
    titles = _titles(prop, items, values)
    default = _default(prop, lambda v: isinstance(v, list) and all(x in values for x in v))
    if legacy:
        raise _Refused("multi-select enums need revision 2025-11-25 or later")
    out = _labelled(prop, "array")
    if titles is None:
        out["items"] = {"type": "string", "enum": values}
    else:
        pairs = zip(values, titles, strict=True)
        out["items"] = {"anyOf": [{"const": v, "title": t} for v, t in pairs]}
    for key in ("minItems", "maxItems"):
        if key in prop:
            out[key] = prop[key]
    if default is not None:
        out["default"] = default
    return out
