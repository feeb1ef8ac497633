"""Pure checks over an HTTP request head: mirrored MCP headers and DNS-rebinding protection.

Streamable HTTP 2026-07-28 (SEP-2243) makes a client copy routing facts from the JSON-RPC
body into headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) so a load
balancer can route on them; the server then rejects any disagreement, because a proxy that
routes on the header and a server that executes the body must never see different requests.
The body is always the source of truth.

Everything here is a function of its arguments: adapters hand in header values (already
decoded from bytes, e.g. as Latin-1) and the parsed body, and get back headers to send, a
status code, or a `RemoteProtocolError` to answer with.
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, NamedTuple, TypeVar, cast

from mcp_core._errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LocalProtocolError,
    RemoteProtocolError,
)
from mcp_core._http import HeaderList, slot_setters

__all__ = [
    "MCP_METHOD_HEADER",
    "MCP_NAME_HEADER",
    "MCP_PARAM_HEADER_PREFIX",
    "MCP_PROTOCOL_VERSION_HEADER",
    "MAX_SAFE_INTEGER",
    "NAME_BEARING_METHODS",
    "PROTOCOL_VERSION_META_KEY",
    "X_MCP_HEADER",
    "ClientView",
    "HeaderParam",
    "HostPolicy",
    "InvalidToolHeaderAnnotation",
    "TrustedProxies",
    "check_mirrored_headers",
    "decode_header_value",
    "encode_header_value",
    "filter_tools_with_valid_headers",
    "mirrored_request_headers",
    "x_mcp_header_params",
]

# Spelled as the spec spells them; HTTP field names are case-insensitive (RFC 9110
# section 5.1), so every comparison here lower-cases, and these are only what we send.
MCP_PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
MCP_METHOD_HEADER: Final = "Mcp-Method"
MCP_NAME_HEADER: Final = "Mcp-Name"
MCP_PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
X_MCP_HEADER: Final = "x-mcp-header"
PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Largest integer a JavaScript peer can hold exactly; larger ones may not be mirrored."""

_NAME_KEYS: Final[dict[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # the tasks extension (SEP-2663): routes a poll to the replica holding the task
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
# (The two mirrored-header functions read `_NAME_KEYS` itself, once per request: a
# read-only proxy's `get` is not one the interpreter specialises, about 700
# instructions against 250. Nothing else holds the dict, so the proxy stays exact.)
NAME_BEARING_METHODS: Final[Mapping[str, str]] = MappingProxyType(_NAME_KEYS)
"""Method -> the params key that `Mcp-Name` mirrors."""

# The 2026-07-28 escape for values a header cannot carry as they are. It borrows the
# look of an RFC 2047 encoded word so that no plain value a client would send has it
# by accident; a plain value that does is wrapped too, so decoding is unambiguous.
_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="


# Visible ASCII and space: what every HTTP stack passes through unchanged. Other
# octets (obs-text, RFC 9110 section 5.5) are decoded differently by different
# stacks, which is the very disagreement mirroring exists to rule out.
# (Two string methods rather than the expression `[\x20-\x7e]*`, at under half its
# cost: an ASCII character is printable exactly when it is one of 0x20-0x7E. The checks
# run on every 2026-07-28 POST spell this out inline.)
def _field_text(value: str) -> bool:
    """Whether `value` is all visible ASCII and space (or empty)."""
    return value.isascii() and value.isprintable()


# RFC 9110 section 5.6.2 tchar; spelled out so Unicode letters never count as ALPHA/DIGIT.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# SPEC-NOTES 4.3: servers compare integers numerically, so `042` and `42.0` match 42; no
# exponent form is accepted, since `4.2e1` is spelled differently by every language.
_DECIMAL = re.compile(r"(-?[0-9]+)(?:\.([0-9]+))?")
_MAX_NUMERIC_HEADER = 64  # JS-safe integers need 17 characters; the cap keeps int() cheap.
# The three types the spec allows `x-mcp-header` on: scalars with one spelling each
# (a float has many, and no exact comparison across languages).
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})


# --------------------------------------------------------------------------------------------
# Value encoding
# --------------------------------------------------------------------------------------------


def _is_plain(value: str) -> bool:
    """True when `value` survives an HTTP field unchanged and cannot be read as a sentinel.

    Values shaped like a sentinel are wrapped even when plain, so that a decoder never has
    to guess whether `=?base64?...?=` was meant literally.
    """
    return (
        value != ""
        and _field_text(value)
        and value[0] != " "
        and value[-1] != " "
        and not (value.startswith("=?") and value.endswith("?="))
    )


