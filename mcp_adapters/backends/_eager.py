"""Eager asyncio tasks: a task whose first step runs at once, in its starter's stack.

Why: a coroutine handler that never suspends (an `async def` tool that awaits
nothing, the usual echo) paid for a task that ran one loop turn later, and its
answer reached the peer one more turn after that; a plain `def` tool is
answered where its request arrived. Running the task's first step at once lets
such a handler answer in place too, and a handler that does suspend continues
as an ordinary task.

The first step must run *as the task*: `asyncio.current_task()`, anyio cancel
scopes, `asyncio.timeout()` and the task's copy of the context variables all
bind to the current task, so stepping the coroutine in the starter's frame
under the starter's task would tie them to the wrong one. CPython 3.12 has
exactly this (`Task(..., eager_start=True)`, what `asyncio.eager_task_factory`
uses), and it is used there. On 3.11 (our floor), where a task always schedules its first step, that step is taken now instead:
the task is made as usual (the C task, with its own step code for every step,
the first included), its scheduled first step is found where the loop queued
it (the last handle of the loop's ready queue, checked to be this task's
step), taken off it, and run at once in the task's context, with the
starter's task (if any) left for the step and entered again after it, as a
task switch does (`asyncio.tasks._leave_task` / `_enter_task`, the functions
each step uses). A loop that does not queue handles so (not an asyncio
`BaseEventLoop`) keeps the task as it was made: started on the next turn.
The private names used are `BaseEventLoop._ready` and a `Handle`'s
`_callback` (allowed by name in tests/test_layout.py), stable from 3.8 to
3.13; only 3.11 needs them.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from asyncio import tasks as asyncio_tasks
from collections import deque
from collections.abc import Coroutine
from typing import Any

#: The running version has `Task(eager_start=True)` (CPython 3.12+).
NATIVE = sys.version_info >= (3, 12)


_BASE_CREATE_TASK = asyncio.BaseEventLoop.create_task
_Task = asyncio.Task


def _start_311(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]
) -> tuple[asyncio.Task[Any], bool]:
    # The task's own context, passed in so that the step below runs in it.
    context = contextvars.copy_context()
    task: asyncio.Task[Any]
    if type(loop).create_task is _BASE_CREATE_TASK and loop.get_task_factory() is None:
        # What `BaseEventLoop.create_task` does then, without its frame and checks
        # (a closed loop still refuses: the task's `call_soon` checks it).
        task = _Task(coro, loop=loop, context=context)
    else:
        task = loop.create_task(coro, context=context)
    ready = loop._ready if isinstance(loop, asyncio.BaseEventLoop) else None  # type: ignore[attr-defined]
    if type(ready) is not deque or not ready:
        return task, False  # not a loop we know the queue of: the first step stays queued
    step = ready[-1]._callback  # (a task's first step is queued with no arguments)
    if getattr(step, "__self__", None) is not task:
        return task, False
    # Taken off the queue (it is its last entry, and nothing else holds it): the step
    # runs here instead, and the loop finds nothing of it later.
    ready.pop()
    previous = asyncio_tasks._current_tasks.get(loop)  # type: ignore[attr-defined]
    if previous is not None:
        asyncio_tasks._leave_task(loop, previous)
    try:
        # The task's own step: it enters the task as current, runs the coroutine to its
        # first suspension (or end) and leaves it; only KeyboardInterrupt and SystemExit
        # get out of it, as out of 3.12's eager step.
        context.run(step)
    finally:
        if previous is not None:
            asyncio_tasks._enter_task(loop, previous)
    return task, task.done()


def _start_native(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]
) -> tuple[asyncio.Task[Any], bool]:
    task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return task, task.done()


#: `start(loop, coro) -> (task, finished)`: the task, its first step taken; `finished`
#: when that step ended the coroutine (the task holds or will hold its outcome, and
#: nothing is left to cancel).
start = _start_native if NATIVE else _start_311

__all__ = ["NATIVE", "start"]
