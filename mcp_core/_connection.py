"""The connection state machines: `ClientConnection` and `ServerConnection`.

Bytes (or whole messages) go in through `receive_data` / `receive_message` and
come back as events; what the application says goes in through verb methods
(`send_request`, `send_result` ...) and comes out of `data_to_send()` or
`messages_to_send()`. Receiving can queue output by itself (a ping answer, an
error for a bad message), which is why output is a buffer and not a return value.

Nothing here does I/O or reads a clock: deadlines are numbers the caller
chooses, and `tick(now)` is how time arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import pydantic

from . import _jsonrpc as jr
from ._config import ClientConfig, ServerConfig, to_wire
from ._errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    SERVER_BUSY,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._events import (
    ClientInitialized,
    Connected,
    ConnectionClosed,
    ErrorReceived,
    Event,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestContext,
    RequestFailed,
    RequestReceived,
    ResponseIgnored,
    ResponseReceived,
    SessionStarted,
)
from ._framing import LineBuffer
from ._requests import DeadlineHeap, Inbound, Outbound, RecentIds
from ._versions import (
    BATCH_REVISIONS,
    METHODS,
    V2024_11_05,
    Era,
    MethodSpec,
    Role,
    era_of,
    lookup,
    preference_order,
)

RequestId = int | str

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}

# What an undeclared client capability is called in the refusal (the SDK's wording).
_CAPABILITY_LABEL: Final = {
    "elicitation": "Elicitation",
    "sampling": "Sampling",
    "roots": "Roots",
}


class State:
    """Connection states (plain strings, so they print well)."""

    IDLE: Final = "idle"  # client: connect() not called yet
    CONNECTING: Final = "connecting"  # client: handshake or probe in flight
    AWAITING_FIRST: Final = "awaiting_first"  # server: the first request picks the era
    READY: Final = "ready"
    CLOSED: Final = "closed"
    ERROR: Final = "error"


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One encoded message, with what a transport needs to route it.

    `related_request_id` names the inbound request this message belongs to (its
    response, its progress and log notifications, a server request made while
    handling it), so HTTP can put it on that request's stream.
    """

    payload: bytes
    kind: Literal["request", "notification", "result", "error"]
    method: str | None = None
    request_id: RequestId | None = None
    related_request_id: RequestId | None = None


class _Fatal(Exception):
    """Internal: the connection cannot go on (broken framing or handshake)."""

    def __init__(self, error: RemoteProtocolError) -> None:
        super().__init__(error.message)
        self.error = error


class _Reject(Exception):
    """Internal: answer the current message with a JSON-RPC error and go on."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


_VALIDATORS: dict[str, Callable[[Any], Any]] = {}


def validator(type_name: str) -> Callable[[Any], Any]:
    """The validating constructor of a wire type, built on first use."""
    found = _VALIDATORS.get(type_name)
    if found is None:
        from . import types

        target = getattr(types, type_name)
        if isinstance(target, type) and issubclass(target, pydantic.BaseModel):
            found = target.model_validate
        else:
            found = pydantic.TypeAdapter(target).validate_python
        _VALIDATORS[type_name] = found
    return found


def _describe(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False, include_input=False)[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "params"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _has_capability(caps: Mapping[str, Any], path: str) -> bool:
    head, _, tail = path.partition(".")
    value = caps.get(head)
    if value is None or value is False:
        return False
    if not tail:
        return True
    return isinstance(value, Mapping) and bool(value.get(tail))


_MISSING: Final = object()


def _response_problem(obj: dict[str, Any], error: Any) -> str | None:
    """What is wrong with a response's shape, if anything (its id aside)."""
    if obj.get("jsonrpc") != "2.0":
        return "jsonrpc must be exactly '2.0'"
    if ("result" in obj) == ("error" in obj):
        return "a response needs exactly one of result and error"
    if "error" in obj:
        if not (
            type(error) is dict
            and type(error.get("code")) is int
            and type(error.get("message")) is str
        ):
            return "malformed error object"
    elif type(obj["result"]) is not dict:
        return "result must be an object"
    return None


