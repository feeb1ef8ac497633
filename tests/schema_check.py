"""Validate JSON-RPC messages against the official MCP JSON schema of a revision.

Test utility: every message the engine emits can be passed to
:func:`validate_message`, which raises :class:`SchemaViolation` (an
``AssertionError``) with a readable explanation when the message does not
conform to the schema of the protocol revision in use.

Everything is derived from the schema files in :func:`spec_dir`: the
method -> definition indexes are built by reading the ``ClientRequest`` /
``ServerRequest`` / ``ClientNotification`` / ``ServerNotification`` unions, and
the request -> result mapping by reading definition names (``XxxRequest`` ->
``XxxResult``), the ``XxxResultResponse`` definitions (2026-07-28) and the
task-augmentation ``task`` parameter (2025-11-25). The only names written down
here are the envelope definitions and a handful of documented special cases.

Format keywords are not checked (no format checker); every other keyword is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match, relevance
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.jsonschema import specification_with

__all__ = [
    "REVISIONS",
    "SchemaViolation",
    "Sender",
    "definitions",
    "method_index",
    "resolve_ref",
    "result_definitions",
    "spec_dir",
    "validate_message",
]

REVISIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

Sender = Literal["client", "server"]

# `$schema` dialect -> validator class. Anything else is an error, not a guess.
_DIALECTS: dict[str, type[Validator]] = {
    "http://json-schema.org/draft-07/schema#": Draft7Validator,
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
}

# Requests whose result has no dedicated `XxxResult` definition: the schema
# documents them as answered by `EmptyResult` (itself a `$ref` to `Result`).
_EMPTY_RESULT_REQUESTS = frozenset(
    {"PingRequest", "SubscribeRequest", "UnsubscribeRequest", "SetLevelRequest"}
)
# 2025-11-25: a request whose params accept `task` may be answered by this instead.
_TASK_RESULT = "CreateTaskResult"
# 2026-07-28 (MRTR): interim result discriminated by `resultType`.
_INPUT_REQUIRED_RESULT = "InputRequiredResult"
_INPUT_REQUIRED = "input_required"

_MAX_REPORTED_ERRORS = 5

# Extensions live outside the core schema of their revision: the 2026-07-28 tasks
# extension (SEP-2663) has its own file, tests/spec/ext-tasks/schema.json (an
# excerpt, see tests/spec/README.md). (sender, method) -> its definitions there.
_EXTENSION_DIR = {"2026-07-28": "ext-tasks"}
_EXT_REQUESTS: dict[tuple[str, str], tuple[str, str]] = {
    ("client", "tasks/get"): ("GetTaskRequest", "GetTaskResult"),
    ("client", "tasks/update"): ("UpdateTaskRequest", "UpdateTaskResult"),
    ("client", "tasks/cancel"): ("CancelTaskRequest", "CancelTaskResult"),
}
_EXT_NOTIFICATIONS: dict[tuple[str, str], str] = {
    ("server", "notifications/tasks"): "TaskStatusNotification",
}
# Requests the extension lets a server answer with `resultType: "task"`.
_EXT_TASK_RESULT_METHODS = frozenset({"tools/call"})


class SchemaViolation(AssertionError):
    """A message does not conform to the official schema of its revision."""


_REPOSITORY_COPIES = Path(__file__).resolve().parent / "spec"


def spec_dir() -> Path:
    """Directory holding ``<revision>/schema.json``.

    ``$MCP_SPEC_DIR`` if set, else ``tests/spec`` (the copies kept in the
    repository, see ``tests/spec/README.md``). Raises
    :class:`RuntimeError` if the directory does not exist: a missing schema is a
    broken test environment and must never turn into a skipped check.
    """
    env = os.environ.get("MCP_SPEC_DIR")
    path = Path(env) if env else _REPOSITORY_COPIES
    if not path.is_dir():
        source = "$MCP_SPEC_DIR" if env else "the default location (tests/spec)"
        raise RuntimeError(
            f"MCP schema directory {path} (from {source}) does not exist; "
            "set MCP_SPEC_DIR to the directory holding <revision>/schema.json"
        )
    return path


# ---------------------------------------------------------------------------
# Per-revision schema model
# ---------------------------------------------------------------------------

Pointer = tuple[str, ...]  # JSON-pointer parts inside schema.json, e.g. ("$defs", "Result")


def _pointer_name(pointer: Pointer) -> str:
    """Display name: the definition name, plus the inner path for inline members."""
    return "/".join(pointer[1:])


@dataclass(frozen=True)
class _Revision:
    revision: str
    root: Mapping[str, Any]
    defs_key: str  # "definitions" (draft-07) or "$defs" (2020-12)
    validator_cls: type[Validator]
    registry: Registry[Any]
    uri: str
    # union name -> method -> pointer of the member definition
    methods: Mapping[str, Mapping[str, Pointer]]
    # (request union, method) -> pointers of the result definitions that may answer it
    results: Mapping[tuple[str, str], tuple[Pointer, ...]]

    @property
    def defs(self) -> Mapping[str, Any]:
        defs: Mapping[str, Any] = self.root[self.defs_key]
        return defs

    def has(self, name: str) -> bool:
        return name in self.defs

    def ptr(self, name: str) -> Pointer:
        if name not in self.defs:
            raise RuntimeError(f"{self.revision}: schema has no definition {name!r}")
        return (self.defs_key, name)

    def first(self, *names: str) -> Pointer:
        """Pointer of the first of ``names`` the revision defines (naming changed over time)."""
        for name in names:
            if name in self.defs:
                return (self.defs_key, name)
        raise RuntimeError(f"{self.revision}: schema defines none of {names}")

    def resolve_local(self, ref: str) -> Pointer:
        prefix = f"#/{self.defs_key}/"
        if not ref.startswith(prefix):
            raise RuntimeError(f"{self.revision}: unexpected $ref {ref!r}")
        return (self.defs_key, ref[len(prefix) :])

    def at(self, pointer: Pointer) -> Any:
        node: Any = self.root
        for part in pointer:
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node


def _union_members(rev: _Revision, pointer: Pointer) -> Iterator[tuple[Pointer, Any]]:
    """Leaf members of a union: follows ``$ref`` and nested ``anyOf``/``oneOf``."""
    node = rev.at(pointer)
    if "$ref" in node:
        yield from _union_members(rev, rev.resolve_local(node["$ref"]))
        return
    for key in ("anyOf", "oneOf"):
        if key in node:
            for i in range(len(node[key])):
                yield from _union_members(rev, (*pointer, key, str(i)))
            return
    yield pointer, node  # a single (possibly inline) definition, e.g. 2026 ClientNotification


def _index_union(rev: _Revision, union: str) -> dict[str, Pointer]:
    index: dict[str, Pointer] = {}
    if not rev.has(union):
        return index
    for pointer, node in _union_members(rev, rev.ptr(union)):
        method = node.get("properties", {}).get("method", {}).get("const")
        if not isinstance(method, str):
            raise RuntimeError(
                f"{rev.revision}: member {_pointer_name(pointer)} of {union} has no method const"
            )
        if method in index and index[method] != pointer:
            raise RuntimeError(f"{rev.revision}: method {method!r} appears twice in {union}")
        index[method] = pointer
    return index


_UNIONS = ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")


@cache
def _load(revision: str) -> _Revision:
    if revision not in REVISIONS:
        raise ValueError(f"unknown MCP revision {revision!r}; expected one of {REVISIONS}")
    path = spec_dir() / revision / "schema.json"
    if not path.is_file():
        raise RuntimeError(f"MCP schema for {revision} not found at {path}")
    root = json.loads(path.read_text(encoding="utf-8"))
    dialect = root.get("$schema")
    if dialect not in _DIALECTS:
        raise RuntimeError(f"{path}: unsupported $schema {dialect!r}")
    validator_cls = _DIALECTS[dialect]
    if path.parent.parent != _REPOSITORY_COPIES:
        # A schema from elsewhere ($MCP_SPEC_DIR) is checked against its dialect
        # here. The repository's copies are pinned by digest, and checked once by
        # tests/core/test_schema_check.py: checking them at every load cost each
        # test process 0.8 s of CPU (the two draft 2020-12 schemas).
        validator_cls.check_schema(root)
    defs_key = "$defs" if "$defs" in root else "definitions"
    uri = f"urn:mcp-schema:{revision}"
    resource: Resource[Any] = specification_with(dialect).create_resource(root)
    registry: Registry[Any] = Registry().with_resource(uri, resource)
    bare = _Revision(revision, root, defs_key, validator_cls, registry, uri, {}, {})
    methods = {union: _index_union(bare, union) for union in _UNIONS}
    indexed = _Revision(revision, root, defs_key, validator_cls, registry, uri, methods, {})
    # Computed eagerly for every request of the revision, so a schema with a request
    # we cannot map fails loudly instead of silently weakening the check.
    results = {
        (union, method): _result_pointers(indexed, union, method)
        for union in ("ClientRequest", "ServerRequest")
        for method in methods[union]
    }
    return _Revision(revision, root, defs_key, validator_cls, registry, uri, methods, results)


@cache
def _validator(revision: str, pointer: Pointer) -> Validator:
    rev = _load(revision)
    ref = f"{rev.uri}#/" + "/".join(pointer)
    # No format_checker: format keywords are annotations only.
    return rev.validator_cls({"$ref": ref}, registry=rev.registry)


# ---------------------------------------------------------------------------
# Request -> result mapping
# ---------------------------------------------------------------------------


def _params_accept_task(rev: _Revision, node: Any, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a params schema (following refs and unions) declares a ``task`` property."""
    if not isinstance(node, Mapping):
        return False
    if "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            return False
        return _params_accept_task(rev, rev.at(rev.resolve_local(ref)), seen | {ref})
    if "task" in node.get("properties", {}):
        return True
    return any(
        _params_accept_task(rev, member, seen)
        for key in ("anyOf", "oneOf", "allOf")
        for member in node.get(key, ())
    )


