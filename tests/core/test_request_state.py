"""Tests for the `requestState` sealer: bindings, rotation, framing, forgeries."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import math
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_core._request_state as rs_module
from mcp_core._request_state import (
    INVALID_REQUEST_STATE_MESSAGE,
    RequestStateError,
    RequestStateSealer,
)

# The property tests marked NO_COVER run without coverage tracing (pytest-cov's
# `no_cover`), as tests/fuzz's generated tests do: the tracer about doubled their CPU
# time (test_http_headers.py alone: 18 s of CPU with it, 10 s without), and the
# example tests beside them reach the same code. What each asserts is unchanged.
NO_COVER = pytest.mark.no_cover

KEY_A = hashlib.sha256(b"test key A").digest()
KEY_B = hashlib.sha256(b"test key B").digest()
KEY_C = hashlib.sha256(b"test key C").digest() + b"longer keys are fine"
AUD = "weather-server"
T0 = 1_000_000.0

CTX: dict[str, Any] = {
    "method": "tools/call",
    "target": "book_table",
    "arguments": {"date": "2026-08-01", "party": 4, "notes": ["window", None]},
    "principal": "client-1|https://issuer.example|alice",
    "wall_time": T0,
}
STATE: Any = {"step": 2, "answers": {"confirm": True}, "nonce": "n-1"}

B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def sealer(*keys: bytes, audience: str = AUD, **kwargs: Any) -> RequestStateSealer:
    return RequestStateSealer(list(keys) or [KEY_A], audience=audience, **kwargs)


def ctx(**changes: Any) -> dict[str, Any]:
    return {**CTX, **changes}


def reason_of(s: RequestStateSealer, token: object, **changes: Any) -> str:
    with pytest.raises(RequestStateError) as info:
        s.unseal(token, **ctx(**changes))
    return info.value.reason


def b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def forge(s: RequestStateSealer, payload: bytes | str | Any) -> str:
    """A MAC-valid token around an arbitrary payload, as only a key holder could make."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8", "surrogatepass")
    elif not isinstance(payload, bytes):
        payload = json.dumps(payload).encode()
    return s._encode(s._sealing_key, payload)


def good_claims(s: RequestStateSealer) -> dict[str, Any]:
    token = s.seal(STATE, **CTX)
    claims: dict[str, Any] = json.loads(b64d(token.split(".")[1])[4:])
    return claims


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize(
    "state",
    [
        STATE,
        None,
        0,
        -1.5,
        "plain",
        "unicode ✓ \u00e9 \U0001f600",
        [],
        [1, [2, [3, {"x": None}]]],
        {"": "", "nested": {"a": [True, False]}},
    ],
)
def test_round_trip_returns_the_state(state: Any) -> None:
    s = sealer()
    token = s.seal(state, **CTX)
    assert s.unseal(token, **CTX) == state


def test_token_layout_is_v1_and_canonical_unpadded_base64url() -> None:
    token = sealer().seal(STATE, **CTX)
    version, body, mac = token.split(".")
    assert version == "v1"
    assert token.isascii() and "=" not in token
    assert set(body + mac) <= set(B64_ALPHABET)
    assert len(b64d(mac)) == 32
    assert b64e(b64d(body)) == body


def test_seal_is_deterministic_for_same_inputs() -> None:
    # No randomness source in the core: the same inputs give the same token.
    assert sealer().seal(STATE, **CTX) == sealer().seal(STATE, **CTX)


def test_none_and_empty_arguments_are_the_same_and_key_order_is_irrelevant() -> None:
    s = sealer()
    token = s.seal(STATE, **ctx(arguments=None))
    assert s.unseal(token, **ctx(arguments={})) == STATE
    token = s.seal(STATE, **ctx(arguments={}))
    assert s.unseal(token, **ctx(arguments=None)) == STATE
    token = s.seal(STATE, **ctx(arguments={"b": 1, "a": {"y": 2, "x": 1}}))
    assert s.unseal(token, **ctx(arguments={"a": {"x": 1, "y": 2}, "b": 1})) == STATE


def test_state_is_readable_by_the_client_so_it_must_hold_no_secrets() -> None:
    # Documented property: signed, not encrypted.
    token = sealer().seal({"visible": "yes"}, **CTX)
    claims = json.loads(b64d(token.split(".")[1])[4:])
    assert claims["s"] == {"visible": "yes"}
    assert claims["m"] == "tools/call" and claims["t"] == "book_table"
    assert claims["exp"] == T0 + 600.0
    # ...but the arguments and principal appear only as keyed digests.
    assert "alice" not in json.dumps(claims) and "2026-08-01" not in json.dumps(claims)


