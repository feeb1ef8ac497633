"""Hypothesis strategies for MCP messages, valid and broken, as values and as bytes.

For property tests and fuzzers of code built on `mcp_core` (and of `mcp_core`
itself). This is the only module of the package that imports Hypothesis, so
install it (``pip install hypothesis``) to use these.

Valid messages are built from the method table in `mcp_core._versions`: a
revision offers exactly the methods it has for the chosen sender, with params
that validate against the wire models in `mcp_core.types` and against that
revision's JSON schema (2026-07-28 client requests carry the required `_meta`
envelope). Valid means *well-formed*, not *welcome*: a generated
`sampling/createMessage` may still be refused by a client that declared no
sampling capability, which is exactly what a fuzzer wants to see.

Messages are plain JSON values (dicts); `message_bytes` turns them into NDJSON,
`chunked` cuts bytes at random points, and `invalid_messages` gives raw lines
that are broken in every way a peer could break them.

Quick reference:

* `revisions()`: protocol revision strings.
* `request_ids()`: JSON-RPC ids (integers and strings).
* `json_values(max_leaves=...)`: any JSON value Python's `json` can round-trip.
* `client_capabilities(revision)`, `server_capabilities(revision)`: capability objects.
* `valid_params(revision, method, sender)`: params of one request or notification.
* `valid_requests(revision, sender)`, `valid_notifications(revision, sender)`.
* `valid_results(revision, method)`: a result for a request method.
* `valid_responses(revision, sender)`: result or error responses.
* `valid_messages(revision, sender)`: any of the above.
* `invalid_messages()`: one broken line (bytes, no newline).
* `message_bytes(messages)`: messages encoded as NDJSON bytes.
* `chunked(data)`: `data` cut into non-empty chunks at random points.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection
from typing import Any, Literal

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._versions import (
    ALL_REVISIONS,
    BATCH_REVISIONS,
    LEGACY_REVISIONS,
    METHODS,
    MODERN_REVISIONS,
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    Era,
    MethodSpec,
    all_rows,
    era_of,
    lookup,
)

__all__ = [
    "chunked",
    "client_capabilities",
    "invalid_messages",
    "json_values",
    "message_bytes",
    "request_ids",
    "revisions",
    "server_capabilities",
    "valid_messages",
    "valid_notifications",
    "valid_params",
    "valid_requests",
    "valid_responses",
    "valid_results",
]

# The sender, not the receiver, picks the method table: a request is valid only as sent by
# the role that revision lets send it (a server never sends `tools/call`).
Sender = Literal["client", "server"]
JSON = Any

# Spelled out rather than imported from the engine: a strategy that took its keys from the
# code under test would agree with a typo in it. These are the schema's words (2026-07-28
# `RequestMetaObject`, SPEC-NOTES 1.2).
_META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

# RFC 5424 severities, as every revision's `LoggingLevel` lists them; copied for the same
# reason as the keys above.
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# Beyond 2**53 a JavaScript peer (or any reader using doubles) silently rounds, so a
# valid message must stay inside; the broken ones go past it on purpose.
_SAFE_INT = 2**53  # ids and numbers every JSON implementation reads exactly

# ----------------------------------------------------------------- scalars


def revisions(*, era: Literal["legacy", "modern"] | None = None) -> SearchStrategy[str]:
    """Protocol revision strings the engine knows, optionally of one era only.

    Drawn from the registry, so a new revision is fuzzed the day it is added, with no change
    here.
    """
    if era is None:
        return st.sampled_from(ALL_REVISIONS)
    return st.sampled_from(LEGACY_REVISIONS if era == "legacy" else MODERN_REVISIONS)


def request_ids() -> SearchStrategy[int | str]:
    """Valid JSON-RPC ids: integers (small ones often, to collide) and strings."""
    return st.one_of(
        # Small ids are drawn often on purpose: a fuzzer only finds duplicate-id bugs
        # (RELIABILITY.md 1.6) when two messages of one example share an id.
        st.integers(min_value=0, max_value=8),
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        # Strings include "" and digits-only text: an engine that coerced "1" to 1, or
        # treated "" as no id, would route an answer to the wrong request.
        st.text(max_size=16),
    )


def _texts(min_size: int = 0, max_size: int = 10) -> SearchStrategy[str]:
    """Short strings of any Unicode but surrogates; short, because size is not what these
    strategies probe (the limit tests build their own big inputs).
    """
    # Any Unicode except surrogates: every generated message encodes as UTF-8.
    return st.text(min_size=min_size, max_size=max_size)


def json_values(*, max_leaves: int = 8) -> SearchStrategy[JSON]:
    """Any JSON value (null, bools, safe integers, finite floats, strings, arrays, objects).

    `st.recursive` here (unlike `_small_json`) because the caller chose the size with
    `max_leaves`, and shrinking a recursive value gives the smallest failing shape.
    """
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        # NaN and the infinities are not JSON (RFC 8259 6), so a valid value never holds
        # one; `invalid_messages` sends them on purpose.
        st.floats(allow_nan=False, allow_infinity=False),
        _texts(),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(_texts(max_size=8), inner, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def _small_json(depth: int = 2) -> SearchStrategy[JSON]:
    """JSON values nested at most `depth` levels: several times cheaper to draw than
    `json_values`, for the many spots inside messages that just need some JSON."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        _texts(),
    )
    # Built bottom-up to a fixed depth rather than with `st.recursive`: cheaper to draw, and
    # the depth cap keeps every message far from any nesting limit, which is not what these
    # strategies test.
    value: SearchStrategy[JSON] = scalars
    for _ in range(depth):
        value = st.one_of(
            scalars,
            st.lists(value, max_size=3),
            st.dictionaries(_texts(max_size=8), value, max_size=3),
        )
    return value


def _json_objects(depth: int = 1) -> SearchStrategy[dict[str, JSON]]:
    """A small JSON object of `_small_json` values (tool arguments, extras).

    Object keys are any short text, the empty key included: JSON allows it, and code that
    treats "" as "no key" mishandles a valid message.
    """
    return st.dictionaries(_texts(max_size=8), _small_json(depth), max_size=3)


def _capability_objects() -> SearchStrategy[dict[str, dict[str, JSON]]]:
    """`experimental`/`extensions` maps: 2026-07-28's JSONValue has no null and no floats.

    Values are kept to what every revision's schema accepts, so that a generated capability
    object is valid in each revision it is drawn for, not only in the loosest one.
    """
    leaf = st.one_of(st.booleans(), st.integers(-1000, 1000), _texts(max_size=8))
    return st.dictionaries(
        _texts(max_size=8), st.dictionaries(_texts(max_size=8), leaf, max_size=2), max_size=2
    )


