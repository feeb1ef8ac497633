"""JSON-RPC 2.0 decoding and encoding with hard limits.

Parsing uses `pydantic_core.from_json` (already a dependency): it is several
times faster than `json` on small messages, never raises `RecursionError` on
deep input, and rejects NaN/Infinity tokens. The remaining limits (depth below
its own, integer digits, string length, non-finite floats from huge exponents)
are enforced with C-speed pre-checks on the raw bytes, so a typical message pays
almost nothing and only suspicious ones take the slow path.

Non-finite numbers: the NaN/Infinity tokens are refused here; a literal such as
`1e999` parses to infinity, which every typed field refuses (-32602) and which
is written back as `null`, never as invalid JSON. Free-form values (tool
arguments) may carry it to the application, as Python's own `json` would.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

import pydantic_core

from ._errors import PARSE_ERROR, RemoteProtocolError

RequestId = int | str

JSONRPC_VERSION: Final = "2.0"
_FROM_JSON_MAX_DEPTH: Final = 200  # pydantic_core refuses deeper input by itself


@dataclass(frozen=True, slots=True)
class Limits:
    """Every buffer and count the engine keeps, with safe defaults.

    Raise a limit for a trusted peer; lower it for an exposed one. Depth is
    capped at 200 because the parser refuses deeper input anyway.
    """

    max_message_bytes: int = 4 * 1024 * 1024
    max_depth: int = 128
    max_integer_digits: int = 1000
    max_string_length: int = 2 * 1024 * 1024
    max_inbound_in_flight: int = 1024
    max_outbound_in_flight: int = 1024
    max_buffered_output_bytes: int = 16 * 1024 * 1024
    max_batch_size: int = 256
    max_remembered_ids: int = 4096
    max_method_length: int = 256
    max_subscriptions: int = 1024

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= _FROM_JSON_MAX_DEPTH:
            raise ValueError(f"max_depth must be between 1 and {_FROM_JSON_MAX_DEPTH}")
        for name in (
            "max_message_bytes",
            "max_integer_digits",
            "max_string_length",
            "max_inbound_in_flight",
            "max_outbound_in_flight",
            "max_buffered_output_bytes",
            "max_batch_size",
            "max_remembered_ids",
            "max_method_length",
            "max_subscriptions",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")


DEFAULT_LIMITS: Final = Limits()

_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # every byte except brackets
_STRING_RE = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class _Scan:
    """Caches one compiled regex per digit limit."""

    _digit_res: dict[int, re.Pattern[bytes]] = {}

    @classmethod
    def digits(cls, n: int) -> re.Pattern[bytes]:
        pattern = cls._digit_res.get(n)
        if pattern is None:
            pattern = cls._digit_res[n] = re.compile(rb"[0-9]{%d}" % (n + 1))
        return pattern


def _max_depth(data: bytes) -> int:
    """Nesting depth of a JSON text, ignoring brackets inside strings."""
    skeleton = _STRING_RE.sub(b"", data).translate(None, _BRACKETS)
    if not skeleton:
        return 0
    return max(itertools.accumulate(_DEPTH_STEP[b] for b in skeleton))


@functools.lru_cache(maxsize=8)
def _digits_bound(digits: int) -> int:
    """The smallest integer with more than `digits` digits (exact, unlike log10)."""
    return int(10**digits)


def _walk_for_limits(value: Any, limits: Limits) -> None:
    """Slow path: check every leaf (only when a cheap byte scan found a suspect)."""
    stack = [value]
    max_digits = limits.max_integer_digits
    max_len = limits.max_string_length
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if len(key) > max_len:
                    raise RemoteProtocolError("string too long", code=PARSE_ERROR, http_status=413)
                stack.append(sub)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if len(item) > max_len:
                raise RemoteProtocolError("string too long", code=PARSE_ERROR, http_status=413)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and abs(item) >= _digits_bound(max_digits):
            raise RemoteProtocolError(
                "integer has too many digits", code=PARSE_ERROR, http_status=400
            )


def parse(data: bytes | bytearray | memoryview | str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Bytes to a JSON value, or `RemoteProtocolError` with code -32700.

    Never raises anything else, whatever the input.
    """
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            raise RemoteProtocolError("message is not valid UTF-8", code=PARSE_ERROR) from None
    else:
        data = bytes(data)
    size = len(data)
    if size > limits.max_message_bytes:
        raise RemoteProtocolError(
            f"message of {size} bytes exceeds the limit of {limits.max_message_bytes}",
            code=PARSE_ERROR,
            http_status=413,
        )
    depth_limit = limits.max_depth
    if (
        size > depth_limit
        and data.count(b"[") + data.count(b"{") > depth_limit
        and _max_depth(data) > depth_limit
    ):
        raise RemoteProtocolError(
            f"message nests deeper than {depth_limit} levels", code=PARSE_ERROR
        )
    try:
        value = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        raise RemoteProtocolError(f"parse error: {exc}", code=PARSE_ERROR) from None
    # Only a message longer than a limit can break it, so small ones skip the scans.
    if (
        size > limits.max_integer_digits and _Scan.digits(limits.max_integer_digits).search(data)
    ) or size > limits.max_string_length:
        _walk_for_limits(value, limits)
    return value


def is_request_id(value: object) -> TypeGuard[int | str]:
    """JSON-RPC ids are strings or integers; null, floats and booleans are not."""
    kind = type(value)
    return kind is int or kind is str


def recover_id(obj: object) -> RequestId | None:
    """The id of a malformed message, when it can be read, for the error reply."""
    if isinstance(obj, dict):
        candidate = obj.get("id")
        if is_request_id(candidate):
            return candidate
    return None


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes with no embedded newline.

    Falls back to ASCII-escaped stdlib output for strings the fast encoder
    refuses (lone surrogates), so an error that quotes bad input still encodes.
    """
    try:
        return pydantic_core.to_json(obj, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, default=str).encode()


def error_object(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def encode_request(request_id: RequestId, method: str, params: Mapping[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return dumps(msg)


def encode_notification(method: str, params: Mapping[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return dumps(msg)


def encode_result(request_id: RequestId, result: Mapping[str, Any]) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def encode_error(
    request_id: RequestId | None, error: Mapping[str, Any], *, omit_id: bool = False
) -> bytes:
    if omit_id:
        return dumps({"jsonrpc": "2.0", "error": error})
    return dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
