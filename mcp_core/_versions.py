"""The revision registry and the per-revision method tables.

Revisions are an enumerated set, never compared by date order: what a revision
allows is looked up, not inferred. Each method row says who may send it, in which
revisions, which capability gates it and which wire models carry its params and
result (by name in `mcp_core.types`, resolved lazily so importing the registry
builds no models).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, Literal

# The sender of a message, which is half of every table key: `ping` and
# `notifications/cancelled` exist both ways with the same name, and what a method means can
# differ by who sends it (2025-11-25 tasks are hosted by either side).
Role = Literal["client", "server"]


class Era(enum.Enum):
    """Handshake revisions (`initialize`) vs the stateless per-request revision.

    The era decides the shape of everything else: a legacy session negotiates once
    and keeps state (capabilities, log level, subscriptions) on the connection; a
    2026-07-28 request carries all of that in its own `_meta`, so any request may go
    to any server process. Code branches on the era, never on a revision's date.

    An enum, not a flag on the revision string, so that a new revision of either shape is
    one line in the registry and every era test in the engine keeps working.
    """

    LEGACY = "legacy"
    MODERN = "modern"


# Each revision by its date string, as the wire spells it. 2024-11-05 is spoken for the
# clients and servers still using it; its HTTP+SSE transport is not offered (see
# docs/porting.md), only the message rules, which stdio and Streamable HTTP carry.
V2024_11_05: Final = "2024-11-05"
V2025_03_26: Final = "2025-03-26"
V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"
V2026_07_28: Final = "2026-07-28"

# Oldest first within each era: `preference_order` reads newest first from the end, so the
# order here is the preference, and no date is ever compared.
LEGACY_REVISIONS: Final = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
MODERN_REVISIONS: Final = (V2026_07_28,)
ALL_REVISIONS: Final = LEGACY_REVISIONS + MODERN_REVISIONS
LATEST_LEGACY: Final = V2025_11_25
LATEST: Final = V2026_07_28

# The 2026-07-28 `_meta` envelope keys (`mcp_core.types` has them public under
# longer names). Here, at the bottom of the core, because the era of a message is
# read from the first of them before anything else about it is known.
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

# The era of each revision, from the two tuples above; a revision is in exactly one.
_ERA = {r: Era.LEGACY for r in LEGACY_REVISIONS} | {r: Era.MODERN for r in MODERN_REVISIONS}

# Revisions that accept JSON-RPC batch arrays (receiving them is mandatory there).
# 2025-03-26 added batches and 2025-06-18 removed them again; elsewhere an array is
# an invalid request (-32600), not a batch to take apart.
BATCH_REVISIONS: Final = frozenset({V2025_03_26})


def era_of(revision: str) -> Era:
    """The era of a known revision; KeyError for an unknown one.

    Callers check `is_known` first: a peer's unknown revision is refused where it
    arrives, with the error its era calls for, so a KeyError here is a bug.
    """
    return _ERA[revision]


def is_known(revision: object) -> bool:
    """Whether `revision` is a revision this library speaks; any object may be asked.

    Wire values arrive untyped (a number, a list where the version goes), so the
    check takes anything and answers False rather than raising.
    """
    return isinstance(revision, str) and revision in _ERA


def preference_order(revisions: tuple[str, ...] | frozenset[str]) -> tuple[str, ...]:
    """Revisions from most to least preferred, by their place in the registry.

    Newest first: in version negotiation each side offers the latest revision it
    supports (lifecycle), so that is the one to try first. The order comes from the
    registry, not from comparing dates, as the module says.
    """
    wanted = set(revisions)
    return tuple(r for r in reversed(ALL_REVISIONS) if r in wanted)


# Revision sets of the table's rows: every legacy revision, the modern one, all;
# elicitation began in 2025-06-18, and the 2025-11-25-only rows are tasks and the
# URL-elicitation notice, which 2026-07-28 dropped or moved to an extension.
# Frozensets, so that `revision in spec.revisions` is one hash look-up on the hot path of
# every message.
_L = frozenset(LEGACY_REVISIONS)
_M = frozenset(MODERN_REVISIONS)
_ALL = _L | _M
_FROM_0618 = frozenset({V2025_06_18, V2025_11_25})
_ONLY_1125 = frozenset({V2025_11_25})

# The tasks extension of 2026-07-28 (SEP-2663): advertised under
# `capabilities.extensions`, declared by the client on each request.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
_TASKS_EXT_CAP: Final = f"extensions.{TASKS_EXTENSION}"


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One row of the method table.

    `server_capability` gates a client-to-server method on what the server
    advertised; `client_capability` gates a server-to-client method on what the
    client declared. `input_required` marks the methods that may answer with an
    `InputRequiredResult` in 2026-07-28; `cacheable` the ones whose complete
    results carry `ttlMs`/`cacheScope` there.

    A capability is a dotted path into the capabilities object (``"resources.subscribe"``,
    ``"extensions.io.modelcontextprotocol/tasks"``): present at every step, even as
    ``{}``, means declared. `params_required` is the schema's `required: ["params"]`:
    a request of such a method without params is -32602, where for the others an
    absent `params` means defaults. `params` and `result` name classes of
    `mcp_core.types`; None means the method has no params model of its own (an
    empty object, or only `_meta`).
    """

    method: str
    sender: Role
    is_request: bool
    revisions: frozenset[str]
    params: str | None
    result: str | None = None
    server_capability: str | None = None
    client_capability: str | None = None
    input_required: bool = False
    cacheable: bool = False
    params_required: bool = False