class _Connection:
    """What both roles share: framing, the in-flight tables, sending, timing out."""

    _role: Role
    _peer: Role

    def __init__(self, limits: jr.Limits) -> None:
        self.limits = limits
        self.state: str = State.IDLE
        self.protocol_version: str | None = None
        self.era: Era | None = None
        self._lines = LineBuffer(limits.max_message_bytes)
        self._outgoing: list[OutgoingMessage] = []
        self._outgoing_bytes = 0
        self._outbound: dict[RequestId, Outbound] = {}
        self._inbound: dict[RequestId, Inbound] = {}
        self._ended_outbound = RecentIds(limits.max_remembered_ids)
        self._ended_inbound = RecentIds(limits.max_remembered_ids)
        self._deadlines = DeadlineHeap()
        self._progress_tokens: dict[int | str, RequestId] = {}
        self._next_id = 0

    # ------------------------------------------------------------------ input

    def receive_data(self, data: bytes) -> list[Event]:
        """Feed bytes of a newline-delimited stream; `b""` means the stream ended."""
        if not data:
            if self.state in (State.CLOSED, State.ERROR):
                return []
            return self._settle("end of stream", None)
        self._check_receiving()
        events: list[Event] = []
        try:
            for line in self._lines.feed(data):
                self._receive_one(line, events)
        except RemoteProtocolError as exc:
            events.extend(self._settle(exc.message, exc))
        except _Fatal as fatal:
            events.extend(self._settle(fatal.error.message, fatal.error))
        return events

    def receive_message(self, data: bytes | str) -> list[Event]:
        """Feed one whole message from a transport that frames messages itself."""
        self._check_receiving()
        events: list[Event] = []
        try:
            self._receive_one(data, events)
        except _Fatal as fatal:
            events.extend(self._settle(fatal.error.message, fatal.error))
        return events

    def _check_receiving(self) -> None:
        if self.state is State.ERROR:
            raise RemoteProtocolError("connection already failed; no more input is accepted")
        if self.state is State.CLOSED:
            raise LocalProtocolError("connection is closed")

    def _receive_one(self, data: bytes | str, events: list[Event]) -> None:
        try:
            obj = jr.parse(data, self.limits)
        except RemoteProtocolError as exc:
            self._reply_error(None, exc.code, exc.message, events)
            return
        if type(obj) is dict:
            self._dispatch(obj, events)
        elif type(obj) is list:
            self._receive_batch(obj, events)
        else:
            self._reply_error(None, INVALID_REQUEST, "a JSON-RPC message must be an object", events)

    def _receive_batch(self, items: list[Any], events: list[Event]) -> None:
        if self.protocol_version not in BATCH_REVISIONS:
            self._reply_error(
                None,
                INVALID_REQUEST,
                "batch arrays are not allowed in this protocol revision",
                events,
            )
            return
        if not items:
            self._reply_error(None, INVALID_REQUEST, "empty batch", events)
            return
        if len(items) > self.limits.max_batch_size:
            self._reply_error(None, INVALID_REQUEST, "batch too large", events)
            return
        for item in items:
            if type(item) is dict:
                if item.get("method") == "initialize":
                    self._reply_error(
                        jr.recover_id(item),
                        INVALID_REQUEST,
                        "initialize must not be part of a batch",
                        events,
                    )
                    continue
                self._dispatch(item, events)
            else:
                self._reply_error(None, INVALID_REQUEST, "batch items must be objects", events)

    def _dispatch(self, obj: dict[str, Any], events: list[Event]) -> None:
        method = obj.get("method", _MISSING)
        if method is _MISSING:
            self._receive_response(obj, events)
            return
        is_request = "id" in obj
        rid = obj["id"] if is_request else None
        if obj.get("jsonrpc") != "2.0":
            reason = "jsonrpc must be exactly '2.0'"
        elif type(method) is not str:
            reason = "method must be a string"
        elif is_request and not jr.is_request_id(rid):
            reason = "id must be a string or an integer"
            rid = None
        elif "result" in obj or "error" in obj:
            reason = "a request must not carry result or error"
        elif "params" in obj and type(obj["params"]) is not dict:
            reason = "params must be an object"
        elif len(method) > self.limits.max_method_length:
            reason = "method name too long"
        else:
            if is_request:
                self._receive_request(rid, method, obj.get("params"), events)  # type: ignore[arg-type]
            else:
                self._receive_notification(method, obj.get("params"), events)
            return
        if is_request or rid is not None:
            self._reply_error(
                rid if jr.is_request_id(rid) else None, INVALID_REQUEST, reason, events
            )
        else:
            events.append(MessageRejected(None, INVALID_REQUEST, reason))

    def _receive_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        if rid in self._inbound:
            # Never overwrite a routing slot: the first request completes normally.
            self._reply_error(
                rid, INVALID_REQUEST, f"request id {rid!r} is already in flight", events
            )
            return
        if len(self._inbound) >= self.limits.max_inbound_in_flight:
            self._reply_error(rid, SERVER_BUSY, "too many requests in flight", events)
            return
        try:
            self._accept_request(rid, method, params, events)
        except _Reject as rej:
            self._reply_error(rid, rej.code, rej.message, events, rej.data)

    def _receive_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        if method == "notifications/cancelled":
            self._receive_cancel(params, events)
        elif method == "notifications/progress":
            self._receive_progress(params, events)
        else:
            self._accept_notification(method, params, events)

    def _receive_cancel(self, params: dict[str, Any] | None, events: list[Event]) -> None:
        # Malformed, unknown and late cancels are ignored, as the spec asks.
        if not params:
            return
        rid = params.get("requestId")
        if not jr.is_request_id(rid):
            return
        entry = self._inbound.get(rid)
        if entry is None or entry.method == "initialize":
            return
        del self._inbound[rid]
        self._ended_inbound.add(rid)
        reason = params.get("reason")
        events.append(RequestCancelled(rid, reason if isinstance(reason, str) else None))

    def _receive_progress(self, params: dict[str, Any] | None, events: list[Event]) -> None:
        if not params:
            return
        token = params.get("progressToken")
        rid = self._progress_tokens.get(token) if jr.is_request_id(token) else None
        if rid is None:
            return
        progress = params.get("progress")
        total = params.get("total")
        message = params.get("message")
        if (
            not isinstance(progress, (int, float))
            or isinstance(progress, bool)
            or (
                total is not None
                and (not isinstance(total, (int, float)) or isinstance(total, bool))
            )
        ):
            events.append(MessageRejected(None, INVALID_PARAMS, "malformed progress notification"))
            return
        events.append(
            ProgressReceived(rid, progress, total, message if isinstance(message, str) else None)
        )

    def _receive_response(self, obj: dict[str, Any], events: list[Event]) -> None:
        raw_id = obj.get("id")
        rid = raw_id if jr.is_request_id(raw_id) else None
        error = obj.get("error")
        problem = _response_problem(obj, error)
        if problem is None and raw_id is None and type(error) is dict:
            # The peer could not read one of our messages; there is nothing to settle.
            events.append(MessageRejected(None, error["code"], error["message"]))
            return
        if problem is None and rid is None:
            problem = "response id must be a string or an integer"
        if problem is not None or rid is None:
            problem = problem or "response id must be a string or an integer"
            entry = self._outbound.pop(rid, None) if rid is not None else None
            if entry is not None and rid is not None:
                self._ended(rid, entry)
                self._resolve_failure(
                    rid, entry, INTERNAL_ERROR, f"invalid response: {problem}", events
                )
            events.append(MessageRejected(rid, INVALID_REQUEST, problem))
            return
        entry = self._outbound.pop(rid, None)
        if entry is None:
            events.append(ResponseIgnored(rid, late=rid in self._ended_outbound))
            return
        self._ended(rid, entry)
        if entry.handler is not None:
            entry.handler(rid, obj.get("result"), error)
        elif type(error) is dict:
            events.append(
                ErrorReceived(rid, entry.method, error["code"], error["message"], error.get("data"))
            )
        else:
            self._accept_result(rid, entry, obj["result"], events)

    def _accept_result(
        self, rid: RequestId, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        spec = METHODS.get((self._role, entry.method))
        value: Any = result
        if spec is not None and spec.result is not None:
            try:
                value = validator(spec.result)(result)
            except pydantic.ValidationError as exc:
                events.append(
                    RequestFailed(
                        rid, entry.method, INTERNAL_ERROR, f"invalid result: {_describe(exc)}"
                    )
                )
                return
        events.append(ResponseReceived(rid, entry.method, value))

    def _resolve_failure(
        self, rid: RequestId, entry: Outbound, code: int, message: str, events: list[Event]
    ) -> None:
        if entry.handler is not None:
            entry.handler(rid, None, {"code": code, "message": message, "local": True})
        else:
            events.append(RequestFailed(rid, entry.method, code, message))

    def _ended(self, rid: RequestId, entry: Outbound) -> None:
        if entry.progress_token is not None:
            self._progress_tokens.pop(entry.progress_token, None)

    # ---- role hooks

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        raise NotImplementedError

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        raise NotImplementedError

    def _finish_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        return result

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        return params

    def _sending_revision(self) -> str:
        if self.state is not State.READY or self.protocol_version is None:
            raise LocalProtocolError(f"connection is not ready (state {self.state})")
        return self.protocol_version

    # ---- helpers for the roles

    def _validate_params(self, spec: MethodSpec, params: dict[str, Any] | None) -> Any:
        if spec.params is None:
            return None
        if params is None:
            if spec.params_required:
                raise _Reject(INVALID_PARAMS, f"{spec.method} requires params")
            params = {}
        try:
            return validator(spec.params)(params)
        except pydantic.ValidationError as exc:
            raise _Reject(
                INVALID_PARAMS, f"Invalid params for {spec.method}: {_describe(exc)}"
            ) from None

    def _track_inbound(
        self, rid: RequestId, method: str, meta: Any, log_level: str | None
    ) -> int | str | None:
        token = meta.get("progressToken") if type(meta) is dict else None
        if not jr.is_request_id(token):
            token = None
        self._inbound[rid] = Inbound(method, token, log_level)
        return token

    # ----------------------------------------------------------------- output

    def _queue(
        self,
        payload: bytes,
        kind: Literal["request", "notification", "result", "error"],
        method: str | None,
        request_id: RequestId | None,
        related: RequestId | None,
        *,
        automatic: bool = False,
    ) -> None:
        size = len(payload)
        if self._outgoing_bytes + size > self.limits.max_buffered_output_bytes:
            if automatic:
                raise _Fatal(
                    RemoteProtocolError("peer is not reading what we send", http_status=503)
                )
            raise LocalProtocolError("output buffer is full; drain data_to_send() first")
        self._outgoing.append(OutgoingMessage(payload, kind, method, request_id, related))
        self._outgoing_bytes += size

    def _reply_error(
        self,
        rid: RequestId | None,
        code: int,
        message: str,
        events: list[Event],
        data: Any = None,
    ) -> None:
        self._queue(
            jr.encode_error(rid, jr.error_object(code, message, data)),
            "error",
            None,
            rid,
            rid,
            automatic=True,
        )
        events.append(MessageRejected(rid, code, message))

    def _reply_result(self, rid: RequestId, result: dict[str, Any], method: str) -> None:
        self._queue(jr.encode_result(rid, result), "result", method, rid, rid, automatic=True)

    def data_to_send(self) -> bytes:
        """Everything queued, newline-delimited, for a byte-stream transport."""
        out = self._outgoing
        if not out:
            return b""
        data = b"\n".join([m.payload for m in out]) + b"\n"
        out.clear()
        self._outgoing_bytes = 0
        return data

    def messages_to_send(self) -> list[OutgoingMessage]:
        """Everything queued, one entry per message, for transports that frame messages."""
        out = self._outgoing
        self._outgoing = []
        self._outgoing_bytes = 0
        return out

    def _check_sending(self) -> None:
        if self.state in (State.CLOSED, State.ERROR):
            raise LocalProtocolError(f"connection is {self.state}")

    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        deadline: float | None = None,
        progress: bool = False,
        related_request_id: RequestId | None = None,
    ) -> RequestId:
        """Queue a request; returns its id.

        `deadline` is a time in the caller's clock after which `tick` fails the
        request (and tells the peer). `progress=True` asks the peer for progress
        notifications, which arrive as `ProgressReceived` events.
        """
        self._check_sending()
        revision = self._sending_revision()
        spec = lookup(self._role, method, revision)
        if spec is None or not spec.is_request:
            raise LocalProtocolError(
                f"{method!r} is not a {self._role} request in revision {revision}"
            )
        if len(self._outbound) >= self.limits.max_outbound_in_flight:
            raise LocalProtocolError("too many requests in flight")
        wire = to_wire(params)
        if wire is not None and not isinstance(wire, dict):
            raise LocalProtocolError("params must be a model or a mapping")
        wire = self._prepare_request(spec, wire)
        rid = self._next_id
        self._next_id += 1
        token: int | None = None
        if progress:
            token = rid
            wire = dict(wire or {})
            wire["_meta"] = {**(wire.get("_meta") or {}), "progressToken": token}
        self._queue(
            jr.encode_request(rid, method, wire), "request", method, rid, related_request_id
        )
        self._register_outbound(rid, Outbound(method, deadline, token, None, related_request_id))
        return rid

    def _register_outbound(self, rid: RequestId, entry: Outbound) -> None:
        self._outbound[rid] = entry
        if entry.deadline is not None:
            self._deadlines.push(entry.deadline, rid, self._outbound)
        if entry.progress_token is not None:
            self._progress_tokens[entry.progress_token] = rid

    def _send_internal(
        self,
        method: str,
        params: dict[str, Any] | None,
        handler: Callable[[RequestId, dict[str, Any] | None, dict[str, Any] | None], None],
        deadline: float | None = None,
    ) -> None:
        rid = self._next_id
        self._next_id += 1
        self._queue(jr.encode_request(rid, method, params), "request", method, rid, None)
        self._register_outbound(rid, Outbound(method, deadline, None, handler, None))

    def send_notification(
        self, method: str, params: Any = None, *, related_request_id: RequestId | None = None
    ) -> None:
        """Queue a notification the current revision allows this role to send."""
        self._check_sending()
        revision = self._sending_revision()
        spec = lookup(self._role, method, revision)
        if spec is None or spec.is_request:
            raise LocalProtocolError(
                f"{method!r} is not a {self._role} notification in revision {revision}"
            )
        wire = to_wire(params)
        self._queue(
            jr.encode_notification(method, wire), "notification", method, None, related_request_id
        )

    def _take_inbound(self, rid: RequestId) -> Inbound | None:
        entry = self._inbound.get(rid)
        if entry is None:
            if rid in self._ended_inbound:
                return None  # cancelled by the peer or abandoned: drop quietly
            raise LocalProtocolError(f"no request {rid!r} from the peer is waiting for an answer")
        return entry

    def send_result(self, request_id: RequestId, result: Any) -> bool:
        """Answer a peer's request. False when it was cancelled meanwhile (nothing sent)."""
        self._check_sending()
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        wire = to_wire(result)
        if wire is None:
            wire = {}
        elif not isinstance(wire, dict):
            raise LocalProtocolError("a result must be a model or a mapping")
        wire = self._finish_result(entry.method, wire)
        self._queue(
            jr.encode_result(request_id, wire), "result", entry.method, request_id, request_id
        )
        del self._inbound[request_id]
        self._ended_inbound.add(request_id)
        return True

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bool:
        """Answer a peer's request with an error. False when it was cancelled meanwhile."""
        self._check_sending()
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        payload = jr.encode_error(request_id, jr.error_object(code, message, to_wire(data)))
        self._queue(payload, "error", entry.method, request_id, request_id)
        del self._inbound[request_id]
        self._ended_inbound.add(request_id)
        return True

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Report progress on a peer's request; False when the peer did not ask for it."""
        self._check_sending()
        entry = self._take_inbound(request_id)
        if entry is None or entry.progress_token is None:
            return False
        if entry.last_progress is not None and not progress > entry.last_progress:
            raise LocalProtocolError("progress must increase with each notification")
        entry.last_progress = progress
        params: dict[str, Any] = {"progressToken": entry.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.protocol_version != V2024_11_05:
            params["message"] = message
        self._queue(
            jr.encode_notification("notifications/progress", params),
            "notification",
            "notifications/progress",
            None,
            request_id,
        )
        return True

    def cancel_request(self, request_id: RequestId, reason: str | None = None) -> None:
        """Give up on one of our requests and tell the peer; a late answer is ignored."""
        self._check_sending()
        entry = self._outbound.get(request_id)
        if entry is None:
            if request_id in self._ended_outbound:
                return
            raise LocalProtocolError(f"no request {request_id!r} of ours is in flight")
        if entry.method == "initialize":
            raise LocalProtocolError("initialize cannot be cancelled")
        self._queue_cancel(request_id, reason)
        del self._outbound[request_id]
        self._ended(request_id, entry)
        self._ended_outbound.add(request_id)

    def _queue_cancel(self, request_id: RequestId, reason: str | None) -> None:
        params: dict[str, Any] = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        self._queue(
            jr.encode_notification("notifications/cancelled", params),
            "notification",
            "notifications/cancelled",
            None,
            request_id,
        )

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        """The earliest deadline of a request in flight, for the caller's timer."""
        return self._deadlines.next(self._outbound)

    def tick(self, now: float) -> list[Event]:
        """Fail every request whose deadline is at or before `now` (and tell the peer)."""
        events: list[Event] = []
        if self.state in (State.CLOSED, State.ERROR):
            return events
        for rid in self._deadlines.pop_expired(now, self._outbound):
            entry = self._outbound.pop(rid)
            self._ended(rid, entry)
            self._ended_outbound.add(rid)
            if entry.method != "initialize":
                self._queue_cancel(rid, "timed out")
            try:
                self._resolve_failure(rid, entry, REQUEST_TIMEOUT, "Request timed out", events)
            except _Fatal as fatal:
                events.extend(self._settle(fatal.error.message, fatal.error))
                break
        return events

    # --------------------------------------------------------------- closing

    def close(self, reason: str = "closed locally") -> list[Event]:
        """End the connection: every request in flight either way is settled."""
        if self.state in (State.CLOSED, State.ERROR):
            return []
        return self._settle(reason, None)

    def abandon_request(self, request_id: RequestId, reason: str | None = None) -> list[Event]:
        """The transport lost the stream carrying a peer's request (HTTP disconnect).

        In 2026-07-28 a closed response stream *is* the cancellation, so the
        application is told as if the peer had cancelled.
        """
        if self._inbound.pop(request_id, None) is None:
            return []
        self._ended_inbound.add(request_id)
        return [RequestCancelled(request_id, reason or "stream closed")]

    def _settle(self, reason: str, error: RemoteProtocolError | None) -> list[Event]:
        events: list[Event] = []
        self.state = State.ERROR if error is not None else State.CLOSED
        outbound = self._outbound
        self._outbound = {}
        for rid, entry in outbound.items():
            self._ended_outbound.add(rid)
            if entry.handler is None:
                events.append(
                    RequestFailed(rid, entry.method, CONNECTION_CLOSED, "Connection closed")
                )
        self._progress_tokens.clear()
        abandoned = tuple(self._inbound)
        self._inbound.clear()
        events.append(ConnectionClosed(reason, abandoned, error))
        return events

    # ------------------------------------------------------------ inspection

    @property
    def requests_in_flight(self) -> tuple[int, int]:
        """(ours waiting on the peer, the peer's waiting on us)."""
        return len(self._outbound), len(self._inbound)

    def check_invariants(self) -> None:
        """Assert the engine's internal consistency (for tests and fuzzers)."""
        assert len(self._inbound) <= self.limits.max_inbound_in_flight
        assert len(self._outbound) <= self.limits.max_outbound_in_flight
        assert self._outgoing_bytes <= self.limits.max_buffered_output_bytes
        assert self._outgoing_bytes == sum(len(m.payload) for m in self._outgoing)
        assert self._lines.pending <= self.limits.max_message_bytes
        for token, rid in self._progress_tokens.items():
            assert rid in self._outbound and self._outbound[rid].progress_token == token
        if self.state in (State.CLOSED, State.ERROR):
            assert not self._outbound and not self._inbound


# =========================================================================== server


class ServerConnection(_Connection):
    """The server side of one MCP connection, legacy session or 2026-07-28 stream.

    The first request decides the era: `initialize` starts a legacy session; a
    request carrying the 2026-07-28 `_meta` envelope makes the stream modern, and
    from then on every request is judged on its own envelope.
    """

    _role: Role = "server"
    _peer: Role = "client"

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config.limits)
        self.config = config
        self.state = State.AWAITING_FIRST
        self.client_capabilities: Any = None
        self.client_info: Any = None
        self.log_level: str | None = None
        self._client_caps_wire: dict[str, Any] = {}
        self._session_context: RequestContext | None = None

    # ---- receiving

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        era = self.era
        if era is Era.MODERN:
            self._modern_request(rid, method, params, events)
        elif era is Era.LEGACY:
            self._legacy_request(rid, method, params, events)
        elif method == "initialize":
            if not self.config.legacy_versions:
                self._refuse_initialize(params)
            self._initialize(rid, params, events)
        elif method == "ping" and self.config.legacy_versions:
            self._reply_result(rid, {}, method)
        elif self.config.modern_versions:
            self._modern_request(rid, method, params, events)
        elif lookup("client", method, self.config.legacy_versions[0]) is not None:
            raise _Reject(INVALID_REQUEST, "Received request before initialization was complete")
        else:
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _refuse_initialize(self, params: dict[str, Any] | None) -> None:
        requested = (params or {}).get("protocolVersion")
        supported = list(self.config.supported_versions)
        raise _Reject(
            UNSUPPORTED_PROTOCOL_VERSION,
            "This server speaks MCP "
            + ", ".join(supported)
            + " without an initialize handshake; use server/discover and per-request _meta",
            {
                "supported": supported,
                "requested": requested if isinstance(requested, str) else None,
            },
        )

    def _initialize(
        self, rid: RequestId, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        spec = METHODS[("client", "initialize")]
        p = self._validate_params(spec, params)
        legacy = self.config.legacy_versions
        version = p.protocol_version if p.protocol_version in legacy else legacy[0]
        self.protocol_version = version
        self.era = Era.LEGACY
        self.state = State.READY
        self.client_capabilities = p.capabilities
        self.client_info = p.client_info
        self._client_caps_wire = to_wire(p.capabilities) or {}
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.config.capabilities_wire,
            "serverInfo": self.config.server_info_wire,
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        self._reply_result(rid, result, "initialize")
        self._session_context = RequestContext(version, p.capabilities, p.client_info)
        events.append(SessionStarted(version, p.capabilities, p.client_info))

    def _legacy_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        version = self.protocol_version
        assert version is not None
        spec = lookup("client", method, version)
        if spec is None or not spec.is_request:
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "ping":
            self._reply_result(rid, {}, method)
            return
        if method == "initialize":
            raise _Reject(INVALID_REQUEST, "Session already initialized")
        if spec.server_capability and not _has_capability(
            self.config.capabilities_wire, spec.server_capability
        ):
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method} (capability not offered)")
        model = self._validate_params(spec, params)
        if method == "logging/setLevel":
            self.log_level = model.level
            self._reply_result(rid, {}, method)
            return
        meta = params.get("_meta") if params else None
        token = self._track_inbound(rid, method, meta, None)
        base = self._session_context
        assert base is not None
        if token is None and meta is None:
            context = base
        else:
            context = RequestContext(
                version, base.client_capabilities, base.client_info, None, token, meta
            )
        events.append(RequestReceived(rid, method, model, context))

    def _modern_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        if method == "initialize":
            self._refuse_initialize(params)
        spec = lookup("client", method, self.config.modern_versions[0])
        if spec is None or not spec.is_request:
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        meta = params.get("_meta") if params is not None else None
        if type(meta) is not dict:
            raise _Reject(
                INVALID_PARAMS, f"Missing required params._meta with {META_PROTOCOL_VERSION}"
            )
        version = meta.get(META_PROTOCOL_VERSION)
        if type(version) is not str:
            raise _Reject(INVALID_PARAMS, f"Missing required _meta key {META_PROTOCOL_VERSION}")
        if version not in self.config.modern_versions:
            raise _Reject(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(self.config.supported_versions), "requested": version},
            )
        caps = meta.get(META_CLIENT_CAPABILITIES)
        if type(caps) is not dict:
            raise _Reject(INVALID_PARAMS, f"Missing required _meta key {META_CLIENT_CAPABILITIES}")
        log_level = meta.get(META_LOG_LEVEL)
        if log_level is not None and log_level not in LOG_RANK:
            raise _Reject(INVALID_PARAMS, f"Unknown log level {log_level!r}")
        info_wire = meta.get(META_CLIENT_INFO)
        try:
            capabilities = validator("ClientCapabilities")(caps)
            info = validator("Implementation")(info_wire) if info_wire is not None else None
        except pydantic.ValidationError as exc:
            raise _Reject(INVALID_PARAMS, f"Invalid _meta envelope: {_describe(exc)}") from None
        if self.era is None:
            self.era = Era.MODERN
            self.state = State.READY
        self.protocol_version = version
        if method == "server/discover":
            self._reply_result(rid, self._finish_result(method, self._discover_result()), method)
            return
        if spec.server_capability and not _has_capability(
            self.config.capabilities_wire, spec.server_capability
        ):
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method} (capability not offered)")
        model = self._validate_params(spec, params)
        token = self._track_inbound(rid, method, meta, log_level)
        context = RequestContext(version, capabilities, info, log_level, token, meta)
        events.append(RequestReceived(rid, method, model, context))

    def _discover_result(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.config.supported_versions),
            "capabilities": self.config.capabilities_wire,
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        return result

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        version = self.protocol_version
        if version is None:
            return  # nothing but initialize means anything before the era is known
        spec = lookup("client", method, version)
        if spec is None or spec.is_request:
            return  # unknown notifications are ignored
        if method == "notifications/initialized":
            events.append(ClientInitialized())
            return
        try:
            model = self._validate_params(spec, params)
        except _Reject as rej:
            events.append(MessageRejected(None, rej.code, rej.message))
            return
        events.append(NotificationReceived(method, model))

    # ---- sending

    def _finish_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        if self.era is not Era.MODERN:
            return result
        result_type = result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        result["_meta"] = (
            {**meta, META_SERVER_INFO: self.config.server_info_wire}
            if meta
            else {META_SERVER_INFO: self.config.server_info_wire}
        )
        if result_type == "complete":
            spec = METHODS.get(("client", method))
            if spec is not None and spec.cacheable:
                result.setdefault("ttlMs", self.config.cache_ttl_ms)
                result.setdefault("cacheScope", self.config.cache_scope)
        elif result_type == "input_required":
            spec = METHODS.get(("client", method))
            if spec is None or not spec.input_required:
                raise LocalProtocolError(f"{method} cannot answer with an InputRequiredResult")
        return result

    def _sending_revision(self) -> str:
        if self.era is Era.MODERN:
            raise LocalProtocolError(
                "in 2026-07-28 a server sends no requests or unsolicited notifications; "
                "answer with an InputRequiredResult instead"
            )
        return super()._sending_revision()

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        cap = spec.client_capability
        if cap is not None:
            label = _CAPABILITY_LABEL.get(cap, cap)
            declared = self._client_caps_wire.get(cap)
            if declared is None:
                raise LocalProtocolError(
                    f"the client did not declare the {cap} capability ({label} not supported)"
                )
            if cap == "elicitation":
                mode = (params or {}).get("mode", "form")
                if not elicitation_mode_declared(declared, mode):
                    raise LocalProtocolError(
                        f"the client did not declare elicitation mode {mode!r}"
                    )
            if (
                cap == "sampling"
                and (params or {}).get("tools") is not None
                and not (isinstance(declared, dict) and declared.get("tools") is not None)
            ):
                raise LocalProtocolError("the client did not declare sampling with tools")
        return params

    def send_log(
        self,
        level: str,
        data: Any,
        *,
        logger: str | None = None,
        related_request_id: RequestId | None = None,
    ) -> bool:
        """Send `notifications/message` if the level passes the client's threshold.

        Legacy: the session level from `logging/setLevel` (everything before one
        arrives). 2026-07-28: only for a request that asked with `logLevel`, on that
        request's stream. Returns whether anything was sent.
        """
        self._check_sending()
        rank = LOG_RANK.get(level)
        if rank is None:
            raise LocalProtocolError(f"unknown log level {level!r}")
        if "logging" not in self.config.capabilities_wire:
            raise LocalProtocolError("the server did not advertise the logging capability")
        if self.era is Era.MODERN:
            entry = (
                self._inbound.get(related_request_id) if related_request_id is not None else None
            )
            if entry is None or entry.log_level is None or rank < LOG_RANK[entry.log_level]:
                return False
        elif self.state is not State.READY:
            raise LocalProtocolError(f"connection is not ready (state {self.state})")
        elif self.log_level is not None and rank < LOG_RANK[self.log_level]:
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._queue(
            jr.encode_notification("notifications/message", params),
            "notification",
            "notifications/message",
            None,
            related_request_id,
        )
        return True


