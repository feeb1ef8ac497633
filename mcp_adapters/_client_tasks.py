"""The client's side of tasks: handles on the server's tasks, and the tasks it hosts.

Role: part of the client API (`mcp_adapters.client`); `Client` makes these and
re-exports the public names.

`TaskHandle` follows one task the server runs for a `tools/call`, in either
era: 2025-11-25 (SEP-1686: `tasks/get`, the blocking `tasks/result`,
`tasks/cancel`, `notifications/tasks/status`) and the 2026-07-28 extension
`io.modelcontextprotocol/tasks` (SEP-2663: `tasks/get` shows the questions,
the result or the error inline, `tasks/update` carries the answers,
`notifications/tasks` pushes the whole task). It polls at the server's
suggested interval, clamped to [`POLL_FLOOR`, `POLL_CEILING`] seconds, on the
running loop's clock (anyio: asyncio or trio), and a status notification for
the task ends the wait early.

`HostedTasks` is the other direction, 2025-11-25 only: a server may ask the
client to run its `elicitation/create` or `sampling/createMessage` as a task
(`params.task`). The client answers with the task at once, runs the callback
in the background, and answers the server's `tasks/get`, `tasks/result`,
`tasks/list` and `tasks/cancel` about it. Bounded by `Limits.max_tasks`;
records go when their TTL (the server's, capped at `HOSTED_TTL_CEILING`) ends.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio
import pydantic

from mcp_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RELATED_TASK_META_KEY,
    TERMINAL_STATUSES,
    MCPError,
    to_wire,
)
from mcp_core.types import CallToolResult, ErrorData

__all__ = [
    "HOSTED_POLL_INTERVAL_MS",
    "HOSTED_TTL_CEILING",
    "POLL_CEILING",
    "POLL_DEFAULT",
    "POLL_FLOOR",
    "HostedTasks",
    "TaskCancelledError",
    "TaskHandle",
    "TaskLink",
]

#: Never poll more often than this (seconds), whatever the server suggests:
#: a server suggesting 0 ms would otherwise have us spin.
POLL_FLOOR: Final = 0.05
#: Never wait longer than this between two polls (seconds): a status
#: notification may be lost, and a huge suggestion would look like a hang.
POLL_CEILING: Final = 5.0
#: The interval when the server suggests none (seconds).
POLL_DEFAULT: Final = 0.5
#: The `pollInterval` (ms) the client suggests for the tasks it hosts.
HOSTED_POLL_INTERVAL_MS: Final = 500
#: A hosted task's record is dropped after at most this long (seconds), even
#: when the server asked for a longer or an unlimited TTL: it holds an answer
#: in memory.
HOSTED_TTL_CEILING: Final = 3600.0


class TaskCancelledError(Exception):
    """The task ended as cancelled: there is no result to give."""

    def __init__(self, task_id: str, message: str | None = None) -> None:
        super().__init__(message or f"task {task_id} was cancelled")
        self.task_id = task_id


@dataclass(frozen=True, slots=True)
class TaskLink:
    """What a `TaskHandle` needs of its Client, and nothing more.

    `request(method, params)` sends a request (the Client's read timeout);
    `wait(method, params)` sends one that may take as long as the task does
    (the 2025-11-25 `tasks/result`, which blocks until the task ends; a
    human may be answering its question meanwhile);
    `answer_input(key, method, params)` runs the Client's callback for one of
    a 2026-07-28 task's input requests; `ended(handle)` forgets a handle whose
    task is over; `poll_bounds` are (floor, ceiling) in seconds;
    `max_input_rounds` bounds the `tasks/update`s of one 2026-07-28 task, as
    it bounds the retries of an `InputRequiredResult`.
    """

    request: Callable[[str, Any], Awaitable[Any]]
    wait: Callable[[str, Any], Awaitable[Any]]
    answer_input: Callable[[str, str, Any], Awaitable[Any]]
    ended: Callable[[TaskHandle], None]
    poll_bounds: tuple[float, float]
    max_input_rounds: int


def poll_delay(interval_ms: int | None, floor: float, ceiling: float) -> float:
    """Seconds to wait before the next poll: the server's hint, clamped."""
    if interval_ms is None:
        return min(max(POLL_DEFAULT, floor), ceiling)
    return min(max(interval_ms / 1000.0, floor), ceiling)


class TaskHandle:
    """A task the server runs for one of our `tools/call` requests.

    `task` is the last state seen (a `Task` model on 2025-11-25, an extension
    task on 2026-07-28: `ExtCreateTaskResult` at first, then `ExtGetTaskResult`
    or the notification's params); `task_id` is None for a call the 2026-07-28
    server chose to answer at once, whose result the handle already holds.
    """

    def __init__(
        self,
        link: TaskLink,
        task: Any,
        *,
        modern: bool,
        result: CallToolResult | None = None,
        known: bool = True,
    ) -> None:
        self._link = link
        self.task = task
        self.modern = modern
        self.task_id: str | None = task.task_id if task is not None else None
        self._result = result
        self._changed = anyio.Event()
        # 2026-07-28: the keys of `inputRequests` already answered (a key stays
        # unique for the task's whole life, so a poll that still shows it before
        # the server took our update must not ask the user twice).
        self._answered: set[str] = set()
        self._rounds = 0  # tasks/update sent (2026-07-28)
        # 2026-07-28: whether `task` carries the inline payload (tasks/get or a
        # notification), which the creating result never does.
        self._detailed = False
        # False for a handle made from an id alone: its first look is a tasks/get.
        self._known = known

    @property
    def status_value(self) -> str:
        """The last status seen, without asking the server."""
        if self.task is None:
            return "completed"
        return str(self.task.status)

    def __repr__(self) -> str:
        return f"TaskHandle({self.task_id!r}, status={self.status_value!r})"

    # -------------------------------------------------------------- verbs

    async def status(self) -> Any:
        """Ask the server (`tasks/get`) and return the task as it is now."""
        if self.task_id is None:
            return None
        task = await self._link.request("tasks/get", {"taskId": self.task_id})
        self._check_id("tasks/get", task)
        self._seen(task, detailed=True)
        return task

    async def cancel(self) -> Any:
        """Ask the server to stop the task (`tasks/cancel`); returns what it says.

        On 2025-11-25 the answer is the task, now cancelled; the 2026-07-28
        extension answers with an empty result and the cancellation shows on
        the next `status()`.
        """
        if self.task_id is None:
            return None
        answer = await self._link.request("tasks/cancel", {"taskId": self.task_id})
        if not self.modern:
            self._check_id("tasks/cancel", answer)
            self._seen(answer, detailed=False)
        return answer

    async def result(self) -> CallToolResult:
        """Wait for the task to end and return the tool's result.

        Polls `tasks/get` at the server's `pollInterval` (clamped to the
        client's bounds); a status notification ends a wait early. A task that
        needs input gets it from the Client's callbacks: on 2025-11-25 the
        server's requests arrive while `tasks/result` waits; on 2026-07-28 the
        handle answers `inputRequests` with `tasks/update`. Raises `MCPError`
        for a failed task and `TaskCancelledError` for a cancelled one.
        """
        if self._result is not None:
            return self._result
        assert self.task_id is not None
        if not self._known:
            await self.status()
        while True:
            task = self.task
            status = task.status
            if self.modern:
                if not self._detailed:
                    await self.status()
                    continue
                if status == "completed":
                    self._link.ended(self)
                    self._result = _tool_result(task.result or {})
                    return self._result
                if status == "failed":
                    self._link.ended(self)
                    raise _task_error(task.error)
                if status == "cancelled":
                    self._link.ended(self)
                    raise TaskCancelledError(self.task_id, task.status_message)
                if status == "input_required" and await self._answer(task.input_requests):
                    await self.status()
                    continue
            else:
                if status == "cancelled":
                    self._link.ended(self)
                    raise TaskCancelledError(self.task_id, task.status_message)
                if status in TERMINAL_STATUSES or status == "input_required":
                    # tasks/result blocks until the end; meanwhile the server's
                    # questions about the task reach the Client's callbacks.
                    return await self._fetch_legacy_result()
            if await self._pause(task):
                continue  # a notification brought the new state
            await self.status()

    # ------------------------------------------------------------ helpers

    async def _fetch_legacy_result(self) -> CallToolResult:
        try:
            payload = await self._link.wait("tasks/result", {"taskId": self.task_id})
        except MCPError:
            self._link.ended(self)  # the task's own error: it is over
            raise
        self._link.ended(self)
        wire = to_wire(payload) or {}
        meta = wire.get("_meta")
        if isinstance(meta, dict):
            # The related-task key says which task this was, not part of the tool's answer.
            meta = {k: v for k, v in meta.items() if k != RELATED_TASK_META_KEY}
            if meta:
                wire["_meta"] = meta
            else:
                del wire["_meta"]
        self._result = _tool_result(wire)
        return self._result

    async def _pause(self, task: Any) -> bool:
        """Wait for the next poll; True when a notification changed the task first."""
        interval = task.poll_interval_ms if self.modern else task.poll_interval
        floor, ceiling = self._link.poll_bounds
        changed = self._changed
        with anyio.move_on_after(poll_delay(interval, floor, ceiling)):
            await changed.wait()
            return True
        return False

    async def _answer(self, requests: Any) -> bool:
        """2026-07-28: answer the questions not answered yet with one `tasks/update`.

        False when there was nothing new to answer (wait for the server to
        take the last answers). Past `max_input_rounds` updates the task is
        cancelled and the call fails, as a retry loop would. A question the Client has no callback for, or
        that its callback refuses, cancels the task and fails the call: the
        extension has no way to send a refusal in `inputResponses`.
        """
        asked = [(k, r) for k, r in (requests or {}).items() if k not in self._answered]
        if not asked:
            return False
        if self._rounds >= self._link.max_input_rounds:
            # Refused before anyone is asked: a server that never stops asking.
            await self._cancel_quietly()
            raise MCPError(
                INTERNAL_ERROR,
                f"the server kept asking for input: {self._link.max_input_rounds} rounds exceeded",
            )
        responses: dict[str, Any] = {}
        for key, request in asked:
            try:
                answer = await self._link.answer_input(key, request.method, request.params)
            except MCPError:
                await self._cancel_quietly()
                raise
            responses[key] = to_wire(answer)
        self._rounds += 1
        await self._link.request(
            "tasks/update", {"taskId": self.task_id, "inputResponses": responses}
        )
        self._answered.update(responses)
        return True

    async def _cancel_quietly(self) -> None:
        with anyio.CancelScope(shield=True):
            # The task may have ended meanwhile; the call fails anyway.
            with contextlib.suppress(Exception):
                await self._link.request("tasks/cancel", {"taskId": self.task_id})
        self._link.ended(self)

    def _check_id(self, method: str, task: Any) -> None:
        """The server's answer must be about this task: acting on another's state
        would show the wrong result (or poll forever for a state never seen)."""
        if task.task_id != self.task_id:
            raise MCPError(
                INTERNAL_ERROR,
                f"invalid result: {method} for task {self.task_id!r} "
                f"answered about {task.task_id!r}",
            )

    def _seen(self, task: Any, *, detailed: bool) -> None:
        """A newer state of the task: from a poll, a cancel or a notification."""
        if task is None or getattr(task, "task_id", None) != self.task_id:
            return
        self.task = task
        self._known = True
        if detailed:
            self._detailed = True
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def notified(self, params: Any) -> None:
        """A status notification about this task (either era); the Client calls this."""
        self._seen(params, detailed=self.modern)


def _tool_result(wire: dict[str, Any]) -> CallToolResult:
    """The task's outcome as the tool's result; a malformed one is the server's error."""
    try:
        return CallToolResult.model_validate(wire)
    except pydantic.ValidationError as exc:
        problem = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'result'}: {e['msg']}" for e in exc.errors()
        )
        raise MCPError(
            INTERNAL_ERROR, f"invalid result: the task's CallToolResult: {problem}"
        ) from None


