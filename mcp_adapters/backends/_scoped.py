"""The pieces trio and anyio share: a movable time limit, a timer task, an event's waiter.

trio and anyio have the same cancel scopes (`deadline`, `cancelled_caught`,
`move_on_at`) and events, so `backends.trio` and `backends.anyio` (and the
HTTP layers on anyio) build their `Limit`, `Timer` and `Waiter` from these
classes, each passing its own library's scope, event and clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from mcp_adapters._session import Outcome
from mcp_adapters.backends import Event


class CancelScope(Protocol):
    """What trio's and anyio's `CancelScope` have in common, as used here."""

    deadline: float

    @property
    def cancelled_caught(self) -> bool: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc_info: Any) -> bool | None: ...


class ScopeLimit:
    """A cancel scope entered as an async block; expiry is reported, not raised."""

    __slots__ = ("_scope", "expired")

    def __init__(self, scope: CancelScope) -> None:
        self.expired = False
        self._scope = scope

    def move_to(self, deadline: float) -> None:
        self._scope.deadline = deadline

    async def __aenter__(self) -> ScopeLimit:
        self._scope.__enter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        suppressed = self._scope.__exit__(*exc_info)
        self.expired = self._scope.cancelled_caught
        return suppressed


class TaskTimer:
    """A deadline callback served by a task (`serve()`) that sleeps until the armed time.

    Neither trio nor anyio calls back without a task, so one task per timer
    waits for the armed deadline or for a change of it, whichever comes first.
    """

    __slots__ = ("_changed", "_clock", "_closed", "_deadline", "_event", "_fire", "_move_on_at")

    def __init__(
        self,
        fire: Callable[[float], None],
        *,
        event: Callable[[], Event],
        move_on_at: Callable[[float], AbstractContextManager[CancelScope]],
        clock: Callable[[], float],
    ) -> None:
        self._fire = fire
        self._event = event
        self._move_on_at = move_on_at
        self._clock = clock
        self._deadline: float | None = None
        self._closed = False
        self._changed = event()

    def arm(self, deadline: float | None) -> None:
        self._deadline = deadline
        self._changed.set()

    def close(self) -> None:
        self._closed = True
        self._changed.set()

    async def serve(self) -> None:
        while not self._closed:
            self._changed = self._event()
            deadline = self._deadline
            with self._move_on_at(math.inf if deadline is None else deadline) as scope:
                await self._changed.wait()
            if scope.cancelled_caught:
                self._deadline = None
                self._fire(self._clock())


class EventWaiter(Outcome):
    """One outcome (a result or an exception) handed over through an async event."""

    __slots__ = ("_event",)

    #: Never: trio's wait is a checkpoint even when the outcome is in (see `Waiter`).
    early: tuple[bool, Any] | None = None

    def __init__(self, event: Event) -> None:
        super().__init__(event)
        self._event = event

    async def wait(self) -> Any:
        await self._event.wait()
        return self.outcome()


__all__ = ["CancelScope", "EventWaiter", "ScopeLimit", "TaskTimer"]
