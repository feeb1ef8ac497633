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
uses), and it is used there. On 3.11 (our floor), where a task always
schedules its first step, that step is taken now instead: the task is made as
usual (the C task, with its own step code for every step, the first
included), except that while its constructor runs the loop's `call_soon` is
the loop's own catch (made once per loop with the loop's `start`: see
`starter`), set on the loop instance (the constructor looks the method up on
the loop), which keeps the first task step it is given instead of queueing
it; that step (checked to be this task's) is run at once in the task's
context, with the starter's task (if any) left for the step and entered again
after it, as a task switch does (`asyncio.tasks._leave_task` /
`_enter_task`, the functions each step uses). Until session 13 the step was
queued and taken off the loop's ready queue again; handing it over skips the
`Handle`, three calls into the loop and the queue entry: the constructor's
share fell from about 10,300 to 7,100 instructions, about 1,500 net of the
28,000 an eager coroutine tool cost over a plain one (callgrind, stdio server). A
loop that makes tasks its own way (a task factory, its own `call_soon` or
ready queue: not a plain asyncio `BaseEventLoop`) keeps the task as it makes
it: started on the next turn. The private names read are `BaseEventLoop._ready`
and `_task_factory` (allowed by name in tests/test_layout.py), only to
recognise such a loop (the factory as `BaseEventLoop.create_task` itself reads
it: `get_task_factory()` was a Python call per task); on 3.12+ only the task
factory and the class's `create_task` are looked at (`_start_native`).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import weakref
from asyncio import tasks as asyncio_tasks
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

#: The running version has `Task(eager_start=True)` (CPython 3.12+).
NATIVE = sys.version_info >= (3, 12)


_BASE_CREATE_TASK = asyncio.BaseEventLoop.create_task
_BASE_CALL_SOON = asyncio.BaseEventLoop.call_soon
_Task = asyncio.Task
_current_tasks = asyncio_tasks._current_tasks  # type: ignore[attr-defined]
_enter_task = asyncio_tasks._enter_task
_leave_task = asyncio_tasks._leave_task

#: A loop's `start(coro, name=None) -> (task, finished)` (`starter`).
_Start = Callable[[Coroutine[Any, Any, Any], str | None], tuple[asyncio.Task[Any], bool]]


def _starter_311(loop: asyncio.AbstractEventLoop) -> _Start:
    """`loop`'s `start` on 3.11: made once per loop (`starter`), with its own catch.

    Why per loop: the step a task's constructor hands `call_soon` is kept in this
    loop's own cell (each loop runs on one thread, so two threads starting tasks on
    their loops at once never share one), and `call_soon` is set to this loop's own
    catch, a plain function (no `MethodType` made per task, no table keyed by loop
    written and read back per task): about 2,000 instructions less per eager start
    than a bound catch storing into tables by loop (callgrind, 3.11). The loop is held
    weakly: the starters are kept by loop in a `WeakKeyDictionary`, whose values must
    not keep their keys alive.
    """
    loop_ref = weakref.ref(loop)
    # The first step (and its context) the task's constructor gave `call_soon`.
    caught: list[Any] = [None, None]

    def catch(callback: Any, *args: Any, context: Any = None) -> Any:
        """`loop.call_soon` while `start` makes a task: the first task step scheduled is
        kept for `start` to run now (no `Handle`, nothing queued); anything else (what a
        finalizer run by a garbage collection inside the constructor might schedule) is
        queued as usual."""
        try:
            owner = callback.__self__  # a task's step: the task (no `getattr` call)
        except AttributeError:
            owner = None
        if args or caught[0] is not None or type(owner) is not _Task:
            return _BASE_CALL_SOON(loop_ref(), callback, *args, context=context)  # type: ignore[arg-type]
        caught[0] = callback
        caught[1] = context
        return None

    def start(
        coro: Coroutine[Any, Any, Any], name: str | None = None
    ) -> tuple[asyncio.Task[Any], bool]:
        loop = loop_ref()
        assert loop is not None  # (its caller runs on it)
        try:
            # The loop's `call_soon` is asyncio's own, neither overridden by its class nor
            # set on the instance (by some instrumentation, which ours must not replace).
            # (The bound method is asked, not `loop.__dict__`: reading that makes the
            # instance keep a real dict, and every attribute read of the loop's own code
            # slower, about 5,000 instructions per request.)
            own_call_soon = loop.call_soon.__func__ is not _BASE_CALL_SOON  # type: ignore[attr-defined]
        except AttributeError:  # not a method at all
            own_call_soon = True
        if (
            own_call_soon
            or type(loop).create_task is not _BASE_CREATE_TASK
            or type(loop._ready) is not deque  # type: ignore[attr-defined]
            # (`BaseEventLoop.create_task` reads the attribute, not `get_task_factory()`:
            # so does this check, without a Python call per task)
            or loop._task_factory is not None  # type: ignore[attr-defined]
        ):
            # Not a plain asyncio loop (its own `call_soon`, its own queue, a task
            # factory): the task as the loop makes it, started on the next turn.
            return loop.create_task(coro, name=name, context=contextvars.copy_context()), False
        # What `BaseEventLoop.create_task` does, without its frame and checks, except that
        # the constructor's `loop.call_soon(step, context=...)` finds `catch` on the
        # instance first and hands the step over instead of queueing it (no `Handle`, no
        # three calls into the loop, no queue entry to take off again). The loop runs this
        # code, so it is not closed (the check `call_soon` would have made).
        # The task copies the starter's context itself, and hands it to `call_soon` with
        # its step: the step runs in that one below (no copy of ours to pass in).
        loop.call_soon = catch  # type: ignore[method-assign,assignment]
        try:
            task = _Task(coro, loop=loop, name=name)
        finally:
            del loop.call_soon
            step, step_context = caught
            caught[0] = caught[1] = None
        if step is None or step.__self__ is not task:  # (`catch` keeps only a task's step)
            # Another task's step (a task made by a finalizer that a garbage collection
            # ran inside the constructor, before its `call_soon`): it is queued now, and
            # this task's step went to the queue through the real `call_soon`, so this
            # task starts on the next turn, as the loop would have started it.
            if step is not None:
                loop.call_soon(step, context=step_context)
            return task, False
        previous = _current_tasks.get(loop)
        if previous is not None:
            _leave_task(loop, previous)
        try:
            # The task's own step: it enters the task as current, runs the coroutine to
            # its first suspension (or end) and leaves it; only KeyboardInterrupt and
            # SystemExit get out of it, as out of 3.12's eager step.
            step_context.run(step)
        finally:
            if previous is not None:
                _enter_task(loop, previous)
        return task, task.done()

    return start


def _start_native(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], name: str | None = None
) -> tuple[asyncio.Task[Any], bool]:
    """3.12+: `Task(eager_start=True)`, unless the loop makes its tasks its own way.

    A loop with a task factory or a `create_task` of its own gets the task made by
    `loop.create_task`, as on 3.11 (the factory decides whether it starts eagerly:
    `asyncio.eager_task_factory` does). Until session 23 the native path made the task
    itself regardless, so a factory installed for instrumentation was bypassed on
    3.12+ only. The loop's `call_soon` plays no part here: an eager first step
    schedules nothing.
    """
    # (The class first: a loop of another kind, uvloop's, has no `_task_factory`.)
    own_create_task = type(loop).create_task is not _BASE_CREATE_TASK
    if own_create_task or loop._task_factory is not None:  # type: ignore[attr-defined]
        made = loop.create_task(coro, name=name, context=contextvars.copy_context())
        return made, made.done()
    task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, name=name, eager_start=True)  # type: ignore[call-arg]
    return task, task.done()


