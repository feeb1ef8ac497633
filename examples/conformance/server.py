"""The server side of the MCP conformance suite, written with this project's API.

    python examples/conformance/server.py --port 3001      # serves http://127.0.0.1:3001/mcp

Everything the suite's server scenarios call (`conformance list`, and each
scenario's description): the `test_*` tools, the `test://` resources and the
template, the prompts, completion, logging, subscriptions. One process serves
both protocol generations: 2025-11-25 clients get sessions (`initialize`),
2026-07-28 clients send stateless requests, and the questions a tool asks
(sampling, elicitation, roots) travel as server-to-client requests on the first
and as `InputRequiredResult` rounds on the second, from the same resolvers.

Where the high-level API has no public way to do what a scenario needs, the
workaround is marked `GAP:` (see examples/conformance/README.md).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import logging
import struct
import wave
import zlib
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field

from mcp_adapters.http import HTTPServer, http_server
from mcp_adapters.server import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    RequestScope,
    Resolve,
    Sample,
    TaskSettings,
)
from mcp_adapters.server._resolve import Question
from mcp_core import Era, InputReceived, MCPError, ServerConnection, State, form_schema
from mcp_core.types import (
    AudioContent,
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    TextContent,
    TextResourceContents,
)

log = logging.getLogger("conformance-server")


# ----------------------------------------------------------------- media


def _png_1x1_red() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)  # 10 ms of silence
    return buffer.getvalue()


PNG = _png_1x1_red()
PNG_B64 = base64.b64encode(PNG).decode()
WAV_B64 = base64.b64encode(_wav_silence()).decode()


# ---------------------------------------------------------------- server


class ConformanceServer(MCPServer):
    """`MCPServer`, plus list-changed notifications to whoever is listening.

    GAP: MCPServer keeps no registry of open `subscriptions/listen` streams (or
    legacy sessions) and has no `notify_*_list_changed()`: adding a tool only
    clears its caches. So this subclass remembers the connections it saw (the
    public `handle` hook) and notifies them through the core connection.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listening: dict[ServerConnection, RequestScope] = {}  # 2026-07-28
        self._sessions: dict[ServerConnection, RequestScope] = {}  # legacy

    async def handle(self, request: Any, scope: RequestScope) -> None:
        connection = scope.connection
        if request.method == "subscriptions/listen":
            self._prune()
            self._listening[connection] = scope
        elif connection.era is Era.LEGACY and connection not in self._sessions:
            self._prune()
            self._sessions[connection] = scope
        if (
            request.method == "prompts/get"
            and connection.era is Era.MODERN
            and request.params.name == "test_input_required_result_prompt"
        ):
            _prompt_input_required(request, scope)
            return
        await super().handle(request, scope)

    def _prune(self) -> None:
        """Forget listen streams that ended and sessions that closed."""
        for connection in list(self._listening):
            if connection.requests_in_flight[1] == 0:  # its one request, the listen, ended
                del self._listening[connection]
        for connection in list(self._sessions):
            if connection.state in (State.CLOSED, State.ERROR):
                del self._sessions[connection]

    def list_changed(self, method: str) -> int:
        """Tell every listen stream (2026-07-28) and every session (legacy)."""
        self._prune()
        told = 0
        for connection, scope in list(self._listening.items()):
            told += connection.notify_subscribers(method)
            scope.wake()
        for connection, scope in list(self._sessions.items()):
            if connection.state is State.READY:
                connection.send_notification(method)
                told += 1
                scope.wake()
        return told


mcp = ConformanceServer(
    "mcp-sansio-conformance-server",
    version="0.1.0",
    instructions="Conformance test server for mcp-sansio.",
    # ctx.elicit in prompts works on 2026-07-28 only with replay (see server.py).
    replay_elicitation=True,
    # The suite polls tasks every 200 ms; the bodies look at the store as often.
    tasks=TaskSettings(poll_interval=0.2),
)


# ------------------------------------------------------------------ tools


@mcp.tool(structured_output=False)
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@mcp.tool()
def test_image_content() -> ImageContent:
    """Returns image content (a 1x1 red PNG)."""
    return ImageContent(type="image", data=PNG_B64, mime_type="image/png")


@mcp.tool()
def test_audio_content() -> AudioContent:
    """Returns audio content (a short WAV)."""
    return AudioContent(type="audio", data=WAV_B64, mime_type="audio/wav")


@mcp.tool()
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        ),
    )


@mcp.tool()
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Returns text, image and resource content together."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=PNG_B64, mime_type="image/png"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            ),
        ),
    ]