def test_replay_within_ttl_by_same_principal_is_accepted() -> None:
    # Documented: the bindings do not make state single-use; that needs server state.
    s = sealer()
    token = s.seal(STATE, **CTX)
    for dt in (0.0, 1.0, 599.0):
        assert s.unseal(token, **ctx(wall_time=T0 + dt)) == STATE


# --------------------------------------------------------------------------- rotation


def test_rotation() -> None:
    old = sealer(KEY_A)
    old_token = old.seal(STATE, **CTX)

    rotated = sealer(KEY_B, KEY_A)
    assert rotated.unseal(old_token, **CTX) == STATE  # old key still in the ring
    new_token = rotated.seal(STATE, **CTX)
    assert new_token != old_token
    assert sealer(KEY_B).unseal(new_token, **CTX) == STATE  # sealed with keys[0]
    assert reason_of(old, new_token) == "unknown_key"

    retired = sealer(KEY_B)
    assert reason_of(retired, old_token) == "unknown_key"
    assert retired.unseal(new_token, **CTX) == STATE


def test_key_id_selects_key_and_other_keys_do_not_verify() -> None:
    s = sealer(KEY_A, KEY_B, KEY_C)
    token = sealer(KEY_C).seal(STATE, **CTX)
    assert s.unseal(token, **CTX) == STATE
    # Same payload and MAC, kid of another ring key: the MAC no longer verifies.
    _, body, mac = token.split(".")
    raw = b64d(body)
    kid_a = b64d(sealer(KEY_A).seal(STATE, **CTX).split(".")[1])[:4]
    swapped = f"v1.{b64e(kid_a + raw[4:])}.{mac}"
    assert reason_of(s, swapped) == "bad_signature"


# --------------------------------------------------------------------------- bindings


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"method": "prompts/get"}, "wrong_method"),
        ({"method": "resources/read"}, "wrong_method"),
        ({"target": "book_table2"}, "wrong_target"),
        ({"target": "Book_table"}, "wrong_target"),
        ({"arguments": {**CTX["arguments"], "party": 5}}, "wrong_arguments"),
        ({"arguments": {**CTX["arguments"], "party": 4.0}}, "wrong_arguments"),
        ({"arguments": {**CTX["arguments"], "extra": None}}, "wrong_arguments"),
        ({"arguments": None}, "wrong_arguments"),
        ({"arguments": {"date": "2026-08-01"}}, "wrong_arguments"),
        ({"principal": "client-1|https://issuer.example|bob"}, "principal_mismatch"),
        ({"principal": ""}, "principal_mismatch"),
        ({"principal": None}, "principal_mismatch"),
    ],
)
def test_each_wrong_binding_is_rejected(changes: dict[str, Any], reason: str) -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    assert reason_of(s, token, **changes) == reason


def test_resource_uri_target_is_bound() -> None:
    s = sealer()
    token = s.seal(STATE, **ctx(method="resources/read", target="file:///a.txt", arguments=None))
    base = ctx(method="resources/read", arguments=None)
    assert s.unseal(token, **{**base, "target": "file:///a.txt"}) == STATE
    assert reason_of(s, token, **{**base, "target": "file:///b.txt"}) == "wrong_target"


def test_other_audience_with_same_keys_is_rejected() -> None:
    token = sealer(KEY_A, audience="server-one").seal(STATE, **CTX)
    other = sealer(KEY_A, audience="server-two")
    assert reason_of(other, token) == "wrong_audience"
    assert sealer(KEY_A, audience="server-one").unseal(token, **CTX) == STATE


def test_principal_drift_both_ways() -> None:
    s = sealer()
    anonymous = s.seal(STATE, **ctx(principal=None))
    assert s.unseal(anonymous, **ctx(principal=None)) == STATE
    assert reason_of(s, anonymous, principal="alice") == "principal_mismatch"
    assert reason_of(s, anonymous, principal="") == "principal_mismatch"
    authenticated = s.seal(STATE, **ctx(principal="alice"))
    assert reason_of(s, authenticated, principal=None) == "principal_mismatch"


