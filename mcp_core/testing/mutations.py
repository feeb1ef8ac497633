"""Type confusion: every field of a valid message, given a value of the wrong JSON type.

Most crashes a protocol engine has on hostile input are not about bytes at all:
the message parses, its shape is right, and one field holds a list where the
code expects a string (``"logLevel": []``) or an object where it expects a
mode (``"mode": {}``). Random bytes almost never produce that; this module
does it on purpose. Start from a *valid* message, and change one field:

* **replace** it with a value of each other JSON type (`WRONG_TYPE_VALUES`:
  null, booleans, integers including one beyond 64 bits, a float, strings,
  arrays, objects and a deeply nested object);
* **delete** it (an object member or an array element);
* **insert** a member the message does not carry but a reader may look for
  (`insert=`, say the `_meta` keys your code reads), with each of those values.

`mutations()` enumerates all of them in a fixed order (every field, nested
ones too, and the whole message itself); `sampled_mutations()` draws from a
wider pool of values, several changes at a time, with the random source you
give it, so a seed reproduces a run. Both are plain generators over plain
JSON values: feed the results to your own connection or handler and assert
what must always hold (for an MCP engine: nothing but `RemoteProtocolError`
escapes, every request with a readable id gets exactly one answer, and the
next valid message is served normally).

A mutated message shares the parts it did not change with the original:
treat both as read-only, or copy before modifying.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "WRONG_TYPE_VALUES",
    "Change",
    "Mutation",
    "apply",
    "changes",
    "count_mutations",
    "format_path",
    "json_type",
    "mutations",
    "paths",
    "sampled_mutations",
]

# A path is a tuple of keys and indices rather than a dotted string: MCP keys contain dots
# and slashes (`io.modelcontextprotocol/logLevel`), so any string syntax would need escaping
# to be unambiguous.
PathPart = str | int
Path = tuple[PathPart, ...]
Kind = Literal["replace", "delete", "insert"]


def _deep_object(levels: int) -> dict[str, Any]:
    """`{"a": {"a": ...}}` nested `levels` deep, for the deep-object wrong value.

    Built in a loop, not by recursion: the helper itself must never be the thing that hits a
    recursion limit.
    """
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


# (label, JSON type, value). One or two of each type: enough to break any code
# that assumes a type, few enough to try them all on every field. The huge
# integer does not fit 64 bits (nor a double exactly); the deep object nests
# 40 levels, deep for a field yet inside every default nesting limit.
WRONG_TYPE_VALUES: Final[tuple[tuple[str, str, Any], ...]] = (
    ("null", "null", None),
    ("true", "boolean", True),
    ("false", "boolean", False),
    ("zero", "integer", 0),
    ("negative", "integer", -1),
    # 2**64 + 1 is neither an int64 nor exactly a double: code that stores ids or numbers in
    # either, or hashes them after a float conversion, meets the case it forgot.
    ("huge-int", "integer", 2**64 + 1),
    # 1.5 and not 1.0: an integral float is a separate confusion (it equals an int in
    # Python), which `strategies.invalid_messages` covers where it matters, in ids.
    ("float", "number", 1.5),
    ("empty-string", "string", ""),
    ("string", "string", "x"),
    ("empty-list", "array", []),
    ("list", "array", [1, "x", None]),
    ("empty-object", "object", {}),
    ("object", "object", {"x": 1}),
    ("deep-object", "object", _deep_object(40)),
)


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: null, boolean, integer, number, string, array, object.

    `bool` is checked before `int` (in Python a bool is an int; on the wire it is not).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Change:
    """One edit: `path` from the root (object keys and array indices), what was done,
    and a label for the value put there (a `WRONG_TYPE_VALUES` label, or the
    kind of a sampled value).

    Kept apart from the mutated message so that a failing test can name its case in one
    line, and so that `changes()` can list thousands of cases without copying anything.
    """

    path: Path
    kind: Kind
    label: str

    def __str__(self) -> str:
        """`params.name <- null`-style text, short enough for a test id or a failure line."""
        where = format_path(self.path)
        if self.kind == "delete":
            return f"delete {where}"
        return f"{where} <- {self.label}" + (" (inserted)" if self.kind == "insert" else "")


@dataclass(frozen=True, slots=True)
class Mutation:
    """A mutated copy of a message and the changes that made it.

    Frozen: a mutation is a test case, and a handler that changed it would make the next
    assertion about it meaningless.
    """

    changes: tuple[Change, ...]
    message: Any

    def __str__(self) -> str:
        """Its changes, joined: what a failing test prints to say how the message was broken."""
        return "; ".join(str(c) for c in self.changes)


def format_path(path: Path) -> str:
    """``params._meta["io.modelcontextprotocol/logLevel"]``-style text for a path."""
    if not path:
        return "(message)"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def paths(value: Any) -> Iterator[Path]:
    """Every path in a JSON value, the root first, then depth first in member order.

    Iterative with an explicit stack, so a deeply nested message (which mutations make on
    purpose) cannot exhaust Python's recursion while being walked.
    """
    stack: list[tuple[Path, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        yield path
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))


def _get(value: Any, path: Path) -> Any:
    """The node at `path` (the path comes from `paths`, so every step exists)."""
    for part in path:
        value = value[part]
    return value


def _fresh(value: Any) -> Any:
    """A copy of a small JSON value, so no two mutations share a mutable replacement.

    The replacements come from module-level tuples; without the copy, an engine that changed
    a received object in place would change the constant for every later case.
    """
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


# A sentinel, not None: replacing a field with null is one of the mutations, so None cannot
# also mean "delete".
_DELETE: Final = object()


def _with(value: Any, path: Path, new: Any) -> Any:
    """`value` with the node at `path` replaced (or deleted, or inserted when the
    last key is new): containers on the path are copied, everything else shared.

    Copy-on-write along the path only: a message with thousands of mutations stays cheap,
    since each shares every untouched branch with the original.
    """
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if rest:
            copy[head] = _with(value[head], rest, new)
        elif new is _DELETE:
            del copy[head]
        else:
            copy[head] = new
        return copy
    assert isinstance(value, list) and isinstance(head, int)
    items = list(value)
    if rest:
        items[head] = _with(value[head], rest, new)
    elif new is _DELETE:
        del items[head]
    else:
        items[head] = new
    return items


def _insertion_points(
    message: Any, insert: Mapping[str, Collection[str]] | None
) -> Iterator[tuple[Path, str]]:
    """(object path, key) for every `insert` key absent from an object it names.

    `insert` maps the member name that holds an object (``"_meta"``, ``"params"``)
    to keys to add there; ``"*"`` means every object, and ``""`` the message itself.

    Insertion exists because type confusion also hides in members a message lacks: code that
    reads `params._meta.get("progressToken")` is only tested by a message that has the key
    with a wrong type in it.
    """
    if not insert:
        return
    for path in paths(message):
        node = _get(message, path)
        if not isinstance(node, dict):
            continue
        holder = path[-1] if path and isinstance(path[-1], str) else ""
        wanted = [*insert.get(holder, ()), *insert.get("*", ())] if path else [*insert.get("", ())]
        for key in wanted:
            if key not in node:
                yield path, key


def changes(
    message: Any,
    *,
    insert: Mapping[str, Collection[str]] | None = None,
    values: tuple[tuple[str, str, Any], ...] = WRONG_TYPE_VALUES,
) -> Iterator[Change]:
    """The single changes `mutations()` makes, without making them (cheap: no copies).

    Select from these, then `apply()` the ones you keep.
    """
    for path in paths(message):
        kind = json_type(_get(message, path))
        if path:
            yield Change(path, "delete", "deleted")
        for label, value_type, _ in values:
            # A replacement of the same JSON type is skipped: it would be a valid message
            # (or invalid for reasons other than type), which is not what this module is
            # for.
            if value_type != kind:
                yield Change(path, "replace", label)
    for parent, key in _insertion_points(message, insert):
        for label, _, _ in values:
            yield Change((*parent, key), "insert", label)


def apply(
    message: Any,
    change: Change,
    values: tuple[tuple[str, str, Any], ...] = WRONG_TYPE_VALUES,
) -> Mutation:
    """`message` with one change of `changes()` made (its label names one of `values`).

    Looked up by label so a test can store the `Change` (say, as a parametrize id) and
    rebuild the exact case later.
    """
    if change.kind == "delete":
        return Mutation((change,), _with(message, change.path, _DELETE))
    value = next(v for label, _, v in values if label == change.label)
    return Mutation((change,), _with(message, change.path, _fresh(value)))


def mutations(
    message: Any,
    *,
    insert: Mapping[str, Collection[str]] | None = None,
    values: tuple[tuple[str, str, Any], ...] = WRONG_TYPE_VALUES,
) -> Iterator[Mutation]:
    """Every single-change type confusion of `message`, in a fixed order.

    For each path (the message itself, then every member and element, depth
    first): delete it (not the root), then each of `values` whose JSON type
    differs from the value found there. Then, for each `insert` point, the
    missing key with each of `values`. The count is roughly
    ``paths * len(values)``; nothing is random.
    """
    for change in changes(message, insert=insert, values=values):
        yield apply(message, change, values)


def count_mutations(
    message: Any,
    *,
    insert: Mapping[str, Collection[str]] | None = None,
    values: tuple[tuple[str, str, Any], ...] = WRONG_TYPE_VALUES,
) -> int:
    """How many `mutations()` yields, without building them.

    For parametrised tests that must know the case count up front (test ids, or a budget
    check) without materialising every copy.
    """
    total = 0
    for path in paths(message):
        kind = json_type(_get(message, path))
        total += (1 if path else 0) + sum(1 for _, t, _ in values if t != kind)
    points = sum(1 for _ in _insertion_points(message, insert))
    return total + points * len(values)


# ------------------------------------------------------------------ sampling

RandRange = Callable[[int], int]  # e.g. random.Random(seed).randrange

# Strings that mean something somewhere: numbers and keywords as text (a lax parser
# coerces them), MCP's own enum values, the JSON-RPC version and a revision out of
# place, NUL, a lone surrogate, a right-to-left override (display spoofing), and one
# longer than most fields expect.
_STRINGS: Final = (
    "",
    " ",
    "0",
    "1",
    "-1",
    "true",
    "null",
    "NaN",
    "form",
    "url",
    "debug",
    "complete",
    "input_required",
    "2.0",
    "2026-07-28",
    "\u0000",
    "\ud800",  # a lone surrogate: parses, then fails to encode as UTF-8
    "é\u202e",
    "a" * 300,
)
# Integers at the edges of int32, of exact doubles (2**53, past which JavaScript
# rounds), of int64, and past it; floats at the edges of their range, a negative
# zero (equal to 0, but not the same text) and fractions where integers belong.
_NUMBERS: Final = (
    0,
    1,
    -1,
    2**31,
    2**53,
    2**53 + 1,
    -(2**63),
    2**63,
    10**30,
    0.0,
    -0.0,
    0.5,
    1e308,
    5e-324,
    -1.5,
)


def _random_value(randrange: RandRange, depth: int = 0) -> tuple[str, Any]:
    """(label, value) from a wider pool than `WRONG_TYPE_VALUES`: edge numbers and
    strings, containers holding other values, and the fixed confusions themselves.

    The kinds have equal odds (containers only near the top), so no kind of value
    dominates a run and a sampled value stays small.
    """
    # Containers only near the top, so a sampled value stays small; the deep list is
    # the one deliberate exception, built without recursion.
    pick = randrange(6 if depth < 3 else 3)
    if pick == 0:
        label, _, value = WRONG_TYPE_VALUES[randrange(len(WRONG_TYPE_VALUES))]
        return label, _fresh(value)
    if pick == 1:
        return "number", _NUMBERS[randrange(len(_NUMBERS))]
    if pick == 2:
        return "string", _STRINGS[randrange(len(_STRINGS))]
    if pick == 3:
        return "list", [_random_value(randrange, depth + 1)[1] for _ in range(randrange(4))]
    if pick == 4:
        # Keys that readers branch on (`type`, `mode`, `_meta`, `id`) and the empty key,
        # which some code treats as missing.
        keys = ("a", "type", "mode", "_meta", "id", "")
        return "object", {
            keys[randrange(len(keys))]: _random_value(randrange, depth + 1)[1]
            for _ in range(randrange(4))
        }
    return "deep-list", _nest_lists(randrange(60) + 1)


def _nest_lists(levels: int) -> list[Any]:
    """`[[...]]` nested `levels` deep: a sampled value that probes depth checks.

    At most 60 levels, inside every default depth limit: the deep case tests code that walks
    values, not the parser's limit (`strategies.invalid_messages` covers that).
    """
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def sampled_mutations(
    message: Any,
    randrange: RandRange,
    *,
    count: int,
    max_changes: int = 3,
    insert: Mapping[str, Collection[str]] | None = None,
) -> Iterator[Mutation]:
    """`count` mutations of `message`, each of 1 to `max_changes` stacked changes.

    Each change picks a path of the message as it stands (so a later change may
    land inside an earlier one's value) and deletes it, replaces it, or inserts
    an `insert` key, with a value from a wide pool (edge integers and floats,
    odd strings, nested containers, the fixed confusions). `randrange(n)` must
    return an integer in ``[0, n)``; ``random.Random(seed).randrange`` makes a
    run repeatable.

    Changes are stacked on the message as it stands after the last change, because realistic
    breakage compounds (a wrong type inside a missing member's replacement) and single
    changes never reach those shapes. The random source is injected, not drawn from the
    `random` module, so the caller owns the seed and a failing run is reproduced exactly.
    """
    for _ in range(count):
        current = message
        changes: list[Change] = []
        for _ in range(1 + randrange(max_changes)):
            points = list(_insertion_points(current, insert))
            all_paths = list(paths(current))
            # Mostly replacements: they keep the message's shape, which is what reaches
            # deep code; deletes and inserts each come one time in ten.
            action = randrange(10)
            if action == 0 and points:
                parent, key = points[randrange(len(points))]
                label, value = _random_value(randrange)
                path = (*parent, key)
                current = _with(current, path, value)
                changes.append(Change(path, "insert", label))
            elif action == 1 and len(all_paths) > 1:
                path = all_paths[1 + randrange(len(all_paths) - 1)]
                current = _with(current, path, _DELETE)
                changes.append(Change(path, "delete", "deleted"))
            else:
                path = all_paths[randrange(len(all_paths))]
                label, value = _random_value(randrange)
                current = _with(current, path, value)
                changes.append(Change(path, "replace", label))
        yield Mutation(tuple(changes), current)
