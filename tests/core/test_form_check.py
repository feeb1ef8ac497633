"""`check_form_schema` and `check_form_answer`: a `requestedSchema` judged against its
revision's restricted schema on send, and an answer judged against the schema it
was asked with.

The official schemas are the yardstick: whatever `check_form_schema` accepts, the
revision's `requestedSchema` definition accepts too, "closed" (no keyword beyond
those it lists), and everything `form_schema` renders is accepted.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import mcp_core
from mcp_core import (
    ClientConfig,
    LocalProtocolError,
    RequestReceived,
    check_form_answer,
    check_form_schema,
    form_schema,
    validate_form_answer,
)
from mcp_core.testing import ConnectionPair

from .engine_support import legacy_server, out
from .test_elicitation_schema import (
    ALL_REVISIONS,
    FIELD_TABLE,
    AlternativeDate,
    Everything,
    WithMultiSelect,
    _validator,
    model,
)

# The property tests marked NO_COVER run without coverage tracing (pytest-cov's
# `no_cover`), as tests/fuzz's generated tests do: the tracer about doubled their CPU
# time (test_http_headers.py alone: 18 s of CPU with it, 10 s without), and the
# example tests beside them reach the same code. What each asserts is unchanged.
NO_COVER = pytest.mark.no_cover


def officially_valid(schema: Any, revision: str) -> bool:
    return not any(True for _ in _validator(revision, True).iter_errors(schema))


def form(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


# ------------------------------------------------------------------- schemas


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_rendered_form_passes(revision: str) -> None:
    models: list[type[BaseModel]] = [Everything, AlternativeDate]
    if revision != "2025-06-18":
        models.append(WithMultiSelect)
        models += [model(annotation, spec) for _, annotation, spec, _ in FIELD_TABLE]
    for m in models:
        check_form_schema(form_schema(m, revision=revision), revision=revision)


REFUSED: list[tuple[str, str, Any, str]] = [
    ("not an object", "2025-11-25", [], "must be an object"),
    ("no type", "2025-11-25", {"properties": {}}, '"type" must be "object"'),
    ("$schema type", "2025-11-25", {**form(), "$schema": 1}, '"$schema" must be a string'),
    ("field not an object", "2025-11-25", form(a="string"), "field 'a': a field must be an object"),
    ("no properties", "2025-11-25", {"type": "object"}, '"properties"'),
    ("top keyword", "2025-11-25", {**form(), "additionalProperties": False}, "additionalProperties"),
    ("$schema on 06-18", "2025-06-18", {**form(), "$schema": "x"}, "$schema"),
    ("nested", "2025-11-25", form(a={"type": "object", "properties": {}}), "field 'a': type 'object'"),
    ("unknown keyword", "2025-11-25", form(a={"type": "string", "pattern": "x"}), "'pattern'"),
    ("bad format", "2025-11-25", form(a={"type": "string", "format": "uuid"}), "format 'uuid'"),
    ("negative length", "2025-11-25", form(a={"type": "string", "minLength": -1}), "minLength"),
    ("bool bound", "2025-11-25", form(a={"type": "number", "minimum": True}), "minimum"),
    ("title type", "2025-11-25", form(a={"type": "boolean", "title": 3}), "'title'"),
    ("string default 06-18", "2025-06-18", form(a={"type": "string", "default": "x"}), "booleans only"),
    ("oneOf on 06-18", "2025-06-18", form(a={"type": "string", "oneOf": [{"const": "a", "title": "A"}]}), "oneOf"),
    ("array on 06-18", "2025-06-18", form(a={"type": "array", "items": {"type": "string", "enum": ["a"]}}), "multi-select"),
    ("empty enum", "2025-11-25", form(a={"type": "string", "enum": []}), "non-empty"),
    ("enumNames count", "2025-06-18", form(a={"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}), "enumNames"),
    ("default outside options", "2025-11-25", form(a={"type": "string", "enum": ["a"], "default": "b"}), "default 'b'"),
    ("integer default", "2025-11-25", form(a={"type": "integer", "default": 1.5}), "default 1.5"),
    ("option shape", "2025-11-25", form(a={"type": "string", "oneOf": [{"const": "a"}]}), "{const, title}"),
    ("items shape", "2025-11-25", form(a={"type": "array", "items": {"type": "string"}}), '"items"'),
    ("required unknown", "2025-11-25", {**form(a={"type": "boolean"}), "required": ["b"]}, "'b'"),
    ("required type", "2025-11-25", {**form(), "required": "a"}, '"required"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("revision", "schema", "fragment"), [pytest.param(r, s, f, id=i) for i, r, s, f in REFUSED]
)
def test_refusals_name_the_field_and_the_reason(revision: str, schema: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=f"revision {revision}") as caught:
        check_form_schema(schema, revision=revision)
    assert fragment in str(caught.value)


def test_unknown_revisions_are_refused() -> None:
    with pytest.raises(ValueError, match="No form-mode elicitation"):
        check_form_schema(form(), revision="2025-03-26")


# A small grammar of field schemas, right and wrong, for the differential test.
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["a", "b", "email", "date", "x"]),
    st.lists(st.sampled_from(["a", "b", 1]), max_size=3),
    st.just([{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]),
    st.just({"type": "string", "enum": ["a", "b"]}),
    st.just({"anyOf": [{"const": "a", "title": "A"}]}),
)
_KEYS = st.sampled_from(
    [
        "title", "description", "default", "minLength", "maxLength", "format", "minimum",
        "maximum", "enum", "enumNames", "oneOf", "items", "minItems", "maxItems", "pattern",
    ]
)  # fmt: skip
_FIELDS = st.builds(
    lambda kind, extra: {"type": kind, **{k: v for k, v in extra.items() if v is not None}},
    st.sampled_from(["string", "number", "integer", "boolean", "array", "object"]),
    st.dictionaries(_KEYS, _VALUES, max_size=3),
)


@NO_COVER
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), _FIELDS, max_size=3), st.data())
def test_whatever_is_accepted_the_official_schema_accepts(
    properties: dict[str, Any], data: st.DataObject
) -> None:
    revision = data.draw(st.sampled_from(ALL_REVISIONS))
    schema = form(**properties)
    try:
        check_form_schema(schema, revision=revision)
    except ValueError:
        return
    assert officially_valid(schema, revision), (revision, schema)


# ------------------------------------------------------------------- answers


class Booking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    party: int = Field(ge=1, le=8)
    day: datetime.date
    size: Literal["s", "m"] = "m"
    vegan: bool = False


BOOKING = form_schema(Booking, revision="2025-11-25")

ANSWERS: list[tuple[Any, str | None]] = [
    ({"party": 2, "day": "2026-02-28"}, None),
    ({"party": 2, "day": "2024-02-29", "size": "s", "vegan": True}, None),
    (None, "missing required field 'party'"),
    ({"day": "2026-01-01"}, "missing required field 'party'"),
    ({"party": 2, "day": "2026-01-01", "dessert": True}, "unexpected field 'dessert'"),
    ({"party": "2", "day": "2026-01-01"}, "field 'party': expected an integer"),
    ({"party": 2.0, "day": "2026-01-01"}, "field 'party': expected an integer"),
    ({"party": True, "day": "2026-01-01"}, "field 'party': expected an integer"),
    ({"party": 9, "day": "2026-01-01"}, "field 'party': above the maximum 8"),
    ({"party": 0, "day": "2026-01-01"}, "field 'party': below the minimum 1"),
    ({"party": 2, "day": "2026-02-29"}, "field 'day': not a valid date"),
    ({"party": 2, "day": "tomorrow"}, "field 'day': not a valid date"),
    ({"party": 2, "day": "2026-01-01", "size": "xl"}, "field 'size': not one of the offered options"),
    ({"party": 2, "day": "2026-01-01", "vegan": "yes"}, "field 'vegan': expected a boolean"),
    ([1, 2], "content must be an object"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "problem"), ANSWERS)
def test_answers_are_judged_by_the_schema_they_answer(content: Any, problem: str | None) -> None:
    assert check_form_answer(BOOKING, content) == problem


@pytest.mark.parametrize(("content", "problem"), [a for a in ANSWERS if a[0] != [1, 2]])
def test_the_schema_check_agrees_with_the_model(content: Any, problem: str | None) -> None:
    """Judged by its schema or by its model, an answer gets the same verdict."""
    try:
        validate_form_answer(Booking, content)
    except ValidationError:
        assert problem is not None
    else:
        assert problem is None


FORMATS: list[tuple[str, str, bool]] = [
    ("date-time", "2026-07-28T10:00:00Z", True),
    ("date-time", "2026-07-28t10:00:00.25+02:00", True),
    ("date-time", "2026-07-28 10:00", True),
    ("date-time", "2026-07-28T25:00", False),
    ("date-time", "2026-13-28T10:00", False),
    ("email", "ada@example.com", True),
    ("email", "ada at example", False),
    ("uri", "https://example.com/pay?x=1", True),
    ("uri", "not a uri", False),
    ("date", "1900-02-29", False),
    ("date", "2000-02-29", True),
]


@pytest.mark.parametrize(("fmt", "value", "fits"), FORMATS)
def test_string_formats(fmt: str, value: str, fits: bool) -> None:
    schema = form(a={"type": "string", "format": fmt})
    assert (check_form_answer(schema, {"a": value}) is None) is fits


def test_lengths_numbers_and_multi_select() -> None:
    schema = form(
        name={"type": "string", "minLength": 2, "maxLength": 3},
        ratio={"type": "number", "maximum": 1},
        picks={"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "maxItems": 1},
        tags={"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1},
        titled={"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
    )
    assert check_form_answer(schema, {"name": "abc", "ratio": 0.5, "picks": ["a"]}) is None
    assert check_form_answer(schema, {"name": "a"}) == "field 'name': wrong length"
    assert check_form_answer(schema, {"ratio": 1.5}) == "field 'ratio': above the maximum 1"
    assert check_form_answer(schema, {"ratio": float("nan")}) == "field 'ratio': expected a number"
    assert (
        check_form_answer(schema, {"picks": ["a", "a"]}) == "field 'picks': wrong number of choices"
    )
    assert check_form_answer(schema, {"tags": []}) == "field 'tags': wrong number of choices"
    assert check_form_answer(schema, {"tags": ["z"]}) == (
        "field 'tags': expected a list of the offered options"
    )
    assert check_form_answer(schema, {"titled": "b"}) == (
        "field 'titled': not one of the offered options"
    )
    assert check_form_answer(schema, {"titled": 1}) == "field 'titled': expected a string"


# ------------------------------------------------------------ checked on send


def test_a_form_the_client_cannot_draw_is_refused_before_it_is_sent() -> None:
    conn = legacy_server("2025-06-18", client_caps={"elicitation": {}})
    nested = form(address={"type": "object", "properties": {}})
    with pytest.raises(LocalProtocolError, match="field 'address'"):
        conn.send_request("elicitation/create", {"message": "Where?", "requestedSchema": nested})
    with pytest.raises(LocalProtocolError, match="booleans only"):
        conn.send_request(
            "elicitation/create",
            {"message": "?", "requestedSchema": form(a={"type": "string", "default": "x"})},
        )
    assert out(conn) == [] and conn.requests_in_flight == (0, 0)
    # What form_schema renders for this revision goes out.
    rendered = form_schema(AlternativeDate, revision="2025-06-18")
    conn.send_request("elicitation/create", {"message": "?", "requestedSchema": rendered})
    assert out(conn)[0]["params"]["requestedSchema"] == rendered


def test_a_2026_input_request_is_checked_too() -> None:
    pair = ConnectionPair(
        mcp_core.testing.default_server_config(),
        ClientConfig(mode="2026-07-28", capabilities={"elicitation": {}}),
    )
    pair.connect()
    pair.client.send_request("tools/call", {"name": "t"})
    _, server_events = pair.pump()
    call = next(e for e in server_events if isinstance(e, RequestReceived))
    bad = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}
    with pytest.raises(LocalProtocolError, match="requestedSchema does not fit"):
        pair.server.send_input_required(call.request_id, {"q": bad}, "s")
    assert pair.server.data_to_send() == b""
    good = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": BOOKING}}
    assert pair.server.send_input_required(call.request_id, {"q": good}, "s")


def test_the_helpers_are_public() -> None:
    assert mcp_core.form_schema is form_schema
    assert {"form_schema", "check_form_schema", "check_form_answer"} <= set(mcp_core.__all__)
    assert json.loads(json.dumps(mcp_core.FORM_REVISIONS and sorted(mcp_core.FORM_REVISIONS)))
    with pytest.raises(AttributeError):
        _ = mcp_core.no_such_name  # type: ignore[attr-defined]
