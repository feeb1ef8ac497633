"""MCP wire models (pydantic v2), one superset for revisions 2024-11-05 .. 2026-07-28.

Why a superset: the engine speaks every revision through one set of classes and
decides per revision what may go on the wire; a field that only exists in a later
revision is simply optional here. Where 2026-07-28 reshaped something, both shapes
are accepted (for example `ElicitRequestURLParams.elicitation_id`).

Conventions the engine relies on:

* snake_case attributes, camelCase wire names (`alias_generator=to_camel`), and
  construction by either name (`populate_by_name`);
* `_meta` is the `meta` attribute, unknown fields are kept (`extra="allow"`) so a
  message can be relayed or echoed without loss;
* serialise with ``model.model_dump(by_alias=True, exclude_none=True, mode="json")``,
  which is why every optional field defaults to ``None``;
* URLs stay plain ``str``: pydantic URL types normalise, and the protocol needs the
  exact bytes back (``requestState`` echoes, header mirroring, resource keys);
* every model defers its schema build, so importing this module stays cheap.

Public class names follow the official Python SDK (``mcp.types``) so user code ports
by changing imports only.

What each revision added or removed, as far as these models are concerned (the
schemas under tests/spec/<revision>/ are the reference; docstrings say which
revisions a model or field belongs to):

* 2024-11-05: the `initialize` handshake; tools, prompts, resources (with
  subscriptions), sampling, roots, logging, completion, progress, cancellation.
* 2025-03-26: audio content, tool annotations, the `completions` capability,
  progress messages, JSON-RPC batches (this revision only), Streamable HTTP.
* 2025-06-18: form-mode elicitation, `structuredContent` and `outputSchema`,
  resource links, `title` beside `name`, `_meta` on content and more objects,
  completion context; batches removed again.
* 2025-11-25: tasks, URL-mode elicitation (and error -32042), tools in sampling,
  icons, titled and multi-select enums and defaults in forms.
* 2026-07-28: no session. `initialize`, `ping`, `logging/setLevel` and
  `resources/subscribe` are gone; every request carries its own `_meta`
  envelope, `server/discover` replaces the handshake's answer, results say their
  `resultType`, lists and reads carry caching hints, `InputRequiredResult` asks
  for input inside a result, `subscriptions/listen` carries notifications, and
  tasks moved to an extension.
"""

from typing import Annotated, Any, Final, Literal, Self, TypeAlias

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Strict,
    Tag,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

__all__ = [
    # Reserved `_meta` keys
    "PROTOCOL_VERSION_META_KEY",
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "RELATED_TASK_META_KEY",
    # Scalars and aliases
    "RequestId",
    "ProgressToken",
    "Cursor",
    "Role",
    "LoggingLevel",
    "IconTheme",
    "ResultType",
    "IncludeContext",
    "StopReason",
    "TaskStatus",
    "CacheScope",
    # Bases
    "MCPModel",
    "BaseMetadata",
    "RequestParams",
    "PaginatedRequestParams",
    "TaskAugmentedRequestParams",
    "InputResponseRequestParams",
    "ResourceRequestParams",
    "NotificationParams",
    "Request",
    "PaginatedRequest",
    "Notification",
    "Result",
    "EmptyResult",
    "PaginatedResult",
    "CacheableResult",
    "ErrorData",
    # Identity and capabilities
    "Icon",
    "Implementation",
    "RootsCapability",
    "SamplingContextCapability",
    "SamplingToolsCapability",
    "SamplingCapability",
    "FormElicitationCapability",
    "UrlElicitationCapability",
    "ElicitationCapability",
    "TasksListCapability",
    "TasksCancelCapability",
    "TasksCreateMessageCapability",
    "TasksSamplingCapability",
    "TasksCreateElicitationCapability",
    "TasksElicitationCapability",
    "ClientTasksRequestsCapability",
    "ClientTasksCapability",
    "ClientCapabilities",
    "PromptsCapability",
    "ResourcesCapability",
    "ToolsCapability",
    "LoggingCapability",
    "CompletionsCapability",
    "TasksCallCapability",
    "TasksToolsCapability",
    "ServerTasksRequestsCapability",
    "ServerTasksCapability",
    "ServerCapabilities",
    # Lifecycle
    "InitializeRequestParams",
    "InitializeRequest",
    "InitializeResult",
    "InitializedNotification",
    "PingRequest",
    "DiscoverRequest",
    "DiscoverResult",
    # Error data
    "UnsupportedProtocolVersionErrorData",
    "MissingRequiredClientCapabilityErrorData",
    "ElicitationRequiredErrorData",
    # Content
    "Annotations",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceContents",
    "TextResourceContents",
    "BlobResourceContents",
    "EmbeddedResource",
    "Resource",
    "ResourceLink",
    "ToolUseContent",
    "ToolResultContent",
    "ContentBlock",
    "SamplingContent",
    "SamplingMessageContentBlock",
    # Resources
    "ResourceTemplate",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ReadResourceRequestParams",
    "ReadResourceRequest",
    "ReadResourceResult",
    "SubscribeRequestParams",
    "SubscribeRequest",
    "UnsubscribeRequestParams",
    "UnsubscribeRequest",
    "ResourceUpdatedNotificationParams",
    "ResourceUpdatedNotification",
    "ResourceListChangedNotification",
    # Subscriptions (2026-07-28)
    "SubscriptionFilter",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenResult",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsAcknowledgedNotification",
    # Prompts
    "PromptArgument",
    "Prompt",
    "PromptMessage",
    "ListPromptsRequest",
    "ListPromptsResult",
    "GetPromptRequestParams",
    "GetPromptRequest",
    "GetPromptResult",
    "PromptListChangedNotification",
    # Tools
    "ToolAnnotations",
    "ToolExecution",
    "Tool",
    "ListToolsRequest",
    "ListToolsResult",
    "CallToolRequestParams",
    "CallToolRequest",
    "CallToolResult",
    "ToolListChangedNotification",
    # Completion
    "PromptReference",
    "ResourceTemplateReference",
    "CompletionArgument",
    "CompletionContext",
    "CompleteRequestParams",
    "CompleteRequest",
    "Completion",
    "CompleteResult",
    # Logging
    "SetLevelRequestParams",
    "SetLevelRequest",
    "LoggingMessageNotificationParams",
    "LoggingMessageNotification",
    # Progress and cancellation
    "ProgressNotificationParams",
    "ProgressNotification",
    "CancelledNotificationParams",
    "CancelledNotification",
    # Sampling
    "ModelHint",
    "ModelPreferences",
    "ToolChoice",
    "SamplingMessage",
    "CreateMessageRequestParams",
    "CreateMessageRequest",
    "CreateMessageResult",
    "CreateMessageResultWithTools",
    # Roots
    "Root",
    "ListRootsRequest",
    "ListRootsResult",
    "RootsListChangedNotification",
    # Elicitation
    "StringSchema",
    "NumberSchema",
    "BooleanSchema",
    "EnumOption",
    "UntitledSingleSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumItems",
    "UntitledMultiSelectEnumSchema",
    "TitledMultiSelectEnumItems",
    "TitledMultiSelectEnumSchema",
    "LegacyTitledEnumSchema",
    "SingleSelectEnumSchema",
    "MultiSelectEnumSchema",
    "EnumSchema",
    "PrimitiveSchemaDefinition",
    "RequestedSchema",
    "ElicitRequestedSchema",
    "ElicitRequestFormParams",
    "ElicitRequestURLParams",
    "ElicitRequestParams",
    "ElicitRequest",
    "ElicitResult",
    "ElicitCompleteNotificationParams",
    "ElicitationCompleteNotificationParams",
    "ElicitCompleteNotification",
    "ElicitationCompleteNotification",
    # Multi round-trip requests (2026-07-28)
    "InputRequest",
    "InputRequests",
    "InputResponse",
    "InputResponses",
    "InputRequiredResult",
    # Tasks (2025-11-25)
    "TaskMetadata",
    "RelatedTaskMetadata",
    "Task",
    "CreateTaskResult",
    "GetTaskRequestParams",
    "GetTaskRequest",
    "GetTaskResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "CancelTaskRequestParams",
    "CancelTaskRequest",
    "CancelTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "TaskStatusNotificationParams",
    "TaskStatusNotification",
    # Message unions
    "ClientRequest",
    "ServerRequest",
    "ClientNotification",
    "ServerNotification",
    "ClientResult",
    "ServerResult",
]

# ---------------------------------------------------------------------------
# Reserved `_meta` keys (2026-07-28 envelope, plus the 2025-11-25 task link).
# ---------------------------------------------------------------------------

# The `io.modelcontextprotocol/` prefix is reserved for the spec (basic, `_meta`), so
# these keys cannot collide with an application's. The first three (and the log
# level) ride in every 2026-07-28 request in place of `initialize`; a request
# without the version key is legacy to `classify_era`.
PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_META_KEY: Final = "io.modelcontextprotocol/logLevel"
# In every 2026-07-28 result, since no handshake carries `serverInfo` any more.
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
# On each message of a listen stream, to tell subscriptions apart on one channel.
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"
# 2025-11-25 only: ties a message to the task it belongs to (`RelatedTaskMetadata`).
RELATED_TASK_META_KEY: Final = "io.modelcontextprotocol/related-task"