def test_non_str_principal_or_target_at_unseal_fails_closed() -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    assert reason_of(s, token, principal=123) == "principal_mismatch"
    assert reason_of(s, token, target=None) == "wrong_target"
    assert reason_of(s, token, method=b"tools/call") == "wrong_method"
    assert reason_of(s, token, arguments=[("date", "2026-08-01")]) == "wrong_arguments"
    assert reason_of(s, token, arguments={"x": math.nan}) == "wrong_arguments"
    assert reason_of(s, token, arguments={"x": object()}) == "wrong_arguments"


# --------------------------------------------------------------------------- time


def test_expiry_boundaries() -> None:
    s = sealer(ttl=600.0)
    token = s.seal(STATE, **CTX)
    assert s.unseal(token, **ctx(wall_time=T0 + 599.999)) == STATE
    assert reason_of(s, token, wall_time=T0 + 600.0) == "expired"
    assert reason_of(s, token, wall_time=T0 + 10_000.0) == "expired"


def test_future_iat_boundaries() -> None:
    s = sealer(max_future_skew=60.0)
    token = s.seal(STATE, **CTX)
    assert s.unseal(token, **ctx(wall_time=T0 - 60.0)) == STATE
    assert reason_of(s, token, wall_time=T0 - 60.001) == "not_yet_valid"
    assert reason_of(s, token, wall_time=T0 - 1e9) == "not_yet_valid"
    strict = sealer(max_future_skew=0.0)
    assert reason_of(strict, token, wall_time=T0 - 0.001) == "not_yet_valid"


def test_lowered_ttl_shortens_tokens_already_issued() -> None:
    token = sealer(ttl=600.0).seal(STATE, **CTX)
    assert reason_of(sealer(ttl=10.0), token, wall_time=T0 + 10.0) == "expired"
    assert sealer(ttl=10.0).unseal(token, **ctx(wall_time=T0 + 9.0)) == STATE
    # A raised TTL does not extend the sealed `exp`.
    assert reason_of(sealer(ttl=6000.0), token, wall_time=T0 + 600.0) == "expired"


@pytest.mark.parametrize("now", [math.nan, math.inf, -math.inf, "1000000", None])
def test_non_finite_or_bogus_now_at_unseal_fails(now: Any) -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    reason_of(s, token, wall_time=now)  # raises RequestStateError, nothing else


# --------------------------------------------------------------------------- framing


@pytest.mark.parametrize(
    "token", [None, 0, 1, True, 1.5, math.nan, b"v1.abc.def", bytearray(b"x"), {}, [], ("v1",)]
)
def test_non_string_tokens(token: object) -> None:
    assert reason_of(sealer(), token) == "not_a_string"


def test_bytes_of_a_valid_token_are_not_accepted() -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    assert reason_of(s, token.encode()) == "not_a_string"


@pytest.mark.parametrize(
    "token",
    [
        "",
        ".",
        "..",
        "v1",
        "v1.",
        "v1..",
        "v1.AAAA",
        "v1.AAAAAAAA.",
        "v1..AAAA",
        "v2.AAAAAAAA.AAAA",
        "V1.AAAAAAAA.AAAA",
        " v1.AAAAAAAA.AAAA",
        "v1.AAAA.AAAA.AAAA",
        "v1.\u00e9AAA.AAAA",
        "v1.AAAA\x00.AAAA",
    ],
)
def test_malformed_tokens(token: str) -> None:
    assert reason_of(sealer(), token) == "bad_format"


def test_huge_tokens_rejected_before_decoding() -> None:
    s = sealer(max_token_bytes=1000)
    assert reason_of(s, "A" * 1001) == "too_large"
    assert reason_of(s, "v1." + "A" * 10_000_000 + ".AAAA") == "too_large"
    assert reason_of(s, "\u00e9" * 1001) == "too_large"
    assert reason_of(s, "\u00e9" * 999) == "bad_format"  # under the cap, but not ASCII
    # A genuine token over another sealer's cap is refused as too large.
    big = sealer().seal("x" * 2000, **CTX)
    assert reason_of(s, big) == "too_large"


def test_seal_refuses_state_that_makes_token_too_large() -> None:
    s = sealer(max_token_bytes=500)
    token = s.seal("x" * 100, **CTX)
    assert len(token) <= 500
    with pytest.raises(ValueError, match="max_token_bytes"):
        s.seal("x" * 500, **CTX)
    default = sealer()
    with pytest.raises(ValueError, match="max_token_bytes"):
        default.seal("x" * 16384, **CTX)