def _req(
    method: str,
    sender: Role,
    revisions: frozenset[str],
    params: str | None,
    result: str,
    **kw: object,
) -> MethodSpec:
    """A request row; keyword flags pass through to `MethodSpec`.

    `result` is required here because every request has one: a row without it would be a
    notification, which `_note` builds.
    """
    return MethodSpec(method, sender, True, revisions, params, result, **kw)  # type: ignore[arg-type]


def _note(method: str, sender: Role, revisions: frozenset[str], params: str | None) -> MethodSpec:
    """A notification row: no result, no gate (notifications need no capability)."""
    return MethodSpec(method, sender, False, revisions, params)


def _legacy_task_rows(sender: Role) -> tuple[MethodSpec, ...]:
    """The 2025-11-25 `tasks/*` requests sent by `sender`, each gated on what the
    receiver (the task's host) declared under its `tasks` capability.

    2025-11-25 (`basic/utilities/tasks`): `tasks/list` and `tasks/cancel` have their own
    capability sub-fields, while `tasks/get` and `tasks/result` need only the `tasks`
    capability itself, since polling is the minimum a host must offer.
    """

    def row(method: str, params: str, result: str, gate: str, required: bool) -> MethodSpec:
        """One row, gated on the receiver's side: the task's host declared `gate`."""
        server_gate, client_gate = (gate, None) if sender == "client" else (None, gate)
        return MethodSpec(
            method,
            sender,
            True,
            _ONLY_1125,
            params,
            result,
            server_capability=server_gate,
            client_capability=client_gate,
            params_required=required,
        )

    return (
        row("tasks/get", "GetTaskRequestParams", "GetTaskResult", "tasks", True),
        row("tasks/result", "GetTaskPayloadRequestParams", "GetTaskPayloadResult", "tasks", True),
        row("tasks/list", "PaginatedRequestParams", "ListTasksResult", "tasks.list", False),
        row("tasks/cancel", "CancelTaskRequestParams", "CancelTaskResult", "tasks.cancel", True),
    )