# ---------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------

RequestId: TypeAlias = str | int
"""A JSON-RPC id. Plain alias so ``isinstance(x, RequestId)`` works."""

# Chosen by the requestor and unique among its requests in flight; the receiver only
# echoes it, so it keeps the id's two JSON types.
ProgressToken: TypeAlias = str | int
# Opaque to the client (utilities/pagination): sent back exactly as received.
Cursor: TypeAlias = str
Role: TypeAlias = Literal["user", "assistant"]
# The eight syslog severities of RFC 5424, lowest first; a level set admits itself
# and everything above it.
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
IconTheme: TypeAlias = Literal["light", "dark"]
ResultType: TypeAlias = Literal["complete", "input_required"] | str
"""Open set: extensions may add tags (the tasks extension adds ``"task"``)."""
# Values other than "none" need the client's `sampling.context` (2025-11-25+).
IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
# Open: a client may report a provider's own reason, which must not fail the result.
StopReason: TypeAlias = Literal["endTurn", "stopSequence", "maxTokens", "toolUse"] | str
TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
# As HTTP's Cache-Control public/private: a "private" answer must not be served to
# another authorization context (another access token).
CacheScope: TypeAlias = Literal["public", "private"]

# Fields holding ids reject bools and floats, which lax int coercion would accept
# and then echo back as a different id.
_WireId: TypeAlias = Annotated[str, Strict()] | Annotated[int, Strict()]

_Meta: TypeAlias = dict[str, Any]

# ---------------------------------------------------------------------------
# Bases
# ---------------------------------------------------------------------------


class MCPModel(BaseModel):
    """Base of every wire model; the config is the contract described in the module doc.

    `extra="allow"` is what lets a relay or a 2026-07-28 echo (`requestState`, a
    retried request's params) carry fields this library does not know without losing
    them; it also means a typo in a field name is kept as an extra, not refused.
    """

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        defer_build=True,
        allow_inf_nan=False,  # JSON has no Infinity/NaN; 1e999 parses to inf, refuse it here
    )


class BaseMetadata(MCPModel):
    """Shared `name` / `title` pair: `name` is for programs, `title` for people.

    `title` arrived in 2025-06-18; before it `name` was also the display name, which is
    why a client showing a list should fall back to `name` when `title` is None.
    """

    name: str
    title: str | None = None


class RequestParams(MCPModel):
    """Params of any request; `_meta` carries the 2026-07-28 per-request envelope.

    In 2026-07-28 `_meta` is required on every request (protocol version, client
    capabilities and info ride in it, since there is no `initialize`); in the legacy
    revisions it is optional (a `progressToken`, application keys). The model leaves it
    optional for both: the era is read from it by `classify_era`, not by validation.
    """

    meta: _Meta | None = Field(default=None, alias="_meta")


class PaginatedRequestParams(RequestParams):
    """Params of a `*/list` request: `cursor` is the `nextCursor` of the previous page.

    The cursor is opaque to the client (spec, utilities/pagination) and is sent back
    unchanged, which is why it stays a plain str; None asks for the first page.
    """

    cursor: Cursor | None = None


class TaskMetadata(MCPModel):
    """The `task` param asking for task-augmented execution (2025-11-25 only).

    `ttl` is how long, in milliseconds, the requestor wants the result kept after
    creation; the receiver may keep it shorter and says so in the `Task` it returns.
    """

    ttl: int | None = None


class TaskAugmentedRequestParams(RequestParams):
    """Params of a request that may be run as a task (2025-11-25 only).

    With `task` set, the receiver answers at once with a `CreateTaskResult` and the
    real result is fetched later with `tasks/result`; without it the request runs in
    the ordinary way.
    """

    task: TaskMetadata | None = None


class InputResponseRequestParams(RequestParams):
    """Retry fields of a multi-round-trip request (2026-07-28): answers plus echoed state.

    Both absent means a first attempt. Keys of `input_responses` are those of the
    `inputRequests` being answered; a server should ignore keys it did not ask and
    ask again, rather than fail, when one is missing.
    """

    input_responses: "InputResponses | None" = None
    request_state: str | None = None


class ResourceRequestParams(RequestParams):
    """Params naming one resource by `uri` (subscribe and unsubscribe share this shape).

    The URI is compared as the server wrote it, not normalised: a client that
    subscribes must send the exact string `resources/list` gave it.
    """

    uri: str


class NotificationParams(MCPModel):
    """Params of any notification: only `_meta` is common to all of them.

    A notification carries no version envelope in 2026-07-28; one sent for a listen
    stream names its subscription in `_meta` (`io.modelcontextprotocol/subscriptionId`),
    which is how a stdio client, whose subscriptions share one channel, tells them apart.
    """

    meta: _Meta | None = Field(default=None, alias="_meta")


class Request(MCPModel):
    """A request body without the JSON-RPC envelope (`jsonrpc`, `id` belong to the codec)."""

    method: str
    params: Any = None


class PaginatedRequest(Request):
    """A `*/list` request; `params` may be absent altogether, which means the first page."""

    params: PaginatedRequestParams | None = None


class Notification(MCPModel):
    """A notification body without the JSON-RPC envelope."""

    method: str
    params: Any = None


class Result(MCPModel):
    """Any result. `result_type` stays None unless set, so legacy dumps carry no `resultType`.

    A 2026-07-28 reader treats a missing `resultType` as ``"complete"``; writers for
    that revision set it explicitly.
    """

    meta: _Meta | None = Field(default=None, alias="_meta")
    # None: not written. 2026-07-28 results must carry it; a legacy result has no such field,
    # and a reader of either treats its absence as complete.
    result_type: ResultType | None = None


class EmptyResult(Result):
    """Success with no payload (ping, subscribe, setLevel, ...)."""


class PaginatedResult(Result):
    """A page of a list: `next_cursor` None means this was the last page.

    A client must not assume a page size: only a missing `nextCursor` ends the
    listing (utilities/pagination).
    """

    next_cursor: Cursor | None = None


class CacheableResult(Result):
    """Caching hints (2026-07-28), required on that wire, absent before it.

    Negative `ttl_ms` is accepted rather than rejected: the spec tells clients to
    read it as 0, so refusing the whole result would be harsher than the spec.
    """

    # Milliseconds the client may treat the result as fresh (HTTP max-age semantics); 0 means
    # stale at once, so the client may fetch it again every time.
    ttl_ms: int | None = None
    # public: any cache may share it across access tokens; private: reused only under the same
    # authorization context.
    cache_scope: CacheScope | None = None


class ErrorData(MCPModel):
    """The `error` member of a JSON-RPC error response.

    JSON-RPC 2.0 section 5.1: `code` an integer, `message` a short sentence, `data`
    anything the sender defines (MCP puts structured details there: the supported
    versions of -32022, the capabilities of -32021). `data` None means the member was
    absent; the codec writes it only when set.
    """

    code: int
    message: str
    # Sender-defined details; None means the member was absent.
    data: Any = None


# ---------------------------------------------------------------------------
# Identity and capabilities
# ---------------------------------------------------------------------------


class Icon(MCPModel):
    """An image a client may show next to a server, tool, prompt or resource (2025-11-25+).

    `src` is an HTTP(S) or `data:` URI; consumers should check that it comes from the
    server's own domain or a trusted one, since an icon URL is attacker-chosen text
    (a tracking pixel, an internal address), and an SVG may hold script. `sizes`
    holds ``"WxH"`` strings or ``"any"``; None means the icon may be used at any size.
    """

    src: str
    # An override for when the source's own type is missing or generic.
    mime_type: str | None = None
    sizes: list[str] | None = None
    # The UI theme the icon is drawn for; None means it suits either.
    theme: IconTheme | None = None


class Implementation(BaseMetadata):
    """`clientInfo` / `serverInfo`; self-reported, so for display and logs only.

    `name` and `version` are required in every revision; `description`, `websiteUrl`
    and `icons` are 2025-11-25+. In 2026-07-28 `clientInfo` rides in each request's
    `_meta` and `serverInfo` in each result's, instead of once in `initialize`.
    """

    version: str
    description: str | None = None
    # 2025-11-25+: where people can learn about the implementation; display only, like the
    # rest.
    website_url: str | None = None
    icons: list[Icon] | None = None


class RootsCapability(MCPModel):
    """`list_changed` exists only up to 2025-11-25; 2026-07-28 sends ``{}``."""

    list_changed: bool | None = None


class SamplingContextCapability(MCPModel):
    """Permits `includeContext` values other than ``"none"``."""


class SamplingToolsCapability(MCPModel):
    """Permits `tools` / `toolChoice` in `sampling/createMessage`."""


class SamplingCapability(MCPModel):
    """`sampling` in `ClientCapabilities`: present (even empty) means the client samples.

    The sub-capabilities are 2025-11-25+: without `context`, a server should send only
    `includeContext: "none"`; without `tools`, it must not send `tools` or
    `toolChoice`. An empty object is therefore the 2024-11-05 capability unchanged.
    """

    context: SamplingContextCapability | None = None
    tools: SamplingToolsCapability | None = None