def _result_pointers(rev: _Revision, union: str, method: str) -> tuple[Pointer, ...]:
    revision = rev.revision
    request_ptr = rev.methods[union][method]
    if len(request_ptr) != 2 or not request_ptr[1].endswith("Request"):
        raise RuntimeError(f"{revision}: cannot map {_pointer_name(request_ptr)} to a result")
    request_name = request_ptr[1]
    stem = request_name.removesuffix("Request")

    # 1. The schema spells the allowed results out (2026-07-28: XxxResultResponse).
    response_name = f"{stem}ResultResponse"
    if rev.has(response_name):
        result_schema = rev.defs[response_name]["properties"]["result"]
        members = result_schema.get("anyOf") or result_schema.get("oneOf") or [result_schema]
        return tuple(rev.resolve_local(m["$ref"]) for m in members)

    # 2. Naming convention XxxRequest -> XxxResult, else the documented EmptyResult cases.
    if rev.has(f"{stem}Result"):
        results = [rev.ptr(f"{stem}Result")]
    elif request_name in _EMPTY_RESULT_REQUESTS:
        results = [rev.ptr("EmptyResult")]
    else:
        raise RuntimeError(f"{revision}: no result definition known for {request_name}")

    # 3. Task augmentation (2025-11-25): params with `task` may get a CreateTaskResult.
    if rev.has(_TASK_RESULT):
        params = rev.at(request_ptr).get("properties", {}).get("params")
        if _params_accept_task(rev, params):
            results.append(rev.ptr(_TASK_RESULT))
    return tuple(results)


