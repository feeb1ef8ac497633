"""`backends._eager.start`: an asyncio task whose first step runs in the starter's stack.

Pinned: during that step the new task is the current one (and the starter's
task is current again after it, also when the starter is no task at all, or
another eager step); a coroutine that ends in the step leaves a finished task
with its outcome and nothing queued; one that suspends goes on as an ordinary
task, cancellable while it waits; the step runs in the task's own copy of the
context. On 3.11 this is the C task's own first step taken off the loop's ready
queue; on 3.12+ `Task(eager_start=True)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import types
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_adapters.backends import _eager
from tests.timing import HANG

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


def run(main: Any, loop_factory: Any = None) -> Any:
    """`main()` to its end (under `HANG`) on a new loop, asyncio's own or `loop_factory()`'s."""
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(asyncio.wait_for(main(), HANG))


@contextlib.contextmanager
def recording_task_factory(loop: asyncio.AbstractEventLoop) -> Iterator[list[Any]]:
    """A task factory installed on `loop` for the block; the list holds the tasks it made."""
    made: list[Any] = []

    def factory(loop: Any, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made.append(asyncio.Task(coro, loop=loop, **kwargs))
        return made[-1]

    loop.set_task_factory(factory)
    try:
        yield made
    finally:
        loop.set_task_factory(None)


def test_the_first_step_runs_now_as_the_new_task() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        starter = asyncio.current_task()
        seen: list[Any] = []

        async def body() -> str:
            seen.append(asyncio.current_task())
            return "done"

        task, finished = _eager.start(loop, body())
        assert finished and task.done() and task.result() == "done"
        assert isinstance(task, asyncio.Task)  # a real task, not a look-alike
        assert seen == [task]
        assert asyncio.current_task() is starter
        assert len(loop._ready) == 0  # type: ignore[attr-defined]  # nothing left queued
        assert task not in asyncio.all_tasks()

    run(main)


def test_a_task_that_suspends_goes_on_as_a_task() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        gate = loop.create_future()
        steps: list[Any] = []

        async def body() -> str:
            steps.append(asyncio.current_task())
            value = await gate
            steps.append(asyncio.current_task())
            return value

        task, finished = _eager.start(loop, body())
        assert not finished and not task.done()
        assert steps == [task]  # the first step ran already, before any loop turn
        assert task in asyncio.all_tasks()
        gate.set_result("opened")
        assert await task == "opened"
        assert steps == [task, task]

    run(main)


def test_cancelled_while_waiting_after_the_first_step() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        gate = loop.create_future()
        cleaned: list[bool] = []

        async def body() -> None:
            try:
                await gate
            finally:
                cleaned.append(True)

        task, finished = _eager.start(loop, body())
        assert not finished
        task.cancel()  # before the loop ran anything: the task waits on `gate` already
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned == [True] and gate.cancelled()

    run(main)


def test_an_error_in_the_first_step_is_the_tasks() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def body() -> None:
            raise ValueError("at once")

        task, finished = _eager.start(loop, body())
        assert finished
        with pytest.raises(ValueError, match="at once"):
            task.result()

        async def cancelled() -> None:
            raise asyncio.CancelledError

        task, finished = _eager.start(loop, cancelled())
        assert finished and task.cancelled()

    run(main)


def test_the_first_step_has_the_tasks_own_context() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        VAR.set("starter")

        async def body() -> str:
            found = VAR.get()
            VAR.set("task")
            await asyncio.sleep(0)
            return f"{found}, then {VAR.get()}"

        task, _ = _eager.start(loop, body())
        assert VAR.get() == "starter"  # what the task set stays in the task
        assert await task == "starter, then task"

    run(main)


def test_started_outside_any_task_and_inside_another_eager_step() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        seen: dict[str, Any] = {}
        done = loop.create_future()

        async def inner() -> None:
            seen["inner"] = asyncio.current_task()

        async def outer() -> None:
            seen["outer"] = asyncio.current_task()
            seen["inner task"], _ = _eager.start(loop, inner())
            seen["outer again"] = asyncio.current_task()

        def callback() -> None:  # a loop callback: no task is current
            seen["outer task"], _ = _eager.start(loop, outer())
            seen["after"] = asyncio.current_task()
            done.set_result(None)

        loop.call_soon(callback)
        await done
        assert seen["outer"] is seen["outer task"] is seen["outer again"]
        assert seen["inner"] is seen["inner task"] is not seen["outer"]
        assert seen["after"] is None

    run(main)


def test_a_loop_whose_queue_is_unknown_starts_the_task_later() -> None:
    """No ready queue it knows to take the first step from (a loop that is not asyncio's
    `BaseEventLoop`; here, one whose queue is swapped for a list): on 3.11 the task stays
    as made and runs on the next turn like any other."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ready = loop._ready  # type: ignore[attr-defined]
        seen: list[Any] = []

        async def body() -> str:
            seen.append(asyncio.current_task())
            return "later"

        loop._ready = list(ready)  # type: ignore[attr-defined]  # not the deque it knows
        try:
            task, finished = _eager.start(loop, body())
        finally:
            pending = list(loop._ready)  # type: ignore[attr-defined]
            loop._ready = ready  # type: ignore[attr-defined]
            ready.extend(pending[len(ready) :])
        if _eager.NATIVE:
            assert finished and seen == [task]
        else:
            assert not finished and seen == []
        assert await task == "later"
        assert seen == [task]

    run(main)


