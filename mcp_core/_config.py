"""Connection configuration: immutable, shared by every connection of a server.

Wire forms (capability and implementation dicts) are computed once here, so the
per-message path never re-serialises a config object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic

from ._jsonrpc import DEFAULT_LIMITS, Limits, trailing_members
from ._request_state import RequestStateSealer
from ._versions import (
    ALL_REVISIONS,
    META_SERVER_INFO,
    TASKS_EXTENSION,
    Era,
    era_of,
    is_known,
    preference_order,
)


def to_wire(value: Any) -> Any:
    """A model as its wire dict (camelCase, no nulls); mappings copied shallowly.

    `exclude_none` because the schemas mark optional members as absent, not null: a strict
    peer validating `"instructions": null` against a string type refuses the whole message.
    A dict is copied so the caller's mapping is never changed by the engine adding `_meta`
    or `resultType`.
    """
    if type(value) is dict:
        return dict(value)
    if value is None:
        return None
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _check_versions(versions: tuple[str, ...]) -> tuple[str, ...]:
    """The revisions as given, checked and put newest first.

    An unknown revision is a ValueError at configuration time: offering it would
    make the peer pick a revision this library cannot speak, and the failure would
    only show at the first connection. The order is the registry's, not the
    caller's, so the newest shared revision wins whatever order the list had.
    """
    if not versions:
        raise ValueError("supported_versions must not be empty")
    for v in versions:
        if not is_known(v):
            raise ValueError(f"unknown protocol revision {v!r}; known: {', '.join(ALL_REVISIONS)}")
    return preference_order(versions)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """What a server says about itself and how it bounds its peers.

    `server_info` may carry more than name and version (title, icons, websiteUrl);
    `cache_ttl_ms` and `cache_scope` fill the 2026-07-28 caching hints on results
    that must carry them when the application did not set its own.

    `request_state_keys` (each at least 32 bytes; the first seals, all verify)
    turn on sealing of the 2026-07-28 `requestState`. Give every process of a
    deployment the same keys so a retry may land on any of them.
    """

    name: str
    version: str = "0.0.0"
    capabilities: Any = None
    instructions: str | None = None
    server_info: Any = None
    supported_versions: tuple[str, ...] = ALL_REVISIONS
    limits: Limits = DEFAULT_LIMITS
    # 0 ("immediately stale") and "private" are the defaults that cannot go wrong: a
    # server that never said how long its lists stay true must not have them
    # cached, and a list that may depend on the caller must not be shared between
    # access tokens (CacheableResult, 2026-07-28).
    cache_ttl_ms: int = 0
    cache_scope: Literal["public", "private"] = "private"
    request_state_keys: tuple[bytes, ...] = ()
    # Seconds a sealed requestState stays valid: long enough for a person to answer
    # an elicitation, short enough to bound replay (the spec asks for a short TTL;
    # the official SDK also uses 600).
    request_state_ttl: float = 600.0
    # None: the server's name, so services sharing keys cannot accept each other's state.
    request_state_audience: str | None = None
    # The state comes back on every retry, from a client we do not trust; 16 KiB is
    # room for a handler's own state and keeps a forged blob cheap to refuse.
    max_request_state_bytes: int = 16384
    # Derived once.
    capabilities_wire: dict[str, Any] = field(init=False, repr=False, compare=False)
    # What each era is shown: 2026-07-28 moved tasks from the core `tasks`
    # capability to the extension, so each era sees only its own of the two.
    legacy_capabilities_wire: dict[str, Any] = field(init=False, repr=False, compare=False)
    modern_capabilities_wire: dict[str, Any] = field(init=False, repr=False, compare=False)
    server_info_wire: dict[str, Any] = field(init=False, repr=False, compare=False)
    legacy_versions: tuple[str, ...] = field(init=False, repr=False, compare=False)
    modern_versions: tuple[str, ...] = field(init=False, repr=False, compare=False)
    request_state_sealer: RequestStateSealer | None = field(init=False, repr=False, compare=False)
    # The encoded end of a plain 2026-07-28 result (`resultType` "complete" and the
    # server info in `_meta`, `jr.trailing_members`), the same for every result of
    # this server: encoded once here rather than in each. None when it needs the
    # plain encoder's fallback.
    complete_result_tail: bytes | None = field(init=False, repr=False, compare=False)
    # The engine's memo for its request lane (`ServerConnection._request_lane`): what a
    # plain request of each method needs that is the same for every one of them on this
    # server (the method's spec, that its capability is offered, its params validator),
    # per era and revision, found on first use. Derived from the fields above only, so it
    # never goes stale; bounded by the method table, since only methods the table knows,
    # under revisions this server speaks, get an entry. Private to the engine.
    request_lanes: tuple[dict[str, Any], dict[str, Any]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        """Check the settings and derive the wire forms, once per server.

        Every connection of a server shares this object, so the capability and
        info dicts computed here are what each handshake and envelope reuses.
        """
        versions = _check_versions(tuple(self.supported_versions))
        sealer = None
        if self.request_state_keys:
            sealer = RequestStateSealer(
                self.request_state_keys,
                audience=self.request_state_audience or self.name,
                ttl=self.request_state_ttl,
                max_token_bytes=self.max_request_state_bytes,
            )
        object.__setattr__(self, "request_state_sealer", sealer)
        object.__setattr__(self, "supported_versions", versions)
        caps: dict[str, Any] = to_wire(self.capabilities) or {}
        object.__setattr__(self, "capabilities_wire", caps)
        # The tasks extension is hidden from legacy sessions and the core `tasks` capability
        # from modern requests: a client of either era must see only what its revision
        # defines, or it could try a feature its peer's era does not have.
        legacy = dict(caps)
        extensions = legacy.get("extensions")
        if isinstance(extensions, dict) and TASKS_EXTENSION in extensions:
            rest = {k: v for k, v in extensions.items() if k != TASKS_EXTENSION}
            if rest:
                legacy["extensions"] = rest
            else:
                del legacy["extensions"]
        object.__setattr__(self, "legacy_capabilities_wire", legacy)
        object.__setattr__(
            self, "modern_capabilities_wire", {k: v for k, v in caps.items() if k != "tasks"}
        )
        info = to_wire(self.server_info) or {}
        # `name` and `version` are required in `Implementation` (every revision); the
        # config's fields fill them unless `server_info` set its own.
        info.setdefault("name", self.name)
        info.setdefault("version", self.version)
        object.__setattr__(self, "server_info_wire", info)
        object.__setattr__(
            self,
            "complete_result_tail",
            trailing_members({"resultType": "complete", "_meta": {META_SERVER_INFO: info}}),
        )
        object.__setattr__(
            self, "legacy_versions", tuple(v for v in versions if era_of(v) is Era.LEGACY)
        )
        object.__setattr__(
            self, "modern_versions", tuple(v for v in versions if era_of(v) is Era.MODERN)
        )
        if self.cache_ttl_ms < 0:
            raise ValueError("cache_ttl_ms must be >= 0")
        object.__setattr__(self, "request_lanes", ({}, {}))


# The RFC 5424 severities `logging/setLevel` and the 2026-07-28 envelope accept.
# (a copy of `_base.LOG_LEVELS`: `_config` sits below `_base` in the import layering)
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# "auto", "legacy", or a revision string to pin. Pinning 2026-07-28 skips discovery
# (no round trip before the first call) at the price of not knowing the server's
# capabilities; "auto" costs one `server/discover` and falls back to initialize.
ClientMode = str  # "auto", "legacy", or a revision string to pin


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """What a client declares and how it picks a protocol revision.

    `mode`: "auto" probes with `server/discover` and falls back to `initialize`;
    "legacy" always uses `initialize`; a revision string pins that revision.
    `log_level` is stamped on every 2026-07-28 request. `max_input_rounds` ends
    a 2026-07-28 call that keeps answering `InputRequiredResult`.
    """

    name: str = "mcp-sansio"
    version: str = "0.1.0"
    capabilities: Any = None
    mode: ClientMode = "auto"
    supported_versions: tuple[str, ...] = ALL_REVISIONS
    client_info: Any = None
    log_level: str | None = None
    limits: Limits = DEFAULT_LIMITS
    # A server that answers every retry with new questions would keep a call alive
    # for ever; 10 rounds is more than any real dialogue asks for.
    max_input_rounds: int = 10
    capabilities_wire: dict[str, Any] = field(init=False, repr=False, compare=False)
    client_info_wire: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the settings (a pinned mode must be a supported revision, a log level
        one of RFC 5424's) and derive the wire forms the handshake and envelope send."""
        versions = _check_versions(tuple(self.supported_versions))
        object.__setattr__(self, "supported_versions", versions)
        if self.mode not in ("auto", "legacy") and self.mode not in versions:
            raise ValueError(
                f"mode must be 'auto', 'legacy' or one of the supported revisions, not {self.mode!r}"
            )
        if self.log_level is not None and self.log_level not in _LOG_LEVELS:
            raise ValueError(
                f"unknown log level {self.log_level!r}; one of {', '.join(_LOG_LEVELS)}"
            )
        if self.max_input_rounds < 1:
            raise ValueError("max_input_rounds must be at least 1")
        # Refused at construction: a legacy-mode client with only modern revisions could
        # never connect, and would find out only at its first handshake.
        if self.mode == "legacy" and not any(era_of(v) is Era.LEGACY for v in versions):
            raise ValueError("mode 'legacy' needs at least one legacy revision")
        object.__setattr__(self, "capabilities_wire", to_wire(self.capabilities) or {})
        info = to_wire(self.client_info) or {}
        info.setdefault("name", self.name)
        info.setdefault("version", self.version)
        object.__setattr__(self, "client_info_wire", info)