def _peer(sender: Sender) -> Sender:
    return "server" if sender == "client" else "client"


def _union(sender: Sender, kind: Literal["Request", "Notification", "Result"]) -> str:
    return f"{sender.capitalize()}{kind}"


def definitions(revision: str) -> Mapping[str, Any]:
    """Every definition of a revision's schema, by name (`$ref`s inside stay unresolved)."""
    return _load(revision).defs


def resolve_ref(revision: str, ref: str) -> tuple[str, Any]:
    """A local ``$ref`` of the revision: (definition name, definition)."""
    rev = _load(revision)
    pointer = rev.resolve_local(ref)
    return pointer[1], rev.at(pointer)


def method_index(revision: str, union: str) -> Mapping[str, str]:
    """``method -> definition name`` for one of the four unions of a revision.

    Empty if the revision has no such union (2026-07-28 has no ``ServerRequest``).
    """
    rev = _load(revision)
    if union not in rev.methods:
        raise ValueError(f"unknown union {union!r}; expected one of {_UNIONS}")
    return {method: _pointer_name(p) for method, p in rev.methods[union].items()}


def result_definitions(revision: str, request_method: str, *, requester: Sender) -> tuple[str, ...]:
    """Names of the definitions a result to ``request_method`` may match."""
    union = _union(requester, "Request")
    if request_method not in _load(revision).methods[union]:
        raise ValueError(f"{revision}: {request_method!r} is not in {union}")
    return tuple(_pointer_name(p) for p in _load(revision).results[union, request_method])


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


