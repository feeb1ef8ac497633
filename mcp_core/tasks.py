"""Tasks, both eras: the public names of the rules in `_tasks` (what a server or
a client built on the engine needs to create, tag and refuse tasks).

See `_tasks` for the rules themselves and docs/tasks.md for using them.
"""

# The two eras' task vocabularies side by side: 2025-11-25 tasks are core
# (`basic/utilities/tasks`: a `task` param, `LEGACY_AUGMENTABLE` says which requests may
# carry it, `RELATED_TASK_META_KEY` ties messages to a task); 2026-07-28 moved them to the
# `io.modelcontextprotocol/tasks` extension (SEP-2663: `TASKS_EXTENSION`,
# `MODERN_TASK_METHODS`, `missing_extension` for the -32021 a server owes a request that did
# not declare it). An application built on the engine needs both to serve one client of each
# era with the same task store, which is why the rules are public and not only used inside
# the connections.
from ._tasks import (
    LEGACY_AUGMENTABLE,
    MODERN_TASK_METHODS,
    RELATED_TASK_META_KEY,
    TASKS_EXTENSION,
    TERMINAL_STATUSES,
    extension_declared,
    is_task_augmented,
    missing_extension,
    related_task_meta,
    terminal_status,
    wants_task,
    with_related_task,
)

# `TERMINAL_STATUSES` and `terminal_status` are public because a task's progress token must
# stop at its terminal status (2025-11-25, "Progress"): an application keeping its own task
# store needs the same judgement of "ended" as the engine.
__all__ = [
    "LEGACY_AUGMENTABLE",
    "MODERN_TASK_METHODS",
    "RELATED_TASK_META_KEY",
    "TASKS_EXTENSION",
    "TERMINAL_STATUSES",
    "extension_declared",
    "is_task_augmented",
    "missing_extension",
    "related_task_meta",
    "terminal_status",
    "wants_task",
    "with_related_task",
]
