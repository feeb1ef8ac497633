"""`MCPServer`: tools, resources and prompts as decorated Python functions.

The server never touches a socket: a transport hands it each request together
with a `RequestScope` (the core connection the request came on, a way to ask
the client and wait for the answers, and a clock), and the server answers on
that connection. So the same `MCPServer` runs on stdio, Streamable HTTP,
WebSocket or in the same process, on asyncio or trio.

Asking the user works on both protocol generations, always through the core's
one verb, `ServerConnection.request_input`, whose answers come back as an
`InputReceived` judged against the questions (answers that came without this
server's sealed state, or that do not fit the form, never reach a resolver or
`ctx.elicit`: the question is asked again):

- resolvers (`Annotated[T, Resolve(fn)]`) always work: a legacy connection gets
  `elicitation/create`; a 2026-07-28 call returns `InputRequiredResult` and the
  client's retry carries the answers, several questions per round;
- `ctx.elicit` / `ctx.elicit_url` are server-to-client requests. On a
  2026-07-28 connection they work only when the tool (or the server) opts in
  with `replay_elicitation=True`: the call returns `InputRequiredResult`, and on
  the retry the tool body runs again from the top, every question already
  answered returning its recorded answer. Code before the first unanswered
  question therefore runs again: keep side effects after the questions.

The server API is this package: `MCPServer` and `Context` here; `_functions`
(tools, prompts and resources from signatures), `_resolve` (resolvers and the
questions they ask), `_lifespan` (entered once while anything serves it) and
`_serve` (an `MCPServer` as a session's request handler); `mcp_adapters.elicitation`
and `mcp_adapters.resources` are its public companions.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, overload

import pydantic

from mcp_adapters._lazy import LazyModule
from mcp_adapters._session import AwaitThen
from mcp_adapters.server._functions import FunctionPrompt, FunctionResource, FunctionTool
from mcp_adapters.server._lifespan import Lifespan, LifespanFactory, RequestContext
from mcp_adapters.server._resolve import (
    Elicit,
    ElicitUrl,
    InjectedContext,
    ListRoots,
    NeedInput,
    Question,
    Resolution,
    Resolve,
    Sample,
    ToolFailure,
)
from mcp_adapters.server._tasks import (
    TaskHost,
    TaskSettings,
    TaskSupport,
    legacy_task,
    modern_task,
)
from mcp_core import (
    ALL_REVISIONS,
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    REQUEST_TIMEOUT,
    RESOURCE_NOT_FOUND,
    Era,
    InputAnswer,
    InputReceived,
    Limits,
    LocalProtocolError,
    MCPError,
    RequestReceived,
    ServerConfig,
    ServerConnection,
    capability_problem,
    to_wire,
)
from mcp_core.tasks import TASKS_EXTENSION, extension_declared, missing_extension

if TYPE_CHECKING:
    from mcp_adapters.asgi import ASGIApp
    from mcp_adapters.auth import AuthSettings
    from mcp_adapters.elicitation import (
        AcceptedElicitation,
        AcceptedUrlElicitation,
        CancelledElicitation,
        DeclinedElicitation,
        ElicitationResult,
        UrlElicitationResult,
    )
    from mcp_adapters.resources import ReadResourceContents
    from mcp_adapters.server._serve import ServerHandler
    from mcp_adapters.store import Store
    from mcp_core import types
    from mcp_core.http import EventStore, HTTPLimits
    from mcp_core.websocket import WebSocketLimits
else:
    types = LazyModule("mcp_core.types", globals(), "types")

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound="pydantic.BaseModel")
#: What the server's lifespan yields: `Context[AppState]` types `lifespan_context`.
LifespanT = TypeVar("LifespanT")
RequestId = int | str
#: What a handler runs for: a request, or the answers to its questions (a 2026-07-28
#: retry, or a legacy round nobody waited for), handled the same way.
Incoming = RequestReceived | InputReceived

# The fix comes first: every current client speaks 2026-07-28 by default, so this
# is the first thing a port from the official SDK meets (see docs/porting.md).
_REPLAY_HINT = (
    "ctx.{what}() on a 2026-07-28 connection needs replay_elicitation=True: "
    'MCPServer("{server}", replay_elicitation=True), or @mcp.tool(replay_elicitation=True) '
    "on {handler}. The tool body then runs again from the top on the client's retry, "
    "questions already answered returning their answers: keep side effects after the "
    "questions. (ctx.{what}() sends a server-to-client request, which 2026-07-28 "
    "connections do not have; a resolver, Annotated[T, Resolve(fn)], asks without replay.)"
)


class RequestScope(Protocol):
    """What a transport gives the server for one request."""

    connection: ServerConnection

    async def ask(self, request_id: RequestId, questions: Mapping[str, Any]) -> InputReceived:
        """Ask for a legacy request that stays open (`request_input`), and wait here
        for the round's `InputReceived`."""
        ...

    def wake(self) -> None:
        """Output was queued on the connection outside the transport's own loop turn."""
        ...

    def wall_time(self) -> float:
        """Wall-clock seconds (sealed state must be readable by other processes)."""
        ...


# ------------------------------------------------------------------ askers


class _LegacyAsker:
    """Legacy connection: the request stays open while it asks, so each question is
    asked and answered in place (`request_input`, one question per round)."""

    def __init__(
        self,
        scope: RequestScope,
        request_id: RequestId,
        revision: str,
        capabilities: Mapping[str, Any],
    ) -> None:
        self.scope = scope
        self.request_id = request_id
        self.revision = revision
        self.capabilities = capabilities

    async def ask(self, key: str, question: Question) -> Any:
        params = question.params(self.revision)
        problem = capability_problem(self.capabilities, question.method, params)
        if problem is not None:
            raise MCPError(problem[0], problem[1])
        event = await self.scope.ask(
            self.request_id, {key: {"method": question.method, "params": params}}
        )
        answer = event.answers[key]
        if answer.status != "answered":
            raise _failure(key, answer)
        try:
            return question.outcome(answer.result)
        except pydantic.ValidationError as exc:
            raise ToolFailure(f"the client's answer to {key!r} is invalid: {exc}") from None


def _failure(key: str, answer: InputAnswer) -> Exception:
    """What a question that got no usable answer does to the call."""
    from mcp_adapters._errors import (
        ConnectionClosedError,
        RequestFailedError,
        RequestTimeoutError,
    )

    code, message = answer.code, answer.message or "no answer"
    if answer.status == "refused":
        return MCPError(code if code is not None else INVALID_PARAMS, message, answer.data)
    if code == INVALID_PARAMS:
        return ToolFailure(f"the client's answer to {key!r} is invalid: {message}")
    if code == REQUEST_TIMEOUT:
        return RequestTimeoutError(answer.method, code, message)
    if code == CONNECTION_CLOSED:
        return ConnectionClosedError(message)
    return RequestFailedError(answer.method, code if code is not None else -32603, message)


class _ReplayAsker:
    """2026-07-28: answers come from the retry; unanswered questions end the round."""

    def __init__(
        self, recorded: dict[str, Any], capabilities: Mapping[str, Any], revision: str
    ) -> None:
        self.recorded = recorded
        self.capabilities = capabilities
        self.revision = revision
        self.questions: dict[str, dict[str, Any]] = {}

    async def ask(self, key: str, question: Question) -> Any:
        answer = self.recorded.get(key)
        if answer is not None:
            try:
                return question.outcome(answer)
            except pydantic.ValidationError:
                del self.recorded[key]  # an invalid answer is asked again, never accepted
        params = question.params(self.revision)
        problem = capability_problem(self.capabilities, question.method, params)
        if problem is not None:
            capability = {
                "elicitation/create": "elicitation",
                "sampling/createMessage": "sampling",
                "roots/list": "roots",
            }[question.method]
            raise MCPError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                problem[1],
                {"requiredCapabilities": {capability: {}}},
            )
        self.questions[key] = {"method": question.method, "params": params}
        raise NeedInput(key)


# ----------------------------------------------------------------- context