def test_token_exactly_at_limit_is_accepted() -> None:
    probe = sealer().seal("", **CTX)
    for extra in range(4):
        token = sealer().seal("y" * (50 + extra), **CTX)
        s = sealer(max_token_bytes=len(token))
        assert s.seal("y" * (50 + extra), **CTX) == token
        assert s.unseal(token, **CTX) == "y" * (50 + extra)
    assert probe.startswith("v1.")


def test_padding_and_non_canonical_base64_rejected() -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    _, body, mac = token.split(".")
    assert len(mac) == 43  # 32 bytes: the last char carries 2 unused bits
    variants = [
        f"v1.{body}.{mac}=",
        f"v1.{body}=.{mac}",
        f"v1.{body}.{mac}==",
        f"v1.{body}.{mac}\n",
        f"v1.{body} .{mac}",
        f"v1.{body.replace('-', '+').replace('_', '/')}.{mac.replace('-', '+').replace('_', '/')}",
        f"v1.{body}.{mac}A",  # length % 4 == 1 is never valid base64
    ]
    # Same decoded bytes, different spelling: set the unused low bits of the last char.
    last = B64_ALPHABET.index(mac[-1])
    for low in (1, 2, 3):
        twin = mac[:-1] + B64_ALPHABET[last | low]
        if twin != mac:
            assert b64d(twin) == b64d(mac)
            variants.append(f"v1.{body}.{twin}")
    if len(body) % 4 in (2, 3):
        unused = 4 if len(body) % 4 == 2 else 2
        last = B64_ALPHABET.index(body[-1])
        twin = body[:-1] + B64_ALPHABET[last | ((1 << unused) - 1)]
        if twin != body:
            assert b64d(twin) == b64d(body)
            variants.append(f"v1.{twin}.{mac}")
    assert len(variants) >= 9
    for variant in variants:
        assert variant != token
        assert reason_of(s, variant) == "bad_format", variant


def test_the_last_character_decides_canonical_as_encoding_back_does() -> None:
    """`_b64decode` judges a canonical spelling by its last character: for every text of
    one to four bytes' length and every last character, it accepts exactly the texts
    that encode back to themselves (the check it replaced)."""
    rng = random.Random(7)
    for size in range(1, 5):
        for _ in range(20):
            text = b64e(rng.randbytes(size))
            for last in B64_ALPHABET:
                variant = text[:-1] + last
                canonical = b64e(b64d(variant)) == variant
                try:
                    rs_module._b64decode(variant)
                    accepted = True
                except RequestStateError:
                    accepted = False
                assert accepted == canonical, variant


# ------------------------------------------------------- what a sealer remembers


def test_a_sealer_with_nothing_remembered_judges_alike() -> None:
    """The retry may reach another process (or a memory cleared meanwhile): a sealer
    sharing the keys, that sealed nothing, accepts the same token and refuses the same
    changes as the one that sealed it."""
    s, other = sealer(), sealer()
    token = s.seal(STATE, **CTX)
    assert other.unseal(token, **CTX) == s.unseal(token, **CTX) == STATE
    for changes, reason in [
        ({"arguments": {"date": "2026-08-02"}}, "wrong_arguments"),
        ({"principal": "mallory"}, "principal_mismatch"),
        ({"wall_time": T0 + 601}, "expired"),
        ({"target": "other"}, "wrong_target"),
    ]:
        assert reason_of(s, token, **changes) == reason_of(other, token, **changes) == reason


def test_an_issued_token_is_rechecked_for_time_and_bindings() -> None:
    """Knowing a token authentic (sealed here lately) skips its decoding and MAC, not
    the claims: expiry, arguments, principal and target are judged as always."""
    s = sealer()
    token = s.seal(STATE, **CTX)
    assert token in s._issued
    assert reason_of(s, token, wall_time=T0 + 600) == "expired"
    assert reason_of(s, token, arguments={**CTX["arguments"], "party": 5}) == "wrong_arguments"
    assert reason_of(s, token, arguments=None) == "wrong_arguments"
    assert reason_of(s, token, principal=None) == "principal_mismatch"
    assert reason_of(s, token, principal="bob") == "principal_mismatch"
    assert reason_of(s, token, method="prompts/get") == "wrong_method"
    assert s.unseal(token, **CTX) == STATE
    # One character off is another token: not remembered, and refused by its MAC.
    _, body, mac = token.split(".")
    flipped = mac[:-2] + ("A" if mac[-2] != "A" else "B") + mac[-1]
    assert reason_of(s, f"v1.{body}.{flipped}") == "bad_signature"


