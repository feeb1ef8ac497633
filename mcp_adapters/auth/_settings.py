"""`MCPServer(auth=AuthSettings(...))`: the server as an OAuth resource server, and
the adapter's half of the verification step (`TokenVerificationNeeded`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from mcp_adapters.auth._verifiers import TokenVerifier
from mcp_core.auth import (
    AccessRefused,
    ProtectedResource,
    ResourceGuard,
    TokenVerificationNeeded,
    VerificationResult,
    VerifierUnavailable,
)

if TYPE_CHECKING:
    from mcp_adapters.server import MCPServer
    from mcp_adapters.transports.http_server import HTTPServer

__all__ = ["AuthSettings", "on_auth_event", "verify_token"]

logger = logging.getLogger("mcp_adapters.auth")


@dataclass(frozen=True)
class AuthSettings:
    """How an `MCPServer` served over HTTP checks access tokens.

    `verifier` verifies tokens (`JWTVerifier`, `IntrospectionVerifier`, or your
    own). `authorization_servers` are the issuers trusted. `resource` is the
    server's public URL (`https://mcp.example.com/mcp`), the audience tokens must
    name; `http_server`/`run --transport http` default it to the URL they bind, which
    is right only for a server reached at that address (local development), and the
    ASGI app needs it. `required_scopes` are needed for anything; a tool's own
    (`@mcp.tool(scopes=[...])`) for calling it. `scopes_supported` (advertised in the
    metadata) defaults to all of those. `verify_timeout` bounds one verification
    (past it the request is answered 503). The rest are `ProtectedResource`'s.
    """

    verifier: TokenVerifier
    authorization_servers: Sequence[str]
    resource: str | None = None
    required_scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    audiences: Sequence[str] = ()
    verify_timeout: float = 30.0
    max_token_bytes: int = 8192
    cache_size: int = 1024
    cache_seconds: float = 300.0
    clock_leeway: float = 60.0

    def guard(self, server: MCPServer, *, default_resource: str | None = None) -> ResourceGuard:
        """The core guard for `server`: its tools' scopes read live."""
        resource = self.resource or default_resource
        if resource is None:
            raise ValueError("AuthSettings needs resource= (the server's public URL) here")
        tool_scopes = server.tool_scopes
        supported = self.scopes_supported
        if supported is None:
            every = [*self.required_scopes, *(s for v in tool_scopes.values() for s in v)]
            supported = list(dict.fromkeys(every))

        def scopes_for(method: str, params: Any) -> Iterable[str]:
            if method == "tools/call" and isinstance(params, dict):
                name = params.get("name")
                if isinstance(name, str):
                    return tool_scopes.get(name, ())
            return ()

        return ResourceGuard(
            ProtectedResource(
                resource,
                self.authorization_servers,
                required_scopes=self.required_scopes,
                scopes_supported=supported,
                resource_name=self.resource_name or server.name,
                resource_documentation=self.resource_documentation,
                audiences=self.audiences,
                max_token_bytes=self.max_token_bytes,
                cache_size=self.cache_size,
                cache_seconds=self.cache_seconds,
                clock_leeway=self.clock_leeway,
            ),
            scopes_for=scopes_for,
        )


def on_auth_event(running: HTTPServer, event: TokenVerificationNeeded | AccessRefused) -> None:
    """`HTTPServer.handle_events`'s branch for the endpoint's auth events: log a refusal,
    run a verification as a task of the server (the request waits meanwhile)."""
    if isinstance(event, AccessRefused):
        logger.info("refused %s %s: %d %s", event.method, event.target, event.status, event.reason)
        return
    settings = running.server.auth
    if settings is None:
        _answer(running, event, VerifierUnavailable("no verifier is configured"))
    elif not running.start_task(_verify, running, settings, event):
        _answer(running, event, VerifierUnavailable("the server is closing"))


async def verify_token(settings: AuthSettings, token: str) -> VerificationResult:
    """The verifier's verdict on `token`, bounded by `verify_timeout`; a verifier that
    times out or fails is `VerifierUnavailable` (503), never a refusal of the token."""
    try:
        with anyio.fail_after(settings.verify_timeout):
            return await settings.verifier.verify(token)
    except TimeoutError:
        return VerifierUnavailable("the verification timed out")
    except Exception:
        logger.exception("the token verifier failed")
        return VerifierUnavailable("the verifier failed")


async def _verify(
    running: HTTPServer, settings: AuthSettings, event: TokenVerificationNeeded
) -> None:
    _answer(running, event, await verify_token(settings, event.token))


def _answer(
    running: HTTPServer, event: TokenVerificationNeeded, result: VerificationResult
) -> None:
    events = event.exchange.receive_token_verification(
        result, now=anyio.current_time(), wall_time=time.time()
    )
    running.handle_events(events)