def elicitation_mode_declared(declared: Any, mode: str) -> bool:
    """Whether an elicitation capability object covers `mode` (`{}` means form only)."""
    if not isinstance(declared, Mapping):
        return False
    if not declared.get("form") and not declared.get("url"):
        return mode == "form" and "form" not in declared and "url" not in declared
    return declared.get(mode) is not None


# =========================================================================== client


class ClientConnection(_Connection):
    """The client side of one MCP connection.

    Call `connect()` first; requests may be sent once a `Connected` event came
    out (at once for a pinned 2026-07-28 revision).
    """

    _role: Role = "client"
    _peer: Role = "server"

    def __init__(self, config: ClientConfig) -> None:
        super().__init__(config.limits)
        self.config = config
        self.server_capabilities: Any = None
        self.server_info: Any = None
        self.instructions: str | None = None
        self._server_caps_wire: dict[str, Any] = {}
        self._pending_events: list[Event] = []
        self._probe_tried: set[str] = set()
        self._probe_deadline: float | None = None
        self._envelope: dict[str, Any] = {}

    # ---- the handshake

    def connect(self, *, deadline: float | None = None) -> list[Event]:
        """Start the handshake (or the discovery probe) the configured mode asks for.

        `deadline` bounds the `server/discover` probe of "auto" mode: a server
        that stays silent until then is taken to be legacy.
        """
        if self.state is not State.IDLE:
            raise LocalProtocolError("connect() was already called")
        self.state = State.CONNECTING
        mode = self.config.mode
        versions = self.config.supported_versions
        modern = [v for v in versions if era_of(v) is Era.MODERN]
        legacy = [v for v in versions if era_of(v) is Era.LEGACY]
        self._probe_deadline = deadline
        if mode == "legacy":
            self._send_initialize(legacy[0])
        elif mode == "auto":
            if modern:
                self._send_probe(modern[0])
            else:
                self._send_initialize(legacy[0])
        elif era_of(mode) is Era.MODERN:
            self._become_modern(mode)
            return [self._connected_modern(None)]
        else:
            self._send_initialize(mode)
        return []

    def _send_initialize(self, version: str) -> None:
        params = {
            "protocolVersion": version,
            "capabilities": self.config.capabilities_wire,
            "clientInfo": self.config.client_info_wire,
        }
        self._send_internal("initialize", params, self._on_initialize_answer)

    def _on_initialize_answer(
        self, rid: RequestId, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> None:
        if error is not None:
            raise _Fatal(
                RemoteProtocolError(
                    f"initialize failed: {error.get('message')}",
                    code=error.get("code", INTERNAL_ERROR),
                )
            )
        try:
            init = validator("InitializeResult")(result)
        except pydantic.ValidationError as exc:
            raise _Fatal(
                RemoteProtocolError(f"invalid initialize result: {_describe(exc)}")
            ) from None
        version = init.protocol_version
        mode = self.config.mode
        acceptable = (
            version == mode
            if mode not in ("auto", "legacy")
            else version in self.config.supported_versions and era_of(version) is Era.LEGACY
        )
        if not acceptable:
            raise _Fatal(
                RemoteProtocolError(
                    f"server chose protocol version {version!r}, which this client does not speak"
                )
            )
        self.protocol_version = version
        self.era = Era.LEGACY
        self.state = State.READY
        self.server_capabilities = init.capabilities
        self.server_info = init.server_info
        self.instructions = init.instructions
        self._server_caps_wire = to_wire(init.capabilities) or {}
        self._queue(
            jr.encode_notification("notifications/initialized", None),
            "notification",
            "notifications/initialized",
            None,
            None,
            automatic=True,
        )
        self._pending_events.append(
            Connected(version, Era.LEGACY, init.capabilities, init.server_info, init.instructions)
        )

    def _envelope_for(self, version: str) -> dict[str, Any]:
        envelope: dict[str, Any] = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self.config.capabilities_wire,
            META_CLIENT_INFO: self.config.client_info_wire,
        }
        if self.config.log_level is not None:
            envelope[META_LOG_LEVEL] = self.config.log_level
        return envelope

    def _send_probe(self, version: str) -> None:
        self._probe_tried.add(version)
        self._send_internal(
            "server/discover",
            {"_meta": self._envelope_for(version)},
            lambda rid, result, error: self._on_probe_answer(version, result, error),
            self._probe_deadline,
        )

    def _on_probe_answer(
        self, version: str, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> None:
        ours = self.config.supported_versions
        if error is None:
            try:
                discovered = validator("DiscoverResult")(result)
            except pydantic.ValidationError as exc:
                raise _Fatal(
                    RemoteProtocolError(f"invalid server/discover result: {_describe(exc)}")
                ) from None
            mutual = preference_order(tuple(set(ours) & set(discovered.supported_versions)))
            self._take_mutual(mutual, discovered)
            return
        data = error.get("data")
        if (
            not error.get("local")
            and error.get("code") == UNSUPPORTED_PROTOCOL_VERSION
            and isinstance(data, dict)
            and isinstance(data.get("supported"), list)
        ):
            # A modern server that wants another revision: never fall back blindly.
            theirs = {v for v in data["supported"] if isinstance(v, str)}
            mutual = preference_order(tuple(set(ours) & theirs))
            retry = [v for v in mutual if era_of(v) is Era.MODERN and v not in self._probe_tried]
            if retry:
                self._send_probe(retry[0])
                return
            self._take_mutual(mutual, None)
            return
        legacy = [v for v in ours if era_of(v) is Era.LEGACY]
        if not legacy:
            raise _Fatal(RemoteProtocolError(f"server/discover failed: {error.get('message')}"))
        self._send_initialize(legacy[0])

    def _take_mutual(self, mutual: tuple[str, ...], discovered: Any) -> None:
        if not mutual:
            raise _Fatal(RemoteProtocolError("no protocol revision both sides speak"))
        best = mutual[0]
        if era_of(best) is Era.MODERN:
            self._become_modern(best)
            if discovered is not None:
                self.server_capabilities = discovered.capabilities
                self._server_caps_wire = to_wire(discovered.capabilities) or {}
                self.instructions = discovered.instructions
                info = (discovered.meta or {}).get(META_SERVER_INFO)
                if info is not None:
                    try:
                        self.server_info = validator("Implementation")(info)
                    except pydantic.ValidationError:
                        self.server_info = None
            self._pending_events.append(self._connected_modern(discovered))
        else:
            self._send_initialize(best)

    def _become_modern(self, version: str) -> None:
        self.protocol_version = version
        self.era = Era.MODERN
        self.state = State.READY
        self._envelope = self._envelope_for(version)

    def _connected_modern(self, discovered: Any) -> Connected:
        assert self.protocol_version is not None
        return Connected(
            self.protocol_version,
            Era.MODERN,
            self.server_capabilities,
            self.server_info,
            self.instructions,
        )

    # The internal handlers queue Connected; flush it after the message that caused it.
    def receive_data(self, data: bytes) -> list[Event]:
        events = super().receive_data(data)
        return self._flush(events)

    def receive_message(self, data: bytes | str) -> list[Event]:
        return self._flush(super().receive_message(data))

    def tick(self, now: float) -> list[Event]:
        return self._flush(super().tick(now))

    def _flush(self, events: list[Event]) -> list[Event]:
        if self._pending_events:
            events = self._pending_events + events
            self._pending_events = []
        return events

    # ---- receiving

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        if self.era is Era.MODERN:
            raise _Reject(METHOD_NOT_FOUND, "2026-07-28 servers do not send requests")
        version = self.protocol_version
        if method == "ping":
            self._reply_result(rid, {}, method)
            return
        if version is None:
            raise _Reject(INVALID_REQUEST, "Received request before initialization was complete")
        spec = lookup("server", method, version)
        if spec is None or not spec.is_request:
            raise _Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        cap = spec.client_capability
        if cap is not None:
            declared = self.config.capabilities_wire.get(cap)
            if declared is None:
                raise _Reject(METHOD_NOT_FOUND, f"{_CAPABILITY_LABEL.get(cap, cap)} not supported")
            if cap == "elicitation":
                mode = (params or {}).get("mode", "form")
                if not elicitation_mode_declared(declared, mode):
                    raise _Reject(INVALID_PARAMS, f"Elicitation mode {mode!r} not supported")
        model = self._validate_params(spec, params)
        meta = params.get("_meta") if params else None
        token = self._track_inbound(rid, method, meta, None)
        events.append(
            RequestReceived(
                rid, method, model, RequestContext(version, None, None, None, token, meta)
            )
        )

    def _accept_notification(
        self, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        version = self.protocol_version
        if version is None:
            return
        spec = lookup("server", method, version)
        if spec is None or spec.is_request:
            return
        try:
            model = self._validate_params(spec, params)
        except _Reject as rej:
            events.append(MessageRejected(None, rej.code, rej.message))
            return
        events.append(NotificationReceived(method, model))

    def _accept_result(
        self, rid: RequestId, entry: Outbound, result: dict[str, Any], events: list[Event]
    ) -> None:
        if self.era is Era.MODERN:
            result_type = result.get("resultType", "complete")
            if result_type != "complete":
                events.append(
                    RequestFailed(
                        rid,
                        entry.method,
                        INTERNAL_ERROR,
                        f"invalid result: unknown resultType {result_type!r}",
                    )
                )
                return
        super()._accept_result(rid, entry, result, events)

    # ---- sending

    def _sending_revision(self) -> str:
        return super()._sending_revision()

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        cap = spec.server_capability
        # A pinned 2026-07-28 client that skipped discovery knows no capabilities yet.
        if (
            cap is not None
            and self.server_capabilities is not None
            and not _has_capability(self._server_caps_wire, cap)
        ):
            raise LocalProtocolError(f"the server did not advertise the {cap} capability")
        if self.era is Era.MODERN:
            params = dict(params) if params else {}
            meta = params.get("_meta")
            params["_meta"] = {**self._envelope, **meta} if meta else self._envelope
        return params