def _starter_native(loop: asyncio.AbstractEventLoop) -> _Start:
    loop_ref = weakref.ref(loop)  # (held weakly, as on 3.11: see `_starter_311`)

    def start(
        coro: Coroutine[Any, Any, Any], name: str | None = None
    ) -> tuple[asyncio.Task[Any], bool]:
        loop = loop_ref()
        assert loop is not None  # (its caller runs on it)
        return _start_native(loop, coro, name)

    return start


_make_starter = _starter_native if NATIVE else _starter_311
_starters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Start] = (
    weakref.WeakKeyDictionary()
)


def _no_loop() -> None:
    return None


#: The loop `starter` was last asked for, weakly, and its `start`: a thread's loop is
#: nearly always the one asked for before, so `start` finds it without the
#: `WeakKeyDictionary`'s Python-level lookup. (Replaced as one tuple: threads that
#: read it while another replaces it see either pair, each consistent.)
_last: tuple[Callable[[], object], _Start] = (_no_loop, None)  # type: ignore[assignment]


def starter(loop: asyncio.AbstractEventLoop) -> _Start:
    """`loop`'s `start(coro, name=None) -> (task, finished)`: the task, its first step
    taken; `finished` when that step ended the coroutine (the task holds or will hold its
    outcome, and nothing is left to cancel). One per loop, made on first use: a caller
    that starts many tasks on one loop (a session's `_Tasks`) keeps it."""
    global _last
    try:
        made = _starters[loop]
    except KeyError:
        made = _starters[loop] = _make_starter(loop)
    _last = (weakref.ref(loop), made)
    return made


def start(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], name: str | None = None
) -> tuple[asyncio.Task[Any], bool]:
    """`starter(loop)(coro, name)`."""
    last = _last
    if last[0]() is loop:
        return last[1](coro, name)
    return starter(loop)(coro, name)


__all__ = ["NATIVE", "start", "starter"]