def _numbers() -> SearchStrategy[float | int]:
    """JSON numbers every implementation reads alike: safe integers and finite floats.

    Integers and floats both, because the schemas type progress and bounds as `number`: an
    implementation that assumed one kind breaks on the other.
    """
    return st.one_of(
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
    )


def _is_modern(revision: str) -> bool:
    """Whether `revision` is 2026-07-28-shaped (no handshake, per-request `_meta`)."""
    return era_of(revision) is Era.MODERN


def _check_revision(revision: str) -> None:
    """ValueError for a revision the registry lacks: a typo in a test must fail loudly,
    not silently generate nothing.
    """
    if revision not in ALL_REVISIONS:
        raise ValueError(f"unknown revision {revision!r}; known: {', '.join(ALL_REVISIONS)}")


# ------------------------------------------------------- shared structures


def _implementation(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """A `clientInfo` / `serverInfo`: `title` only from 2025-06-18, since the older
    schemas do not list it and a schema-checking peer may refuse it.

    `name` and `version` are required in every revision's `Implementation`; drawing them
    always keeps every generated handshake valid.
    """
    optional: dict[str, SearchStrategy[Any]] = {}
    if revision not in (V2024_11_05, V2025_03_26):
        optional["title"] = _texts()
    return st.fixed_dictionaries({"name": _texts(), "version": _texts()}, optional=optional)


# An empty capability object means "supported, no options" in every revision, so it is the
# most common shape a real peer sends.
_EMPTY: SearchStrategy[dict[str, JSON]] = st.just({})


def client_capabilities(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """A `ClientCapabilities` object whose shape `revision` allows.

    Sub-fields are drawn only where the revision defines them: a capability the schema does
    not list is not "valid", and a strict peer may refuse the whole message for it.
    """
    _check_revision(revision)
    modern = _is_modern(revision)
    # 2026-07-28 dropped roots' listChanged, and
    # sampling's context/tools sub-objects only exist from 2025-11-25.
    roots = _EMPTY if modern else st.fixed_dictionaries({}, optional={"listChanged": st.booleans()})
    sampling = _EMPTY
    if revision in (V2025_11_25, *MODERN_REVISIONS):
        sampling = st.fixed_dictionaries({}, optional={"context": _EMPTY, "tools": _EMPTY})
    optional: dict[str, SearchStrategy[Any]] = {
        "roots": roots,
        "sampling": sampling,
        "experimental": _capability_objects(),
    }
    # Elicitation is 2025-06-18+: an empty object there (form only), form/url modes after.
    if revision == V2025_06_18:
        optional["elicitation"] = _EMPTY
    elif revision in (V2025_11_25, *MODERN_REVISIONS):
        optional["elicitation"] = st.fixed_dictionaries(
            {}, optional={"form": _EMPTY, "url": _EMPTY}
        )
    return st.fixed_dictionaries({}, optional=optional)


def server_capabilities(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """A `ServerCapabilities` object whose shape `revision` allows.

    `tasks` and `extensions` are left out: their shapes differ per era and their meaning
    depends on the client's declaration, so the tests that need them build them by hand.
    """
    _check_revision(revision)
    list_changed = st.fixed_dictionaries({}, optional={"listChanged": st.booleans()})
    optional: dict[str, SearchStrategy[Any]] = {
        "tools": list_changed,
        "prompts": list_changed,
        "resources": st.fixed_dictionaries(
            {}, optional={"subscribe": st.booleans(), "listChanged": st.booleans()}
        ),
        "logging": _EMPTY,
        "experimental": _capability_objects(),
    }
    # The completions capability arrived in 2025-03-26.
    if revision != V2024_11_05:
        optional["completions"] = _EMPTY
    return st.fixed_dictionaries({}, optional=optional)


def _modern_envelope(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """The required 2026-07-28 request `_meta`, with some optional keys.

    The two required keys are always present (a request without them is refused with -32602,
    which is `invalid_messages`' business), and the optional ones come and go so that every
    combination the server must accept is exercised.
    """
    return st.fixed_dictionaries(
        {
            _META_PROTOCOL_VERSION: st.just(revision),
            _META_CLIENT_CAPABILITIES: client_capabilities(revision),
        },
        optional={
            _META_CLIENT_INFO: _implementation(revision),
            _META_LOG_LEVEL: st.sampled_from(_LOG_LEVELS),
            "progressToken": request_ids(),
        },
    )


def _legacy_request_meta() -> SearchStrategy[dict[str, JSON]]:
    """The `_meta` a legacy request may carry: a progress token at most (the keys every
    legacy revision defines).

    The progress token is a request id's type (string or integer), as every revision's
    `ProgressToken` is; drawing it from `request_ids` makes tokens collide with ids, which
    must not confuse a receiver.
    """
    return st.fixed_dictionaries({}, optional={"progressToken": request_ids()})


def _subscription_filter() -> SearchStrategy[dict[str, JSON]]:
    """A 2026-07-28 listen filter: any subset of the opt-in notification types.

    `resourceSubscriptions` lists arbitrary strings: the server must honour only URIs it
    knows, and a filter naming unknown ones is valid on the wire.
    """
    return st.fixed_dictionaries(
        {},
        optional={
            "toolsListChanged": st.booleans(),
            "promptsListChanged": st.booleans(),
            "resourcesListChanged": st.booleans(),
            "resourceSubscriptions": st.lists(_texts(), max_size=3),
        },
    )


def _text_content() -> SearchStrategy[dict[str, JSON]]:
    """The one content block every revision has: text.

    Other content types (images, audio, resources) are validated by the models alone; the
    engine routes content without reading it, so text exercises the same paths.
    """
    return st.fixed_dictionaries({"type": st.just("text"), "text": _texts()})


def _message_role() -> SearchStrategy[str]:
    """A sampling or prompt message role."""
    return st.sampled_from(("user", "assistant"))


# ------------------------------------------------------------ param bodies

_Body = Callable[[str], SearchStrategy[dict[str, JSON]]]


def _no_params(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """Params of a method with no params model: an empty object (or none at all)."""
    return _EMPTY


def _paginated(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """Params of a `*/list` request: an optional opaque cursor.

    Cursors are opaque (2025-03-26, "Pagination"): any string is a valid one to send, and a
    server must answer a bad one with -32602, not break.
    """
    return st.fixed_dictionaries({}, optional={"cursor": _texts()})


def _initialize(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`initialize` params asking for `revision` itself, so the handshake a test drives
    settles on the revision it is testing.
    """
    return st.fixed_dictionaries(
        {
            "protocolVersion": st.just(revision),
            "capabilities": client_capabilities(revision),
            "clientInfo": _implementation(revision),
        }
    )


def _retry_fields(revision: str) -> dict[str, SearchStrategy[Any]]:
    """The optional MRTR retry fields of 2026-07-28 (answers plus echoed state).

    The state is any short string because the client must echo it unread (SEP-2322); the
    answers use only actions that need no content, which would have to fit a form.
    """
    if not _is_modern(revision):
        return {}
    answer = st.fixed_dictionaries(
        {"action": st.sampled_from(("accept", "decline", "cancel"))},
    )
    return {
        "requestState": _texts(max_size=64),
        "inputResponses": st.dictionaries(_texts(max_size=8), answer, max_size=2),
    }


def _call_tool(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`tools/call` params; in 2026-07-28 sometimes with retry fields.

    Arguments are any small JSON object: the schema leaves them to the tool, so the engine
    must pass them on without judging them.
    """
    return st.fixed_dictionaries(
        {"name": _texts(min_size=1)},
        optional={"arguments": _json_objects(), **_retry_fields(revision)},
    )


def _get_prompt(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`prompts/get` params: string arguments only, as the schema says."""
    return st.fixed_dictionaries(
        {"name": _texts(min_size=1)},
        optional={
            "arguments": st.dictionaries(_texts(max_size=8), _texts(), max_size=3),
            **_retry_fields(revision),
        },
    )


def _read_resource(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`resources/read` params; in 2026-07-28 sometimes with retry fields."""
    return st.fixed_dictionaries({"uri": _texts(min_size=1)}, optional=_retry_fields(revision))


def _uri_only(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """Params that are just a resource URI (subscribe, unsubscribe, updated).

    URIs are any non-empty text: the spec leaves their syntax to the server, and a URI is
    looked up, never parsed, by the engine.
    """
    return st.fixed_dictionaries({"uri": _texts(min_size=1)})


def _listen(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`subscriptions/listen` params: the filter."""
    return st.fixed_dictionaries({"notifications": _subscription_filter()})


def _complete(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`completion/complete` params; `context` only from 2025-06-18, which introduced it.

    Both reference kinds are drawn, since the server routes a completion by the kind.
    """
    ref = st.one_of(
        st.fixed_dictionaries({"type": st.just("ref/prompt"), "name": _texts()}),
        st.fixed_dictionaries({"type": st.just("ref/resource"), "uri": _texts()}),
    )
    optional: dict[str, SearchStrategy[Any]] = {}
    if revision not in (V2024_11_05, V2025_03_26):
        optional["context"] = st.fixed_dictionaries(
            {},
            optional={"arguments": st.dictionaries(_texts(max_size=8), _texts(), max_size=3)},
        )
    return st.fixed_dictionaries(
        {
            "ref": ref,
            "argument": st.fixed_dictionaries({"name": _texts(), "value": _texts()}),
        },
        optional=optional,
    )


def _set_level(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`logging/setLevel` params: one of the eight RFC 5424 levels."""
    return st.fixed_dictionaries({"level": st.sampled_from(_LOG_LEVELS)})


def _create_message(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`sampling/createMessage` params with text content only: tool use in sampling
    needs the client's `sampling.tools`, which a generated peer may not declare.

    `maxTokens` is at least 1: the schema types it as an integer, and zero would be a valid
    but useless request that some peers refuse.
    """
    message = st.fixed_dictionaries({"role": _message_role(), "content": _text_content()})
    return st.fixed_dictionaries(
        {
            "messages": st.lists(message, max_size=3),
            "maxTokens": st.integers(min_value=1, max_value=100_000),
        },
        optional={
            "systemPrompt": _texts(),
            "temperature": st.floats(min_value=0, max_value=2),
            "stopSequences": st.lists(_texts(), max_size=2),
        },
    )


def _elicit(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`elicitation/create` params. 2025-06-18 has form mode without a `mode` field;
    2025-11-25 may say `mode: "form"` and adds URL mode, whose `elicitationId` it
    requires. The URLs are https, as the spec asks of URLs outside development.
    """
    # The four primitive types every form revision allows (2025-06-18 on,
    # `PrimitiveSchemaDefinition`): a flat object of them is the one schema shape a client
    # must be able to draw.
    prop = st.sampled_from(
        ({"type": "string"}, {"type": "number"}, {"type": "integer"}, {"type": "boolean"})
    )
    schema = st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.dictionaries(_texts(min_size=1, max_size=8), prop, max_size=3),
        }
    )
    form_optional: dict[str, SearchStrategy[Any]] = {}
    if revision == V2025_11_25:
        form_optional["mode"] = st.just("form")
    form = st.fixed_dictionaries(
        {"message": _texts(), "requestedSchema": schema}, optional=form_optional
    )
    if revision != V2025_11_25:
        return form
    url = st.fixed_dictionaries(
        {
            "mode": st.just("url"),
            "message": _texts(),
            "url": st.just("https://example.com/")
            | _texts(min_size=1).map(lambda s: "https://example.com/" + s),
            "elicitationId": _texts(min_size=1),
        }
    )
    return form | url


def _cancelled(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`notifications/cancelled` params: any id, since a cancel may name one long gone.

    A cancel for an unknown id must be ignored (2025-03-26, "Cancellation"), so drawing ids
    unrelated to any request tests exactly that rule.
    """
    return st.fixed_dictionaries({"requestId": request_ids()}, optional={"reason": _texts()})


def _progress(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`notifications/progress` params; `message` only from 2025-03-26, which added it.

    Totals and progress are any safe numbers, floats included (the schema types them as
    `number`): a receiver must not assume integers.
    """
    optional: dict[str, SearchStrategy[Any]] = {"total": _numbers()}
    if revision != V2024_11_05:
        optional["message"] = _texts()
    return st.fixed_dictionaries(
        {"progressToken": request_ids(), "progress": _numbers()}, optional=optional
    )


def _log_message(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`notifications/message` params: `data` is required and may be any JSON."""
    return st.fixed_dictionaries(
        {"level": st.sampled_from(_LOG_LEVELS), "data": _small_json()},
        optional={"logger": _texts()},
    )


def _elicitation_complete(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`notifications/elicitation/complete` params (2025-11-25)."""
    return st.fixed_dictionaries({"elicitationId": _texts()})


def _acknowledged(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """`notifications/subscriptions/acknowledged` params: the accepted filter."""
    return st.fixed_dictionaries({"notifications": _subscription_filter()})


def _task_id(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """Params naming one task.

    A non-empty id: the schemas do not forbid "", but no server mints one, and a task id
    that looks absent would test nothing real.
    """
    return st.fixed_dictionaries({"taskId": _texts(min_size=1)})


def _task_fields(revision: str) -> dict[str, SearchStrategy[Any]]:
    """What every task carries: 2025-11-25 names its durations `ttl` / `pollInterval`,
    the 2026-07-28 extension `ttlMs` / `pollIntervalMs`.

    The TTL may be null (the schemas: unlimited), so a reader that assumed a number meets the
    case.
    """
    ttl = "ttl" if revision == V2025_11_25 else "ttlMs"
    return {
        "taskId": _texts(min_size=1),
        # Fixed timestamps: the schema wants ISO 8601 strings, and nothing in the engine
        # reads them, so drawing them would only slow the search down.
        "createdAt": st.just("2025-11-25T10:30:00Z"),
        "lastUpdatedAt": st.just("2025-11-25T10:40:00Z"),
        ttl: st.none() | st.integers(0, 10**9),
    }


def _task(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """A task in a status that needs nothing inlined (2026-07-28 inlines the
    result, error or questions of the other statuses).

    Only statuses that need nothing inlined, so a drawn task is valid in both eras with the
    same fields; the other statuses are built by the tests that need them.
    """
    poll = "pollInterval" if revision == V2025_11_25 else "pollIntervalMs"
    return st.fixed_dictionaries(
        {**_task_fields(revision), "status": st.sampled_from(("working", "cancelled"))},
        optional={poll: st.integers(1, 60_000), "statusMessage": _texts()},
    )


def _update_task(revision: str) -> SearchStrategy[dict[str, JSON]]:
    """The tasks extension's `tasks/update`: answers by key. Only decline and cancel,
    because an accept would need content fitting a form this strategy never saw.
    """
    answer = st.fixed_dictionaries({"action": st.sampled_from(("decline", "cancel"))})
    return st.fixed_dictionaries(
        {
            "taskId": _texts(min_size=1),
            "inputResponses": st.dictionaries(_texts(min_size=1, max_size=8), answer, max_size=2),
        }
    )


# Keyed by the params model name in the method table.
# A method without an entry here fails with KeyError at once: a new row in the method table
# must come with its params strategy, or the fuzzers would silently skip it.
_PARAM_BODIES: dict[str | None, _Body] = {
    None: _no_params,
    "InitializeRequestParams": _initialize,
    "PaginatedRequestParams": _paginated,
    "CallToolRequestParams": _call_tool,
    "GetPromptRequestParams": _get_prompt,
    "ReadResourceRequestParams": _read_resource,
    "SubscribeRequestParams": _uri_only,
    "UnsubscribeRequestParams": _uri_only,
    "SubscriptionsListenRequestParams": _listen,
    "CompleteRequestParams": _complete,
    "SetLevelRequestParams": _set_level,
    "CreateMessageRequestParams": _create_message,
    "ElicitRequestParams": _elicit,
    "CancelledNotificationParams": _cancelled,
    "ProgressNotificationParams": _progress,
    "LoggingMessageNotificationParams": _log_message,
    "ResourceUpdatedNotificationParams": _uri_only,
    "ElicitationCompleteNotificationParams": _elicitation_complete,
    "SubscriptionsAcknowledgedNotificationParams": _acknowledged,
    "GetTaskRequestParams": _task_id,
    "GetTaskPayloadRequestParams": _task_id,
    "CancelTaskRequestParams": _task_id,
    "TaskStatusNotificationParams": _task,
    "ExtGetTaskRequestParams": _task_id,
    "ExtUpdateTaskRequestParams": _update_task,
    "ExtCancelTaskRequestParams": _task_id,
    "ExtTaskNotificationParams": _task,
}

# Server notifications that 2026-07-28 delivers only on a listen stream, where
# `_meta` must name the subscription.
# (SPEC-NOTES 1.8: the subscription id MUST be on every notification of the stream).
_LISTEN_STREAM_NOTIFICATIONS = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
    }
)


def _spec(revision: str, method: str, sender: Sender) -> MethodSpec:
    """The method table row, or ValueError for a method `sender` lacks in `revision`.

    ValueError, not an empty strategy: a test asking for a method its revision lacks is
    wrong, and should say so rather than pass without drawing anything.
    """
    _check_revision(revision)
    spec = lookup(sender, method, revision)
    if spec is None:
        raise ValueError(f"{method!r} is not sent by the {sender} in revision {revision}")
    return spec


def _with_meta(
    body: SearchStrategy[dict[str, JSON]], meta: SearchStrategy[dict[str, JSON]]
) -> SearchStrategy[dict[str, JSON]]:
    """Put a drawn `_meta` into drawn params.

    `_meta` is added after the body is drawn so that bodies stay shared between eras; only
    the envelope differs.
    """
    return st.tuples(body, meta).map(lambda pair: {**pair[0], "_meta": pair[1]})


def valid_params(
    revision: str, method: str, sender: Sender = "client"
) -> SearchStrategy[dict[str, JSON] | None]:
    """The params of one request or notification that `sender` may send in `revision`.

    `None` stands for "no params member" where the method allows leaving it out.
    2026-07-28 client requests always carry the `_meta` envelope.
    """
    spec = _spec(revision, method, sender)
    body = _PARAM_BODIES[spec.params](revision)
    # A 2026-07-28 request without its envelope is not a 2026-07-28 request at all
    # (the era is read from it), so the envelope is never left out here.
    if spec.is_request and sender == "client" and _is_modern(revision):
        return _with_meta(body, _modern_envelope(revision))
    # Legacy params may be absent (None) where the schema makes them optional, so the
    # "no params member" path is exercised too.
    if spec.is_request:
        with_meta = _with_meta(body, _legacy_request_meta())
        if spec.params is None:
            return st.one_of(st.none(), body, with_meta)
        if spec.params_required:
            return body | with_meta
        return st.one_of(st.none(), body, with_meta)
    # A 2026-07-28 server notification outside a listen stream is only progress or a log
    # message for a request; the list_changed family exists only on listen streams.
    if sender == "server" and _is_modern(revision) and method in _LISTEN_STREAM_NOTIFICATIONS:
        return _with_meta(body, st.fixed_dictionaries({_META_SUBSCRIPTION_ID: request_ids()}))
    if spec.params is None:
        return st.none() | body
    return body


def _methods(
    revision: str, sender: Sender, requests: bool, methods: Collection[str] | None
) -> list[str]:
    """The methods `sender` sends in `revision`, of one kind, optionally narrowed.

    Sorted, so what is drawn does not depend on the table's order; ValueError when nothing is left, rather than an empty strategy that
    would make a test pass without running.
    """
    _check_revision(revision)
    found = [
        spec.method
        for spec in all_rows()
        if spec.sender == sender and spec.is_request == requests and revision in spec.revisions
    ]
    if methods is not None:
        unknown = set(methods) - set(found)
        if unknown:
            kind = "request" if requests else "notification"
            raise ValueError(
                f"not a {sender} {kind} in revision {revision}: {', '.join(sorted(unknown))}"
            )
        found = [m for m in found if m in methods]
    if not found:
        kind = "requests" if requests else "notifications"
        raise ValueError(f"the {sender} sends no {kind} in revision {revision}")
    return sorted(found)


def _message(head: dict[str, JSON], params: dict[str, JSON] | None) -> dict[str, JSON]:
    """Add `params` to a message head when there are any.

    A params member is left out rather than set to null: JSON-RPC 2.0 section 4.2 says
    params, when present, is a structured value, so `"params": null` is a broken message.
    """
    if params is not None:
        head["params"] = params
    return head


def valid_requests(
    revision: str,
    sender: Sender = "client",
    *,
    methods: Collection[str] | None = None,
    ids: SearchStrategy[int | str] | None = None,
) -> SearchStrategy[dict[str, JSON]]:
    """Well-formed JSON-RPC requests of methods `sender` may send in `revision`.

    `methods` narrows the choice (ValueError for one the revision lacks); `ids`
    replaces `request_ids()`. A 2026-07-28 server sends no requests, so asking
    for them raises ValueError.

    One `one_of` over per-method strategies, so shrinking moves towards the first method
    (sorted) and a failure's minimal example names a real method.
    """
    names = _methods(revision, sender, True, methods)
    id_strategy = ids if ids is not None else request_ids()

    def build(method: str) -> SearchStrategy[dict[str, JSON]]:
        """One method's requests: a drawn id and params."""
        return st.tuples(id_strategy, valid_params(revision, method, sender)).map(
            lambda pair: _message({"jsonrpc": "2.0", "id": pair[0], "method": method}, pair[1])
        )

    return st.one_of([build(m) for m in names])


def valid_notifications(
    revision: str,
    sender: Sender = "client",
    *,
    methods: Collection[str] | None = None,
) -> SearchStrategy[dict[str, JSON]]:
    """Well-formed notifications of methods `sender` may send in `revision`.

    One strategy per method, as for requests: shrinking then moves towards the first method
    in sorted order, and a failure names a real notification.
    """
    names = _methods(revision, sender, False, methods)

    def build(method: str) -> SearchStrategy[dict[str, JSON]]:
        """One method's notifications."""
        return valid_params(revision, method, sender).map(
            lambda params: _message({"jsonrpc": "2.0", "method": method}, params)
        )

    return st.one_of([build(m) for m in names])


# ------------------------------------------------------------------ results


def _tool() -> SearchStrategy[dict[str, JSON]]:
    """A tool with the smallest valid input schema (an object schema).

    `{"type": "object"}` is the smallest input schema every revision accepts (the schemas
    require an object schema); tools with header annotations are tested by hand.
    """
    return st.fixed_dictionaries(
        {"name": _texts(min_size=1), "inputSchema": st.just({"type": "object"})},
        optional={"description": _texts()},
    )


def _result_bodies(revision: str, result: str) -> SearchStrategy[dict[str, JSON]]:
    """The body of a result model for `revision`, before the 2026-07-28 additions
    (`resultType`, `_meta`, caching hints) that `valid_results` puts on.

    Keyed by result model name, so every method sharing a result type (the `*/list` family
    shares pagination) draws from one place; a missing name is a KeyError, so a new result
    type cannot be silently skipped.
    """
    named = st.fixed_dictionaries({"name": _texts(min_size=1)})
    # `nextCursor` is optional in every list result: its absence ends the pagination, and
    # both cases must reach the receiver.
    paginated = {"nextCursor": _texts()}
    bodies: dict[str, Callable[[], SearchStrategy[dict[str, JSON]]]] = {
        "InitializeResult": lambda: st.fixed_dictionaries(
            {
                "protocolVersion": st.just(revision),
                "capabilities": server_capabilities(revision),
                "serverInfo": _implementation(revision),
            },
            optional={"instructions": _texts()},
        ),
        # `EmptyResult` and `Result` may carry `_meta` in every revision, but the bare
        # object is what peers send for ping and most acknowledgements.
        "EmptyResult": lambda: _EMPTY,
        "Result": lambda: _EMPTY,
        # The revision under test comes first among the supported ones, so a drawn
        # discovery answer never contradicts the revision it is generated for.
        "DiscoverResult": lambda: st.fixed_dictionaries(
            {
                "supportedVersions": st.lists(
                    st.sampled_from(ALL_REVISIONS), max_size=3, unique=True
                ).map(lambda vs: [revision, *(v for v in vs if v != revision)]),
                "capabilities": server_capabilities(revision),
            },
            optional={"instructions": _texts()},
        ),
        "ListToolsResult": lambda: st.fixed_dictionaries(
            {"tools": st.lists(_tool(), max_size=3)}, optional=paginated
        ),
        # Text content only: the other content types are validated by the models, and the
        # engine's job is to route a result, not to judge every block.
        "CallToolResult": lambda: st.fixed_dictionaries(
            {"content": st.lists(_text_content(), max_size=3)},
            optional={"isError": st.booleans()},
        ),
        "ListPromptsResult": lambda: st.fixed_dictionaries(
            {"prompts": st.lists(named, max_size=3)}, optional=paginated
        ),
        "GetPromptResult": lambda: st.fixed_dictionaries(
            {
                "messages": st.lists(
                    st.fixed_dictionaries({"role": _message_role(), "content": _text_content()}),
                    max_size=3,
                )
            },
            optional={"description": _texts()},
        ),
        "ListResourcesResult": lambda: st.fixed_dictionaries(
            {
                "resources": st.lists(
                    st.fixed_dictionaries({"uri": _texts(min_size=1), "name": _texts()}),
                    max_size=3,
                )
            },
            optional=paginated,
        ),
        "ListResourceTemplatesResult": lambda: st.fixed_dictionaries(
            {
                "resourceTemplates": st.lists(
                    st.fixed_dictionaries({"uriTemplate": _texts(min_size=1), "name": _texts()}),
                    max_size=3,
                )
            },
            optional=paginated,
        ),
        "ReadResourceResult": lambda: st.fixed_dictionaries(
            {
                "contents": st.lists(
                    st.fixed_dictionaries({"uri": _texts(min_size=1), "text": _texts()}),
                    max_size=3,
                )
            }
        ),
        "CompleteResult": lambda: st.fixed_dictionaries(
            {
                "completion": st.fixed_dictionaries(
                    {"values": st.lists(_texts(), max_size=5)},
                    optional={"hasMore": st.booleans()},
                )
            }
        ),
        "CreateMessageResult": lambda: st.fixed_dictionaries(
            {"role": _message_role(), "content": _text_content(), "model": _texts()},
            optional={"stopReason": st.sampled_from(("endTurn", "stopSequence", "maxTokens"))},
        ),
        # Root URIs must be file:// (every revision says so), hence the prefix.
        "ListRootsResult": lambda: st.fixed_dictionaries(
            {
                "roots": st.lists(
                    st.fixed_dictionaries(
                        {"uri": _texts().map(lambda s: "file:///" + s)},
                        optional={"name": _texts()},
                    ),
                    max_size=3,
                )
            }
        ),
        # Content only with accept: decline and cancel carry none.
        "ElicitResult": lambda: st.one_of(
            st.fixed_dictionaries({"action": st.sampled_from(("decline", "cancel"))}),
            st.fixed_dictionaries(
                {"action": st.just("accept")},
                optional={
                    "content": st.dictionaries(
                        _texts(max_size=8),
                        st.one_of(_texts(), st.integers(-1000, 1000), st.booleans()),
                        max_size=3,
                    )
                },
            ),
        ),
        "GetTaskResult": lambda: _task(revision),
        "CancelTaskResult": lambda: _task(revision),
        "ExtGetTaskResult": lambda: _task(revision),
        "ListTasksResult": lambda: st.fixed_dictionaries(
            {"tasks": st.lists(_task(revision), max_size=2)}, optional=paginated
        ),
        # The original request's result; a tools/call's, with the related-task _meta.
        "GetTaskPayloadResult": lambda: st.fixed_dictionaries(
            {
                "content": st.lists(_text_content(), max_size=2),
                "_meta": st.fixed_dictionaries(
                    {
                        "io.modelcontextprotocol/related-task": st.fixed_dictionaries(
                            {"taskId": _texts(min_size=1)}
                        )
                    }
                ),
            }
        ),
    }
    return bodies[result]()


def valid_results(revision: str, method: str) -> SearchStrategy[dict[str, JSON]]:
    """A successful result for a request `method` of `revision` (either sender's).

    2026-07-28 results carry `resultType: "complete"`, `serverInfo` in `_meta`
    and, where the method is cacheable, `ttlMs` and `cacheScope`.

    Drawn for a method rather than for a result model because the era additions depend on
    the method (cacheable or not, listen or not).
    """
    _check_revision(revision)
    spec = lookup("client", method, revision)
    if spec is None or not spec.is_request:
        spec = lookup("server", method, revision)
    if spec is None or not spec.is_request:
        raise ValueError(f"{method!r} is not a request in revision {revision}")
    assert spec.result is not None
    body = _result_bodies(revision, spec.result)
    if not _is_modern(revision):
        return body
    meta: dict[str, SearchStrategy[Any]] = {_META_SERVER_INFO: _implementation(revision)}
    if method == "subscriptions/listen":
        meta[_META_SUBSCRIPTION_ID] = request_ids()
    extra: dict[str, SearchStrategy[Any]] = {
        "resultType": st.just("complete"),
        "_meta": st.fixed_dictionaries(meta),
    }
    # Required on cacheable 2026-07-28 results (CacheableResult), so never left out.
    if spec.cacheable:
        extra["ttlMs"] = st.integers(min_value=0, max_value=10**9)
        extra["cacheScope"] = st.sampled_from(("public", "private"))
    return st.tuples(body, st.fixed_dictionaries(extra)).map(lambda p: {**p[0], **p[1]})


def _error_objects() -> SearchStrategy[dict[str, JSON]]:
    """JSON-RPC error members: the codes MCP uses, often, and any integer sometimes
    (JSON-RPC lets applications define codes outside the reserved range).

    -32002 and -32042 are included though 2026-07-28 retires them: a receiver must still
    read them from older peers (SPEC-NOTES 1.13), and must not crash on them in any era.
    """
    codes = st.one_of(
        st.sampled_from((-32700, -32600, -32601, -32602, -32603, -32000, -32002, -32042)),
        st.integers(min_value=-_SAFE_INT, max_value=_SAFE_INT),
    )
    return st.fixed_dictionaries(
        {"code": codes, "message": _texts()}, optional={"data": _small_json()}
    )


def valid_responses(
    revision: str,
    sender: Sender = "server",
    *,
    methods: Collection[str] | None = None,
    ids: SearchStrategy[int | str] | None = None,
    errors: bool = True,
) -> SearchStrategy[dict[str, JSON]]:
    """Responses `sender` could send in `revision`: results for the peer's request methods
    (each shaped for one method of `methods`, default all) or, if `errors`, error objects.

    The id is drawn from `ids` (default `request_ids()`), so a response may or may
    not match a request in flight: that is the point when fuzzing.

    A sender with no peer requests in a revision (a 2026-07-28 server receives no responses)
    gets only errors, unless `errors` is False; then there is nothing to draw, and a
    ValueError says so.
    """
    peer: Sender = "client" if sender == "server" else "server"
    id_strategy = ids if ids is not None else request_ids()
    options: list[SearchStrategy[dict[str, JSON]]] = []
    try:
        names = _methods(revision, peer, True, methods)
    except ValueError:
        if methods:
            raise
        names = []
    for method in names:
        options.append(
            st.tuples(id_strategy, valid_results(revision, method)).map(
                lambda pair: {"jsonrpc": "2.0", "id": pair[0], "result": pair[1]}
            )
        )
    if errors:
        options.append(
            st.tuples(id_strategy, _error_objects()).map(
                lambda pair: {"jsonrpc": "2.0", "id": pair[0], "error": pair[1]}
            )
        )
    if not options:
        raise ValueError(f"the {sender} sends no responses in revision {revision}")
    return st.one_of(options)


def valid_messages(
    revision: str,
    sender: Sender = "client",
    *,
    ids: SearchStrategy[int | str] | None = None,
) -> SearchStrategy[dict[str, JSON]]:
    """Any well-formed message `sender` may send in `revision`: requests,
    notifications and responses (results and errors).

    Requests only where the sender has any: a 2026-07-28 server sends none, and an empty
    `one_of` would raise inside Hypothesis with a far less useful message.
    """
    options = [valid_notifications(revision, sender), valid_responses(revision, sender, ids=ids)]
    if any(
        spec.sender == sender and spec.is_request and revision in spec.revisions
        for spec in all_rows()
    ):
        options.insert(0, valid_requests(revision, sender, ids=ids))
    return st.one_of(options)


# ----------------------------------------------------------- broken messages


def _dumps(value: JSON) -> bytes:
    """Compact JSON with non-ASCII as UTF-8, as most peers write it.

    `ensure_ascii=False` because peers do write raw UTF-8, and a framing or decoding bug
    that only shows with multi-byte characters must be reachable.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _broken_ids() -> SearchStrategy[JSON]:
    """Values that are not JSON-RPC ids: null, booleans, floats (even integral ones),
    arrays and objects. An engine that coerced one would answer under another id.
    """
    return st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        # 1.0 separately: it compares equal to the id 1, so an engine that accepted floats
        # would put the two in one routing slot.
        st.just(1.0),
        st.lists(st.integers(0, 3), max_size=2),
        st.dictionaries(_texts(max_size=4), st.integers(0, 3), max_size=2),
    )


def _broken_objects() -> SearchStrategy[JSON]:
    """Objects that parse as JSON but break the JSON-RPC envelope.

    Each shape is one way an SDK has been broken by a peer (RELIABILITY.md 1.2): the case
    variant `Method` is the Go parser differential of CVE-2026-27896, a request carrying
    `result` the confusion of a response with a request, params as an array a JSON-RPC 1.0
    habit that MCP forbids.
    """
    # Real method names (so the breakage reaches the method's own checks) plus near misses:
    # a trailing space and a case variant must never match a method.
    methods = st.sampled_from([*sorted({m for _, m in METHODS}), "ping ", "Ping", "x"])
    ids = request_ids()
    params = _small_json()
    # Params that are not an object: JSON-RPC 2.0 (section 4.2) allows arrays, MCP does not,
    # so an engine that passed an array on would hand a handler positional params.
    bad_params = st.one_of(
        st.lists(_small_json(1), max_size=3),
        st.none(),
        st.booleans(),
        st.integers(-10, 10),
        _texts(),
    )
    # `jsonrpc` must be exactly the string "2.0": the number 2.0, `null` and "1.0" are each
    # something a lax reader might accept.
    envelope: SearchStrategy[dict[str, Any]] = st.one_of(
        st.just({}),
        st.just({"jsonrpc": "1.0"}),
        st.just({"jsonrpc": 2.0}),
        st.just({"jsonrpc": None}),
    )
    return st.one_of(
        # wrong or missing jsonrpc
        st.tuples(envelope, ids, methods).map(lambda t: {**t[0], "id": t[1], "method": t[2]}),
        st.tuples(envelope, methods).map(lambda t: {**t[0], "method": t[1]}),
        # ids that are not ids
        st.tuples(_broken_ids(), methods).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "method": t[1]}
        ),
        st.tuples(_broken_ids(), _json_objects(1)).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "result": t[1]}
        ),
        # both result and error, or neither
        st.tuples(ids, _json_objects(1)).map(
            lambda t: {
                "jsonrpc": "2.0",
                "id": t[0],
                "result": t[1],
                "error": {"code": -1, "message": "x"},
            }
        ),
        ids.map(lambda i: {"jsonrpc": "2.0", "id": i}),
        # malformed result and error members
        st.tuples(ids, params).map(lambda t: {"jsonrpc": "2.0", "id": t[0], "result": t[1]}),
        st.tuples(ids, params).map(lambda t: {"jsonrpc": "2.0", "id": t[0], "error": t[1]}),
        # params that are not an object
        st.tuples(ids, methods, bad_params).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "method": t[1], "params": t[2]}
        ),
        st.tuples(methods, bad_params).map(
            lambda t: {"jsonrpc": "2.0", "method": t[0], "params": t[1]}
        ),
        # method that is not a string, or too long, or case-variant keys
        st.tuples(ids, params).map(lambda t: {"jsonrpc": "2.0", "id": t[0], "method": t[1]}),
        st.tuples(ids, st.integers(257, 2000)).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "method": "m" * t[1]}
        ),
        st.tuples(ids, methods).map(lambda t: {"jsonrpc": "2.0", "id": t[0], "Method": t[1]}),
        # a request carrying result or error
        st.tuples(ids, methods).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "method": t[1], "result": {}}
        ),
        # valid-looking requests with params of the wrong shape
        st.tuples(ids, methods, _json_objects(2)).map(
            lambda t: {"jsonrpc": "2.0", "id": t[0], "method": t[1], "params": t[2]}
        ),
        # anything at all
        _small_json(3),
    )


def _nested(depth: int, kind: int) -> bytes:
    """`depth` levels of nesting: arrays (kind 0), objects (1), or objects inside a
    tool call's arguments (2), where the id can still be read for the error reply.

    120 to 300 levels: on both sides of the default `Limits.max_depth` (128) and well
    inside what a recursive parser survives, so the limit, not Python's recursion, must
    be what refuses the deep ones (RELIABILITY.md 1.2: pydantic's recursion error hung
    clients).
    """
    if kind == 0:
        return b"[" * depth + b"]" * depth
    if kind == 1:
        return b'{"a":' * depth + b"1" + b"}" * depth
    inner = b'{"a":' * depth + b"1" + b"}" * depth
    return b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":' + (
        inner + b"}}"
    )


# Tokens that break a parser or what comes after it, spliced into otherwise valid
# messages. NaN and Infinity are not JSON (Python's json accepts them anyway);
# 1e999 is JSON but overflows to infinity, which must never be echoed as a token;
# escaped lone surrogates parse but cannot be encoded as UTF-8 again, so an error
# reply quoting them must still encode; the rest are raw bytes and stray structure.
_TOKENS = (
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e999",
    b"-1e400",
    b"true",
    b"null",
    b'"\\ud800"',
    b'"\\udfff\\ud800"',
    b'"\\u0000"',
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8: invalid UTF-8
    b"\xff\xfe",
    b"\xc3",  # a truncated multi-byte sequence
    b"\x00",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b'"',
    b"\\",
)


def _raw_lines() -> SearchStrategy[bytes]:
    """Byte strings that are not one valid JSON text (or barely are).

    Raw bytes rather than JSON values, because the breakage is below JSON: what a parser
    sees before any object exists (RELIABILITY.md 1.2: raw invalid UTF-8 crashed a server
    that handled the same text escaped).
    """
    # 1001 to 1500 digits: just past `Limits.max_integer_digits` (1000) and below CPython's
    # `int_max_str_digits` (4300), so the engine's limit, not a ValueError raised inside the
    # parser, must be what refuses them.
    big_int = st.integers(1001, 1500).map(lambda n: b"9" * n)
    template = st.sampled_from(
        (
            # The tokens are spliced into spots where each part of the engine reads: the id
            # (the routing), a tool argument (passed to the application), the method (a
            # dictionary key), a result (validated), a progress token (looked up) and the
            # top level.
            b'{"jsonrpc":"2.0","id":%s,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"v":%s}}}',
            b'{"jsonrpc":"2.0","id":1,"method":%s}',
            b'{"jsonrpc":"2.0","id":1,"result":{"v":%s}}',
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%s}}',
            b"[%s]",
            b"%s",
        )
    )
    token = st.one_of(st.sampled_from(_TOKENS), big_int)
    filled = st.tuples(template, token).map(lambda t: t[0].replace(b"%s", t[1]))
    return st.one_of(
        filled,
        st.tuples(st.integers(120, 300), st.integers(0, 2)).map(lambda t: _nested(*t)),
        st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=8).map(b"".join),
        # Arbitrary short bytes: the framing and the parser must refuse anything, not only
        # the shapes listed above.
        st.binary(max_size=64),
        # duplicate envelope keys: last one wins in most parsers
        request_ids().map(
            lambda i: b'{"jsonrpc":"2.0","id":%s,"id":null,"method":"ping","method":7}' % _dumps(i)
        ),
        # truncated valid JSON
        st.tuples(_broken_objects(), st.integers(min_value=1, max_value=40)).map(
            lambda t: _dumps(t[0])[: -t[1]] if len(_dumps(t[0])) > t[1] else b"{"
        ),
    )


def _batches() -> SearchStrategy[bytes]:
    """JSON-RPC batch arrays: valid only in 2025-03-26 (and never for initialize).

    Batches mix valid and broken items because 2025-03-26 answers each item on its own: one
    bad item must not take the others' answers with it.
    """
    (batch_revision,) = sorted(BATCH_REVISIONS)
    item = st.one_of(
        valid_requests(batch_revision, ids=st.integers(0, 5)),
        valid_notifications(batch_revision),
        _broken_objects(),
    )
    return st.lists(item, max_size=5).map(_dumps)


def invalid_messages() -> SearchStrategy[bytes]:
    """One broken message as a line body (bytes, no newline).

    Covers wrong or missing `jsonrpc`, ids that are not ids, both or neither of
    `result`/`error`, params as an array or scalar, non-string and over-long
    method names, case-variant keys, duplicate keys, nesting past any sane
    depth, integers past 1000 digits, NaN/Infinity, lone surrogates, invalid
    UTF-8, NUL bytes, truncated JSON, arbitrary bytes and batch arrays.
    """
    objects = _broken_objects().map(_dumps)
    # Line breaks are replaced, not removed, so that the message stays one line (one frame)
    # with the same length: the broken part stays where it was.
    return st.one_of(objects, _raw_lines(), _batches()).map(
        lambda line: line.replace(b"\n", b" ").replace(b"\r", b" ")
    )


# ---------------------------------------------------------------- framing


def message_bytes(
    messages: SearchStrategy[Any] | None = None,
    *,
    min_size: int = 1,
    max_size: int = 8,
) -> SearchStrategy[bytes]:
    """Several messages as one NDJSON byte string.

    Each message is a JSON value (encoded compactly, non-ASCII as UTF-8) or
    `bytes` taken as an already-encoded line. Lines end in `\\n`, sometimes
    `\\r\\n`; an occasional blank line is thrown in. The default mixes valid
    messages of every revision and both senders with `invalid_messages()`.

    The default mixes senders and revisions on purpose: a receiver gets whatever a peer
    sends, and messages of the wrong era or direction must be refused, not crash it.
    """
    if messages is None:
        messages = st.one_of(
            revisions().flatmap(lambda r: valid_messages(r, "client")),
            revisions().flatmap(lambda r: valid_messages(r, "server")),
            invalid_messages(),
        )
    # Mostly `\n`, sometimes `\r\n` (which stdio peers on Windows write) and blank lines,
    # which the framing must skip rather than answer as empty messages.
    line = st.tuples(
        messages, st.sampled_from((b"\n", b"\n", b"\n", b"\r\n", b"\n\n", b"\n \n"))
    ).map(lambda pair: _encode_line(pair[0]) + pair[1])
    return st.lists(line, min_size=min_size, max_size=max_size).map(b"".join)


def _encode_line(message: Any) -> bytes:
    """A message as one line's bytes (bytes pass through as already encoded)."""
    if isinstance(message, bytes | bytearray):
        return bytes(message)
    return _dumps(message)


def chunked(data: bytes, *, max_chunks: int | None = None) -> SearchStrategy[list[bytes]]:
    """`data` cut at random points into non-empty chunks that join back to `data`.

    Chunks are never empty, because `receive_data(b"")` means end of stream.
    `b""` gives `[]`. `max_chunks` caps how many pieces (default: any).

    Cut points are where framing bugs hide: a line split inside a multi-byte character,
    inside the newline of `\r\n`, or at the byte after a newline.
    """
    if not data:
        return st.just([])
    cuts = st.sets(
        st.integers(min_value=1, max_value=max(1, len(data) - 1)),
        max_size=(max_chunks - 1) if max_chunks is not None else len(data),
    )

    def split(points: set[int]) -> list[bytes]:
        """Cut at the drawn points (those past the end dropped)."""
        bounds = [0, *sorted(p for p in points if p < len(data)), len(data)]
        return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    return cuts.map(split)