def test_the_state_comes_back_fresh_from_a_remembered_token() -> None:
    s = sealer()
    state = {"list": [1, 2]}
    token = s.seal(state, **CTX)
    state["list"].append(3)  # the application changes its object after sealing
    first = s.unseal(token, **CTX)
    assert first == {"list": [1, 2]}
    first["list"].append(4)
    assert s.unseal(token, **CTX) == {"list": [1, 2]}


def test_the_memories_are_bounded() -> None:
    s = sealer()
    key = s._sealing_key
    for i in range(3 * rs_module._MEMORY_ENTRIES):
        s.seal(STATE, **ctx(arguments={"i": i}, principal=f"user-{i}"))
    assert 0 < len(s._issued) <= rs_module._MEMORY_ENTRIES
    assert 0 < len(key._sealed_args) <= rs_module._MEMORY_ENTRIES
    assert 0 < len(key._principals) <= rs_module._MEMORY_ENTRIES
    # Long arguments and long tokens are not kept, and judged in full.
    s = sealer()
    key = s._sealing_key
    big = {"text": "x" * rs_module._MEMORY_TOKEN_BYTES}
    token = s.seal(STATE, **ctx(arguments=big))
    assert token in s._issued and not key._sealed_args
    assert s.unseal(token, **ctx(arguments=big)) == STATE
    assert reason_of(s, token, arguments={"text": "y"}) == "wrong_arguments"
    token = s.seal(big, **CTX)
    assert token not in s._issued and len(key._sealed_args) == 1
    assert s.unseal(token, **CTX) == big


def test_unknown_key_id_and_bad_signature() -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    _, body, mac = token.split(".")
    raw = bytearray(b64d(body))
    raw[0] ^= 1
    assert reason_of(s, f"v1.{b64e(bytes(raw))}.{mac}") == "unknown_key"
    raw = bytearray(b64d(body))
    raw[-1] ^= 0x80
    assert reason_of(s, f"v1.{b64e(bytes(raw))}.{mac}") == "bad_signature"
    bad_mac = bytearray(b64d(mac))
    bad_mac[0] ^= 1
    assert reason_of(s, f"v1.{body}.{b64e(bytes(bad_mac))}") == "bad_signature"
    assert reason_of(s, f"v1.{body}.{b64e(b64d(mac)[:31])}") == "bad_format"
    assert reason_of(s, f"v1.{b64e(b64d(body)[:4])}.{mac}") == "bad_format"


def test_errors_carry_only_the_uniform_message() -> None:
    s = sealer()
    token = s.seal(STATE, **CTX)
    cases: list[tuple[object, dict[str, Any]]] = [
        (None, {}),
        ("", {}),
        (token, {"wall_time": T0 + 1e6}),
        (token, {"principal": "mallory"}),
        (token[:-2] + "AA", {}),
    ]
    reasons = set()
    for bad, changes in cases:
        with pytest.raises(RequestStateError) as info:
            s.unseal(bad, **ctx(**changes))
        assert str(info.value) == INVALID_REQUEST_STATE_MESSAGE
        assert info.value.args == (INVALID_REQUEST_STATE_MESSAGE,)
        assert info.value.reason in repr(info.value)
        reasons.add(info.value.reason)
    assert len(reasons) == len(cases)
    assert INVALID_REQUEST_STATE_MESSAGE == "Invalid or expired requestState"


# --------------------------------------------------------------------------- MAC-valid junk


def _claims_with(**changes: Any) -> dict[str, Any]:
    claims = good_claims(sealer())
    for name, value in changes.items():
        if value is _DELETE:
            del claims[name]
        else:
            claims[name] = value
    return claims


_DELETE = object()


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\xff\xfe",
        b"not json",
        b"[1, 2]",
        b'"str"',
        b"null",
        b"{}",
        b"[" * 100_000 + b"]" * 100_000,
        "{\ud800}",
        "1" * 5000,
    ],
)
def test_mac_valid_but_malformed_payloads_are_rejected(payload: bytes | str) -> None:
    s = sealer(max_token_bytes=1_000_000)
    token = forge(s, payload)
    if payload == b"":
        assert reason_of(s, token) == "bad_format"  # kid only, no payload
    else:
        assert reason_of(s, token) == "bad_claims"