def encode_header_value(value: str | int | bool) -> str:
    """Render a value for `Mcp-Name` / `Mcp-Param-*` the way the 2026-07-28 spec requires.

    Integers go out in decimal and booleans as `true`/`false`. A string goes out as-is only
    when it is non-empty visible ASCII (0x20-0x7E) with no leading or trailing space and does
    not have the `=?...?=` shape; anything else becomes `=?base64?<base64 of UTF-8>?=`.
    Empty strings are wrapped too, since some HTTP stacks drop empty fields, which would turn
    a present argument into a missing header.

    Raises `LocalProtocolError` for integers beyond +-(2**53-1) (the spec requires JS-safe
    integers) and for strings that are not valid Unicode (lone surrogates), which no header
    can carry.

    The rule is the same for `Mcp-Name`, so a tool or resource name with non-ASCII letters
    still routes: a proxy compares the encoded form, the server decodes it.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise LocalProtocolError(
                "integer header values must lie within +-(2**53-1)", code=INVALID_PARAMS
            )
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot encode {type(value).__name__} as a header value")
    if _is_plain(value):
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise LocalProtocolError(
            "string is not valid Unicode and cannot be mirrored into a header",
            code=INVALID_PARAMS,
        ) from None
    return f"{_SENTINEL_PREFIX}{base64.b64encode(raw).decode('ascii')}{_SENTINEL_SUFFIX}"


def decode_header_value(raw: str) -> str:
    """Reverse `encode_header_value`; raise `RemoteProtocolError` (-32020, 400) if malformed.

    A value is a sentinel iff it starts with the case-sensitive `=?base64?` and ends with
    `?=`; its payload must be canonical, padded, standard base64 of valid UTF-8 (anything
    looser could decode to different strings in different implementations). Any value must
    be visible ASCII and space: other octets mean the sender skipped the encoding.
    """
    try:
        return _decode(raw)
    except ValueError as exc:
        raise _mismatch_error("header value", str(exc)) from None


def _decode(raw: str) -> str:
    """`decode_header_value` with a plain ValueError naming the defect.

    Canonical base64 only (the re-encoding must give back the payload): lenient decoders
    accept different spellings of one value, and a proxy and the server decoding one header
    differently is exactly the disagreement mirroring exists to prevent.
    """
    if not _field_text(raw):
        raise ValueError("contains characters outside visible ASCII")
    if not (
        len(raw) >= len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
        and raw.startswith(_SENTINEL_PREFIX)
        and raw.endswith(_SENTINEL_SUFFIX)
    ):
        return raw
    payload = raw[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise ValueError("carries invalid base64") from None
    if base64.b64encode(data).decode("ascii") != payload:
        raise ValueError("carries non-canonical base64")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("carries base64 of invalid UTF-8") from None


def _mismatch_error(header: str, why: str) -> RemoteProtocolError:
    """-32020 HeaderMismatch with HTTP 400 (2026-07-28), naming the header in `data` so
    a client can tell which of its mirrors the server disagreed with."""
    return RemoteProtocolError(
        f"{header} {why}", code=HEADER_MISMATCH, http_status=400, data={"header": header}
    )


# --------------------------------------------------------------------------------------------
# x-mcp-header annotations
# --------------------------------------------------------------------------------------------


class InvalidToolHeaderAnnotation(ValueError):
    """A tool's `x-mcp-header` annotation breaks the spec's rules; clients must drop the tool.

    `location` is a JSON pointer into the input schema naming the offending position.

    A ValueError subclass, since it is raised on a value (a schema) that is wrong; a server
    serving such a tool fails at startup (`tool_header_params_from`).
    """

    def __init__(self, message: str, location: str) -> None:
        """The message names the place, so the warning a client logs is actionable."""
        super().__init__(f"{message} (at {location or '/'})")
        self.location = location


class HeaderParam(NamedTuple):
    """Where an `Mcp-Param-*` header's value lives in `tools/call` arguments, and its type."""

    path: tuple[str, ...]
    """Chain of `properties` keys from the schema root; top-level properties have length 1."""
    json_type: str
    """`string`, `integer` or `boolean`: decides how the header is compared."""


