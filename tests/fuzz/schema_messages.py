"""Valid messages of every definition of a revision, built from its official schema.

The type-confusion fuzzer needs one well-formed instance of every message a
peer may send (each client and server request and notification, every result
a request may get, error responses), with *every* optional field present so
that each one gets mutated. Hand-written examples would miss the fields nobody
thought of; these are derived from `tests/spec/<revision>/schema.json` through
`tests.schema_check`, and each is checked against that same schema.

A union (`anyOf`) picks its first branch; every other branch of every union
reached is then tried once on its own, so form and URL elicitation, each
content block kind and each result alternative all appear (a covering set,
not the product of every choice).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from mcp_core._versions import MODERN_REVISIONS
from tests.schema_check import (
    definitions,
    method_index,
    resolve_ref,
    result_definitions,
    validate_message,
)

Receiver = Literal["server", "client"]
Kind = Literal["request", "notification", "result", "error"]

# Placeholder id; the harness puts the id the receiving state expects in its place.
SEED_ID = "seed"

_MAX_DEPTH = 12  # below this, optional members are left out (recursive definitions)

_FORMATS: Mapping[str, str] = {
    "uri": "file:///fuzz/a.txt",
    "uri-reference": "file:///fuzz/a.txt",
    "uri-template": "file:///fuzz/{name}",
    "byte": "AAAA",
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "email": "fuzz@example.com",
}


_FREE_JSON: Mapping[str, Any] = {"JSONValue": lambda: "any", "JSONObject": dict, "JSONArray": list}


@dataclass(frozen=True, slots=True)
class Seed:
    """One valid message a `receiver` may get in `revision`.

    `definition` names the schema definition (with the union branches taken
    when not the first, e.g. ``ElicitRequest[params:1]``); `method` is the
    message's method, or for results and errors the method of the request
    they answer (None for errors that answer nothing in particular).
    """

    revision: str
    receiver: Receiver
    kind: Kind
    definition: str
    method: str | None
    message: dict[str, Any]


class _Builder:
    """One instance of a definition, with chosen union branches."""

    def __init__(self, revision: str, choices: Mapping[str, int]) -> None:
        self.revision = revision
        self.choices = choices
        self.sites: dict[str, int] = {}  # union site (instance path) -> branch count
        self.defs = definitions(revision)

    def build(self, node: Any, where: str, owner: str, key: str | None, depth: int) -> Any:
        if "$ref" in node:
            name, target = resolve_ref(self.revision, node["$ref"])
            if name in _FREE_JSON:
                # Free-form JSON (2026-07-28 spells it as recursive definitions): the
                # engine reads nothing inside it, so one plain value will do.
                return _FREE_JSON[name]()
            return self.build(target, where, name, key, depth)
        hinted = self._hint(owner, key, node)
        if hinted is not _NO_HINT:
            return hinted
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        for union in ("anyOf", "oneOf"):
            if union in node:
                branches = node[union]
                self.sites.setdefault(where, len(branches))
                chosen = branches[self.choices.get(where, 0)]
                return self.build(chosen, where, owner, key, depth)
        if "allOf" in node:
            return self.build(self._merge(node["allOf"]), where, owner, key, depth)
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or (kind is None and "properties" in node):
            return self._object(node, where, owner, depth)
        if kind == "array":
            items = node.get("items", {})
            count = node.get("minItems", 1 if depth < _MAX_DEPTH else 0)
            return [
                self.build(items, f"{where}[{i}]", owner, None, depth + 1) for i in range(count)
            ]
        if kind == "string":
            return _FORMATS.get(node.get("format", ""), "x")
        if kind == "integer":
            return max(node.get("minimum", 1), min(node.get("maximum", 1), 1))
        if kind == "number":
            low, high = node.get("minimum", 0), node.get("maximum", 1)
            return (low + high) / 2
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return "any"  # `{}`: any JSON value

    def _object(self, node: Any, where: str, owner: str, depth: int) -> dict[str, Any]:
        required = set(node.get("required", ()))
        out: dict[str, Any] = {}
        for name, sub in node.get("properties", {}).items():
            if name in required or depth < _MAX_DEPTH:
                out[name] = self.build(sub, f"{where}.{name}", owner, name, depth + 1)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra and not node.get("properties") and depth < _MAX_DEPTH:
            # A map (inputRequests, form properties, experimental capabilities): one entry.
            out["k1"] = self.build(extra, f"{where}.k1", owner, "k1", depth + 1)
        return out

    def _merge(self, parts: list[Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            if "$ref" in part:
                part = resolve_ref(self.revision, part["$ref"])[1]
            merged["properties"] = {**merged["properties"], **part.get("properties", {})}
            merged["required"] = [*merged["required"], *part.get("required", ())]
        return merged

    def _hint(self, owner: str, key: str | None, node: Any) -> Any:
        """Values the schema cannot say but a receiving engine checks."""
        if key in ("protocolVersion", "io.modelcontextprotocol/protocolVersion", "requested"):
            return self.revision
        if key in ("supportedVersions", "supported"):
            return [self.revision]
        if key == "resultType":
            return "input_required" if owner == "InputRequiredResult" else "complete"
        if key == "code" and "const" not in node:
            return -32603
        if key == "inputSchema" and owner == "Tool":
            # One argument mirrored into a header (2026-07-28 `x-mcp-header`), which
            # an HTTP client reads from the tools the server lists.
            return {
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                "required": ["region"],
            }
        return _NO_HINT


_NO_HINT = object()


def _instances(revision: str, name: str) -> Iterator[tuple[str, Any]]:
    """The covering set of instances of one definition: (label, instance)."""
    node = definitions(revision)[name]
    first = _Builder(revision, {})
    primary = first.build(node, "", name, None, 0)
    yield name, primary
    seen = {json.dumps(primary, sort_keys=True)}
    for site, count in list(first.sites.items()):
        for branch in range(1, count):
            builder = _Builder(revision, {site: branch})
            instance = builder.build(node, "", name, None, 0)
            text = json.dumps(instance, sort_keys=True)
            if text not in seen:
                seen.add(text)
                yield f"{name}[{site.lstrip('.') or 'root'}:{branch}]", instance


def _sender(receiver: Receiver) -> Literal["client", "server"]:
    return "server" if receiver == "client" else "client"


@cache
def seeds(revision: str, receiver: Receiver) -> tuple[Seed, ...]:
    """Every valid message `receiver` may get in `revision`, each schema-checked."""
    sender = _sender(receiver)
    out: list[Seed] = []
    union_of = {"request": f"{sender.capitalize()}Request"}
    union_of["notification"] = f"{sender.capitalize()}Notification"
    for kind in ("request", "notification"):
        for method, definition in method_index(revision, union_of[kind]).items():
            for label, instance in _instances(revision, definition):
                if kind == "request":
                    instance = {**instance, "jsonrpc": "2.0", "id": SEED_ID}
                else:
                    instance = {"jsonrpc": "2.0", **instance}
                validate_message(instance, revision, sender=sender)
                out.append(Seed(revision, receiver, kind, label, method, instance))  # type: ignore[arg-type]
    # Results (and errors) answer requests the receiver sent.
    requester = f"{receiver.capitalize()}Request"
    for method in method_index(revision, requester):
        for definition in result_definitions(revision, method, requester=receiver):
            for label, instance in _instances(revision, definition):
                message = {"jsonrpc": "2.0", "id": SEED_ID, "result": instance}
                validate_message(message, revision, sender=sender, request_method=method)
                out.append(Seed(revision, receiver, "result", label, method, message))
    out.extend(_errors(revision, receiver))
    return tuple(out)


def _errors(revision: str, receiver: Receiver) -> Iterator[Seed]:
    sender = _sender(receiver)
    defs = definitions(revision)
    names = [n for n in ("JSONRPCError", "JSONRPCErrorResponse") if n in defs]
    if revision in MODERN_REVISIONS:
        # 2026-07-28 spells out each error the spec defines (codes and data).
        names += sorted(
            n
            for n, d in defs.items()
            if n.endswith("Error") and "error" in d.get("properties", {}) and n not in names
        )
    for name in names:
        for label, instance in _instances(revision, name):
            message = {"jsonrpc": "2.0", **instance, "id": SEED_ID}
            validate_message(message, revision, sender=sender)
            yield Seed(revision, receiver, "error", label, None, message)
