"""An `MCPServer` as an OAuth 2.1 resource server (MCP authorization, server side).

    from mcp_adapters.auth import AuthSettings, JWTVerifier

    mcp = MCPServer("Files", auth=AuthSettings(
        verifier=JWTVerifier(issuer=AS, audience=URL, jwks_url=f"{AS}/jwks"),
        authorization_servers=[AS],
        resource=URL,
        required_scopes=["mcp"],
    ))

    @mcp.tool(scopes=["files:write"])     # 403 insufficient_scope without it
    def write(path: str, text: str) -> str: ...

The rules (challenges, metadata, issuer/audience/expiry checks, the principal bound
into sessions and sealed requestState) are the core's, in `mcp_core.auth`; this
package adds the verifiers, which do I/O, and the settings. docs/authorization.md
has the whole picture.
"""

from mcp_adapters.auth._settings import AuthSettings
from mcp_adapters.auth._verifiers import (
    ASYMMETRIC_ALGORITHMS,
    IntrospectionVerifier,
    JWTVerifier,
    TokenVerifier,
    access_token_from_claims,
)
from mcp_core.auth import AccessToken, InvalidToken, VerifierUnavailable

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "AccessToken",
    "AuthSettings",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "TokenVerifier",
    "VerifierUnavailable",
    "access_token_from_claims",
]
