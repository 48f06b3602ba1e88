"""The event loop a binding's scenarios run on, and how long to wait for what they leave pending.

:func:`run_coroutine` runs a scenario on one loop per thread, closing a loop that a case left
anything on; :func:`wait_settled` waits for a future until it is done, the loop is idle (nothing
can complete it any more) or a deadline passes; :func:`wait_until` waits for a condition the same
way; :func:`settle` lets deferred callbacks run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

_SETTLE_TICKS = 20

_IDLE_TURNS = 3

_TIMER_POLL_S = 0.001


async def wait_settled(future: asyncio.Future[Any], deadline_s: float) -> bool:
    """Wait until ``future`` is done, the event loop is idle, or ``deadline_s`` passes; True when done.

    Idle means several loop turns in a row found no ready callback, no live timer and no
    watched file descriptor besides the loop's own: then nothing can complete ``future``
    any more (spec/protocol.md, "Settling"), and waiting out the deadline would only cost
    time. Where idleness cannot be observed (a loop without these internals), the deadline
    decides.
    """
    loop = asyncio.get_running_loop()
    ends = loop.time() + deadline_s
    quiet = 0
    while not future.done():
        if loop.time() >= ends:
            return False
        quiet = quiet + 1 if _loop_is_idle(loop) else 0
        if quiet >= _IDLE_TURNS:
            return False
        if quiet == 0 and getattr(loop, "_scheduled", None):
            # A timer is live: sleep until the earliest of it and the deadline rather than spin.
            await asyncio.wait({future}, timeout=max(0.0, min(ends, _next_timer(loop)) - loop.time()))
        else:
            await asyncio.sleep(0)
    return True


async def wait_until(condition: Callable[[], bool], deadline_s: float) -> bool:
    """Wait until ``condition()`` holds, the event loop is idle, or ``deadline_s`` passes; True when it holds.

    The predicate form of :func:`wait_settled`, for a scenario step that waits for something
    the implementation does (a tool to start, an event): once the loop is idle and the
    condition still fails, nothing can make it hold any more, so the step is reported as
    stalled instead of hanging (spec/fixture-format.md, "Scenarios").
    """
    loop = asyncio.get_running_loop()
    ends = loop.time() + deadline_s
    quiet = 0
    while not condition():
        if loop.time() >= ends:
            return False
        quiet = quiet + 1 if _loop_is_idle(loop) else 0
        if quiet >= _IDLE_TURNS:
            return False
        # Only a timer is live: poll at a millisecond rather than spin (nothing else can change the condition sooner).
        await asyncio.sleep(_TIMER_POLL_S if quiet == 0 and not getattr(loop, "_ready", True) and getattr(loop, "_scheduled", None) else 0)
    return True


def _loop_is_idle(loop: asyncio.AbstractEventLoop) -> bool:
    ready, scheduled, selector = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None), getattr(loop, "_selector", None)
    if ready is None or scheduled is None or selector is None:
        return False
    # Our own wake-up is the only ready callback right after sleep(0) resumed us.
    live_timers = [handle for handle in scheduled if not handle.cancelled()]
    return len(ready) == 0 and not live_timers and len(selector.get_map()) <= 1


def _next_timer(loop: asyncio.AbstractEventLoop) -> float:
    scheduled = [handle.when() for handle in getattr(loop, "_scheduled", ()) if not handle.cancelled()]
    return min(scheduled, default=loop.time())


async def settle() -> None:
    """Let deferred callbacks (call_soon chains, woken consumers) run."""
    for _ in range(_SETTLE_TICKS):
        await asyncio.sleep(0)


_thread_loops = threading.local()


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run``, on one event loop per thread reused from case to case.

    After each run the tasks the implementation left behind are cancelled; a loop that still
    holds anything (a live timer, a pending callback, an unfinished async generator) is
    closed, as ``asyncio.run`` would, and the next run starts on a fresh one, so nothing of
    one case can reach the next (nor the next case's idle settling).
    """
    loop: asyncio.AbstractEventLoop | None = getattr(_thread_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_report_unless_an_exit)
        _thread_loops.loop = loop
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(coroutine)
    finally:
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        if not _loop_is_clean(loop):
            _thread_loops.loop = None
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()


def _report_unless_an_exit(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's default report, but for a task that ended in ``SystemExit`` or ``KeyboardInterrupt``.

    That exit already errored its case with its name (``running/execution.py``); asyncio would
    print it a second time, traceback and all, once the finished task is collected.
    """
    error = context.get("exception")
    if isinstance(error, BaseException) and not isinstance(error, Exception):
        return
    loop.default_exception_handler(context)


def _loop_is_clean(loop: asyncio.AbstractEventLoop) -> bool:
    ready, scheduled, asyncgens = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None), getattr(loop, "_asyncgens", None)
    if ready is None or scheduled is None or asyncgens is None:
        return False
    return not ready and not any(not handle.cancelled() for handle in scheduled) and not asyncgens
