"""The command line's limit options: `--max-message-bytes N` and `--limit NAME=VALUE`.

NAME is a limit as docs/limits.md names it: `Limits.<field>` (the engine's, every
transport), `HTTPLimits.<field>` (Streamable HTTP), `InMemoryEventStore.<field>`
(what legacy HTTP streams keep for resumption) or `WebSocketLimits.<field>`.
VALUE is a number, or `none` where the table allows it (a timeout off, a limit
that follows another). Kept apart from `__main__` so the command stays a list of
options. The HTTP and WebSocket layers are imported only when named: a stdio
server should not pay for h11 and wsproto at start.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import typing
from typing import Any

from mcp_core import Limits

# NAME's first part -> (its module, the `MCPServer.run` keyword it becomes).
_OWNERS = {
    "Limits": ("mcp_core", ""),
    "HTTPLimits": ("mcp_core.http", "http_limits"),
    "InMemoryEventStore": ("mcp_core.http", "event_store"),
    "WebSocketLimits": ("mcp_core.websocket", "ws_limits"),
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


def limits_from_args(
    args: argparse.Namespace, base: Limits | None
) -> tuple[Limits, dict[str, Any]]:
    """The engine's `Limits` as the options say (over `base`, the server's own), and
    the keyword arguments of `MCPServer.run` for the rest (`http_limits`,
    `event_store`, `ws_limits`), each only when one of its fields was set.

    Raises ValueError with a message fit for the command line.
    """
    changes: dict[str, dict[str, Any]] = {owner: {} for owner in _OWNERS}
    if args.max_message_bytes is not None:
        changes["Limits"]["max_message_bytes"] = args.max_message_bytes
    for item in args.limit:
        name, sep, raw = item.partition("=")
        owner, dot, field_name = name.strip().partition(".")
        if not sep or not dot or owner not in _OWNERS:
            raise ValueError(
                f"--limit {item!r}: expected NAME=VALUE with NAME one of "
                f"{', '.join(f'{o}.<field>' for o in _OWNERS)}"
            )
        changes[owner][field_name] = _value(_class(owner), field_name, raw.strip())
    run_options: dict[str, Any] = {}
    try:
        limits = dataclasses.replace(base or Limits(), **changes["Limits"])
        for owner, (_, option) in _OWNERS.items():
            if option and changes[owner]:
                run_options[option] = _class(owner)(**changes[owner])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid limit: {exc}") from None
    return limits, run_options


def _class(owner: str) -> type[Any]:
    cls: type[Any] = getattr(importlib.import_module(_OWNERS[owner][0]), owner)
    return cls


def _fields(cls: type[Any]) -> dict[str, Any]:
    """Each settable limit of `cls` and its type: dataclass fields, or keyword-only
    constructor parameters."""
    if dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls.__init__)
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name: hints[p.name] for p in parameters if p.kind is p.KEYWORD_ONLY}


def _value(cls: type[Any], field_name: str, raw: str) -> Any:
    fields = _fields(cls)
    if field_name not in fields:
        raise ValueError(
            f"{cls.__name__} has no limit {field_name!r} (it has: {', '.join(fields)})"
        )
    kinds = typing.get_args(fields[field_name]) or (fields[field_name],)
    if raw.lower() == "none":
        if type(None) not in kinds:
            raise ValueError(f"{cls.__name__}.{field_name} cannot be none")
        return None
    try:
        return int(raw) if int in kinds else float(raw)
    except ValueError:
        raise ValueError(f"{cls.__name__}.{field_name}: {raw!r} is not a number") from None


__all__ = ["add_limit_options", "limits_from_args"]
