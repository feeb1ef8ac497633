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

PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_META_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY: Final = "io.modelcontextprotocol/subscriptionId"
RELATED_TASK_META_KEY: Final = "io.modelcontextprotocol/related-task"

# ---------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------

RequestId: TypeAlias = str | int
"""A JSON-RPC id. Plain alias so ``isinstance(x, RequestId)`` works."""

ProgressToken: TypeAlias = str | int
Cursor: TypeAlias = str
Role: TypeAlias = Literal["user", "assistant"]
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
IconTheme: TypeAlias = Literal["light", "dark"]
ResultType: TypeAlias = Literal["complete", "input_required"] | str
"""Open set: extensions may add tags (the tasks extension adds ``"task"``)."""
IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
StopReason: TypeAlias = Literal["endTurn", "stopSequence", "maxTokens", "toolUse"] | str
TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
CacheScope: TypeAlias = Literal["public", "private"]

# Fields holding ids reject bools and floats, which lax int coercion would accept
# and then echo back as a different id.
_WireId: TypeAlias = Annotated[str, Strict()] | Annotated[int, Strict()]

_Meta: TypeAlias = dict[str, Any]

# ---------------------------------------------------------------------------
# Bases
# ---------------------------------------------------------------------------


class MCPModel(BaseModel):
    """Base of every wire model; the config is the contract described in the module doc."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        defer_build=True,
        allow_inf_nan=False,  # JSON has no Infinity/NaN; 1e999 parses to inf, refuse it here
    )


class BaseMetadata(MCPModel):
    """Shared `name` / `title` pair: `name` is for programs, `title` for people."""

    name: str
    title: str | None = None


class RequestParams(MCPModel):
    """Params of any request; `_meta` carries the 2026-07-28 per-request envelope."""

    meta: _Meta | None = Field(default=None, alias="_meta")


class PaginatedRequestParams(RequestParams):
    cursor: Cursor | None = None


class TaskMetadata(MCPModel):
    """The `task` param asking for task-augmented execution (2025-11-25 only)."""

    ttl: int | None = None


class TaskAugmentedRequestParams(RequestParams):
    """Params of a request that may be run as a task (2025-11-25 only)."""

    task: TaskMetadata | None = None


class InputResponseRequestParams(RequestParams):
    """Retry fields of a multi-round-trip request (2026-07-28): answers plus echoed state."""

    input_responses: "InputResponses | None" = None
    request_state: str | None = None


class ResourceRequestParams(RequestParams):
    uri: str


class NotificationParams(MCPModel):
    meta: _Meta | None = Field(default=None, alias="_meta")


class Request(MCPModel):
    """A request body without the JSON-RPC envelope (`jsonrpc`, `id` belong to the codec)."""

    method: str
    params: Any = None


class PaginatedRequest(Request):
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
    result_type: ResultType | None = None


class EmptyResult(Result):
    """Success with no payload (ping, subscribe, setLevel, ...)."""


class PaginatedResult(Result):
    next_cursor: Cursor | None = None


class CacheableResult(Result):
    """Caching hints (2026-07-28), required on that wire, absent before it.

    Negative `ttl_ms` is accepted rather than rejected: the spec tells clients to
    read it as 0, so refusing the whole result would be harsher than the spec.
    """

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class ErrorData(MCPModel):
    """The `error` member of a JSON-RPC error response."""

    code: int
    message: str
    data: Any = None


# ---------------------------------------------------------------------------
# Identity and capabilities
# ---------------------------------------------------------------------------


class Icon(MCPModel):
    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: IconTheme | None = None


class Implementation(BaseMetadata):
    """`clientInfo` / `serverInfo`; self-reported, so for display and logs only."""

    version: str
    description: str | None = None
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
    context: SamplingContextCapability | None = None
    tools: SamplingToolsCapability | None = None


class FormElicitationCapability(MCPModel):
    pass


class UrlElicitationCapability(MCPModel):
    pass


class ElicitationCapability(MCPModel):
    """An empty object means form mode only (2025-11-25 rule)."""

    form: FormElicitationCapability | None = None
    url: UrlElicitationCapability | None = None


class TasksListCapability(MCPModel):
    pass


class TasksCancelCapability(MCPModel):
    pass


class TasksCreateMessageCapability(MCPModel):
    pass


class TasksSamplingCapability(MCPModel):
    create_message: TasksCreateMessageCapability | None = None


class TasksCreateElicitationCapability(MCPModel):
    pass


class TasksElicitationCapability(MCPModel):
    create: TasksCreateElicitationCapability | None = None


class ClientTasksRequestsCapability(MCPModel):
    sampling: TasksSamplingCapability | None = None
    elicitation: TasksElicitationCapability | None = None


class ClientTasksCapability(MCPModel):
    """Client side of 2025-11-25 tasks."""

    list: TasksListCapability | None = None
    cancel: TasksCancelCapability | None = None
    requests: ClientTasksRequestsCapability | None = None


class ClientCapabilities(MCPModel):
    """Sent once in `initialize` (legacy) or on every request's `_meta` (2026-07-28)."""

    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


