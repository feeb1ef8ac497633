"""`WWW-Authenticate` parsing (RFC 9110 section 11.6.1) and scope lists (RFC 6749
section 3.3).

The grammar is awkward: commas separate both challenges and the parameters
of one challenge, so a parameter is recognised by the `=` after its name and a
new challenge by a name that has none. A `token68` (`Basic dXNlcg==`) is tried
right after the scheme, before parameters.

The parser never raises: a server's malformed header must not stop the flow,
since the spec gives a fallback (the well-known locations) for a missing hint.
Garbage is skipped up to the next comma. A parameter given twice in one
challenge is dropped altogether: RFC 9110 forbids repeats, and trusting either
copy of, say, `resource_metadata` would be a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "Challenge",
    "HeadersLike",
    "bearer_challenge",
    "normalize_headers",
    "parse_www_authenticate",
    "scope_list",
    "scope_string",
]

# What h11, h2 and ASGI hand over: the flow takes any of them as they come.
HeadersLike = Iterable[tuple[str | bytes, str | bytes]]

# RFC 9110 5.6.2 tchar: what an auth-scheme or auth-param name is made of.
_TCHAR: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_TOKEN68: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 9110 11.2
# RFC 6749 3.3 scope-token: visible ASCII except `"` and `\`, which a scope
# would need escaping for when it is echoed back inside a quoted-string.
_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_WS: Final = " \t\r\n"  # CR LF too: an obs-folded header value keeps them


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (as sent), its parameters (names lower-cased,
    values unquoted) and its token68, if it had one instead of parameters."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)
    token68: str | None = None

    def param(self, name: str) -> str | None:
        """The parameter's value; names are case-insensitive (RFC 9110 11.2)."""
        return self.params.get(name.lower())


def normalize_headers(headers: HeadersLike) -> list[tuple[str, str]]:
    """Header pairs as text with lower-case names (bytes are decoded as Latin-1,
    which never fails, as h11 hands them over)."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        out.append((name.lower(), value))
    return out


def _skip(s: str, i: int, chars: str) -> int:
    """The index of the first character at or after `i` not in `chars`."""
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _token(s: str, i: int) -> tuple[str, int]:
    """The token starting at `i` (possibly empty) and the index after it."""
    j = i
    while j < len(s) and s[j] in _TCHAR:
        j += 1
    return s[i:j], j


def _quoted(s: str, i: int) -> tuple[str | None, int]:
    """The unescaped content of the quoted-string at `s[i] == '"'`; None if it
    never ends (then the rest of the header cannot be trusted)."""
    out: list[str] = []
    j = i + 1
    while j < len(s):
        c = s[j]
        if c == "\\" and j + 1 < len(s):
            out.append(s[j + 1])
            j += 2
        elif c == '"':
            return "".join(out), j + 1
        else:
            out.append(c)
            j += 1
    return None, len(s)


class _Building:
    """The challenge being parsed; `repeated` remembers names seen twice, so a
    third copy cannot bring a dropped parameter back."""

    __slots__ = ("params", "repeated", "scheme", "token68")

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme
        self.params: dict[str, str] = {}
        self.repeated: set[str] = set()
        self.token68: str | None = None

    def add(self, name: str, value: str) -> None:
        name = name.lower()
        if name in self.params or name in self.repeated:
            self.params.pop(name, None)
            self.repeated.add(name)
        else:
            self.params[name] = value

    def done(self) -> Challenge:
        return Challenge(self.scheme, self.params, self.token68)


def _parse_value(s: str) -> list[Challenge]:
    """The challenges of one header value (RFC 9110 11.6.1's
    `#challenge`), in order."""
    done: list[Challenge] = []
    current: _Building | None = None
    i, n = 0, len(s)
    while True:
        i = _skip(s, i, _WS + ",")
        if i >= n:
            break
        name, j = _token(s, i)
        if not name:
            # Not a token where one must start: skip this list element.
            comma = s.find(",", i)
            i = n if comma < 0 else comma + 1
            continue
        k = _skip(s, j, _WS)
        if k < n and s[k] == "=":
            k = _skip(s, k + 1, _WS)
            if k < n and s[k] == '"':
                quoted, k = _quoted(s, k)
                if quoted is None:
                    # Unterminated: whatever follows may be inside the string,
                    # so nothing after it is read as a parameter.
                    break
                value, valid = quoted, True  # "" is a value when quoted
            else:
                value, k = _token(s, k)
                valid = bool(value)
            # A parameter before any scheme belongs to no challenge: dropped.
            if current is not None and valid:
                current.add(name, value)
            i = k
            continue
        # A name without "=": the scheme of a new challenge.
        if current is not None:
            done.append(current.done())
        current = _Building(name)
        i = k
        if k > j:  # 1*SP after the scheme: a token68 may follow
            match = _TOKEN68.match(s, k)
            if match is not None:
                end = _skip(s, match.end(), _WS)
                if end >= n or s[end] == ",":
                    current.token68 = match.group()
                    i = end
    if current is not None:
        done.append(current.done())
    return done


def parse_www_authenticate(headers: HeadersLike) -> tuple[Challenge, ...]:
    """Every challenge of every `WWW-Authenticate` header, in order.

    A server may send several headers or several challenges in one (RFC 9110
    11.6.1); both are the same list, so they are read as one.
    """
    challenges: list[Challenge] = []
    for name, value in normalize_headers(headers):
        if name == "www-authenticate":
            challenges += _parse_value(value)
    return tuple(challenges)


def bearer_challenge(headers: HeadersLike) -> Challenge | None:
    """The first `Bearer` challenge (scheme names are case-insensitive).

    The first: a second Bearer challenge could only repeat or contradict it,
    and nothing makes the later one more trustworthy.
    """
    for challenge in parse_www_authenticate(headers):
        if challenge.scheme.lower() == "bearer":
            return challenge
    return None


def scope_list(value: object) -> tuple[str, ...]:
    """A space-delimited scope string as its tokens, in order, repeats and
    malformed tokens dropped. Anything but a string is no scope at all."""
    if not isinstance(value, str):
        return ()
    # Single spaces only (RFC 6749 3.3: scope-tokens joined by %x20); a token
    # with a tab or quote in it is dropped rather than split, since its intended
    # meaning is unknown. Repeats are dropped because a scope is a set.
    seen: list[str] = []
    for token in value.split(" "):
        if token and _SCOPE_TOKEN.fullmatch(token) and token not in seen:
            seen.append(token)
    return tuple(seen)


def scope_string(scopes: Iterable[str]) -> str | None:
    """Scope tokens as the wire string, or None for none (the parameter is omitted).

    Omitted rather than sent empty: RFC 6749 3.3's grammar needs at least one
    scope-token, while an absent parameter lets the server apply its default.

    """

    joined = " ".join(dict.fromkeys(scopes))
    return joined or None
