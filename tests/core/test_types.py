"""Wire models of `mcp_core.types` against the official schemas of every revision.

The models are one superset of 2024-11-05 .. 2026-07-28, so the central check is
that a representative instance of each model, dumped the way the engine dumps
(`by_alias=True, exclude_none=True, mode="json"`), validates against the
same-named schema definition of *every* revision that defines it.
"""

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import pydantic
import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.protocols import Validator
from pydantic import BaseModel, TypeAdapter
from pydantic.alias_generators import to_camel
from referencing import Registry, Resource

from mcp_core import types as t
from tests import schema_check

# ---------------------------------------------------------------------------
# Schema loading
# ---------------------------------------------------------------------------

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
LEGACY = REVISIONS[:4]
_DIALECTS: dict[str, type[Validator]] = {
    "http://json-schema.org/draft-07/schema#": Draft7Validator,
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
}


def spec_dir() -> Path:
    # The copies in tests/spec (or $MCP_SPEC_DIR), as every other schema test reads them.
    return schema_check.spec_dir()


@functools.cache
def load_schema(revision: str) -> dict[str, Any]:
    path = spec_dir() / revision / "schema.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"MCP schema for {revision} not found at {path}; set MCP_SPEC_DIR to the "
            "directory holding <revision>/schema.json"
        )
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if schema.get("$schema") not in _DIALECTS:
        raise ValueError(f"{path}: unknown dialect {schema.get('$schema')!r}")
    return schema


def _defs_key(revision: str) -> str:
    return "$defs" if "$defs" in load_schema(revision) else "definitions"


def _base_uri(revision: str) -> str:
    return f"https://schemas.mcp.test/{revision}/schema.json"


@functools.cache
def _registry(revision: str) -> Registry:
    resource: Resource[Any] = Resource.from_contents(load_schema(revision))
    return Registry().with_resource(_base_uri(revision), resource)


def resolve(revision: str, location: str) -> dict[str, Any] | None:
    """The subschema at `location` ("Def/properties/x") or None when the revision lacks it."""
    node: Any = load_schema(revision)[_defs_key(revision)]
    for part in location.split("/"):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node if isinstance(node, dict) else None


@functools.cache
def validator(revision: str, location: str) -> Validator:
    schema = load_schema(revision)
    cls = _DIALECTS[schema["$schema"]]
    ref = f"{_base_uri(revision)}#/{_defs_key(revision)}/{location}"
    return cls({"$ref": ref}, registry=_registry(revision))


def first_location(revision: str, candidates: tuple[str, ...]) -> str | None:
    for candidate in candidates:
        if resolve(revision, candidate) is not None:
            return candidate
    return None