def _task_error(error: Any) -> MCPError:
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return MCPError(error["code"], str(error.get("message", "")), error.get("data"))
    return MCPError(INTERNAL_ERROR, "the task failed", error)


# ------------------------------------------------------ tasks the client hosts


def _now_iso() -> str:
    # The wall clock, for the timestamps the protocol shows (the adapters may read it).
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


class _Hosted:
    __slots__ = (
        "created_at",
        "done",
        "error",
        "expires",
        "method",
        "result",
        "scope",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
        "updated_at",
    )

    def __init__(self, task_id: str, method: str, ttl_ms: int, expires: float) -> None:
        self.task_id = task_id
        self.method = method
        self.ttl_ms = ttl_ms
        self.expires = expires
        self.status = "working"
        self.status_message: str | None = None
        self.created_at = self.updated_at = _now_iso()
        self.result: dict[str, Any] | None = None
        self.error: MCPError | None = None
        self.done = anyio.Event()
        self.scope: anyio.CancelScope | None = None

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": HOSTED_POLL_INTERVAL_MS,
        }
        if self.status_message is not None:
            body["statusMessage"] = self.status_message
        return body

    def end(self, status: str, message: str | None = None) -> None:
        self.status = status
        self.status_message = message
        self.updated_at = _now_iso()
        self.done.set()