@pytest.mark.skipif(_eager.NATIVE, reason="3.11's path: the first step handed over by call_soon")
def test_what_else_is_scheduled_while_the_task_is_made_is_queued(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On 3.11 the task's constructor gives its first step to a `call_soon` of ours set on
    the loop for that moment. Whatever else is scheduled then (a finalizer that a garbage
    collection runs inside the constructor may schedule a callback or make a task) is
    queued as usual, also another task's step that comes before this task's own (this
    task then starts on the next turn); nothing is lost or run twice."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        order: list[str] = []
        made: list[Any] = []

        async def other() -> None:
            order.append("other task")

        class Scheduling(asyncio.Task):  # type: ignore[type-arg]
            """A task whose making schedules a callback and starts another task first,
            as such a finalizer would."""

            def __init__(self, coro: Any, **kwargs: Any) -> None:
                if not made:
                    made.append(self)
                    loop.call_soon(order.append, "callback")
                    Scheduling(other(), loop=loop)  # (of the same class: its step is a task's)
                super().__init__(coro, **kwargs)

        async def body() -> str:
            order.append("task")
            return "ran"

        monkeypatch.setattr(_eager, "_Task", Scheduling)
        try:
            task, finished = _eager.start(loop, body())
        finally:
            monkeypatch.undo()
        assert not finished and order == []  # this task's step came second: queued
        assert "call_soon" not in vars(loop)  # ours is gone again
        assert await task == "ran"
        assert sorted(order) == ["callback", "other task", "task"]

        # A collection on nearly every allocation, the constructor's too, with a callback
        # that schedules: whichever way it falls, everything runs once.
        import gc

        ran: list[str] = []

        def on_gc(phase: str, info: dict[str, Any]) -> None:
            if phase == "start" and not ran:
                ran.append("scheduled")
                loop.call_soon(ran.append, "callback")

        async def plain() -> str:
            return "ran"

        threshold = gc.get_threshold()
        gc.callbacks.append(on_gc)
        gc.set_threshold(1)
        try:
            task, finished = _eager.start(loop, plain())
        finally:
            gc.set_threshold(*threshold)
            gc.callbacks.remove(on_gc)
        assert await task == "ran"
        await asyncio.sleep(0)
        assert ran == ["scheduled", "callback"]
        assert "call_soon" not in vars(loop)

    run(main)


@pytest.mark.skipif(_eager.NATIVE, reason="3.11's path: the first step handed over by call_soon")
def test_a_loop_with_a_call_soon_of_its_own_starts_the_task_later() -> None:
    """A loop that makes its tasks its own way (a `call_soon` of its own, on its class or
    its instance) gets the task made by `loop.create_task` as before, started on the next
    turn. (A task factory: `test_a_task_factory_or_a_create_task_of_its_own_...`.)"""

    class OwnCallSoon(asyncio.SelectorEventLoop):
        def call_soon(self, callback: Any, *args: Any, context: Any = None) -> Any:
            return super().call_soon(callback, *args, context=context)

    async def other() -> None:
        async def body() -> str:
            return "later"

        task, finished = _eager.start(asyncio.get_running_loop(), body())
        assert not finished
        assert await task == "later"

    run(other, OwnCallSoon)

    async def patched() -> None:
        # `call_soon` wrapped on the loop instance (as instrumentation may do): left as it
        # is, and used.
        loop = asyncio.get_running_loop()
        seen: list[Any] = []

        def wrapper(callback: Any, *args: Any, context: Any = None) -> Any:
            seen.append(callback)
            return asyncio.BaseEventLoop.call_soon(loop, callback, *args, context=context)

        async def body() -> str:
            return "later"

        loop.call_soon = wrapper  # type: ignore[method-assign]
        try:
            task, finished = _eager.start(loop, body())
            assert loop.call_soon is wrapper
        finally:
            del loop.call_soon
        if _eager.NATIVE:
            assert finished and seen == []
        else:
            assert not finished and len(seen) == 1
        assert await task == "later"

    run(patched)


def test_a_task_factory_or_a_create_task_of_its_own_makes_the_task_on_every_version() -> None:
    """A loop that makes its tasks its own way (a task factory; a class with its own
    `create_task`) gets the task made that way on 3.11 and 3.12+ alike: the factory
    (instrumentation, `asyncio.eager_task_factory`) decides how the task starts. Until
    session 23 the 3.12+ path made the task itself and bypassed both."""

    async def body() -> str:
        return "later"

    async def with_factory() -> None:
        loop = asyncio.get_running_loop()
        with recording_task_factory(loop) as made:
            task, finished = _eager.start(loop, body(), "named")
        assert not finished and made == [task] and task.get_name() == "named"
        assert await task == "later"

    run(with_factory)

    class OwnCreateTask(asyncio.SelectorEventLoop):
        made: list[Any] = []

        def create_task(self, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            self.made.append(super().create_task(coro, **kwargs))
            return self.made[-1]

    async def with_own_create_task() -> None:
        loop = asyncio.get_running_loop()
        task, finished = _eager.start(loop, body())
        assert not finished and OwnCreateTask.made[-1] is task
        assert await task == "later"

    run(with_own_create_task, OwnCreateTask)


def test_a_task_is_named_as_asked() -> None:
    """A name given is the task's, on either path (a session names a handler's task after
    its function, as anyio does; a task left to name itself formats "Task-<n>")."""

    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def body() -> None:
            await asyncio.sleep(0)

        task, finished = _eager.start(loop, body(), "Session._handle")
        assert not finished and task.get_name() == "Session._handle"
        await task
        task, _ = _eager.start(loop, body())
        assert task.get_name().startswith("Task-")
        await task

    run(main)


def test_a_call_soon_bound_on_the_instance_is_kept_and_used() -> None:
    """Instrumentation may set a bound method of its own as the loop's `call_soon`:
    on 3.11 that is not asyncio's, so the task is made by the loop and queued through
    it. On 3.12+ the eager first step schedules nothing, so the task runs at once and
    the instrumentation's `call_soon` is left in place, unused."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        seen: list[Any] = []

        def counting(self: Any, callback: Any, *args: Any, context: Any = None) -> Any:
            seen.append(callback)
            return asyncio.BaseEventLoop.call_soon(self, callback, *args, context=context)

        async def body() -> str:
            return "later"

        bound = types.MethodType(counting, loop)
        loop.call_soon = bound  # type: ignore[method-assign]
        try:
            task, finished = _eager.start(loop, body())
            assert loop.call_soon == bound
        finally:
            del loop.call_soon
        if _eager.NATIVE:
            assert finished and seen == []
        else:
            assert not finished and len(seen) == 1
        assert await task == "later"

    run(main)


def test_a_loop_has_one_starter_which_does_not_keep_it_alive() -> None:
    """`starter(loop)` is made once per loop and kept by loop, weakly: a loop that is
    done with is freed, and so is a task its starter made (the starter keeps no step)."""
    import gc
    import weakref

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        start = _eager.starter(loop)
        assert _eager.starter(loop) is start

        async def body() -> str:
            return "done"

        task, finished = start(body(), "named")
        assert finished and task.result() == "done" and task.get_name() == "named"
        return weakref.ref(loop), weakref.ref(task)

    loop_ref, task_ref = run(main)
    gc.collect()
    assert loop_ref() is None and task_ref() is None


def test_loops_on_two_threads_start_their_own_tasks() -> None:
    """Each loop's first steps are kept apart (one cell per loop), also while two
    threads start tasks on their loops at once and `start` switches between them."""
    import sys
    import threading

    results: dict[str, list[bool]] = {}
    errors: list[BaseException] = []

    def worker(key: str) -> None:
        async def main() -> None:
            loop = asyncio.get_running_loop()
            ok: list[bool] = []
            for n in range(2000):
                seen: list[Any] = []

                async def body(n: int = n, seen: list[Any] = seen) -> int:
                    seen.append(asyncio.current_task())
                    return n

                task, finished = _eager.start(loop, body())
                ok.append(finished and task.result() == n and seen == [task])
                assert task.get_loop() is loop
            assert len(loop._ready) == 0  # type: ignore[attr-defined]  # nothing queued
            results[key] = ok

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in "ab"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG)
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    assert results["a"] == [True] * 2000 and results["b"] == [True] * 2000


def test_a_sessions_tasks_start_the_coroutine_given_under_the_name_given() -> None:
    """`_Tasks.start_eager(coro, name)` (asyncio): the caller's coroutine, run as a task
    named `name`; None when its first step ended it, else the task, kept until it ends
    (`stop` cancels it). A task factory installed after a first eager start is still
    honoured by the next (the loop is looked at on every start)."""
    from mcp_adapters.backends.asyncio import _Tasks

    async def main() -> None:
        loop = asyncio.get_running_loop()
        tasks = _Tasks(loop)
        seen: list[Any] = []

        async def done() -> None:
            seen.append(asyncio.current_task())

        assert tasks.start_eager(done(), "given") is None
        assert seen[0] is not None and seen[0].get_name() == "given" and seen[0].done()

        async def waits() -> None:
            await asyncio.sleep(HANG)

        task = tasks.start_eager(waits(), "waiting")
        assert task is not None and task.get_name() == "waiting" and not task.done()

        with recording_task_factory(loop) as made:
            later = tasks.start_eager(done(), "by the factory")
        assert later is not None and made == [later] and len(seen) == 1  # not run yet
        await later
        assert seen[1] is later and later.get_name() == "by the factory"
        await tasks.stop()
        assert task.cancelled()

    run(main)


def test_trio_tasks_close_a_coroutine_they_cannot_start() -> None:
    """trio's `start_eager(coro, name)` on a session that is not running raises, and
    closes the coroutine it was given: it will never be awaited, and must not warn so."""
    import warnings

    trio_backend = pytest.importorskip("mcp_adapters.backends.trio")

    async def body() -> None:
        raise AssertionError("never run")

    import trio

    async def main() -> None:
        tasks = trio_backend._Tasks()  # (not entered: not running)
        coro = body()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="not running"):
                tasks.start_eager(coro, "handler")
        assert coro.cr_frame is None  # closed

    trio.run(main)