def _path(prefix: str, error: ValidationError) -> str:
    # error.json_path starts with "$"; splice it under the location we validated.
    return prefix + str(error.json_path)[1:]


def _describe(error: ValidationError, prefix: str) -> str:
    line = f"at {_path(prefix, error)}: {error.message}"
    schema_path = "/".join(str(p) for p in error.schema_path)
    if schema_path:
        line += f"  [schema path: {schema_path}]"
    return line


def _errors(revision: str, pointer: Pointer, instance: Any) -> list[ValidationError]:
    return list(_validator(revision, pointer).iter_errors(instance))


def _format(errors: list[ValidationError], prefix: str) -> list[str]:
    best = best_match(errors)
    lines = [_describe(best, prefix)]
    # If the best error is an anyOf/oneOf failure, show why each branch failed.
    for sub in sorted(best.context or (), key=relevance, reverse=True)[:_MAX_REPORTED_ERRORS]:
        lines.append("    because " + _describe(sub, prefix))
    others = [e for e in errors if e is not best]
    for other in others[: _MAX_REPORTED_ERRORS - 1]:
        lines.append(_describe(other, prefix))
    if len(others) > _MAX_REPORTED_ERRORS - 1:
        lines.append(f"... and {len(others) - (_MAX_REPORTED_ERRORS - 1)} more")
    return lines


def _fail(revision: str, what: str, lines: list[str], message: Any) -> SchemaViolation:
    rendered = json.dumps(message, default=repr)
    if len(rendered) > 600:
        rendered = rendered[:600] + "..."
    body = "".join(f"  {line}\n" for line in lines)
    return SchemaViolation(f"[{revision}] {what}\n{body}  message: {rendered}")


def _check(
    revision: str,
    pointer: Pointer,
    instance: Any,
    *,
    what: str,
    prefix: str,
    message: Any,
) -> None:
    errors = _errors(revision, pointer, instance)
    if errors:
        raise _fail(
            revision,
            f"{what} is not a valid {_pointer_name(pointer)}",
            _format(errors, prefix),
            message,
        )


def _check_any(
    revision: str,
    pointers: tuple[Pointer, ...],
    instance: Any,
    *,
    what: str,
    prefix: str,
    message: Any,
) -> None:
    if len(pointers) == 1:
        _check(revision, pointers[0], instance, what=what, prefix=prefix, message=message)
        return
    lines: list[str] = []
    for pointer in pointers:
        errors = _errors(revision, pointer, instance)
        if not errors:
            return
        lines.append(f"as {_pointer_name(pointer)}:")
        lines.extend("  " + line for line in _format(errors, prefix))
    names = " or ".join(_pointer_name(p) for p in pointers)
    raise _fail(revision, f"{what} matches none of {names}", lines, message)