# JSON Schema keywords whose values are subschemas (2020-12 plus draft-7 spellings). Only
# `properties` keeps the pure chain; everything else leads off it. Instance-data keywords
# (`const`, `enum`, `default`, `examples`) are not schemas, so annotations there are inert.
_SUBSCHEMA_ONE: Final = frozenset(
    {
        "items",  # a schema (2020-12) or a list of schemas (draft-7 tuples)
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SUBSCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAP: Final = frozenset(
    {"$defs", "definitions", "patternProperties", "dependentSchemas", "dependencies"}
)


def _pointer_part(key: str) -> str:
    """A key escaped as one JSON Pointer segment (RFC 6901: `~` first, then `/`).

    Locations are JSON Pointers so a warning names the place in the schema the way every
    JSON Schema tool does.
    """
    return key.replace("~", "~0").replace("/", "~1")


def _schema_positions(
    root: Any,
) -> Iterator[tuple[tuple[str, ...] | None, str, Mapping[str, Any]]]:
    """Yield `(properties path or None, JSON pointer, schema)` for each schema position.

    The path is None once any keyword other than `properties` was crossed. `$ref` is not
    followed (the target is reached where it is defined, e.g. under `$defs`). Iterative, in
    document order, so deep schemas cannot exhaust the stack and results are deterministic.
    """
    stack: list[tuple[tuple[str, ...] | None, str, Any]] = [((), "", root)]
    while stack:
        path, pointer, node = stack.pop()
        if not isinstance(node, Mapping):
            continue  # boolean schemas and junk carry no annotations
        schema = cast(Mapping[str, Any], node)
        yield path, pointer, schema
        children: list[tuple[tuple[str, ...] | None, str, Any]] = []
        for key, value in schema.items():
            where = f"{pointer}/{_pointer_part(key)}"
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in cast(Mapping[str, Any], value).items():
                    sub_path = None if path is None else (*path, name)
                    children.append((sub_path, f"{where}/{_pointer_part(name)}", sub))
            elif key in _SUBSCHEMA_MAP and isinstance(value, Mapping):
                for name, sub in cast(Mapping[str, Any], value).items():
                    children.append((None, f"{where}/{_pointer_part(name)}", sub))
            elif key in _SUBSCHEMA_LIST or key in _SUBSCHEMA_ONE:
                if isinstance(value, list):
                    for i, sub in enumerate(value):
                        children.append((None, f"{where}/{i}", sub))
                else:
                    children.append((None, where, value))
        stack.extend(reversed(children))


def x_mcp_header_params(input_schema: Mapping[str, Any]) -> dict[str, HeaderParam]:
    """Map each `x-mcp-header` token, as declared, to the property it mirrors.

    Raises `InvalidToolHeaderAnnotation` when any annotation is invalid: it must be a
    non-empty RFC 9110 token, unique in the schema ignoring case, on a property whose `type`
    is exactly `string`, `integer` or `boolean`, reached from the root through `properties`
    alone. One bad annotation invalidates the whole tool, as the spec requires.

    The property must be reachable through `properties` alone because only then does the
    header name one value: under `items` or a composition keyword the argument could be many
    values, or none, and the header would mirror which one is undefined.
    """
    found: dict[str, HeaderParam] = {}
    seen: dict[str, str] = {}  # lower-cased token -> pointer of its first use
    for path, pointer, schema in _schema_positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        token = schema[X_MCP_HEADER]
        if not path:
            raise InvalidToolHeaderAnnotation(
                f"{X_MCP_HEADER} is only allowed on a property reached through `properties` alone",
                pointer,
            )
        if not isinstance(token, str):
            raise InvalidToolHeaderAnnotation(
                f"{X_MCP_HEADER} must be a string, not {type(token).__name__}", pointer
            )
        if _TOKEN.fullmatch(token) is None:
            raise InvalidToolHeaderAnnotation(
                f"{X_MCP_HEADER} {token!r} is not a non-empty RFC 9110 token", pointer
            )
        json_type = schema.get("type")
        if not isinstance(json_type, str) or json_type not in _HEADER_TYPES:
            raise InvalidToolHeaderAnnotation(
                f"{X_MCP_HEADER} needs a property of type string, integer or boolean, "
                f"not {json_type!r}",
                pointer,
            )
        lower = token.lower()
        if lower in seen:
            raise InvalidToolHeaderAnnotation(
                f"{X_MCP_HEADER} {token!r} duplicates the one at {seen[lower]} (names ignore case)",
                pointer,
            )
        seen[lower] = pointer
        found[token] = HeaderParam(path, json_type)
    return found


_ToolT = TypeVar("_ToolT", bound=Mapping[str, Any])


def filter_tools_with_valid_headers(
    tools: Iterable[_ToolT],
) -> tuple[list[_ToolT], list[tuple[str, str]]]:
    """Split a `tools/list` page into usable tools and `(name, reason)` for dropped ones.

    An HTTP client MUST drop tools whose `x-mcp-header` annotations are invalid (and log a
    warning: the caller logs the returned reasons, this module does no I/O).

    Dropped rather than fixed: a client cannot know what the server meant, and a tool called
    with the wrong mirrored headers would be refused at every call (-32020).
    """
    kept: list[_ToolT] = []
    dropped: list[tuple[str, str]] = []
    for tool in tools:
        schema = tool.get("inputSchema")
        try:
            if isinstance(schema, Mapping):
                x_mcp_header_params(cast(Mapping[str, Any], schema))
        except InvalidToolHeaderAnnotation as exc:
            name = tool.get("name")
            dropped.append((name if isinstance(name, str) else repr(name), str(exc)))
        else:
            kept.append(tool)
    return kept, dropped


# --------------------------------------------------------------------------------------------
# Mirrored headers: client side
# --------------------------------------------------------------------------------------------

# Distinct from None: a null argument and a missing one are both "no header", but the walk
# must tell "path ended" from "value is null" to report the right reason.
_ABSENT: Final = object()


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at a `properties` path, or `_ABSENT` when a step is missing."""
    node = arguments
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return _ABSENT
        node = cast(Mapping[str, Any], node)[key]
    return node


def _render(value: Any, json_type: str) -> str | int | bool | None:
    """The scalar a header mirrors for `value`, or None when no rendering exists.

    Integral floats count as integers on integer properties (JSON Schema treats `42.0` as an
    integer). Objects, arrays and other floats have no header form: the client omits the
    header and the server's schema validation rejects the body.
    """
    if isinstance(value, bool | int | str):
        return value
    # A float on a string or boolean property has no rendering: the body's own schema
    # validation will refuse it, and a header would only disguise the mismatch.
    if isinstance(value, float) and json_type == "integer" and value.is_integer():
        return int(value)
    return None


def _plain_or_raise(header: str, value: Any) -> str:
    """A version or method, which go out plain: the server compares them as sent,
    without decoding, so one that is not plain cannot be sent at all."""
    if not isinstance(value, str) or not _is_plain(value):
        raise LocalProtocolError(
            f"{header} must be non-empty visible ASCII, got {value!r}", code=INVALID_REQUEST
        )
    return value


# (version, method, name) -> the headers they mirror into, for the calls that repeat
# them (a client calling one tool again and again): each is checked and encoded once.
# Cleared whole when full, as the envelope cache is; names longer than a tool name is
# likely to be are not kept. What depends on the call (`params._meta`'s version, the
# `Mcp-Param-*` headers) is judged per call.
_MIRRORED: dict[tuple[str, str, Any], list[tuple[str, str]]] = {}
_MIRRORED_BOUND: Final = 256
_MIRRORED_NAME_CHARS: Final = 256


def mirrored_request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    protocol_version: str,
    header_params: Mapping[str, HeaderParam] | None = None,
) -> list[tuple[str, str]]:
    """The mirrored headers a 2026-07-28 client puts on the POST carrying this message.

    `header_params` is `x_mcp_header_params(tool["inputSchema"])` for the tool being called;
    `Mcp-Param-*` headers are only produced for `tools/call`. Arguments that are absent or
    null get no header. Raises `LocalProtocolError` when the body cannot be mirrored (a
    missing or non-string name/uri, an integer outside the JS-safe range, a version that
    disagrees with `params._meta`), since any server would refuse the request.

    Building the headers here, in one function shared by our client and any gateway, is the
    point: the server's check (`check_mirrored_headers`) is its exact inverse, so our client
    can never produce a request our server refuses.
    """
    name_key = _NAME_KEYS.get(method)
    name = params.get(name_key) if name_key is not None and params is not None else None
    key = (protocol_version, method, name)
    made = _MIRRORED.get(key) if type(name) is str or name is None else None
    if made is None:
        version = _plain_or_raise(MCP_PROTOCOL_VERSION_HEADER, protocol_version)
    else:
        version = protocol_version  # found plain when the entry was made
    meta: Any = params.get("_meta") if params is not None else None
    # (`type is dict` first: the engine's own envelope is one, and an ABC check is not free)
    if type(meta) is dict or isinstance(meta, Mapping):
        declared = meta.get(PROTOCOL_VERSION_META_KEY, version)
        if declared != version:
            raise LocalProtocolError(
                f"params._meta says protocol version {declared!r} but the header would say "
                f"{version!r}",
                code=INVALID_REQUEST,
            )
    if made is None:
        made = [
            (MCP_PROTOCOL_VERSION_HEADER, version),
            (MCP_METHOD_HEADER, _plain_or_raise(MCP_METHOD_HEADER, method)),
        ]
        if name_key is not None:
            if not isinstance(name, str):
                raise LocalProtocolError(
                    f"{method} needs a string params.{name_key} to mirror into {MCP_NAME_HEADER}",
                    code=INVALID_PARAMS,
                )
            made.append((MCP_NAME_HEADER, encode_header_value(name)))
        if len(name or "") <= _MIRRORED_NAME_CHARS:
            if len(_MIRRORED) >= _MIRRORED_BOUND:
                _MIRRORED.clear()
            _MIRRORED[key] = made
    headers = list(made)  # the caller's to extend; the entry stays as made
    if method == "tools/call" and header_params and params is not None:
        arguments = params.get("arguments")
        for token, (path, json_type) in header_params.items():
            value = _value_at(arguments, path)
            if value is _ABSENT or value is None:
                continue
            rendered = _render(value, json_type)
            if rendered is not None:
                headers.append((MCP_PARAM_HEADER_PREFIX + token, encode_header_value(rendered)))
    return headers


# --------------------------------------------------------------------------------------------
# Mirrored headers: server side
# --------------------------------------------------------------------------------------------


def _fold(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Lower-case names -> every value given, with optional whitespace trimmed.

    Whitespace around a field value is not part of it (RFC 9110 5.5), so it is trimmed
    before any comparison; the names are folded because field names ignore case (5.1).
    """
    if type(headers) is HeaderList:
        return headers.folded or headers.by_name()  # the same mapping, built once per head
    pairs: Iterable[tuple[str, str]] = headers.items() if isinstance(headers, Mapping) else headers
    folded: dict[str, list[str]] = {}
    for name, value in pairs:
        folded.setdefault(name.lower(), []).append(value.strip(" \t"))
    return folded


# First letters, both cases, of the names a check reads. (ASCII names: no other
# character lower-cases to these letters, so a name is passed over on its first.)
_M_LETTERS: Final = frozenset("mM")  # every mirrored header is an `Mcp-` one
_H_LETTERS: Final = frozenset("hH")
_HOST_ORIGIN_LETTERS: Final = frozenset("hHoO")


def _fold_some(
    headers: Mapping[str, str] | Iterable[tuple[str, str]], first: frozenset[str]
) -> dict[str, list[str]]:
    """`_fold` of the names that begin with one of the letters `first` alone.

    A request carries a dozen headers and a check reads two or three of them: the
    others are passed over with one index test instead of being lower-cased,
    trimmed and filed. A `HeaderList` has every name filed already: its index is
    returned (a superset, read by name only).
    """
    if type(headers) is HeaderList:
        return headers.folded or headers.by_name()
    # A list first (a request head's headers are one): `isinstance` against the
    # `Mapping` ABC costs two Python calls per check.
    pairs: Iterable[tuple[str, str]] = (
        headers
        if type(headers) is list
        else headers.items()
        if isinstance(headers, Mapping)
        else headers
    )
    folded: dict[str, list[str]] = {}
    for name, value in pairs:
        if name[:1] in first:
            folded.setdefault(name.lower(), []).append(value.strip(" \t"))
    return folded


# The lower-cased keys `_fold_some` files the always-read headers under, spelled once
# here rather than lower-cased on every POST.
_VERSION_KEY: Final = MCP_PROTOCOL_VERSION_HEADER.lower()
_METHOD_KEY: Final = MCP_METHOD_HEADER.lower()
_NAME_KEY: Final = MCP_NAME_HEADER.lower()


def _single(folded: Mapping[str, list[str]], header: str, key: str) -> str | None:
    """The one value of `header` (filed under `key`, its lower-cased name), None when
    absent; a repeated header is a mismatch."""
    values = folded.get(key)
    if values is None:
        return None
    if len(values) > 1:
        # First-value and last-value readers would disagree; refuse to pick one.
        raise _mismatch_error(header, "appears more than once")
    return values[0]


def _required_plain(folded: Mapping[str, list[str]], header: str, key: str) -> str:
    """A header every 2026-07-28 POST must carry, in plain form (version, method).

    `_single` written out: this runs twice on every 2026-07-28 POST, and the call is a
    fifth of its cost. The checks and their order are `_single`'s.
    """
    values = folded.get(key)
    if values is None:
        raise _mismatch_error(header, "is missing")
    if len(values) > 1:
        raise _mismatch_error(header, "appears more than once")
    value = values[0]
    # `_field_text`, inline.
    if value == "" or not (value.isascii() and value.isprintable()):
        raise _mismatch_error(header, "is empty or contains characters outside visible ASCII")
    return value


def _decoded(header: str, raw: str) -> str:
    """`decode_header_value`, the error naming `header` rather than "header value"."""
    try:
        return _decode(raw)
    except ValueError as exc:
        raise _mismatch_error(header, str(exc)) from None


def _param_matches(decoded: str, rendered: str | int | bool, json_type: str) -> bool:
    """Compare a decoded `Mcp-Param-*` value with the body's rendered argument."""
    if isinstance(rendered, bool):
        return decoded == ("true" if rendered else "false")
    if isinstance(rendered, int) and json_type == "integer":
        # Numeric: "42", "042" and "42.0" all equal 42; exponents and junk never match.
        match = _DECIMAL.fullmatch(decoded) if len(decoded) <= _MAX_NUMERIC_HEADER else None
        if match is None or (match.group(2) is not None and match.group(2).strip("0")):
            return False
        return int(match.group(1)) == rendered
    return decoded == str(rendered)


# Mirrored header values found plain before: non-empty, visible ASCII (and space), not
# sentinel-shaped. A client mirrors the same version, method and tool name into every
# request, and a server's head index hands over the very same strings each time
# (`_http.plain_fields` keeps the lines it read), so a set lookup on a hash already
# computed replaces the two or three string-method calls of each check (about 2,500
# instructions of `check_mirrored_headers`' 11,000). What only these checks know is
# kept: being in the set is exactly passing them. Cleared whole when full.
_PLAIN_SEEN: set[str] = set()
_PLAIN_SEEN_MAX: Final = 256


def _seen_plain(value: str) -> bool:
    """Remember `value` as plain when it is (see `_PLAIN_SEEN`); True."""
    if value and not value.startswith(_SENTINEL_PREFIX) and value.isascii() and value.isprintable():
        if len(_PLAIN_SEEN) >= _PLAIN_SEEN_MAX:
            _PLAIN_SEEN.clear()
        _PLAIN_SEEN.add(value)
    return True


def plainly_mirrored(
    folded: Mapping[str, list[str]], method: object, params: dict[str, Any]
) -> bool:
    """Whether a 2026-07-28 request's mirrored headers are in the common shape and agree
    with its body, so that `check_mirrored_headers` would accept it; False asks that
    function, which then judges (and names the defect) exactly as before.

    The common shape: `MCP-Protocol-Version` equal to `params._meta`'s version,
    `Mcp-Method` equal to the body's method and, for a method that names something,
    `Mcp-Name` equal to that name, each header given once with a value already found
    plain (`_PLAIN_SEEN`). Nothing of `Mcp-Param-*` is read: the caller asks this only
    when the called tool declares no header parameters, and the function ignores such
    headers then too. `folded` is a `HeaderList`'s index. A mirror of
    `check_mirrored_headers`' accepting path (change one, change the other): a
    well-formed request is judged by three string compares and three set lookups, about
    a fifth of that function's cost, and no answer differs
    (tests/core/test_http_headers.py compares the two).
    """
    said = folded.get(_METHOD_KEY)
    # (The compare first: a body method that is not a string is never equal to one, and
    # must not reach the `_NAME_KEYS` lookup, which would hash it.)
    if said is None or len(said) != 1 or said[0] != method:
        return False
    values = folded.get(_VERSION_KEY)
    if values is None or len(values) != 1:
        return False
    version = values[0]
    meta = params.get("_meta")
    seen = _PLAIN_SEEN
    if type(meta) is not dict or meta.get(PROTOCOL_VERSION_META_KEY) != version:
        return False
    if version not in seen:
        return False
    name_key = _NAME_KEYS.get(method)
    if name_key is None:
        return method in seen
    # A named method is one of `_NAME_KEYS`' own plain strings, so `Mcp-Method`, equal
    # to it, is plain as well.
    names = folded.get(_NAME_KEY)
    if names is None or len(names) != 1:
        return False
    name = names[0]
    return name == params.get(name_key) and name in seen


def check_mirrored_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    body: Mapping[str, Any],
    header_params: Mapping[str, HeaderParam] | None = None,
) -> None:
    """Verify a 2026-07-28 POST's mirrored headers against its JSON-RPC body.

    `headers` is a mapping or raw `(name, value)` pairs; names are matched ignoring case, and
    pairs let a repeated header be caught. `header_params` is the called tool's
    `x_mcp_header_params` (None or {} when the tool is unknown or has none); unrecognised
    `Mcp-Param-*` headers, and `Mcp-Name` on methods that have no name, are ignored, as the
    spec only constrains recognised headers.

    Raises `RemoteProtocolError(code=-32020, http_status=400)` naming the header when one is
    missing, repeated, malformed, or differs from the body. Call it only for 2026-era
    traffic: a server that also serves legacy clients decides from a missing
    `MCP-Protocol-Version` that the request is legacy before calling this. Body defects it
    trips over are reported as such: a non-string method is -32600, a request whose
    `params._meta` lacks the protocol version is -32602.
    """
    # (A server's head is a `HeaderList`: its index, read without a call in between.)
    folded = (
        (headers.folded or headers.by_name())
        if type(headers) is HeaderList
        else _fold_some(headers, _M_LETTERS)
    )
    method = body.get("method")
    if not isinstance(method, str):
        raise RemoteProtocolError("method must be a string", code=INVALID_REQUEST)
    # A parsed body's objects are dicts: tested first, as the `Mapping` ABC costs two
    # Python calls per `isinstance`.
    params_value = body.get("params")
    params: Mapping[str, Any] = (
        params_value if type(params_value) is dict or isinstance(params_value, Mapping) else {}
    )
    meta_value = params.get("_meta")
    meta: Mapping[str, Any] = (
        meta_value if type(meta_value) is dict or isinstance(meta_value, Mapping) else {}
    )

    # MCP-Protocol-Version: required on every message; requests must also carry it in _meta.
    # (The two required headers are read here when they are well-formed: one value,
    # non-empty, visible ASCII. `_required_plain` is called only when one is not, and
    # raises naming what is wrong, so the checks and their order stay its own; the
    # call is about 2,000 instructions of this function's 12,000, twice per POST.)
    # (A value found plain before, `_PLAIN_SEEN`, is taken without the string methods.)
    seen = _PLAIN_SEEN
    values = folded.get(_VERSION_KEY)
    version = values[0] if values is not None and len(values) == 1 else ""
    if version not in seen:
        if version == "" or not (version.isascii() and version.isprintable()):
            version = _required_plain(folded, MCP_PROTOCOL_VERSION_HEADER, _VERSION_KEY)
        _seen_plain(version)
    if PROTOCOL_VERSION_META_KEY in meta:
        if meta[PROTOCOL_VERSION_META_KEY] != version:
            raise _mismatch_error(
                MCP_PROTOCOL_VERSION_HEADER,
                f"does not match params._meta[{PROTOCOL_VERSION_META_KEY!r}]",
            )
    elif "id" in body:
        raise RemoteProtocolError(
            f"params._meta is missing the required {PROTOCOL_VERSION_META_KEY!r}",
            code=INVALID_PARAMS,
        )

    values = folded.get(_METHOD_KEY)
    said = values[0] if values is not None and len(values) == 1 else ""
    if said not in seen:
        if said == "" or not (said.isascii() and said.isprintable()):
            said = _required_plain(folded, MCP_METHOD_HEADER, _METHOD_KEY)
        _seen_plain(said)
    if said != method:
        raise _mismatch_error(MCP_METHOD_HEADER, "does not match the body's method")

    name_key = _NAME_KEYS.get(method)
    if name_key is not None:
        # (`_single`, inline for the one value every named request carries.)
        values = folded.get(_NAME_KEY)
        if values is None:
            raw_name = None
        elif len(values) == 1:
            raw_name = values[0]
        else:
            raw_name = _single(folded, MCP_NAME_HEADER, _NAME_KEY)  # raises: repeated
        body_name = params.get(name_key)
        if raw_name is None:
            # A body without the name is the body's defect (-32602 later, from params
            # validation), not a header mismatch: nothing could be mirrored.
            if body_name is not None:
                raise _mismatch_error(MCP_NAME_HEADER, f"is missing but params.{name_key} is set")
        else:
            # A plain name (visible ASCII, not sentinel-shaped) decodes to itself: compared
            # as it is, which spares two calls on nearly every named request. Anything else
            # goes through `_decoded`, which validates it and names its defect.
            plain = raw_name in seen or (
                raw_name.isascii()
                and raw_name.isprintable()  # (`_field_text`, inline)
                and not raw_name.startswith(_SENTINEL_PREFIX)
                and _seen_plain(raw_name)
            )
            if (raw_name if plain else _decoded(MCP_NAME_HEADER, raw_name)) != body_name:
                raise _mismatch_error(MCP_NAME_HEADER, f"does not match params.{name_key}")

    # Only recognised `Mcp-Param-*` headers are checked (SPEC-NOTES 4.3): a header for an
    # argument the tool's schema does not annotate is ignored, as the spec asks, so a client
    # with a stale tool list is not refused for an extra header.
    if method != "tools/call" or not header_params:
        return
    arguments = params.get("arguments")
    for token, (path, json_type) in header_params.items():
        header = MCP_PARAM_HEADER_PREFIX + token
        raw = _single(folded, header, header.lower())
        value = _value_at(arguments, path)
        argument = ".".join(path)
        # Absent and null both mean "no header" on the client side, so a header for
        # either is one the body does not back: a router could have acted on a value
        # the tool never receives.
        if value is _ABSENT or value is None:
            if raw is not None:
                raise _mismatch_error(
                    header, f"is present but argument {argument!r} is absent or null"
                )
            continue
        rendered = _render(value, json_type)
        if rendered is None:
            if raw is not None:
                raise _mismatch_error(
                    header, f"is present but argument {argument!r} has no mirrorable value"
                )
            continue
        if raw is None:
            raise _mismatch_error(header, f"is missing but argument {argument!r} is present")
        if not _param_matches(_decoded(header, raw), rendered, json_type):
            raise _mismatch_error(header, f"does not match argument {argument!r}")


# --------------------------------------------------------------------------------------------
# Host / Origin validation (DNS rebinding)
# --------------------------------------------------------------------------------------------

# Stands for `:*` in an allow-list entry; no real port is negative.
_ANY_PORT: Final = -1
# Hostnames in the strict shape only: a percent-escape, userinfo or any other URL part in
# `Host` is what the prefix-matching bypasses of RELIABILITY.md 1.1 rely on.
_REG_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?")
_PORT = re.compile(r"[0-9]{1,5}")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_IPV6_CHARS: Final = frozenset("0123456789abcdefABCDEF:.")
# An origin without a port means its scheme's default (RFC 6454 section 4), so
# `http://localhost` and `http://localhost:80` are the same origin.
_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}