_ROWS: tuple[MethodSpec, ...] = (
    # client -> server requests
    # The legacy handshake: not cancellable, not batchable, and absent from 2026-07-28,
    # whose requests carry in `_meta` what it negotiated.
    _req(
        "initialize",
        "client",
        _L,
        "InitializeRequestParams",
        "InitializeResult",
        params_required=True,
    ),
    # No ping in 2026-07-28 (its schema has none): there is no session to keep alive.
    _req("ping", "client", _L, None, "EmptyResult"),
    # Not gated: discovery is how a client learns the capabilities in the first place.
    _req("server/discover", "client", _M, None, "DiscoverResult", cacheable=True),
    # Cacheable (SEP-2549): 2026-07-28 results carry `ttlMs`/`cacheScope`, and SEP-2575
    # asks for a deterministic order so a client can cache the list.
    _req(
        "tools/list",
        "client",
        _ALL,
        "PaginatedRequestParams",
        "ListToolsResult",
        server_capability="tools",
        cacheable=True,
    ),
    # The three MRTR methods (tools/call, prompts/get, resources/read) may answer with
    # an InputRequiredResult; their params models carry the retry fields.
    _req(
        "tools/call",
        "client",
        _ALL,
        "CallToolRequestParams",
        "CallToolResult",
        server_capability="tools",
        input_required=True,
        params_required=True,
    ),
    # Cacheable, as every 2026-07-28 list is (SEP-2549).
    _req(
        "prompts/list",
        "client",
        _ALL,
        "PaginatedRequestParams",
        "ListPromptsResult",
        server_capability="prompts",
        cacheable=True,
    ),
    _req(
        "prompts/get",
        "client",
        _ALL,
        "GetPromptRequestParams",
        "GetPromptResult",
        server_capability="prompts",
        input_required=True,
        params_required=True,
    ),
    # Cacheable; its pages are cached one by one (SPEC-NOTES 1.9).
    _req(
        "resources/list",
        "client",
        _ALL,
        "PaginatedRequestParams",
        "ListResourcesResult",
        server_capability="resources",
        cacheable=True,
    ),
    _req(
        "resources/templates/list",
        "client",
        _ALL,
        "PaginatedRequestParams",
        "ListResourceTemplatesResult",
        server_capability="resources",
        cacheable=True,
    ),
    # Both an MRTR method and cacheable: a complete read may be cached, an
    # `input_required` answer never is (SPEC-NOTES 1.9).
    _req(
        "resources/read",
        "client",
        _ALL,
        "ReadResourceRequestParams",
        "ReadResourceResult",
        server_capability="resources",
        input_required=True,
        cacheable=True,
        params_required=True,
    ),
    # Legacy only: 2026-07-28 names the URIs in a listen filter instead, gated by the
    # same `resources.subscribe` the server advertises.
    _req(
        "resources/subscribe",
        "client",
        _L,
        "SubscribeRequestParams",
        "EmptyResult",
        server_capability="resources.subscribe",
        params_required=True,
    ),
    _req(
        "resources/unsubscribe",
        "client",
        _L,
        "UnsubscribeRequestParams",
        "EmptyResult",
        server_capability="resources.subscribe",
        params_required=True,
    ),
    # Replaces the GET stream and resources/subscribe; gated per notification type
    # by the filter the server acknowledges, not by one capability.
    _req(
        "subscriptions/listen",
        "client",
        _M,
        "SubscriptionsListenRequestParams",
        "Result",
        params_required=True,
    ),
    # Gated from 2025-03-26, which introduced the `completions` capability; 2024-11-05
    # servers answered it without one (`UNGATED`).
    _req(
        "completion/complete",
        "client",
        _ALL,
        "CompleteRequestParams",
        "CompleteResult",
        server_capability="completions",
        params_required=True,
    ),
    # Legacy only: the 2026-07-28 log level rides in each request's `_meta`.
    _req(
        "logging/setLevel",
        "client",
        _L,
        "SetLevelRequestParams",
        "EmptyResult",
        server_capability="logging",
        params_required=True,
    ),
    # server -> client requests (legacy only; 2026-07-28 carries them inside InputRequiredResult)
    _req("ping", "server", _L, None, "EmptyResult"),
    _req(
        "sampling/createMessage",
        "server",
        _L,
        "CreateMessageRequestParams",
        "CreateMessageResult",
        client_capability="sampling",
        params_required=True,
    ),
    # No params model: `roots/list` carries at most `_meta` in every revision.
    _req("roots/list", "server", _L, None, "ListRootsResult", client_capability="roots"),
    # Elicitation began in 2025-06-18 (form mode; URL mode needs the client's
    # `elicitation.url`, which only 2025-11-25 and later define).
    _req(
        "elicitation/create",
        "server",
        _FROM_0618,
        "ElicitRequestParams",
        "ElicitResult",
        client_capability="elicitation",
        params_required=True,
    ),
    # tasks, 2025-11-25 (SEP-1686): either side may host a task, so both send these
    *_legacy_task_rows("client"),
    *_legacy_task_rows("server"),
    # tasks, 2026-07-28 extension (SEP-2663): only the client polls, the server hosts
    # Gated on the extension the server advertised (SEP-2663); a request must also
    # declare it itself, which `_server` checks per request.
    _req(
        "tasks/get",
        "client",
        _M,
        "ExtGetTaskRequestParams",
        "ExtGetTaskResult",
        server_capability=_TASKS_EXT_CAP,
        params_required=True,
    ),
    # Carries the answers to a task's questions (the extension's MRTR): any replica
    # may take it, since the answers go to the task's record.
    _req(
        "tasks/update",
        "client",
        _M,
        "ExtUpdateTaskRequestParams",
        "EmptyResult",
        server_capability=_TASKS_EXT_CAP,
        params_required=True,
    ),
    _req(
        "tasks/cancel",
        "client",
        _M,
        "ExtCancelTaskRequestParams",
        "EmptyResult",
        server_capability=_TASKS_EXT_CAP,
        params_required=True,
    ),
    # client -> server notifications
    _note("notifications/initialized", "client", _L, None),
    # Cancellation exists in every revision, both ways; in 2026-07-28 over HTTP closing
    # the stream replaces it, which is the transport's business, not the table's.
    _note("notifications/cancelled", "client", _ALL, "CancelledNotificationParams"),
    # A client reports progress only on a server's request, and 2026-07-28 servers
    # send none (their questions ride in results), so client progress is legacy.
    _note("notifications/progress", "client", _L, "ProgressNotificationParams"),
    # Legacy only: 2026-07-28 dropped `roots.listChanged` with the session it would have
    # invalidated (SPEC-NOTES 1.6).
    _note("notifications/roots/list_changed", "client", _L, None),
    # (a client hosting a task for the server reports its status too, 2025-11-25)
    _note("notifications/tasks/status", "client", _ONLY_1125, "TaskStatusNotificationParams"),
    # server -> client notifications
    # In 2026-07-28 only to end a listen stream on stdio (the schema's one use).
    _note("notifications/cancelled", "server", _ALL, "CancelledNotificationParams"),
    _note("notifications/progress", "server", _ALL, "ProgressNotificationParams"),
    # In 2026-07-28 these travel on the request they belong to (log, progress) or on a
    # listen stream (the list and resource changes), never unsolicited.
    _note("notifications/message", "server", _ALL, "LoggingMessageNotificationParams"),
    _note("notifications/resources/updated", "server", _ALL, "ResourceUpdatedNotificationParams"),
    _note("notifications/resources/list_changed", "server", _ALL, None),
    _note("notifications/tools/list_changed", "server", _ALL, None),
    _note("notifications/prompts/list_changed", "server", _ALL, None),
    _note(
        "notifications/elicitation/complete",
        "server",
        _ONLY_1125,
        "ElicitationCompleteNotificationParams",
    ),
    _note(
        "notifications/subscriptions/acknowledged",
        "server",
        _M,
        "SubscriptionsAcknowledgedNotificationParams",
    ),
    _note("notifications/tasks/status", "server", _ONLY_1125, "TaskStatusNotificationParams"),
    # The 2026-07-28 tasks extension's one notification (SEP-2663), sent only on a listen
    # stream whose filter named the task.
    _note("notifications/tasks", "server", _M, "ExtTaskNotificationParams"),
)