class ServerSessionView:
    """`ctx.session`: what the tool may know and do about the connection."""

    def __init__(self, context: Context[Any]) -> None:
        self._context = context

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        caps: types.ClientCapabilities | None = self._context.request.context.client_capabilities
        return caps

    def check_client_capability(self, capability: types.ClientCapabilities) -> bool:
        """Whether the client declared everything `capability` names (for this request)."""
        declared = to_wire(self.client_capabilities) or {}
        wanted = to_wire(capability) or {}
        return _covers(declared, wanted)

    async def send_elicit_complete(self, elicitation_id: str) -> bool:
        """`notifications/elicitation/complete` (2025-11-25 only; other revisions have no
        such message, so nothing is sent and False is returned)."""
        connection = self._context.scope.connection
        if connection.protocol_version != "2025-11-25":
            return False
        connection.send_notification(
            "notifications/elicitation/complete",
            {"elicitationId": elicitation_id},
            related_request_id=self._context.request_id,
        )
        self._context.scope.wake()
        return True

    async def send_log_message(self, level: str, data: Any, logger: str | None = None) -> bool:
        return await self._context.log(level, data, logger_name=logger)


def _covers(declared: Any, wanted: Any) -> bool:
    if not isinstance(wanted, Mapping):
        return declared is not None
    if not isinstance(declared, Mapping):
        return False
    return all(key in declared and _covers(declared[key], value) for key, value in wanted.items())