class FormElicitationCapability(MCPModel):
    """`elicitation.form`: the client renders flat, primitive-field forms (2025-11-25+)."""


class UrlElicitationCapability(MCPModel):
    """`elicitation.url`: the client can send the user to a server's URL (2025-11-25+).

    Absent means a server must not ask in URL mode; and since only URL mode may ask
    for secrets, such a server has to do without them or fail the request.
    """


class ElicitationCapability(MCPModel):
    """An empty object means form mode only (2025-11-25 rule)."""

    form: FormElicitationCapability | None = None
    url: UrlElicitationCapability | None = None


class TasksListCapability(MCPModel):
    """`tasks.list` (2025-11-25 only): the peer answers `tasks/list`."""


class TasksCancelCapability(MCPModel):
    """`tasks.cancel` (2025-11-25 only): the peer answers `tasks/cancel`."""


class TasksCreateMessageCapability(MCPModel):
    """`tasks.requests.sampling.createMessage`: sampling may be run as a task."""


class TasksSamplingCapability(MCPModel):
    """`tasks.requests.sampling` (2025-11-25 only): which sampling requests run as tasks."""

    create_message: TasksCreateMessageCapability | None = None


class TasksCreateElicitationCapability(MCPModel):
    """`tasks.requests.elicitation.create`: elicitation may be run as a task."""


class TasksElicitationCapability(MCPModel):
    """`tasks.requests.elicitation` (2025-11-25 only): which elicitations run as tasks."""

    create: TasksCreateElicitationCapability | None = None


class ClientTasksRequestsCapability(MCPModel):
    """`tasks.requests` of a client: the server-to-client requests it can run as tasks.

    A request kind missing here must not be sent with a `task` param: only the
    kinds a receiver declared may be task-augmented (2025-11-25, tasks).
    """

    sampling: TasksSamplingCapability | None = None
    elicitation: TasksElicitationCapability | None = None


class ClientTasksCapability(MCPModel):
    """Client side of 2025-11-25 tasks."""

    list: TasksListCapability | None = None
    cancel: TasksCancelCapability | None = None
    requests: ClientTasksRequestsCapability | None = None


class ClientCapabilities(MCPModel):
    """Sent once in `initialize` (legacy) or on every request's `_meta` (2026-07-28).

    A member present, even as ``{}``, declares the feature; None means the client
    cannot do it, and a server must not send the matching request (in 2026-07-28 nor
    put it in `inputRequests`): the engine refuses to, with `LocalProtocolError`.
    `elicitation` is 2025-06-18+, `tasks` 2025-11-25 only, `extensions` 2026-07-28
    (keyed by extension id, such as the tasks extension). Per request in 2026-07-28
    means a client may declare different capabilities on different calls, and the
    server judges each call by its own.
    """

    # Non-standard features by name, each with a settings object: a peer that does not know a
    # name ignores it, which is what makes the set open.
    experimental: dict[str, dict[str, Any]] | None = None
    # Present: the client answers roots/list (and, legacy, may send roots/list_changed).
    roots: RootsCapability | None = None
    # Present: the client answers sampling/createMessage with its own model.
    sampling: SamplingCapability | None = None
    # 2025-06-18+. Present: the client can ask its user; see ElicitationCapability for modes.
    elicitation: ElicitationCapability | None = None
    # 2025-11-25 only; the 2026-07-28 tasks extension is declared under extensions instead.
    tasks: ClientTasksCapability | None = None
    # 2026-07-28: extension ids (with the spec's reserved-prefix rules) to settings objects;
    # an empty object declares support with no settings.
    extensions: dict[str, dict[str, Any]] | None = None


class PromptsCapability(MCPModel):
    """`prompts` in `ServerCapabilities`: the server answers `prompts/list` and `prompts/get`.

    `list_changed` promises `notifications/prompts/list_changed`; without it a client
    has no reason to re-list (nor, in 2026-07-28, to ask for it in a listen filter).
    """

    list_changed: bool | None = None


class ResourcesCapability(MCPModel):
    """`resources`: the server lists (`resources/list`, `.../templates/list`) and reads resources.

    `subscribe` promises `resources/subscribe` (legacy) or per-URI subscriptions on a
    `subscriptions/listen` stream (2026-07-28); `list_changed` promises
    `notifications/resources/list_changed`.
    """

    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(MCPModel):
    """`tools`: the server answers `tools/list` and `tools/call`; `list_changed` as for prompts."""

    list_changed: bool | None = None


class LoggingCapability(MCPModel):
    """`logging`: the server sends `notifications/message`.

    Legacy clients then set the level with `logging/setLevel`; 2026-07-28 clients put
    it in each request's `_meta` (`io.modelcontextprotocol/logLevel`) instead, and a
    server logs for that request only.
    """


class CompletionsCapability(MCPModel):
    """`completions` (2025-03-26+): the server answers `completion/complete`.

    2024-11-05 had no capability for it; a server of that revision answered or
    refused the method without announcing it.
    """


class TasksCallCapability(MCPModel):
    """`tasks.requests.tools.call` (2025-11-25 only): tools may run as tasks."""


class TasksToolsCapability(MCPModel):
    """`tasks.requests.tools` (2025-11-25 only)."""

    call: TasksCallCapability | None = None


class ServerTasksRequestsCapability(MCPModel):
    """`tasks.requests` of a server: the client-to-server requests it can run as tasks."""

    tools: TasksToolsCapability | None = None


class ServerTasksCapability(MCPModel):
    """Server side of 2025-11-25 tasks."""

    list: TasksListCapability | None = None
    cancel: TasksCancelCapability | None = None
    requests: ServerTasksRequestsCapability | None = None


class ServerCapabilities(MCPModel):
    """What a server offers: in `InitializeResult` (legacy) or `DiscoverResult` (2026-07-28).

    A member present, even as ``{}``, declares the feature; None means a client should
    not call its methods (the server answers -32601 if it does). `completions` is
    2025-03-26+, `tasks` 2025-11-25 only, `extensions` 2026-07-28. In 2026-07-28 the
    client learns these from `server/discover`, may cache them (`DiscoverResult` is
    cacheable), and a server may not assume the client ever asked.
    """

    experimental: dict[str, dict[str, Any]] | None = None
    # Present: the server may send notifications/message, and legacy clients may call
    # logging/setLevel.
    logging: LoggingCapability | None = None
    completions: CompletionsCapability | None = None
    # Present: prompts/list and prompts/get are answered.
    prompts: PromptsCapability | None = None
    # Present: resources/list, resources/templates/list and resources/read are answered.
    resources: ResourcesCapability | None = None
    # Present: tools/list and tools/call are answered.
    tools: ToolsCapability | None = None
    # 2025-11-25 only, as on the client side.
    tasks: ServerTasksCapability | None = None
    # 2026-07-28, as on the client side; the tasks extension is offered here.
    extensions: dict[str, dict[str, Any]] | None = None


# ---------------------------------------------------------------------------
# Lifecycle
# ---------------------------------------------------------------------------


class InitializeRequestParams(RequestParams):
    """The legacy handshake's params: the newest revision the client speaks, and what it is.

    The server answers with that revision if it supports it, else with another it
    does (lifecycle, version negotiation); a client that does not speak the answer
    should disconnect. 2026-07-28 has no `initialize`: the same three items travel in
    every request's `_meta`.
    """

    # The newest revision the client speaks, not a list: the server answers with one revision,
    # which may be another one it supports.
    protocol_version: str
    # Fixed for the whole session: a second initialize may not change them.
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeRequest(Request):
    """`initialize`, the first request of a legacy session (2024-11-05 .. 2025-11-25).

    It must not be part of a JSON-RPC batch (2025-03-26) and must not be cancelled;
    a second one on a ready session is refused with -32600 and leaves the negotiated
    parameters untouched (a second one used to overwrite them in several SDKs, see
    python-sdk#2605).
    """

    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams


class InitializeResult(Result):
    """The server's half of the legacy handshake: the revision it chose and what it offers.

    `protocol_version` may differ from the one the client asked for; the session runs
    at this one. `instructions` is guidance a client may give its model, so like
    `serverInfo` it is the server's word, not a trusted fact.
    """

    # The revision the session runs at; the client disconnects if it does not speak it.
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    # Guidance about using the server that a client may give its model (as a system-prompt
    # hint); the server's word, like serverInfo.
    instructions: str | None = None


class InitializedNotification(Notification):
    """`notifications/initialized`: the client has accepted the server's answer.

    Until it arrives a server should send nothing but pings and logging (lifecycle,
    initialization); the legacy session becomes ready on the `initialize` answer, not
    on this notification, so a client that forgets it is not stranded.
    """

    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


class PingRequest(Request):
    """`ping` (legacy revisions): either side checks the other is alive; the answer is empty.

    A ping is allowed before initialization completes, and the receiver must answer
    promptly; the 2026-07-28 schema has no `ping` at all.
    """

    method: Literal["ping"] = "ping"
    params: RequestParams | None = None


class DiscoverRequest(Request):
    """`server/discover` (2026-07-28): what `initialize` told a legacy client, as a plain request.

    It changes no state: a client may send it any time, or never (a client that
    already knows the server, or pins a revision, skips it). `params` is required on
    that wire because it holds the `_meta` envelope every 2026-07-28 request carries.
    """

    method: Literal["server/discover"] = "server/discover"
    params: RequestParams | None = None


