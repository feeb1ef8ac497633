"""The old import path of the connection classes and what they share.

`ServerConnection`, `ClientConnection` and the helpers of both roles once lived
here together. They now live in layers that import downward only: `_state.py`
(the lifecycles as tables), `_base.py` (what both roles share), `_server.py` and
`_client.py` (the roles). This module sits above all of them and re-exports
their names, so `from mcp_core._connection import ...` in code written against
earlier releases keeps working. The engine itself never imports it: a module
below the roles that also handed out the roles is what made the import cycle
this layering removed.
"""

from __future__ import annotations

from ._base import (
    _ENDED,
    CAPABILITY_LABEL,
    LOCAL_FAILURE,
    LOG_LEVELS,
    LOG_RANK,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    Fatal,
    OutgoingMessage,
    Reject,
    RequestId,
    State,
    _Connection,
    capability_problem,
    describe,
    elicitation_mode_declared,
    has_capability,
    json_kind,
    missing_wall_time,
    validator,
)
from ._client import ClientConnection
from ._server import ServerConnection

__all__ = [
    "_ENDED",
    "CAPABILITY_LABEL",
    "LOCAL_FAILURE",
    "LOG_LEVELS",
    "LOG_RANK",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "ClientConnection",
    "Fatal",
    "OutgoingMessage",
    "Reject",
    "RequestId",
    "ServerConnection",
    "State",
    "_Connection",
    "capability_problem",
    "describe",
    "elicitation_mode_declared",
    "has_capability",
    "json_kind",
    "missing_wall_time",
    "validator",
]
