"""`Client`: connect to an MCP server and call it; answer what it asks with callbacks.

    async with Client("http://127.0.0.1:8000/mcp", elicitation_callback=ask_user) as client:
        result = await client.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})

Registering a callback *is* declaring the capability: the client's capabilities
object is never written by hand. The same callbacks answer a legacy server's
`elicitation/create` / `sampling/createMessage` / `roots/list` requests and the
input requests of a 2026-07-28 `InputRequiredResult`; the retry loop (new id,
answers attached, `requestState` echoed) runs inside the engine, bounded by
`max_input_rounds`.

`target` is one of:

- a URL for each network transport `python -m mcp_adapters run` serves:
  `http://` or `https://` (Streamable HTTP, the endpoint's full URL),
  `ws://` or `wss://` (WebSocket; `/mcp` or no path), `tcp://host:port`
  (newline-delimited JSON over TCP);
- a `StdioServerParameters` (the client starts the server);
- an `MCPServer` (served in this process);
- a transport object with an async context manager method
  `connect(config, **session_options)` yielding a session.

Over legacy Streamable HTTP the client opens its GET listen stream (the
server's own requests and notifications) right after `initialize`, and the
`async with` body starts once the server answered that GET (the 200 head of the
stream, or a refusal such as 405): what the server sends there in answer to
your first call has a stream. A server that does not answer it within 5 s
(`listen_timeout`, an option of `connect_http`) gets the session anyway.

`auth` (an `mcp_adapters.oauth.OAuthProvider`, http(s) URLs only) authorizes
the client with OAuth: bearer tokens on every request, the flow on a 401 or a 403
`insufficient_scope`, refresh before expiry (docs/authorization.md).

`tasks=True` declares tasks (docs/tasks.md): the 2025-11-25 `tasks`
capability (the server may run our elicitation and sampling callbacks as
tasks it polls, and knows we can follow a task of its own) and the 2026-07-28
extension `io.modelcontextprotocol/tasks` (the server may answer any
`tools/call` with a task). `call_tool(..., task=True)` returns a `TaskHandle`;
a plain `call_tool` that the server answers with a task follows it to the end.
`task_status_callback` (a plain function or a coroutine function) gets every
task status notification (either era);
`task_poll_bounds` clamp the server's suggested poll interval (seconds).

`limits` (`mcp_core.Limits`) bound what the server may send us; the HTTP body,
SSE event and WebSocket message limits follow `limits.max_message_bytes`. A
response over them fails its call alone with `LimitExceededError`, which names
the limit to raise (docs/limits.md).
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, overload
from urllib.parse import urlsplit

import anyio

from mcp_adapters._client_tasks import (
    POLL_CEILING,
    POLL_FLOOR,
    HostedTasks,
    TaskCancelledError,
    TaskHandle,
    TaskLink,
    ttl_ms,
)
from mcp_adapters._errors import TransportError
from mcp_adapters.transports.process import StdioServerParameters
from mcp_core import (
    DEFAULT_LIMITS,
    LOG_LEVELS,
    METHOD_NOT_FOUND,
    TASKS_EXTENSION,
    ClientConfig,
    ClientConnection,
    Connected,
    ConnectionClosed,
    Era,
    Event,
    Limits,
    MCPError,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    SubscriptionAcknowledged,
    to_wire,
)
from mcp_core.types import (
    CallToolResult,
    ClientCapabilities,
    CompleteResult,
    CreateTaskResult,
    ElicitRequestParams,
    ErrorData,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListTasksResult,
    ListToolsResult,
    LoggingMessageNotificationParams,
    ReadResourceResult,
    SamplingCapability,
    ServerNotification,
)

logger = logging.getLogger(__name__)

ElicitationCallback = Callable[["ClientRequestContext", ElicitRequestParams], Awaitable[Any]]
SamplingCallback = Callable[["ClientRequestContext", Any], Awaitable[Any]]
ListRootsCallback = Callable[["ClientRequestContext"], Awaitable[Any]]
LoggingCallback = Callable[[LoggingMessageNotificationParams], Awaitable[None]]
IncomingMessage = Any  # a ServerNotification model, or an Exception from the transport
MessageHandler = Callable[[IncomingMessage], Awaitable[None]]
# Params of notifications/tasks/status (2025-11-25) or notifications/tasks (2026-07-28);
# a plain function or a coroutine function, as `progress_callback` is plain.
TaskStatusCallback = Callable[[Any], Awaitable[None] | None]
_TASK_NOTIFICATIONS = ("notifications/tasks/status", "notifications/tasks")
_HOSTED_TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")


def _awaited(callback: TaskStatusCallback | None) -> Callable[[Any], Awaitable[None]] | None:
    """A callback the notification queue can await: a coroutine function as is, a
    plain function wrapped (and awaited too if it returns an awaitable, such as a
    `functools.partial` of a coroutine function)."""
    if callback is None or inspect.iscoroutinefunction(callback):
        return callback

    async def call(argument: Any) -> None:
        outcome = callback(argument)
        if inspect.isawaitable(outcome):
            await outcome

    return call


@dataclass(frozen=True, slots=True)
class ClientRequestContext:
    """What a callback learns about the server's question.

    `request_id` is the server's request id (legacy) or the engine's id for
    one input request of a 2026-07-28 call; `related_request_id` names the
    call it belongs to (2026-07-28).
    """

    session: Client
    request_id: int | str
    meta: dict[str, Any] | None
    related_request_id: int | str | None = None


#: The configs of the declarations seen last, by their key (see `_config_for`).
_CONFIGS: dict[tuple[Any, ...], ClientConfig] = {}
#: How many `_CONFIGS` keeps: a program declares a handful of things, not more.
_CONFIGS_KEPT = 32


def _config_for(
    info: dict[str, Any],
    capabilities: dict[str, Any],
    mode: str,
    log_level: str | None,
    max_input_rounds: int,
    limits: Limits,
) -> ClientConfig:
    """The `ClientConfig` of a client declaring this, shared with the other clients that
    declare the same.

    Why: a config and what it derives (the capability and clientInfo wire forms, the
    revisions in preference order) were about 570 bytes of every client, made again by
    each `Client(...)`, while the clients of one program nearly all declare the same. A
    config is frozen and the engine only reads its wire forms (a handshake and the
    2026-07-28 envelope send them as they are), so one can serve them all. The key is
    the declaration's JSON with every other setting, so equal declarations share one and
    any difference gets its own; the oldest key is dropped past `_CONFIGS_KEPT` (clients
    declaring ever new names each make their own config, as before).
    """
    try:
        key: tuple[Any, ...] | None = (
            json.dumps(info, sort_keys=True),
            json.dumps(capabilities, sort_keys=True),
            mode,
            log_level,
            max_input_rounds,
            limits,
        )
        config = _CONFIGS.get(key)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # not JSON (the handshake will say so), or unhashable
        key, config = None, None
    if config is None:
        config = ClientConfig(
            name=info.get("name", "mcp-sansio-client"),
            version=info.get("version", "0.1.0"),
            client_info=info,
            capabilities=capabilities,
            mode=mode,
            log_level=log_level,
            max_input_rounds=max_input_rounds,
            limits=limits,
        )
        if key is not None:
            if len(_CONFIGS) >= _CONFIGS_KEPT:
                _CONFIGS.pop(next(iter(_CONFIGS), None), None)  # type: ignore[arg-type]
            _CONFIGS[key] = config
    return config


class Client:
    """An MCP client; see the module docstring."""

    def __init__(
        self,
        target: Any,
        *,
        mode: Literal["legacy", "auto"] | str = "auto",
        elicitation_callback: ElicitationCallback | None = None,
        sampling_callback: SamplingCallback | None = None,
        sampling_capabilities: SamplingCapability | None = None,
        list_roots_callback: ListRootsCallback | None = None,
        roots_list_changed: bool = False,
        logging_callback: LoggingCallback | None = None,
        log_level: str | None = None,
        message_handler: MessageHandler | None = None,
        client_info: Any = None,
        read_timeout: float | None = None,
        max_input_rounds: int = 10,
        elicitation_modes: tuple[str, ...] = ("form", "url"),
        limits: Limits | None = None,
        auth: Any = None,
        tasks: bool = False,
        task_status_callback: TaskStatusCallback | None = None,
        task_poll_bounds: tuple[float, float] = (POLL_FLOOR, POLL_CEILING),
    ) -> None:
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}")
        self.target = target
        self.mode = mode
        self.auth = auth  # an mcp_adapters.oauth.OAuthProvider (http(s) and ws(s) URLs)
        self._elicitation_callback = elicitation_callback
        self._sampling_callback = sampling_callback
        self._list_roots_callback = list_roots_callback
        self._logging_callback = logging_callback
        self._message_handler = message_handler
        self.log_level = log_level
        self.read_timeout = read_timeout
        floor, ceiling = task_poll_bounds
        if not 0 < floor <= ceiling:
            raise ValueError(
                f"task_poll_bounds must be 0 < floor <= ceiling, not {task_poll_bounds}"
            )
        self.task_poll_bounds = task_poll_bounds
        self.tasks = tasks
        self._task_status_callback = _awaited(task_status_callback)
        # The handles of tasks not seen to end yet, by task id: notifications reach them.
        # Made on first use, like the rest of the task state: most clients run no task.
        self._task_handles: dict[str, TaskHandle] | None = None
        # 2025-11-25: a task call's progress token outlives its CreateTaskResult, so
        # its progress goes on after call_tool returned: by the call's request id.
        self._progress_task_calls = 0
        self._task_progress: dict[int | str, _TaskProgress] | None = None
        capabilities: dict[str, Any] = {}
        if elicitation_callback is not None:
            capabilities["elicitation"] = {mode_: {} for mode_ in elicitation_modes}
        if sampling_callback is not None:
            capabilities["sampling"] = to_wire(sampling_capabilities) or {}
        if list_roots_callback is not None:
            capabilities["roots"] = {"listChanged": True} if roots_list_changed else {}
        if tasks:
            # 2025-11-25: what we host (our callbacks, run as tasks the server polls).
            hosted: dict[str, Any] = {}
            if elicitation_callback is not None:
                hosted["elicitation"] = {"create": {}}
            if sampling_callback is not None:
                hosted["sampling"] = {"createMessage": {}}
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": hosted}
            # 2026-07-28: the extension, on every request's capabilities.
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        info = to_wire(client_info) or {"name": "mcp-sansio-client", "version": "0.1.0"}
        self.config = _config_for(
            info, capabilities, mode, log_level, max_input_rounds, limits or DEFAULT_LIMITS
        )
        self._session: Any = None
        self._context: contextlib.AbstractAsyncContextManager[Any] | None = None
        # The `listen()` streams, by request id once acknowledged, and in order before:
        # made by the first `listen()` (most clients never listen; 120 bytes of each).
        self._listeners: dict[int | str, _Listener] | None = None
        # Made on first use: an idle client should not carry a deque and an event.
        self._inbox: collections.deque[tuple[Callable[[Any], Awaitable[None]], Any]] | None = None
        self._delivering = False
        self._idle: anyio.Event | None = None
        self._unbound_listeners: list[_Listener] | None = None
        limit = (limits or DEFAULT_LIMITS).max_tasks
        self._hosted = HostedTasks(self._spawn, self._notify, limit) if tasks else None
        self._link: TaskLink | None = None

    # ------------------------------------------------------------- lifetime

    async def __aenter__(self) -> Client:
        from mcp_adapters.backends import current_backend
        from mcp_adapters.server import MCPServer

        backend = current_backend()
        options: dict[str, Any] = {
            "on_request": self._on_request,
            "on_notification": self._on_notification,
            "on_event": self._on_event,
        }
        target = self.target
        if self.auth is not None:
            scheme = target.partition("://")[0].lower() if isinstance(target, str) else ""
            if scheme in ("http", "https"):
                options["auth"] = self.auth
            elif scheme in ("ws", "wss"):
                # A WebSocket carries credentials once, on the upgrade: get the token
                # first (the resource is the URL's http(s) spelling, as the server's
                # metadata names it). A 1008 close once it expires ends the client.
                resource = ("https" if scheme == "wss" else "http") + target[len(scheme) :]
                header = await self.auth.upfront_header(resource, mode=self.mode)
                options["headers"] = [header]
            else:
                raise ValueError("auth= needs an http(s):// or ws(s):// URL target")
        connection: contextlib.AbstractAsyncContextManager[Any]
        if isinstance(target, MCPServer):
            connection = _InProcess(backend, target, self.config, options)
        elif isinstance(target, StdioServerParameters):
            connection = backend.connect_stdio(target, self.config, **options)
        elif isinstance(target, str):
            connection = _connect_url(backend, target, self.config, options)
        elif hasattr(target, "connect"):
            connection = target.connect(self.config, **options)
        else:
            raise TypeError(f"cannot connect to {target!r}")
        # One context to leave, kept as is: an AsyncExitStack would cost every
        # idle client a deque.
        self._session = await connection.__aenter__()
        # Our observer looks at an answer only while a legacy task call follows its
        # progress (`_on_event`): until one does, the session does not call it for
        # answers (a call per response). A session that cannot say keeps calling it.
        self._observe_responses(False)
        try:
            await self._after_connect()
        except BaseException:
            await connection.__aexit__(None, None, None)
            raise
        self._context = connection
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._hosted is not None:
            self._hosted.cancel_all()
        self._task_handles = self._task_progress = None
        context, self._context = self._context, None
        if context is not None:
            await context.__aexit__(None, None, None)

    async def _after_connect(self) -> None:
        connected = self.connected
        if (
            self.log_level is not None
            and connected is not None
            and connected.era is Era.LEGACY
            and connected.server_capabilities is not None
            and connected.server_capabilities.logging is not None
        ):
            # Older servers keep a session level; 2026-07-28 requests carry it instead.
            await self._request("logging/setLevel", {"level": self.log_level})

    @property
    def session(self) -> Any:
        if self._session is None:
            raise RuntimeError("use `async with Client(...)` first")
        return self._session

    @property
    def connected(self) -> Connected | None:
        connected: Connected | None = self.session.connected
        return connected

    @property
    def protocol_version(self) -> str | None:
        connected = self.connected
        return connected.protocol_version if connected else None

    @property
    def server_capabilities(self) -> Any:
        connected = self.connected
        return connected.server_capabilities if connected else None

    @property
    def server_info(self) -> Any:
        connected = self.connected
        return connected.server_info if connected else None

    # ------------------------------------------------------------- requests

    async def _request(self, method: str, params: Any = None, **options: Any) -> Any:
        options.setdefault("timeout", self.read_timeout)
        return await self.session.request(method, params, **options)

    async def _request_unbounded(self, method: str, params: Any = None) -> Any:
        """A request the read timeout does not bound (a task's blocking `tasks/result`)."""
        return await self.session.request(method, params)

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        read_timeout: float | None = None,
        progress_callback: Callable[[float, float | None, str | None], Any] | None = None,
        meta: dict[str, Any] | None = None,
        task: Literal[False] = False,
        ttl: None = None,
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        read_timeout: float | None = None,
        progress_callback: Callable[[float, float | None, str | None], Any] | None = None,
        meta: dict[str, Any] | None = None,
        task: Literal[True],
        ttl: float | None = None,
    ) -> TaskHandle: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        read_timeout: float | None = None,
        progress_callback: Callable[[float, float | None, str | None], Any] | None = None,
        meta: dict[str, Any] | None = None,
        task: bool = False,
        ttl: float | None = None,
    ) -> CallToolResult | TaskHandle:
        """Call a tool; with `task=True`, as a task: a `TaskHandle` at once.

        `ttl` (seconds, with `task=True`) asks a 2025-11-25 server to keep the
        task that long. On 2026-07-28 the server decides whether a call becomes
        a task (the Client must be made with `tasks=True`); one it answers at
        once gives a handle that already holds the result. Without `task=True`
        a task the 2026-07-28 server chose is followed to its end here.
        """
        if ttl is not None and not task:
            raise ValueError("ttl= is the TTL of a task: pass task=True too")
        # `_modern()` and `_request()`, inline: this is the hot call of most clients.
        session = self._session
        if session is None:
            session = self.session  # raises: not connected
        # The era matters only to a task call, and to an answer that is a task (below):
        # a plain call does not read it (a property call less per call). The session is
        # stored once connected, and the era never changes after that.
        modern = False
        if task:
            connected = session.connected
            modern = connected is not None and connected.era is Era.MODERN
            if modern and not self.tasks:
                raise ValueError(
                    "a 2026-07-28 server runs tasks only for clients that declare the "
                    "tasks extension: make the Client with tasks=True"
                )
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if meta:
            params["_meta"] = meta
        if task and not modern:
            wanted_ttl = ttl_ms(ttl)
            params["task"] = {"ttl": wanted_ttl} if wanted_ttl is not None else {}
        on_progress = None
        if progress_callback is not None:

            def on_progress(event: Any) -> None:
                progress_callback(event.progress, event.total, event.message)

        follow_progress = on_progress is not None and task and not modern
        if follow_progress:
            self._progress_task_calls += 1
            self._observe_responses(True)
        try:
            # (`timeout`, `on_progress` by position: see `Session.request`)
            result: Any = await session.request(
                "tools/call",
                params,
                read_timeout if read_timeout is not None else self.read_timeout,
                on_progress,
            )
        finally:
            if follow_progress:
                self._progress_task_calls -= 1
                if not self._progress_task_calls:
                    self._observe_responses(False)
        # Log and other notifications of this call arrived before its result: let
        # their callbacks run first, as they would have in a synchronous client.
        if self._delivering and self._idle is not None:
            await self._idle.wait()
        if isinstance(result, CallToolResult):
            return (
                TaskHandle(self._task_link, None, modern=modern, result=result) if task else result
            )
        # A task: CreateTaskResult (2025-11-25) or resultType "task" (2026-07-28).
        if not task:
            connected = session.connected
            modern = connected is not None and connected.era is Era.MODERN
        handle = TaskHandle(self._task_link, result if modern else result.task, modern=modern)
        assert handle.task_id is not None
        handles = self._handles()
        if len(handles) >= self.config.limits.max_tasks:
            # Bounded: the oldest handle only stops being woken by notifications.
            del handles[next(iter(handles))]
        handles[handle.task_id] = handle
        if follow_progress and self._task_progress:
            for entry in self._task_progress.values():
                if entry.task_id == handle.task_id and entry.callback is None:
                    entry.attach(on_progress)
        if task:
            return handle
        return await handle.result()

    async def list_tasks(self, cursor: str | None = None) -> ListTasksResult:
        """The server's tasks (`tasks/list`; 2025-11-25 only, the extension has none)."""
        result: ListTasksResult = await self._request("tasks/list", _cursor(cursor))
        return result

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task known by id (one this client, or another, created).

        Its first `status()` or `result()` asks the server; on 2026-07-28 the
        Client must be made with `tasks=True`.
        """
        handles = self._handles()
        handle = handles.get(task_id)
        if handle is None:
            handle = TaskHandle(
                self._task_link, _Unknown(task_id), modern=self._modern(), known=False
            )
            handles[task_id] = handle
        return handle

    def _handles(self) -> dict[str, TaskHandle]:
        if self._task_handles is None:
            self._task_handles = {}
        return self._task_handles

    @property
    def _task_link(self) -> TaskLink:
        """What the task handles need of this Client (made on first use)."""
        if self._link is None:
            self._link = TaskLink(
                self._request,
                self._request_unbounded,
                self._answer_task_input,
                self._task_ended,
                self.task_poll_bounds,
                self.config.max_input_rounds,
            )
        return self._link

    async def _notify(self, method: str, params: Any) -> None:
        await self.session.notify(method, params)

    def _modern(self) -> bool:
        connected = self.connected
        return connected is not None and connected.era is Era.MODERN

    def _task_ended(self, handle: TaskHandle) -> None:
        handles = self._task_handles
        if handle.task_id is not None and handles and handles.get(handle.task_id) is handle:
            del handles[handle.task_id]
        if self._task_progress:
            for rid in [r for r, e in self._task_progress.items() if e.task_id == handle.task_id]:
                del self._task_progress[rid]

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        result: ListToolsResult = await self._request("tools/list", _cursor(cursor))
        return result

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        result: ListPromptsResult = await self._request("prompts/list", _cursor(cursor))
        return result

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        result: GetPromptResult = await self._request("prompts/get", params)
        return result

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        result: ListResourcesResult = await self._request("resources/list", _cursor(cursor))
        return result

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        result: ListResourceTemplatesResult = await self._request(
            "resources/templates/list", _cursor(cursor)
        )
        return result

    async def read_resource(self, uri: str) -> ReadResourceResult:
        result: ReadResourceResult = await self._request("resources/read", {"uri": uri})
        return result

    async def complete(
        self, ref: Any, argument: dict[str, str], context_arguments: dict[str, str] | None = None
    ) -> CompleteResult:
        params: dict[str, Any] = {"ref": to_wire(ref), "argument": argument}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        result: CompleteResult = await self._request("completion/complete", params)
        return result

    async def subscribe_resource(self, uri: str) -> None:
        await self._request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self._request("resources/unsubscribe", {"uri": uri})

    async def set_logging_level(self, level: str) -> None:
        await self._request("logging/setLevel", {"level": level})

    async def send_ping(self) -> None:
        await self._request("ping")

    async def send_roots_list_changed(self) -> None:
        await self.session.notify("notifications/roots/list_changed")

    @contextlib.asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: list[str] | None = None,
        task_ids: list[str] | None = None,
    ) -> AsyncIterator[anyio.abc.ObjectReceiveStream[NotificationReceived]]:
        """A 2026-07-28 `subscriptions/listen` stream of change notifications.

        Entering waits for the server's acknowledgement (consumed here, never
        passed on); leaving the block cancels the subscription. Several may be
        open at once: each stream gets only its own notifications.

        `task_ids` asks for `notifications/tasks` about those tasks (the tasks
        extension: the Client must have been made with `tasks=True`, or the
        server refuses with -32021). Besides the stream, each one also reaches
        the task's handle (it ends a `result()` wait at once) and
        `task_status_callback`, as on 2025-11-25.
        """
        filter_: dict[str, Any] = {}
        if tools:
            filter_["toolsListChanged"] = True
        if prompts:
            filter_["promptsListChanged"] = True
        if resources:
            filter_["resourcesListChanged"] = True
        if resource_uris:
            filter_["resourceSubscriptions"] = list(resource_uris)
        if task_ids:
            filter_["taskIds"] = list(task_ids)
        send, receive = anyio.create_memory_object_stream[NotificationReceived](64)
        listener = _Listener(send)
        if self._unbound_listeners is None:
            self._unbound_listeners = []
        self._unbound_listeners.append(listener)
        async with anyio.create_task_group() as group:

            async def run() -> None:
                try:
                    await self.session.request("subscriptions/listen", {"notifications": filter_})
                except Exception as exc:  # the server refused or the connection ended
                    listener.error = exc
                finally:
                    listener.acknowledged.set()
                    await send.aclose()

            group.start_soon(run)
            await listener.acknowledged.wait()
            if listener.error is not None:
                raise listener.error
            try:
                yield receive
            finally:
                group.cancel_scope.cancel()
                if listener.request_id is not None and self._listeners is not None:
                    self._listeners.pop(listener.request_id, None)

    # --------------------------------------------------------- the callbacks

    async def _on_request(self, session: Any, event: RequestReceived) -> Any:
        context = ClientRequestContext(
            self, event.request_id, event.context.meta, event.context.related_request_id
        )
        method = event.method
        hosted = self._hosted
        if hosted is not None:
            if method in _HOSTED_TASK_METHODS:
                return await hosted.handle(method, event.params)
            task = getattr(event.params, "task", None)
            if task is not None and method in ("elicitation/create", "sampling/createMessage"):
                # 2025-11-25: the server asks us to run this as a task it will poll.
                self._callback_for(method)  # no callback: refused now, not later
                return hosted.create(
                    method,
                    to_wire(task) or {},
                    lambda: self._answer(method, context, event.params),
                )
        return await self._answer(method, context, event.params)

    async def _answer_task_input(self, key: str, method: str, params: Any) -> Any:
        """A 2026-07-28 task's input request: `request_id` is its key in `inputRequests`."""
        meta = (to_wire(params) or {}).get("_meta") if params is not None else None
        return await self._answer(method, ClientRequestContext(self, key, meta), params)

    def _callback_for(self, method: str) -> Callable[..., Awaitable[Any]]:
        callback: Callable[..., Awaitable[Any]] | None = None
        if method == "elicitation/create":
            callback = self._elicitation_callback
        elif method == "sampling/createMessage":
            callback = self._sampling_callback
        elif method == "roots/list":
            callback = self._list_roots_callback
        if callback is None:
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return callback

    async def _answer(self, method: str, context: ClientRequestContext, params: Any) -> Any:
        """One of the server's questions, answered by the matching callback.

        The same for a legacy server's request, a 2026-07-28 input request
        (the engine's retry loop) and a 2026-07-28 task's `inputRequests`.
        """
        callback = self._callback_for(method)
        if method == "roots/list":
            answer = await callback(context)
        else:
            answer = await callback(context, params)
        if isinstance(answer, ErrorData):
            raise MCPError(answer.code, answer.message, answer.data)
        return answer

    def _on_notification(self, session: Any, event: NotificationReceived) -> None:
        if event.method in _TASK_NOTIFICATIONS:
            handles = self._task_handles
            handle = handles.get(getattr(event.params, "task_id", None) or "") if handles else None
            if handle is not None:
                handle.notified(event.params)
            if self._task_status_callback is not None:
                self._deliver(self._task_status_callback, event.params)
        if event.subscription_id is not None and self._listeners is not None:
            listener = self._listeners.get(event.subscription_id)
            if listener is not None:
                with contextlib.suppress(
                    anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError
                ):
                    listener.send.send_nowait(event)
            return
        if event.method == "notifications/message" and self._logging_callback is not None:
            self._deliver(self._logging_callback, event.params)
        if self._message_handler is not None:
            self._deliver(self._message_handler, _as_notification(event))

    def _deliver(self, callback: Callable[[Any], Awaitable[None]], argument: Any) -> None:
        """Queue a callback; one consumer runs them in arrival order, never concurrently."""
        if self._inbox is None:
            self._inbox = collections.deque()
        self._inbox.append((callback, argument))
        if not self._delivering:
            self._delivering = True
            self._idle = anyio.Event()
            self._spawn(self._consume())

    async def _consume(self) -> None:
        inbox = self._inbox
        assert inbox is not None
        try:
            while inbox:
                callback, argument = inbox.popleft()
                try:
                    await callback(argument)
                except Exception:
                    logger.exception("notification callback failed")
        finally:
            self._delivering = False
            if self._idle is not None:
                self._idle.set()

    def _observe_responses(self, observe: bool) -> None:
        """Whether the session calls `_on_event` for each `ResponseReceived`: only while
        `_progress_task_calls` (that is all `_on_event` does with one)."""
        if hasattr(type(self._session), "observe_responses"):
            self._session.observe_responses = observe

    def _on_event(self, event: Event) -> None:
        if type(event) is ResponseReceived and not self._progress_task_calls:
            return  # most events: an answer no task call waits to see first
        if isinstance(event, ProgressReceived):
            if self._task_progress:
                entry = self._task_progress.get(event.request_id)
                if entry is not None:
                    entry.deliver(event)
        elif (
            isinstance(event, ResponseReceived)
            and self._progress_task_calls
            and isinstance(event.result, CreateTaskResult)
            and len(self._task_progress or ()) < self.config.limits.max_tasks
        ):
            # Seen before call_tool resumes: progress arriving meanwhile is kept for it.
            if self._task_progress is None:
                self._task_progress = {}
            self._task_progress[event.request_id] = _TaskProgress(event.result.task.task_id)
        elif isinstance(event, SubscriptionAcknowledged) and self._unbound_listeners:
            listener = self._unbound_listeners.pop(0)
            listener.request_id = event.request_id
            if self._listeners is None:
                self._listeners = {}
            self._listeners[event.request_id] = listener
            listener.acknowledged.set()
        elif isinstance(event, ConnectionClosed) and self._message_handler is not None:
            # May run while connecting, before the session is stored.
            transport_error = getattr(self._session, "transport_error", None)
            if event.error is not None or transport_error is not None:
                exc: Exception = transport_error or TransportError(str(event.error))
                if self._session is not None:
                    self._deliver(self._message_handler, exc)

    def _spawn(self, awaitable: Awaitable[None]) -> None:
        spawner = getattr(self.session, "spawn", None)
        if spawner is not None:
            spawner(awaitable)
        else:  # pragma: no cover - every backend session has spawn()
            raise RuntimeError("session cannot run callbacks")