class DiscoverResult(CacheableResult):
    """`server/discover` answer (2026-07-28); `serverInfo` travels in `_meta`.

    `supported_versions` lists every revision the server speaks, so a client of an
    older one can fall back; being a `CacheableResult`, it also says how long the
    client may keep the answer before asking again.
    """

    # Every revision the server accepts; the client picks one of these for its later requests.
    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


class UnsupportedProtocolVersionErrorData(MCPModel):
    """`data` of error -32022 (2026-07-28), also the shape of the legacy -32602 example."""

    # What the server speaks, so the client can retry with one of them instead of guessing.
    supported: list[str]
    requested: str


class MissingRequiredClientCapabilityErrorData(MCPModel):
    """`data` of error -32021 (2026-07-28)."""

    # The capabilities the request needed, in ClientCapabilities shape, so a client can tell
    # its user exactly what to enable.
    required_capabilities: ClientCapabilities


# ---------------------------------------------------------------------------
# Content
# ---------------------------------------------------------------------------


class Annotations(MCPModel):
    """Hints on content or a resource for the client: who it is for, how much it matters.

    `audience` None means none was stated; `priority` is 0 (optional) to 1
    (effectively required) and is range
    checked here because an out-of-range value has no meaning to fall back on.
    `last_modified` (2025-06-18+) is an ISO 8601 string, kept as text rather than
    parsed so it is echoed as sent. In 2024-11-05 the same `audience` and `priority`
    sat in an inline `annotations` object (the schema's `Annotated` base).
    """

    audience: list[Role] | None = None
    # 0 (entirely optional) to 1 (effectively required) for deciding what to keep in a model's
    # context.
    priority: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    last_modified: str | None = None


class TextContent(MCPModel):
    """A block of text in a tool result, prompt message or sampling message.

    `_meta` on content is 2025-06-18+; older peers neither send nor read it.
    """

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ImageContent(MCPModel):
    """An image, base64 in `data`, with its MIME type (required: no sniffing is implied).

    `data` stays the base64 text: decoding it would cost time and memory on messages
    that are most often only relayed.
    """

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class AudioContent(MCPModel):
    """Audio, base64 in `data` (2025-03-26+; a 2024-11-05 peer will not understand it)."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ResourceContents(MCPModel):
    """The contents of one resource as `resources/read` returns it: its URI and MIME type.

    A read may return several contents (a directory's files, say), each with its own
    `uri`; `mime_type` None means unknown, not text.
    """

    # The URI these contents are of: for a read of a collection (a directory, say) each item
    # names its own, so it may differ from the URI read.
    uri: str
    mime_type: str | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class TextResourceContents(ResourceContents):
    """Contents that are text (`text`); which of text and blob is present tells the two apart."""

    text: str


class BlobResourceContents(ResourceContents):
    """Binary contents, base64 in `blob`, kept as text as `ImageContent.data` is."""

    blob: str


def _resource_contents_tag(value: Any) -> str | None:
    """Pick text vs blob by the field present; with extra="allow" a smart union could not."""
    if isinstance(value, BaseModel):
        return "blob" if isinstance(value, BlobResourceContents) else "text"
    if isinstance(value, dict):
        return "blob" if "blob" in value else "text"
    return None


_AnyResourceContents: TypeAlias = Annotated[
    Annotated[TextResourceContents, Tag("text")] | Annotated[BlobResourceContents, Tag("blob")],
    Discriminator(_resource_contents_tag),
]


class EmbeddedResource(MCPModel):
    """A resource's contents inside a tool result or prompt message (type ``"resource"``).

    Unlike a `ResourceLink`, the contents travel inline, so the client needs neither a
    `resources` capability nor a second request to use them.
    """

    type: Literal["resource"] = "resource"
    resource: _AnyResourceContents
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class Resource(BaseMetadata):
    """A resource the server can read, as `resources/list` lists it.

    `size` is the raw byte count before base64, if known, so a host can judge the
    context it would cost before reading; `icons` is 2025-11-25+, `_meta` 2025-06-18+.
    """

    uri: str
    description: str | None = None
    # None means unknown; a client should not assume text.
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ResourceLink(Resource):
    """A resource reference inside content; not promised to appear in `resources/list`."""

    type: Literal["resource_link"] = "resource_link"


ContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
"""Content of tool results and prompt messages, told apart by `type`."""


class ToolUseContent(MCPModel):
    """A model's tool call inside sampling (2025-11-25+)."""

    type: Literal["tool_use"] = "tool_use"
    # Chosen by the model's provider; the ToolResultContent that answers it repeats it in
    # tool_use_id.
    id: str
    name: str
    # The tool's arguments, an object as tools/call arguments are.
    input: dict[str, Any]
    meta: _Meta | None = Field(default=None, alias="_meta")


class ToolResultContent(MCPModel):
    """The answer to a `ToolUseContent`, sent back in the next sampling message (2025-11-25+)."""

    type: Literal["tool_result"] = "tool_result"
    # Must match the id of a ToolUseContent earlier in the conversation; that is how the model
    # pairs calls with results.
    tool_use_id: str
    content: list[ContentBlock] = Field(default_factory=list)
    # Any JSON value; when the tool has an outputSchema it should conform to it.
    structured_content: Any = None
    is_error: bool | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


SamplingMessageContentBlock: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
    Field(discriminator="type"),
]
SamplingContent: TypeAlias = Annotated[
    TextContent | ImageContent | AudioContent, Field(discriminator="type")
]
"""Sampling content before tools existed; kept for ported type hints."""

# ---------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------


class ResourceTemplate(BaseMetadata):
    """A parameterised family of resources: `uri_template` is an RFC 6570 URI template.

    Templates are for discovery and completion (`completion/complete` with a
    `ref/resource`); a client fills one in and reads the result with `resources/read`.
    """

    uri_template: str
    description: str | None = None
    mime_type: str | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListResourcesRequest(PaginatedRequest):
    """`resources/list`: one page of the server's concrete resources."""

    method: Literal["resources/list"] = "resources/list"


class ListResourcesResult(PaginatedResult, CacheableResult):
    """A page of resources; cacheable in 2026-07-28 (`ttl_ms`, `cache_scope`).

    `resources/list` need not be complete: a server may serve URIs it does not list
    (from templates, or links in tool results).
    """

    resources: list[Resource]


class ListResourceTemplatesRequest(PaginatedRequest):
    """`resources/templates/list`: one page of the server's templates."""

    method: Literal["resources/templates/list"] = "resources/templates/list"


class ListResourceTemplatesResult(PaginatedResult, CacheableResult):
    """A page of resource templates; cacheable in 2026-07-28."""

    resource_templates: list[ResourceTemplate]


class ReadResourceRequestParams(InputResponseRequestParams):
    """Params of `resources/read`: the URI, plus the 2026-07-28 retry fields.

    `resources/read` is one of the three methods that may answer with an
    `InputRequiredResult`, hence the `InputResponseRequestParams` base.
    """

    uri: str


class ReadResourceRequest(Request):
    """`resources/read`: the contents of one URI, which need not be one `resources/list` gave."""

    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceResult(CacheableResult):
    """What a read returns: the contents, cacheable in 2026-07-28.

    Each item is told apart as text or blob by the field it has (see
    `_resource_contents_tag`): both have `uri` and `mimeType`, so only that field can.
    """

    # One or more items; several when the URI names a collection.
    contents: list[_AnyResourceContents]


class SubscribeRequestParams(ResourceRequestParams):
    """Params of `resources/subscribe`: the URI to watch."""


class SubscribeRequest(Request):
    """`resources/subscribe` (legacy): ask for `notifications/resources/updated` on a URI.

    Only when the server declared `resources.subscribe`. 2026-07-28 removed the
    method: a client names the URIs in a `subscriptions/listen` filter instead.
    """

    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams


class UnsubscribeRequestParams(ResourceRequestParams):
    """Params of `resources/unsubscribe`: the URI to stop watching."""


class UnsubscribeRequest(Request):
    """`resources/unsubscribe` (legacy); 2026-07-28 ends a listen stream instead."""

    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class ResourceUpdatedNotificationParams(NotificationParams):
    """The URI that changed; it may be a sub-resource of the one subscribed to.

    The notification says only that it changed: the client reads it again to learn how.
    """

    uri: str


class ResourceUpdatedNotification(Notification):
    """`notifications/resources/updated`: a subscribed resource changed.

    Sent only to a client that subscribed (legacy) or listed the URI in its listen
    filter (2026-07-28); an unsolicited one is ignorable noise to the client.
    """

    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


class ResourceListChangedNotification(Notification):
    """`notifications/resources/list_changed`: re-list to see the change.

    Only from a server that declared `resources.listChanged`; in 2026-07-28 only on
    a listen stream whose filter asked for it.
    """

    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Subscriptions (2026-07-28)
# ---------------------------------------------------------------------------


