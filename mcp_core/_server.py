"""`ServerConnection`: the server side of one MCP connection, either era.

The first request decides the era: `initialize` starts a legacy session; a
request carrying the 2026-07-28 `_meta` envelope makes the stream modern, and
from then on every request is judged on its own envelope. A modern server never
sends requests; it asks through `send_input_required`, and the client's retry
arrives as an ordinary `RequestReceived` whose context carries the answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import pydantic

from . import _jsonrpc as jr
from ._config import ServerConfig, to_wire
from ._connection import (
    _ENDED,
    LOG_RANK,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    Reject,
    RequestId,
    State,
    _Connection,
    capability_problem,
    describe,
    has_capability,
    validator,
)
from ._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalProtocolError,
)
from ._events import (
    ClientInitialized,
    Event,
    MessageRejected,
    NotificationReceived,
    RequestContext,
    RequestReceived,
    RequestStateRejected,
    SessionStarted,
)
from ._request_state import INVALID_REQUEST_STATE_MESSAGE, RequestStateError
from ._requests import Inbound
from ._versions import METHODS, V2025_06_18, Era, MethodSpec, Role, lookup, needs_capability

# What an answer to each kind of input request must validate as.
INPUT_RESULT_TYPES: Final = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}

# Server notifications that need an advertised capability (legacy sessions).
_NOTIFICATION_CAPABILITY: Final = {
    "notifications/tools/list_changed": "tools.listChanged",
    "notifications/prompts/list_changed": "prompts.listChanged",
    "notifications/resources/list_changed": "resources.listChanged",
    "notifications/resources/updated": "resources.subscribe",
    "notifications/message": "logging",
}

# subscriptions/listen filter field -> (notification method, capability it needs)
_LISTEN_FILTER: Final = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools.listChanged"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts.listChanged"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources.listChanged"),
    "resourceSubscriptions": ("notifications/resources/updated", "resources.subscribe"),
}


class _EnvelopeCache:
    """Validated envelope objects, keyed by their JSON bytes.

    A client sends the same capabilities and clientInfo on every 2026-07-28
    request; validating them once instead of per request is most of the
    envelope's cost. Bounded, and shared by every connection, so the models it
    hands out must be treated as read-only.
    """

    __slots__ = ("_bound", "_cache", "_validate")

    def __init__(self, type_name: str, bound: int = 256) -> None:
        self._validate = validator(type_name)
        self._cache: dict[bytes, Any] = {}
        self._bound = bound

    def __call__(self, wire: Any) -> Any:
        key = jr.dumps(wire)
        found = self._cache.get(key)
        if found is None:
            found = self._validate(wire)
            if len(self._cache) >= self._bound:
                self._cache.clear()
            self._cache[key] = found
        return found


_CAPABILITIES_CACHE: _EnvelopeCache | None = None
_CLIENT_INFO_CACHE: _EnvelopeCache | None = None


def _envelope_models(caps: Any, info: Any) -> tuple[Any, Any]:
    global _CAPABILITIES_CACHE, _CLIENT_INFO_CACHE
    if _CAPABILITIES_CACHE is None or _CLIENT_INFO_CACHE is None:
        _CAPABILITIES_CACHE = _EnvelopeCache("ClientCapabilities")
        _CLIENT_INFO_CACHE = _EnvelopeCache("Implementation")
    return _CAPABILITIES_CACHE(caps), (_CLIENT_INFO_CACHE(info) if info is not None else None)


def _modern_meta(params: Any) -> bool:
    """Whether params carry the 2026-07-28 envelope (a protocolVersion in `_meta`)."""
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and META_PROTOCOL_VERSION in meta


def _target_and_arguments(method: str, params: Any) -> tuple[str, Mapping[str, Any] | None]:
    """What a sealed requestState is bound to: the tool/prompt name or resource URI."""
    if method == "resources/read":
        return params.uri, None
    return params.name, params.arguments


class ServerConnection(_Connection):
    """The server side of one MCP connection, legacy session or 2026-07-28 stream.

    `principal` names who the transport authenticated (if anyone); a sealed
    `requestState` is bound to it, so another principal cannot replay it.
    """

    _role: Role = "server"
    _peer: Role = "client"

    def __init__(self, config: ServerConfig, *, principal: str | None = None) -> None:
        super().__init__(config.limits)
        self.config = config
        self.principal = principal
        self.state = State.AWAITING_FIRST
        self.client_capabilities: Any = None
        self.client_info: Any = None
        self.log_level: str | None = None
        self._client_caps_wire: dict[str, Any] = {}
        self._session_context: RequestContext | None = None
        self._needs_wall_time = config.request_state_sealer is not None

    # ------------------------------------------------------------- receiving

    def _accept_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        era = self.era
        if era is Era.MODERN:
            self._modern_request(rid, method, params, events)
        elif era is Era.LEGACY:
            self._legacy_request(rid, method, params, events)
        elif method == "initialize" and not _modern_meta(params):
            if not self.config.legacy_versions:
                self._refuse_initialize(params)
            self._initialize(rid, params, events)
        elif method == "ping" and self.config.legacy_versions and not _modern_meta(params):
            self._reply_result(rid, {}, method)
        elif self.config.modern_versions:
            self._modern_request(rid, method, params, events)
        elif lookup("client", method, self.config.legacy_versions[0]) is not None:
            raise Reject(INVALID_REQUEST, "Received request before initialization was complete")
        else:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _refuse_initialize(self, params: dict[str, Any] | None) -> None:
        requested = (params or {}).get("protocolVersion")
        supported = list(self.config.supported_versions)
        raise Reject(
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
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "ping":
            self._reply_result(rid, {}, method)
            return
        if method == "initialize":
            raise Reject(INVALID_REQUEST, "Session already initialized")
        self._check_offered(spec)
        model = self._validate_params(spec, params)
        if method == "logging/setLevel":
            self.log_level = model.level
            self._reply_result(rid, {}, method)
            return
        meta = params.get("_meta") if params else None
        token = self._track_inbound(rid, method, meta, None, self._client_caps_wire, model)
        base = self._session_context
        assert base is not None
        if token is None and meta is None:
            context = base
        else:
            context = RequestContext(
                version, base.client_capabilities, base.client_info, None, token, meta
            )
        events.append(RequestReceived(rid, method, model, context))

    def _check_offered(self, spec: MethodSpec) -> None:
        cap = needs_capability(spec, self.protocol_version or "")
        if cap and not has_capability(self.config.capabilities_wire, cap):
            raise Reject(
                METHOD_NOT_FOUND, f"Method not found: {spec.method} (capability not offered)"
            )

    def _modern_request(
        self, rid: RequestId, method: str, params: dict[str, Any] | None, events: list[Event]
    ) -> None:
        if method == "initialize" and not _modern_meta(params):
            # A legacy client: tell it, in words it can show, which revisions we speak.
            self._refuse_initialize(params)
        spec = lookup("client", method, self.config.modern_versions[0])
        if spec is None or not spec.is_request:
            raise Reject(METHOD_NOT_FOUND, f"Method not found: {method}")
        meta = params.get("_meta") if params is not None else None
        if type(meta) is not dict:
            raise Reject(
                INVALID_PARAMS, f"Missing required params._meta with {META_PROTOCOL_VERSION}"
            )
        version = meta.get(META_PROTOCOL_VERSION)
        if type(version) is not str:
            raise Reject(INVALID_PARAMS, f"Missing required _meta key {META_PROTOCOL_VERSION}")
        if version not in self.config.modern_versions:
            raise Reject(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(self.config.supported_versions), "requested": version},
            )
        caps = meta.get(META_CLIENT_CAPABILITIES)
        if type(caps) is not dict:
            raise Reject(INVALID_PARAMS, f"Missing required _meta key {META_CLIENT_CAPABILITIES}")
        log_level = meta.get(META_LOG_LEVEL)
        if log_level is not None and log_level not in LOG_RANK:
            raise Reject(INVALID_PARAMS, f"Unknown log level {log_level!r}")
        try:
            capabilities, info = _envelope_models(caps, meta.get(META_CLIENT_INFO))
        except pydantic.ValidationError as exc:
            raise Reject(INVALID_PARAMS, f"Invalid _meta envelope: {describe(exc)}") from None
        if self.era is None:
            self.era = Era.MODERN
            self.state = State.READY
        self.protocol_version = version
        if method == "server/discover":
            self._reply_result(rid, self._finish_result(method, self._discover_result()), method)
            return
        self._check_offered(spec)
        model = self._validate_params(spec, params)
        answers: dict[str, Any] | None = None
        state: Any = None
        if spec.input_required and (
            model.request_state is not None or model.input_responses is not None
        ):
            answers, state = self._open_request_state(rid, method, model, events)
        token = self._track_inbound(rid, method, meta, log_level, caps, model)
        context = RequestContext(
            version, capabilities, info, log_level, token, meta, None, answers, state
        )
        events.append(RequestReceived(rid, method, model, context))

    def _open_request_state(
        self, rid: RequestId, method: str, model: Any, events: list[Event]
    ) -> tuple[dict[str, Any] | None, Any]:
        """Verify the echoed state and keep only the answers it says were asked for."""
        sealer = self.config.request_state_sealer
        if sealer is None:
            # No keys configured: the application seals (or trusts) its own state.
            return model.input_responses, model.request_state
        if model.request_state is None:
            # Nothing sealed to check them against: pass the (validated) answers on; the
            # application matches them to its own questions and ignores the rest.
            return model.input_responses, None
        target, arguments = _target_and_arguments(method, model)
        wall_time = self._wall_time
        assert wall_time is not None  # a sealing server refuses input that comes without it
        try:
            payload = sealer.unseal(
                model.request_state,
                method=method,
                target=target,
                arguments=arguments,
                principal=self.principal,
                wall_time=wall_time,
            )
            asked = payload["k"]
            if type(asked) is not dict:
                raise RequestStateError("bad_claims")
        except RequestStateError as exc:
            events.append(RequestStateRejected(rid, exc.reason))
            raise Reject(
                INVALID_PARAMS, INVALID_REQUEST_STATE_MESSAGE, {"reason": "invalid_request_state"}
            ) from None
        given = model.input_responses or {}
        answers: dict[str, Any] = {}
        for key, kind in asked.items():
            value = given.get(key)
            if value is None:
                continue  # missing: the handler asks again rather than failing
            expected = INPUT_RESULT_TYPES.get(kind)
            if expected is None or not isinstance(value, _wire_type(expected)):
                raise Reject(INVALID_PARAMS, f"inputResponses[{key!r}] does not answer {kind}")
            answers[key] = value
        return answers, payload.get("s")

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
        except Reject as rej:
            events.append(MessageRejected(None, rej.code, rej.message))
            return
        events.append(NotificationReceived(method, model))

    # ---------------------------------------------------------------- sending

    def _finish_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        if self.era is not Era.MODERN:
            result.pop("resultType", None)
            return result
        result_type = result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        server_info = self.config.server_info_wire
        result["_meta"] = (
            {**meta, META_SERVER_INFO: server_info} if meta else {META_SERVER_INFO: server_info}
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
        else:
            raise LocalProtocolError(f"unknown resultType {result_type!r}")
        return result

    def _sending_revision(self) -> str:
        if self.era is Era.MODERN:
            raise LocalProtocolError(
                "in 2026-07-28 a server sends no requests or unsolicited notifications; "
                "answer with send_input_required, or notify listeners with notify_subscribers"
            )
        return super()._sending_revision()

    def _prepare_request(
        self, spec: MethodSpec, params: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        problem = capability_problem(self._client_caps_wire, spec.method, params)
        if problem is not None:
            raise LocalProtocolError(f"the client did not declare it: {problem[1]}")
        if spec.method == "elicitation/create" and params is not None:
            check_form(params, self.protocol_version or V2025_06_18)
            if self.protocol_version == V2025_06_18:
                if params.get("mode", "form") != "form":
                    raise LocalProtocolError("URL-mode elicitation needs revision 2025-11-25")
                params = {k: v for k, v in params.items() if k not in ("mode", "elicitationId")}
            elif params.get("mode") == "url" and not params.get("elicitationId"):
                raise LocalProtocolError(
                    "URL-mode elicitation in 2025-11-25 needs an elicitationId"
                )
        return params

    def _check_notification_allowed(self, method: str) -> None:
        cap = _NOTIFICATION_CAPABILITY.get(method)
        if cap is not None and not has_capability(self.config.capabilities_wire, cap):
            raise LocalProtocolError(f"{method} needs the {cap} capability, which was not offered")

    def send_input_required(
        self,
        request_id: RequestId,
        input_requests: Mapping[str, Any] | None = None,
        state: Any = None,
        *,
        wall_time: float | None = None,
    ) -> bool:
        """Answer a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` with
        an `InputRequiredResult`: ask the client, and let its retry come back.

        `input_requests` maps keys of your choosing to `{"method", "params"}`
        objects (or the `ElicitRequest` / `CreateMessageRequest` /
        `ListRootsRequest` models). `state` is any JSON value; with
        `request_state_keys` configured it is sealed together with the kinds of
        the questions, bound to this call, and handed back verified on the retry
        (`context.request_state`, `context.input_responses`). Returns False when
        the request was cancelled meanwhile.

        `wall_time` (seconds since the epoch) dates the sealed state; by default
        the wall time given with the latest input. False, as for `send_result`,
        once the connection closed.
        """
        if self.state in _ENDED:
            return False
        if wall_time is not None:
            self._wall_time = wall_time
        entry = self._take_inbound(request_id)
        if entry is None:
            return False
        if self.era is not Era.MODERN:
            raise LocalProtocolError(
                "legacy sessions ask with server-to-client requests (send_request)"
            )
        spec = METHODS[("client", entry.method)]
        if not spec.input_required:
            raise LocalProtocolError(f"{entry.method} cannot answer with an InputRequiredResult")
        asked: dict[str, dict[str, Any]] = {}
        kinds: dict[str, str] = {}
        for key, request in (input_requests or {}).items():
            wire = to_wire(request)
            method = wire.get("method") if isinstance(wire, dict) else None
            if method not in INPUT_RESULT_TYPES:
                raise LocalProtocolError(
                    f"input request {key!r} must be elicitation/create, "
                    "sampling/createMessage or roots/list"
                )
            params = wire.get("params") or {}
            problem = capability_problem(entry.capabilities or {}, method, params)
            if problem is not None:
                raise LocalProtocolError(f"the client did not declare it: {problem[1]}")
            if method == "elicitation/create":
                if "elicitationId" in params:
                    raise LocalProtocolError("2026-07-28 URL-mode elicitation has no elicitationId")
                check_form(params, self.protocol_version or "")
            asked[key] = {"method": method, "params": params} if params else {"method": method}
            kinds[key] = method
        if not asked and state is None:
            raise LocalProtocolError("an InputRequiredResult needs input requests or state")
        token = self._seal(entry, kinds, state)
        result: dict[str, Any] = {"resultType": "input_required"}
        if asked:
            result["inputRequests"] = asked
        if token is not None:
            result["requestState"] = token
        wire_result = self._finish_result(entry.method, result)
        self._queue(
            jr.encode_result(request_id, wire_result),
            "result",
            entry.method,
            request_id,
            request_id,
        )
        del self._inbound[request_id]
        self._ended_inbound.add(request_id)
        return True

    def _seal(self, entry: Inbound, kinds: dict[str, str], state: Any) -> str | None:
        sealer = self.config.request_state_sealer
        if sealer is None:
            if state is None or isinstance(state, str):
                return state  # the application manages (and protects) its own state
            raise LocalProtocolError(
                "configure ServerConfig.request_state_keys to attach non-string state"
            )
        wall_time = self._wall_time
        assert wall_time is not None  # the request came with one: a sealing server insists
        target, arguments = _target_and_arguments(entry.method, entry.params)
        try:
            return sealer.seal(
                {"k": kinds, "s": state},
                method=entry.method,
                target=target,
                arguments=arguments,
                principal=self.principal,
                wall_time=wall_time,
            )
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"cannot seal requestState: {exc}") from None

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
        request's stream. Returns whether anything was sent (never, once the
        connection closed).
        """
        if self.state in _ENDED:
            return False
        rank = LOG_RANK.get(level)
        if rank is None:
            raise LocalProtocolError(f"unknown log level {level!r}")
        if "logging" not in self.config.capabilities_wire:
            raise LocalProtocolError("the server did not advertise the logging capability")
        if self.era is Era.MODERN:
            entry = (
                self._inbound.get(related_request_id) if related_request_id is not None else None
            )
            if (
                entry is None
                or entry.log_level is None
                or entry.method == "subscriptions/listen"  # listen streams carry no logs
                or rank < LOG_RANK[entry.log_level]
            ):
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

    # ------------------------------------------------- subscriptions (2026)

    def acknowledge_subscription(
        self, request_id: RequestId, notifications: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Accept a `subscriptions/listen`: send the acknowledgement, first, on its stream.

        The honoured filter is what the client asked for, narrowed to what the
        server's capabilities allow and, if given, to `notifications`. Returns it
        (empty, with nothing sent, once the connection closed).
        """
        if self.state in _ENDED:
            return {}
        entry = self._listen_entry(request_id)
        if entry.subscription is not None:
            raise LocalProtocolError("subscription already acknowledged")
        requested = to_wire(entry.params.notifications) or {}
        allowed = to_wire(notifications) if notifications is not None else None
        honoured: dict[str, Any] = {}
        for field, (_, cap) in _LISTEN_FILTER.items():
            value = requested.get(field)
            if not value or not has_capability(self.config.capabilities_wire, cap):
                continue
            if allowed is not None:
                narrow = allowed.get(field)
                if not narrow:
                    continue
                if field == "resourceSubscriptions" and isinstance(narrow, list):
                    value = [uri for uri in value if uri in narrow]
            honoured[field] = value
        entry.subscription = honoured
        self._queue(
            jr.encode_notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": honoured, "_meta": {META_SUBSCRIPTION_ID: request_id}},
            ),
            "notification",
            "notifications/subscriptions/acknowledged",
            None,
            request_id,
        )
        return honoured

    def notify_subscribers(self, method: str, params: Any = None) -> int:
        """Send a list_changed / resources/updated notification to every listen stream
        whose acknowledged filter covers it. Returns how many streams got it (none
        once the connection closed)."""
        if self.state in _ENDED:
            return 0
        field = next((f for f, (m, _) in _LISTEN_FILTER.items() if m == method), None)
        if field is None:
            raise LocalProtocolError(f"{method} is not a subscription notification")
        wire = to_wire(params) or {}
        sent = 0
        for rid, entry in self._inbound.items():
            honoured = entry.subscription
            if not honoured or not honoured.get(field):
                continue
            if field == "resourceSubscriptions" and wire.get("uri") not in honoured[field]:
                continue
            meta = {**(wire.get("_meta") or {}), META_SUBSCRIPTION_ID: rid}
            self._queue(
                jr.encode_notification(method, {**wire, "_meta": meta}),
                "notification",
                method,
                None,
                rid,
            )
            sent += 1
        return sent

    def end_subscription(self, request_id: RequestId) -> bool:
        """Close a listen stream gracefully: the final result, then (for byte
        streams) `notifications/cancelled` naming it, as the two spec pages ask.
        False, with nothing sent, once the connection closed."""
        if self.state in _ENDED:
            return False
        entry = self._listen_entry(request_id)
        del entry
        result = self._finish_result(
            "subscriptions/listen",
            {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: request_id}},
        )
        self._queue(
            jr.encode_result(request_id, result),
            "result",
            "subscriptions/listen",
            request_id,
            request_id,
        )
        del self._inbound[request_id]
        self._ended_inbound.add(request_id)
        self._queue_cancel(request_id, "subscription ended")
        return True

    def _listen_entry(self, request_id: RequestId) -> Inbound:
        entry = self._inbound.get(request_id)
        if entry is None or entry.method != "subscriptions/listen":
            raise LocalProtocolError(f"no subscriptions/listen request {request_id!r} is open")
        return entry


def check_form(params: Mapping[str, Any], revision: str) -> None:
    """Refuse a form the client could not draw (`check_form_schema`), before it is sent."""
    if params.get("mode", "form") != "form":
        return
    from ._elicitation import check_form_schema

    try:
        check_form_schema(params.get("requestedSchema"), revision=revision)
    except ValueError as exc:
        raise LocalProtocolError(str(exc)) from None


def _wire_type(name: str) -> type:
    """A model class of `mcp_core.types`, imported on first use: it is the slowest import."""
    from . import types

    model: type = getattr(types, name)
    return model