class PromptsCapability(MCPModel):
    list_changed: bool | None = None


class ResourcesCapability(MCPModel):
    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(MCPModel):
    list_changed: bool | None = None


class LoggingCapability(MCPModel):
    pass


class CompletionsCapability(MCPModel):
    pass


class TasksCallCapability(MCPModel):
    pass


class TasksToolsCapability(MCPModel):
    call: TasksCallCapability | None = None


class ServerTasksRequestsCapability(MCPModel):
    tools: TasksToolsCapability | None = None


class ServerTasksCapability(MCPModel):
    """Server side of 2025-11-25 tasks."""

    list: TasksListCapability | None = None
    cancel: TasksCancelCapability | None = None
    requests: ServerTasksRequestsCapability | None = None


class ServerCapabilities(MCPModel):
    experimental: dict[str, dict[str, Any]] | None = None
    logging: LoggingCapability | None = None
    completions: CompletionsCapability | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


# ---------------------------------------------------------------------------
# Lifecycle
# ---------------------------------------------------------------------------


class InitializeRequestParams(RequestParams):
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeRequest(Request):
    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams


class InitializeResult(Result):
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


class InitializedNotification(Notification):
    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


class PingRequest(Request):
    method: Literal["ping"] = "ping"
    params: RequestParams | None = None


class DiscoverRequest(Request):
    method: Literal["server/discover"] = "server/discover"
    params: RequestParams | None = None


class DiscoverResult(CacheableResult):
    """`server/discover` answer (2026-07-28); `serverInfo` travels in `_meta`."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


class UnsupportedProtocolVersionErrorData(MCPModel):
    """`data` of error -32022 (2026-07-28), also the shape of the legacy -32602 example."""

    supported: list[str]
    requested: str


class MissingRequiredClientCapabilityErrorData(MCPModel):
    """`data` of error -32021 (2026-07-28)."""

    required_capabilities: ClientCapabilities


# ---------------------------------------------------------------------------
# Content
# ---------------------------------------------------------------------------


class Annotations(MCPModel):
    audience: list[Role] | None = None
    priority: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    last_modified: str | None = None


class TextContent(MCPModel):
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ImageContent(MCPModel):
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class AudioContent(MCPModel):
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ResourceContents(MCPModel):
    uri: str
    mime_type: str | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class TextResourceContents(ResourceContents):
    text: str


class BlobResourceContents(ResourceContents):
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
    type: Literal["resource"] = "resource"
    resource: _AnyResourceContents
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class Resource(BaseMetadata):
    uri: str
    description: str | None = None
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
    id: str
    name: str
    input: dict[str, Any]
    meta: _Meta | None = Field(default=None, alias="_meta")


class ToolResultContent(MCPModel):
    """The answer to a `ToolUseContent`, sent back in the next sampling message (2025-11-25+)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock] = Field(default_factory=list)
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
    uri_template: str
    description: str | None = None
    mime_type: str | None = None
    icons: list[Icon] | None = None
    annotations: Annotations | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListResourcesRequest(PaginatedRequest):
    method: Literal["resources/list"] = "resources/list"