class Context(InjectedContext, Generic[LifespanT]):
    """Injected into any tool, resource or prompt function that declares it.

    `Context[AppState]` (as in the official SDK) types
    `ctx.request_context.lifespan_context` as what the lifespan yields.
    """

    def __init__(
        self,
        server: MCPServer,
        request: Incoming,
        scope: RequestScope,
        asker: _LegacyAsker | _ReplayAsker,
        replay: bool,
    ) -> None:
        self.server = server
        self.request = request
        self.scope = scope
        self._asker = asker
        self._replay = replay
        self._asked = 0
        self.session = ServerSessionView(self)

    @property
    def request_id(self) -> RequestId:
        return self.request.request_id

    @property
    def protocol_version(self) -> str:
        return self.request.context.protocol_version

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        return self.session.client_capabilities

    @property
    def client_info(self) -> Any:
        return self.request.context.client_info

    @property
    def request_context(self) -> RequestContext[LifespanT]:
        """The SDK's spelling: `lifespan_context`, `request_id`, `meta`, `session`."""
        return RequestContext(
            self.request_id,
            self.request.context.meta,
            self.session,
            self.server.lifespan_context,
            self.request,
        )

    @property
    def mcp_server(self) -> MCPServer:
        """The server (the SDK's name for `ctx.server`)."""
        return self.server

    def _modern(self) -> bool:
        return self.scope.connection.era is Era.MODERN

    async def _ask(self, question: Question, what: str) -> Any:
        self._asked += 1
        if self._modern() and not self._replay:
            params = self.request.params
            handler = getattr(params, "name", None) or getattr(params, "uri", None) or "the tool"
            hint = _REPLAY_HINT.format(what=what, server=self.server.name, handler=handler)
            logger.warning("%s: %s", handler, hint)
            raise MCPError(INVALID_PARAMS, hint)
        return await self._asker.ask(f"{what}_{self._asked}", question)

    async def elicit(self, message: str, schema: type[M]) -> ElicitationResult[M]:
        """Ask the user to fill a form shaped like `schema`; see the module docstring."""
        outcome: ElicitationResult[M] = await self._ask(Elicit(message, schema), "elicit")
        return outcome

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> UrlElicitationResult:
        """Send the user to `url`; "accept" means they agreed to go, not that they finished."""
        outcome: UrlElicitationResult = await self._ask(
            ElicitUrl(message, url, elicitation_id), "elicit_url"
        )
        return outcome

    async def sample(self, messages: list[Any], max_tokens: int, **options: Any) -> Any:
        """Ask the client's model (sampling; deprecated in 2026-07-28)."""
        return await self._ask(Sample(messages, max_tokens, **options), "sample")

    async def list_roots(self) -> Any:
        return await self._ask(ListRoots(), "list_roots")

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Progress for this request, if the client asked for it."""
        sent = self.scope.connection.send_progress(self.request_id, progress, total, message)
        if sent:
            self.scope.wake()
        return sent

    async def log(self, level: str, data: Any, *, logger_name: str | None = None) -> bool:
        """`notifications/message` for this request (filtered by the client's level)."""
        connection = self.scope.connection
        if "logging" not in connection.config.capabilities_wire:
            return False
        sent = connection.send_log(
            level, data, logger=logger_name, related_request_id=self.request_id
        )
        if sent:
            self.scope.wake()
        return sent

    async def debug(self, data: Any, *, logger_name: str | None = None) -> bool:
        return await self.log("debug", data, logger_name=logger_name)

    async def info(self, data: Any, *, logger_name: str | None = None) -> bool:
        return await self.log("info", data, logger_name=logger_name)

    async def warning(self, data: Any, *, logger_name: str | None = None) -> bool:
        return await self.log("warning", data, logger_name=logger_name)

    async def error(self, data: Any, *, logger_name: str | None = None) -> bool:
        return await self.log("error", data, logger_name=logger_name)

    async def read_resource(self, uri: str) -> list[ReadResourceContents]:
        """Read one of this server's resources: each part's `content` (str or bytes),
        `mime_type` and `meta`, as the official SDK returns them."""
        from mcp_adapters.resources import ReadResourceContents

        result = await self.server.read_with(str(uri), self)
        return [ReadResourceContents.of(part) for part in result.contents]


class _TaskAsker:
    """A task's body: each question waits for its answer, by key, however long
    (`TaskHost.ask`): `tasks/update` on 2026-07-28, a waiting `tasks/result` on
    2025-11-25. The body runs once, so no question is ever asked twice."""

    def __init__(
        self,
        host: TaskHost,
        task_id: str,
        revision: str,
        capabilities: Mapping[str, Any],
        scope: RequestScope,
        era: str,
    ) -> None:
        self.host = host
        self.task_id = task_id
        self.revision = revision
        self.capabilities = capabilities
        self.scope = scope
        self.era = era

    async def ask(self, key: str, question: Question) -> Any:
        params = question.params(self.revision)
        problem = capability_problem(self.capabilities, question.method, params)
        if problem is not None:
            raise MCPError(problem[0], problem[1])
        answer = await self.host.ask(
            self.task_id, key, {"method": question.method, "params": params}, self.scope
        )
        try:
            return question.outcome(answer)
        except pydantic.ValidationError as exc:
            raise ToolFailure(f"the client's answer to {key!r} is invalid: {exc}") from None


class TaskContext(Context[LifespanT]):
    """The `Context` of a tool body running as a task (`ctx.task_id`).

    Asking works as in any tool (`ctx.elicit`, resolvers) and makes the task
    `input_required` until answered. Progress and logs go to the creating
    2025-11-25 session, tagged with the task, while it lasts; the 2026-07-28
    extension has neither for tasks (the status message is what it has).
    """

    def __init__(
        self,
        server: MCPServer,
        request: Incoming,
        scope: RequestScope,
        asker: Any,
        replay: bool,
        task_id: str,
        era: str,
    ) -> None:
        super().__init__(server, request, scope, asker, replay)
        self.task_id = task_id
        self.era = era

    async def _ask(self, question: Question, what: str) -> Any:
        self._asked += 1
        return await self._asker.ask(f"{what}_{self._asked}", question)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Progress under the creating request's token, valid until the task ends
        (2025-11-25; False elsewhere, or once the session is gone)."""
        if self.era != "legacy":
            return False
        try:
            sent = self.scope.connection.send_task_progress(self.task_id, progress, total, message)
        except LocalProtocolError:
            return False
        if sent:
            self.scope.wake()
        return sent

    async def log(self, level: str, data: Any, *, logger_name: str | None = None) -> bool:
        if self.era != "legacy":
            return False
        connection = self.scope.connection
        if "logging" not in connection.config.capabilities_wire:
            return False
        try:
            sent = connection.send_log(level, data, logger=logger_name)
        except LocalProtocolError:
            return False
        if sent:
            self.scope.wake()
        return sent


# ------------------------------------------------------------------ server


# The schema keyword of a mirrored tool argument (SEP-2243; `mcp_core.http`'s
# `X_MCP_HEADER`, spelled here so that a server never serving HTTP does not import it).
_X_MCP_HEADER = "x-mcp-header"


def _declares_headers(tool: FunctionTool) -> bool:
    """Whether `tool`'s input schema has an `x-mcp-header` key anywhere, valid or not:
    the HTTP transport's lookup then reads the tool (`tool_headers_declared`). Every
    position counts, even one the annotation rules refuse: erring towards True only
    costs the lookup. (A loop, not recursion, and each container once: a schema given as
    `input_schema=` may be deep, or even refer to itself.)"""
    stack: list[Any] = [tool.input_schema]
    visited: set[int] = set()
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping | list | tuple):
            if id(value) in visited:
                continue
            visited.add(id(value))
            if isinstance(value, Mapping):
                if _X_MCP_HEADER in value:
                    return True
                stack.extend(value.values())
            else:
                stack.extend(value)
    return False


class MCPServer:
    """An MCP server made of decorated functions; see the module docstring."""

    def __init__(
        self,
        name: str | None = None,
        *,
        lifespan: LifespanFactory | None = None,
        version: str = "0.1.0",
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Any = None,
        replay_elicitation: bool = False,
        request_state_keys: Sequence[bytes] | None = None,
        request_state_ttl: float = 600.0,
        server_identity: str | None = None,
        max_request_state_bytes: int = 16384,
        supported_versions: Sequence[str] = ALL_REVISIONS,
        limits: Limits | None = None,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
        auth: AuthSettings | None = None,
        store: Store | None = None,
        tasks: TaskSettings | None = None,
    ) -> None:
        if name is None and request_state_keys:
            # Sealed state names the server as its audience: with shared keys, two
            # unnamed services would accept each other's state.
            raise ValueError(
                "request_state_keys are shared between processes, so name the server "
                '(MCPServer("my-service", ...)): the name is the audience sealed state is bound to'
            )
        self.name = name or "mcp-server"
        self.version = version
        self.title = title
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.replay_elicitation = replay_elicitation
        # Without explicit keys, state sealed here verifies only in this process.
        if not request_state_keys:
            import secrets

            request_state_keys = (secrets.token_bytes(32),)
        self._config: ServerConfig | None = None
        self._list_cache: dict[str, Any] = {}
        self._request_state_keys = tuple(request_state_keys)
        self.request_state_ttl = request_state_ttl
        # Bound into every sealed requestState (its audience); the name if unset.
        # Replicas share it, and with `request_state_keys` from configuration
        # (mcp_adapters.request_state_keys) a retry verifies on any of them.
        if server_identity is not None and (
            not isinstance(server_identity, str) or not server_identity
        ):
            raise ValueError("server_identity must be a non-empty string")
        self._server_identity = server_identity
        self.max_request_state_bytes = max_request_state_bytes
        self.supported_versions = tuple(supported_versions)
        self._limits = limits
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self._tools: dict[str, FunctionTool] = {}
        #: Whether a registered tool may declare `x-mcp-header` parameters (SEP-2243):
        #: False only while none does. Kept by registration and removal, so the HTTP
        #: transport's tool-header lookup, asked on every 2026-07-28 `tools/call`, can
        #: answer "none" without reading the tool (`tool_header_params_of`). True is
        #: the safe side: the lookup then reads the tool's schema as before. Read it,
        #: never write it.
        self.tool_headers_declared = False
        # Over HTTP, a resource server (mcp_adapters.auth); a tool's scopes are its own.
        self.auth = auth
        self._tool_scopes: dict[str, tuple[str, ...]] = {}
        self._prompts: dict[str, FunctionPrompt] = {}
        self._resources: dict[str, FunctionResource] = {}
        self._templates: dict[str, FunctionResource] = {}
        self._completion: Callable[..., Any] | None = None
        # Live connections, weakly: a connection's wake function is kept on the
        # connection itself (it references the connection through its driver, so
        # keeping it here would keep every connection alive forever).
        self._live: weakref.WeakSet[ServerConnection] = weakref.WeakSet()
        self._lifespan = Lifespan(self, lifespan)
        # Shared by the replicas of a deployment (docs/deploy.md): Streamable HTTP
        # then keeps legacy sessions there; `publish_through` is set while it serves.
        self.store = store
        self._publish: Callable[[str, Any], None] | None = None
        # Tool calls run as tasks (`@mcp.tool(task=...)`): their records go to
        # `store.tasks` (this process's memory without a store), their bodies
        # run in a task group open while the server is served.
        self.tasks = TaskHost(self, tasks)
        # The `on_request` of the sessions that serve this server (`session_handler`).
        self._session_handler: ServerHandler | None = None

    # Both go into the (cached) config: setting one after the config was built,
    # as `configure_from_environment` does once a module has made its ASGI app,
    # must rebuild it, or connections would seal with the old ring.
    @property
    def request_state_keys(self) -> tuple[bytes, ...]:
        """The `requestState` key ring: the first key seals, every key verifies."""
        return self._request_state_keys

    @request_state_keys.setter
    def request_state_keys(self, keys: Sequence[bytes]) -> None:
        self._request_state_keys = tuple(keys)
        self._config = None

    @property
    def server_identity(self) -> str | None:
        """The audience bound into sealed `requestState` (the name when None)."""
        return self._server_identity

    @server_identity.setter
    def server_identity(self, identity: str | None) -> None:
        self._server_identity = identity
        self._config = None

    def running(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Inside the server's lifespan (entered here unless something else serves it),
        with the task group that tool calls run as tasks detach into.

        Every way of serving enters it; this is for a transport of your own.
        Yields the lifespan context.
        """
        return _Serving(self._lifespan, self.tasks)

    @property
    def lifespan_context(self) -> Any:
        """What the lifespan yielded, for a handler (raises outside the lifespan)."""
        return self._lifespan.value

    # ---- registration

    def _changed(self, kind: str | None = None) -> None:
        self._config = None
        self._list_cache.clear()
        if kind is not None:
            self._notify_list_changed(kind)

    # ---- change notifications

    def attach(self, scope: RequestScope) -> None:
        """Remember a live connection (weakly), so changes can be announced on it.

        Every transport calls this for a connection from its first message on; a
        transport of your own should too."""
        scope.connection.__dict__[_WAKE] = scope.wake
        self._live.add(scope.connection)

    def _attach_for(self, request: Incoming, scope: RequestScope) -> None:
        """`attach` the connection of a request that can hear of changes on it.

        A 2026-07-28 request hears of changes only on a `subscriptions/listen`
        stream (the core tells no other), so the connection of any other is not
        remembered: over HTTP that is a throwaway connection per POST, and
        remembering it cost a weak reference and its callback per request.
        The era is asked first: it is a plain attribute. A legacy connection is
        known as attached by the wake function `attach` leaves in its `__dict__`
        (a connection is served by one server), not by the `WeakSet` membership
        test, a Python-level call (about 1,900 instructions) on every legacy call."""
        connection = scope.connection
        if connection.era is _MODERN and request.method != "subscriptions/listen":
            return
        if _WAKE in connection.__dict__:
            return
        self.attach(scope)

    def _notify_list_changed(self, kind: str) -> int:
        """Announce a changed list on every live connection that may hear it.

        Legacy sessions get `notifications/{kind}/list_changed` (when advertised);
        2026-07-28 clients get it on the `subscriptions/listen` streams that asked.
        Returns how many connections were told.
        """
        return self._broadcast(f"notifications/{kind}/list_changed", None)

    def _broadcast(self, method: str, params: Any) -> int:
        """Tell every live connection that asked: the core keeps who did (a legacy
        session's subscriptions, each 2026-07-28 listen stream's filter)."""
        if self._publish is not None:  # a store: every replica passes it on (cluster.py)
            self._publish(method, params)
            return 0
        return self.notify_local(method, params)

    def publish_through(self, publish: Callable[[str, Any], None] | None) -> None:
        """While set, change notifications go to `publish(method, params)` instead
        of this process's connections: a store's fan-out, which every replica
        (this one included) passes on with `notify_local` (mcp_adapters.cluster)."""
        self._publish = publish

    def notify_local(self, method: str, params: Any, exclude: Container[object] = ()) -> int:
        """Pass a change notification on to this process's live connections that
        asked for it (but those in `exclude`); how many were told."""
        told = 0
        for connection in list(self._live):
            if connection in exclude:
                continue
            wake = connection.__dict__.get(_WAKE, _nothing)
            try:
                sent = connection.notify_subscribers(method, params) > 0
            except LocalProtocolError:
                sent = False  # closed meanwhile
            if sent:
                told += 1
                wake()
        return told

    def notify_task(self, task: Mapping[str, Any]) -> int:
        """`notifications/tasks` (the 2026-07-28 tasks extension) with a task as
        `tasks/get` shows it, to the listen streams that asked for that task id,
        on every replica sharing the store. The task runtime calls it on each
        status change; 2025-11-25 sessions hear `notifications/tasks/status`."""
        return self._broadcast("notifications/tasks", dict(task))

    def notify_tools_changed(self) -> int:
        """`notifications/tools/list_changed` to every connection that may hear it.

        Returns how many connections were told, or 0 while a store's fan-out
        carries it (`MCPServer(store=...)` serving over HTTP): every replica,
        this one included, passes it on when it arrives, after this returns,
        so no count is known here (docs/deploy.md)."""
        return self._notify_list_changed("tools")

    def notify_prompts_changed(self) -> int:
        """`notifications/prompts/list_changed`; returns as `notify_tools_changed`."""
        return self._notify_list_changed("prompts")

    def notify_resources_changed(self) -> int:
        """`notifications/resources/list_changed`; returns as `notify_tools_changed`."""
        return self._notify_list_changed("resources")

    def notify_resource_updated(self, uri: str) -> int:
        """`notifications/resources/updated` for `uri`, to the legacy sessions subscribed
        to it and the 2026-07-28 listen streams that asked for it. Returns how many
        connections were told, or 0 while a store's fan-out carries it (as
        `notify_tools_changed`)."""
        return self._broadcast("notifications/resources/updated", {"uri": uri})

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: Any = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        replay_elicitation: bool | None = None,
        scopes: Sequence[str] | None = None,
        task: TaskSupport = "forbidden",
    ) -> Callable[[F], F]: ...

    def tool(self, name: Any = None, **options: Any) -> Any:
        """Register a function as a tool: `@mcp.tool()` or `@mcp.tool(name=..., ...)`.

        `task`: whether a call may run as a task, detached from its request
        (docs/tasks.md): "forbidden" (the default), "optional" (when the client
        asks for one) or "required" (a call that is not a task is refused);
        2025-11-25 clients see it as the tool's `execution.taskSupport`.

        `scopes`: the OAuth scopes a caller's token needs for it (with `auth=`):
        without them the HTTP request is answered 403 `insufficient_scope`."""
        if callable(name):
            return self.tool()(name)
        scopes = tuple(options.pop("scopes", None) or ())

        def store(fn: Callable[..., Any]) -> None:
            spec = FunctionTool.build(fn, name=name, **options)
            self._tools[spec.name] = spec
            if not self.tool_headers_declared and _declares_headers(spec):
                self.tool_headers_declared = True
            self._tool_scopes[spec.name] = scopes

        return self._registering("tools", store)

    def _registering(
        self, kind: str | None, store: Callable[[Callable[..., Any]], None]
    ) -> Callable[[F], F]:
        """The decorator every registration returns: `store(fn)`, then the change is
        announced (`kind`: which list changed) and `fn` is given back as it was."""

        def decorate(fn: F) -> F:
            store(fn)
            self._changed(kind)
            return fn

        return decorate

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> None:
        self.tool(**options)(fn)

    def add_resource(self, resource: Any) -> None:
        """Register a resource object (see `mcp_adapters.resources`): anything with a
        `uri` and a plain or async `read()` returning str or bytes."""
        uri = str(resource.uri)
        spec = FunctionResource.build(
            resource.read,
            uri,
            name=getattr(resource, "name", None) or uri,
            title=getattr(resource, "title", None),
            description=getattr(resource, "description", None) or "",
            mime_type=getattr(resource, "mime_type", None),
            icons=getattr(resource, "icons", None),
        )
        if spec.pattern is not None:
            raise ValueError(f"add_resource needs a fixed URI, not {uri!r}: use @mcp.resource")
        if not spec.description:
            spec.description = None  # not the docstring of read()
        self._resources[uri] = spec
        self._changed("resources")

    @property
    def tool_scopes(self) -> Mapping[str, tuple[str, ...]]:
        """The scopes each tool requires (`@mcp.tool(scopes=...)`), read live by the
        resource server's guard: a tool added later is protected too."""
        return self._tool_scopes

    def remove_tool(self, name: str) -> None:
        del self._tools[name]
        # (Removal is rare: the flag is worked out again from the tools that remain.)
        self.tool_headers_declared = any(map(_declares_headers, self._tools.values()))
        self._tool_scopes.pop(name, None)
        self._changed("tools")

    def remove_prompt(self, name: str) -> None:
        del self._prompts[name]
        self._changed("prompts")

    def remove_resource(self, uri: str) -> None:
        if self._resources.pop(uri, None) is None:
            del self._templates[uri]
        self._changed("resources")

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Any = None,
    ) -> Callable[[F], F]:
        def store(fn: Callable[..., Any]) -> None:
            spec = FunctionPrompt.build(
                fn, name=name, title=title, description=description, icons=icons
            )
            self._prompts[spec.name] = spec

        return self._registering("prompts", store)

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: Any = None,
    ) -> Callable[[F], F]:
        """A resource; a URI with `{variables}` registers a template."""

        def store(fn: Callable[..., Any]) -> None:
            spec = FunctionResource.build(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                icons=icons,
            )
            (self._templates if spec.pattern is not None else self._resources)[uri] = spec

        return self._registering("resources", store)

    def completion(self) -> Callable[[F], F]:
        """The completion handler: `fn(ref, argument, context) -> list[str] | Completion`."""

        def store(fn: Callable[..., Any]) -> None:
            self._completion = fn

        return self._registering(None, store)

    # ---- configuration

    @property
    def limits(self) -> Limits | None:
        """The engine limits every connection gets (None: the defaults; docs/limits.md)."""
        return self._limits

    @limits.setter
    def limits(self, limits: Limits | None) -> None:
        self._limits = limits
        self._config = None  # built again, with these limits, on next use

    @property
    def config(self) -> ServerConfig:
        if self._config is None:
            caps: dict[str, Any] = {"logging": {}}
            if self._tools:
                caps["tools"] = {"listChanged": True}
            if self._prompts:
                caps["prompts"] = {"listChanged": True}
            if self._resources or self._templates:
                caps["resources"] = {"subscribe": True, "listChanged": True}
            if self._completion is not None:
                caps["completions"] = {}
            if any(t.task_support != "forbidden" for t in self._tools.values()):
                # 2025-11-25's capability and the 2026-07-28 extension's; each
                # era reads its own.
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
                caps["extensions"] = {TASKS_EXTENSION: {}}
            info: dict[str, Any] = {"name": self.name, "version": self.version}
            if self.title:
                info["title"] = self.title
            if self.website_url:
                info["websiteUrl"] = self.website_url
            if self.icons:
                info["icons"] = to_wire(self.icons)
            self._config = ServerConfig(
                name=self.name,
                version=self.version,
                capabilities=caps,
                instructions=self.instructions,
                server_info=info,
                supported_versions=self.supported_versions,
                limits=self._limits or Limits(),
                cache_ttl_ms=self.cache_ttl_ms,
                cache_scope=self.cache_scope,
                request_state_keys=self.request_state_keys,
                request_state_ttl=self.request_state_ttl,
                request_state_audience=self.server_identity,
                max_request_state_bytes=self.max_request_state_bytes,
            )
        return self._config

    def session_handler(self) -> ServerHandler:
        """The `on_request` a backend session serving this server calls: one per server,
        made on first use and shared by every session of every transport (each in-process
        client made its own, with its fast path's bound method: about 100 bytes)."""
        handler = self._session_handler
        if handler is None:
            from mcp_adapters.server._serve import ServerHandler

            handler = self._session_handler = ServerHandler(self)
        return handler

    def new_connection(self, *, principal: str | None = None) -> ServerConnection:
        return ServerConnection(self.config, principal=principal)

    # ---- dispatch

    async def handle(self, request: Incoming, scope: RequestScope) -> None:
        """Answer one request on its connection (result, InputRequiredResult or error).

        Raises `MCPError` for protocol-level failures; the transport turns it
        into the JSON-RPC error.
        """
        handler = _HANDLERS.get(request.method)
        if handler is None:
            raise MCPError(-32601, f"Method not found: {request.method}")
        self._attach_for(request, scope)
        self._answer(request, scope, await handler(self, request, scope))

    def handle_now(
        self,
        request: Incoming,
        scope: Any,
        scope_of: Callable[[Any], RequestScope] | None = None,
    ) -> Callable[[], Awaitable[None]] | None:
        """Answer at once if nothing can suspend; else return what will, to run as a task.

        A call of a plain-function tool (no resolvers) never waits for anything,
        so a transport can run it where the request arrived, without a task and
        the loop turn that starts one. Raises like `handle`.

        `scope_of`: `scope` is then the transport's own object (a backend session),
        whose `connection` is the request's, and `scope_of(scope)` makes the
        `RequestScope` only when one is needed: a plain tool without a `Context`
        answers with the connection alone (`ServerHandler.now` passes `SessionScope`;
        making one per request was two calls of every in-process call).
        """
        if request.method == "tools/call":
            # The params' fields from their `__dict__` (exactly the fields of a pydantic
            # model), read once: each attribute read on a pydantic model goes through the
            # model's `__getattr__` hook, about ten times the work of a plain one.
            fields = request.params.__dict__
            tool = self._tools.get(fields["name"])
            if (
                tool is not None
                and not tool.resolved
                and tool.task_support == "forbidden"
                and fields.get("task") is None
            ):
                connection = scope.connection
                if scope_of is not None and tool.context_param is not None:
                    scope = scope_of(scope)  # (a `Context` holds it)
                    scope_of = None  # made: `scope` is the scope from here on
                # `_attach_for`, written in (a call per request less): a 2026-07-28
                # `tools/call` is never attached, a legacy connection only once.
                if connection.era is not _MODERN and _WAKE not in connection.__dict__:
                    self.attach(scope if scope_of is None else scope_of(scope))
                if tool.is_async:
                    # The whole call as work the handler's task does, so that all of it
                    # (the validation too) runs in that task, as before; the session
                    # starts that task eagerly, so a tool that never suspends is still
                    # answered here, and awaits the tool's coroutine itself
                    # (`_CoroutineCall`). Its fields are set here, its one maker: a class
                    # call running an `__init__` was about 800 instructions more (the
                    # arguments' tuple, `slot_tp_init`'s lookup and a Python frame).
                    work = _new_object(_CoroutineCall)
                    work.server = self
                    work.tool = tool
                    work.request = request
                    work.scope = scope
                    work.arguments = fields["arguments"]
                    work.scope_of = scope_of
                    work.connection = connection
                    work.asker = None
                    return work
                if tool.context_param is not None:
                    outcome = self._call_plain_tool(tool, request, scope, fields["arguments"])
                else:
                    # `_call_plain_tool` for a tool without a `Context` (no asker to
                    # make), with `parse_arguments` and the text case of
                    # `to_wire_result` written in: three calls of every plain call.
                    # The same steps in the same order; keep the three alike.
                    arguments = fields["arguments"]
                    try:
                        # (the model's fields without the model: `FunctionTool.fields_check`)
                        kwargs = tool.fields_check[1](arguments or {})[0]
                    except pydantic.ValidationError as exc:
                        outcome = _invalid_arguments(tool, exc)
                    else:
                        try:
                            value = tool.fn(**kwargs)
                            if type(value) is str:
                                # (`to_wire_result`'s text case, below: the string itself
                                # stands for the result it makes)
                                outcome = (
                                    value
                                    if (tool.output_schema is not None and tool.text_output)
                                    or tool.output_adapter is None
                                    else tool.to_wire_result(value)
                                )
                            elif type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
                                outcome = _Later(tool, None, value)
                            else:
                                outcome = tool.to_wire_result(value)
                        except (Exception, NeedInput) as exc:
                            outcome = _tool_failure(tool, None, exc)
                if type(outcome) is str:
                    # A string from a plain tool (the commonest answer): `to_wire_result`'s
                    # text case, a tool declared to return `str` having its structured
                    # form and one without a schema none, sent as that dict is by
                    # `send_text_result`, which encodes only the string.
                    connection.send_text_result(
                        request.request_id,
                        outcome,
                        structured=tool.output_schema is not None and tool.text_output,
                    )
                    return None
                if type(outcome) is dict:
                    # A result (nearly always): what `_answer` does with one, with no
                    # call of its own; a dict is neither of the outcomes it tells apart.
                    connection.send_result(request.request_id, outcome)
                    return None
                if scope_of is not None:
                    scope = scope_of(scope)
                if isinstance(outcome, _Later):
                    return functools.partial(self._answer_later, request, scope, outcome)
                self._answer(request, scope, outcome)
                return None
        return functools.partial(
            self.handle, request, scope if scope_of is None else scope_of(scope)
        )

    async def _answer_later(self, request: Incoming, scope: RequestScope, later: _Later) -> None:
        self._answer(request, scope, await later.finish())

    def _answer(self, request: Incoming, scope: RequestScope, outcome: Any) -> None:
        if isinstance(outcome, _InputRequired):
            scope.connection.request_input(
                request.request_id,
                outcome.questions,
                state=outcome.state,
                wall_time=scope.wall_time(),
            )
        elif outcome is not _NO_ANSWER:
            scope.connection.send_result(request.request_id, outcome)

    def _asker(self, request: Incoming, scope: RequestScope) -> _LegacyAsker | _ReplayAsker:
        revision = request.context.protocol_version
        caps = to_wire(request.context.client_capabilities) or {}
        if scope.connection.era is not Era.MODERN:
            # The request stays open while it asks: answers come back in place.
            return _LegacyAsker(scope, request.request_id, revision, caps)
        # 2026-07-28: the answers known so far are those this server's sealed state
        # vouches for: earlier rounds' (kept in the state) and this round's. A plain
        # request's `input_responses` are the client's word alone and never count.
        recorded: dict[str, Any] = {}
        if isinstance(request, InputReceived):
            state = request.state
            if isinstance(state, Mapping) and isinstance(state.get("a"), Mapping):
                recorded.update(state["a"])
            for key, answer in request.answers.items():
                if answer.status == "answered":
                    recorded[key] = to_wire(answer.result)
        return _ReplayAsker(recorded, caps, revision)

    def _context(
        self,
        tool: FunctionTool,
        request: Incoming,
        scope: RequestScope,
        asker: _LegacyAsker | _ReplayAsker,
    ) -> Context[Any]:
        replay = (
            self.replay_elicitation if tool.replay_elicitation is None else tool.replay_elicitation
        )
        return Context(self, request, scope, asker, replay)

    def _tool_named(self, name: str) -> FunctionTool:
        tool = self._tools.get(name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        return tool

    async def _call_tool(self, request: Incoming, scope: RequestScope) -> Any:
        tool = self._tool_named(request.params.name)
        if tool.task_support != "forbidden" or getattr(request.params, "task", None) is not None:
            as_task = self._as_task(tool, request, scope)
            if as_task is not None:
                return await self._start_task(tool, request, scope, as_task)
        if not tool.is_async and not tool.resolved:
            outcome = self._call_plain_tool(tool, request, scope, request.params.arguments)
            return await outcome.finish() if isinstance(outcome, _Later) else outcome
        try:
            kwargs = tool.parse_arguments(request.params.arguments)
        except pydantic.ValidationError as exc:
            return _invalid_arguments(tool, exc)
        asker = self._asker(request, scope)
        context = self._context(tool, request, scope, asker)
        try:
            if tool.resolved:
                resolution = Resolution(kwargs, context, asker, request.context.protocol_version)
                kwargs.update(await resolution.fill(tool.resolved))
            if tool.context_param is not None:
                kwargs[tool.context_param] = context
            value = tool.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
            return tool.to_wire_result(value)
        except (Exception, NeedInput) as exc:
            return _tool_failure(tool, asker, exc)

    def _call_plain_tool(
        self,
        tool: FunctionTool,
        request: Incoming,
        scope: RequestScope,
        arguments: dict[str, Any] | None,
    ) -> Any:
        """A plain function's outcome, or `_Later` when it returned an awaitable (a coroutine
        tool always does: `_Later` is then the rest of its call). `arguments`: the request's,
        as the caller read them."""
        try:
            kwargs = tool.parse_arguments(arguments)
        except pydantic.ValidationError as exc:
            return _invalid_arguments(tool, exc)
        asker: _LegacyAsker | _ReplayAsker | None = None
        if tool.context_param is not None:
            asker = self._asker(request, scope)
            kwargs[tool.context_param] = self._context(tool, request, scope, asker)
        try:
            value = tool.fn(**kwargs)
            # The exact built-in types a plain function returns are never awaitable: the
            # ABC check (four calls) is made only for anything else.
            if type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
                return _Later(tool, asker, value)
            return tool.to_wire_result(value)
        except (Exception, NeedInput) as exc:
            return _tool_failure(tool, asker, exc)

    async def _list_tools(self, request: Incoming, scope: RequestScope) -> Any:
        # Only 2025-11-25 has `execution.taskSupport` (2026-07-28 moved tasks to an
        # extension whose server alone decides, per call).
        legacy_tasks = request.context.protocol_version == "2025-11-25"
        key = "tools+execution" if legacy_tasks else "tools"
        cached = self._list_cache.get(key)
        if cached is None:
            tools = []
            for spec in self._tools.values():
                tool = spec.definition()
                if legacy_tasks and spec.task_support != "forbidden":
                    tool.execution = types.ToolExecution(task_support=spec.task_support)
                tools.append(tool)
            cached = self._list_cache[key] = to_wire(types.ListToolsResult(tools=tools))
        return dict(cached)

    # ---- tasks (docs/tasks.md)

    def _as_task(
        self, tool: FunctionTool, request: Incoming, scope: RequestScope
    ) -> tuple[str, int | None] | None:
        """Whether this call runs as a task: (era, the TTL asked for) or None (inline).

        2025-11-25: when the client asked (`params.task`, which the engine keeps
        only when this server declared `tasks.requests.tools.call`). 2026-07-28:
        the server decides, but only for a request that declared the extension.
        """
        revision = request.context.protocol_version
        asked = getattr(request.params, "task", None)
        if revision == "2025-11-25":
            if asked is not None:
                if tool.task_support == "forbidden":
                    raise MCPError(
                        METHOD_NOT_FOUND,
                        f"Tool {tool.name} does not support task-augmented execution",
                    )
                return "legacy", asked.ttl
        elif scope.connection.era is Era.MODERN and tool.task_support != "forbidden":
            caps = to_wire(request.context.client_capabilities) or {}
            if extension_declared(caps):
                return "modern", None
            if tool.task_support == "required":
                raise MCPError(*missing_extension())
            return None
        if tool.task_support == "required":
            raise MCPError(METHOD_NOT_FOUND, f"Tool {tool.name} requires task-augmented execution")
        return None

    async def _start_task(
        self,
        tool: FunctionTool,
        request: Incoming,
        scope: RequestScope,
        as_task: tuple[str, int | None],
    ) -> Any:
        era, requested_ttl = as_task
        revision = request.context.protocol_version
        caps = to_wire(request.context.client_capabilities) or {}
        try:
            kwargs = tool.parse_arguments(request.params.arguments)
        except pydantic.ValidationError as exc:
            # Refused before any task exists: the call's own answer says why.
            return _invalid_arguments(tool, exc)
        if tool.resolved:
            # Resolvers are answered on the request itself, before the task exists
            # (the extension's rule for input gathered before a task: 2026-07-28
            # answers it with InputRequiredResult rounds, a legacy session asks in
            # place), so the task starts with every argument known.
            asker = self._asker(request, scope)
            context = self._context(tool, request, scope, asker)
            try:
                resolution = Resolution(kwargs, context, asker, revision)
                kwargs.update(await resolution.fill(tool.resolved))
            except (Exception, NeedInput) as exc:
                return _tool_failure(tool, asker, exc)

        async def body(host: TaskHost, record: Any) -> dict[str, Any]:
            asker = _TaskAsker(host, record.task_id, revision, caps, scope, era)
            context: TaskContext[Any] = TaskContext(
                self, request, scope, asker, True, record.task_id, era
            )
            call = dict(kwargs)
            try:
                if tool.context_param is not None:
                    call[tool.context_param] = context
                value = tool.fn(**call)
                if inspect.isawaitable(value):
                    value = await value
                wire: dict[str, Any] = tool.to_wire_result(value)
                return wire
            except Exception as exc:
                failure: dict[str, Any] = to_wire(_tool_failure(tool, None, exc))
                return failure

        record = await self.tasks.start(scope, era, requested_ttl, body)
        if era == "legacy":
            return {"task": legacy_task(record)}
        return {"resultType": "task", **modern_task(record, detailed=False)}

    def _task_id(self, request: Incoming) -> str:
        task_id: str = request.params.task_id
        return task_id

    async def _tasks_get(self, request: Incoming, scope: RequestScope) -> Any:
        record = await self.tasks.get(self._task_id(request), scope)
        if scope.connection.era is Era.MODERN:
            return modern_task(record, detailed=True)
        return legacy_task(record)

    async def _tasks_result(self, request: Incoming, scope: RequestScope) -> Any:
        record = await self.tasks.wait_terminal(
            self._task_id(request), scope, request.request_id, _failure
        )
        if record.result is not None:
            return dict(record.result)
        if record.status == "cancelled":
            raise MCPError(INVALID_PARAMS, f"Task {record.task_id} was cancelled")
        error = record.error or {"code": INTERNAL_ERROR, "message": "the task failed"}
        raise MCPError(
            error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data")
        )

    async def _tasks_list(self, request: Incoming, scope: RequestScope) -> Any:
        cursor = getattr(request.params, "cursor", None)
        records, next_cursor = await self.tasks.list(scope, cursor)
        result: dict[str, Any] = {"tasks": [legacy_task(r) for r in records]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _tasks_cancel(self, request: Incoming, scope: RequestScope) -> Any:
        cancelled = await self.tasks.cancel(self._task_id(request), scope)
        if scope.connection.era is Era.MODERN:
            return {}  # an acknowledgement; cancellation is eventually consistent
        if cancelled is None:
            raise MCPError(INVALID_PARAMS, "Cannot cancel task: already in terminal status")
        return legacy_task(cancelled)

    async def _tasks_update(self, request: Incoming, scope: RequestScope) -> Any:
        task_id = self._task_id(request)
        await self.tasks.get(task_id, scope)  # known, and this requester's
        await self.tasks.answer(task_id, to_wire(request.params.input_responses) or {})
        return {}

    async def _list_prompts(self, request: Incoming, scope: RequestScope) -> Any:
        prompts = [
            types.Prompt(
                name=p.name,
                title=p.title,
                description=p.description,
                arguments=[types.PromptArgument(**a) for a in p.arguments] or None,
                icons=p.icons,
            )
            for p in self._prompts.values()
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(self, request: Incoming, scope: RequestScope) -> Any:
        params = request.params
        prompt = self._prompts.get(params.name)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        arguments = dict(params.arguments or {})
        missing = [
            a["name"] for a in prompt.arguments if a["required"] and a["name"] not in arguments
        ]
        if missing:
            raise MCPError(INVALID_PARAMS, f"Missing required arguments: {', '.join(missing)}")
        asker = self._asker(request, scope)
        if prompt.context_param is not None:
            arguments[prompt.context_param] = Context(
                self, request, scope, asker, self.replay_elicitation
            )
        try:
            value = prompt.fn(**arguments)
            if inspect.isawaitable(value):
                value = await value
        except NeedInput:
            return _asked(asker)
        return types.GetPromptResult(
            description=prompt.description, messages=_prompt_messages(value)
        )

    async def _list_resources(self, request: Incoming, scope: RequestScope) -> Any:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.name,
                    title=r.title,
                    description=r.description,
                    mime_type=r.mime_type,
                    icons=r.icons,
                )
                for r in self._resources.values()
            ]
        )

    async def _list_templates(self, request: Incoming, scope: RequestScope) -> Any:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=r.uri,
                    name=r.name,
                    title=r.title,
                    description=r.description,
                    mime_type=r.mime_type,
                    icons=r.icons,
                )
                for r in self._templates.values()
            ]
        )

    async def _read_resource(self, request: Incoming, scope: RequestScope) -> Any:
        asker = self._asker(request, scope)
        context: Context[Any] = Context(self, request, scope, asker, self.replay_elicitation)
        try:
            return await self.read_with(request.params.uri, context)
        except NeedInput:
            return _asked(asker)

    async def read_with(self, uri: str, context: Context[Any]) -> types.ReadResourceResult:
        """Read `uri` for a request already running (`ctx.read_resource`): the lookup of
        resources/read, under that request's context."""
        for spec in (*self._resources.values(), *self._templates.values()):
            variables = spec.match(uri)
            if variables is None:
                continue
            kwargs: dict[str, Any] = dict(variables)
            if spec.context_param is not None:
                kwargs[spec.context_param] = context
            value = spec.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
            return types.ReadResourceResult(contents=_resource_contents(uri, spec.mime_type, value))
        modern = context.scope.connection.era is Era.MODERN
        raise MCPError(
            INVALID_PARAMS if modern else RESOURCE_NOT_FOUND,
            f"Resource not found: {uri}",
            {"uri": uri},
        )

    async def _subscribe(self, request: Incoming, scope: RequestScope) -> Any:
        return {}

    async def _listen(self, request: Incoming, scope: RequestScope) -> Any:
        # Acknowledge first; the stream stays open until the client cancels it (the
        # transport then cancels this handler) or the connection ends.
        scope.connection.acknowledge_subscription(request.request_id)
        scope.wake()
        import anyio

        await anyio.sleep_forever()
        return _NO_ANSWER  # pragma: no cover - sleep_forever only ends by cancellation

    async def _complete(self, request: Incoming, scope: RequestScope) -> Any:
        if self._completion is None:
            return types.CompleteResult(completion=types.Completion(values=[]))
        params = request.params
        value = self._completion(params.ref, params.argument, params.context)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, types.CompleteResult):
            return value
        if isinstance(value, types.Completion):
            return types.CompleteResult(completion=value)
        values = list(value or [])[:100]
        return types.CompleteResult(
            completion=types.Completion(values=values, total=len(values), has_more=False)
        )

    # ---- running

    def run(
        self,
        transport: Literal["stdio", "streamable-http", "http", "websocket", "ws", "tcp"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        backend: Literal["asyncio", "trio"] = "asyncio",
        streamable_http_path: str | None = None,
        http_limits: HTTPLimits | None = None,
        ws_limits: WebSocketLimits | None = None,
        event_store: EventStore | None = None,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] = (),
        trusted_proxies: Sequence[str] = (),
    ) -> None:
        """Serve until interrupted (stdio: until the input ends), inside the lifespan.

        `streamable_http_path` is the SDK's name for `path`. The engine's limits
        are this server's `limits`; `http_limits` and `ws_limits` are the
        transport's own, `event_store` keeps the legacy HTTP streams' events for
        resumption (docs/limits.md).

        HTTP behind a proxy or a load balancer (docs/deploy.md): `allowed_hosts`
        (`host[:port]`, `*` for any port) and `allowed_origins` replace the
        loopback allow-list of the Host/Origin check, and `X-Forwarded-*` headers
        are believed only from `trusted_proxies` (addresses or networks).
        """
        from mcp_adapters.server._serve import run_server

        run_server(
            self,
            transport,
            host=host,
            port=port,
            path=streamable_http_path or path,
            backend=backend,
            http_limits=http_limits,
            ws_limits=ws_limits,
            event_store=event_store,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            trusted_proxies=trusted_proxies,
        )

    # The official SDK's async entry points; each runs inside the lifespan.

    async def run_stdio_async(self) -> None:
        """Serve this process's stdin/stdout until the input ends."""
        from mcp_adapters.server._serve import serve_stdio

        await serve_stdio(self)

    async def run_streamable_http_async(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        streamable_http_path: str = "/mcp",
        json_response: bool = False,
        **endpoint_options: Any,
    ) -> None:
        """Serve Streamable HTTP at http://host:port/path until cancelled.

        `json_response=True` answers with plain JSON, never an event stream;
        other options go to `mcp_adapters.http.http_server`.
        """
        from mcp_adapters.http import serve_http

        if json_response:
            endpoint_options.setdefault("response_mode", "json")
        async with self.running():
            await serve_http(
                self, host=host, port=port, path=streamable_http_path, **endpoint_options
            )

    async def run_websocket_async(
        self, *, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp", **options: Any
    ) -> None:
        """Serve WebSocket at ws://host:port/path (and at `/`) until cancelled."""
        from mcp_adapters.transports.websocket import serve_websocket

        async with self.running():
            await serve_websocket(self, host=host, port=port, path=path, **options)

    async def run_tcp_async(self, *, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serve newline-delimited JSON at tcp://host:port until cancelled."""
        from mcp_adapters.server._serve import serve_tcp

        await serve_tcp(self, host, port)

    def asgi_app(self, *, path: str = "/mcp", **options: Any) -> ASGIApp:
        """This server as an ASGI 3 application: Streamable HTTP, both eras, for uvicorn,
        hypercorn or a Starlette/FastAPI mount (see `mcp_adapters.asgi`). Options as for
        `http_server`: `host_policy`, `trusted_proxies`, `limits`, `response_mode` ..."""
        from mcp_adapters.asgi import ASGIApp

        return ASGIApp(self, path=path, **options)


class _Serving:
    """`MCPServer.running()`: what entering it adds, and nothing when nothing is to add.

    Every in-process `Client(mcp)` enters `running()`. Without a lifespan of its own
    and with the task group already open (another client, or a transport, serves the
    server), entering changes nothing, yet the nested generators it took (this one,
    the lifespan's and the task group's) cost each idle client about 1 KB; this
    object is that case's whole cost. Decided on entering, not when made, so a
    context made early still enters what is not open by then.
    """

    __slots__ = ("_inner", "_lifespan", "_tasks")

    def __init__(self, lifespan: Lifespan, tasks: TaskHost) -> None:
        self._lifespan = lifespan
        self._tasks = tasks
        self._inner: contextlib.AbstractAsyncContextManager[Any] | None = None

    async def __aenter__(self) -> Any:
        if not self._lifespan.needs_entering and self._tasks.hosting_open:
            return self._lifespan.value
        # (A module function, not a server method handed in: that bound method was
        # 64 bytes more of every idle in-process client.)
        inner = self._inner = _running_in_full(self._lifespan, self._tasks)
        return await inner.__aenter__()

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        inner, self._inner = self._inner, None
        if inner is None:
            return None
        return await inner.__aexit__(*exc_info)


@contextlib.asynccontextmanager
async def _running_in_full(lifespan: Lifespan, tasks: TaskHost) -> AsyncIterator[Any]:
    """`running()` entered in full: the lifespan and the task group, each entered here
    unless already open."""
    async with lifespan.running() as value, tasks.hosting():
        yield value


class _InputRequired:
    __slots__ = ("questions", "state")

    def __init__(self, questions: dict[str, Any], state: Any) -> None:
        self.questions = questions
        self.state = state


_NO_ANSWER = object()
_WAKE = "_mcp_server_wake"
#: Makes a `_CoroutineCall` without a class call (`handle_now` sets its fields).
_new_object = object.__new__


def _nothing() -> None:
    """A wake function for a connection whose transport is already gone."""


def _asked(asker: _LegacyAsker | _ReplayAsker) -> _InputRequired:
    """The round's questions, with every answer so far recorded in the sealed state."""
    if not isinstance(asker, _ReplayAsker):  # only a replay asker ever raises NeedInput
        raise MCPError(-32603, "internal error: a question escaped a legacy connection")
    return _InputRequired(asker.questions, {"a": asker.recorded})


#: Types whose instances cannot be awaited (exact types: a subclass may define `__await__`).
# Read on every tool call (`_attach_for`); on CPython 3.11 an enum member read through its
# class goes through `EnumType.__getattr__`, about five times a plain read.
_MODERN = Era.MODERN

_NEVER_AWAITABLE: frozenset[type] = frozenset(
    {str, dict, list, tuple, int, float, bool, bytes, type(None)}
)


class _Later:
    """A plain function that returned an awaitable: the rest of its call."""

    __slots__ = ("asker", "awaitable", "tool")

    def __init__(
        self,
        tool: FunctionTool,
        asker: _LegacyAsker | _ReplayAsker | None,
        awaitable: Awaitable[Any],
    ) -> None:
        self.tool = tool
        self.asker = asker
        self.awaitable = awaitable

    async def finish(self) -> Any:
        try:
            return self.tool.to_wire_result(await self.awaitable)
        except (Exception, NeedInput) as exc:
            return _tool_failure(self.tool, self.asker, exc)


class _CoroutineCall(AwaitThen):
    """A call of a coroutine tool without resolvers or tasks: what `handle` does for it,
    minus the method lookup, the task checks and an asker for a tool that takes no
    `Context`, as work a session's handler task does (`AwaitThen`: the session awaits
    the tool's coroutine in its own frame; anything else awaits `work()`).

    `start` validates the arguments and makes the tool's coroutine, `then` turns its
    value into the wire result and sends it, `failed` answers an exception it raised.
    `scope_of` as for `MCPServer.handle_now`: `scope` is then the session, and a scope
    is made only for a `Context` or to answer with something other than a wire result.
    The text case of `to_wire_result` and `parse_arguments` (the fields validator, no
    model) are written in, as in `handle_now` (keep the three alike): a Python call less
    each. Until session 17 this was one coroutine of its own (`MCPServer._call_coroutine_tool`) between the session's and the tool's: about
    1,500-2,300 instructions more per call (an eager task's step runs through every
    layer; this object and its `start` and `then` calls cost less).
    (`MCPServer._answer`, `_asker` and `_context` are called through the class: this is
    the server's own work, kept out of its instance.)

    Made by `handle_now` alone, which sets every field (no `__init__`: see there).
    """

    __slots__ = (
        "arguments",
        "asker",
        "connection",
        "request",
        "scope",
        "scope_of",
        "server",
        "tool",
    )

    server: MCPServer
    tool: FunctionTool
    request: Incoming
    scope: Any
    arguments: dict[str, Any] | None
    scope_of: Callable[[Any], RequestScope] | None
    connection: Any
    asker: _LegacyAsker | _ReplayAsker | None

    catch = (Exception, NeedInput)

    def start(self) -> Awaitable[Any] | None:
        tool = self.tool
        try:
            # (the model's fields without the model, a dict of our own to add to:
            # `FunctionTool.parse_arguments`, written in as in `handle_now`'s plain path:
            # a Python call less)
            kwargs = tool.fields_check[1](self.arguments or {})[0]
        except pydantic.ValidationError as exc:
            self._send(_invalid_arguments(tool, exc))
            return None
        if tool.context_param is not None:
            request = self.request
            if self.scope_of is not None:
                self.scope, self.scope_of = self.scope_of(self.scope), None
            asker = self.asker = MCPServer._asker(self.server, request, self.scope)
            kwargs[tool.context_param] = MCPServer._context(
                self.server, tool, request, self.scope, asker
            )
        try:
            return tool.fn(**kwargs)  # type: ignore[no-any-return]
        except (Exception, NeedInput) as exc:  # (raised before its coroutine was made)
            self.failed(exc)
            return None

    def then(self, value: Any) -> None:
        tool = self.tool
        try:
            if type(value) is str and (
                (tool.output_schema is not None and tool.text_output) or tool.output_adapter is None
            ):
                outcome: Any = value  # (`to_wire_result`'s text case, as in `handle_now`)
            else:
                outcome = tool.to_wire_result(value)
        except (Exception, NeedInput) as exc:
            outcome = _tool_failure(tool, self.asker, exc)
        if type(outcome) is str:
            # The string stands for the text result it makes: `handle_now`'s text case.
            self.connection.send_text_result(
                self.request.request_id,
                outcome,
                structured=tool.output_schema is not None and tool.text_output,
            )
        elif type(outcome) is dict:
            # A result (nearly always), sent as `handle_now` sends a plain tool's.
            self.connection.send_result(self.request.request_id, outcome)
        else:
            self._send(outcome)

    def failed(self, exc: BaseException) -> None:
        self._send(_tool_failure(self.tool, self.asker, exc))

    def _send(self, outcome: Any) -> None:
        if type(outcome) is dict:
            self.connection.send_result(self.request.request_id, outcome)
        else:
            scope_of = self.scope_of
            MCPServer._answer(
                self.server,
                self.request,
                self.scope if scope_of is None else scope_of(self.scope),
                outcome,
            )


def _tool_failure(
    tool: FunctionTool, asker: _LegacyAsker | _ReplayAsker | None, exc: BaseException
) -> Any:
    """What a tool's exception means: a question, a readable failure, or a protocol error."""
    if isinstance(exc, NeedInput):
        if asker is None:  # only an asker raises it, and only a tool with one has it
            raise exc
        return _asked(asker)
    if isinstance(exc, ToolFailure):
        return _tool_error(str(exc))
    if isinstance(exc, MCPError):
        raise exc
    # A tool's failure is a result the model can read; the traceback is for the
    # server's operator, who would otherwise never learn where it came from.
    logger.error("Error executing tool %s", tool.name, exc_info=exc)
    return _tool_error(f"Error executing tool {tool.name}: {exc}")


def _invalid_arguments(tool: FunctionTool, exc: pydantic.ValidationError) -> types.CallToolResult:
    """Arguments the tool's model refused: a result the model can read and correct,
    the same words on every path that parses a call (inline, coroutine, task)."""
    return _tool_error(f"Invalid arguments for tool {tool.name}: {exc}")


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def _prompt_messages(value: Any) -> list[types.PromptMessage]:
    items = value if isinstance(value, (list, tuple)) else [value]
    messages = []
    for item in items:
        if isinstance(item, types.PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=item))
            )
        elif isinstance(item, Mapping):
            messages.append(types.PromptMessage.model_validate(item))
        else:
            messages.append(
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=str(item))
                )
            )
    return messages


