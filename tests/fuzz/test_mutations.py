"""The type-confusing mutator (`mcp_core.testing.mutations`) on small messages."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from mcp_core.testing.mutations import (
    WRONG_TYPE_VALUES,
    Change,
    count_mutations,
    format_path,
    json_type,
    mutations,
    paths,
    sampled_mutations,
)

MESSAGE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "t", "arguments": {"n": 1.5, "tags": ["a", True]}, "_meta": {}},
}
JSON_TYPES = {"null", "boolean", "integer", "number", "string", "array", "object"}


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def test_the_wrong_values_cover_every_json_type() -> None:
    assert {kind for _, kind, _ in WRONG_TYPE_VALUES} == JSON_TYPES
    for _, kind, value in WRONG_TYPE_VALUES:
        assert json_type(value) == kind
        json.dumps(value)  # every one is plain JSON
    huge = next(v for label, _, v in WRONG_TYPE_VALUES if label == "huge-int")
    assert huge > 2**64
    deep = next(v for label, _, v in WRONG_TYPE_VALUES if label == "deep-object")
    assert len(json.dumps(deep)) > 40 * 5


def test_json_type_tells_bool_from_int_and_refuses_other_objects() -> None:
    assert [json_type(v) for v in (None, True, 0, 0.0, "", [], {})] == [
        "null",
        "boolean",
        "integer",
        "number",
        "string",
        "array",
        "object",
    ]
    with pytest.raises(TypeError):
        json_type(object())


def test_paths_visit_every_node_root_first_in_order() -> None:
    found = list(paths(MESSAGE))
    assert found[0] == ()
    assert found[1:5] == [("jsonrpc",), ("id",), ("method",), ("params",)]
    assert ("params", "arguments", "tags", 1) in found
    assert len(found) == 1 + 4 + 3 + 2 + 2 + 0  # root, top, params, arguments, tags


def test_every_path_gets_each_other_type_and_a_deletion() -> None:
    original = copy.deepcopy(MESSAGE)
    seen: dict[tuple[Any, ...], set[str]] = {}
    deleted: set[tuple[Any, ...]] = set()
    for mutation in mutations(MESSAGE):
        [change] = mutation.changes
        if change.kind == "delete":
            deleted.add(change.path)
            parent = _at(mutation.message, change.path[:-1])
            assert change.path[-1] not in parent or isinstance(parent, list)
            continue
        replaced = _at(mutation.message, change.path)
        seen.setdefault(change.path, set()).add(json_type(replaced))
    for path in paths(MESSAGE):
        kind = json_type(_at(MESSAGE, path))
        assert seen[path] == JSON_TYPES - {kind}, path
        assert (path in deleted) == bool(path)
    assert original == MESSAGE  # the input is never modified


def test_replacement_values_are_fresh_copies() -> None:
    made = [m for m in mutations({"a": 1, "b": 2}) if m.changes[0].label == "list"]
    whole, at_a, at_b = made  # the message itself comes first
    assert whole.message == [1, "x", None]
    assert at_a.message["a"] == at_b.message["b"] == [1, "x", None]
    assert at_a.message["a"] is not at_b.message["b"]
    at_a.message["a"].append("changed by the caller")
    again = next(
        m for m in mutations({"a": 1}) if m.changes[0].label == "list" and m.changes[0].path
    )
    assert again.message == {"a": [1, "x", None]}


def test_insert_adds_the_named_keys_where_they_are_missing() -> None:
    insert = {"_meta": ("progressToken", "io.modelcontextprotocol/logLevel"), "": ("extra",)}
    inserted = [m for m in mutations(MESSAGE, insert=insert) if m.changes[0].kind == "insert"]
    paths_ = {m.changes[0].path for m in inserted}
    assert paths_ == {
        ("params", "_meta", "progressToken"),
        ("params", "_meta", "io.modelcontextprotocol/logLevel"),
        ("extra",),
    }
    # Every value, of every type, goes into each inserted key.
    assert len(inserted) == 3 * len(WRONG_TYPE_VALUES)
    listed = next(
        m
        for m in inserted
        if m.changes[0].path[-1] == "io.modelcontextprotocol/logLevel"
        and m.changes[0].label == "empty-list"
    )
    assert listed.message["params"]["_meta"] == {"io.modelcontextprotocol/logLevel": []}
    # A key already present is replaced, not inserted.
    present = {"_meta": ("name",), "params": ("name",)}
    assert not [
        m
        for m in mutations(MESSAGE, insert=present)
        if m.changes[0].path == ("params", "name") and m.changes[0].kind == "insert"
    ]


def test_count_matches_the_enumeration() -> None:
    insert = {"*": ("k",)}
    assert count_mutations(MESSAGE, insert=insert) == sum(
        1 for _ in mutations(MESSAGE, insert=insert)
    )


def test_sampling_is_reproducible_from_its_seed_and_stacks_changes() -> None:
    def run(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [
            json.dumps(m.message, sort_keys=True) + str(m)
            for m in sampled_mutations(MESSAGE, rng.randrange, count=200, insert={"_meta": ("p",)})
        ]

    assert run(3) == run(3)
    assert run(3) != run(4)
    rng = random.Random(5)
    drawn = list(sampled_mutations(MESSAGE, rng.randrange, count=300, max_changes=3))
    assert {len(m.changes) for m in drawn} == {1, 2, 3}
    assert {c.kind for m in drawn for c in m.changes} >= {"replace", "delete"}
    for mutation in drawn:
        json.dumps(mutation.message)  # still plain JSON, whatever was stacked


def test_changes_read_as_paths() -> None:
    assert format_path(()) == "(message)"
    assert format_path(("params", "_meta", "io.modelcontextprotocol/logLevel")) == (
        "params._meta['io.modelcontextprotocol/logLevel']"
    )
    assert format_path(("params", "tags", 0)) == "params.tags[0]"
    assert str(Change(("id",), "replace", "null")) == "id <- null"
    assert str(Change(("id",), "delete", "deleted")) == "delete id"
    assert str(Change(("a", "b"), "insert", "list")) == "a.b <- list (inserted)"