def _validate_request(rev: _Revision, message: dict[str, Any], sender: Sender, kind: str) -> None:
    revision = rev.revision
    method = message["method"]
    union = _union(sender, "Request" if kind == "request" else "Notification")
    envelope = rev.ptr("JSONRPCRequest" if kind == "request" else "JSONRPCNotification")
    _check(revision, envelope, message, what=f"{sender} {kind}", prefix="$", message=message)
    if not rev.has(union):
        raise _fail(
            revision,
            f"{sender} {kind} {method!r}: this revision defines no {union} union, "
            f"so a {sender} may not send any {kind}",
            [],
            message,
        )
    index = rev.methods[union]
    if method not in index:
        allowed = ", ".join(sorted(index)) or "(none)"
        raise _fail(
            revision,
            f"{sender} {kind} has method {method!r}, which is not in {union}",
            [f"allowed methods: {allowed}"],
            message,
        )
    _check(
        revision,
        index[method],
        message,
        what=f"{sender} {kind} {method!r}",
        prefix="$",
        message=message,
    )


def _validate_result(
    rev: _Revision, message: dict[str, Any], sender: Sender, request_method: str | None
) -> None:
    revision = rev.revision
    envelope = rev.first("JSONRPCResultResponse", "JSONRPCResponse")
    _check(
        revision, envelope, message, what=f"{sender} result response", prefix="$", message=message
    )
    result = message["result"]

    if request_method is None:
        union = _union(sender, "Result")
        if rev.has(union):
            _check(
                revision,
                rev.ptr(union),
                result,
                what=f"{sender} result",
                prefix="$.result",
                message=message,
            )
        return

    requester = _peer(sender)
    request_union = _union(requester, "Request")
    if request_method not in rev.methods[request_union]:
        allowed = ", ".join(sorted(rev.methods[request_union])) or "(none)"
        raise _fail(
            revision,
            f"{sender} result answers {request_method!r}, which is not a {requester} request "
            f"({request_union}) in this revision",
            [f"{requester} requests: {allowed}"],
            message,
        )
    pointers = rev.results[request_union, request_method]
    what = f"{sender} result for {request_method!r}"

    # MRTR (2026-07-28): `resultType` discriminates an InputRequiredResult from the final
    # result. The schema alone cannot (InputRequiredResult only requires `resultType`), so
    # without this a final result missing required fields would pass as "input required".
    if rev.has(_INPUT_REQUIRED_RESULT):
        input_ptr = rev.ptr(_INPUT_REQUIRED_RESULT)
        is_input = isinstance(result, Mapping) and result.get("resultType") == _INPUT_REQUIRED
        if is_input:
            if input_ptr not in pointers:
                raise _fail(
                    revision,
                    f"{what} has resultType {_INPUT_REQUIRED!r}, but {request_method!r} "
                    f"cannot be answered by an {_INPUT_REQUIRED_RESULT}",
                    [f"allowed results: {', '.join(_pointer_name(p) for p in pointers)}"],
                    message,
                )
            pointers = (input_ptr,)
        else:
            pointers = tuple(p for p in pointers if p != input_ptr) or pointers
    _check_any(revision, pointers, result, what=what, prefix="$.result", message=message)


def _validate_single(
    rev: _Revision, message: Any, sender: Sender, request_method: str | None
) -> None:
    revision = rev.revision
    if not isinstance(message, dict):
        raise _fail(revision, f"{sender} message is not a JSON object", [], message)
    if "method" in message:
        kind = "request" if "id" in message else "notification"
        _validate_request(rev, message, sender, kind)
    elif "result" in message and "error" in message:
        raise _fail(
            revision,
            f"{sender} response has both 'result' and 'error' (JSON-RPC 2.0 §5)",
            [],
            message,
        )
    elif "result" in message:
        _validate_result(rev, message, sender, request_method)
    elif "error" in message:
        envelope = rev.first("JSONRPCErrorResponse", "JSONRPCError")
        _check(
            revision,
            envelope,
            message,
            what=f"{sender} error response",
            prefix="$",
            message=message,
        )
    else:
        raise _fail(
            revision,
            f"{sender} message is neither a request, a notification nor a response "
            "(no 'method', 'result' or 'error')",
            [],
            message,
        )