def _resource_contents(uri: str, mime_type: str | None, value: Any) -> list[Any]:
    import base64

    items = value if isinstance(value, (list, tuple)) else [value]
    contents: list[Any] = []
    for item in items:
        if isinstance(item, (types.TextResourceContents, types.BlobResourceContents)):
            contents.append(item)
        elif isinstance(item, bytes):
            contents.append(
                types.BlobResourceContents(
                    uri=uri,
                    mime_type=mime_type or "application/octet-stream",
                    blob=base64.b64encode(item).decode(),
                )
            )
        else:
            text = (
                item
                if isinstance(item, str)
                else pydantic.TypeAdapter(Any).dump_json(item).decode()
            )
            contents.append(
                types.TextResourceContents(uri=uri, mime_type=mime_type or "text/plain", text=text)
            )
    if not contents:
        raise MCPError(INVALID_PARAMS, f"Resource {uri} has no contents")
    return contents


_Handler = Callable[[MCPServer, Incoming, RequestScope], Awaitable[Any]]
_HANDLERS: dict[str, _Handler] = {
    "tools/call": MCPServer._call_tool,
    "tools/list": MCPServer._list_tools,
    "prompts/list": MCPServer._list_prompts,
    "prompts/get": MCPServer._get_prompt,
    "resources/list": MCPServer._list_resources,
    "resources/templates/list": MCPServer._list_templates,
    "resources/read": MCPServer._read_resource,
    "resources/subscribe": MCPServer._subscribe,
    "resources/unsubscribe": MCPServer._subscribe,
    "subscriptions/listen": MCPServer._listen,
    "completion/complete": MCPServer._complete,
    "tasks/get": MCPServer._tasks_get,
    "tasks/result": MCPServer._tasks_result,
    "tasks/list": MCPServer._tasks_list,
    "tasks/cancel": MCPServer._tasks_cancel,
    "tasks/update": MCPServer._tasks_update,
}


def wall_clock() -> float:
    return time.time()


# The elicitation outcomes are pydantic models: they load with the first use.
_FROM_ELICITATION = frozenset(
    {
        "AcceptedElicitation",
        "AcceptedUrlElicitation",
        "CancelledElicitation",
        "DeclinedElicitation",
        "ElicitationResult",
        "UrlElicitationResult",
    }
)


def __getattr__(name: str) -> Any:
    if name in _FROM_ELICITATION:
        from mcp_adapters import elicitation

        value = getattr(elicitation, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AcceptedElicitation",
    "TaskContext",
    "TaskSettings",
    "AcceptedUrlElicitation",
    "CancelledElicitation",
    "Context",
    "DeclinedElicitation",
    "Elicit",
    "ElicitUrl",
    "ElicitationResult",
    "ListRoots",
    "MCPServer",
    "RequestScope",
    "Resolve",
    "Sample",
    "UrlElicitationResult",
]