# (sender, method) -> every row of that method, one per disjoint set of revisions
# (the tasks methods have one shape in 2025-11-25 and another in the 2026-07-28
# extension). Requests and notifications never share a method name.
_BY_KEY: Final[dict[tuple[Role, str], tuple[MethodSpec, ...]]] = {}
for _row in _ROWS:
    _BY_KEY[(_row.sender, _row.method)] = (*_BY_KEY.get((_row.sender, _row.method), ()), _row)
del _row

# (sender, method) -> its first row: what does not depend on the revision (who
# sends it, request or notification, the flags). Use `lookup` for the params and
# result of a given revision.
METHODS: Final[dict[tuple[Role, str], MethodSpec]] = {key: rows[0] for key, rows in _BY_KEY.items()}

# Every method name any revision knows, whoever sends it.
# Kept for code outside the engine that must tell a method of another revision from no
# MCP method at all without a revision at hand; the engine itself asks `lookup` or
# `known_in_any`.
KNOWN_METHOD_NAMES: Final = frozenset(row.method for row in _ROWS)


# (method, revision) pairs where the method existed before the capability that now gates it.
# A table rather than a special case in code, so that the next method that predates its
# capability is one more pair here.
UNGATED: Final = frozenset({("completion/complete", V2024_11_05)})