@mcp.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    await ctx.info("Tool execution started")
    await anyio.sleep(0.05)
    await ctx.info("Tool processing data")
    await anyio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@mcp.tool(structured_output=False)
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info level (only if the request asked for logs, on 2026-07-28)."""
    await ctx.info("test_logging_tool ran")
    return "Logging tool executed"


@mcp.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 out of 100."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await ctx.report_progress(progress, 100, f"step {step + 1} of 3")
    return "Tool with progress executed successfully"


@mcp.tool(structured_output=False)
def test_error_handling() -> str:
    """Always fails: the result carries isError."""
    raise RuntimeError("This tool intentionally returns an error for testing")


# --- asking the client: sampling and elicitation (both eras, same resolvers)


def _sample_prompt(prompt: str) -> Sample:
    return Sample(
        [{"role": "user", "content": {"type": "text", "text": prompt}}],
        max_tokens=100,
    )


@mcp.tool(structured_output=False)
def test_sampling(prompt: str, answer: Annotated[Any, Resolve(_sample_prompt)]) -> str:
    """Asks the client's LLM (sampling/createMessage) with the given prompt."""
    return f"LLM response: {_text_of(answer)}"


class UserInfo(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


def _ask_user_info(message: str) -> Elicit[UserInfo]:
    return Elicit(message, UserInfo)


@mcp.tool(structured_output=False)
def test_elicitation(
    message: str,
    answer: Annotated[ElicitationResult[UserInfo], Resolve(_ask_user_info)],
) -> str:
    """Asks the user (elicitation/create) for a username and an email."""
    if isinstance(answer, AcceptedElicitation):
        return f"User response: action=accept, content={answer.data.model_dump_json()}"
    return f"User response: action={answer.action}"


class Sep1034Defaults(BaseModel):
    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field(
        default="active", description="User status"
    )
    verified: bool = Field(default=True, description="Verification status")


def _ask_with_defaults() -> Elicit[Sep1034Defaults]:
    return Elicit("Please review and update the form fields with defaults", Sep1034Defaults)


@mcp.tool(structured_output=False)
def test_elicitation_sep1034_defaults(
    answer: Annotated[ElicitationResult[Sep1034Defaults], Resolve(_ask_with_defaults)],
) -> str:
    """Asks for a form whose every primitive field has a default (SEP-1034)."""
    content = answer.data.model_dump() if isinstance(answer, AcceptedElicitation) else None
    return f"Elicitation completed: action={answer.action}, content={json.dumps(content)}"


class Sep1330Enums(BaseModel):
    untitledSingle: Literal["option1", "option2", "option3"] = Field(
        description="Untitled single-select"
    )
    titledSingle: Literal["value1", "value2", "value3"] = Field(
        description="Titled single-select",
        json_schema_extra={
            "enumTitles": {
                "value1": "First Option",
                "value2": "Second Option",
                "value3": "Third Option",
            }
        },
    )
    untitledMulti: list[Literal["option1", "option2", "option3"]] = Field(
        description="Untitled multi-select"
    )
    titledMulti: list[Literal["value1", "value2", "value3"]] = Field(
        description="Titled multi-select",
        json_schema_extra={
            "enumTitles": {
                "value1": "First Choice",
                "value2": "Second Choice",
                "value3": "Third Choice",
            }
        },
    )


class RawElicit(Question):
    """A form elicitation with a hand-written `requestedSchema`.

    GAP: `form_schema` renders titled enums as `oneOf` on 2025-11-25 and only
    emits the deprecated `enumNames` shape on 2025-06-18, so the legacy
    titled enum SEP-1330 still lists cannot come from a model; and no public
    question type takes a raw schema. The outcome is the raw `ElicitResult`.
    """

    method = "elicitation/create"

    def __init__(self, message: str, schema: dict[str, Any]) -> None:
        self.message = message
        self.schema = schema

    def params(self, revision: str) -> dict[str, Any]:
        return {"mode": "form", "message": self.message, "requestedSchema": self.schema}

    def outcome(self, answer: Any) -> Any:
        return answer if isinstance(answer, ElicitResult) else ElicitResult.model_validate(answer)


def _ask_enums() -> RawElicit:
    schema = form_schema(Sep1330Enums, revision="2025-11-25")
    schema["properties"]["legacyEnum"] = {
        "type": "string",
        "title": "Legacy titled enum",
        "description": "Legacy titled enum (enumNames, deprecated)",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    }
    return RawElicit("Please pick from the enum fields", schema)


@mcp.tool(structured_output=False)
def test_elicitation_sep1330_enums(answer: Annotated[Any, Resolve(_ask_enums)]) -> str:
    """Asks for a form with the five SEP-1330 enum shapes."""
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


def _ask_stream_info() -> Elicit[UserInfo]:
    return Elicit("Please provide your information", UserInfo)


@mcp.tool(structured_output=False)
async def test_streaming_elicitation(
    answer: Annotated[ElicitationResult[UserInfo], Resolve(_ask_stream_info)],
) -> str:
    """Asks for user info; on 2026-07-28 the question is an InputRequiredResult."""
    return f"User response: action={answer.action}"


def _needs_sampling() -> Sample:
    return _sample_prompt("This tool needs the sampling capability")


@mcp.tool(structured_output=False)
def test_missing_capability(answer: Annotated[Any, Resolve(_needs_sampling)]) -> str:
    """Needs sampling: a client that did not declare it gets -32021 (2026-07-28)."""
    return "sampling was available"


# --- 2020-12 schema, mirrored headers, reconnection

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@mcp.tool(name="json_schema_2020_12_tool", structured_output=False)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return f"Received contact for {name or 'anonymous'}"


# GAP: `@mcp.tool()` has no `input_schema=` option: the schema always comes from
# the signature, so a hand-written 2020-12 schema ($anchor, allOf, if/then/else)
# can only be put in place on the registered spec.
mcp._tools["json_schema_2020_12_tool"].input_schema = JSON_SCHEMA_2020_12
mcp._list_cache.clear()


@mcp.tool(structured_output=False)
def test_x_mcp_header(
    region: Annotated[
        str,
        Field(
            description="Mirrored into Mcp-Param-Region",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ],
) -> str:
    """Echoes `region`, which clients mirror into the Mcp-Param-Region header."""
    return f"region={region}"


#: The running HTTP server (set by main), for what `RequestScope` does not offer.
RUNNING: HTTPServer | None = None


@mcp.tool(structured_output=False)
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call (SEP-1699); the answer comes on the resumed stream."""
    # Something on the stream first: it becomes SSE (priming event, then this).
    await ctx.info("closing the SSE stream now; reconnect with Last-Event-ID")
    # GAP: a tool cannot close its own stream through `Context`/`RequestScope`;
    # the sans-IO endpoint can (close_stream), given the session id, which the
    # scope does not carry either: look it up by connection.
    running = RUNNING
    if running is not None:
        sessions = running.endpoint.sessions
        session_id = next((sid for sid, c in sessions.items() if c is ctx.scope.connection), None)
        if session_id is not None and running.endpoint.close_stream(session_id, ctx.request_id):
            running.wake()
            await anyio.sleep(0.2)  # answer while the client is away
    return "Reconnection test completed successfully"


_dynamic = {"tool": False, "prompts": 0}


@mcp.tool(structured_output=False)
def test_trigger_tool_change() -> str:
    """Adds (or removes) a tool, then sends tools/list_changed."""
    if _dynamic["tool"]:
        mcp.remove_tool("test_dynamic_tool")
    else:
        mcp.add_tool(_dynamic_tool, name="test_dynamic_tool")
    _dynamic["tool"] = not _dynamic["tool"]
    told = mcp.list_changed("notifications/tools/list_changed")
    return f"tool list changed; {told} listener(s) told"


def _dynamic_tool() -> str:
    """A tool that comes and goes."""
    return "dynamic"


@mcp.tool(structured_output=False)
def test_trigger_prompt_change() -> str:
    """Adds a prompt, then sends prompts/list_changed."""
    # GAP: MCPServer has remove_tool but no remove_prompt, so prompts only come.
    _dynamic["prompts"] += 1
    name = f"test_dynamic_prompt_{_dynamic['prompts']}"
    mcp.prompt(name=name, description="A prompt added at run time.")(_dynamic_prompt)
    told = mcp.list_changed("notifications/prompts/list_changed")
    return f"prompt list changed; {told} listener(s) told"


def _dynamic_prompt() -> str:
    return "A dynamic prompt."


# --- 2026-07-28 InputRequiredResult (SEP-2322); resolver names are the input keys


class Name(BaseModel):
    name: str


class Confirm(BaseModel):
    ok: bool


class Color(BaseModel):
    color: str


class PromptContext(BaseModel):
    context: str


def user_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def capital_question() -> Sample:
    return Sample(
        [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        max_tokens=100,
    )


def client_roots() -> ListRoots:
    return ListRoots()


def confirm() -> Elicit[Confirm]:
    return Elicit("Please confirm", Confirm)


def greeting() -> Sample:
    return Sample(
        [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
        max_tokens=50,
    )


def step1() -> Elicit[Name]:
    return Elicit("Step 1: What is your name?", Name)


def step2(first: Annotated[Name, Resolve(step1)]) -> Elicit[Color]:
    return Elicit("Step 2: What is your favorite color?", Color)


def _text_of(message: Any) -> str:
    content = message.content
    return getattr(content, "text", None) or str(content)


@mcp.tool(structured_output=False)
def test_input_required_result_elicitation(name: Annotated[Name, Resolve(user_name)]) -> str:
    """Asks for a name (elicitation), then greets."""
    return f"Hello, {name.name}!"


@mcp.tool(structured_output=False)
def test_input_required_result_sampling(
    answer: Annotated[Any, Resolve(capital_question)],
) -> str:
    """Asks the client's LLM a question (sampling)."""
    return f"The model said: {_text_of(answer)}"


@mcp.tool(structured_output=False)
def test_input_required_result_list_roots(roots: Annotated[Any, Resolve(client_roots)]) -> str:
    """Asks the client for its roots."""
    return "Client roots: " + ", ".join(str(root.uri) for root in roots.roots)


@mcp.tool(structured_output=False)
def test_input_required_result_request_state(ok: Annotated[Confirm, Resolve(confirm)]) -> str:
    """Asks for a confirmation; the retry's requestState is verified (sealed by the engine)."""
    return f"state-ok: confirmed={ok.ok}"


@mcp.tool(structured_output=False)
def test_input_required_result_multiple_inputs(
    name: Annotated[Name, Resolve(user_name)],
    hello: Annotated[Any, Resolve(greeting)],
    roots: Annotated[Any, Resolve(client_roots)],
) -> str:
    """Asks three questions at once: elicitation, sampling and roots."""
    return f"{_text_of(hello)} {name.name}; {len(roots.roots)} root(s)"


@mcp.tool(structured_output=False)
def test_input_required_result_multi_round(
    first: Annotated[Name, Resolve(step1)],
    second: Annotated[Color, Resolve(step2)],
) -> str:
    """Asks in two rounds: step 2 depends on step 1."""
    return f"{first.name} likes {second.color}"


@mcp.tool(structured_output=False)
def test_input_required_result_tampered_state(ok: Annotated[Confirm, Resolve(confirm)]) -> str:
    """Asks for a confirmation; a tampered requestState is rejected by the engine."""
    return f"confirmed={ok.ok}"


def _sampling_question() -> Sample:
    return _sample_prompt("Which capabilities did I declare?")


def _elicitation_if_declared(ctx: Context) -> Elicit[Name] | None:
    wanted = ClientCapabilities(elicitation=ElicitationCapability())
    if ctx.session.check_client_capability(wanted):
        return Elicit("What is your name?", Name)
    return None  # not declared: never ask it


@mcp.tool(structured_output=False)
def test_input_required_result_capabilities(
    sampled: Annotated[Any, Resolve(_sampling_question)],
    name: Annotated[Name | None, Resolve(_elicitation_if_declared)],
) -> str:
    """Asks only what the client declared (sampling, elicitation if declared)."""
    return f"sampled={_text_of(sampled)!r} name={name.name if name else None}"


# -------------------------------------------------------------- resources


@mcp.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a 1x1 PNG)."""
    return PNG


@mcp.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content."


@mcp.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for an id, from a resource template."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# ---------------------------------------------------------------- prompts


@mcp.prompt(name="test_simple_prompt", description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@mcp.prompt(name="test_prompt_with_arguments", description="A prompt with two arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt(name="test_prompt_with_embedded_resource", description="A prompt embedding a resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
    resource = EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        ),
    )
    return [
        PromptMessage(role="user", content=resource),
        PromptMessage(
            role="user",
            content=TextContent(type="text", text="Please process the embedded resource above."),
        ),
    ]


@mcp.prompt(name="test_prompt_with_image", description="A prompt with an image")
def test_prompt_with_image() -> list[PromptMessage]:
    return [
        PromptMessage(
            role="user", content=ImageContent(type="image", data=PNG_B64, mime_type="image/png")
        ),
        PromptMessage(
            role="user", content=TextContent(type="text", text="Please analyze the image above.")
        ),
    ]


def _prompt_input_required(request: Any, scope: RequestScope) -> None:
    """`test_input_required_result_prompt` on 2026-07-28, answered with the core API.

    GAP: `MCPServer` runs prompts (and resources) without catching the
    resolver machinery's `NeedInput`, so `ctx.elicit` in a prompt on a
    2026-07-28 request escapes the handler: no InputRequiredResult, no answer
    at all (the client times out). Prompts also take no resolvers.
    """
    question = Elicit("What context should the prompt use?", PromptContext)
    # Only answers the engine verified (an InputReceived after request_input) count.
    answers = request.answers if isinstance(request, InputReceived) else {}
    answer = answers.get("user_context")
    context = None
    if answer is not None and answer.status == "answered":
        try:
            outcome = question.outcome(answer.result)
        except Exception:  # an invalid answer is asked again
            outcome = None
        if isinstance(outcome, AcceptedElicitation):
            context = outcome.data.context
        elif outcome is not None:
            context = "none"
    connection = scope.connection
    if context is None:
        params = question.params(request.context.protocol_version)
        connection.request_input(
            request.request_id,
            {"user_context": {"method": question.method, "params": params}},
            state={"prompt": "test_input_required_result_prompt"},
            wall_time=scope.wall_time(),
        )
    else:
        connection.send_result(
            request.request_id,
            GetPromptResult(
                description="A prompt that asked the user for context first",
                messages=[
                    PromptMessage(
                        role="user",
                        content=TextContent(type="text", text=f"Use this context: {context}"),
                    )
                ],
            ),
        )
    scope.wake()


@mcp.prompt(
    name="test_input_required_result_prompt",
    description="A prompt that asks the user for context first (InputRequiredResult)",
)
async def test_input_required_result_prompt(ctx: Context) -> str:
    answer = await ctx.elicit("What context should the prompt use?", PromptContext)
    context = answer.data.context if isinstance(answer, AcceptedElicitation) else "none"
    return f"Use this context: {context}"


# ------------------------------------------------------------------ tasks
# The fixtures of the suite's `server tasks-*` scenarios (the 2026-07-28 tasks
# extension, SEP-2663); docs/tasks.md explains `@mcp.tool(task=...)`.


@mcp.tool(structured_output=False)
def greet(name: str) -> str:
    """Sync only: never a task."""
    return f"Hello, {name}!"


@mcp.tool(task="optional", structured_output=False)
async def slow_compute(seconds: float, label: str = "") -> str:
    """Sleeps `seconds`, then answers (a task when the client declares the extension)."""
    await anyio.sleep(seconds)
    return f"computed {label or 'result'} after {seconds}s"


@mcp.tool(task="required")
async def failing_job() -> CallToolResult:
    """Runs only as a task; reports a tool error (isError) after a second."""
    await anyio.sleep(1)
    return CallToolResult(content=[TextContent(type="text", text="the job failed")], is_error=True)


@mcp.tool(task="optional", structured_output=False)
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error: the task ends `failed`."""
    raise MCPError(-32603, "the job hit a protocol-level failure")


class Approval(BaseModel):
    confirm: bool


@mcp.tool(task="optional", structured_output=False)
async def confirm_delete(ctx: Context, path: str = "/tmp/file") -> str:
    """Asks once (the task's inputRequests), then completes."""
    answer = await ctx.elicit(f"Delete {path}?", Approval)
    return f"deleted={answer.action == 'accept'}"


@mcp.tool(task="optional", structured_output=False)
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once: two keys pending together."""
    answers: dict[str, str] = {}

    async def ask(what: str) -> None:
        answers[what] = (await ctx.elicit(f"Your {what}?", Name)).action

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "first name")
        group.start_soon(ask, "last name")
    return f"answers: {sorted(answers.items())}"


@mcp.tool(task="required", structured_output=False)
def test_tool_with_task(name: Annotated[Name, Resolve(user_name)]) -> str:
    """Asks the name on the request (InputRequiredResult), then runs as a task."""
    return f"Hello from the task, {name.name}!"


# ------------------------------------------------------------- completion


@mcp.completion()
def complete(ref: Any, argument: Any, context: Any) -> list[str]:
    values = ["paris", "park", "party", "test-value", "testing"]
    prefix = argument.value or ""
    return [value for value in values if value.startswith(prefix)] or values


# ------------------------------------------------------------------- main


async def serve(host: str, port: int, path: str) -> None:
    global RUNNING
    # retry_ms: the reconnection delay announced in SSE priming events (SEP-1699).
    async with http_server(mcp, host=host, port=port, path=path, retry_ms=500) as running:
        RUNNING = running
        log.info("serving %s", running.url)
        await anyio.sleep_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--path", default="/mcp")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve, args.host, args.port, args.path)


if __name__ == "__main__":
    main()
