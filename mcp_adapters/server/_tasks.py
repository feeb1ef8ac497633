"""Tasks on the server: a tool call run detached from its request, its state on the store.

One runtime for both eras. A call becomes a task (`TaskHost.start`) when the
tool allows it (`@mcp.tool(task="optional"|"required")`) and the client asked
for one: `params.task` on 2025-11-25, the tasks extension declared on the
request on 2026-07-28. The record is written to the store (`TaskRegistry`)
before the `CreateTaskResult` goes out, so `tasks/get` works at once, on any
replica sharing the store, and after the creating connection is gone. The tool
body then runs in the server's own task group (opened by `MCPServer.running()`),
not in the request's, under a deadline of the task's TTL (the adapters' clock).

Questions a task's body asks (`ctx.elicit`, resolvers) make it
`input_required`. On 2026-07-28 they are the record's `inputRequests`, answered
by `tasks/update` on any replica: the answers go to the store, and the process
running the body finds them there (at once when the update arrives on it,
else at its next look, every poll interval). On 2025-11-25 they are sent, with
the related-task `_meta`, on the stream of a `tasks/result` request waiting
for the task (the spec's way: the requestor calls `tasks/result` when it sees
`input_required`). A `tasks/result` that reaches another process asks them from
the record and keeps the answers on the store, as `tasks/update` does.

The same look at the store, every poll interval, notices a `tasks/cancel`
written by another replica and cancels the body here.

Runner liveness (with a store, served over HTTP): the cluster binding runs
`keep_alive`, which renews this process's heartbeat on the store every
`heartbeat_interval`; while it beats, new records name this process as their
`runner`. A replica reading a task that is not terminal and whose runner's
heartbeat has expired (`heartbeat_expiry` without a beat: the process died, or
stopped) fails it, with a compare-and-set that checks the heartbeat in the
same step (`TaskRegistry.fail_orphan`), and announces it as any failure. A
record naming no runner (written without a heartbeat running) is never judged.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.abc

from mcp_adapters._lazy import LazyModule
from mcp_adapters.server._serve import Waiter
from mcp_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    InputAnswer,
    InputReceived,
    MCPError,
    to_wire,
)
from mcp_core.tasks import with_related_task

if TYPE_CHECKING:
    import mcp_adapters.store as _store
    from mcp_adapters.server import MCPServer, RequestScope
    from mcp_adapters.store import InMemoryStore, Store, TaskRecord, TaskRegistry
else:
    # The store package (records, the in-memory store, its limits) is about a tenth
    # of `MCPServer`'s import, and only a server that runs a task needs it.
    _store = LazyModule("mcp_adapters.store", globals(), "_store")

__all__ = ["TaskHost", "TaskSettings", "TaskSupport"]

logger = logging.getLogger("mcp_adapters.server")

TaskSupport = Literal["forbidden", "optional", "required"]
TASK_SUPPORT: Final = ("forbidden", "optional", "required")
# Where an anonymous connection's owner tag is kept on the connection itself, so it lives
# and dies with the connection and needs no table of its own.
_OWNER_KEY: Final = "_mcp_task_owner"


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How long tasks live and how many run (docs/limits.md, "Tasks").

    `default_ttl` is a task's life when the client names none (2026-07-28
    clients never do); a requested TTL is clamped to [`min_ttl`, `max_ttl`],
    and the clamped value is what the task reports. Past its TTL the body is
    cancelled and the record is gone. `poll_interval` is the `pollInterval`
    suggested to clients and how often a running body looks at the store for
    answers and cancellation. At most `max_running` bodies run in this process
    (one more is refused with -32603, nothing created); a result whose JSON is
    over `max_result_bytes` fails the task instead of filling the store.

    With a store shared by replicas, a process running task bodies renews its
    heartbeat on the store every `heartbeat_interval`; one that has not for
    `heartbeat_expiry` is taken for dead, and the next replica reading one of
    its unfinished tasks fails it. The expiry must exceed the interval, by
    enough to cover a slow store (`RedisStore`'s `operation_timeout`, 5 s) and
    a loaded event loop: a runner that is only late past it loses its tasks.
    """

    # An hour by default and a day at most: long enough for a human-in-the-loop task, short
    # enough that abandoned tasks leave the store on their own. The TTL is the spec's
    # backstop (2025-11-25 `ttl`, the extension's `ttlMs`), so it is always set.
    default_ttl: float = 3600.0
    min_ttl: float = 1.0
    max_ttl: float = 86400.0
    poll_interval: float = 1.0
    # Bodies run in this process whatever their client does afterwards; the cap bounds what
    # clients that create tasks and leave can make one replica run.
    max_running: int = 256
    max_result_bytes: int = 4 * 1024 * 1024
    heartbeat_interval: float = 5.0
    heartbeat_expiry: float = 20.0

    def __post_init__(self) -> None:
        """A zero or negative value would make every task expire at once or never be polled,
        which no configuration means: refused at start-up, where the fix is obvious.
        """
        for name in (
            "default_ttl",
            "min_ttl",
            "max_ttl",
            "poll_interval",
            "heartbeat_interval",
            "heartbeat_expiry",
        ):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds")
        if not self.min_ttl <= self.max_ttl:
            raise ValueError("min_ttl must not exceed max_ttl")
        if not self.heartbeat_expiry > self.heartbeat_interval:
            raise ValueError("heartbeat_expiry must exceed heartbeat_interval")
        for name in ("max_running", "max_result_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive int")

    def ttl_ms(self, requested_ms: int | None) -> int:
        """Clamped rather than refused: 2025-11-25 lets the receiver choose the TTL it grants
        (and report it), so a client asking for a year gets the maximum, not an error.
        """
        seconds = self.default_ttl if requested_ms is None else requested_ms / 1000
        return max(1, round(min(max(seconds, self.min_ttl), self.max_ttl) * 1000))