@pytest.mark.parametrize(
    "changes",
    [
        {"v": 2},
        {"v": True},
        {"v": 1.0},
        {"v": "1"},
        {"v": _DELETE},
        {"iat": "1000000"},
        {"iat": True},
        {"iat": None},
        {"iat": 10**30},
        {"exp": [T0 + 600]},
        {"exp": T0},
        {"exp": T0 - 1},
        {"exp": _DELETE},
        {"m": 1},
        {"t": None},
        {"a": {"x": 1}},
        {"aud": ["weather-server"]},
        {"p": 5},
        {"p": None},
        {"s": _DELETE},
        {"extra": 1},
    ],
)
def test_mac_valid_claims_of_wrong_type_are_rejected(changes: dict[str, Any]) -> None:
    s = sealer()
    assert reason_of(s, forge(s, _claims_with(**changes))) == "bad_claims"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("claim", ["iat", "exp"])
def test_non_finite_time_claims_never_pass(claim: str, constant: str) -> None:
    s = sealer()
    text = json.dumps(_claims_with(**{claim: "@@"})).replace('"@@"', constant)
    assert reason_of(s, forge(s, text)) == "bad_claims"


def test_forge_helper_produces_accepted_tokens_for_good_claims() -> None:
    # Guards the MAC-valid tests above against passing for the wrong reason.
    s = sealer()
    assert s.unseal(forge(s, good_claims(s)), **CTX) == STATE


# --------------------------------------------------------------------------- seal/constructor errors


@pytest.mark.parametrize(
    "state", [math.nan, {"x": math.inf}, {1, 2}, object(), b"bytes", {"k": (1, math.nan)}]
)
def test_seal_rejects_non_json_state(state: Any) -> None:
    with pytest.raises(ValueError):
        sealer().seal(state, **CTX)


def test_seal_rejects_bad_arguments_and_now() -> None:
    s = sealer()
    with pytest.raises(ValueError):
        s.seal(STATE, **ctx(arguments={"x": math.nan}))
    with pytest.raises(ValueError):
        s.seal(STATE, **ctx(arguments=[("x", 1)]))
    for now in (math.nan, math.inf, True, 10**40):
        with pytest.raises(ValueError):
            s.seal(STATE, **ctx(wall_time=now))
    with pytest.raises(TypeError):
        s.seal(STATE, **ctx(method=None))
    with pytest.raises(TypeError):
        s.seal(STATE, **ctx(principal=42))


def test_seal_with_integer_now_round_trips() -> None:
    s = sealer()
    token = s.seal(STATE, **ctx(wall_time=1_700_000_000))
    assert s.unseal(token, **ctx(wall_time=1_700_000_100)) == STATE


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"keys": []}, ValueError),
        ({"keys": [b"x" * 31]}, ValueError),
        ({"keys": [KEY_A, b""]}, ValueError),
        ({"keys": [KEY_A, KEY_A]}, ValueError),
        ({"keys": KEY_A}, TypeError),
        ({"keys": "k" * 40}, TypeError),
        ({"keys": ["k" * 40]}, TypeError),
        ({"audience": ""}, ValueError),
        ({"audience": None}, ValueError),
        ({"ttl": 0}, ValueError),
        ({"ttl": -1.0}, ValueError),
        ({"ttl": math.nan}, ValueError),
        ({"ttl": math.inf}, ValueError),
        ({"max_future_skew": -1}, ValueError),
        ({"max_future_skew": math.nan}, ValueError),
        ({"max_token_bytes": 0}, ValueError),
        ({"max_token_bytes": True}, ValueError),
        ({"max_token_bytes": 100.0}, ValueError),
    ],
)
def test_constructor_validation(kwargs: dict[str, Any], error: type[Exception]) -> None:
    args: dict[str, Any] = {"keys": [KEY_A], "audience": AUD, **kwargs}
    with pytest.raises(error):
        RequestStateSealer(**args)


