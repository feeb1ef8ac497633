"""The rules of tasks, both eras, as data and small pure helpers.

2025-11-25 (SEP-1686) puts tasks in the core: a requestor adds `params.task`
to a request the receiver declared it may augment (`capabilities.tasks.requests`),
the receiver answers with a `CreateTaskResult` at once and the requestor polls
with `tasks/get`, fetches the outcome with `tasks/result`, lists with
`tasks/list` and stops the work with `tasks/cancel`, never with
`notifications/cancelled`. Messages about a task carry
`_meta["io.modelcontextprotocol/related-task"]`, and the progress token of the
creating request stays valid until the task reaches a terminal status.

2026-07-28 moves tasks into the extension `io.modelcontextprotocol/tasks`
(SEP-2663): the client lists the extension in the capabilities of each request,
the server alone decides to answer a `tools/call` with `resultType: "task"`, and
the client polls `tasks/get`, answers the task's questions with `tasks/update`
and stops it with `tasks/cancel`. A request that does not declare the extension
gets no task, and its `tasks/*` requests get `-32021` naming the extension.

The connections (`_connection.py`, `_client.py`, `_server.py`) call these; the
method rows themselves are in `_versions.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from ._requests import EMPTY
from ._versions import TASKS_EXTENSION, Role

__all__ = [
    "LEGACY_AUGMENTABLE",
    "MODERN_TASK_METHODS",
    "RELATED_TASK_META_KEY",
    "TASKS_EXTENSION",
    "TERMINAL_STATUSES",
    "NO_TASKS",
    "LiveTasks",
    "extension_declared",
    "is_task_augmented",
    "missing_extension",
    "related_task_meta",
    "terminal_status",
    "wants_task",
    "with_related_task",
]

RELATED_TASK_META_KEY: Final = "io.modelcontextprotocol/related-task"

TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})

# 2025-11-25: (sender, method) -> the receiver's capability path that lets the
# sender augment it with `params.task`.
LEGACY_AUGMENTABLE: Final[Mapping[tuple[Role, str], str]] = {
    ("client", "tools/call"): "tasks.requests.tools.call",
    ("server", "sampling/createMessage"): "tasks.requests.sampling.createMessage",
    ("server", "elicitation/create"): "tasks.requests.elicitation.create",
}

# 2026-07-28 extension: the requests a server may answer with `resultType: "task"`.
MODERN_TASK_METHODS: Final = frozenset({"tools/call"})

# The extension's own requests, which a request must declare the extension to send.
MODERN_TASK_REQUESTS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def wants_task(params: Any) -> bool:
    """Whether wire params ask for task-augmented execution (2025-11-25 `task`)."""
    if type(params) is dict:  # what the engine passes: skip the ABC checks
        task = params.get("task")
        return task is not None and (type(task) is dict or isinstance(task, Mapping))
    return isinstance(params, Mapping) and isinstance(params.get("task"), Mapping)


def is_task_augmented(model: Any) -> bool:
    """Whether validated params (a model) carry the 2025-11-25 `task` field."""
    return getattr(model, "task", None) is not None


def extension_declared(capabilities: Any) -> bool:
    """Whether a capabilities object (wire form) lists the tasks extension."""
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(TASKS_EXTENSION), Mapping)


def missing_extension() -> tuple[int, str, dict[str, Any]]:
    """The `-32021` refusal naming the extension: (code, message, data)."""
    return (
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def related_task_meta(task_id: str) -> dict[str, Any]:
    """The `_meta` entry that ties a message to a task."""
    return {RELATED_TASK_META_KEY: {"taskId": task_id}}


def with_related_task(wire: Mapping[str, Any] | None, task_id: str) -> dict[str, Any]:
    """A copy of wire params or a result with the related-task `_meta` added."""
    out = dict(wire or {})
    meta = out.get("_meta")
    out["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), **related_task_meta(task_id)}
    return out


def terminal_status(method: str, wire: Any) -> str | None:
    """The task id a message shows in a terminal status, else None.

    `tasks/get` and `tasks/cancel` results and status notifications carry the
    task's status; a `tasks/result` answer is terminal by definition (it is only
    given once the task ended), which the caller handles, knowing the id.
    """
    if type(wire) is not dict and not isinstance(wire, Mapping):
        return None
    task_id = wire.get("taskId")
    if type(task_id) is str and wire.get("status") in TERMINAL_STATUSES:
        return task_id
    return None


class LiveTasks:
    """Tasks whose creating request's progress token is still valid, by task id.

    Bounded by `Limits.max_tasks`: past it a new task simply loses the
    progress-after-creation (its progress notifications are refused, or
    ignored on the requestor's side), which is what an unbounded table would
    otherwise cost in memory. Entries leave when the task is seen terminal.
    """

    __slots__ = ("_by_task", "_limit")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        # The shared `EMPTY` until the first task: most sessions never create one.
        self._by_task: dict[str, list[Any]] = EMPTY

    def start(self, task_id: str, token: int | str, request_id: int | str) -> bool:
        """False when the table is full and the task is new: the task itself is still created
        (the caller does not fail it), only its progress after creation is lost. A task
        already present is updated, never refused, so a repeated start cannot lose a live
        token.
        """
        if task_id not in self._by_task and len(self._by_task) >= self._limit:
            return False
        if self._by_task is EMPTY:
            self._by_task = {}
        # [token, creating request id, last progress sent or seen]
        self._by_task[task_id] = [token, request_id, None]
        return True

    def get(self, task_id: str) -> list[Any] | None:
        """The entry is a list rather than a tuple so the last progress value can be updated in
        place on every notification (the value must increase, 2025-03-26 "Progress").
        """
        return self._by_task.get(task_id)

    def end(self, task_id: str) -> list[Any] | None:
        """The ended entry is returned so the caller can drop the token's routing, but only if
        the token still points at this task (see `_client._task_over`).
        """
        return self._by_task.pop(task_id, None)

    def by_token(self, token: int | str) -> str | None:
        """The task a progress token belongs to. A linear scan, which the bound keeps cheap;
        nothing in the engine calls it on a hot path (today nothing calls it at all).
        """
        for task_id, entry in self._by_task.items():
            if entry[0] == token:
                return task_id
        return None

    def routes(self, token: int | str, request_id: int | str) -> bool:
        """Whether a live task keeps `token` routed to its creating `request_id` (for
        `check_invariants`; a linear scan, bounded by the limit)."""
        return any(e[0] == token and e[1] == request_id for e in self._by_task.values())

    def __len__(self) -> int:
        return len(self._by_task)

    def clear(self) -> None:
        self._by_task.clear()


#: What a connection holds until its first task: one table shared by all, read-only
#: because its limit is 0 (`start` refuses before writing, `get` and `end` find nothing).
#: The roles replace it with a table of their own at their one `start` site: most
#: sessions never create a task, and the table was 48 bytes of each.
NO_TASKS: Final = LiveTasks(0)
