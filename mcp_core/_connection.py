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

# The private names are re-exported too (`_Connection`, `_ENDED`, `Fatal`, `Reject`): tests
# and tools written before the split import them from here, and this module's only job is
# that such an import keeps working. New code imports from the layer that defines a name, so
# a change of this list never breaks the engine itself.
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

# The roles come last and from above: `_base` must never import them (the cycle this
# layering removed), and only this compatibility module sees both roles and their base at
# once. `tests/test_layout.py` fails on any import cycle, so the order is checked.
from ._client import ClientConnection
from ._server import ServerConnection

# Spelled out rather than computed, so that a name dropped from a layer below shows as an
# ImportError here at once, not as an AttributeError in some caller later.
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