class SubscriptionFilter(MCPModel):
    """Opt-in notification types of a listen stream; extensions may add keys, which survive."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    # URIs to receive notifications/resources/updated for: the 2026-07-28 form of
    # resources/subscribe.
    resource_subscriptions: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams):
    """Params of `subscriptions/listen`: the filter of notifications the client wants."""

    notifications: SubscriptionFilter


class SubscriptionsListenRequest(Request):
    """`subscriptions/listen` (2026-07-28): open a long-lived stream for notifications.

    It replaces the legacy GET stream and `resources/subscribe`: the server first
    acknowledges the filter it accepted, then sends only what the filter names, on
    this request's response stream, until either side ends it. On stdio, where there
    is no stream to close, `notifications/cancelled` naming this request ends it (the
    one use the 2026-07-28 schema gives a server for that notification).
    """

    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsListenResult(Result):
    """Graceful end of a listen stream; `_meta` must carry the subscription id.

    Sent only when the server tears the subscription down (shutting down, say); an
    abrupt close of the transport carries no result, so a client must treat the end
    of the stream alone as the end of the subscription.
    """


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """What the server accepted of the filter, which may be less than asked."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(Notification):
    """`notifications/subscriptions/acknowledged` (2026-07-28): the subscription is live.

    It must be the first message carrying the subscription's id, and nothing is sent
    on the subscription before it (on stdio other subscriptions' messages may come
    first). It lists what the server will honour: a type the client asked for and
    that is missing here (prompts from a server without prompts) is not coming.
    """

    method: Literal["notifications/subscriptions/acknowledged"] = (
        "notifications/subscriptions/acknowledged"
    )
    params: SubscriptionsAcknowledgedNotificationParams


# ---------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------


class PromptArgument(BaseMetadata):
    """One named argument of a prompt; `required` None means optional.

    Prompt arguments are strings only (`prompts/get` sends ``dict[str, str]``); a
    client can offer completion for them through `completion/complete`.
    """

    description: str | None = None
    # None means optional, as False does.
    required: bool | None = None


class Prompt(BaseMetadata):
    """A prompt template the server offers, as `prompts/list` lists it."""

    description: str | None = None
    # None and an empty list both mean the prompt takes no arguments.
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class PromptMessage(MCPModel):
    """One message of a rendered prompt: a role and one content block.

    Unlike sampling, a prompt message holds exactly one block, and never tool use.
    """

    role: Role
    content: ContentBlock


class ListPromptsRequest(PaginatedRequest):
    """`prompts/list`: one page of the server's prompts."""

    method: Literal["prompts/list"] = "prompts/list"


class ListPromptsResult(PaginatedResult, CacheableResult):
    """A page of prompts; cacheable in 2026-07-28."""

    prompts: list[Prompt]


class GetPromptRequestParams(InputResponseRequestParams):
    """Params of `prompts/get`: the prompt's name and its string arguments.

    `prompts/get` may answer with an `InputRequiredResult` in 2026-07-28, hence the
    retry fields of the base. A missing required argument is the server's -32602.
    """

    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequest(Request):
    """`prompts/get`: render one prompt with the given arguments."""

    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(Result):
    """A rendered prompt: the messages to give the model, in order.

    Not a `CacheableResult` in 2026-07-28, unlike the lists and `resources/read`.
    """

    description: str | None = None
    messages: list[PromptMessage]


class PromptListChangedNotification(Notification):
    """`notifications/prompts/list_changed`: re-list to see it (needs `prompts.listChanged`)."""

    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


class ToolAnnotations(MCPModel):
    """Behaviour hints; untrusted unless the server is, so never a security decision.

    2025-03-26+. Every hint's absence has a spec default that is the cautious one:
    not read-only, destructive, not idempotent, open-world. A client deciding whether
    to ask the user first should read None as that default, never as False.
    """

    title: str | None = None
    # True: the tool changes nothing. None reads as False.
    read_only_hint: bool | None = None
    # True: it may destroy or overwrite, False: it only adds. Meaningful only when
    # read_only_hint is false; None reads as True.
    destructive_hint: bool | None = None
    # True: repeating a call with the same arguments has no further effect, so a retry is
    # safe. Meaningful only when not read-only; None reads as False.
    idempotent_hint: bool | None = None
    # True: it reaches an open world (a web search), False: a closed domain (a memory). None
    # reads as True.
    open_world_hint: bool | None = None


class ToolExecution(MCPModel):
    """Task support of a tool (2025-11-25 only); absent means ``"forbidden"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


class Tool(BaseMetadata):
    """A callable tool. Schemas stay raw dicts: 2026-07-28 allows any 2020-12 keyword.

    `input_schema` is required (an object schema; a tool with no arguments says
    ``{"type": "object"}``); `output_schema` is 2025-06-18+ and, when present, binds
    the server to return `structuredContent` that matches it. `execution` is
    2025-11-25 only (tasks); a later peer ignores it as an extra.
    """

    description: str | None = None
    # Always an object schema at the root, since tool arguments are always a JSON object; past
    # that, any JSON Schema 2020-12 (2026-07-28).
    input_schema: dict[str, Any]
    # 2025-06-18+. When present, results must carry structuredContent that conforms to it;
    # JSON Schema 2020-12 unless $schema says otherwise.
    output_schema: dict[str, Any] | None = None
    # 2025-03-26+; hints only, see ToolAnnotations.
    annotations: ToolAnnotations | None = None
    # 2025-11-25 only (tasks); ignored as an extra by other revisions.
    execution: ToolExecution | None = None
    icons: list[Icon] | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListToolsRequest(PaginatedRequest):
    """`tools/list`: one page of the server's tools."""

    method: Literal["tools/list"] = "tools/list"


class ListToolsResult(PaginatedResult, CacheableResult):
    """A page of tools; cacheable in 2026-07-28."""

    tools: list[Tool]


class CallToolRequestParams(InputResponseRequestParams):
    """Params of `tools/call`: the tool's name, its arguments, and the retry fields.

    `arguments` None and ``{}`` mean the same to a tool with no required argument;
    `task` asks a 2025-11-25 server to run the call as a task. `tools/call` is one of
    the three methods that may answer with an `InputRequiredResult` in 2026-07-28.
    """

    name: str
    # Should fit the tool's inputSchema; since 2025-11-25 a server reports a mismatch as a
    # tool error (isError), so the model can correct its call.
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None


class CallToolRequest(Request):
    """`tools/call`: run one tool."""

    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(Result):
    """Tool failures belong here with `is_error` set, not in a JSON-RPC error (SEP-1303).

    `structured_content` is any JSON value in 2026-07-28, an object before it.
    """

    content: list[ContentBlock]
    structured_content: Any = None
    # None means False. A tool that failed says True and describes the failure in content, so
    # the model sees it and can correct itself; not finding the tool, or a server without
    # tools, are JSON-RPC errors instead.
    is_error: bool | None = None


class ToolListChangedNotification(Notification):
    """`notifications/tools/list_changed`: re-list to see it (needs `tools.listChanged`)."""

    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Completion
# ---------------------------------------------------------------------------


