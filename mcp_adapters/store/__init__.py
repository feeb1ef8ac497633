"""What must cross processes when one MCP endpoint runs as several replicas.

One interface (`Store`: `sessions`, `events`, `bus`, `fanout`, `tasks`; see
`mcp_adapters.store._interface`) and two implementations that pass the same
contract tests:

* `InMemoryStore`, the default: one process, nothing to start;
* `RedisStore`, the real one for a deployment of several processes, on
  Redis >= 7.0 through coredis (`pip install 'mcp-sansio[redis]'`), under
  asyncio and trio alike. Imported on first use, so the extra is only needed
  by those who use it.

See docs/deploy.md for the data layout, the guarantees and the limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_adapters.store._errors import StoreError, StoreUnavailable
from mcp_adapters.store._event_ids import (
    EventPosition,
    format_event_id,
    next_position,
    parse_event_id,
)
from mcp_adapters.store._interface import (
    Bus,
    EventLog,
    FanOut,
    SessionRegistry,
    Store,
    TaskRegistry,
)
from mcp_adapters.store._limits import StoreLimits
from mcp_adapters.store._memory import InMemoryStore, MemoryHub
from mcp_adapters.store._records import (
    TERMINAL_TASK_STATUSES,
    BusMessage,
    Notification,
    SessionRecord,
    TaskRecord,
)
from mcp_adapters.store._subscription import Subscription

if TYPE_CHECKING:
    from mcp_adapters.store._redis import RedisStore


def __getattr__(name: str) -> object:
    if name == "RedisStore":
        try:
            from mcp_adapters.store._redis import RedisStore
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(
                f"RedisStore needs the redis extra: pip install 'mcp-sansio[redis]' ({exc})"
            ) from exc
        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TERMINAL_TASK_STATUSES",
    "Bus",
    "BusMessage",
    "EventLog",
    "EventPosition",
    "FanOut",
    "InMemoryStore",
    "MemoryHub",
    "Notification",
    "RedisStore",
    "SessionRecord",
    "SessionRegistry",
    "Store",
    "StoreError",
    "StoreLimits",
    "StoreUnavailable",
    "Subscription",
    "TaskRecord",
    "TaskRegistry",
    "format_event_id",
    "next_position",
    "parse_event_id",
]