def _iso(wall: float) -> str:
    """ISO 8601 with a `Z`, as both schemas type `createdAt`/`lastUpdatedAt`; milliseconds so
    two updates within a second still order.
    """
    moment = datetime.datetime.fromtimestamp(wall, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """A record as the 2025-11-25 `Task` (`ttl`, `pollInterval`).

    Two wire shapes for one record, because the two eras name the durations differently
    (`ttl` vs `ttlMs`); the record itself is era-neutral so any replica can answer either.
    """
    return _task_fields(record, "ttl", "pollInterval")


def _task_fields(record: TaskRecord, ttl_key: str, poll_key: str) -> dict[str, Any]:
    """The fields both eras' `Task` share, under the era's names for the two durations."""
    wire: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": record.created_at,
        "lastUpdatedAt": record.last_updated_at,
        ttl_key: record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        wire[poll_key] = record.poll_interval_ms
    if record.status_message is not None:
        wire["statusMessage"] = record.status_message
    return wire


def modern_task(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """A record as the extension's `Task`, or its `DetailedTask` (what `tasks/get`
    and `notifications/tasks` show: the open questions, the result or the error)."""
    wire = _task_fields(record, "ttlMs", "pollIntervalMs")
    if detailed:
        if record.status == "input_required":
            answered = record.input_responses or {}
            wire["inputRequests"] = {
                key: question
                for key, question in (record.input_requests or {}).items()
                if key not in answered
            }
        elif record.status == "completed":
            wire["result"] = record.result or {"content": []}
        elif record.status == "failed":
            wire["error"] = record.error or {"code": INTERNAL_ERROR, "message": "failed"}
    return wire


async def _ask_tagged(
    scope: RequestScope,
    request_id: int | str,
    task_id: str,
    key: str,
    question: dict[str, Any],
) -> Any:
    """Ask one of a task's questions on a waiting `tasks/result` (2025-11-25), tagged
    with the related-task `_meta` the spec requires; the client's answer to it."""
    tagged = {
        "method": question["method"],
        "params": with_related_task(question.get("params"), task_id),
    }
    event: InputReceived = await scope.ask(request_id, {key: tagged})
    return event.answers[key]


#: The status message (and error message) of a task whose runner died.
RUNNER_LOST: Final = "the server process running this task stopped"


def not_found(task_id: str) -> MCPError:
    """A task another principal owns is reported exactly like a missing one, so task ids cannot
    be probed for existence (the same rule as sessions, RELIABILITY.md 1.4).
    """
    return MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found", {"taskId": task_id})


class _Running:
    """A body running in this process: what cancels it and what it waits for."""

    __slots__ = ("answers", "changed", "done", "poked", "questions", "record", "scope")

    def __init__(self, record: TaskRecord) -> None:
        """`changed` is replaced on every change (an event fires once): a waiting
        `tasks/result` waits on the current one and sees each new set of questions.
        """
        self.record = record
        self.scope = anyio.CancelScope()
        # key -> {method, params}: asked and not yet answered
        self.questions: dict[str, dict[str, Any]] = {}
        # key -> where its answer goes (a wire result, or an exception to raise)
        self.answers: dict[str, Waiter] = {}
        self.changed = anyio.Event()  # new questions (for a legacy tasks/result)
        self.poked = anyio.Event()  # look at the store now (an update or a cancel)
        self.done = anyio.Event()

    def poke(self) -> None:
        self.poked.set()

    def questions_changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


Body = Callable[["TaskHost", "TaskRecord"], Awaitable[dict[str, Any]]]
#: What an unanswered question raises in the body (the server's rule for any tool).
Failure = Callable[[str, InputAnswer], BaseException]


class TaskHost:
    """The tasks of one `MCPServer`: creating, running, asking, answering, cancelling."""

    def __init__(self, server: MCPServer, settings: TaskSettings | None = None) -> None:
        """Without a store the records live in this process (an in-memory store made on first
        use): a single-process server gets tasks without configuring anything.
        """
        self._server = server
        self.settings = settings or TaskSettings()
        self._group: anyio.abc.TaskGroup | None = None
        self._running: dict[str, _Running] = {}
        self._local: InMemoryStore | None = None
        # How many `keep_alive` loops beat (one per HTTP binding serving this
        # server): while any does, new records name this process as their runner.
        self._beating = 0

    # ---- where records live

    @property
    def registry(self) -> TaskRegistry:
        """The server's store's tasks (shared by replicas), else this process's own."""
        store = self._server.store
        if store is not None:
            return store.tasks
        if self._local is None:
            self._local = _store.InMemoryStore()
        return self._local.tasks

    @property
    def running_count(self) -> int:
        return len(self._running)

    @property
    def _runner(self) -> str | None:
        """What new records name as their runner: this process, while its
        heartbeat is kept (else nobody could tell it died, nor that it lives)."""
        store = self._server.store
        return store.process_id if store is not None and self._beating > 0 else None

    async def keep_alive(self, store: Store) -> None:
        """Renew this process's runner heartbeat on `store` every
        `heartbeat_interval`, until cancelled (the cluster binding runs it beside
        the bus). Records name this process as their runner from the first beat
        that succeeded; a beat the store refused is tried again next interval,
        and a lapse (no beat held for `heartbeat_expiry`) is logged: other
        replicas may have failed this process's tasks meanwhile, and a body
        whose task was failed is cancelled at its next look at the store."""
        counted = False
        try:
            while True:
                try:
                    held = await store.tasks.beat(self.settings.heartbeat_expiry)
                except _store.StoreError as exc:
                    logger.warning("task heartbeat not renewed: %s", exc)
                else:
                    if counted and not held:
                        logger.warning(
                            "task heartbeat of %s lapsed: its unfinished tasks may "
                            "have been failed by other replicas",
                            store.process_id,
                        )
                    if not counted:
                        counted = True
                        self._beating += 1
                await anyio.sleep(self.settings.heartbeat_interval)
        finally:
            if counted:
                self._beating -= 1

    @property
    def hosting_open(self) -> bool:
        """Whether `hosting()` is open (entering it again would only lend the group)."""
        return self._group is not None

    @asynccontextmanager
    async def hosting(self) -> AsyncIterator[None]:
        """The task group detached bodies run in, open while the server is served.
        Bodies still running when it closes are cancelled; their records stay
        `working` until a reader fails them (`_judged`: at once in this process,
        on another replica once this one's heartbeat has expired) or, naming no
        runner, until their TTL. Another replica cannot finish them.

        Entered again while open (one way of serving inside another), it lends
        the open group: the outermost entry owns it."""
        if self._group is not None:
            yield
            return
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    @staticmethod
    def owner_of(scope: RequestScope) -> str:
        """Who a task belongs to: the authenticated principal, else the connection
        (so `tasks/list` never shows one anonymous client another's tasks)."""
        connection = scope.connection
        if connection.principal is not None:
            return f"principal:{connection.principal}"
        owner: str = connection.__dict__.setdefault(
            _OWNER_KEY, f"connection:{secrets.token_hex(8)}"
        )
        return owner

    # ---- lifecycle

    async def start(
        self, scope: RequestScope, era: str, requested_ttl_ms: int | None, body: Body
    ) -> TaskRecord:
        """Create the record (durably) and start `body` detached; the new record."""
        if self._group is None:
            raise MCPError(
                INTERNAL_ERROR,
                "tasks run only while the server is served (inside `async with mcp.running():`)",
            )
        if len(self._running) >= self.settings.max_running:
            raise MCPError(
                INTERNAL_ERROR,
                f"this server runs at most {self.settings.max_running} tasks at once; try later",
            )
        now = _iso(scope.wall_time())
        record = _store.TaskRecord(
            task_id=secrets.token_urlsafe(18),
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=self.settings.ttl_ms(requested_ttl_ms),
            era=era,
            poll_interval_ms=max(1, round(self.settings.poll_interval * 1000)),
            owner=self.owner_of(scope),
            runner=self._runner,
        )
        try:
            stored = await self.registry.create(record)
        except _store.StoreError as exc:
            raise MCPError(INTERNAL_ERROR, f"the task could not be stored: {exc}") from None
        if stored is None:  # pragma: no cover - 144 random bits collided
            raise MCPError(INTERNAL_ERROR, "task id collision; try again")
        running = _Running(stored)
        self._running[stored.task_id] = running
        self._group.start_soon(self._run, running, scope, body)
        return stored

    async def _run(self, running: _Running, scope: RequestScope, body: Body) -> None:
        """The body runs under the task's TTL: past it the body is cancelled and the record
        deleted, which the spec allows and which keeps a runaway body from running for ever.
        Waiters still pending are failed at the end so that no `tasks/result` (or question)
        is left waiting on a body that is gone.
        """
        record = running.record
        try:
            with running.scope, anyio.move_on_after(record.ttl_ms / 1000) as ttl:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch, running)
                    outcome = await self._outcome(body, record)
                    group.cancel_scope.cancel()
                await self._finish(running, scope, outcome)
            if ttl.cancelled_caught:
                # Past its TTL the task is gone: the spec lets a server discard it.
                with anyio.CancelScope(shield=True):
                    await self._quietly(self.registry.delete(record.task_id))
        finally:
            running.done.set()
            for answer in running.answers.values():
                answer.set_exception(MCPError(INTERNAL_ERROR, "the task ended"))
            self._running.pop(record.task_id, None)

    async def _outcome(self, body: Body, record: TaskRecord) -> dict[str, Any]:
        """The record's final fields: (status, result or error)."""
        try:
            result = await body(self, record)
        except MCPError as exc:
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return {"status": "failed", "error": error, "status_message": exc.message}
        except Exception as exc:
            logger.error("task %s failed", record.task_id, exc_info=exc)
            message = f"Error executing the task: {exc}"
            return {
                "status": "failed",
                "error": {"code": INTERNAL_ERROR, "message": message},
                "status_message": message,
            }
        size = len(json.dumps(result, separators=(",", ":"), default=str))
        if size > self.settings.max_result_bytes:
            message = (
                f"the result ({size} bytes) is over this server's "
                f"{self.settings.max_result_bytes}-byte limit for a task result"
            )
            return {
                "status": "failed",
                "error": {"code": INTERNAL_ERROR, "message": message},
                "status_message": message,
            }
        # A tool's own error (`isError`) is a result, not a protocol failure: the
        # task completes with it (the extension says so; the TypeScript SDK's
        # 2025-11-25 client fetches a result only from a completed task).
        return {"status": "completed", "result": result}

    async def _finish(
        self, running: _Running, scope: RequestScope, outcome: dict[str, Any]
    ) -> None:
        """Shielded, because the final record must be written even when the body ended by
        cancellation racing the result: a task that never reaches a terminal status would be
        polled until its TTL.
        """
        record = running.record
        final = replace(
            record,
            status=outcome["status"],
            result=outcome.get("result"),
            error=outcome.get("error"),
            status_message=outcome.get("status_message"),
            input_requests=None,
            last_updated_at=_iso(scope.wall_time()),
        )
        with anyio.CancelScope(shield=True):
            stored = await self._quietly(self.registry.update(final))
        if stored is not None:  # else cancelled, expired or failed first: that stands
            running.record = stored
            self.announce(stored, scope)
        else:
            logger.info("task %s had ended on the store; its outcome is dropped", record.task_id)

    async def _watch(self, running: _Running) -> None:
        """Look at the store every poll interval (or when poked): answers given on
        any replica reach the body; a cancel written anywhere stops it."""
        task_id = running.record.task_id
        while True:
            with anyio.move_on_after(self.settings.poll_interval):
                await running.poked.wait()
            running.poked = anyio.Event()
            try:
                record = await self.registry.get(task_id)
            except _store.StoreError:
                continue  # the store is away: look again next time
            if record is None or record.terminal:
                running.scope.cancel()
                return
            for key, value in (record.input_responses or {}).items():
                answer = running.answers.pop(key, None)
                if answer is not None:
                    answer.set_result(value)

    async def _quietly(self, operation: Awaitable[Any]) -> Any:
        """A store that fails a write costs the update, not the task: polling clients see the
        last stored status, and the next write (or the TTL) settles it.
        """
        try:
            return await operation
        except _store.StoreError as exc:
            logger.warning("task store write failed: %s", exc)
            return None

    def announce(self, record: TaskRecord, scope: RequestScope) -> None:
        """A status change, told to whoever listens (both optional in the specs):
        2026-07-28 listen streams that asked for this task (`notifications/tasks`,
        on every replica), or the creating 2025-11-25 session if it is still there
        (`notifications/tasks/status`)."""
        if record.era != "legacy":
            try:
                self._server.notify_task(modern_task(record, detailed=True))
            except Exception as exc:  # a notification must never fail the task
                logger.warning("notifications/tasks for %s failed: %s", record.task_id, exc)
            return
        connection = scope.connection
        try:
            connection.send_task_status(legacy_task(record))
            if record.terminal:
                connection.task_ended(record.task_id)
        except Exception:  # the connection is gone or closing: polling still works
            return
        scope.wake()

    # ---- asking

    async def ask(
        self, task_id: str, key: str, question: dict[str, Any], scope: RequestScope
    ) -> Any:
        """Ask the client for the running body of `task_id`; the answer (wire form)."""
        running = self._running.get(task_id)
        if running is None:
            raise MCPError(INTERNAL_ERROR, "the task is not running here")
        if key in running.questions or key in running.answers:
            raise MCPError(INTERNAL_ERROR, f"question key {key!r} asked twice in one task")
        answer = Waiter()
        running.questions[key] = question
        running.answers[key] = answer
        await self._set_questions(running, scope)
        try:
            return await answer.wait()
        finally:
            running.questions.pop(key, None)
            running.answers.pop(key, None)
            if not running.done.is_set():
                with anyio.CancelScope(shield=True):
                    await self._set_questions(running, scope)

    async def _set_questions(self, running: _Running, scope: RequestScope) -> None:
        """The record is written only when the questions really changed: every write is a store
        round trip, and clients poll the record, so no-op writes would only cost.
        """
        record = running.record
        status = "input_required" if running.questions else "working"
        if status == record.status and record.input_requests == (running.questions or None):
            return
        changed = replace(
            record,
            status=status,
            input_requests=dict(running.questions) or None,
            last_updated_at=_iso(scope.wall_time()),
        )
        stored = await self._quietly(self.registry.update(changed))
        if stored is None:
            return
        running.record = stored
        running.questions_changed()
        if status != record.status:
            self.announce(stored, scope)

    async def answer(self, task_id: str, responses: Mapping[str, Any]) -> bool:
        """`tasks/update`: keep the answers on the store (any replica's body finds
        them) and hand them at once to a body running here."""
        try:
            kept = await self.registry.respond(task_id, dict(responses))
        except _store.StoreError as exc:
            raise MCPError(INTERNAL_ERROR, f"the task store failed: {exc}") from None
        running = self._running.get(task_id)
        if running is not None:
            for key, value in responses.items():
                waiting = running.answers.pop(key, None)
                if waiting is not None:
                    waiting.set_result(value)
        return kept

    async def carry(
        self, task_id: str, scope: RequestScope, request_id: int | str, failure: Failure
    ) -> None:
        """A 2025-11-25 `tasks/result` waiting here: ask the running body's open
        questions on this request (tagged with the task), until the task ends."""
        running = self._running.get(task_id)
        if running is None:
            return
        carried: set[str] = set()
        while not running.done.is_set():
            pending = [key for key in running.questions if key not in carried]
            if not pending:
                changed = running.changed
                with anyio.move_on_after(self.settings.poll_interval):
                    await changed.wait()
                continue
            key = pending[0]
            carried.add(key)
            got = await _ask_tagged(scope, request_id, task_id, key, running.questions[key])
            waiting = running.answers.pop(key, None)
            if waiting is None:
                continue
            if got.status == "answered":
                waiting.set_result(to_wire(got.result))
            else:
                waiting.set_exception(failure(key, got))

    # ---- client requests

    async def get(self, task_id: str, scope: RequestScope) -> TaskRecord:
        """The record, if this requester may see it (else "not found")."""
        try:
            record = await self.registry.get(task_id)
        except _store.StoreError as exc:
            raise MCPError(INTERNAL_ERROR, f"the task store failed: {exc}") from None
        if record is None or not self._may_see(record, scope):
            raise not_found(task_id)
        return await self._judged(record, scope, {})

    async def _judged(
        self, record: TaskRecord, scope: RequestScope, alive: dict[str, bool]
    ) -> TaskRecord:
        """`record` as it stands once its runner's liveness is judged: failed (and
        announced as any failure) if it is unfinished and its runner is gone.

        Gone means: another process whose heartbeat has expired (the store checks
        that again in the same step as the write, so a runner beating meanwhile
        keeps its task), or this process when the body no longer runs here (it
        ended without its outcome reaching the store). A record naming no runner
        is never judged. Whichever of the runner's outcome and this failure
        reaches the store first stands. `alive` caches answers within one request.
        """
        runner = record.runner
        if record.terminal or runner is None:
            return record
        store = self._server.store
        mine = store is not None and runner == store.process_id
        if mine:
            if record.task_id in self._running:
                return record
        else:
            if runner not in alive:
                try:
                    alive[runner] = await self.registry.runner_alive(runner)
                except _store.StoreError:
                    return record  # cannot tell now: the next read judges again
            if alive[runner]:
                return record
        failed = replace(
            record,
            status="failed",
            status_message=RUNNER_LOST,
            error={"code": INTERNAL_ERROR, "message": RUNNER_LOST},
            input_requests=None,
            last_updated_at=_iso(scope.wall_time()),
        )
        write = self.registry.update(failed) if mine else self.registry.fail_orphan(failed)
        stored: TaskRecord | None = await self._quietly(write)
        if stored is None:  # it ended meanwhile (or its runner beat again): read it again
            current: TaskRecord | None = await self._quietly(self.registry.get(record.task_id))
            return current if current is not None else record
        logger.info("task %s failed: its runner %s is gone", record.task_id, runner)
        self.announce(stored, scope)
        return stored

    def _may_see(self, record: TaskRecord, scope: RequestScope) -> bool:
        # A task id is a bearer secret (144 random bits), except that a task
        # created by an authenticated principal is that principal's alone.
        owner = record.owner or ""
        if owner.startswith("principal:"):
            return owner == f"principal:{scope.connection.principal}"
        return True

    async def wait_terminal(
        self, task_id: str, scope: RequestScope, request_id: int | str, failure: Failure
    ) -> TaskRecord:
        """`tasks/result`: wait until the task ends, carrying its questions: those of
        a body running here as `carry` does, those of a body on another replica
        from the record (`carry_remote`); the store is looked at every poll interval."""
        carried: set[str] = set()
        while True:
            record = await self.get(task_id, scope)
            if record.terminal:
                return record
            running = self._running.get(task_id)
            if running is not None:
                async with anyio.create_task_group() as group:
                    group.start_soon(self.carry, task_id, scope, request_id, failure)
                    await running.done.wait()
                    group.cancel_scope.cancel()
            elif not await self.carry_remote(record, scope, request_id, carried):
                await anyio.sleep(self.settings.poll_interval)

    async def carry_remote(
        self, record: TaskRecord, scope: RequestScope, request_id: int | str, carried: set[str]
    ) -> bool:
        """A 2025-11-25 `tasks/result` that reached another replica than the one
        running the body: ask one open question of the record on this request, and
        keep the answer on the store as `tasks/update` does, where the body's look
        at the store finds it. Whether a question was asked.

        Behind a round-robin balancer the `tasks/result` a client sends on seeing
        `input_required` lands anywhere; without this, a body waiting for its
        answer would wait until its TTL while that request polled the store. A
        question the client leaves unanswered (its request failed, or was
        cancelled) cannot fail a body in another process: that body waits until
        its TTL or a `tasks/cancel`."""
        if record.status != "input_required" or not record.input_requests:
            return False
        pending = [key for key in record.input_requests if key not in carried]
        if not pending:
            return False
        key = pending[0]
        carried.add(key)
        question = record.input_requests[key]
        got = await _ask_tagged(scope, request_id, record.task_id, key, question)
        if got.status == "answered":
            await self.answer(record.task_id, {key: to_wire(got.result)})
        return True

    async def cancel(self, task_id: str, scope: RequestScope) -> TaskRecord | None:
        """`tasks/cancel`: the cancelled record, or None if the task had already ended."""
        record = await self.get(task_id, scope)
        if record.terminal:
            return None
        cancelled = replace(
            record,
            status="cancelled",
            status_message="cancelled by the client",
            input_requests=None,
            last_updated_at=_iso(scope.wall_time()),
        )
        try:
            stored = await self.registry.update(cancelled)
        except _store.StoreError as exc:
            raise MCPError(INTERNAL_ERROR, f"the task store failed: {exc}") from None
        if stored is None:
            return None  # it ended meanwhile
        running = self._running.get(task_id)
        if running is not None:
            running.record = stored
            running.scope.cancel()
        self.announce(stored, scope)
        return stored

    async def list(
        self, scope: RequestScope, cursor: str | None, page: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """A page of the requester's tasks and the next cursor (an offset)."""
        start = 0
        if cursor is not None:
            if not cursor.isdigit() or len(cursor) > 9:
                raise MCPError(INVALID_PARAMS, "Invalid cursor")
            start = int(cursor)
        try:
            found = await self.registry.list(self.owner_of(scope), start + page + 1)
        except _store.StoreError as exc:
            raise MCPError(INTERNAL_ERROR, f"the task store failed: {exc}") from None
        alive: dict[str, bool] = {}
        chunk = [await self._judged(r, scope, alive) for r in found[start : start + page]]
        more = len(found) > start + page
        return chunk, (str(start + page) if more else None)