def needs_capability(spec: MethodSpec, revision: str) -> str | None:
    """The server capability `spec` needs in `revision` (None when ungated there).

    The server answers a call to a method it did not advertise with -32601 (the
    capability is its promise to handle the method), and the client refuses to send
    one; `UNGATED` keeps a 2024-11-05 server, which had no such capability to
    advertise, reachable.
    """
    if spec.server_capability is None or (spec.method, revision) in UNGATED:
        return None
    return spec.server_capability


# (sender, method, revision) -> the row `lookup` gives: the table flattened once, so
# the per-message lookup is one dict probe (a few hundred entries, fixed at import).
SPECS: Final[dict[tuple[Role, str, str], MethodSpec]] = {}
for _row in _ROWS:
    for _revision in _row.revisions:
        SPECS.setdefault((_row.sender, _row.method, _revision), _row)
del _row, _revision


def lookup(sender: Role, method: str, revision: str) -> MethodSpec | None:
    """The row for `method` sent by `sender`, if `revision` has it.

    None means the method does not exist in that revision for that sender: the
    receiver answers -32601 even if another revision knows it, since a peer must not
    use a method the negotiated revision lacks.

    A linear scan over at most two rows (one per era shape): cheaper than building a
    (sender, method, revision) dictionary of every combination, and it keeps the rows the
    one source of truth.
    """
    return SPECS.get((sender, method, revision))


def known_in_any(sender: Role, method: str, revisions: frozenset[str] | tuple[str, ...]) -> bool:
    """Whether any of `revisions` has `method` from `sender`.

    For a caller not yet settled on one revision, to tell "no such method anywhere"
    from "not in this revision".
    """
    return any(
        not spec.revisions.isdisjoint(revisions) for spec in _BY_KEY.get((sender, method), ())
    )


def all_rows() -> tuple[MethodSpec, ...]:
    """Every row of the table, in order (a method may have one row per era).

    For code that walks the whole table (the Hypothesis strategies of
    `mcp_core.testing`, the fuzz tests); the engine itself looks rows up with `lookup`.

    A tuple, so a caller cannot change the table under the engine.
    """
    return _ROWS