class _TaskProgress:
    """Where the progress of one 2025-11-25 task call goes after its CreateTaskResult."""

    __slots__ = ("callback", "early", "task_id")
    #: Progress kept between the CreateTaskResult and call_tool taking the handle.
    EARLY_BOUND = 64

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.callback: Callable[[Any], None] | None = None
        self.early: list[Any] = []

    def deliver(self, event: Any) -> None:
        if self.callback is not None:
            try:
                self.callback(event)
            except Exception:
                logger.exception("progress callback failed")
        elif len(self.early) < self.EARLY_BOUND:
            self.early.append(event)

    def attach(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback
        early, self.early = self.early, []
        for event in early:
            self.deliver(event)


class _Unknown:
    """The state of a task known only by id, before the first `tasks/get`."""

    __slots__ = ("task_id",)
    status = "working"
    status_message = None
    poll_interval = None
    poll_interval_ms = None

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id


class _Listener:
    __slots__ = ("acknowledged", "error", "request_id", "send")

    def __init__(self, send: Any) -> None:
        self.send = send
        self.acknowledged = anyio.Event()
        self.error: Exception | None = None
        self.request_id: int | str | None = None


def _cursor(cursor: str | None) -> dict[str, Any] | None:
    return {"cursor": cursor} if cursor is not None else None


def _as_notification(event: NotificationReceived) -> Any:
    from pydantic import TypeAdapter

    wire: dict[str, Any] = {"method": event.method}
    params = to_wire(event.params)
    if params:
        wire["params"] = params
    try:
        return TypeAdapter(ServerNotification).validate_python(wire)
    except Exception:
        return event


_URL_SCHEMES = ("http://", "https://", "ws://", "wss://", "tcp://")


def _connect_url(
    backend: Any, url: str, config: ClientConfig, options: dict[str, Any]
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The connection for a URL, by scheme: one per transport the command line serves."""
    scheme = url.partition("://")[0].lower()
    if scheme in ("http", "https"):
        from mcp_adapters.http import connect_http

        return connect_http(url, config, **options)
    if scheme in ("ws", "wss"):
        from mcp_adapters.transports.websocket import connect_websocket

        return connect_websocket(url, config, **options)
    if scheme == "tcp":
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ValueError(f"a TCP target is tcp://host:port, not {url!r}")
        return backend.connect_tcp(parts.hostname, port, config, **options)  # type: ignore[no-any-return]
    raise ValueError(
        f"cannot connect to {url!r}: a URL starts with one of {', '.join(_URL_SCHEMES)}"
    )


class _InProcess:
    """Client and server in one process: two sessions joined by a direct link.

    A class, not an `asynccontextmanager`: each idle in-process client kept that
    generator, its frame and its wrapper (about 450 bytes). Entered and left in
    the order of the `async with` it replaces: the server's `running()`, then
    (made only once that is entered, so they see what its lifespan registered)
    the server's session and the client's; left the other way round, each told
    the exception the one left before it raised.
    """

    __slots__ = ("_client", "_making", "_server_session", "_serving")

    def __init__(
        self, backend: Any, server: Any, config: ClientConfig, options: dict[str, Any]
    ) -> None:
        # What the sessions are made of, until they are made (then dropped).
        self._making: tuple[Any, Any, ClientConfig, dict[str, Any]] | None = (
            backend,
            server,
            config,
            options,
        )
        # The server's lifespan, as when it is served any other way.
        self._serving: contextlib.AbstractAsyncContextManager[Any] = server.running()
        self._server_session: Any = None
        self._client: Any = None

    async def __aenter__(self) -> Any:
        from mcp_adapters.server._serve import request_handler
        from mcp_adapters.transports.link import link_pair

        assert self._making is not None, "entered twice"
        backend, server, config, options = self._making
        self._making = None
        await self._serving.__aenter__()
        try:
            client_stream, server_stream = link_pair()
            # The server end runs first: the client's handshake reaches it synchronously.
            self._server_session = backend.Session(
                server.new_connection(), server_stream, on_request=request_handler(server)
            )
            await self._server_session.__aenter__()
            try:
                self._client = backend.Session(ClientConnection(config), client_stream, **options)
                return await self._client.__aenter__()
            except BaseException as exc:
                await self._server_session.__aexit__(type(exc), exc, exc.__traceback__)
                raise
        except BaseException as exc:
            await self._serving.__aexit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self._client.__aexit__(*exc_info)
        except BaseException as exc:
            exc_info = (type(exc), exc, exc.__traceback__)
            raise
        finally:
            try:
                await self._server_session.__aexit__(*exc_info)
            except BaseException as exc:
                exc_info = (type(exc), exc, exc.__traceback__)
                raise
            finally:
                await self._serving.__aexit__(*exc_info)


__all__ = [
    "Client",
    "ClientCapabilities",
    "ClientRequestContext",
    "IncomingMessage",
    "TaskCancelledError",
    "TaskHandle",
]
