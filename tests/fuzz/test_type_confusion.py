"""Type confusion: every field of every message of every revision, of the wrong JSON type.

The default run feeds the quick plan (every receiver, era, method and field
path, with one value of each other JSON type and a deletion, spread over the
revisions and states by a stable hash; one key in eight also through HTTP) and
a seeded random sample of stacked changes, in eight shards so two workers
share them. `make fuzz` runs the full enumeration and a million inputs
(`fuzz/type_confusion.py`). The invariants are in `type_confusion.py`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from mcp_core import RequestReceived, ServerConnection
from mcp_core.testing import general_path_only
from mcp_core.testing.mutations import Mutation, changes

from . import type_confusion as tc
from .type_confusion import (
    INSERT,
    Failure,
    Run,
    make_runner,
    quick_changes,
    quick_shard,
    sampled_plan,
    targets,
)

SHARDS = 8
SAMPLED_PER_SHARD = 250
SAMPLE_SEED = 11_2026


def test_the_default_run_feeds_at_least_20000_inputs() -> None:
    assert len(quick_changes()) + SHARDS * SAMPLED_PER_SHARD >= 20_000


@pytest.mark.parametrize("shard", range(SHARDS))
def test_type_confusion(shard: int) -> None:
    items = quick_shard(shard, SHARDS)
    sampled = list(sampled_plan(SAMPLE_SEED + shard, SAMPLED_PER_SHARD))
    run = Run()
    for item in (*items, *sampled):
        run.feed(item)  # raises Failure, naming the input, on any broken invariant
    assert run.fed == len(items) + len(sampled)


def test_the_quick_plan_reaches_every_target_method_and_field() -> None:
    plan = quick_changes()  # (each input is its seed with the one change made)
    fed = Counter(target.name for target, _, _ in plan)
    assert set(fed) == {t.name for t in targets()}
    for target in targets():
        methods = {(s.kind, s.method) for s in target.seeds()}
        planned = {(s.kind, s.method) for t, s, _ in plan if t.name == target.name}
        if not target.http:  # (HTTP targets get a share of the keys only)
            assert planned == methods, target.name
    # Every field path of a seed appears, whichever state received it.
    paths = {(t.receiver, s.kind, s.method, c.path) for t, s, c in plan}
    seed = next(s for s in tc._all_seeds("2026-07-28", "server") if s.method == "tools/call")
    for change in changes(seed.message, insert=INSERT, values=tc.QUICK_VALUES):
        assert ("server", "request", "tools/call", change.path) in paths


@pytest.mark.parametrize(
    ("receiver", "revision", "method", "path", "label"),
    [
        (
            "server",
            "2026-07-28",
            "tools/call",
            ("params", "_meta", "io.modelcontextprotocol/logLevel"),
            "empty-list",
        ),
        ("client", "2025-06-18", "elicitation/create", ("params", "mode"), "object"),
    ],
    ids=["logLevel-list", "mode-object"],
)
def test_the_quick_plan_holds_the_known_triggers(
    receiver: str, revision: str, method: str, path: tuple[str, ...], label: str
) -> None:
    """The two bugs of the issue are inputs the default run feeds (so it would
    have caught them): the log level as a list, the elicitation mode as an object."""
    assert any(
        t.receiver == receiver
        and t.revision == revision
        and s.method == method
        and c.path == path
        and c.label == label
        for t, s, c in quick_changes()
    )


# Unmutated seeds every target must serve: requests answered by the application
# (or automatically), notifications taken, our requests settled by their answer.
SERVED = {
    "result",
    "error -32603",  # the application's own refusal ("fuzz says no")
    "no-reply",
    "ResponseReceived",
    "ErrorReceived",
    "input-round",
    "http 200",
    "http 202",
    "http 200 error -32603",
    "http 202 ResponseReceived",
    "http 202 ErrorReceived",
}
# What the engine refuses by design, each for its reason.
NOT_SERVED = {
    ("initialize", "error -32600"),  # inside a session: already initialized
    ("initialize", "http 200 error -32600"),
    ("tasks/get", "error -32601"),  # the tasks extension is not implemented
    ("tasks/result", "error -32601"),
    ("tasks/cancel", "error -32601"),
    ("tasks/list", "error -32601"),
    ("tasks/get", "http 200 error -32601"),
    ("tasks/result", "http 200 error -32601"),
    ("tasks/cancel", "http 200 error -32601"),
    ("tasks/list", "http 200 error -32601"),
}


@pytest.mark.parametrize("target", targets(), ids=lambda t: t.name)
def test_every_valid_seed_is_served(target: tc.Target) -> None:
    """The fuzzer's baseline: unmutated, each seed is served normally, so the
    mutations around it start from messages the engine accepts."""
    runner = make_runner(target)
    for seed in target.seeds():
        label = runner.feed(seed, Mutation((), seed.message))
        if seed.definition.startswith("CreateTaskResult"):
            # A task result answers only task-augmented requests, which we never send.
            assert label.endswith("RequestFailed"), (seed.definition, label)
            continue
        assert label in SERVED or (seed.method, label) in NOT_SERVED, (seed.definition, label)


def test_the_harness_catches_an_escaping_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug of the class: an exception other than RemoteProtocolError out of
    receive_data is a failure, reported with the input."""
    original = ServerConnection._accept_request

    def broken(self: ServerConnection, rid: Any, method: str, params: Any, events: Any) -> None:
        if rid == "fz" and method == "tools/call":  # (not the setup's own calls)
            raise TypeError("planted")
        original(self, rid, method, params, events)

    monkeypatch.setattr(ServerConnection, "_accept_request", broken)
    # (Planted in the general path, which a plain request's lane does not reach.)
    with general_path_only(), pytest.raises(Failure, match=r"TypeError: planted(.|\n)*input"):
        Run().feed(_unmutated("server/2026-07-28/stream", "tools/call"))


def test_the_harness_catches_a_request_left_unanswered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: a request the engine neither answers nor shows the application."""
    original = ServerConnection._accept_request

    def swallowing(self: ServerConnection, rid: Any, method: str, params: Any, events: Any) -> None:
        if rid == "fz" and method == "prompts/list":
            return
        original(self, rid, method, params, events)

    monkeypatch.setattr(ServerConnection, "_accept_request", swallowing)
    # (Planted in the general path, which a plain request's lane does not reach.)
    with general_path_only(), pytest.raises(Failure, match="exactly one reply expected"):
        Run().feed(_unmutated("server/2025-11-25/session", "prompts/list"))


def test_the_harness_catches_a_request_shown_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the probe after each input notices a broken dispatch table."""
    original = ServerConnection._accept_request

    def doubling(self: ServerConnection, rid: Any, method: str, params: Any, events: Any) -> None:
        original(self, rid, method, params, events)
        if method == "tools/list" and str(rid).startswith("probe"):
            events.append(RequestReceived(rid, method, None, events[-1].context))

    monkeypatch.setattr(ServerConnection, "_accept_request", doubling)
    # (Planted in the general path, which a plain request's lane does not reach.)
    with general_path_only(), pytest.raises(Failure, match="probe"):
        Run().feed(_unmutated("server/2025-11-25/session", "ping"))


def _unmutated(target_name: str, method: str) -> tc.Item:
    target = next(t for t in targets() if t.name == target_name)
    seed = next(s for s in target.seeds() if s.kind == "request" and s.method == method)
    return target, seed, Mutation((), seed.message)
