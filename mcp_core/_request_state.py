"""Sealing and verifying the MRTR `requestState` token (MCP revision 2026-07-28).

A server that answers `tools/call`, `prompts/get` or `resources/read` with an
`InputRequiredResult` may attach an opaque `requestState`; the client echoes it
on the retry. The echoed string is attacker-controlled, so the engine seals it
here and verifies it before any handler sees it.

Token layout (ASCII, canonical unpadded base64url only)::

    "v1." + b64url(kid[4] || payload_json) + "." + b64url(HMAC-SHA256(mac_key, b"v1." || kid || payload_json))

The MAC covers the version prefix and the key id, so a token cannot be moved to
another format version or another key slot. The algorithm is never named in
the token; the version fixes it. Each ring key gets its own MAC, principal and
argument sub-keys and a 4-byte key id, all derived with HKDF (RFC 5869,
HMAC-SHA256) under the context label ``mcp-sansio/request-state/v1``, so the
verifier picks the key from the id instead of trying every key.

**The state is signed, not encrypted.** The spec does not require
confidentiality, and a client can base64-decode the payload and read `s`, the
method, the target and the expiry. Never put secrets (tokens, passwords,
other users' data) in the state; keep an opaque id and look the data up
server-side if it must stay private. The argument digest and the principal
hash are keyed, so the token does not let a reader confirm guesses of them.

What each claim binding prevents:

* ``v``: replaying a token across format versions.
* ``iat``/``exp``: use after the TTL (``exp = iat + ttl``; a TTL lowered in the
  configuration also shortens tokens already issued) and tokens dated in the
  future beyond ``max_future_skew``.
* ``m``: replaying the state of, say, a ``prompts/get`` on a ``tools/call``.
* ``t``: replaying one tool's (prompt's, resource's) state on another one.
* ``a``: replaying the state with changed arguments (keyed 16-byte digest of
  the canonical sorted-keys compact JSON; ``None`` and ``{}`` are the same).
* ``aud``: replaying between services that share keys but not an audience.
* ``p``: replaying another principal's state, and principal drift (present
  at seal but absent at verify, or the reverse).

**Replay within the TTL by the same principal is accepted**, for the same
method, target and arguments: these checks make the state hard to misuse, not
single-use. The spec says one-time semantics must be enforced with
server-side state (e.g. a nonce in the state plus a store of used nonces).

Every verification failure raises `RequestStateError`; its `reason` is for
server logs only, and the wire answer is always `INVALID_REQUEST_STATE_MESSAGE`
so a client gets no oracle.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

__all__ = [
    "INVALID_REQUEST_STATE_MESSAGE",
    "RequestStateError",
    "RequestStateSealer",
]

INVALID_REQUEST_STATE_MESSAGE = "Invalid or expired requestState"

# The HKDF salt and info prefix: a key shared with other uses (or other libraries)
# yields unrelated sub-keys here, so tokens cannot be minted with material from
# elsewhere.
_LABEL = b"mcp-sansio/request-state/v1"
_VERSION = "v1"
_PREFIX = b"v1."
_KID_LEN = 4
_MAC_LEN = 32
_DIGEST_LEN = 16
_MIN_KEY_LEN = 32
# An unknown claim is refused rather than ignored: a token we minted never has one,
# so one that does was made with a leaked key or by a bug, and is not to be trusted.
_CLAIMS_REQUIRED = frozenset({"v", "iat", "exp", "m", "t", "a", "aud", "s"})
_CLAIMS_ALLOWED = _CLAIMS_REQUIRED | {"p"}
# Timestamps are JSON numbers; beyond 2**53 a float no longer holds every integer,
# so `iat + ttl` and the comparisons with it would round.
_MAX_INT = 2**53
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
# The last character of a canonical unpadded base64url text, by the text's length mod 4:
# after 2 characters (one byte) its low 4 bits are zero, after 3 (two bytes) its low 2.
# Any other last character carries non-zero trailing bits, a second spelling.
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_LAST_CHAR: dict[int, frozenset[str]] = {
    0: frozenset(_ALPHABET),
    2: frozenset(_ALPHABET[::16]),
    3: frozenset(_ALPHABET[::4]),
}
# The encoders (and `_CLAIMS`, the decoder), made once: `json.dumps`/`json.loads` with
# any option build a new one per call (about half of the canonical encoding's cost);
# these give the same text and the same values.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
_COMPACT = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
# Bounds of each key's memories (`_Key`): entries, and the largest canonical arguments
# kept. Cleared whole when full, like the process-wide tables (docs/limits.md).
_MEMORY_ENTRIES = 256
_MEMORY_ARGS_BYTES = 1024
# The largest token a sealer remembers having issued (`RequestStateSealer._issued`).
_MEMORY_TOKEN_BYTES = 2048


class RequestStateError(Exception):
    """A `requestState` failed verification.

    `str(exc)` is always the uniform wire message, so logging or echoing the
    exception never leaks which check failed; `reason` (e.g. ``"expired"``,
    ``"bad_signature"``, ``"principal_mismatch"``) is for server logs only.
    """

    def __init__(self, reason: str) -> None:
        """`reason` names the failed check; the message stays the uniform one."""
        super().__init__(INVALID_REQUEST_STATE_MESSAGE)
        self.reason = reason

    def __repr__(self) -> str:
        """Shows the reason, for server logs and test failures; `str()` never does, since
        `str()` is what reaches error responses.
        """
        return f"RequestStateError(reason={self.reason!r})"


def _fail(reason: str) -> NoReturn:
    """Raise `RequestStateError(reason)`; typed NoReturn so checks read as guards."""
    raise RequestStateError(reason)


def _hkdf(ikm: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA256 (RFC 5869), salt = the context label, for `length` <= 32."""
    prk = hmac.digest(_LABEL, ikm, hashlib.sha256)
    return hmac.digest(prk, _LABEL + b"/" + info + b"\x01", hashlib.sha256)[:length]