class ListResourcesResult(PaginatedResult, CacheableResult):
    resources: list[Resource]


class ListResourceTemplatesRequest(PaginatedRequest):
    method: Literal["resources/templates/list"] = "resources/templates/list"


class ListResourceTemplatesResult(PaginatedResult, CacheableResult):
    resource_templates: list[ResourceTemplate]


class ReadResourceRequestParams(InputResponseRequestParams):
    uri: str


class ReadResourceRequest(Request):
    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceResult(CacheableResult):
    contents: list[_AnyResourceContents]


class SubscribeRequestParams(ResourceRequestParams):
    pass


class SubscribeRequest(Request):
    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams


class UnsubscribeRequestParams(ResourceRequestParams):
    pass


class UnsubscribeRequest(Request):
    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str


class ResourceUpdatedNotification(Notification):
    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


class ResourceListChangedNotification(Notification):
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
    resource_subscriptions: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams):
    notifications: SubscriptionFilter


class SubscriptionsListenRequest(Request):
    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsListenResult(Result):
    """Graceful end of a listen stream; `_meta` must carry the subscription id."""


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotification(Notification):
    method: Literal["notifications/subscriptions/acknowledged"] = (
        "notifications/subscriptions/acknowledged"
    )
    params: SubscriptionsAcknowledgedNotificationParams


# ---------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------


class PromptArgument(BaseMetadata):
    description: str | None = None
    required: bool | None = None


class Prompt(BaseMetadata):
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class PromptMessage(MCPModel):
    role: Role
    content: ContentBlock


class ListPromptsRequest(PaginatedRequest):
    method: Literal["prompts/list"] = "prompts/list"


class ListPromptsResult(PaginatedResult, CacheableResult):
    prompts: list[Prompt]


class GetPromptRequestParams(InputResponseRequestParams):
    name: str
    arguments: dict[str, str] | None = None


class GetPromptRequest(Request):
    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(Result):
    description: str | None = None
    messages: list[PromptMessage]


class PromptListChangedNotification(Notification):
    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


class ToolAnnotations(MCPModel):
    """Behaviour hints; untrusted unless the server is, so never a security decision."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolExecution(MCPModel):
    """Task support of a tool (2025-11-25 only); absent means ``"forbidden"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


class Tool(BaseMetadata):
    """A callable tool. Schemas stay raw dicts: 2026-07-28 allows any 2020-12 keyword."""

    description: str | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None
    icons: list[Icon] | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListToolsRequest(PaginatedRequest):
    method: Literal["tools/list"] = "tools/list"


class ListToolsResult(PaginatedResult, CacheableResult):
    tools: list[Tool]


