"""The client side of the MCP conformance suite, written with this project's API.

    MCP_CONFORMANCE_SCENARIO=tools_call python examples/conformance/client.py URL

The suite starts a scenario server, then runs this with its URL as the last
argument and three environment variables: `MCP_CONFORMANCE_SCENARIO` (which
scenario), `MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision to speak: through
2025-11-25 with the `initialize` handshake, 2026-07-28 stateless) and, for some
scenarios, `MCP_CONFORMANCE_CONTEXT` (a JSON object, e.g. the tool calls to
make). Each scenario is a short function below; the exit code is 0 when the
client did what the scenario asks without an error.

The `auth/*` scenarios put the server behind an authorization server: the client
gets `auth=OAuthProvider(...)` and does the whole flow itself (mcp_adapters.oauth).
The suite's authorization server approves at once, answering the authorization
URL with a redirect; `headless_browser` stands in for the user's browser and
hands that redirect back, so the redirect URI is never listened on. Scenarios
where the client must refuse (a resource or issuer mismatch, a bad `iss`) end
with `AuthorizationFailedError` and exit code 1, which the suite expects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_adapters.auth._fetch import fetch
from mcp_adapters.client import Client, ClientRequestContext
from mcp_adapters.oauth import OAuthProvider, PreRegisteredClient
from mcp_core import Era, era_of
from mcp_core.oauth import JWTSigner
from mcp_core.types import (
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    Root,
    TextContent,
)

log = logging.getLogger("conformance-client")

CLIENT_INFO = {"name": "mcp-sansio-conformance-client", "version": "0.1.0"}


# -------------------------------------------------------------- callbacks


def _value_for(schema: dict[str, Any]) -> Any:
    """An answer for one form field: its default, else something of its type."""
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 1.0)
    if kind == "array":
        return []
    if "enum" in schema:
        return schema["enum"][0]
    if "oneOf" in schema:
        return schema["oneOf"][0]["const"]
    return "conformance"


async def on_elicitation(
    context: ClientRequestContext, params: ElicitRequestParams
) -> ElicitResult:
    """Accept every form, filling each field with its default (SEP-1034) or a value."""
    if isinstance(params, ElicitRequestURLParams):
        log.info("elicitation (url): %s", params.url)
        return ElicitResult(action="accept")
    schema = params.requested_schema
    wire = (
        schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
    )
    content = {name: _value_for(prop) for name, prop in (wire.get("properties") or {}).items()}
    log.info("elicitation (form) %r -> %r", params.message, content)
    return ElicitResult(action="accept", content=content)


async def on_sampling(context: ClientRequestContext, params: Any) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text="This is a response from the conformance client"),
        model="conformance-model",
        stop_reason="endTurn",
    )


async def on_list_roots(context: ClientRequestContext) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///tmp/conformance", name="conformance")])


# ------------------------------------------------------------------ auth

#: The Client ID Metadata Document URL the suite's authorization servers expect
#: (they check the client_id, and never fetch it).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
#: Never listened on: `headless_browser` catches the redirect to it.
REDIRECT_URI = "http://localhost:3000/callback"


async def headless_browser(url: str) -> str:
    """The user's part: open the authorization URL, approve, come back. The suite's
    authorization server approves at once with a redirect, which is the answer."""
    answer = await fetch("GET", url)
    location = dict(answer.headers).get("location")
    if answer.status not in (301, 302, 303, 307) or location is None:
        raise RuntimeError(f"the authorization endpoint answered {answer.status}, not a redirect")
    return location


def es256_signer(private_key_pem: str) -> JWTSigner:
    """A `private_key_jwt` signer over the PEM key a scenario gives (ES256: the raw
    `r || s` signature RFC 7518 asks for, not cryptography's DER)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("the scenario's key is not an EC key")

    def sign(data: bytes) -> bytes:
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    return JWTSigner("ES256", sign)


def oauth_provider(name: str, context: dict[str, Any]) -> OAuthProvider:
    """The client's OAuth configuration: pre-registered credentials when the scenario
    gives some, else a Client ID Metadata Document URL, else (the core falls back by
    itself) dynamic registration. The `auth/client-credentials-*` scenarios (the
    io.modelcontextprotocol/oauth-client-credentials extension) are a machine
    client: `client_credentials`, with its secret or its key (`private_key_jwt`)."""
    if name.startswith("auth/client-credentials-"):
        pem = context.get("private_key_pem")
        return OAuthProvider(
            grant_type="client_credentials",
            client=PreRegisteredClient(context["client_id"], context.get("client_secret")),
            signer=es256_signer(pem) if pem else None,
        )
    client = None
    if context.get("client_id"):
        client = PreRegisteredClient(
            context["client_id"], context.get("client_secret"), issuer=context.get("issuer")
        )
    return OAuthProvider(
        redirect_uri=REDIRECT_URI,
        client_name=CLIENT_INFO["name"],
        client=client,
        client_metadata_url=CLIENT_METADATA_URL,
        authorize=headless_browser,
    )


def connect(url: str, version: str, auth: OAuthProvider | None = None) -> Client:
    """A client speaking `version`: pinned for the handshake revisions; for 2026-07-28,
    "auto" (a `server/discover` probe at 2026-07-28 first), because a pinned modern
    client does not retry a request refused with UnsupportedProtocolVersionError.

    No request timeout: the suite runs each scenario under its own (`--timeout`, set
    by scripts/conformance.sh) and kills a client that outlives it. A shorter one here
    would only fail a scenario whose server is slow on a loaded machine."""
    return Client(
        url,
        mode="auto" if era_of(version) is Era.MODERN else version,
        client_info=CLIENT_INFO,
        elicitation_callback=on_elicitation,
        sampling_callback=on_sampling,
        list_roots_callback=on_list_roots,
        auth=auth,
    )


def _arguments_for(tool: Any) -> dict[str, Any]:
    """Arguments for a tool the scenario gave us no values for: every required one."""
    schema = tool.input_schema or {}
    properties = schema.get("properties") or {}
    return {name: _value_for(properties.get(name) or {}) for name in schema.get("required") or []}


# -------------------------------------------------------------- scenarios

Scenario = Callable[[Client, dict[str, Any]], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


async def list_tools(client: Client) -> list[Any]:
    tools = (await client.list_tools()).tools
    log.info("tools: %s", [tool.name for tool in tools])
    return tools


@scenario("initialize", "request-metadata", "json-schema-ref-no-deref")
async def just_list(client: Client, context: dict[str, Any]) -> None:
    """Connect (handshake or discovery) and list the tools."""
    await list_tools(client)


@scenario("tools_call")
async def tools_call(client: Client, context: dict[str, Any]) -> None:
    await list_tools(client)
    result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
    log.info("add_numbers: %s", result.content)


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(client: Client, context: dict[str, Any]) -> None:
    await list_tools(client)
    result = await client.call_tool("test_client_elicitation_defaults", {})
    log.info("result: %s", result.content)


@scenario("sse-retry")
async def sse_retry(client: Client, context: dict[str, Any]) -> None:
    await list_tools(client)
    result = await client.call_tool("test_reconnection", {})
    log.info("result: %s", result.content)


@scenario("http-standard-headers", "http-invalid-tool-headers")
async def call_everything(client: Client, context: dict[str, Any]) -> None:
    """Every kind of request, once per listed item (the client drops invalid tools)."""
    for tool in await list_tools(client):
        await client.call_tool(tool.name, _arguments_for(tool))
    caps = client.server_capabilities
    if caps is None or caps.resources is not None:
        for resource in (await client.list_resources()).resources:
            await client.read_resource(str(resource.uri))
    if caps is None or caps.prompts is not None:
        for prompt in (await client.list_prompts()).prompts:
            arguments = {a.name: "conformance" for a in prompt.arguments or [] if a.required}
            await client.get_prompt(prompt.name, arguments or None)


@scenario("http-custom-headers")
async def custom_headers(client: Client, context: dict[str, Any]) -> None:
    """The tool calls the scenario lists, after tools/list (which says what to mirror)."""
    await list_tools(client)
    for call in context.get("toolCalls", []):
        await client.call_tool(call["name"], call.get("arguments") or {})


@scenario("json-schema-2020-12-preservation")
async def schema_preservation(client: Client, context: dict[str, Any]) -> None:
    """Echo the focal tool's inputSchema back exactly as the client holds it."""
    tools = {tool.name: tool for tool in await list_tools(client)}
    schema = tools["json_schema_2020_12_tool"].input_schema
    await client.call_tool("json_schema_echo", {"schema": schema})


@scenario("sep-2322-client-request-state")
async def request_state(client: Client, context: dict[str, Any]) -> None:
    """MRTR retries (the engine's loop): state echoed, fresh ids, nothing leaking into
    a call running alongside, and a result without resultType is complete."""
    await list_tools(client)
    await asyncio.gather(
        client.call_tool("test_mrtr_echo_state", {}),
        client.call_tool("test_mrtr_unrelated", {}),
    )
    await client.call_tool("test_mrtr_no_state", {})
    await client.call_tool("test_mrtr_no_result_type", {})


async def authorized(client: Client, context: dict[str, Any]) -> None:
    """Every auth scenario: connected (authorized on the first 401), list the tools and
    call each (a tool may need more scope: the 403 step-up)."""
    for tool in await list_tools(client):
        result = await client.call_tool(tool.name, _arguments_for(tool))
        log.info("%s: %s", tool.name, result.content)


async def run(url: str) -> None:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    play = SCENARIOS.get(name, just_list)
    auth = None
    if name.startswith("auth/"):
        auth, play = oauth_provider(name, context), authorized
    log.info("scenario %r at %s against %s", name, version, url)
    async with connect(url, version, auth) as client:
        log.info("connected: %s", client.protocol_version)
        await play(client, context)


def main() -> int:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s"
    )
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[-1]))
    except Exception:
        log.exception("scenario failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
