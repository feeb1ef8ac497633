"""What a shared store raises."""

from __future__ import annotations

__all__ = ["StoreError", "StoreUnavailable"]


class StoreError(Exception):
    """Anything a store refuses or fails at."""


class StoreUnavailable(StoreError):
    """The shared store could not be reached (or did not answer) in time.

    Raised instead of waiting: every operation of a networked store is bounded
    by its connect, command and operation timeouts. A write that failed this
    way may or may not have happened (the request may have reached the server
    before the answer was lost). The store recovers by itself: the next
    operation after the server is back succeeds, nothing needs restarting.
    """

    def __init__(self, operation: str, detail: str) -> None:
        super().__init__(f"store unavailable during {operation}: {detail}")
        self.operation = operation
        self.detail = detail