def test_constructor_accepts_bytes_like_keys_and_exposes_settings() -> None:
    keys: list[Any] = [bytearray(KEY_A), memoryview(KEY_B)]
    s = RequestStateSealer(keys, audience=AUD, ttl=30, max_token_bytes=4096)
    token = s.seal(STATE, **CTX)
    assert sealer(KEY_A).unseal(token, **CTX) == STATE
    assert (s.audience, s.ttl, s.max_token_bytes) == (AUD, 30.0, 4096)


# --------------------------------------------------------------------------- purity


def test_module_imports_only_pure_stdlib() -> None:
    tree = ast.parse(Path(rs_module.__file__).read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    allowed = {"__future__", "base64", "hashlib", "hmac", "json", "math", "re"}
    allowed |= {"collections", "typing"}
    assert imported <= allowed, imported - allowed


# --------------------------------------------------------------------------- mutation test

MUTATION_COUNT_MIN = 10_000


def _bases(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Distinct valid tokens with their contexts, from two rings and two audiences."""
    out = []
    contexts = [
        ctx(),
        ctx(principal=None),
        ctx(method="prompts/get", target="greeting", arguments={"name": "Ada"}),
        ctx(method="resources/read", target="file:///x", arguments=None, principal="bob"),
    ]
    sealers = [sealer(KEY_A), sealer(KEY_B, KEY_A), sealer(KEY_A, audience="other")]
    for i in range(12):
        s = sealers[i % len(sealers)]
        c = {**contexts[i % len(contexts)], "wall_time": T0 + i}
        state = {"i": i, "pad": "p" * rng.randrange(0, 60), "r": rng.random()}
        out.append((s.seal(state, **c), {**c, "_sealer": s, "_state": state}))
    return out


def _accepts(s: RequestStateSealer, token: object, c: dict[str, Any]) -> bool:
    args = {k: v for k, v in c.items() if not k.startswith("_")}
    try:
        s.unseal(token, **args)
    except RequestStateError as exc:
        _REASONS[exc.reason] += 1
        return False
    return True


_REASONS: Counter[str] = Counter()


def _same(name: str, a: Any, b: Any) -> bool:
    if name == "arguments":
        return bool((a or {}) == (b or {}))
    return bool(a == b)


def _flip_bit(token: str, rng: random.Random) -> str:
    version, body, mac = token.split(".")
    part = rng.randrange(3)
    source = version.encode() if part == 2 else b64d(body if part == 0 else mac)
    raw = bytearray(source)
    for _ in range(rng.choice((1, 1, 1, 2, 8))):
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    if part == 2:
        return f"{raw.decode('latin-1')}.{body}.{mac}"
    new = b64e(bytes(raw))
    return f"{version}.{new}.{mac}" if part == 0 else f"{version}.{body}.{new}"


def _substitute(token: str, rng: random.Random) -> str:
    pool = B64_ALPHABET + "=+/.~ \n\x00é\ud800"
    i = rng.randrange(len(token))
    choice = rng.choice([c for c in pool if c != token[i]])
    return token[:i] + choice + token[i + 1 :]


def _junk(rng: random.Random) -> str:
    pool = B64_ALPHABET + "=.+/ \t"
    return "".join(rng.choice(pool) for _ in range(rng.randrange(1, 12)))


def _insert_or_delete(token: str, rng: random.Random) -> str:
    i = rng.randrange(len(token))
    if rng.random() < 0.5:
        return token[:i] + token[i + 1 :]
    return token[:i] + rng.choice(B64_ALPHABET + ".=") + token[i:]


def test_mutation_of_valid_tokens_is_never_accepted() -> None:
    rng = random.Random(20260728)
    _REASONS.clear()
    bases = _bases(rng)
    for token, c in bases:  # sanity: every base token is genuinely valid
        assert (
            c["_sealer"].unseal(token, **{k: v for k, v in c.items() if k[0] != "_"})
            == (c["_state"])
        )
    attempts = 0
    accepted: list[tuple[str, object]] = []

    def check(kind: str, token: object, c: dict[str, Any], original: str) -> None:
        nonlocal attempts
        if token == original and kind not in ("replay", "expired", "future", "context"):
            return  # identity mutation, not a forgery
        attempts += 1
        if _accepts(c["_sealer"], token, c):
            accepted.append((kind, token))

    mutators: list[tuple[str, Callable[[str, random.Random], str], int]] = [
        ("bitflip", _flip_bit, 300),
        ("substitute", _substitute, 250),
        ("junk", lambda t, r: t + _junk(r), 60),
        ("prefix-junk", lambda t, r: _junk(r) + t, 30),
        ("insdel", _insert_or_delete, 120),
    ]
    for token, c in bases:
        for kind, mutate, n in mutators:
            for _ in range(n):
                check(kind, mutate(token, rng), c, token)
        for length in range(len(token)):
            check("truncate", token[:length], c, token)
            check("tail", token[length + 1 :], c, token)

    # Payload of one token with the MAC (and/or kid) of another.
    for token, c in bases:
        v, body, mac = token.split(".")
        for other, _ in bases:
            if other == token:
                continue
            _, obody, omac = other.split(".")
            check("swap-mac", f"{v}.{body}.{omac}", c, token)
            check("swap-body", f"{v}.{obody}.{mac}", c, token)
            raw, oraw = b64d(body), b64d(obody)
            check("swap-kid", f"{v}.{b64e(oraw[:4] + raw[4:])}.{mac}", c, token)
            check(
                "splice",
                f"{v}.{b64e(raw[: len(raw) // 2] + oraw[len(oraw) // 2 :])}.{mac}",
                c,
                token,
            )

    # Genuine tokens, minted for another context, replayed against this one.
    variations: list[dict[str, Any]] = [
        {"method": "prompts/get"},
        {"method": "resources/read"},
        {"target": "book_table_v2"},
        {"target": "greeting2"},
        {"arguments": {"date": "2026-08-02", "party": 4, "notes": ["window", None]}},
        {"arguments": {"name": "Eve"}},
        {"arguments": {}},
        {"principal": "mallory"},
        {"principal": "alice"},
        {"principal": None},
    ]
    for token, c in bases:
        s = c["_sealer"]
        for _ in range(150):
            change = rng.choice(variations)
            minted = {**c, **change}
            if all(_same(k, minted[k], c[k]) for k in change):
                continue  # an equivalent context would rightly be accepted
            fake = s.seal({"evil": True}, **{k: v for k, v in minted.items() if k[0] != "_"})
            check("context", fake, c, token)
        other_aud = sealer(KEY_A, audience=s.audience + "-2")
        for _ in range(20):
            fake = other_aud.seal(c["_state"], **{k: v for k, v in c.items() if k[0] != "_"})
            check("context", fake, c, token)
        for _ in range(100):
            check(
                "expired",
                token,
                {**c, "wall_time": c["wall_time"] + 600 + rng.random() * 1e6},
                token,
            )
            check(
                "future",
                token,
                {**c, "wall_time": c["wall_time"] - 60.001 - rng.random() * 1e6},
                token,
            )
            someone = rng.choice(["mallory", "bob", "", "alice ", "ALICE", None, "\ud800"])
            if someone != c["principal"]:
                check("replay", token, {**c, "principal": someone}, token)

    assert accepted == []
    assert attempts >= MUTATION_COUNT_MIN, attempts
    # The mutations reached every layer, not only the framing checks.
    for reason in (
        "bad_format",
        "unknown_key",
        "bad_signature",
        "expired",
        "not_yet_valid",
        "wrong_method",
        "wrong_target",
        "wrong_arguments",
        "wrong_audience",
        "principal_mismatch",
    ):
        assert _REASONS[reason] > 0, (reason, _REASONS)
    # What bounds the cost of a hostile token is not timed here: its length is capped
    # before any decoding (test_huge_tokens_rejected_before_decoding).


# --------------------------------------------------------------------------- properties


def _json_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=8), children, max_size=4
    )


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    _json_containers,
    max_leaves=20,
)


@NO_COVER
@settings(max_examples=100, deadline=None)
@given(state=json_values, arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_property_round_trip_any_json(state: Any, arguments: dict[str, Any]) -> None:
    s = sealer()
    c = ctx(arguments=arguments)
    assert s.unseal(s.seal(state, **c), **c) == state


@NO_COVER
@settings(max_examples=300, deadline=None)
@given(
    token=st.one_of(
        st.text(max_size=200),
        st.text(alphabet=B64_ALPHABET + ".=", max_size=200).map(lambda t: "v1." + t),
        st.binary(max_size=64),
        json_values,
    )
)
def test_property_arbitrary_input_only_raises_request_state_error(token: object) -> None:
    with pytest.raises(RequestStateError):
        sealer().unseal(token, **CTX)
