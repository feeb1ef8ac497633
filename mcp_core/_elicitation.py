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
import re
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
    "check_form_answer",
    "check_form_schema",
    "form_schema",
    "validate_form_answer",
]

# The whole module is pure and revision-parametrised, so the server engine can check a form
# before sending it and an answer before handing it on, without the application having to
# know which revision's form rules apply to the request.
M = TypeVar("M", bound=BaseModel)

#: Key to put in a field's `json_schema_extra` to give enum options display titles:
#: `Field(json_schema_extra={ENUM_TITLES: {"s": "Small", "l": "Large"}})`.
ENUM_TITLES: Final = "enumTitles"

#: Revisions that have form-mode elicitation. 2026-07-28 kept 2025-11-25's schema unchanged.
FORM_REVISIONS: Final = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})

# The one revision whose form vocabulary differs: 2025-11-25 added the titled and
# multi-select enum shapes (SEP-1330) and defaults on every primitive (SEP-1034), and
# 2026-07-28 kept that schema unchanged, so everything here is "2025-06-18, or the rest".
_LEGACY: Final = "2025-06-18"  # no defaults except on booleans, no multi-select, no oneOf titles
# The only formats `StringSchema` lists in any revision; a client draws a date picker or an
# email field from them, and an unknown format would leave it guessing.
_STRING_FORMATS: Final = ("date", "date-time", "email", "uri")
_DEFS_PREFIX: Final = "#/$defs/"
# Private key our generator adds to enum $defs; never leaves this module.
_MEMBER_TITLES: Final = "x-mcp-sansio-member-titles"
# No wire equivalent, safe to drop: constraints the model still checks on the answer, annotations.
_DROPPED: Final = frozenset(
    {"pattern", "multipleOf", "uniqueItems", "examples", "deprecated", "$comment"}
)
# What every primitive may carry, and per kind what else: the keywords of each
# `PrimitiveSchemaDefinition` shape (2025-11-25; 2025-06-18 narrows `default`).
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
# Rendering runs pydantic's schema generation, far slower than a copy, and a server
# asks with the same model again and again.
_CACHE: weakref.WeakKeyDictionary[type[BaseModel], dict[str, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


class _Refused(Exception):
    """A property has no PrimitiveSchemaDefinition form; `hint` says why when it isn't obvious.

    An exception rather than a return value because the refusal can come from deep inside a
    property's translation, and only `_build` knows the field's name to put in the
    TypeError.
    """

    def __init__(self, hint: str | None = None) -> None:
        """`hint` None: the rendering quoted in the TypeError says enough by itself."""
        super().__init__(hint)
        self.hint = hint


class _Generator(GenerateJsonSchema):
    """pydantic's generator, plus the Python-side titles of Enum members on enum `$defs`.

    JSON Schema has nowhere to keep them, and by the time the rendering is translated the
    Enum class is out of reach. Property renderings (quoted in errors) are unchanged.
    """

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        """pydantic's enum rendering, with the members' `title` attributes kept aside.

        Collected here because this is the last point where the Enum members are at hand;
        the titles ride under a private key until `_titles` reads them.
        """
        rendered = super().enum_schema(schema)
        titles = [_member_title(member) for member in schema["members"]]
        if any(title is not None for title in titles):
            rendered[_MEMBER_TITLES] = titles
        return rendered


def _member_title(member: Any) -> str | None:
    # `isinstance` skips str.title, the method every str-valued Enum member inherits.
    """A member's own `title` string, or None (the `str.title` method does not count)."""
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

    The copy is the price of the cache: a caller adding a `description` to what it got must
    not change the form every later elicitation sends.
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

    Going through JSON (`to_json`, then `model_validate_json`) rather than validating the
    mapping directly is what makes strict mode mean the wire's types: a Python datetime
    could not have come from the client, an ISO string did.
    """
    payload: Mapping[str, Any] = {} if content is None else content
    return model.model_validate_json(pydantic_core.to_json(payload), strict=True)


def _build(model: type[BaseModel], revision: str) -> dict[str, Any]:
    """The uncached rendering: pydantic's schema, then each property translated.

    A field pydantic renders without a title (its type is a `$ref`) gets the title
    pydantic would have given it, since a client labels a field by its title and
    would otherwise show the raw wire name.
    """
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
    # Required as pydantic decides it (no default), so the form and the model agree on
    # which answers are complete; an empty list is left out, as the schema allows.
    required = list(raw.get("required", []))
    if required:
        schema["required"] = required
    return schema


def _translate(rendered: Any, defs: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """One rendered property in the revision's restricted vocabulary, or `_Refused`.

    Unknown keywords are refused rather than dropped: a keyword the wire cannot carry
    either changes what the field accepts (and the model would then refuse answers
    the form allowed) or is in `_DROPPED`, whose loss the answer check makes up for.
    """
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
    """`X | None` -> `X`: the wire has no null, and leaving a field out already means "none".

    Refusing other unions matters for the answer check too: a field that accepted an `int |
    str` could be answered with either, and the form shows only one input.
    """
    branches = prop.get("anyOf")
    if branches is None:
        return prop
    # Exactly `X | None`: any other union (`int | str`) is a choice of types the
    # wire's flat fields cannot express, so it is refused, not narrowed.
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
    """Which primitive a property is: an enum is a string with `enum` or `const` (the
    wire has no numeric enums); `integer` and `number` share one translation.
    """
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
    """A string field; on 2025-06-18 its default is dropped (the revision has none).

    Dropping it there keeps the field: only the pre-fill is lost, and the model
    still supplies the default when the answer leaves the field out.
    """
    default = _default(prop, lambda v: isinstance(v, str))
    out = _labelled(prop, "string", None if legacy else default)
    for key in ("minLength", "maxLength"):
        if key in prop:
            out[key] = prop[key]
    if "format" in prop:
        out["format"] = prop["format"]
    return out


def _number(prop: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    """A number or integer field, exclusive bounds turned inclusive.

    Exclusive bounds are not on the wire. On integers `gt=0` is exactly `minimum: 1`;
    on floats no inclusive bound is equivalent, so those are refused rather than
    widened or narrowed silently.
    """
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
    """The string options of an enum (`enum`, or a single `const`), non-empty."""
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
    # All or none: a form mixing labelled and bare options would show values to the
    # user for some choices and words for others.
    members: Sequence[str | None] | None = options.get(_MEMBER_TITLES)
    if members is None:
        return None
    titles = [t for t in members if t is not None]
    if len(titles) != len(members):
        raise _Refused("some Enum members carry a title and some do not")
    return titles


def _single_select(prop: Mapping[str, Any], legacy: bool) -> dict[str, Any]:
    """A single choice: plain `enum`; titled as `oneOf` (2025-11-25+) or, on 2025-06-18,
    `enum` plus `enumNames`, the only titled form that revision's clients know.

    `enumNames` is the only titled form 2025-06-18's `EnumSchema` has (non-standard
    JSON Schema, kept later as the deprecated `LegacyTitledEnumSchema`), while `oneOf`
    with `const` and `title` is what 2025-11-25 standardised (SEP-1330); a client shown
    the form it does not read sees raw values instead of labels.
    """
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
    """A multiple choice (a list of an enum), 2025-11-25+ only.

    2025-06-18 has no array fields and nothing equivalent, so there it is refused,
    before anything is sent.

    `anyOf` (not `oneOf`) for titled items is the 2025-11-25 schema's choice for
    `TitledMultiSelectEnumSchema`: several options may match one answer list.
    """
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


# ------------------------------------------------------------- wire-form schemas, checked
#
# `form_schema` turns a model into the restricted vocabulary; the two functions below
# judge a `requestedSchema` already written in it (by hand, or kept from an earlier
# round) and an answer against it. The engine runs the first on every form it sends
# and the second on every answer it hands on, so a form the client cannot draw fails
# where it is written, and an answer that does not fit never looks like one.

# The published `ElicitRequest` schema gives `requestedSchema` only `type`, `properties`
# and `required` (and `$schema` from 2025-11-25); anything else a client could not draw.
_TOP_KEYS: Final = frozenset({"$schema", "type", "properties", "required"})
_TEXT_KEYS: Final = ("title", "description")
_OPTION_KEYS: Final = frozenset({"const", "title"})
# Shape checks only: they catch an answer that is plainly not an address or a URI,
# not one that merely does not exist, which no offline check could.
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+")
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
# RFC 3339 time of day; seconds and the offset optional, as pydantic reads a datetime.
_TIME: Final = re.compile(
    r"([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)?"
)


class _Unfit(Exception):
    """Internal: why a schema does not fit; the message names the place."""


def check_form_schema(schema: Any, *, revision: str = "2025-11-25") -> None:
    """Check a `requestedSchema` against the restricted schema of `revision`.

    Accepts exactly the flat forms the revision's `PrimitiveSchemaDefinition`
    describes, with no keyword beyond those it lists (the published schema lets
    unknown keywords through; a client could not draw them), plus the rules JSON
    Schema cannot state: `required` names existing fields, options are non-empty
    lists of strings, a default is one of the options, `enumNames` gives one
    title per option. On 2025-06-18 only booleans have defaults and there are no
    titled (`oneOf`) or multi-select fields. What `form_schema` renders passes.

    Raises:
        ValueError: the schema does not fit; the message names the field and why.
    """
    if revision not in FORM_REVISIONS:
        known = ", ".join(sorted(FORM_REVISIONS))
        raise ValueError(f"No form-mode elicitation in revision {revision!r}; known: {known}")
    try:
        _check_schema(schema, revision == _LEGACY)
    except _Unfit as unfit:
        raise ValueError(f"requestedSchema does not fit revision {revision}: {unfit}") from None


def _check_schema(schema: Any, legacy: bool) -> None:
    """The top level of a `requestedSchema`: an object of fields, and `required` naming them.

    `$schema` is 2025-11-25+ (the 2025-06-18 schema does not list it), so there it is
    refused like any other keyword the revision lacks.
    """
    if type(schema) is not dict:
        raise _Unfit("it must be an object")
    extra = schema.keys() - (_TOP_KEYS - {"$schema"} if legacy else _TOP_KEYS)
    if extra:
        raise _Unfit(f"unsupported keyword {sorted(extra)[0]!r} at the top level")
    if schema.get("type") != "object":
        raise _Unfit('"type" must be "object"')
    if "$schema" in schema and type(schema["$schema"]) is not str:
        raise _Unfit('"$schema" must be a string')
    properties = schema.get("properties")
    if type(properties) is not dict:
        raise _Unfit('"properties" must be an object of fields')
    for name, prop in properties.items():
        try:
            _check_property(prop, legacy)
        except _Unfit as unfit:
            raise _Unfit(f"field {name!r}: {unfit}") from None
    required = schema.get("required")
    if required is not None:
        if type(required) is not list or not all(type(r) is str for r in required):
            raise _Unfit('"required" must be a list of field names')
        for name in required:
            if name not in properties:
                raise _Unfit(f"required field {name!r} is not in properties")


def _check_property(prop: Any, legacy: bool) -> None:
    """One field against the revision's `PrimitiveSchemaDefinition` shapes.

    The shape is picked by `type` and then by `oneOf`/`enum`, as `types.py` tells
    the shapes apart, so the check and the parser agree on what a field is.

    Checking the form before sending it is the only way the server learns about a bad form:
    a client that cannot draw it can only decline or cancel (2025-06-18 "Elicitation"), and
    the user never sees why.
    """
    if type(prop) is not dict:
        raise _Unfit("a field must be an object")
    kind = prop.get("type")
    fits: Callable[[Any], bool]
    if kind == "string":
        if "oneOf" in prop:
            if legacy:
                raise _Unfit("titled options (oneOf) need revision 2025-11-25 or later")
            allowed = _LABELS | {"oneOf"}
            fits = _one_of(_titled_options(prop["oneOf"], "oneOf"))
        elif "enum" in prop:
            allowed = _LABELS | {"enum", "enumNames"}
            options = _plain_options(prop["enum"])
            names = prop.get("enumNames")
            if names is not None and (
                type(names) is not list
                or len(names) != len(options)
                or not all(type(n) is str for n in names)
            ):
                raise _Unfit('"enumNames" must give one title (a string) per option')
            fits = _one_of(options)
        else:
            allowed, fits = _LABELS | {"minLength", "maxLength", "format"}, _is_str
            _check_counts(prop, ("minLength", "maxLength"))
            if "format" in prop and prop["format"] not in _STRING_FORMATS:
                raise _Unfit(
                    f"format {prop['format']!r} is not one of {', '.join(_STRING_FORMATS)}"
                )
    # Numbers carry only inclusive bounds on the wire; exclusive ones are a JSON Schema
    # keyword `NumberSchema` does not list, so a hand-written form with them is refused here
    # rather than half-honoured by the client.
    elif kind in ("number", "integer"):
        allowed = _LABELS | {"minimum", "maximum"}
        for key in ("minimum", "maximum"):
            if key in prop and not _finite(prop[key]):
                raise _Unfit(f"{key!r} must be a number")
        fits = _is_int if kind == "integer" else _finite
    elif kind == "boolean":
        allowed, fits = _LABELS, _is_bool
    elif kind == "array":
        if legacy:
            raise _Unfit("multi-select fields need revision 2025-11-25 or later")
        allowed = _LABELS | {"items", "minItems", "maxItems"}
        fits = _all_of(_one_of(_item_options(prop.get("items"))))
        _check_counts(prop, ("minItems", "maxItems"))
    else:
        raise _Unfit(f"type {kind!r} is not a primitive (string, number, integer, boolean, array)")
    extra = prop.keys() - allowed
    if extra:
        raise _Unfit(f"unsupported keyword {sorted(extra)[0]!r}")
    for key in _TEXT_KEYS:
        if key in prop and type(prop[key]) is not str:
            raise _Unfit(f"{key!r} must be a string")
    if "default" in prop:
        if legacy and kind != "boolean":
            raise _Unfit("2025-06-18 allows defaults on booleans only")
        if not fits(prop["default"]):
            raise _Unfit(f"default {prop['default']!r} does not fit the field")


def _is_str(value: Any) -> bool:
    """Exactly a str: wire values are JSON, where only a string is a string."""
    return type(value) is str


def _is_bool(value: Any) -> bool:
    """Exactly a bool; JSON `1` is not `true`, though Python's `True == 1`."""
    return type(value) is bool


def _is_int(value: Any) -> bool:
    """Exactly an int; `type()` rather than isinstance, since a bool is an int."""
    return type(value) is int


def _finite(value: Any) -> bool:
    """A JSON number a form can hold: an int, or a float that is not inf or nan."""
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _one_of(options: list[str]) -> Callable[[Any], bool]:
    """A predicate: the value is one of `options` (a string, compared exactly)."""
    return lambda value: type(value) is str and value in options


def _all_of(fits: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A predicate: the value is a list whose every item passes `fits`."""
    return lambda value: type(value) is list and all(fits(item) for item in value)


def _check_counts(prop: Mapping[str, Any], keys: tuple[str, str]) -> None:
    """`minLength`-like keywords must be non-negative integers (JSON Schema's rule)."""
    for key in keys:
        if key in prop and not (type(prop[key]) is int and prop[key] >= 0):
            raise _Unfit(f"{key!r} must be a non-negative integer")


def _plain_options(values: Any) -> list[str]:
    """An `enum` list: non-empty strings only, since the wire's enums are strings."""
    if type(values) is not list or not values or not all(type(v) is str for v in values):
        raise _Unfit('"enum" must be a non-empty list of strings')
    return values


def _titled_options(values: Any, where: str) -> list[str]:
    """The `const`s of a `oneOf`/`anyOf` list whose items are exactly `{const, title}`.

    Nothing else is allowed in an option (a description, a nested schema): the
    client draws a label and sends the const, and nothing more is defined.
    """
    if (
        type(values) is not list
        or not values
        or not all(
            type(o) is dict
            and o.keys() == _OPTION_KEYS
            and type(o["const"]) is str
            and type(o["title"]) is str
            for o in values
        )
    ):
        raise _Unfit(f"{where!r} must be a non-empty list of {{const, title}} strings")
    return [o["const"] for o in values]


def _item_options(items: Any) -> list[str]:
    """The options of a multi-select's `items`: untitled (`enum`) or titled (`anyOf`)."""
    if type(items) is dict and items.keys() == {"type", "enum"} and items["type"] == "string":
        return _plain_options(items["enum"])
    if type(items) is dict and items.keys() == {"anyOf"}:
        return _titled_options(items["anyOf"], "items.anyOf")
    raise _Unfit('"items" must be {"type": "string", "enum": [...]} or {"anyOf": [...]}')


def check_form_answer(schema: Mapping[str, Any], content: Any) -> str | None:
    """Why the `content` of an accepted form answer does not fit `schema`, or None.

    `schema` is a `requestedSchema` that `check_form_schema` accepts (the one the
    question was asked with). The check is the wire contract, as strict as
    `validate_form_answer` is with a model: no unknown fields, every required one
    present, values of the field's JSON type (`3` is no boolean, `"3"` no number)
    within its bounds and options, `date` and `date-time` strings in ISO 8601
    (and real dates), `email` and `uri` strings shaped like one. Missing content
    counts as an empty form.

    The answer is the client's word, and the user's: a handler receiving it as valid would
    trust values the form never offered. The checks are offline and shape-only (an email is
    not verified to exist), which is what the client could have checked too.
    """
    if content is None:
        content = {}
    if not isinstance(content, Mapping):
        return "content must be an object"
    properties: Mapping[str, Any] = schema.get("properties") or {}
    # An unknown field is refused, not ignored: the client sent something the form did
    # not ask for, and passing it on would let it reach the handler unchecked.
    for name in content:
        if name not in properties:
            return f"unexpected field {name!r}"
    for name in schema.get("required") or ():
        if name not in content:
            return f"missing required field {name!r}"
    for name, value in content.items():
        problem = _answer_problem(properties[name], value)
        if problem is not None:
            return f"field {name!r}: {problem}"
    return None


def _answer_problem(prop: Mapping[str, Any], value: Any) -> str | None:
    """Why one value does not fit its field, or None.

    Strict JSON types, as the wire defines them: an integer is fine for a number
    field, but nothing is converted (a string of digits is not a number); bounds and
    option lists are the field's own, so an answer is judged by the form it answers.
    """
    kind = prop.get("type")
    if kind == "boolean":
        return None if type(value) is bool else "expected a boolean"
    # SPEC-NOTES (gaps): `ElicitResult.content` does not list floats although `NumberSchema`
    # allows `type: "number"`; a finite float is accepted for a number field, since a client
    # drawing a number field will send one.
    if kind in ("number", "integer"):
        if not (type(value) is int or (kind == "number" and _finite(value))):
            return f"expected {'an integer' if kind == 'integer' else 'a number'}"
        if "minimum" in prop and value < prop["minimum"]:
            return f"below the minimum {prop['minimum']}"
        if "maximum" in prop and value > prop["maximum"]:
            return f"above the maximum {prop['maximum']}"
        return None
    if kind == "array":
        items = prop["items"]
        options = items.get("enum") or [o["const"] for o in items.get("anyOf", ())]
        if not _all_of(_one_of(options))(value):
            return "expected a list of the offered options"
        if not prop.get("minItems", 0) <= len(value) <= prop.get("maxItems", len(value)):
            return "wrong number of choices"
        return None
    if type(value) is not str:
        return "expected a string"
    options = prop.get("enum") or [o["const"] for o in prop.get("oneOf", ())]
    if options:
        return None if value in options else "not one of the offered options"
    if not prop.get("minLength", 0) <= len(value) <= prop.get("maxLength", len(value)):
        return "wrong length"
    fmt = prop.get("format")
    if fmt is not None and not _FORMAT_CHECKS[fmt](value):
        return f"not a valid {fmt}"
    return None


def _is_date(value: str) -> bool:
    """An ISO 8601 calendar date that exists (pure arithmetic: no clock module here).

    Checked by hand rather than with `datetime.date`: the core imports no clock module, and
    the purity test would flag it.
    """
    match = _DATE.fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return 1 <= day <= days


def _is_date_time(value: str) -> bool:
    """An RFC 3339 date-time (`T`, `t` or a space between the parts, as RFC 3339 5.6
    allows), with a date that exists; the offset may be missing, as pydantic reads one.
    """
    day, separator, time_of_day = value[:10], value[10:11], value[11:]
    return (
        separator in ("T", "t", " ") and _is_date(day) and _TIME.fullmatch(time_of_day) is not None
    )


# Keyed by every format `_STRING_FORMATS` allows, so a schema that passed
# `check_form_schema` always finds its check here.
_FORMAT_CHECKS: Final[Mapping[str, Callable[[str], bool]]] = {
    "date": _is_date,
    "date-time": _is_date_time,
    "email": lambda value: _EMAIL.fullmatch(value) is not None,
    "uri": lambda value: _URI.fullmatch(value) is not None,
}