class HostedTasks:
    """The 2025-11-25 tasks a server asked this client to run (see the module docstring)."""

    def __init__(
        self,
        spawn: Callable[[Awaitable[None]], None],
        notify: Callable[[str, Any], Awaitable[None]],
        limit: int,
    ) -> None:
        self._spawn = spawn
        self._notify = notify
        self._limit = limit
        self._tasks: dict[str, _Hosted] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def create(self, method: str, task: dict[str, Any], run: Callable[[], Awaitable[Any]]) -> Any:
        """Start `run` as a task; the `CreateTaskResult` to answer the request with."""
        self._purge()
        if len(self._tasks) >= self._limit:
            raise MCPError(
                INTERNAL_ERROR, f"the client hosts {self._limit} tasks already (Limits.max_tasks)"
            )
        # The TTL we grant, which the task then shows: the one asked for, at most
        # the ceiling (an unlimited one gets the ceiling too: the record holds an answer).
        ceiling_ms = int(HOSTED_TTL_CEILING * 1000)
        asked = task.get("ttl")
        ttl_ms = min(asked, ceiling_ms) if type(asked) is int and asked >= 0 else ceiling_ms
        record = _Hosted(uuid.uuid4().hex, method, ttl_ms, anyio.current_time() + ttl_ms / 1000)
        self._tasks[record.task_id] = record
        self._spawn(self._run(record, run))
        return {"task": record.wire()}

    async def _run(self, record: _Hosted, run: Callable[[], Awaitable[Any]]) -> None:
        with anyio.CancelScope() as scope:
            record.scope = scope
            try:
                answer = await run()
            except MCPError as exc:
                record.error = exc
                record.end("failed", exc.message)
            except Exception as exc:  # the callback's bug: the server learns the task failed
                record.error = MCPError(INTERNAL_ERROR, f"the callback failed: {exc}")
                record.end("failed", record.error.message)
            else:
                if isinstance(answer, ErrorData):
                    record.error = MCPError(answer.code, answer.message, answer.data)
                    record.end("failed", answer.message)
                else:
                    record.result = to_wire(answer) or {}
                    record.end("completed")
        if not record.done.is_set():  # cancelled (tasks/cancel or the session's end)
            record.end("cancelled", "cancelled by the server")
        with contextlib.suppress(Exception):  # the session ended: nobody left to tell
            await self._notify("notifications/tasks/status", record.wire())

    async def handle(self, method: str, params: Any) -> Any:
        """Answer the server's `tasks/*` request about a task we host."""
        self._purge()
        if method == "tasks/list":
            return {"tasks": [record.wire() for record in self._tasks.values()]}
        task_id = getattr(params, "task_id", None)
        record = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if record is None:
            raise MCPError(INVALID_PARAMS, f"no task {task_id!r}")
        if method == "tasks/get":
            return record.wire()
        if method == "tasks/cancel":
            if record.status in TERMINAL_STATUSES:
                raise MCPError(INVALID_PARAMS, f"task {task_id} has already ended")
            if record.scope is not None:
                record.scope.cancel()
            record.end("cancelled", "cancelled by the server")
            return record.wire()
        # tasks/result: blocks until the task ends, then gives what the request would have.
        await record.done.wait()
        if record.error is not None:
            raise record.error
        if record.status == "cancelled":
            raise MCPError(INVALID_PARAMS, f"task {task_id} was cancelled")
        meta = record.result.get("_meta") if record.result else None
        return {
            **(record.result or {}),
            "_meta": {**(meta or {}), RELATED_TASK_META_KEY: {"taskId": task_id}},
        }

    def _purge(self) -> None:
        now = anyio.current_time()
        for task_id in [t for t, r in self._tasks.items() if r.expires <= now]:
            record = self._tasks.pop(task_id)
            if record.scope is not None:
                record.scope.cancel()

    def cancel_all(self) -> None:
        for record in self._tasks.values():
            if record.scope is not None:
                record.scope.cancel()
        self._tasks.clear()


def ttl_ms(seconds: float | None) -> int | None:
    """A TTL in seconds as the protocol's milliseconds (rounded up: never shorter)."""
    if seconds is None:
        return None
    if not seconds > 0 or math.isinf(seconds):
        raise ValueError(f"a task TTL is a positive number of seconds, not {seconds!r}")
    return math.ceil(seconds * 1000)