# Pure, and asked of the same `Host` on every request of a client (the Host check and
# the client view both parse it): remembered, within a bound.
@functools.lru_cache(maxsize=512)
def _parse_authority(text: str, *, allow_wildcard: bool) -> tuple[str, int | None] | None:
    """Split `host[:port]` into a normalised host and port; None when malformed.

    Hostnames are lower-cased and lose one trailing dot (`localhost.` names the same host);
    IPv6 literals are put in compressed form. Userinfo, paths, zone ids, percent-escapes and
    anything else outside a plain hostname make the value malformed, which is what stops
    `localhost:80@evil` and `localhost:.evil.com` from passing a prefix test.
    """
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None
        literal, rest = text[1:close], text[close + 1 :]
        if not literal or not set(literal) <= _IPV6_CHARS:  # no zone ids, no IPvFuture
            return None
        try:
            host = f"[{ipaddress.IPv6Address(literal).compressed}]"
        except ValueError:
            return None
    else:
        name, sep, port_text = text.partition(":")
        if _REG_NAME.fullmatch(name) is None:
            return None
        host = name.lower().removesuffix(".")
        rest = sep + port_text
    if rest == "":
        return host, None
    if not rest.startswith(":"):
        return None
    port_text = rest[1:]
    if allow_wildcard and port_text == "*":
        return host, _ANY_PORT
    if _PORT.fullmatch(port_text) is None or not 0 < int(port_text) < 65536:
        return None
    return host, int(port_text)