class PromptReference(MCPModel):
    """`ref/prompt` in `completion/complete`: complete an argument of this prompt."""

    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class ResourceTemplateReference(MCPModel):
    """Called `ResourceReference` in 2024-11-05 and 2025-03-26; same wire shape."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class CompletionArgument(MCPModel):
    """The argument being completed: its name and what the user has typed so far."""

    name: str
    value: str


class CompletionContext(MCPModel):
    """Arguments already resolved (2025-06-18+), so a server can narrow what it suggests.

    An older server ignores it as an extra and completes from `argument` alone.
    """

    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams):
    """Params of `completion/complete`: what is being completed, and where."""

    ref: Annotated[PromptReference | ResourceTemplateReference, Field(discriminator="type")]
    argument: CompletionArgument
    # 2025-06-18+; see CompletionContext.
    context: CompletionContext | None = None


class CompleteRequest(Request):
    """`completion/complete`: suggestions for a prompt or resource-template argument.

    Only when the server declared `completions` (2025-03-26+); the client typically
    sends one per keystroke, so a server should answer fast and may return nothing.
    """

    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams


class Completion(MCPModel):
    """The suggestions: at most 100 `values` (spec limit; not checked here).

    `total` may exceed the values sent; `has_more` True says there are others even
    when the total is unknown.
    """

    values: list[str]
    # How many values exist in all, which may exceed those sent; None when unknown.
    total: int | None = None
    has_more: bool | None = None


class CompleteResult(Result):
    """The answer to `completion/complete`."""

    completion: Completion


# ---------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------


class SetLevelRequestParams(RequestParams):
    """The minimum level the client wants to receive."""

    level: LoggingLevel


class SetLevelRequest(Request):
    """`logging/setLevel` (legacy): send `notifications/message` at this level or above.

    2026-07-28 removed it: the level rides in each request's `_meta` and applies to
    the messages sent for that request.
    """

    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams


class LoggingMessageNotificationParams(NotificationParams):
    """`data` is required on the wire and may be JSON null, so a null survives `exclude_none`."""

    level: LoggingLevel
    # The name of the logger that produced the record, if any.
    logger: str | None = None
    data: Any

    @model_serializer(mode="wrap")
    def _keep_null_data(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """Put `data: null` back when `exclude_none` dropped it: the member is required."""
        return _restore_required_null(self, handler, info, "data", "data")


class LoggingMessageNotification(Notification):
    """`notifications/message`: a log record from the server.

    Only from a server that declared `logging`; a log message must not carry
    credentials or personal data (utilities/logging, security).
    """

    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


# ---------------------------------------------------------------------------
# Progress and cancellation
# ---------------------------------------------------------------------------


class ProgressNotificationParams(NotificationParams):
    """Progress of one request, named by the `progressToken` the request carried.

    `progress` should grow with each notification even when `total` is unknown; a
    token that names no request in flight is dropped, since it cannot be routed.
    """

    progress_token: _WireId
    progress: float
    # None when the total is unknown: progress then only grows, with no end in sight.
    total: float | None = None
    message: str | None = None


class ProgressNotification(Notification):
    """`notifications/progress`: sent only for a request whose `_meta` held a `progressToken`."""

    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


class CancelledNotificationParams(NotificationParams):
    """`request_id` is optional only in 2025-11-25 (task cancels go through `tasks/cancel`)."""

    request_id: _WireId | None = None
    # Free text the receiver may log or show.
    reason: str | None = None


class CancelledNotification(Notification):
    """`notifications/cancelled`: the sender no longer wants the answer to a request.

    The request may already have finished (the notice crosses the answer), so the
    receiver ignores a notice for an id it does not know; `initialize` must not be
    cancelled. Over Streamable HTTP in 2026-07-28 cancelling is closing the stream,
    and the notification is left to stdio.
    """

    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


# ---------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------

_Priority: TypeAlias = Annotated[float, Field(ge=0.0, le=1.0)]


class ModelHint(MCPModel):
    """A model name fragment the server would like; the client treats it as a substring.

    Hints are advice: the client may map them to a comparable model of another
    provider, or ignore them.
    """

    name: str | None = None


class ModelPreferences(MCPModel):
    """How the server weighs cost, speed and intelligence (each 0..1), and name hints.

    The client makes the choice; the hints are tried in order before the priorities.
    """

    hints: list[ModelHint] | None = None
    # 0 means cost does not matter, 1 that it matters most; likewise for speed and
    # intelligence.
    cost_priority: _Priority | None = None
    speed_priority: _Priority | None = None
    intelligence_priority: _Priority | None = None


class ToolChoice(MCPModel):
    """How the sampled model may use the tools (2025-11-25+): ``auto`` when absent.

    ``required`` means at least one tool call before completing, ``none`` none at all.
    """

    mode: Literal["auto", "required", "none"] | None = None


class SamplingMessage(MCPModel):
    """One message of a sampling conversation.

    Content is one block or (2025-11-25+) a list; a list lets one assistant turn hold
    several tool calls, and one user turn their results.
    """

    role: Role
    # One block or, 2025-11-25+, a list (content_as_list gives one shape).
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    meta: _Meta | None = Field(default=None, alias="_meta")

    @property
    def content_as_list(self) -> list[SamplingMessageContentBlock]:
        """One shape for callers, whichever the sender chose."""
        return self.content if isinstance(self.content, list) else [self.content]


class CreateMessageRequestParams(RequestParams):
    """Params of `sampling/createMessage`: the conversation and how to sample it.

    The client may change or drop `system_prompt`, ignore `model_preferences`, and
    sample fewer than `max_tokens` (the one required number: it bounds a runaway
    completion). `tools` and `tool_choice` need the client's `sampling.tools`;
    `include_context` other than ``"none"`` needs `sampling.context`.
    """

    messages: list[SamplingMessage]
    max_tokens: int
    # Advice the client may ignore; the client picks the model.
    model_preferences: ModelPreferences | None = None
    # A request: the client may change or drop it.
    system_prompt: str | None = None
    # Default none. thisServer and allServers are deprecated (SEP-2596) and need the client's
    # sampling.context; the client may ignore the request either way.
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    # Passed through to the model's provider as is; its format is the provider's.
    metadata: dict[str, Any] | None = None
    # 2025-11-25+: tools the sampled model may call, answered by ToolUseContent; needs the
    # client's sampling.tools.
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    # 2025-11-25 only: run the sampling as a task (needs the client's tasks capability for
    # it).
    task: TaskMetadata | None = None


class CreateMessageRequest(Request):
    """`sampling/createMessage`: ask the client's model for a completion.

    Sent by a legacy server as a request, or put in an `InputRequiredResult` in
    2026-07-28; either way only to a client that declared `sampling`, and the client
    should let a person review both the request and the answer.
    """

    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageResult(Result):
    """Sampling answer; content may be a list and hold tool use since 2025-11-25."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    # The model that actually answered, which need not be one the server hinted at.
    model: str
    # None when unknown; the set is open so a provider's own reasons pass.
    stop_reason: StopReason | None = None

    @property
    def content_as_list(self) -> list[SamplingMessageContentBlock]:
        """One shape for callers, whichever the sender chose."""
        return self.content if isinstance(self.content, list) else [self.content]


CreateMessageResultWithTools = CreateMessageResult
"""The SDK splits single and list content into two classes; here one class holds both."""

# ---------------------------------------------------------------------------
# Roots
# ---------------------------------------------------------------------------


def _url_text(value: Any) -> Any:
    """Accept pydantic URL objects (FileUrl, AnyUrl) where the wire wants a URI string."""
    return value if isinstance(value, str) or not hasattr(value, "unicode_string") else str(value)


class Root(MCPModel):
    """A root the client exposes: a `file://` URI (the only scheme so far) and a name.

    Roots tell a server where it may work; they are a boundary the client states,
    not one the protocol enforces.
    """

    uri: Annotated[str, BeforeValidator(_url_text)]
    # A label for people; the URI is what identifies the root.
    name: str | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListRootsRequest(Request):
    """`roots/list`: the client's roots, asked by the server (needs the client's `roots`)."""

    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(Result):
    """The client's roots, all at once (no pagination)."""

    roots: list[Root]


class RootsListChangedNotification(Notification):
    """`notifications/roots/list_changed` (legacy): ask `roots/list` again.

    Gone in 2026-07-28, where the server asks for roots per request anyway.
    """

    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Elicitation: the restricted form schema
# ---------------------------------------------------------------------------


class StringSchema(MCPModel):
    """A text field of an elicitation form (2025-06-18+).

    `format` is limited to the four the spec names, because a client must be able to
    render and check every field without a general JSON Schema engine. `default`
    (2025-11-25+) pre-fills the field; an older client ignores it.
    """

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(MCPModel):
    """Bounds keep ints as ints, so an ``integer`` field never echoes as ``3.0``.

    A numeric field of a form, ``number`` or ``integer``; `minimum`/`maximum` are
    inclusive, as in JSON Schema. `default` is 2025-11-25+.
    """

    type: Literal["number", "integer"] = "number"
    title: str | None = None
    description: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(MCPModel):
    """A checkbox of a form; `default` is the one default the 2025-06-18 schema already had."""

    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class EnumOption(MCPModel):
    """One ``{const, title}`` choice of a titled enum.

    `const` is what the answer carries, `title` what the user sees: the split is why
    the titled forms exist (the untitled ones show the value itself).
    """

    const: str
    title: str