def _validate_batch(rev: _Revision, batch: list[Any], sender: Sender) -> None:
    revision = rev.revision
    if not (rev.has("JSONRPCBatchRequest") and rev.has("JSONRPCBatchResponse")):
        raise _fail(
            revision,
            f"{sender} sent a JSON-RPC batch, but this revision does not allow batching",
            [],
            batch,
        )
    if not batch:
        raise _fail(revision, f"{sender} sent an empty batch (JSON-RPC 2.0 §6)", [], batch)
    is_call = [isinstance(item, dict) and "method" in item for item in batch]
    if all(is_call):
        envelope = rev.ptr("JSONRPCBatchRequest")
    elif not any(is_call):
        envelope = rev.ptr("JSONRPCBatchResponse")
    else:
        raise _fail(
            revision,
            f"{sender} batch mixes requests/notifications with responses",
            [],
            batch,
        )
    _check(revision, envelope, batch, what=f"{sender} batch", prefix="$", message=batch)
    for i, item in enumerate(batch):
        try:
            _validate_single(rev, item, sender, None)
        except SchemaViolation as exc:
            raise SchemaViolation(f"batch element [{i}]: {exc}") from None


@cache
def _extension_validator(name: str, definition: str) -> Validator:
    root = json.loads((spec_dir() / name / "schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(root)
    uri = f"urn:mcp-extension:{name}"
    resource: Resource[Any] = specification_with(root["$schema"]).create_resource(root)
    registry: Registry[Any] = Registry().with_resource(uri, resource)
    return Draft202012Validator({"$ref": f"{uri}#/$defs/{definition}"}, registry=registry)


def _extension_definition(
    revision: str, message: Any, sender: Sender, request_method: str | None
) -> tuple[str, str] | None:
    """(extension dir, definition) when `message` belongs to an extension."""
    name = _EXTENSION_DIR.get(revision)
    if name is None or not isinstance(message, dict):
        return None
    method = message.get("method")
    if isinstance(method, str):
        if "id" in message:
            found = _EXT_REQUESTS.get((sender, method))
            return (name, found[0]) if found else None
        note = _EXT_NOTIFICATIONS.get((sender, method))
        return (name, note) if note else None
    result = message.get("result")
    if request_method is None or not isinstance(result, dict):
        return None
    found = _EXT_REQUESTS.get((_peer(sender), request_method))
    if found is not None:
        return (name, found[1])
    if request_method in _EXT_TASK_RESULT_METHODS and result.get("resultType") == "task":
        return (name, "CreateTaskResult")
    return None


def validate_message(
    message: dict[str, Any] | list[Any],
    revision: str,
    *,
    sender: Sender,
    request_method: str | None = None,
) -> None:
    """Raise :class:`SchemaViolation` unless ``message`` is valid for ``revision``.

    ``sender`` is the party that emitted the message. For a result response,
    ``request_method`` (the method of the request it answers) selects the exact
    result definition; without it the result is checked against the sender's
    result union, if the revision has one. Batches are only valid in 2025-03-26.
    """
    if sender not in ("client", "server"):
        raise ValueError(f"sender must be 'client' or 'server', not {sender!r}")
    rev = _load(revision)
    extension = _extension_definition(revision, message, sender, request_method)
    if extension is not None:
        name, definition = extension
        assert isinstance(message, dict)
        target = message.get("result", message)
        errors = list(_extension_validator(name, definition).iter_errors(target))
        if errors:
            raise _fail(revision, f"{sender} {definition} ({name})", _format(errors, "$"), message)
        return
    if isinstance(message, list):
        _validate_batch(rev, message, sender)
    else:
        _validate_single(rev, message, sender, request_method)