def _parse_origin(text: str, *, allow_wildcard: bool) -> tuple[str, str, int | None] | None:
    """Split a serialised origin `scheme://host[:port]`; None when malformed or `null`.

    `null` (what RFC 6454 has sandboxed and `file:` pages send) has no `://` and fails
    here, which is why it can never be allow-listed.
    """
    scheme, sep, authority = text.partition("://")
    if not sep or _SCHEME.fullmatch(scheme) is None:
        return None
    parsed = _parse_authority(authority, allow_wildcard=allow_wildcard)
    if parsed is None:
        return None
    scheme = scheme.lower()
    host, port = parsed
    return scheme, host, _DEFAULT_PORTS.get(scheme) if port is None else port


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """Which `Host` and `Origin` values a server answers, against DNS rebinding.

    A rebinding page reaches a local server under the attacker's host name, so the `Host`
    check is what stops it; `Origin` stops cross-site browser requests. Entries are
    `host[:port]` and `scheme://host[:port]`; `*` as the port matches any port, including
    an omitted one. Hosts compare case-insensitively, without a trailing dot, and IPv6
    literals in canonical form; origins without a port take their scheme's default.
    `null` can never be allowed: any sandboxed iframe or `file:` page sends it.
    """

    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...] = ()
    _hosts: frozenset[tuple[str, int | None]] = field(init=False, repr=False, compare=False)
    _origins: frozenset[tuple[str, str, int | None]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Parse every entry once, so a request's check is two set lookups; a malformed
        entry is a ValueError here, at configuration, not a silent never-match later."""
        hosts: set[tuple[str, int | None]] = set()
        for entry in self.allowed_hosts:
            parsed = _parse_authority(entry, allow_wildcard=True)
            if parsed is None:
                raise ValueError(f"not a host[:port] entry: {entry!r}")
            hosts.add(parsed)
        origins: set[tuple[str, str, int | None]] = set()
        for entry in self.allowed_origins:
            parsed_origin = _parse_origin(entry, allow_wildcard=True)
            if parsed_origin is None:
                raise ValueError(f"not a scheme://host[:port] origin entry: {entry!r}")
            origins.add(parsed_origin)
        object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        object.__setattr__(self, "allowed_origins", tuple(self.allowed_origins))
        object.__setattr__(self, "_hosts", frozenset(hosts))
        object.__setattr__(self, "_origins", frozenset(origins))

    @classmethod
    def loopback(cls, port: int | None = None) -> HostPolicy:
        """The policy for a server bound to 127.0.0.1, localhost or ::1.

        With a port, only that port is accepted (port 80 also admits port-less `Host`
        values, which is how clients spell it); without one, any port, as the official SDK
        does.
        """
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"port out of range: {port}")
        names = ("127.0.0.1", "localhost", "[::1]")
        suffix = "*" if port is None else str(port)
        hosts = [f"{name}:{suffix}" for name in names]
        # Clients omit the default port from Host (RFC 9110 4.2.3), so port 80 must also
        # match a bare name; any other port always appears.
        if port == 80:
            hosts += names
        origins = [f"http://{name}:{suffix}" for name in names]
        return cls(allowed_hosts=tuple(hosts), allowed_origins=tuple(origins))

    def host_allowed(self, host: str | None) -> bool:
        """True when `host` (the `Host` header or HTTP/2 `:authority`) is allow-listed.

        A missing `Host` is refused: HTTP/1.1 requires it (RFC 9112 3.2), and a request
        without one cannot be judged against the allow-list at all.
        """
        if host is None:
            return False
        parsed = _parse_authority(host, allow_wildcard=False)
        if parsed is None:
            return False
        return parsed in self._hosts or (parsed[0], _ANY_PORT) in self._hosts

    def origin_allowed(self, origin: str | None) -> bool:
        """True when `origin` is absent (non-browser clients send none) or allow-listed.

        A missing `Origin` is allowed: browsers send one on every POST (the Fetch
        standard), the request that carries MCP calls, and the `Host` check already stops a
        rebinding page; non-browser clients (the SDKs, curl) send none, and refusing it would
        lock out every native client.
        """
        if origin is None:
            return True
        parsed = _parse_origin(origin, allow_wildcard=False)
        if parsed is None:
            return False
        scheme, host, _ = parsed
        return parsed in self._origins or (scheme, host, _ANY_PORT) in self._origins

    def check(self, host: str | None, origin: str | None) -> int | None:
        """None when the request may proceed, else the status to refuse it with.

        421 Misdirected Request for a missing, malformed or unlisted `Host`, and 403 for a
        present `Origin` that is malformed, `null` or unlisted, checked in that order: the
        official SDK (2.3.0 `TransportSecurityMiddleware`) answers the same way.
        """
        if not self.host_allowed(host):
            return 421
        if not self.origin_allowed(origin):
            return 403
        return None

    def check_headers(
        self,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        *,
        view: ClientView | None = None,
    ) -> int | None:
        """`check` over a whole request head; a repeated `Host` or `Origin` is refused.

        With a `view` (`TrustedProxies.resolve`), its host is checked instead of the `Host`
        header: behind a trusted proxy, the name the client used. `Origin` is checked as
        sent either way: browsers set it and proxies pass it on unchanged.
        """
        folded = _fold_some(headers, _HOST_ORIGIN_LETTERS)  # Host and Origin alone
        if view is None:
            hosts = folded.get("host", [])
            if len(hosts) != 1:
                return 421
            host: str | None = hosts[0]
        else:
            host = view.host
        # Two Origin headers come from no browser; which one a proxy believed is unknown.
        origins = folded.get("origin")
        if origins is not None and len(origins) != 1:
            return 403
        return self.check(host, None if origins is None else origins[0])


# --------------------------------------------------------------------------------------------
# Reverse proxies: X-Forwarded-* and Forwarded (RFC 7239), believed only from trusted peers
# --------------------------------------------------------------------------------------------

_FORWARDED_SCHEMES: Final = frozenset({"http", "https"})
# RFC 7239 section 4: forwarded-pair = token "=" value, value = token / quoted-string.
_FWD_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_FWD_PAIR = re.compile(rf"\s*({_FWD_TOKEN})=({_FWD_TOKEN}|\"(?:[^\"\\]|\\.)*\")\s*")
# (A real chain has a CDN, a load balancer and an ingress at most; 32 leaves room for odd
# deployments while bounding the work a forged header costs.)
_MAX_FORWARDED_HOPS: Final = 32  # a longer chain is not a deployment, it is an attack


@dataclass(frozen=True, slots=True)
class ClientView:
    """A request as the client made it: the scheme and `Host` it used, and its address.

    Behind a reverse proxy these differ from what the socket shows (the proxy's address,
    plain http, the upstream's name); `TrustedProxies.resolve` recovers them from the
    proxy's headers when, and only when, the direct peer is a trusted proxy. `proxied` says
    whether it did. `host` is None when the request names no single valid host.
    """

    scheme: str
    host: str | None
    client: str | None
    proxied: bool = False

    def __init__(
        self, scheme: str, host: str | None, client: str | None, proxied: bool = False
    ) -> None:
        # (The generated `__init__`, written out: see `_http.slot_setters`.)
        _VIEW_SCHEME(self, scheme)
        _VIEW_HOST(self, host)
        _VIEW_CLIENT(self, client)
        _VIEW_PROXIED(self, proxied)

    @property
    def base_url(self) -> str | None:
        """`scheme://host` as the client used it: what links back to this server start
        with (None without a host)."""
        return None if self.host is None else f"{self.scheme}://{self.host}"


_VIEW_SCHEME, _VIEW_HOST, _VIEW_CLIENT, _VIEW_PROXIED = slot_setters(
    ClientView, "scheme", "host", "client", "proxied"
)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address from a peer or header value: brackets, a port and an IPv4-mapped IPv6
    form are undone (a dual-stack socket reports 127.0.0.1 as ::ffff:127.0.0.1).

    IPv4-mapped addresses are unmapped so that a trusted-proxy entry `127.0.0.1` matches the
    same peer whether the socket is dual-stack or not.
    """
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]  # IPv4 with a port
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _forwarded_elements(values: list[str]) -> list[dict[str, str]] | None:
    """RFC 7239 elements (pair names lower-cased, quotes undone), None when malformed.

    Malformed means ignored whole (`None`): a partly parsed chain could shift which element
    counts as the client, and a proxy that writes a bad header has told us nothing reliable.
    """
    elements: list[dict[str, str]] = []
    text = ",".join(values)
    pos = 0
    element: dict[str, str] = {}
    while True:
        match = _FWD_PAIR.match(text, pos)
        if match is None:
            return None
        name, value = match.group(1).lower(), match.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        if name in element:
            return None  # a repeated parameter in one element (section 4)
        element[name] = value
        pos = match.end()
        if pos == len(text):
            elements.append(element)
            return elements
        if text[pos] == ";":
            pos += 1
        elif text[pos] == ",":
            elements.append(element)
            element = {}
            pos += 1
        else:
            return None
        if len(elements) > _MAX_FORWARDED_HOPS:
            return None


class TrustedProxies:
    """Which direct peers may tell the server who the client is and how it was addressed.

    Entries are addresses or networks (`"127.0.0.1"`, `"10.0.0.0/8"`, `"::1"`), plus
    `"unix"` for a peer without an address (a Unix socket) and `"*"` for any peer (only
    when nothing but the proxy can reach the server). A request whose direct peer is
    trusted is judged, for the `Host`/`Origin` check and for the URLs the server builds,
    by what its proxy says; from anyone else those headers are ignored, since any client
    can send them.

    `header` names the one header family believed: `"x-forwarded"` (X-Forwarded-For,
    -Host, -Proto: nginx, most load balancers, uvicorn) or `"forwarded"` (RFC 7239). Only
    one, because a proxy that sets one family usually passes the other through from the
    client untouched, and believing that would let the client choose.

    The rule for each family: the chain of client addresses is walked from the right (the
    entry the direct peer added) while the entries are trusted proxies too; the first
    address that is not is the client. With `Forwarded`, that element's `host` and `proto`
    are the client's (each element is one proxy's account of the connection it received).
    X-Forwarded-Host and -Proto are read from their rightmost entry: the nearest trusted
    proxy's word. A trusted proxy must therefore set or overwrite these headers; one that
    passes a client's own through lets the client choose them.
    """

    __slots__ = ("_any", "_header", "_networks", "_unix", "entries")

    def __init__(
        self,
        entries: Iterable[str] = (),
        *,
        header: str = "x-forwarded",
    ) -> None:
        """Parse the entries once; a str is refused because iterating it would trust single
        characters, a silent misconfiguration.
        """
        if isinstance(entries, str):
            raise TypeError("trusted proxies are a list of addresses or networks, not a str")
        if header not in ("x-forwarded", "forwarded"):
            raise ValueError("header must be 'x-forwarded' or 'forwarded'")
        self.entries = tuple(entries)
        self._header = header
        self._any = False
        self._unix = False
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in self.entries:
            if entry == "*":
                self._any = True
            elif entry == "unix":
                self._unix = True
            else:
                try:
                    networks.append(ipaddress.ip_network(entry.strip(), strict=False))
                except ValueError:
                    raise ValueError(
                        f"not an address, a network, 'unix' or '*': {entry!r}"
                    ) from None
        self._networks = tuple(networks)

    def __bool__(self) -> bool:
        """False for the empty list, which trusts no one: every request is judged by
        its socket, as if no proxy existed."""
        return bool(self.entries)

    def __repr__(self) -> str:
        """The entries and the header family, for logs of the configuration."""
        return f"TrustedProxies({list(self.entries)!r}, header={self._header!r})"

    def trusts(self, address: str | None) -> bool:
        """Whether `address` (a peer's, or an entry of a forwarding chain) is a proxy.

        `"unix"` is separate from addresses because a Unix-socket peer has none, and None
        must not mean "trusted" unless the operator said so.
        """
        if self._any:
            return True
        if address is None:
            return self._unix
        ip = _ip(address)
        return ip is not None and any(ip in network for network in self._networks)

    def resolve(
        self,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        *,
        peer: str | None,
        scheme: str = "http",
    ) -> ClientView:
        """The `ClientView` of a request that came from `peer` over `scheme`.

        Without a trusted peer (or without its headers) it is the direct view: the
        single `Host` header (None when absent or repeated), the peer, the scheme.
        """
        # Forwarding headers are believed only from a trusted peer: anyone else can
        # write them, and believing them would let a client pick the host it is
        # judged by, or the address it is logged as.
        if not self.entries or not self.trusts(peer):
            # The common case, on every request: look at Host alone.
            if type(headers) is HeaderList:
                return ClientView(
                    scheme,
                    _single_host((headers.folded or headers.by_name()).get("host", [])),
                    peer,
                )
            pairs = headers.items() if isinstance(headers, Mapping) else headers
            # (The first letter first: only an H-name can be Host, and lowering each costs.)
            hosts = [
                value for name, value in pairs if name[:1] in _H_LETTERS and name.lower() == "host"
            ]
            return ClientView(scheme, _single_host(hosts), peer)
        folded = _fold(headers)
        direct = ClientView(scheme, _single_host(folded.get("host", [])), peer)
        if self._header == "forwarded":
            return self._from_forwarded(folded, direct)
        return self._from_x_forwarded(folded, direct)

    def _walk(self, chain: list[str]) -> int:
        """Index of the client in a chain of addresses (rightmost added last).

        From the right, because each proxy appends what it saw: the entries our own
        proxies added are trustworthy, anything left of the first untrusted one
        may have been written by the client itself.
        """
        index = len(chain) - 1
        while index > 0 and self.trusts(chain[index]):
            index -= 1
        return index

    def _from_x_forwarded(self, folded: dict[str, list[str]], direct: ClientView) -> ClientView:
        """The view from X-Forwarded-For/-Host/-Proto; none of them means not proxied.

        A chain over `_MAX_FORWARDED_HOPS` is ignored whole rather than walked, since
        walking it is work the sender chooses the size of.
        """
        chain = _list_values(folded.get("x-forwarded-for"))
        hosts = _list_values(folded.get("x-forwarded-host"))
        protos = _list_values(folded.get("x-forwarded-proto"))
        if not (chain or hosts or protos) or len(chain) > _MAX_FORWARDED_HOPS:
            return direct
        client = _address_text(chain[self._walk(chain)]) if chain else direct.client
        return _view(direct, protos[-1] if protos else None, hosts[-1] if hosts else None, client)

    def _from_forwarded(self, folded: dict[str, list[str]], direct: ClientView) -> ClientView:
        """The view from RFC 7239 `Forwarded`; a malformed header is ignored whole.

        An element without `for` counts as "unknown", which no entry but `"*"`
        trusts, so the walk stops there: a proxy that hides its client is the client.
        """
        values = folded.get("forwarded")
        elements = _forwarded_elements(values) if values else None
        if not elements:
            return direct
        index = self._walk([element.get("for", "unknown") for element in elements])
        chosen = elements[index]
        client = chosen.get("for")
        if client is not None:
            client = _address_text(client)
        return _view(direct, chosen.get("proto"), chosen.get("host"), client)


def _list_values(values: list[str] | None) -> list[str]:
    """Every comma-separated entry of every line of a list-valued header, in order.

    Several header lines of one field are one comma-separated list (RFC 9110 5.3), so
    `X-Forwarded-For` given twice is read as one chain.
    """
    if not values:
        return []
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def _single_host(values: list[str]) -> str | None:
    """The one valid `Host` value, or None (absent, repeated or malformed: a 421)."""
    return _valid_host(values[0].strip(" \t")) if len(values) == 1 else None


def _valid_host(host: str) -> str | None:
    """`host[:port]` as given when it is one (what a URL may be built from), else None."""
    return host if _parse_authority(host, allow_wildcard=False) is not None else None


def _address_text(text: str) -> str:
    """A chain entry as an address (`[::1]:80` -> `::1`); obfuscated names stay as sent."""
    ip = _ip(text)
    return text if ip is None else str(ip)


def _view(
    direct: ClientView, proto: str | None, host: str | None, client: str | None
) -> ClientView:
    """The proxied view: what the proxy left out stays as the socket shows it; a host it
    gave that is not a valid `host[:port]` makes the host None (refused with 421), and a
    scheme other than http/https is not believed."""
    scheme = proto.lower() if proto is not None and proto.lower() in _FORWARDED_SCHEMES else None
    return ClientView(
        scheme or direct.scheme,
        direct.host if not host else _valid_host(host),
        client if client is not None else direct.client,
        proxied=True,
    )
