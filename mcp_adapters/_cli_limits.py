"""The command line's limit options: `--max-message-bytes N` and `--limit NAME=VALUE`.

NAME is a limit as docs/limits.md names it: `Limits.<field>` (the engine's, every
transport), `HTTPLimits.<field>` (Streamable HTTP) or `WebSocketLimits.<field>`.
VALUE is a number, or `none` where the table allows it (a timeout off, a limit
that follows another). Kept apart from `__main__` so the command stays a list of
options. The HTTP and WebSocket layers are imported only when named: a stdio
server should not pay for h11 and wsproto at start.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import typing
from typing import Any

from mcp_core import Limits

_CLASSES = {
    "Limits": "mcp_core",
    "HTTPLimits": "mcp_core.http",
    "WebSocketLimits": "mcp_core.websocket",
}


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        metavar="N",
        help="the largest message accepted, in bytes, on every transport "
        "(default 64 MiB; see docs/limits.md)",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a limit of docs/limits.md, e.g. Limits.max_depth=64 or "
        "HTTPLimits.header_timeout=30 (repeatable; 'none' where the table allows it)",
    )


def limits_from_args(args: argparse.Namespace, base: Limits | None) -> tuple[Limits, Any, Any]:
    """(Limits, HTTPLimits or None, WebSocketLimits or None) as the options say, the
    engine's over `base` (the server's own); None where nothing was set.

    Raises ValueError with a message fit for the command line.
    """
    changes: dict[str, dict[str, Any]] = {name: {} for name in _CLASSES}
    if args.max_message_bytes is not None:
        changes["Limits"]["max_message_bytes"] = args.max_message_bytes
    for item in args.limit:
        name, sep, raw = item.partition("=")
        owner, dot, field_name = name.strip().partition(".")
        if not sep or not dot or owner not in _CLASSES:
            raise ValueError(
                f"--limit {item!r}: expected NAME=VALUE with NAME one of "
                f"{', '.join(f'{c}.<field>' for c in _CLASSES)}"
            )
        changes[owner][field_name] = _value(_class(owner), field_name, raw.strip())
    try:
        limits = dataclasses.replace(base or Limits(), **changes["Limits"])
        http, ws = (
            _class(owner)(**changes[owner]) if changes[owner] else None
            for owner in ("HTTPLimits", "WebSocketLimits")
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid limit: {exc}") from None
    return limits, http, ws


def _class(owner: str) -> type[Any]:
    cls: type[Any] = getattr(importlib.import_module(_CLASSES[owner]), owner)
    return cls


def _value(cls: type[Any], field_name: str, raw: str) -> Any:
    hints = typing.get_type_hints(cls)
    if field_name not in {f.name for f in dataclasses.fields(cls)}:
        known = ", ".join(f.name for f in dataclasses.fields(cls))
        raise ValueError(f"{cls.__name__} has no limit {field_name!r} (it has: {known})")
    kinds = typing.get_args(hints[field_name]) or (hints[field_name],)
    if raw.lower() == "none":
        if type(None) not in kinds:
            raise ValueError(f"{cls.__name__}.{field_name} cannot be none")
        return None
    try:
        return int(raw) if int in kinds else float(raw)
    except ValueError:
        raise ValueError(f"{cls.__name__}.{field_name}: {raw!r} is not a number") from None


__all__ = ["add_limit_options", "limits_from_args"]
