"""Subscriptions: legacy `resources/subscribe` / `unsubscribe` and unsolicited
`*/list_changed` / `resources/updated` notifications, and the 2026-07-28
`subscriptions/listen` streams (ack first, filtered notifications carrying the
subscription id, several streams at once, graceful end, client cancel).
Every emitted message is schema-validated.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_core import (
    INVALID_PARAMS,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    SERVER_BUSY,
    ErrorReceived,
    Limits,
    LocalProtocolError,
    NotificationReceived,
    RequestCancelled,
    RequestReceived,
    ResponseReceived,
    SubscriptionAcknowledged,
)
from mcp_core.types import (
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    SubscriptionFilter,
    UnsubscribeRequestParams,
)
from tests.core.interaction_support import (
    FULL_CAPS,
    MODERN,
    Wire,
    drain,
    envelope,
    inject,
    legacy_wire,
    modern_wire,
    of_type,
    one,
)

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
URI_A = "file:///data/a.txt"
URI_B = "file:///data/b.txt"

LIST_CHANGED = (
    ("notifications/tools/list_changed", "tools", "listChanged"),
    ("notifications/prompts/list_changed", "prompts", "listChanged"),
    ("notifications/resources/list_changed", "resources", "listChanged"),
)


def without(cap: str, flag: str) -> dict[str, Any]:
    caps = {k: dict(v) for k, v in FULL_CAPS.items()}
    del caps[cap][flag]
    return caps


# ---------------------------------------------------------------------- legacy


@pytest.mark.parametrize("revision", LEGACY)
def test_subscribe_and_unsubscribe_reach_the_application(revision: str) -> None:
    w = legacy_wire(revision)
    rid = w.client.send_request("resources/subscribe", {"uri": URI_A})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    assert req.method == "resources/subscribe"
    assert isinstance(req.params, SubscribeRequestParams)
    assert req.params.uri == URI_A
    w.server.send_result(req.request_id, {})
    client_events, _ = w.pump()
    assert one(client_events, ResponseReceived).request_id == rid
    assert w.last("server")["result"] == {}

    w.server.send_notification("notifications/resources/updated", {"uri": URI_A})
    client_events, _ = w.pump()
    note = one(client_events, NotificationReceived)
    assert note.method == "notifications/resources/updated"
    assert isinstance(note.params, ResourceUpdatedNotificationParams)
    assert note.params.uri == URI_A
    assert note.subscription_id is None

    w.client.send_request("resources/unsubscribe", {"uri": URI_A})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    assert req.method == "resources/unsubscribe"
    assert isinstance(req.params, UnsubscribeRequestParams)


@pytest.mark.parametrize("method", ["resources/subscribe", "resources/unsubscribe"])
def test_subscribe_is_gated_by_resources_subscribe(method: str) -> None:
    w = legacy_wire("2025-11-25", server_caps=without("resources", "subscribe"))
    with pytest.raises(LocalProtocolError, match=r"resources\.subscribe"):
        w.client.send_request(method, {"uri": URI_A})
    assert w.client.data_to_send() == b""
    events = inject(
        w.server, {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"uri": URI_A}}
    )
    assert not of_type(events, RequestReceived)
    [err] = drain(w.server, "2025-11-25")
    assert err["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize(("method", "cap", "flag"), LIST_CHANGED)
def test_list_changed_notifications(method: str, cap: str, flag: str) -> None:
    w = legacy_wire("2025-11-25")
    w.server.send_notification(method)
    client_events, _ = w.pump()
    note = one(client_events, NotificationReceived)
    assert note.method == method
    assert w.last("server") == {"jsonrpc": "2.0", "method": method}

    bare = legacy_wire("2025-11-25", server_caps=without(cap, flag))
    with pytest.raises(LocalProtocolError, match=flag):
        bare.server.send_notification(method)
    assert bare.server.data_to_send() == b""


def test_resource_updated_needs_the_subscribe_capability() -> None:
    w = legacy_wire("2025-11-25", server_caps=without("resources", "subscribe"))
    with pytest.raises(LocalProtocolError, match=r"resources\.subscribe"):
        w.server.send_notification("notifications/resources/updated", {"uri": URI_A})
    assert w.server.data_to_send() == b""


# The session's subscriptions: `notify_subscribers` tells a legacy session only what
# it asked for (`send_notification` stays the verb that sends regardless).


def subscribe(w: Wire, method: str, uri: str, *, answer: bool = True) -> RequestReceived:
    """The client sends `method` for `uri`; the server application sees it (and, with
    `answer`, accepts it with an empty result, as MCPServer does)."""
    w.client.send_request(method, {"uri": uri})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    if answer:
        w.server.send_result(req.request_id, {})
        w.pump()
    return req


def updates_for(w: Wire, uri: str) -> list[str]:
    """What one `notify_subscribers(resources/updated, uri)` delivers to the client."""
    told = w.server.notify_subscribers("notifications/resources/updated", {"uri": uri})
    client_events, _ = w.pump()
    got = [n.params.uri for n in of_type(client_events, NotificationReceived)]
    assert told == len(got)
    return got


@pytest.mark.parametrize("revision", LEGACY)
def test_resource_updated_reaches_only_a_subscribed_session(revision: str) -> None:
    w = legacy_wire(revision)
    assert updates_for(w, URI_A) == []  # never subscribed
    subscribe(w, "resources/subscribe", URI_A)
    assert w.server.resource_subscriptions == {URI_A}
    assert updates_for(w, URI_A) == [URI_A]
    assert updates_for(w, URI_B) == []  # subscribed to another URI
    subscribe(w, "resources/unsubscribe", URI_A)
    assert w.server.resource_subscriptions == frozenset()
    assert updates_for(w, URI_A) == []
    assert w.server.data_to_send() == b""


def test_unsubscribe_is_honoured_on_arrival_whatever_the_answer() -> None:
    w = legacy_wire("2025-11-25")
    subscribe(w, "resources/subscribe", URI_A)
    req = subscribe(w, "resources/unsubscribe", URI_A, answer=False)
    assert updates_for(w, URI_A) == []  # before the application answers it
    w.server.send_error(req.request_id, INVALID_PARAMS, "no such subscription")
    w.pump()
    assert updates_for(w, URI_A) == []


def test_a_subscription_starts_when_the_server_accepts_it() -> None:
    w = legacy_wire("2025-11-25")
    req = subscribe(w, "resources/subscribe", URI_A, answer=False)
    assert updates_for(w, URI_A) == []  # not accepted yet
    w.server.send_result(req.request_id, {})
    w.pump()
    assert updates_for(w, URI_A) == [URI_A]


def test_a_refused_or_cancelled_subscribe_subscribes_nothing() -> None:
    w = legacy_wire("2025-11-25")
    refused = subscribe(w, "resources/subscribe", URI_A, answer=False)
    w.server.send_error(refused.request_id, INVALID_PARAMS, "Resource not found")
    w.pump()
    assert updates_for(w, URI_A) == []

    cancelled = subscribe(w, "resources/subscribe", URI_B, answer=False)
    w.client.cancel_request(cancelled.request_id)
    _, server_events = w.pump()
    assert one(server_events, RequestCancelled).request_id == cancelled.request_id
    assert w.server.send_result(cancelled.request_id, {}) is False  # too late
    assert updates_for(w, URI_B) == []
    assert w.server.resource_subscriptions == frozenset()
    w.server.check_invariants()


def test_an_abandoned_subscribe_subscribes_nothing_and_leaves_nothing_waiting() -> None:
    # Each way a subscribe leaves the in-flight table reaches the server's ending hook
    # (`_ENDINGS_WATCHED`): here the transport lost its stream, and the subscribe it
    # carried must neither subscribe nor stay counted against the cap.
    w = legacy_wire("2025-11-25")
    lost = subscribe(w, "resources/subscribe", URI_A, answer=False)
    assert w.server.abandon_request(lost.request_id)
    assert w.server.send_result(lost.request_id, {}) is False  # gone with its stream
    assert updates_for(w, URI_A) == []
    assert w.server.resource_subscriptions == frozenset()
    w.server.check_invariants()
    for n in range(w.server.limits.max_subscriptions):  # the whole cap is free again
        subscribe(w, "resources/subscribe", f"file:///{n}")
    assert len(w.server.resource_subscriptions) == w.server.limits.max_subscriptions
    w.server.check_invariants()


def test_a_refused_repeat_subscribe_keeps_the_subscription_in_force() -> None:
    w = legacy_wire("2025-11-25")
    subscribe(w, "resources/subscribe", URI_A)
    again = subscribe(w, "resources/subscribe", URI_A, answer=False)
    w.server.send_error(again.request_id, INVALID_PARAMS, "already subscribed")
    w.pump()
    assert updates_for(w, URI_A) == [URI_A]


@pytest.mark.parametrize("accepted", ["first", "second"])
def test_one_accepted_subscribe_of_several_waiting_is_enough(accepted: str) -> None:
    w = legacy_wire("2025-11-25")
    first = subscribe(w, "resources/subscribe", URI_A, answer=False)
    second = subscribe(w, "resources/subscribe", URI_A, answer=False)
    w.server.check_invariants()  # both wait, for one URI
    yes, no = (first, second) if accepted == "first" else (second, first)
    w.server.send_result(yes.request_id, {})
    w.server.send_error(no.request_id, INVALID_PARAMS, "not this one")
    w.pump()
    assert updates_for(w, URI_A) == [URI_A]
    w.server.check_invariants()


def test_an_unsubscribe_voids_every_subscribe_waiting_before_it() -> None:
    w = legacy_wire("2025-11-25")
    waiting = [subscribe(w, "resources/subscribe", URI_A, answer=False) for _ in range(2)]
    subscribe(w, "resources/unsubscribe", URI_A)
    for req in waiting:
        w.server.send_result(req.request_id, {})
    w.pump()
    assert updates_for(w, URI_A) == []
    w.server.check_invariants()


def test_subscriptions_per_session_are_bounded() -> None:
    w = legacy_wire("2025-11-25", limits=Limits(max_subscriptions=2))
    subscribe(w, "resources/subscribe", URI_A)
    subscribe(w, "resources/subscribe", URI_B)
    subscribe(w, "resources/subscribe", URI_A)  # the same URI again takes no room
    rid = w.client.send_request("resources/subscribe", {"uri": "file:///data/c.txt"})
    client_events, server_events = w.pump()
    assert not of_type(server_events, RequestReceived)  # refused before the application
    failed = one(client_events, ErrorReceived)
    assert (failed.request_id, failed.code) == (rid, SERVER_BUSY)
    subscribe(w, "resources/unsubscribe", URI_A)
    subscribe(w, "resources/subscribe", "file:///data/c.txt")
    assert w.server.resource_subscriptions == {URI_B, "file:///data/c.txt"}
    w.server.check_invariants()


def test_legacy_list_changed_through_notify_subscribers_follows_the_capabilities() -> None:
    w = legacy_wire("2025-11-25")
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 1
    client_events, _ = w.pump()
    assert one(client_events, NotificationReceived).method == "notifications/tools/list_changed"
    assert w.last("server") == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    bare = legacy_wire("2025-11-25", server_caps=without("tools", "listChanged"))
    assert bare.server.notify_subscribers("notifications/tools/list_changed") == 0
    assert bare.server.data_to_send() == b""


def test_notify_subscribers_before_the_session_and_after_its_end() -> None:
    w = Wire()
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 0
    w.connect()
    subscribe(w, "resources/subscribe", URI_A)
    w.server.close("done")
    assert w.server.resource_subscriptions == frozenset()
    # After the end it is a no-op, like every send_* then (docs/embedding.md).
    assert w.server.notify_subscribers("notifications/resources/updated", {"uri": URI_A}) == 0
    assert w.server.data_to_send() == b""
    w.server.check_invariants()


def test_2026_has_no_subscribe_and_no_unsolicited_notifications() -> None:
    w = modern_wire()
    with pytest.raises(LocalProtocolError):
        w.client.send_request("resources/subscribe", {"uri": URI_A})
    for method, _, _ in LIST_CHANGED:
        with pytest.raises(LocalProtocolError):
            w.server.send_notification(method)
    with pytest.raises(LocalProtocolError):
        w.server.send_notification("notifications/resources/updated", {"uri": URI_A})
    assert w.client.data_to_send() == w.server.data_to_send() == b""


def test_legacy_has_no_listen() -> None:
    w = legacy_wire("2025-11-25")
    with pytest.raises(LocalProtocolError):
        w.client.send_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})


# ---------------------------------------------------------------------- 2026 listen


def listen(w: Wire, **notifications: Any) -> tuple[Any, RequestReceived]:
    lid = w.client.send_request("subscriptions/listen", {"notifications": notifications})
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    assert req.method == "subscriptions/listen"
    return lid, req


def test_listen_is_acknowledged_first_with_the_honoured_subset() -> None:
    caps = without("prompts", "listChanged")
    w = modern_wire(server_caps=caps)
    lid, req = listen(
        w, toolsListChanged=True, promptsListChanged=True, resourceSubscriptions=[URI_A]
    )
    assert req.request_id == lid
    assert isinstance(req.params.notifications, SubscriptionFilter)
    # Nothing goes out on the stream before the ack.
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 0
    assert w.server.data_to_send() == b""

    honoured = w.server.acknowledge_subscription(req.request_id)
    assert honoured == {"toolsListChanged": True, "resourceSubscriptions": [URI_A]}
    client_events, _ = w.pump()
    ack = one(client_events, SubscriptionAcknowledged)
    assert ack.request_id == lid
    assert ack.notifications.tools_list_changed is True
    assert ack.notifications.prompts_list_changed is None
    assert ack.notifications.resource_subscriptions == [URI_A]
    assert w.last("server") == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": [URI_A]},
            "_meta": {META_SUBSCRIPTION_ID: lid},
        },
    }
    with pytest.raises(LocalProtocolError):
        w.server.acknowledge_subscription(req.request_id)


def test_listen_ack_is_routed_to_the_listen_stream() -> None:
    w = modern_wire()
    lid, req = listen(w, toolsListChanged=True)
    w.server.acknowledge_subscription(req.request_id)
    w.server.notify_subscribers("notifications/tools/list_changed")
    out = w.server_messages()
    assert [m.related_request_id for m in out] == [lid, lid]
    assert [m.method for m in out] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]


def test_application_can_narrow_the_honoured_filter() -> None:
    w = modern_wire()
    lid, req = listen(w, toolsListChanged=True, resourceSubscriptions=[URI_A, URI_B])
    honoured = w.server.acknowledge_subscription(
        req.request_id, {"resourceSubscriptions": [URI_B], "promptsListChanged": True}
    )
    # Tools were not allowed by the application; prompts were never asked for.
    assert honoured == {"resourceSubscriptions": [URI_B]}
    w.pump()
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 0
    assert w.server.notify_subscribers("notifications/prompts/list_changed") == 0
    assert w.server.notify_subscribers("notifications/resources/updated", {"uri": URI_A}) == 0
    assert w.server.notify_subscribers("notifications/resources/updated", {"uri": URI_B}) == 1
    client_events, _ = w.pump()
    note = one(client_events, NotificationReceived)
    assert (note.subscription_id, note.params.uri) == (lid, URI_B)


def test_notifications_go_only_to_matching_streams_with_their_ids() -> None:
    w = modern_wire()
    tools_id, tools_req = listen(w, toolsListChanged=True)
    res_id, res_req = listen(w, resourceSubscriptions=[URI_A], toolsListChanged=True)
    prompts_id, prompts_req = listen(w, promptsListChanged=True, resourcesListChanged=True)
    for req in (tools_req, res_req, prompts_req):
        w.server.acknowledge_subscription(req.request_id)
    client_events, _ = w.pump()
    assert [e.request_id for e in of_type(client_events, SubscriptionAcknowledged)] == [
        tools_id,
        res_id,
        prompts_id,
    ]

    assert w.server.notify_subscribers("notifications/tools/list_changed") == 2
    assert w.server.notify_subscribers("notifications/resources/updated", {"uri": URI_A}) == 1
    assert w.server.notify_subscribers("notifications/resources/updated", {"uri": URI_B}) == 0
    assert w.server.notify_subscribers("notifications/prompts/list_changed") == 1
    assert w.server.notify_subscribers("notifications/resources/list_changed") == 1
    client_events, _ = w.pump()
    got = [(n.method, n.subscription_id) for n in of_type(client_events, NotificationReceived)]
    assert got == [
        ("notifications/tools/list_changed", tools_id),
        ("notifications/tools/list_changed", res_id),
        ("notifications/resources/updated", res_id),
        ("notifications/prompts/list_changed", prompts_id),
        ("notifications/resources/list_changed", prompts_id),
    ]
    # Each carries its own stream's id on the wire.
    for msg in w.sent("server")[-5:]:
        assert msg["params"]["_meta"][META_SUBSCRIPTION_ID] in (tools_id, res_id, prompts_id)
    updated = [m for m in w.sent("server") if m.get("method") == "notifications/resources/updated"]
    assert updated[-1]["params"] == {"uri": URI_A, "_meta": {META_SUBSCRIPTION_ID: res_id}}


def test_notify_subscribers_refuses_other_methods() -> None:
    w = modern_wire()
    with pytest.raises(LocalProtocolError):
        w.server.notify_subscribers("notifications/message", {"level": "info", "data": 1})
    with pytest.raises(LocalProtocolError):
        w.server.notify_subscribers("notifications/subscriptions/acknowledged")


def test_acknowledge_needs_an_open_listen_request() -> None:
    w = modern_wire()
    w.client.send_request("tools/call", {"name": "t"})
    _, server_events = w.pump()
    call = one(server_events, RequestReceived)
    with pytest.raises(LocalProtocolError):
        w.server.acknowledge_subscription(call.request_id)
    with pytest.raises(LocalProtocolError):
        w.server.acknowledge_subscription("no-such-id")
    with pytest.raises(LocalProtocolError):
        w.server.end_subscription(call.request_id)


def test_end_subscription_sends_the_result_then_cancelled() -> None:
    w = modern_wire()
    lid, req = listen(w, toolsListChanged=True)
    w.server.acknowledge_subscription(req.request_id)
    w.pump()
    mark = w.mark()
    assert w.server.end_subscription(req.request_id)
    client_events, _ = w.pump()
    final, cancelled = w.since(mark, "server")
    assert final["id"] == lid
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][META_SUBSCRIPTION_ID] == lid
    assert META_SERVER_INFO in final["result"]["_meta"]
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": lid, "reason": "subscription ended"},
    }
    done = one(client_events, ResponseReceived)
    assert (done.request_id, done.method) == (lid, "subscriptions/listen")
    assert len(client_events) == 1  # the trailing cancel is absorbed quietly
    # The stream is gone.
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 0
    assert w.client.requests_in_flight == (0, 0)
    assert w.server.requests_in_flight == (0, 0)


def test_client_cancel_ends_the_listen_on_the_server() -> None:
    w = modern_wire()
    keep_id, keep = listen(w, toolsListChanged=True)
    drop_id, drop = listen(w, toolsListChanged=True)
    w.server.acknowledge_subscription(keep.request_id)
    w.server.acknowledge_subscription(drop.request_id)
    w.pump()
    w.client.cancel_request(drop_id)
    _, server_events = w.pump()
    assert w.last("client") == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": drop_id},
    }
    assert one(server_events, RequestCancelled).request_id == drop.request_id
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 1
    client_events, _ = w.pump()
    assert one(client_events, NotificationReceived).subscription_id == keep_id
    with pytest.raises(LocalProtocolError):
        w.server.end_subscription(drop.request_id)


def test_listen_with_nothing_honoured_gets_an_empty_ack_and_nothing_else() -> None:
    caps = {"tools": {}, "logging": {}}
    w = modern_wire(server_caps=caps)
    lid, req = listen(w, toolsListChanged=True, resourceSubscriptions=[URI_A])
    assert w.server.acknowledge_subscription(req.request_id) == {}
    client_events, _ = w.pump()
    ack = one(client_events, SubscriptionAcknowledged)
    assert ack.request_id == lid
    assert w.last("server")["params"]["notifications"] == {}
    assert w.server.notify_subscribers("notifications/tools/list_changed") == 0
    assert w.server.data_to_send() == b""


def test_listen_streams_carry_no_logs() -> None:
    w = modern_wire(log_level="debug")
    _, req = listen(w, toolsListChanged=True)
    w.server.acknowledge_subscription(req.request_id)
    w.pump()
    # The listen request itself carried a logLevel, but log messages never go on it.
    assert req.context.log_level == "debug"
    assert w.server.send_log("error", "x", related_request_id=req.request_id) is False
    assert w.server.data_to_send() == b""


def test_listen_streams_carry_no_progress() -> None:
    w = modern_wire()
    lid = w.client.send_request(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, progress=True
    )
    _, server_events = w.pump()
    req = one(server_events, RequestReceived)
    assert req.context.progress_token is not None
    w.server.acknowledge_subscription(lid)
    w.pump()
    assert w.server.send_progress(lid, 1) is False
    assert w.server.data_to_send() == b""


def test_raw_listen_messages_are_schema_valid() -> None:
    """The same flow driven by a hand-written client, checking the server's bytes."""
    w = modern_wire()
    inject(
        w.server,
        {
            "jsonrpc": "2.0",
            "id": "L1",
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": envelope({})},
        },
    )
    w.server.acknowledge_subscription("L1")
    w.server.notify_subscribers("notifications/tools/list_changed")
    w.server.end_subscription("L1")
    out = drain(w.server, MODERN)
    assert [m.get("method", "result") for m in out] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "result",
        "notifications/cancelled",
    ]
    assert all(m.get("params", m.get("result"))["_meta"] for m in out[:3])