def _b64encode(raw: bytes) -> str:
    """Unpadded base64url: the token travels in JSON and perhaps in URLs or logs, where
    `+`, `/` and `=` would need escaping.
    """
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """Decode canonical unpadded base64url only, so each token has one spelling.

    Canonical is judged by the last character alone (`_LAST_CHAR`): with the alphabet
    checked and no length of 1 mod 4, the trailing bits it holds are the only other
    spelling a text can have; the same answer as encoding the bytes back and comparing.
    """
    tail = len(text) % 4
    if _B64URL.fullmatch(text) is None or tail == 1 or (text and text[-1] not in _LAST_CHAR[tail]):
        _fail("bad_format")
    return base64.urlsafe_b64decode(text + "=" * (-tail % 4))


def _canonical_arguments(arguments: Mapping[str, Any] | None) -> bytes:
    """Sorted-keys compact strict ASCII JSON; raises ValueError/TypeError if not JSON.

    `None` and ``{}`` both mean "no arguments", as on the wire.
    """
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, Mapping):
        raise TypeError("arguments must be a mapping or None")
    return _CANONICAL.encode(dict(arguments)).encode("ascii")


def _utf8(text: str) -> bytes:
    """UTF-8 that never raises: a lone surrogate (possible in a peer's JSON string)
    still encodes, so the comparison runs instead of raising.
    """
    return text.encode("utf-8", "surrogatepass")


def _reject_constant(name: str) -> NoReturn:
    """`parse_constant` for `json.loads`: NaN and Infinity are not JSON, and a NaN
    claim would make every comparison false and so slip past a negated check.
    """
    raise ValueError(f"non-finite number {name}")


_CLAIMS = json.JSONDecoder(parse_constant=_reject_constant)