def wire(model: BaseModel) -> Any:
    """The engine's serialisation convention."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


# ---------------------------------------------------------------------------
# Where each model lives in the schemas
# ---------------------------------------------------------------------------

_CC = "ClientCapabilities/properties"
_SC = "ServerCapabilities/properties"
_EXPLICIT: dict[str, tuple[str, ...]] = {
    "ErrorData": ("Error", "JSONRPCError/properties/error"),
    "Annotations": ("Annotations", "Annotated/properties/annotations"),
    "ResourceTemplateReference": ("ResourceTemplateReference", "ResourceReference"),
    "LegacyTitledEnumSchema": ("LegacyTitledEnumSchema", "EnumSchema"),
    "RootsCapability": (f"{_CC}/roots",),
    "SamplingCapability": (f"{_CC}/sampling",),
    "SamplingContextCapability": (f"{_CC}/sampling/properties/context",),
    "SamplingToolsCapability": (f"{_CC}/sampling/properties/tools",),
    "ElicitationCapability": (f"{_CC}/elicitation",),
    "FormElicitationCapability": (f"{_CC}/elicitation/properties/form",),
    "UrlElicitationCapability": (f"{_CC}/elicitation/properties/url",),
    "ClientTasksCapability": (f"{_CC}/tasks",),
    "TasksListCapability": (f"{_CC}/tasks/properties/list",),
    "TasksCancelCapability": (f"{_CC}/tasks/properties/cancel",),
    "ClientTasksRequestsCapability": (f"{_CC}/tasks/properties/requests",),
    "TasksSamplingCapability": (f"{_CC}/tasks/properties/requests/properties/sampling",),
    "TasksCreateMessageCapability": (
        f"{_CC}/tasks/properties/requests/properties/sampling/properties/createMessage",
    ),
    "TasksElicitationCapability": (f"{_CC}/tasks/properties/requests/properties/elicitation",),
    "TasksCreateElicitationCapability": (
        f"{_CC}/tasks/properties/requests/properties/elicitation/properties/create",
    ),
    "PromptsCapability": (f"{_SC}/prompts",),
    "ResourcesCapability": (f"{_SC}/resources",),
    "ToolsCapability": (f"{_SC}/tools",),
    "LoggingCapability": (f"{_SC}/logging",),
    "CompletionsCapability": (f"{_SC}/completions",),
    "ServerTasksCapability": (f"{_SC}/tasks",),
    "ServerTasksRequestsCapability": (f"{_SC}/tasks/properties/requests",),
    "TasksToolsCapability": (f"{_SC}/tasks/properties/requests/properties/tools",),
    "TasksCallCapability": (f"{_SC}/tasks/properties/requests/properties/tools/properties/call",),
    "Completion": ("CompleteResult/properties/completion",),
    "CompletionArgument": (
        "CompleteRequestParams/properties/argument",
        "CompleteRequest/properties/params/properties/argument",
    ),
    "CompletionContext": (
        "CompleteRequestParams/properties/context",
        "CompleteRequest/properties/params/properties/context",
    ),
    "EnumOption": ("TitledSingleSelectEnumSchema/properties/oneOf/items",),
    "UntitledMultiSelectEnumItems": ("UntitledMultiSelectEnumSchema/properties/items",),
    "TitledMultiSelectEnumItems": ("TitledMultiSelectEnumSchema/properties/items",),
    "RequestedSchema": (
        "ElicitRequestFormParams/properties/requestedSchema",
        "ElicitRequest/properties/params/properties/requestedSchema",
    ),
    "ElicitRequestFormParams": ("ElicitRequestFormParams", "ElicitRequest/properties/params"),
    "ElicitCompleteNotificationParams": ("ElicitationCompleteNotification/properties/params",),
    "ElicitCompleteNotification": ("ElicitationCompleteNotification",),
    "UnsupportedProtocolVersionErrorData": (
        "UnsupportedProtocolVersionError/properties/error/allOf/1/properties/data",
    ),
    "MissingRequiredClientCapabilityErrorData": (
        "MissingRequiredClientCapabilityError/properties/error/allOf/1/properties/data",
    ),
    "ElicitationRequiredErrorData": (
        "URLElicitationRequiredError/properties/error/allOf/1/properties/data",
    ),
    "RequestParams": ("RequestParams", "Request/properties/params"),
    "NotificationParams": ("NotificationParams", "Notification/properties/params"),
}


def locations(name: str) -> tuple[str, ...]:
    if name in _EXPLICIT:
        return _EXPLICIT[name]
    for suffix in ("RequestParams", "NotificationParams"):
        if name.endswith(suffix) and name != suffix:
            envelope = name[: -len("Params")]
            return (name, f"{envelope}/properties/params")
    return (name,)


# ---------------------------------------------------------------------------
# Representative instances
# ---------------------------------------------------------------------------

META_2026 = {
    t.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    t.CLIENT_CAPABILITIES_META_KEY: {"elicitation": {}},
    "progressToken": "tok-1",
}
SERVER_META = {t.SERVER_INFO_META_KEY: {"name": "srv", "version": "1.0"}}
CACHE: dict[str, Any] = {"ttl_ms": 60_000, "cache_scope": "public", "result_type": "complete"}
URL = "https://Example.com/a/../b?x=1#frag"  # not normalised: must echo byte for byte

TEXT = t.TextContent(text="hello", annotations=t.Annotations(audience=["user"], priority=0.5))
IMAGE = t.ImageContent(data="aGk=", mime_type="image/png")
AUDIO = t.AudioContent(data="aGk=", mime_type="audio/wav")
TEXT_CONTENTS = t.TextResourceContents(uri="file:///a.txt", mime_type="text/plain", text="a")
BLOB_CONTENTS = t.BlobResourceContents(uri="file:///a.bin", blob="AAEC")
EMBEDDED = t.EmbeddedResource(resource=TEXT_CONTENTS)
LINK = t.ResourceLink(uri="file:///a.txt", name="a", title="A", mime_type="text/plain", size=1)
ICON = t.Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"], theme="dark")
IMPL = t.Implementation(
    name="srv",
    title="Server",
    version="1.0",
    description="demo",
    website_url="https://example.com",
    icons=[ICON],
)
TOOL = t.Tool(
    name="add",
    title="Add",
    description="adds",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
    },
    output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}},
    annotations=t.ToolAnnotations(title="Add", read_only_hint=True, open_world_hint=False),
    execution=t.ToolExecution(task_support="optional"),
    icons=[ICON],
    meta={"com.example/x": 1},
)
TOOL_USE = t.ToolUseContent(id="call-1", name="add", input={"a": 1})
TOOL_RESULT = t.ToolResultContent(
    tool_use_id="call-1", content=[TEXT], structured_content={"sum": 1}, is_error=False
)
CLIENT_CAPS = t.ClientCapabilities(
    experimental={"x": {}},
    roots=t.RootsCapability(list_changed=True),
    sampling=t.SamplingCapability(
        context=t.SamplingContextCapability(), tools=t.SamplingToolsCapability()
    ),
    elicitation=t.ElicitationCapability(
        form=t.FormElicitationCapability(), url=t.UrlElicitationCapability()
    ),
    tasks=t.ClientTasksCapability(
        list=t.TasksListCapability(),
        cancel=t.TasksCancelCapability(),
        requests=t.ClientTasksRequestsCapability(
            sampling=t.TasksSamplingCapability(create_message=t.TasksCreateMessageCapability()),
            elicitation=t.TasksElicitationCapability(create=t.TasksCreateElicitationCapability()),
        ),
    ),
    extensions={"io.modelcontextprotocol/tasks": {}},
)
SERVER_CAPS = t.ServerCapabilities(
    experimental={"x": {"on": True}},
    logging=t.LoggingCapability(),
    completions=t.CompletionsCapability(),
    prompts=t.PromptsCapability(list_changed=True),
    resources=t.ResourcesCapability(subscribe=True, list_changed=False),
    tools=t.ToolsCapability(list_changed=True),
    tasks=t.ServerTasksCapability(
        list=t.TasksListCapability(),
        cancel=t.TasksCancelCapability(),
        requests=t.ServerTasksRequestsCapability(
            tools=t.TasksToolsCapability(call=t.TasksCallCapability())
        ),
    ),
    extensions={"com.example/ext": {"level": 2}},
)
STRING_SCHEMA = t.StringSchema(
    title="Name", min_length=1, max_length=9, format="email", default="a@b.c"
)
NUMBER_SCHEMA = t.NumberSchema(type="integer", minimum=1, maximum=8, default=2)
BOOLEAN_SCHEMA = t.BooleanSchema(description="ok?", default=True)
UNTITLED_SINGLE = t.UntitledSingleSelectEnumSchema(enum=["a", "b"], default="a")
OPTION = t.EnumOption(const="a", title="Alpha")
TITLED_SINGLE = t.TitledSingleSelectEnumSchema(one_of=[OPTION], default="a")
UNTITLED_MULTI = t.UntitledMultiSelectEnumSchema(
    items=t.UntitledMultiSelectEnumItems(enum=["a", "b"]), min_items=1, max_items=2, default=["a"]
)
TITLED_MULTI = t.TitledMultiSelectEnumSchema(
    items=t.TitledMultiSelectEnumItems(any_of=[OPTION]), default=["a"]
)
LEGACY_ENUM = t.LegacyTitledEnumSchema(enum=["a", "b"], enum_names=["A", "B"])
FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "email": wire(STRING_SCHEMA),
        "party": wire(NUMBER_SCHEMA),
        "ok": wire(BOOLEAN_SCHEMA),
    },
    "required": ["email"],
}
FORM = t.ElicitRequestFormParams(message="Your email?", requested_schema=FORM_SCHEMA)
URL_PARAMS = t.ElicitRequestURLParams(message="Pay", url=URL, elicitation_id="el-1")
SAMPLING_PARAMS = t.CreateMessageRequestParams(
    messages=[t.SamplingMessage(role="user", content=TEXT)],
    max_tokens=100,
    model_preferences=t.ModelPreferences(
        hints=[t.ModelHint(name="sonnet")], cost_priority=0.2, intelligence_priority=0.9
    ),
    system_prompt="be brief",
    include_context="none",
    temperature=0.5,
    stop_sequences=["END"],
    metadata={"k": "v"},
)
CREATE_MESSAGE_RESULT = t.CreateMessageResult(
    role="assistant", content=TEXT, model="m-1", stop_reason="endTurn"
)
ROOTS_RESULT = t.ListRootsResult(roots=[t.Root(uri="file:///home/u/project", name="project")])
ELICIT_ACCEPT = t.ElicitResult(action="accept", content={"email": "a@b.c", "party": 2, "ok": True})
TASK = t.Task(
    task_id="task-1",
    status="working",
    status_message="busy",
    created_at="2025-11-25T10:00:00Z",
    last_updated_at="2025-11-25T10:00:01Z",
    ttl=None,
    poll_interval=500,
)
TASK_FIELDS: dict[str, Any] = {
    "task_id": "task-1",
    "status": "completed",
    "created_at": "2025-11-25T10:00:00Z",
    "last_updated_at": "2025-11-25T10:00:09Z",
    "ttl": 60_000,
}
INPUT_REQUIRED = t.InputRequiredResult(
    input_requests={
        "email": t.ElicitRequest(params=FORM),
        "pay": t.ElicitRequest(params=t.ElicitRequestURLParams(message="Pay", url=URL)),
        "llm": t.CreateMessageRequest(params=SAMPLING_PARAMS),
        "roots": t.ListRootsRequest(),
    },
    request_state="opaque-state",
    meta=SERVER_META,
)
INPUT_RESPONSES: dict[str, Any] = {
    "email": ELICIT_ACCEPT,
    "llm": CREATE_MESSAGE_RESULT,
    "roots": ROOTS_RESULT,
}


@dataclass
class Case:
    model: BaseModel
    revisions: tuple[str, ...] = REVISIONS
    envelope: dict[str, Any] = field(default_factory=dict)


def _req(model: BaseModel, revisions: tuple[str, ...] = REVISIONS) -> Case:
    return Case(model, revisions, {"jsonrpc": "2.0", "id": 7})


def _note(model: BaseModel, revisions: tuple[str, ...] = REVISIONS) -> Case:
    return Case(model, revisions, {"jsonrpc": "2.0"})


_FROM_1125 = ("2025-11-25", "2026-07-28")

SAMPLES: dict[type[BaseModel], list[Case]] = {
    # Bases
    t.BaseMetadata: [Case(t.BaseMetadata(name="n", title="N"))],
    t.RequestParams: [Case(t.RequestParams(meta=META_2026))],
    t.PaginatedRequestParams: [Case(t.PaginatedRequestParams(cursor="c2", meta=META_2026))],
    t.TaskAugmentedRequestParams: [
        Case(t.TaskAugmentedRequestParams(task=t.TaskMetadata(ttl=1000)))
    ],
    t.InputResponseRequestParams: [
        Case(
            t.InputResponseRequestParams(
                meta=META_2026, input_responses=INPUT_RESPONSES, request_state="s"
            )
        )
    ],
    t.ResourceRequestParams: [Case(t.ResourceRequestParams(uri=URL, meta=META_2026))],
    t.NotificationParams: [Case(t.NotificationParams(meta={t.SUBSCRIPTION_ID_META_KEY: 3}))],
    t.Request: [_req(t.Request(method="custom/thing", params={"_meta": META_2026, "a": 1}))],
    t.PaginatedRequest: [
        _req(
            t.PaginatedRequest(method="tools/list", params=t.PaginatedRequestParams(meta=META_2026))
        )
    ],
    t.Notification: [Case(t.Notification(method="notifications/custom", params={"a": 1}))],
    t.Result: [Case(t.Result(result_type="complete", meta=SERVER_META, anything=[1, 2]))],
    t.EmptyResult: [
        Case(t.EmptyResult(result_type="complete")),
        Case(t.EmptyResult(), LEGACY),
    ],
    t.PaginatedResult: [Case(t.PaginatedResult(next_cursor="c3", result_type="complete"))],
    t.CacheableResult: [Case(t.CacheableResult(**CACHE))],
    t.ErrorData: [
        Case(t.ErrorData(code=-32602, message="Invalid params", data={"field": "name"})),
        Case(t.ErrorData(code=-32601, message="Method not found")),
    ],
    # Identity and capabilities
    t.Icon: [Case(ICON)],
    t.Implementation: [Case(IMPL), Case(t.Implementation(name="c", version="0"))],
    t.ClientCapabilities: [Case(CLIENT_CAPS), Case(t.ClientCapabilities())],
    t.RootsCapability: [Case(t.RootsCapability(list_changed=True)), Case(t.RootsCapability())],
    t.SamplingCapability: [
        Case(t.SamplingCapability(tools=t.SamplingToolsCapability())),
        Case(t.SamplingCapability()),
    ],
    t.SamplingContextCapability: [Case(t.SamplingContextCapability())],
    t.SamplingToolsCapability: [Case(t.SamplingToolsCapability())],
    t.ElicitationCapability: [Case(t.ElicitationCapability(form=t.FormElicitationCapability()))],
    t.FormElicitationCapability: [Case(t.FormElicitationCapability())],
    t.UrlElicitationCapability: [Case(t.UrlElicitationCapability())],
    t.ClientTasksCapability: [
        Case(
            t.ClientTasksCapability(list=t.TasksListCapability(), cancel=t.TasksCancelCapability())
        )
    ],
    t.TasksListCapability: [Case(t.TasksListCapability())],
    t.TasksCancelCapability: [Case(t.TasksCancelCapability())],
    t.ClientTasksRequestsCapability: [Case(t.ClientTasksRequestsCapability())],
    t.TasksSamplingCapability: [
        Case(t.TasksSamplingCapability(create_message=t.TasksCreateMessageCapability()))
    ],
    t.TasksCreateMessageCapability: [Case(t.TasksCreateMessageCapability())],
    t.TasksElicitationCapability: [
        Case(t.TasksElicitationCapability(create=t.TasksCreateElicitationCapability()))
    ],
    t.TasksCreateElicitationCapability: [Case(t.TasksCreateElicitationCapability())],
    t.ServerCapabilities: [Case(SERVER_CAPS), Case(t.ServerCapabilities())],
    t.PromptsCapability: [Case(t.PromptsCapability(list_changed=True))],
    t.ResourcesCapability: [Case(t.ResourcesCapability(subscribe=True, list_changed=True))],
    t.ToolsCapability: [Case(t.ToolsCapability(list_changed=False))],
    t.LoggingCapability: [Case(t.LoggingCapability())],
    t.CompletionsCapability: [Case(t.CompletionsCapability())],
    t.ServerTasksCapability: [Case(t.ServerTasksCapability(list=t.TasksListCapability()))],
    t.ServerTasksRequestsCapability: [
        Case(t.ServerTasksRequestsCapability(tools=t.TasksToolsCapability()))
    ],
    t.TasksToolsCapability: [Case(t.TasksToolsCapability(call=t.TasksCallCapability()))],
    t.TasksCallCapability: [Case(t.TasksCallCapability())],
    # Lifecycle
    t.InitializeRequestParams: [
        Case(
            t.InitializeRequestParams(
                protocol_version="2025-11-25", capabilities=CLIENT_CAPS, client_info=IMPL
            )
        )
    ],
    t.InitializeRequest: [
        _req(
            t.InitializeRequest(
                params=t.InitializeRequestParams(
                    protocol_version="2025-06-18",
                    capabilities=t.ClientCapabilities(),
                    client_info=t.Implementation(name="c", version="1"),
                )
            )
        )
    ],
    t.InitializeResult: [
        Case(
            t.InitializeResult(
                protocol_version="2025-11-25",
                capabilities=SERVER_CAPS,
                server_info=IMPL,
                instructions="Use add.",
            )
        )
    ],
    t.InitializedNotification: [_note(t.InitializedNotification())],
    t.PingRequest: [_req(t.PingRequest())],
    t.DiscoverRequest: [_req(t.DiscoverRequest(params=t.RequestParams(meta=META_2026)))],
    t.DiscoverResult: [
        Case(
            t.DiscoverResult(
                supported_versions=["2025-11-25", "2026-07-28"],
                capabilities=SERVER_CAPS,
                instructions="hi",
                meta=SERVER_META,
                **CACHE,
            )
        )
    ],
    t.UnsupportedProtocolVersionErrorData: [
        Case(
            t.UnsupportedProtocolVersionErrorData(supported=["2026-07-28"], requested="1999-01-01")
        )
    ],
    t.MissingRequiredClientCapabilityErrorData: [
        Case(
            t.MissingRequiredClientCapabilityErrorData(
                required_capabilities=t.ClientCapabilities(elicitation=t.ElicitationCapability())
            )
        )
    ],
    t.ElicitationRequiredErrorData: [
        Case(t.ElicitationRequiredErrorData(elicitations=[URL_PARAMS]))
    ],
    # Content
    t.Annotations: [
        Case(t.Annotations(audience=["user", "assistant"], priority=1.0)),
        Case(t.Annotations(last_modified="2025-01-12T15:00:58Z")),
    ],
    t.TextContent: [Case(TEXT), Case(t.TextContent(text="x", meta={"k": 1}))],
    t.ImageContent: [Case(IMAGE)],
    t.AudioContent: [Case(AUDIO)],
    t.ResourceContents: [Case(t.ResourceContents(uri="file:///x", mime_type="text/plain"))],
    t.TextResourceContents: [Case(TEXT_CONTENTS)],
    t.BlobResourceContents: [Case(BLOB_CONTENTS)],
    t.EmbeddedResource: [Case(EMBEDDED), Case(t.EmbeddedResource(resource=BLOB_CONTENTS))],
    t.Resource: [
        Case(
            t.Resource(
                uri=URL,
                name="r",
                title="R",
                description="d",
                mime_type="text/html",
                size=10,
                icons=[ICON],
                annotations=t.Annotations(priority=0.1),
                meta={"a": 1},
            )
        )
    ],
    t.ResourceLink: [Case(LINK)],
    t.ToolUseContent: [Case(TOOL_USE)],
    t.ToolResultContent: [Case(TOOL_RESULT)],
    # Resources
    t.ResourceTemplate: [
        Case(
            t.ResourceTemplate(
                uri_template="file:///{path}", name="files", description="d", mime_type="text/plain"
            )
        )
    ],
    t.ListResourcesRequest: [
        _req(t.ListResourcesRequest(params=t.PaginatedRequestParams(meta=META_2026, cursor="c")))
    ],
    t.ListResourcesResult: [
        Case(
            t.ListResourcesResult(
                resources=[t.Resource(uri=URL, name="r")], next_cursor="n", **CACHE
            )
        )
    ],
    t.ListResourceTemplatesRequest: [
        _req(t.ListResourceTemplatesRequest(params=t.PaginatedRequestParams(meta=META_2026)))
    ],
    t.ListResourceTemplatesResult: [
        Case(
            t.ListResourceTemplatesResult(
                resource_templates=[t.ResourceTemplate(uri_template="x://{y}", name="t")], **CACHE
            )
        )
    ],
    t.ReadResourceRequestParams: [
        Case(t.ReadResourceRequestParams(uri=URL, meta=META_2026)),
        Case(
            t.ReadResourceRequestParams(
                uri=URL, meta=META_2026, input_responses=INPUT_RESPONSES, request_state="s"
            )
        ),
    ],
    t.ReadResourceRequest: [
        _req(t.ReadResourceRequest(params=t.ReadResourceRequestParams(uri=URL, meta=META_2026)))
    ],
    t.ReadResourceResult: [
        Case(
            t.ReadResourceResult(contents=[TEXT_CONTENTS, BLOB_CONTENTS], meta=SERVER_META, **CACHE)
        )
    ],
    t.SubscribeRequestParams: [Case(t.SubscribeRequestParams(uri=URL))],
    t.SubscribeRequest: [_req(t.SubscribeRequest(params=t.SubscribeRequestParams(uri=URL)))],
    t.UnsubscribeRequestParams: [Case(t.UnsubscribeRequestParams(uri=URL))],
    t.UnsubscribeRequest: [_req(t.UnsubscribeRequest(params=t.UnsubscribeRequestParams(uri=URL)))],
    t.ResourceUpdatedNotificationParams: [Case(t.ResourceUpdatedNotificationParams(uri=URL))],
    t.ResourceUpdatedNotification: [
        _note(t.ResourceUpdatedNotification(params=t.ResourceUpdatedNotificationParams(uri=URL)))
    ],
    t.ResourceListChangedNotification: [_note(t.ResourceListChangedNotification())],
    # Subscriptions
    t.SubscriptionFilter: [
        Case(
            t.SubscriptionFilter(
                tools_list_changed=True,
                prompts_list_changed=False,
                resources_list_changed=True,
                resource_subscriptions=[URL],
            )
        )
    ],
    t.SubscriptionsListenRequestParams: [
        Case(
            t.SubscriptionsListenRequestParams(
                meta=META_2026, notifications=t.SubscriptionFilter(tools_list_changed=True)
            )
        )
    ],
    t.SubscriptionsListenRequest: [
        _req(
            t.SubscriptionsListenRequest(
                params=t.SubscriptionsListenRequestParams(
                    meta=META_2026, notifications=t.SubscriptionFilter()
                )
            )
        )
    ],
    t.SubscriptionsListenResult: [
        Case(
            t.SubscriptionsListenResult(
                result_type="complete", meta={t.SUBSCRIPTION_ID_META_KEY: 7, **SERVER_META}
            )
        )
    ],
    t.SubscriptionsAcknowledgedNotificationParams: [
        Case(
            t.SubscriptionsAcknowledgedNotificationParams(
                notifications=t.SubscriptionFilter(tools_list_changed=True),
                meta={t.SUBSCRIPTION_ID_META_KEY: 7},
            )
        )
    ],
    t.SubscriptionsAcknowledgedNotification: [
        _note(
            t.SubscriptionsAcknowledgedNotification(
                params=t.SubscriptionsAcknowledgedNotificationParams(
                    notifications=t.SubscriptionFilter()
                )
            )
        )
    ],
    # Prompts
    t.PromptArgument: [Case(t.PromptArgument(name="lang", title="Language", required=True))],
    t.Prompt: [
        Case(
            t.Prompt(
                name="review",
                title="Review",
                description="d",
                arguments=[t.PromptArgument(name="code", description="c")],
                icons=[ICON],
            )
        )
    ],
    t.PromptMessage: [Case(t.PromptMessage(role="user", content=TEXT))],
    t.ListPromptsRequest: [
        _req(t.ListPromptsRequest(params=t.PaginatedRequestParams(meta=META_2026)))
    ],
    t.ListPromptsResult: [Case(t.ListPromptsResult(prompts=[t.Prompt(name="p")], **CACHE))],
    t.GetPromptRequestParams: [
        Case(t.GetPromptRequestParams(name="review", arguments={"code": "x"}, meta=META_2026))
    ],
    t.GetPromptRequest: [
        _req(t.GetPromptRequest(params=t.GetPromptRequestParams(name="p", meta=META_2026)))
    ],
    t.GetPromptResult: [
        Case(
            t.GetPromptResult(
                description="d",
                messages=[t.PromptMessage(role="assistant", content=EMBEDDED)],
                result_type="complete",
            )
        )
    ],
    t.PromptListChangedNotification: [_note(t.PromptListChangedNotification())],
    # Tools
    t.ToolAnnotations: [
        Case(
            t.ToolAnnotations(
                title="T",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=True,
            )
        )
    ],
    t.ToolExecution: [Case(t.ToolExecution(task_support="forbidden"))],
    t.Tool: [Case(TOOL), Case(t.Tool(name="noop", input_schema={"type": "object"}))],
    t.ListToolsRequest: [_req(t.ListToolsRequest(params=t.PaginatedRequestParams(meta=META_2026)))],
    t.ListToolsResult: [
        Case(t.ListToolsResult(tools=[TOOL], next_cursor="n", meta=SERVER_META, **CACHE)),
        Case(t.ListToolsResult(tools=[]), LEGACY),
    ],
    t.CallToolRequestParams: [
        Case(t.CallToolRequestParams(name="add", arguments={"a": 1}, meta=META_2026)),
        Case(
            t.CallToolRequestParams(
                name="add",
                meta=META_2026,
                input_responses=INPUT_RESPONSES,
                request_state="opaque",
                task=t.TaskMetadata(ttl=5),
            )
        ),
    ],
    t.CallToolRequest: [
        _req(t.CallToolRequest(params=t.CallToolRequestParams(name="add", meta=META_2026)))
    ],
    t.CallToolResult: [
        Case(
            t.CallToolResult(
                content=[TEXT, IMAGE, EMBEDDED],
                structured_content={"sum": 3},
                is_error=False,
                result_type="complete",
            )
        ),
        Case(t.CallToolResult(content=[AUDIO, LINK], is_error=True), ("2025-06-18", "2025-11-25")),
        Case(t.CallToolResult(content=[TEXT]), LEGACY),
    ],
    t.ToolListChangedNotification: [_note(t.ToolListChangedNotification())],
    # Completion
    t.PromptReference: [Case(t.PromptReference(name="p", title="P"))],
    t.ResourceTemplateReference: [Case(t.ResourceTemplateReference(uri="file:///{path}"))],
    t.CompletionArgument: [Case(t.CompletionArgument(name="lang", value="py"))],
    t.CompletionContext: [Case(t.CompletionContext(arguments={"a": "b"}))],
    t.CompleteRequestParams: [
        Case(
            t.CompleteRequestParams(
                ref=t.PromptReference(name="p"),
                argument=t.CompletionArgument(name="lang", value="py"),
                context=t.CompletionContext(arguments={"x": "y"}),
                meta=META_2026,
            )
        ),
        Case(
            t.CompleteRequestParams(
                ref=t.ResourceTemplateReference(uri="file:///{p}"),
                argument=t.CompletionArgument(name="p", value="a"),
                meta=META_2026,
            )
        ),
    ],
    t.CompleteRequest: [
        _req(
            t.CompleteRequest(
                params=t.CompleteRequestParams(
                    ref=t.PromptReference(name="p"),
                    argument=t.CompletionArgument(name="a", value="b"),
                    meta=META_2026,
                )
            )
        )
    ],
    t.Completion: [Case(t.Completion(values=["python", "pytorch"], total=10, has_more=True))],
    t.CompleteResult: [
        Case(t.CompleteResult(completion=t.Completion(values=["a"]), result_type="complete"))
    ],
    # Logging
    t.SetLevelRequestParams: [Case(t.SetLevelRequestParams(level="warning"))],
    t.SetLevelRequest: [_req(t.SetLevelRequest(params=t.SetLevelRequestParams(level="debug")))],
    t.LoggingMessageNotificationParams: [
        Case(t.LoggingMessageNotificationParams(level="error", logger="db", data={"e": "x"})),
        Case(t.LoggingMessageNotificationParams(level="info", data=None)),
    ],
    t.LoggingMessageNotification: [
        _note(
            t.LoggingMessageNotification(
                params=t.LoggingMessageNotificationParams(level="emergency", data="down")
            )
        )
    ],
    # Progress and cancellation
    t.ProgressNotificationParams: [
        Case(
            t.ProgressNotificationParams(progress_token="tok", progress=1, total=4, message="1/4")
        ),
        Case(t.ProgressNotificationParams(progress_token=3, progress=0.5)),
    ],
    t.ProgressNotification: [
        _note(
            t.ProgressNotification(
                params=t.ProgressNotificationParams(progress_token=1, progress=2.5)
            )
        )
    ],
    t.CancelledNotificationParams: [
        Case(t.CancelledNotificationParams(request_id=12, reason="user")),
        Case(t.CancelledNotificationParams(request_id="abc")),
    ],
    t.CancelledNotification: [
        _note(t.CancelledNotification(params=t.CancelledNotificationParams(request_id=1)))
    ],
    # Sampling
    t.ModelHint: [Case(t.ModelHint(name="claude"))],
    t.ModelPreferences: [
        Case(
            t.ModelPreferences(
                hints=[t.ModelHint(name="a")],
                cost_priority=0,
                speed_priority=1,
                intelligence_priority=0.5,
            )
        )
    ],
    t.ToolChoice: [Case(t.ToolChoice(mode="required"))],
    t.SamplingMessage: [
        Case(t.SamplingMessage(role="user", content=TEXT)),
        Case(t.SamplingMessage(role="assistant", content=[TEXT, TOOL_USE]), _FROM_1125),
        Case(t.SamplingMessage(role="user", content=TOOL_RESULT), _FROM_1125),
    ],
    t.CreateMessageRequestParams: [
        Case(SAMPLING_PARAMS),
        Case(
            t.CreateMessageRequestParams(
                messages=[t.SamplingMessage(role="user", content=TEXT)],
                max_tokens=10,
                tools=[TOOL],
                tool_choice=t.ToolChoice(mode="auto"),
            ),
            _FROM_1125,
        ),
    ],
    t.CreateMessageRequest: [_req(t.CreateMessageRequest(params=SAMPLING_PARAMS))],
    t.CreateMessageResult: [
        Case(CREATE_MESSAGE_RESULT),
        Case(
            t.CreateMessageResult(
                role="assistant", content=[TOOL_USE], model="m", stop_reason="toolUse"
            ),
            _FROM_1125,
        ),
    ],
    # Roots
    t.Root: [Case(t.Root(uri="file:///home/u", name="home"))],
    t.ListRootsRequest: [_req(t.ListRootsRequest())],
    t.ListRootsResult: [Case(ROOTS_RESULT)],
    t.RootsListChangedNotification: [_note(t.RootsListChangedNotification())],
    # Elicitation
    t.StringSchema: [Case(STRING_SCHEMA), Case(t.StringSchema())],
    t.NumberSchema: [Case(NUMBER_SCHEMA), Case(t.NumberSchema(minimum=0.5))],
    t.BooleanSchema: [Case(BOOLEAN_SCHEMA)],
    t.EnumOption: [Case(OPTION)],
    t.UntitledSingleSelectEnumSchema: [Case(UNTITLED_SINGLE)],
    t.TitledSingleSelectEnumSchema: [Case(TITLED_SINGLE)],
    t.UntitledMultiSelectEnumItems: [Case(t.UntitledMultiSelectEnumItems(enum=["x"]))],
    t.UntitledMultiSelectEnumSchema: [Case(UNTITLED_MULTI)],
    t.TitledMultiSelectEnumItems: [Case(t.TitledMultiSelectEnumItems(any_of=[OPTION]))],
    t.TitledMultiSelectEnumSchema: [Case(TITLED_MULTI)],
    t.LegacyTitledEnumSchema: [Case(LEGACY_ENUM)],
    t.RequestedSchema: [
        Case(t.RequestedSchema.model_validate(FORM_SCHEMA)),
        Case(
            t.RequestedSchema.model_validate(
                {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {
                        "a": wire(UNTITLED_SINGLE),
                        "b": wire(TITLED_SINGLE),
                        "c": wire(UNTITLED_MULTI),
                        "d": wire(TITLED_MULTI),
                        "e": wire(LEGACY_ENUM),
                    },
                }
            ),
            _FROM_1125,
        ),
    ],
    t.ElicitRequestFormParams: [Case(FORM)],
    t.ElicitRequestURLParams: [Case(URL_PARAMS)],
    t.ElicitRequest: [
        _req(t.ElicitRequest(params=FORM)),
        _req(t.ElicitRequest(params=URL_PARAMS), _FROM_1125),
    ],
    t.ElicitResult: [
        Case(ELICIT_ACCEPT),
        Case(t.ElicitResult(action="accept", content={"tags": ["a", "b"]}), _FROM_1125),
        Case(t.ElicitResult(action="decline")),
        Case(t.ElicitResult(action="cancel")),
    ],
    t.ElicitCompleteNotificationParams: [
        Case(t.ElicitCompleteNotificationParams(elicitation_id="el-1"))
    ],
    t.ElicitCompleteNotification: [
        _note(
            t.ElicitCompleteNotification(
                params=t.ElicitCompleteNotificationParams(elicitation_id="el-1")
            )
        )
    ],
    # Multi round-trip
    t.InputRequiredResult: [
        Case(INPUT_REQUIRED),
        Case(t.InputRequiredResult(request_state="load-shed")),
    ],
    # Tasks
    t.TaskMetadata: [Case(t.TaskMetadata(ttl=1000)), Case(t.TaskMetadata())],
    t.RelatedTaskMetadata: [Case(t.RelatedTaskMetadata(task_id="task-1"))],
    t.Task: [Case(TASK), Case(t.Task(**TASK_FIELDS))],
    t.CreateTaskResult: [Case(t.CreateTaskResult(task=TASK))],
    t.GetTaskRequestParams: [Case(t.GetTaskRequestParams(task_id="task-1"))],
    t.GetTaskRequest: [_req(t.GetTaskRequest(params=t.GetTaskRequestParams(task_id="t")))],
    t.GetTaskResult: [
        Case(t.GetTaskResult(**TASK_FIELDS)),
        Case(t.GetTaskResult(**{**TASK_FIELDS, "ttl": None})),
    ],
    t.GetTaskPayloadRequestParams: [Case(t.GetTaskPayloadRequestParams(task_id="t"))],
    t.GetTaskPayloadRequest: [
        _req(t.GetTaskPayloadRequest(params=t.GetTaskPayloadRequestParams(task_id="t")))
    ],
    t.GetTaskPayloadResult: [
        Case(t.GetTaskPayloadResult.model_validate({"content": [wire(TEXT)], "isError": False}))
    ],
    t.CancelTaskRequestParams: [Case(t.CancelTaskRequestParams(task_id="t"))],
    t.CancelTaskRequest: [_req(t.CancelTaskRequest(params=t.CancelTaskRequestParams(task_id="t")))],
    t.CancelTaskResult: [Case(t.CancelTaskResult(**{**TASK_FIELDS, "status": "cancelled"}))],
    t.ListTasksRequest: [_req(t.ListTasksRequest(params=t.PaginatedRequestParams(cursor="c")))],
    t.ListTasksResult: [Case(t.ListTasksResult(tasks=[TASK], next_cursor="n"))],
    t.TaskStatusNotificationParams: [Case(t.TaskStatusNotificationParams(**TASK_FIELDS))],
    t.TaskStatusNotification: [
        _note(t.TaskStatusNotification(params=t.TaskStatusNotificationParams(**TASK_FIELDS)))
    ],
}

# Unions that the schemas also name: each member sample must satisfy the union.
UNION_SAMPLES: dict[str, list[BaseModel]] = {
    "ContentBlock": [TEXT, IMAGE, AUDIO, LINK, EMBEDDED],
    "SamplingMessageContentBlock": [TEXT, IMAGE, AUDIO, TOOL_USE, TOOL_RESULT],
    "PrimitiveSchemaDefinition": [
        STRING_SCHEMA,
        NUMBER_SCHEMA,
        BOOLEAN_SCHEMA,
        UNTITLED_SINGLE,
        TITLED_SINGLE,
        UNTITLED_MULTI,
        TITLED_MULTI,
        LEGACY_ENUM,
    ],
    "EnumSchema": [UNTITLED_SINGLE, TITLED_SINGLE, UNTITLED_MULTI, TITLED_MULTI, LEGACY_ENUM],
    "SingleSelectEnumSchema": [UNTITLED_SINGLE, TITLED_SINGLE],
    "MultiSelectEnumSchema": [UNTITLED_MULTI, TITLED_MULTI],
    "ElicitRequestParams": [FORM, URL_PARAMS],
    "InputRequest": [
        t.ElicitRequest(params=FORM),
        t.CreateMessageRequest(params=SAMPLING_PARAMS),
        t.ListRootsRequest(),
    ],
    "InputResponse": [ELICIT_ACCEPT, CREATE_MESSAGE_RESULT, ROOTS_RESULT],
}


def _schema_cases() -> list[Any]:
    params = []
    for cls, cases in SAMPLES.items():
        for index, case in enumerate(cases):
            for revision in case.revisions:
                location = first_location(revision, locations(cls.__name__))
                if location is not None:
                    params.append(
                        pytest.param(
                            case, revision, location, id=f"{cls.__name__}[{index}]-{revision}"
                        )
                    )
    return params


# ---------------------------------------------------------------------------
# Harness sanity
# ---------------------------------------------------------------------------


def test_every_revision_schema_loads_with_its_dialect() -> None:
    dialects = {rev: load_schema(rev)["$schema"] for rev in REVISIONS}
    assert {rev for rev, d in dialects.items() if "draft-07" in d} == set(REVISIONS[:3])
    assert {rev for rev, d in dialects.items() if "2020-12" in d} == set(REVISIONS[3:])


def test_missing_spec_dir_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    load_schema.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="MCP_SPEC_DIR"):
            load_schema("2026-07-28")
    finally:
        monkeypatch.delenv("MCP_SPEC_DIR")
        load_schema.cache_clear()


@pytest.mark.parametrize("revision", REVISIONS)
def test_schema_harness_rejects_a_bad_instance(revision: str) -> None:
    # Proves the validators really check, and that nested $refs resolve.
    check = validator(revision, "CallToolResult")
    check.validate({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"})
    with pytest.raises(SchemaError):
        check.validate({"content": [{"type": "text"}], "resultType": "complete"})


def test_every_schema_backed_model_has_a_sample() -> None:
    missing = []
    for name in t.__all__:
        obj = getattr(t, name)
        if not (isinstance(obj, type) and issubclass(obj, BaseModel)) or obj is t.MCPModel:
            continue
        in_schema = any(first_location(rev, locations(obj.__name__)) for rev in REVISIONS)
        if in_schema and not SAMPLES.get(obj):
            missing.append(name)
    assert missing == []


def test_samples_reach_every_revision() -> None:
    per_revision = {rev: 0 for rev in REVISIONS}
    for param in _schema_cases():
        per_revision[param.values[1]] += 1
    assert all(count >= 60 for count in per_revision.values()), per_revision


# ---------------------------------------------------------------------------
# Schema conformance
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "revision", "location"), _schema_cases())
def test_dump_validates_against_schema(case: Case, revision: str, location: str) -> None:
    instance = {**case.envelope, **wire(case.model)}
    validator(revision, location).validate(instance)


def _union_cases() -> list[Any]:
    params = []
    for union, members in UNION_SAMPLES.items():
        for revision in REVISIONS:
            definition = resolve(revision, union)
            if definition is None or "anyOf" not in definition:
                continue
            for member in members:
                name = type(member).__name__
                if first_location(revision, locations(name)) is None:
                    continue
                params.append(
                    pytest.param(member, revision, union, id=f"{union}-{name}-{revision}")
                )
    return params


@pytest.mark.parametrize(("member", "revision", "union"), _union_cases())
def test_union_members_validate_against_union_schema(
    member: BaseModel, revision: str, union: str
) -> None:
    validator(revision, union).validate(wire(member))


def test_input_maps_validate_against_2026_schema() -> None:
    rev = "2026-07-28"
    assert INPUT_REQUIRED.input_requests is not None
    requests = TypeAdapter(t.InputRequests).dump_python(
        INPUT_REQUIRED.input_requests, by_alias=True, exclude_none=True, mode="json"
    )
    responses = TypeAdapter(t.InputResponses).dump_python(
        INPUT_RESPONSES, by_alias=True, exclude_none=True, mode="json"
    )
    validator(rev, "InputRequests").validate(requests)
    validator(rev, "InputResponses").validate(responses)


# ---------------------------------------------------------------------------
# Round trips, aliases, extras
# ---------------------------------------------------------------------------

_ALL_SAMPLES = [
    pytest.param(case.model, id=f"{cls.__name__}[{i}]")
    for cls, cases in SAMPLES.items()
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize("model", _ALL_SAMPLES)
def test_validate_dump_round_trip_is_lossless(model: BaseModel) -> None:
    dumped = wire(model)
    again = type(model).model_validate(dumped)
    assert wire(again) == dumped
    assert again == model


@pytest.mark.parametrize("model", _ALL_SAMPLES)
def test_unknown_fields_and_meta_survive_round_trip(model: BaseModel) -> None:
    dumped = wire(model)
    dumped["x-future-field"] = {"nested": [1, "two", None]}
    if "meta" in type(model).model_fields:
        dumped["_meta"] = {"com.example/trace": "abc", "progressToken": 5}
    again = type(model).model_validate(dumped)
    assert wire(again) == dumped


def test_extras_nested_inside_lists_and_unions_survive() -> None:
    raw = {
        "content": [
            {"type": "text", "text": "a", "newThing": 1, "_meta": {"k": "v"}},
            {"type": "resource", "resource": {"uri": "x:y", "blob": "AA", "zz": True}},
        ],
        "structuredContent": {"any": ["json", 1]},
        "resultType": "complete",
        "_meta": SERVER_META,
        "vendorExtension": {"a": 1},
    }
    result = t.CallToolResult.model_validate(raw)
    assert isinstance(result.content[1], t.EmbeddedResource)
    assert isinstance(result.content[1].resource, t.BlobResourceContents)
    assert result.model_extra == {"vendorExtension": {"a": 1}}
    assert wire(result) == raw


def test_every_field_uses_camel_case_or_an_explicit_wire_name() -> None:
    explicit = {"meta": "_meta", "schema_": "$schema"}
    seen_explicit = set()
    for name in t.__all__:
        obj = getattr(t, name)
        if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
            continue
        assert obj.model_config.get("defer_build") is True, name
        assert obj.model_config.get("extra") == "allow", name
        for attr, info in obj.model_fields.items():
            expected = explicit.get(attr, to_camel(attr))
            assert info.alias == expected, f"{name}.{attr}"
            if attr in explicit:
                seen_explicit.add(attr)
    assert seen_explicit == set(explicit)


def test_wire_names_are_camel_case() -> None:
    result = t.ListToolsResult(tools=[TOOL], next_cursor="n", meta=SERVER_META, **CACHE)
    dumped = wire(result)
    assert set(dumped) == {"tools", "nextCursor", "ttlMs", "cacheScope", "resultType", "_meta"}
    tool = dumped["tools"][0]
    assert {"inputSchema", "outputSchema", "_meta"} <= set(tool)
    assert tool["annotations"] == {"title": "Add", "readOnlyHint": True, "openWorldHint": False}
    assert tool["execution"] == {"taskSupport": "optional"}
    assert wire(FORM)["requestedSchema"] == FORM_SCHEMA
    assert wire(t.RequestedSchema(schema_="s", properties={}))["$schema"] == "s"
    assert set(wire(URL_PARAMS)) == {"mode", "message", "url", "elicitationId"}
    assert wire(TOOL_RESULT)["toolUseId"] == "call-1"


def test_population_by_python_name_and_by_alias_agree() -> None:
    by_name = t.CallToolRequestParams(
        name="add", meta=META_2026, input_responses={"k": ELICIT_ACCEPT}, request_state="s"
    )
    by_alias = t.CallToolRequestParams.model_validate(
        {
            "name": "add",
            "_meta": META_2026,
            "inputResponses": {
                "k": {"action": "accept", "content": wire(ELICIT_ACCEPT)["content"]}
            },
            "requestState": "s",
        }
    )
    by_name_dict = t.CallToolRequestParams.model_validate(
        {
            "name": "add",
            "meta": META_2026,
            "input_responses": {"k": wire(ELICIT_ACCEPT)},
            "request_state": "s",
        }
    )
    assert by_name == by_alias == by_name_dict
    assert by_alias.meta == META_2026
    assert by_alias.request_state == "s"
    kwargs: dict[str, Any] = {"uriTemplate": "a/{b}", "name": "t", "mimeType": "text/plain"}
    template = t.ResourceTemplate(**kwargs)
    assert template.uri_template == "a/{b}"
    assert template.mime_type == "text/plain"
    assert template.model_extra == {}


def test_urls_are_echoed_exactly() -> None:
    odd = "HTTP://EXAMPLE.com:80/a/./b/../c?q=%7e#F"
    assert wire(t.Resource(uri=odd, name="r"))["uri"] == odd
    assert wire(t.ElicitRequestURLParams(message="m", url=odd))["url"] == odd
    assert wire(t.Root(uri="file:///C:/Users/x y"))["uri"] == "file:///C:/Users/x y"
    assert wire(t.Icon(src=odd))["src"] == odd


def test_legacy_results_carry_no_result_type_unless_set() -> None:
    assert wire(t.EmptyResult()) == {}
    assert "resultType" not in wire(t.CallToolResult(content=[]))
    assert wire(t.CallToolResult(content=[], result_type="complete"))["resultType"] == "complete"
    assert wire(t.InputRequiredResult(request_state="s"))["resultType"] == "input_required"


def test_required_nulls_survive_exclude_none() -> None:
    assert wire(TASK)["ttl"] is None
    assert wire(t.CreateTaskResult(task=TASK))["task"]["ttl"] is None
    assert wire(t.LoggingMessageNotificationParams(level="info", data=None)) == {
        "level": "info",
        "data": None,
    }
    # Without exclude_none, or when the caller excludes the field, nothing is forced in.
    assert TASK.model_dump(by_alias=True)["ttl"] is None
    assert "ttl" not in TASK.model_dump(by_alias=True, exclude_none=True, exclude={"ttl"})
    assert TASK.model_dump(exclude_none=True)["ttl"] is None
    assert "taskId" not in TASK.model_dump(exclude_none=True)


# ---------------------------------------------------------------------------
# Discrimination
# ---------------------------------------------------------------------------

_CONTENT = TypeAdapter(t.ContentBlock)


@pytest.mark.parametrize(
    ("raw", "cls"),
    [
        ({"type": "text", "text": "x"}, t.TextContent),
        ({"type": "image", "data": "AA", "mimeType": "image/png"}, t.ImageContent),
        ({"type": "audio", "data": "AA", "mimeType": "audio/wav"}, t.AudioContent),
        ({"type": "resource_link", "uri": "x:y", "name": "n"}, t.ResourceLink),
        ({"type": "resource", "resource": {"uri": "x:y", "text": "t"}}, t.EmbeddedResource),
    ],
)
def test_content_block_discriminates_on_type(raw: dict[str, Any], cls: type[BaseModel]) -> None:
    block = _CONTENT.validate_python(raw)
    assert type(block) is cls
    assert _CONTENT.dump_python(block, by_alias=True, exclude_none=True, mode="json") == raw


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "video", "data": "AA"},
        {"text": "no type"},
        {"type": "tool_use", "id": "1", "name": "n", "input": {}},
        {"type": "image", "data": "AA"},
        "text",
    ],
)
def test_content_block_rejects_unknown_or_incomplete(raw: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        _CONTENT.validate_python(raw)


def test_sampling_content_accepts_tool_blocks_single_or_list() -> None:
    single = t.SamplingMessage.model_validate({"role": "assistant", "content": wire(TOOL_USE)})
    listed = t.SamplingMessage.model_validate(
        {"role": "user", "content": [wire(TOOL_RESULT), wire(TEXT)]}
    )
    assert isinstance(single.content, t.ToolUseContent)
    assert [type(b) for b in listed.content_as_list] == [t.ToolResultContent, t.TextContent]
    assert single.content_as_list == [single.content]
    result = t.CreateMessageResultWithTools.model_validate(
        {"role": "assistant", "content": [wire(TOOL_USE)], "model": "m", "stopReason": "toolUse"}
    )
    assert isinstance(result, t.CreateMessageResult)
    assert isinstance(result.content_as_list[0], t.ToolUseContent)


_ELICIT = TypeAdapter(t.ElicitRequestParams)


def test_elicit_params_without_mode_are_form() -> None:
    raw = {"message": "Name?", "requestedSchema": FORM_SCHEMA}  # 2025-06-18 shape
    params = _ELICIT.validate_python(raw)
    assert isinstance(params, t.ElicitRequestFormParams)
    assert params.mode == "form"
    assert params.requested_schema == FORM_SCHEMA


def test_elicit_params_pick_url_or_form_by_mode() -> None:
    form = _ELICIT.validate_python({"mode": "form", "message": "m", "requestedSchema": FORM_SCHEMA})
    url_1125 = _ELICIT.validate_python(
        {"mode": "url", "message": "m", "url": URL, "elicitationId": "e1"}
    )
    url_2026 = _ELICIT.validate_python({"mode": "url", "message": "m", "url": URL})
    assert isinstance(form, t.ElicitRequestFormParams)
    assert isinstance(url_1125, t.ElicitRequestURLParams)
    assert url_1125.elicitation_id == "e1"
    assert isinstance(url_2026, t.ElicitRequestURLParams)
    assert url_2026.elicitation_id is None
    assert url_2026.url == URL
    request = t.ElicitRequest.model_validate(
        {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": URL}}
    )
    assert isinstance(request.params, t.ElicitRequestURLParams)
    assert isinstance(_ELICIT.validate_python(URL_PARAMS), t.ElicitRequestURLParams)


@pytest.mark.parametrize(
    "raw",
    [
        {"mode": "url", "message": "m"},  # url mode without url
        {"mode": "url", "message": "m", "requestedSchema": FORM_SCHEMA},
        {"message": "m", "url": URL},  # no mode means form, and form needs a schema
        {"mode": "sms", "message": "m", "url": URL},
        {"mode": None, "message": "m", "requestedSchema": FORM_SCHEMA},
    ],
)
def test_elicit_params_reject_inconsistent_mode(raw: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        _ELICIT.validate_python(raw)


def test_primitive_schema_definitions_are_told_apart() -> None:
    schema = t.RequestedSchema.model_validate(
        {
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "n": {"type": "integer", "default": 3},
                "b": {"type": "boolean"},
                "e1": {"type": "string", "enum": ["a"]},
                "e2": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
                "e3": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
                "e4": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
                "e5": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
            },
        }
    )
    kinds = {key: type(value) for key, value in schema.properties.items()}
    assert kinds == {
        "s": t.StringSchema,
        "n": t.NumberSchema,
        "b": t.BooleanSchema,
        "e1": t.UntitledSingleSelectEnumSchema,
        "e2": t.TitledSingleSelectEnumSchema,
        "e3": t.UntitledMultiSelectEnumSchema,
        "e4": t.TitledMultiSelectEnumSchema,
        "e5": t.LegacyTitledEnumSchema,
    }

    class LabelledString(t.StringSchema):
        pass

    custom = t.RequestedSchema(properties={"x": LabelledString(title="X")})
    assert type(custom.properties["x"]) is LabelledString
    # An integer default stays an integer on the wire.
    assert wire(schema)["properties"]["n"] == {"type": "integer", "default": 3}
    with pytest.raises(pydantic.ValidationError):
        t.RequestedSchema.model_validate(
            {"type": "object", "properties": {"nested": {"type": "object"}}}
        )


def test_input_required_result_parses_embedded_requests() -> None:
    raw = wire(INPUT_REQUIRED)
    parsed = t.InputRequiredResult.model_validate(raw)
    assert parsed.input_requests is not None
    kinds = {key: type(value) for key, value in parsed.input_requests.items()}
    assert kinds == {
        "email": t.ElicitRequest,
        "pay": t.ElicitRequest,
        "llm": t.CreateMessageRequest,
        "roots": t.ListRootsRequest,
    }
    pay = parsed.input_requests["pay"]
    assert isinstance(pay, t.ElicitRequest)
    assert isinstance(pay.params, t.ElicitRequestURLParams)
    assert parsed.request_state == "opaque-state"
    assert raw["resultType"] == "input_required"
    with pytest.raises(pydantic.ValidationError):
        t.InputRequiredResult.model_validate({**raw, "resultType": "complete"})
    with pytest.raises(pydantic.ValidationError):
        t.InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": {"x": {"method": "tools/call"}}}
        )


def test_input_responses_are_typed_by_shape() -> None:
    params = t.GetPromptRequestParams.model_validate(
        {
            "name": "p",
            "_meta": META_2026,
            "inputResponses": {
                "a": {"action": "decline"},
                "b": {"roots": [{"uri": "file:///x"}]},
                "c": {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"},
            },
            "requestState": "st",
        }
    )
    assert params.input_responses is not None
    kinds = {key: type(value) for key, value in params.input_responses.items()}
    assert kinds == {"a": t.ElicitResult, "b": t.ListRootsResult, "c": t.CreateMessageResult}
    with pytest.raises(pydantic.ValidationError):
        t.ReadResourceRequestParams.model_validate(
            {"uri": "x:y", "inputResponses": {"a": {"action": "maybe"}}}
        )


def test_message_unions_discriminate_on_method() -> None:
    client = TypeAdapter(t.ClientRequest)
    assert type(client.validate_python({"method": "ping"})) is t.PingRequest
    call = client.validate_python({"method": "tools/call", "params": {"name": "x"}})
    assert isinstance(call, t.CallToolRequest)
    assert call.params.name == "x"
    server_note = TypeAdapter(t.ServerNotification).validate_python(
        {"method": "notifications/elicitation/complete", "params": {"elicitationId": "e"}}
    )
    assert isinstance(server_note, t.ElicitationCompleteNotification)
    with pytest.raises(pydantic.ValidationError):
        client.validate_python({"method": "sampling/createMessage", "params": {}})
    with pytest.raises(pydantic.ValidationError):
        TypeAdapter(t.ServerRequest).validate_python({"method": "tools/list"})


# ---------------------------------------------------------------------------
# Invalid input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "raw"),
    [
        (t.Tool, {"name": "x"}),
        (t.Tool, {"name": "x", "inputSchema": "not an object"}),
        (t.TextContent, {"type": "image", "text": "x"}),
        (t.SetLevelRequestParams, {"level": "verbose"}),
        (t.LoggingMessageNotificationParams, {"level": "info"}),
        (t.ElicitResult, {"action": "maybe"}),
        (t.ElicitResult, {"action": "accept", "content": {"nested": {"a": 1}}}),
        (t.ElicitResult, {"action": "accept", "content": {"list": [1, 2]}}),
        (t.Annotations, {"priority": 1.5}),
        (t.Annotations, {"audience": ["robot"]}),
        (t.ModelPreferences, {"costPriority": -0.1}),
        (t.CancelledNotificationParams, {"requestId": True}),
        (t.CancelledNotificationParams, {"requestId": 1.5}),
        (t.CancelledNotificationParams, {"requestId": None, "reason": 3}),
        (t.ProgressNotificationParams, {"progressToken": 1.0, "progress": 1}),
        (t.ProgressNotificationParams, {"progressToken": "t"}),
        (t.InputRequiredResult, {"resultType": "input_required"}),
        (t.CallToolRequestParams, {"name": 5}),
        (t.CallToolResult, {"content": [{"type": "text"}]}),
        (t.CallToolResult, {"isError": True}),
        (t.DiscoverResult, {"supportedVersions": ["2026-07-28"]}),
        (t.ListToolsResult, {"tools": [], "cacheScope": "shared"}),
        (t.CompleteRequestParams, {"ref": {"type": "ref/tool", "name": "x"}, "argument": {}}),
        (t.Task, {"taskId": "t", "status": "paused", "createdAt": "a", "lastUpdatedAt": "b"}),
        (t.Task, {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b"}),
        (t.ElicitRequestFormParams, {"mode": "url", "message": "m", "requestedSchema": {}}),
        (t.ReadResourceResult, {"contents": [{"text": "no uri"}]}),
        (t.SamplingMessage, {"role": "system", "content": {"type": "text", "text": "x"}}),
        (t.Implementation, {"name": "n"}),
    ],
)
def test_invalid_input_raises_validation_error(cls: type[BaseModel], raw: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        cls.model_validate(raw)


def test_ids_keep_their_json_type() -> None:
    assert t.CancelledNotificationParams.model_validate({"requestId": 1}).request_id == 1
    assert t.CancelledNotificationParams.model_validate({"requestId": "1"}).request_id == "1"
    assert isinstance(1, t.RequestId)
    assert isinstance("x", t.ProgressToken)
    content = t.ElicitResult.model_validate(
        {"action": "accept", "content": {"b": True, "i": 1, "f": 1.5, "s": "1"}}
    ).content
    assert content == {"b": True, "i": 1, "f": 1.5, "s": "1"}
    assert content is not None
    assert [type(v) for v in content.values()] == [bool, int, float, str]


def test_public_names() -> None:
    assert len(t.__all__) == len(set(t.__all__))
    missing = [name for name in t.__all__ if not hasattr(t, name)]
    assert missing == []
    assert t.ElicitationCompleteNotificationParams is t.ElicitCompleteNotificationParams
    assert get_args(t.LoggingLevel) == (
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    )


def test_module_is_pure() -> None:
    source = Path(t.__file__).read_text(encoding="utf-8")
    imported = {
        line.split()[1].split(".")[0]
        for line in source.splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imported <= {"typing", "pydantic"}, imported
