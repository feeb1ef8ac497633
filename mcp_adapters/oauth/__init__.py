"""MCP authorization, client side: `Client(url, auth=OAuthProvider(...))`.

    from mcp_adapters.client import Client
    from mcp_adapters.oauth import FileTokenStorage, LoopbackRedirect, OAuthProvider

    with LoopbackRedirect() as redirect:
        auth = OAuthProvider(
            redirect_uri=redirect.uri,
            authorize=redirect,               # opens the browser, waits for the redirect
            client_name="My tool",
            storage=FileTokenStorage("~/.config/my-tool/oauth.json"),
        )
        async with Client("https://mcp.example.com/mcp", auth=auth) as client:
            await client.list_tools()

The token goes on every request; a 401 or a 403 `insufficient_scope` runs the flow
(discovery, registration, the browser, the token request: `mcp_core.oauth`) and
retries; a token about to expire is refreshed first. docs/authorization.md has
the whole picture.
"""

from mcp_adapters.oauth._loopback import LoopbackRedirect
from mcp_adapters.oauth._provider import (
    AuthorizationFailedError,
    AuthorizeCallback,
    OAuthProvider,
)
from mcp_adapters.oauth._storage import FileTokenStorage, InMemoryTokenStorage, TokenStorage
from mcp_core.oauth import JWTSigner, OAuthClientConfig, OAuthRecord, PreRegisteredClient

__all__ = [
    "AuthorizationFailedError",
    "AuthorizeCallback",
    "FileTokenStorage",
    "InMemoryTokenStorage",
    "JWTSigner",
    "LoopbackRedirect",
    "OAuthClientConfig",
    "OAuthProvider",
    "OAuthRecord",
    "PreRegisteredClient",
    "TokenStorage",
]
