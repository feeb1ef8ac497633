"""`requestState` keys and the server identity, from configuration, for every replica alike.

A 2026-07-28 server that asks the client for input seals its state into the
`requestState` token; the client's retry may land on any process of the
deployment, so every process must hold the same keys and bind the same server
identity into the state. Keys therefore come from configuration, not from
`secrets` at start-up.

Format (the same in the variable and in the file)::

    # newest first: the first key seals, every key verifies
    2Q0hW3m7y4nq8JvB1F6l0bO6ZbJ9oX3Q5cTq1s8aYJc=   # 2026-11
    Yb7yq2fV8mC0nQ1L9sK3pR6tW4xZ5aD7eF8gH9iJ0kA=   # 2026-08, verify only

* keys separated by newlines, commas or spaces; `#` starts a comment that
  runs to the end of the line;
* each key is base64 (standard or URL-safe, padding optional) of at least 32
  random bytes (make one with `python -m mcp_adapters.request_state_keys`);
* newest first: `keys[0]` seals, every key verifies.

Where from: `MCP_REQUEST_STATE_KEYS` (the keys themselves) or
`MCP_REQUEST_STATE_KEYS_FILE` (a path, e.g. a mounted secret), never both;
the server identity from `MCP_SERVER_IDENTITY` (say, the public URL of the
endpoint: the same for every replica, and different for every service that
shares the keys but must not accept another's state).

Rotation without a failed retry, on a rolling deployment: see docs/deploy.md
(add the new key second everywhere, then move it first, then drop the old
one after the state TTL).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "configure_from_environment",
    "IDENTITY_VARIABLE",
    "KEYS_FILE_VARIABLE",
    "KEYS_VARIABLE",
    "MIN_KEY_BYTES",
    "KeyRingError",
    "load_request_state_keys",
    "load_server_identity",
    "new_request_state_key",
    "parse_request_state_keys",
]

KEYS_VARIABLE = "MCP_REQUEST_STATE_KEYS"
KEYS_FILE_VARIABLE = "MCP_REQUEST_STATE_KEYS_FILE"
IDENTITY_VARIABLE = "MCP_SERVER_IDENTITY"
MIN_KEY_BYTES = 32

_SEPARATORS = re.compile(r"[\s,]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


class KeyRingError(ValueError):
    """The configured keys cannot be used. The message names where they came
    from and which entry is wrong, never a key's text."""


def parse_request_state_keys(text: str, *, source: str = "the key ring") -> tuple[bytes, ...]:
    """The keys in `text` (the format above), newest first; KeyRingError if unusable."""
    entries: list[str] = []
    for line in text.splitlines():
        entries += [e for e in _SEPARATORS.split(line.split("#", 1)[0]) if e]
    if not entries:
        raise KeyRingError(f"{source}: no keys (one base64 key of {MIN_KEY_BYTES}+ bytes at least)")
    keys: list[bytes] = []
    for number, entry in enumerate(entries, 1):
        if _BASE64.fullmatch(entry) is None:
            raise KeyRingError(f"{source}: key {number} is not base64")
        standard = entry.replace("-", "+").replace("_", "/").rstrip("=")
        try:
            key = base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise KeyRingError(f"{source}: key {number} is not base64") from None
        if len(key) < MIN_KEY_BYTES:
            raise KeyRingError(
                f"{source}: key {number} has {len(key)} bytes; each key needs at least "
                f"{MIN_KEY_BYTES} random bytes"
            )
        if key in keys:
            raise KeyRingError(f"{source}: key {number} repeats key {keys.index(key) + 1}")
        keys.append(key)
    return tuple(keys)


def load_request_state_keys(
    path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> tuple[bytes, ...] | None:
    """The configured key ring, newest first, or None when none is configured.

    `path` (a key file) wins; otherwise `MCP_REQUEST_STATE_KEYS_FILE` or
    `MCP_REQUEST_STATE_KEYS` from `environ` (default: the process
    environment). Both variables set at once is an error, as is a key file
    that cannot be read.
    """
    env = os.environ if environ is None else environ
    if path is None:
        file_value = env.get(KEYS_FILE_VARIABLE) or None
        text_value = env.get(KEYS_VARIABLE) or None
        if file_value is not None and text_value is not None:
            raise KeyRingError(
                f"both {KEYS_VARIABLE} and {KEYS_FILE_VARIABLE} are set; keep one of them"
            )
        if text_value is not None:
            return parse_request_state_keys(text_value, source=KEYS_VARIABLE)
        if file_value is None:
            return None
        path = file_value
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyRingError(f"cannot read the key file {os.fspath(path)!r}: {exc}") from None
    return parse_request_state_keys(text, source=os.fspath(path))


def load_server_identity(*, environ: Mapping[str, str] | None = None) -> str | None:
    """`MCP_SERVER_IDENTITY`, or None when unset (the server's name is used then)."""
    value = (os.environ if environ is None else environ).get(IDENTITY_VARIABLE, "").strip()
    return value or None


def configure_from_environment(server: Any, *, environ: Mapping[str, str] | None = None) -> bool:
    """Give `server` (an `MCPServer`) the key ring and identity of the environment.

    What `python -m mcp_adapters run` does before serving, so that replicas are
    configured by their deployment, not their code: a key ring in
    `MCP_REQUEST_STATE_KEYS(_FILE)` replaces the server's keys (the per-process
    random key, or keys set in code: the operator's configuration wins), and
    `MCP_SERVER_IDENTITY` its identity. Returns whether anything was set.
    Raises `KeyRingError` on a bad ring, and `ValueError` for an unnamed server
    given shared keys but no identity (two such services would accept each
    other's state).
    """
    keys = load_request_state_keys(environ=environ)
    identity = load_server_identity(environ=environ)
    if keys is not None:
        if identity is None and server.server_identity is None and server.name == "mcp-server":
            raise ValueError(
                f"{KEYS_VARIABLE} is set but the server has no name: name it "
                f'(MCPServer("my-service")) or set {IDENTITY_VARIABLE}; the name or '
                "identity is the audience sealed state is bound to"
            )
        server.request_state_keys = keys
    if identity is not None:
        server.server_identity = identity
    return keys is not None or identity is not None


def new_request_state_key() -> str:
    """A fresh key in the file format: base64 of 32 random bytes."""
    return base64.b64encode(secrets.token_bytes(MIN_KEY_BYTES)).decode("ascii")


if __name__ == "__main__":  # pragma: no cover - a one-line tool
    print(new_request_state_key())