def _is_number(value: object) -> bool:
    """A finite float, or an int a float can hold (never a bool, NaN or inf)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and -_MAX_INT < value < _MAX_INT


class _Key:
    """Material derived from one ring key, and what it computed lately.

    Two memories, bounded (`_MEMORY_ENTRIES`, cleared whole when full), so the same
    computation is not made twice in one round trip (seal, then unseal of the retry):
    the principal's digest by principal (the caller's own, on both sides), and the
    canonical arguments by the digest sealed for them (`args_match`).
    """

    __slots__ = ("_principals", "_sealed_args", "args_key", "kid", "mac_key", "principal_key")

    def __init__(self, secret: bytes) -> None:
        """Derive the sub-keys of one ring key. Separate keys per use, so a digest made
        for one purpose (an argument digest, readable in the token) can never stand in
        for a MAC, and the key id reveals nothing usable about the secret.
        """
        self.kid = _hkdf(secret, b"kid", _KID_LEN)
        self.mac_key = _hkdf(secret, b"mac", 32)
        self.principal_key = _hkdf(secret, b"principal", 32)
        self.args_key = _hkdf(secret, b"arguments", 32)
        self._principals: dict[str, str] = {}
        self._sealed_args: dict[str, bytes] = {}

    def mac(self, body: bytes) -> bytes:
        """The token's MAC: over the version prefix too, so a token cannot change format."""
        return hmac.digest(self.mac_key, _PREFIX + body, hashlib.sha256)

    def args_digest(self, canonical: bytes) -> str:
        """A keyed 16-byte digest of the canonical arguments. Keyed, because a plain hash
        of low-entropy arguments (a user id, a yes/no) could be confirmed by guessing;
        16 bytes keep the token short and a collision out of reach.
        """
        return _b64encode(hmac.digest(self.args_key, canonical, hashlib.sha256)[:_DIGEST_LEN])

    def seal_args(self, canonical: bytes) -> str:
        """`args_digest`, remembering `canonical` under it (when short) for `args_match`."""
        digest = self.args_digest(canonical)
        if len(canonical) <= _MEMORY_ARGS_BYTES:
            sealed = self._sealed_args
            if len(sealed) >= _MEMORY_ENTRIES:
                sealed.clear()
            sealed[digest] = canonical
        return digest

    def args_match(self, claimed: str, canonical: bytes) -> bool:
        """Whether `canonical` arguments are those the (authentic) digest `claimed` was
        sealed for.

        When this key sealed `claimed` lately, the arguments it sealed are compared
        with `canonical` directly (equal canonical texts are exactly equal digests),
        so the HMAC is not computed again for the retry of the same call; otherwise
        the digest is. Looked up by the token's own claim, never by the arguments
        given, so how long this takes tells a caller nothing about other calls.
        """
        sealed = self._sealed_args.get(claimed)
        if sealed is not None:
            return hmac.compare_digest(sealed, canonical)
        return hmac.compare_digest(_utf8(claimed), _utf8(self.args_digest(canonical)))

    def principal_digest(self, principal: str) -> str:
        """A keyed digest of the principal, so the token binds the caller without
        showing who it is (the payload is readable, not encrypted). Remembered: a
        caller seals and unseals under the same principal.
        """
        known = self._principals.get(principal)
        if known is not None:
            return known
        digest = hmac.digest(self.principal_key, _utf8(principal), hashlib.sha256)
        text = _b64encode(digest[:_DIGEST_LEN])
        if len(principal) <= _MEMORY_ARGS_BYTES:
            principals = self._principals
            if len(principals) >= _MEMORY_ENTRIES:
                principals.clear()
            principals[principal] = text
        return text