class UntitledSingleSelectEnumSchema(MCPModel):
    """Pick one of `enum` (2025-11-25 name for 2025-06-18's enum without `enumNames`)."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(MCPModel):
    """Pick one of `one_of`, each a value with its own label (2025-11-25+).

    The standard JSON Schema spelling of what `enumNames` did, so a generic validator
    checks the answer without knowing MCP.
    """

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    one_of: list[EnumOption]
    default: str | None = None


class UntitledMultiSelectEnumItems(MCPModel):
    """The `items` of an untitled multi-select: the allowed values."""

    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(MCPModel):
    """Pick several of `items.enum` (2025-11-25+); the answer is a list of strings.

    `min_items`/`max_items` bound how many; a 2025-06-18 client has no multi-select
    and cannot render this, which is why the engine refuses it for that revision.
    """

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: UntitledMultiSelectEnumItems
    default: list[str] | None = None


class TitledMultiSelectEnumItems(MCPModel):
    """The `items` of a titled multi-select: labelled values in `anyOf`."""

    any_of: list[EnumOption]


class TitledMultiSelectEnumSchema(MCPModel):
    """Pick several labelled values (2025-11-25+); the answer lists `const`s."""

    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: TitledMultiSelectEnumItems
    default: list[str] | None = None


class LegacyTitledEnumSchema(MCPModel):
    """The 2025-06-18 `EnumSchema`; `enumNames` is non-standard and deprecated."""

    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    enum_names: list[str] | None = None
    default: str | None = None


_PRIMITIVE_SCHEMA_NAMES = frozenset(
    {
        "StringSchema",
        "NumberSchema",
        "BooleanSchema",
        "UntitledSingleSelectEnumSchema",
        "TitledSingleSelectEnumSchema",
        "UntitledMultiSelectEnumSchema",
        "TitledMultiSelectEnumSchema",
        "LegacyTitledEnumSchema",
    }
)


def _primitive_schema_tag(value: Any) -> str | None:
    """Name the schema class a form field is, from its keywords.

    Needed because with extra="allow" every ``type: "string"`` dict would also fit
    `StringSchema`, swallowing `enum` / `oneOf` as extras.
    """
    if isinstance(value, BaseModel):
        for cls in type(value).__mro__:
            if cls.__name__ in _PRIMITIVE_SCHEMA_NAMES:
                return cls.__name__
        return None
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "string":
        if "oneOf" in value or "one_of" in value:
            return "TitledSingleSelectEnumSchema"
        if "enum" in value:
            if "enumNames" in value or "enum_names" in value:
                return "LegacyTitledEnumSchema"
            return "UntitledSingleSelectEnumSchema"
        return "StringSchema"
    if kind in ("number", "integer"):
        return "NumberSchema"
    if kind == "boolean":
        return "BooleanSchema"
    if kind == "array":
        items = value.get("items")
        if isinstance(items, dict) and ("anyOf" in items or "any_of" in items):
            return "TitledMultiSelectEnumSchema"
        if isinstance(items, TitledMultiSelectEnumItems):
            return "TitledMultiSelectEnumSchema"
        return "UntitledMultiSelectEnumSchema"
    return None


_PRIMITIVE = Discriminator(_primitive_schema_tag)

SingleSelectEnumSchema: TypeAlias = Annotated[
    Annotated[UntitledSingleSelectEnumSchema, Tag("UntitledSingleSelectEnumSchema")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("TitledSingleSelectEnumSchema")],
    _PRIMITIVE,
]
MultiSelectEnumSchema: TypeAlias = Annotated[
    Annotated[UntitledMultiSelectEnumSchema, Tag("UntitledMultiSelectEnumSchema")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("TitledMultiSelectEnumSchema")],
    _PRIMITIVE,
]
EnumSchema: TypeAlias = Annotated[
    Annotated[UntitledSingleSelectEnumSchema, Tag("UntitledSingleSelectEnumSchema")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("TitledSingleSelectEnumSchema")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("UntitledMultiSelectEnumSchema")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("TitledMultiSelectEnumSchema")]
    | Annotated[LegacyTitledEnumSchema, Tag("LegacyTitledEnumSchema")],
    _PRIMITIVE,
]
PrimitiveSchemaDefinition: TypeAlias = Annotated[
    Annotated[StringSchema, Tag("StringSchema")]
    | Annotated[NumberSchema, Tag("NumberSchema")]
    | Annotated[BooleanSchema, Tag("BooleanSchema")]
    | Annotated[UntitledSingleSelectEnumSchema, Tag("UntitledSingleSelectEnumSchema")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("TitledSingleSelectEnumSchema")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("UntitledMultiSelectEnumSchema")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("TitledMultiSelectEnumSchema")]
    | Annotated[LegacyTitledEnumSchema, Tag("LegacyTitledEnumSchema")],
    _PRIMITIVE,
]
"""One field of an elicitation form: flat and primitive only."""


class RequestedSchema(MCPModel):
    """Typed view of `ElicitRequestFormParams.requested_schema`, for checking a form.

    The schema is deliberately flat: an object of primitive properties, no nesting,
    no arrays of objects, so any client can draw it as a form (elicitation,
    requested schema). `required` None means every field may be left empty.
    """

    schema_: str | None = Field(default=None, alias="$schema")
    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None


ElicitRequestedSchema: TypeAlias = dict[str, Any]
"""The params carry the raw schema dict, so it can go straight to a JSON Schema validator."""

# ---------------------------------------------------------------------------
# Elicitation: requests and results
# ---------------------------------------------------------------------------


class ElicitRequestFormParams(RequestParams):
    """Form mode. A missing `mode` on the wire means form (2025-06-18 had no `mode`).

    A form must not ask for passwords, keys, tokens or payment details: the answer
    passes through the client, so secrets go through URL mode (2025-11-25,
    elicitation security). `message` says why the server asks; the client shows it
    with the server's name and offers decline and cancel.
    """

    # Absent on the wire in 2025-06-18, optional in 2025-11-25 (form by default).
    mode: Literal["form"] = "form"
    message: str
    # The raw schema: restricted to flat primitive fields (RequestedSchema is the typed view
    # used to check it).
    requested_schema: ElicitRequestedSchema
    # 2025-11-25 only: run the elicitation as a task.
    task: TaskMetadata | None = None


class ElicitRequestURLParams(RequestParams):
    """URL mode (2025-11-25+). `elicitation_id` is required in 2025-11-25, gone in 2026-07-28.

    The user completes the interaction in a browser, out of the client's sight, so
    credentials never reach the client. The URL must not carry credentials or
    personal data and must not be pre-authenticated; the client shows it in full and
    opens it only with the user's consent. In 2025-11-25 `elicitation_id` ties the
    later `notifications/elicitation/complete` to this request; in 2026-07-28 the
    retry's `requestState` does that.
    """

    mode: Literal["url"] = "url"
    message: str
    # Shown to the user in full before consent, and opened outside the client (a browser),
    # never fetched by it.
    url: str
    # 2025-11-25: names the flow for notifications/elicitation/complete and error -32042;
    # unique within the server, opaque to the client.
    elicitation_id: str | None = None
    task: TaskMetadata | None = None


def _elicit_mode_tag(value: Any) -> str | None:
    """A missing `mode` is form: 2025-06-18 peers never send one."""
    if isinstance(value, dict):
        mode = value.get("mode", "form")
        return mode if isinstance(mode, str) else None
    mode = getattr(value, "mode", None)
    return mode if isinstance(mode, str) else None


ElicitRequestParams: TypeAlias = Annotated[
    Annotated[ElicitRequestFormParams, Tag("form")] | Annotated[ElicitRequestURLParams, Tag("url")],
    Discriminator(_elicit_mode_tag),
]


class ElicitRequest(Request):
    """`elicitation/create`: ask the user for input, by form or by URL (2025-06-18+).

    A legacy server sends it as a request; a 2026-07-28 server puts it in an
    `InputRequiredResult`. Only to a client that declared `elicitation`, and URL mode
    only to one that declared `elicitation.url`.
    """

    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestParams


class ElicitResult(Result):
    """`accept` in URL mode only means the user agreed to open the URL.

    `content` is present only with `accept` in form mode, and holds flat values that
    must match the requested schema; `decline` is the user saying no, `cancel` the
    user dismissing the request without choosing.
    """

    action: Literal["accept", "decline", "cancel"]
    # Only with accept in form mode: the values, keyed by the schema's property names; absent
    # for decline, cancel and URL mode.
    content: dict[str, str | int | float | bool | list[str]] | None = None


class ElicitCompleteNotificationParams(NotificationParams):
    """End of an out-of-band URL flow (2025-11-25 only).

    A client must ignore an id it does not know or has already seen complete, since
    the notification is only a hint to retry (the server still decides the outcome).
    """

    elicitation_id: str


ElicitationCompleteNotificationParams = ElicitCompleteNotificationParams
"""The schema's name for the same params."""


class ElicitCompleteNotification(Notification):
    """`notifications/elicitation/complete` (2025-11-25 only), sent to the client that was asked."""

    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitCompleteNotificationParams


ElicitationCompleteNotification = ElicitCompleteNotification


class ElicitationRequiredErrorData(MCPModel):
    """`data` of error -32042 (2025-11-25 only).

    A server that cannot go on until the user completes URL elicitations answers the
    request with this error listing them; the client runs them and retries. 2026-07-28
    replaced it with `InputRequiredResult`.
    """

    elicitations: list[ElicitRequestURLParams]


# ---------------------------------------------------------------------------
# Multi round-trip requests (2026-07-28)
# ---------------------------------------------------------------------------

InputRequest: TypeAlias = Annotated[
    CreateMessageRequest | ListRootsRequest | ElicitRequest, Field(discriminator="method")
]
"""A server-to-client request carried inside a result instead of being sent."""

InputRequests: TypeAlias = dict[str, InputRequest]


def _input_response_tag(value: Any) -> str | None:
    """Tell the three answers apart by their required field, not by trial and error."""
    if isinstance(value, ElicitResult):
        return "elicit"
    if isinstance(value, ListRootsResult):
        return "roots"
    if isinstance(value, CreateMessageResult):
        return "sampling"
    if not isinstance(value, dict):
        return None
    if "action" in value:
        return "elicit"
    if "roots" in value:
        return "roots"
    return "sampling"


InputResponse: TypeAlias = Annotated[
    Annotated[CreateMessageResult, Tag("sampling")]
    | Annotated[ListRootsResult, Tag("roots")]
    | Annotated[ElicitResult, Tag("elicit")],
    Discriminator(_input_response_tag),
]
InputResponses: TypeAlias = dict[str, InputResponse]


