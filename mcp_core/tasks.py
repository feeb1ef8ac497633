"""Tasks, both eras: the public names of the rules in `_tasks` (what a server or
a client built on the engine needs to create, tag and refuse tasks).

See `_tasks` for the rules themselves and docs/tasks.md for using them.
"""

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