class RequestStateSealer:
    """Seals handler state into a `requestState` token and verifies echoed tokens.

    `keys` is a ring: ``keys[0]`` seals, every key verifies, so rotation is
    "prepend the new key, drop the old one after the TTL". Servers that share
    keys must use distinct `audience` values unless they should accept each
    other's state. Pure: time comes in as `wall_time` (seconds since the epoch,
    as the wall clock gives: every process that shares the keys must agree on it).
    """

    def __init__(
        self,
        keys: Sequence[bytes],
        *,
        audience: str,
        ttl: float = 600.0,
        max_future_skew: float = 60.0,
        max_token_bytes: int = 16384,
    ) -> None:
        """Check and derive the ring once; a bad key is a configuration error, raised here.

        Keys of at least 32 bytes, because HMAC-SHA256 is as strong as its key up to
        that size. `max_future_skew` (60 s) tolerates clocks of different processes
        that disagree a little, since a token sealed on one may be verified on another.
        """
        if isinstance(keys, (bytes, bytearray, memoryview, str)):
            raise TypeError("keys must be a sequence of keys, not a single key")
        ring: list[_Key] = []
        for secret in keys:
            if not isinstance(secret, (bytes, bytearray, memoryview)):
                raise TypeError("each key must be bytes")
            if len(secret) < _MIN_KEY_LEN:
                raise ValueError(f"each key must be at least {_MIN_KEY_LEN} bytes")
            ring.append(_Key(bytes(secret)))
        if not ring:
            raise ValueError("keys must contain at least one key")
        by_kid = {key.kid: key for key in ring}
        if len(by_kid) != len(ring):
            raise ValueError("duplicate key (or key id collision) in keys")
        if not isinstance(audience, str) or not audience:
            raise ValueError("audience must be a non-empty string")
        if not _is_number(ttl) or ttl <= 0:
            raise ValueError("ttl must be a finite number > 0")
        if not _is_number(max_future_skew) or max_future_skew < 0:
            raise ValueError("max_future_skew must be a finite number >= 0")
        if type(max_token_bytes) is not int or max_token_bytes <= 0:
            raise ValueError("max_token_bytes must be a positive int")
        self._sealing_key = ring[0]
        self._by_kid = by_kid
        self._audience = audience
        self._ttl = float(ttl)
        self._max_future_skew = float(max_future_skew)
        self._max_token_bytes = max_token_bytes
        # Tokens sealed lately (the short ones), with their key and decoded body: the
        # retry that echoes one is known authentic without decoding it or computing
        # its MAC again (bounded like `_Key`'s memories).
        self._issued: dict[str, tuple[_Key, bytes]] = {}

    @property
    def audience(self) -> str:
        """Who the tokens are for (`aud`); `ServerConfig` passes the server's name by default."""
        return self._audience

    @property
    def ttl(self) -> float:
        """Seconds a token stays valid after sealing."""
        return self._ttl

    @property
    def max_token_bytes(self) -> int:
        """The largest token sealed or accepted."""
        return self._max_token_bytes

    def seal(
        self,
        state: Any,
        *,
        method: str,
        target: str,
        arguments: Mapping[str, Any] | None,
        principal: str | None,
        wall_time: float,
    ) -> str:
        """Return a token binding `state` to this request; `state` must be strict JSON.

        Raises ValueError if the state or arguments are not strict JSON (no NaN,
        no non-JSON types), `wall_time` is not finite, or the token would exceed
        `max_token_bytes`. The state comes back from `unseal` as decoded JSON
        (tuples become lists).
        """
        if not isinstance(method, str) or not isinstance(target, str):
            raise TypeError("method and target must be str")
        if principal is not None and not isinstance(principal, str):
            raise TypeError("principal must be str or None")
        if not _is_number(wall_time):
            raise ValueError("wall_time must be a finite number")
        key = self._sealing_key
        try:
            canonical = _canonical_arguments(arguments)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"arguments are not strict JSON: {exc}") from exc
        claims: dict[str, Any] = {
            "v": 1,
            "iat": wall_time,
            "exp": wall_time + self._ttl,
            "m": method,
            "t": target,
            "a": key.seal_args(canonical),
            "aud": self._audience,
        }
        if principal is not None:
            claims["p"] = key.principal_digest(principal)
        claims["s"] = state
        try:
            payload = _COMPACT.encode(claims).encode("ascii")
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"state is not strict JSON: {exc}") from exc
        token = self._encode(key, payload)
        if len(token) > self._max_token_bytes:
            raise ValueError(
                f"sealed requestState is {len(token)} bytes, over max_token_bytes="
                f"{self._max_token_bytes}; keep less in the state"
            )
        if len(token) <= _MEMORY_TOKEN_BYTES:
            issued = self._issued
            if len(issued) >= _MEMORY_ENTRIES:
                issued.clear()
            issued[token] = (key, key.kid + payload)
        return token

    def unseal(
        self,
        token: object,
        *,
        method: str,
        target: str,
        arguments: Mapping[str, Any] | None,
        principal: str | None,
        wall_time: float,
    ) -> Any:
        """Verify `token` against this request and return the sealed state.

        Raises `RequestStateError` and nothing else, whatever `token` is (and
        whatever the other arguments are: a failure there fails closed).
        """
        try:
            return self._unseal(
                token,
                method=method,
                target=target,
                arguments=arguments,
                principal=principal,
                wall_time=wall_time,
            )
        except RequestStateError:
            raise
        except Exception as exc:  # fail closed on anything unforeseen
            raise RequestStateError("internal_error") from exc

    def _encode(self, key: _Key, payload: bytes) -> str:
        """Frame and MAC a payload; the tests use it to forge MAC-valid payloads."""
        body = key.kid + payload
        return f"{_VERSION}.{_b64encode(body)}.{_b64encode(key.mac(body))}"

    def _authentic(self, token: str) -> tuple[_Key, bytes]:
        """The key and decoded body of a token that passes the shape and MAC checks."""
        # 1. Cheap structural checks, before any decoding.
        if len(token) > self._max_token_bytes:  # chars <= UTF-8 bytes
            _fail("too_large")
        if not token.isascii():
            _fail("bad_format")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _VERSION:
            _fail("bad_format")
        body = _b64decode(parts[1])
        mac = _b64decode(parts[2])
        if len(body) <= _KID_LEN or len(mac) != _MAC_LEN:
            _fail("bad_format")

        # 2. Authenticity, before the payload is parsed at all.
        key = self._by_kid.get(body[:_KID_LEN])
        if key is None:
            _fail("unknown_key")
        if not hmac.compare_digest(key.mac(body), mac):
            _fail("bad_signature")
        return key, body

    def _unseal(
        self,
        token: object,
        *,
        method: str,
        target: str,
        arguments: Mapping[str, Any] | None,
        principal: str | None,
        wall_time: float,
    ) -> Any:
        """The checks of `unseal`, cheapest and most decisive first.

        Size and shape before decoding, the MAC before parsing, so a forged token costs
        one HMAC at most and its payload is never parsed; the claims are judged only
        once the token is known to be ours. Digests are compared in constant time so
        the time taken reveals nothing about how much of a forged one was right.
        """
        if not isinstance(token, str):
            _fail("not_a_string")
        issued = self._issued.get(token)
        if issued is not None:
            # 1-2. A token this sealer issued lately, character for character: its shape
            # and its MAC were checked as it was made, so neither is worked out again.
            key, body = issued
        else:
            key, body = self._authentic(token)

        # 3. Claim shapes (only reachable with a key: a bug or a leaked key).
        try:
            claims = _CLAIMS.decode(body[_KID_LEN:].decode("utf-8"))
        except (ValueError, RecursionError):
            _fail("bad_claims")
        if not isinstance(claims, dict) or not (
            _CLAIMS_REQUIRED <= claims.keys() <= _CLAIMS_ALLOWED
        ):
            _fail("bad_claims")
        iat, exp = claims["iat"], claims["exp"]
        p = claims.get("p")  # absent means "sealed without a principal"
        if not (
            type(claims["v"]) is int
            and claims["v"] == 1
            and _is_number(iat)
            and _is_number(exp)
            and iat < exp
            and all(isinstance(claims[c], str) for c in ("m", "t", "a", "aud"))
            and ("p" not in claims or isinstance(p, str))
        ):
            _fail("bad_claims")

        # 4. Time, written positively so NaN (in `wall_time`) never passes.
        if not (wall_time < exp and wall_time < iat + self._ttl):
            _fail("expired")
        if not (iat <= wall_time + self._max_future_skew):
            _fail("not_yet_valid")

        # 5. Bindings.
        if claims["aud"] != self._audience:  # both str: no NaN concern
            _fail("wrong_audience")
        if not (isinstance(method, str) and claims["m"] == method):
            _fail("wrong_method")
        if not (isinstance(target, str) and claims["t"] == target):
            _fail("wrong_target")
        try:
            canonical = _canonical_arguments(arguments)
        except (TypeError, ValueError, RecursionError):
            _fail("wrong_arguments")  # never sealable, so never a match
        if not key.args_match(claims["a"], canonical):
            _fail("wrong_arguments")
        if principal is None or p is None:
            if not (principal is None and p is None):
                _fail("principal_mismatch")
        elif not (
            isinstance(principal, str)
            and hmac.compare_digest(_utf8(p), _utf8(key.principal_digest(principal)))
        ):
            _fail("principal_mismatch")
        return claims["s"]