class InputRequiredResult(Result):
    """Interim answer of `tools/call`, `prompts/get` or `resources/read`: ask, then retry.

    The spec requires at least one of the two fields, so an empty one is refused.

    2026-07-28 (basic/patterns/mrtr): the client answers each of `input_requests`
    under the same key and sends the original request again, with a new JSON-RPC id,
    the answers in `inputResponses` and `request_state` echoed byte for byte. The
    state is the server's memory across rounds; the client must treat it as opaque,
    and the server as attacker-controlled (this library seals it with an HMAC when
    `ServerConfig.request_state_keys` are set).
    """

    result_type: Literal["input_required"] = "input_required"
    # Questions keyed by names the server chose; the answers come back under the same keys in
    # inputResponses.
    input_requests: InputRequests | None = None
    # Opaque to the client: echoed byte for byte on the retry and never on another request.
    request_state: str | None = None

    @model_validator(mode="after")
    def _needs_requests_or_state(self) -> Self:
        """Refuse a result with neither field: the client would have nothing to answer or echo."""
        if self.input_requests is None and self.request_state is None:
            raise ValueError("InputRequiredResult needs input_requests or request_state")
        return self


# ---------------------------------------------------------------------------
# Tasks (2025-11-25; an extension afterwards)
# ---------------------------------------------------------------------------


class RelatedTaskMetadata(MCPModel):
    """Value of `_meta["io.modelcontextprotocol/related-task"]`.

    It ties a message sent while a task runs (a request, a notification) to that
    task, since the request that created the task has already been answered.
    """

    task_id: str


class Task(MCPModel):
    """`ttl` is required and may be null (unlimited), so a null survives `exclude_none`.

    A 2025-11-25 task: a request the receiver runs in the background, polled with
    `tasks/get` (at no more than `poll_interval` ms, when given) and fetched with
    `tasks/result`. Timestamps are ISO 8601 text; ``completed``, ``failed`` and
    ``cancelled`` are final, while ``working`` and ``input_required`` may alternate.
    """

    task_id: str
    status: TaskStatus
    # Text about the current status, for people (why it failed, what it waits for).
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    # Milliseconds the result is kept after creation (None: no limit); the receiver may
    # shorten what was asked.
    ttl: int | None
    # Milliseconds the receiver suggests between tasks/get polls; None leaves it to the
    # requestor.
    poll_interval: int | None = None

    @model_serializer(mode="wrap")
    def _keep_null_ttl(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        """Put `ttl: null` (unlimited) back when `exclude_none` dropped it: it is required."""
        return _restore_required_null(self, handler, info, "ttl", "ttl")


class CreateTaskResult(Result):
    """The immediate answer to a task-augmented request: the task, not yet the result."""

    task: Task


class GetTaskRequestParams(RequestParams):
    """Which task `tasks/get` asks about."""

    task_id: str


class GetTaskRequest(Request):
    """`tasks/get` (2025-11-25 only): poll a task's status."""

    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskRequestParams


class GetTaskResult(Result, Task):
    """The task as it stands now."""


class GetTaskPayloadRequestParams(RequestParams):
    """Which task's result `tasks/result` asks for."""

    task_id: str


class GetTaskPayloadRequest(Request):
    """`tasks/result` (2025-11-25 only): the task's result, once it has one.

    The receiver holds the answer until the task is final, so a requestor may send it
    early and wait instead of polling.
    """

    method: Literal["tasks/result"] = "tasks/result"
    params: GetTaskPayloadRequestParams


class GetTaskPayloadResult(Result):
    """The original request's result; its fields arrive as extras, which are kept."""


class CancelTaskRequestParams(RequestParams):
    """Which task `tasks/cancel` cancels."""

    task_id: str


class CancelTaskRequest(Request):
    """`tasks/cancel` (2025-11-25 only); cancelling a final task is an error (-32602)."""

    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: CancelTaskRequestParams


class CancelTaskResult(Result, Task):
    """The task after the cancel, normally ``cancelled``."""


class ListTasksRequest(PaginatedRequest):
    """`tasks/list` (2025-11-25 only): one page of the requestor's tasks."""

    method: Literal["tasks/list"] = "tasks/list"


class ListTasksResult(PaginatedResult):
    """A page of tasks."""

    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, Task):
    """The task's new state; the notification is optional."""


class TaskStatusNotification(Notification):
    """`notifications/tasks/status` (2025-11-25 only): a task moved.

    Receivers need not send it, so a requestor that wants to know must still poll.
    """

    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


# ---- the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663)
#
# Not wire-compatible with the 2025-11-25 shapes above: durations are `ttlMs` /
# `pollIntervalMs`, a created task is the result itself (`resultType: "task"`),
# and `tasks/get` inlines what the status implies (the questions, the result or
# the error) instead of a separate `tasks/result`.

TERMINAL_TASK_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})


class ExtTaskFields(MCPModel):
    """What every extension task carries. `ttl_ms` is required and may be null.

    The durations are strictly ints: a bool or float there is a peer bug that lax
    coercion would hide.
    """

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: Annotated[int, Strict()] | None
    poll_interval_ms: Annotated[int, Strict()] | None = None

    @model_serializer(mode="wrap")
    def _keep_null_ttl(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        """Write `ttlMs: null` back when `exclude_none` dropped it: the member is required."""
        return _restore_required_null(self, handler, info, "ttl_ms", "ttlMs")


class ExtDetailedTask(ExtTaskFields):
    """A task as `tasks/get` and `notifications/tasks` show it: the status decides
    which of `input_requests` (input_required), `result` (completed) and `error`
    (failed) must be there."""

    input_requests: "InputRequests | None" = None
    # With completed: the original request's result, inlined so no second call is needed.
    result: dict[str, Any] | None = None
    # With failed: the JSON-RPC error object the original request ended with.
    error: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _status_payload(self) -> Self:
        """The status decides the payload: a client polling a completed task must find the
        result inline (the extension has no separate `tasks/result`), and so on.
        """
        needed = {"input_required": "input_requests", "completed": "result", "failed": "error"}
        field = needed.get(self.status)
        if field is not None and getattr(self, field) is None:
            raise ValueError(f"a {self.status} task needs {to_camel(field)}")
        return self


class ExtCreateTaskResult(Result, ExtTaskFields):
    """The answer to a `tools/call` the server chose to run as a task."""

    result_type: Literal["task"] = "task"


class ExtGetTaskRequestParams(RequestParams):
    """Which task the extension's `tasks/get` asks about."""

    task_id: str


class ExtGetTaskResult(Result, ExtDetailedTask):
    """The task with what its status implies (questions, result or error)."""


class ExtUpdateTaskRequestParams(RequestParams):
    """Answers to a task's `inputRequests`, by the keys the server gave them.

    Each answer is only an object here: its shape depends on the question the
    key names, which only the task's server knows, and the spec has servers
    ignore answers to keys that are not outstanding (whatever they hold), so
    the server checks each answer against its own question instead.
    """

    task_id: str
    input_responses: dict[str, dict[str, Any]]


class ExtCancelTaskRequestParams(RequestParams):
    """Which task the extension's `tasks/cancel` cancels."""

    task_id: str


class ExtTaskNotificationParams(NotificationParams, ExtDetailedTask):
    """`notifications/tasks` of the extension: the task as `tasks/get` shows it."""


def _restore_required_null(
    model: BaseModel,
    handler: SerializerFunctionWrapHandler,
    info: SerializationInfo,
    attr: str,
    wire: str,
) -> dict[str, Any]:
    """Put back a required-but-null field that `exclude_none` dropped."""
    data: dict[str, Any] = handler(model)
    if not info.exclude_none:
        return data
    if getattr(model, attr) is not None:
        return data
    include, exclude = info.include, info.exclude
    if (include is not None and attr not in include) or (exclude is not None and attr in exclude):
        return data
    key = wire if info.by_alias else attr
    data.setdefault(key, None)
    return data


# ---------------------------------------------------------------------------
# Message unions (superset; which method is legal in which revision is not decided here)
# ---------------------------------------------------------------------------

ClientRequest: TypeAlias = Annotated[
    InitializeRequest
    | PingRequest
    | DiscoverRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | SubscriptionsListenRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | CompleteRequest
    | SetLevelRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest,
    Field(discriminator="method"),
]

ServerRequest: TypeAlias = Annotated[
    PingRequest
    | CreateMessageRequest
    | ListRootsRequest
    | ElicitRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest,
    Field(discriminator="method"),
]

ClientNotification: TypeAlias = Annotated[
    CancelledNotification
    | ProgressNotification
    | InitializedNotification
    | RootsListChangedNotification
    | TaskStatusNotification,
    Field(discriminator="method"),
]

ServerNotification: TypeAlias = Annotated[
    CancelledNotification
    | ProgressNotification
    | LoggingMessageNotification
    | ResourceUpdatedNotification
    | ResourceListChangedNotification
    | ToolListChangedNotification
    | PromptListChangedNotification
    | ElicitCompleteNotification
    | SubscriptionsAcknowledgedNotification
    | TaskStatusNotification,
    Field(discriminator="method"),
]

# Results carry no tag of their own: parse them with the class the request implies.
ClientResult: TypeAlias = (
    EmptyResult
    | CreateMessageResult
    | ListRootsResult
    | ElicitResult
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateTaskResult
)

ServerResult: TypeAlias = (
    EmptyResult
    | InitializeResult
    | DiscoverResult
    | ListResourcesResult
    | ListResourceTemplatesResult
    | ReadResourceResult
    | SubscriptionsListenResult
    | ListPromptsResult
    | GetPromptResult
    | ListToolsResult
    | CallToolResult
    | CompleteResult
    | InputRequiredResult
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateTaskResult
)