class CallToolRequestParams(InputResponseRequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None


class CallToolRequest(Request):
    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(Result):
    """Tool failures belong here with `is_error` set, not in a JSON-RPC error (SEP-1303).

    `structured_content` is any JSON value in 2026-07-28, an object before it.
    """

    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool | None = None


class ToolListChangedNotification(Notification):
    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Completion
# ---------------------------------------------------------------------------


class PromptReference(MCPModel):
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class ResourceTemplateReference(MCPModel):
    """Called `ResourceReference` in 2024-11-05 and 2025-03-26; same wire shape."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class CompletionArgument(MCPModel):
    name: str
    value: str


class CompletionContext(MCPModel):
    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams):
    ref: Annotated[PromptReference | ResourceTemplateReference, Field(discriminator="type")]
    argument: CompletionArgument
    context: CompletionContext | None = None


class CompleteRequest(Request):
    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams


class Completion(MCPModel):
    values: list[str]
    total: int | None = None
    has_more: bool | None = None


class CompleteResult(Result):
    completion: Completion


# ---------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------


class SetLevelRequestParams(RequestParams):
    level: LoggingLevel


class SetLevelRequest(Request):
    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams


class LoggingMessageNotificationParams(NotificationParams):
    """`data` is required on the wire and may be JSON null, so a null survives `exclude_none`."""

    level: LoggingLevel
    logger: str | None = None
    data: Any

    @model_serializer(mode="wrap")
    def _keep_null_data(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        return _restore_required_null(self, handler, info, "data", "data")


class LoggingMessageNotification(Notification):
    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


# ---------------------------------------------------------------------------
# Progress and cancellation
# ---------------------------------------------------------------------------


class ProgressNotificationParams(NotificationParams):
    progress_token: _WireId
    progress: float
    total: float | None = None
    message: str | None = None


class ProgressNotification(Notification):
    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


class CancelledNotificationParams(NotificationParams):
    """`request_id` is optional only in 2025-11-25 (task cancels go through `tasks/cancel`)."""

    request_id: _WireId | None = None
    reason: str | None = None


class CancelledNotification(Notification):
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


# ---------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------

_Priority: TypeAlias = Annotated[float, Field(ge=0.0, le=1.0)]


class ModelHint(MCPModel):
    name: str | None = None


class ModelPreferences(MCPModel):
    hints: list[ModelHint] | None = None
    cost_priority: _Priority | None = None
    speed_priority: _Priority | None = None
    intelligence_priority: _Priority | None = None


class ToolChoice(MCPModel):
    mode: Literal["auto", "required", "none"] | None = None


class SamplingMessage(MCPModel):
    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    meta: _Meta | None = Field(default=None, alias="_meta")

    @property
    def content_as_list(self) -> list[SamplingMessageContentBlock]:
        """One shape for callers, whichever the sender chose."""
        return self.content if isinstance(self.content, list) else [self.content]


class CreateMessageRequestParams(RequestParams):
    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None


class CreateMessageRequest(Request):
    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageResult(Result):
    """Sampling answer; content may be a list and hold tool use since 2025-11-25."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    model: str
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
    uri: Annotated[str, BeforeValidator(_url_text)]
    name: str | None = None
    meta: _Meta | None = Field(default=None, alias="_meta")


class ListRootsRequest(Request):
    method: Literal["roots/list"] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(Result):
    roots: list[Root]


class RootsListChangedNotification(Notification):
    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None


# ---------------------------------------------------------------------------
# Elicitation: the restricted form schema
# ---------------------------------------------------------------------------


class StringSchema(MCPModel):
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(MCPModel):
    """Bounds keep ints as ints, so an ``integer`` field never echoes as ``3.0``."""

    type: Literal["number", "integer"] = "number"
    title: str | None = None
    description: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(MCPModel):
    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


class EnumOption(MCPModel):
    """One ``{const, title}`` choice of a titled enum."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(MCPModel):
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(MCPModel):
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    one_of: list[EnumOption]
    default: str | None = None


class UntitledMultiSelectEnumItems(MCPModel):
    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(MCPModel):
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: UntitledMultiSelectEnumItems
    default: list[str] | None = None


class TitledMultiSelectEnumItems(MCPModel):
    any_of: list[EnumOption]


class TitledMultiSelectEnumSchema(MCPModel):
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
    """Typed view of `ElicitRequestFormParams.requested_schema`, for checking a form."""

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
    """Form mode. A missing `mode` on the wire means form (2025-06-18 had no `mode`)."""

    mode: Literal["form"] = "form"
    message: str
    requested_schema: ElicitRequestedSchema
    task: TaskMetadata | None = None


class ElicitRequestURLParams(RequestParams):
    """URL mode (2025-11-25+). `elicitation_id` is required in 2025-11-25, gone in 2026-07-28."""

    mode: Literal["url"] = "url"
    message: str
    url: str
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
    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestParams


class ElicitResult(Result):
    """`accept` in URL mode only means the user agreed to open the URL."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


class ElicitCompleteNotificationParams(NotificationParams):
    """End of an out-of-band URL flow (2025-11-25 only)."""

    elicitation_id: str


ElicitationCompleteNotificationParams = ElicitCompleteNotificationParams
"""The schema's name for the same params."""


class ElicitCompleteNotification(Notification):
    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitCompleteNotificationParams


ElicitationCompleteNotification = ElicitCompleteNotification


class ElicitationRequiredErrorData(MCPModel):
    """`data` of error -32042 (2025-11-25 only)."""

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
    """

    result_type: Literal["input_required"] = "input_required"
    input_requests: InputRequests | None = None
    request_state: str | None = None

    @model_validator(mode="after")
    def _needs_requests_or_state(self) -> Self:
        if self.input_requests is None and self.request_state is None:
            raise ValueError("InputRequiredResult needs input_requests or request_state")
        return self


# ---------------------------------------------------------------------------
# Tasks (2025-11-25; an extension afterwards)
# ---------------------------------------------------------------------------


class RelatedTaskMetadata(MCPModel):
    """Value of `_meta["io.modelcontextprotocol/related-task"]`."""

    task_id: str


class Task(MCPModel):
    """`ttl` is required and may be null (unlimited), so a null survives `exclude_none`."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl: int | None
    poll_interval: int | None = None

    @model_serializer(mode="wrap")
    def _keep_null_ttl(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        return _restore_required_null(self, handler, info, "ttl", "ttl")


class CreateTaskResult(Result):
    task: Task


class GetTaskRequestParams(RequestParams):
    task_id: str


class GetTaskRequest(Request):
    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskRequestParams


class GetTaskResult(Result, Task):
    pass


class GetTaskPayloadRequestParams(RequestParams):
    task_id: str


class GetTaskPayloadRequest(Request):
    method: Literal["tasks/result"] = "tasks/result"
    params: GetTaskPayloadRequestParams


class GetTaskPayloadResult(Result):
    """The original request's result; its fields arrive as extras, which are kept."""


class CancelTaskRequestParams(RequestParams):
    task_id: str


class CancelTaskRequest(Request):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: CancelTaskRequestParams


class CancelTaskResult(Result, Task):
    pass


class ListTasksRequest(PaginatedRequest):
    method: Literal["tasks/list"] = "tasks/list"


class ListTasksResult(PaginatedResult):
    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, Task):
    pass


class TaskStatusNotification(Notification):
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
    """What every extension task carries. `ttl_ms` is required and may be null."""

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
        return _restore_required_null(self, handler, info, "ttl_ms", "ttlMs")


class ExtDetailedTask(ExtTaskFields):
    """A task as `tasks/get` and `notifications/tasks` show it: the status decides
    which of `input_requests` (input_required), `result` (completed) and `error`
    (failed) must be there."""

    input_requests: "InputRequests | None" = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _status_payload(self) -> Self:
        needed = {"input_required": "input_requests", "completed": "result", "failed": "error"}
        field = needed.get(self.status)
        if field is not None and getattr(self, field) is None:
            raise ValueError(f"a {self.status} task needs {to_camel(field)}")
        return self


class ExtCreateTaskResult(Result, ExtTaskFields):
    """The answer to a `tools/call` the server chose to run as a task."""

    result_type: Literal["task"] = "task"


class ExtGetTaskRequestParams(RequestParams):
    task_id: str


class ExtGetTaskResult(Result, ExtDetailedTask):
    pass


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
    task_id: str


class ExtTaskNotificationParams(NotificationParams, ExtDetailedTask):
    pass


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
