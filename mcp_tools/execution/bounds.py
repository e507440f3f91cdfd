"""Bounds on running user code: the per-process concurrency slots and the per-call deadline.

Tools are synchronous functions run in worker threads under a per-process concurrency limit
and a per-call deadline. The slot is released by the worker thread itself when the tool
really returns, so a timed-out tool still occupies its slot until it finishes. A cancelled
call (its client went away) is the exception: its slot is freed at once and its thread, still
running until the tool's next checkpoint, counts against a draining pool of the same size
instead; when that pool is full, the cancelled call keeps its slot. A declared non-blocking
tool (``async def``) is awaited on the event loop instead (``run_on_loop``), under the same
slots and deadline, without the thread hop.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import math
import random
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic, TypeVar

from asgiref.sync import ThreadSensitiveContext
from django.db import close_old_connections, connections

from mcp_tools import conf, observability
from mcp_tools.call import handover
from mcp_tools.codes import OVERLOADED, TIMED_OUT
from tenancy.process import ProcessObject

T = TypeVar("T")

# Worker threads are never the bottleneck: the slot counter is. A timed-out tool keeps its
# thread and its slot, and a cancelled one moves to the draining pool (as large as the slots),
# so threads in use never exceed twice MAX_CONCURRENT_CALLS.
MAX_WORKER_THREADS: Final = 64


class BoundError(Exception):
    """A call refused or abandoned by a bound; answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class _Slots:
    """The per-process concurrency slots; a released slot goes to the longest waiter first.

    Waiters are coroutines on event loops (``acquire``); releases come from worker threads,
    which hand the slot over with ``call_soon_threadsafe`` without ever freeing it, so a
    newcomer cannot overtake a waiter.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_use = 0
        # Cancelled calls whose threads still run (until the tool's next checkpoint).
        self.draining = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return len(self._waiters)

    def try_acquire(self, limit: int) -> bool:
        with self._lock:
            if self.in_use >= limit or self._waiters:
                return False
            self.in_use += 1
            return True

    async def acquire(self, limit: int, wait: float) -> bool:
        """Take a slot, waiting at most ``wait`` seconds for one; ``False`` if none came."""
        if self.try_acquire(limit):
            return True
        if wait <= 0:
            return False
        waiter = asyncio.get_running_loop().create_future()
        with self._lock:
            if self.in_use < limit and not self._waiters:
                self.in_use += 1
                return True
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), wait)
            return True
        except (TimeoutError, asyncio.CancelledError) as exc:
            with self._lock:
                try:
                    self._waiters.remove(waiter)
                    handed = False
                except ValueError:
                    handed = True  # a release chose this waiter as the wait ended
            if isinstance(exc, TimeoutError):
                return handed
            if handed:
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.get_loop().call_soon_threadsafe(_hand_over, waiter)
                return
            self.in_use -= 1

    def drain(self, limit: int) -> bool:
        """Free a cancelled call's slot while its thread runs on, counted as draining (at
        most ``limit``); ``False`` when the draining pool is full (the call keeps its slot)."""
        with self._lock:
            if self.draining >= limit:
                return False
            self.draining += 1
        self.release()
        return True

    def drained(self) -> None:
        """A draining call's thread has returned."""
        with self._lock:
            self.draining -= 1


class _Hold:
    """Who gives one call's slot back: its thread when the tool returns, unless the call was
    cancelled first and its slot moved to the draining pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "running"  # → "returned" (thread) or "draining" (cancellation)

    def returned(self) -> None:
        with self._lock:
            if self._state == "draining":
                slots.drained()
                return
            self._state = "returned"
            slots.release()

    def cancelled(self, limit: int) -> None:
        with self._lock:
            if self._state == "running" and slots.drain(limit):
                self._state = "draining"


def _hand_over(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# Process state (mcp_tools.operator.process): the slots are renewed in place (the hot path
# reads ``slots`` as a plain global); the pool is made on the first call, dropped after fork.
SLOTS: Final = ProcessObject("execution.slots", _Slots, kind="pool", renew=_Slots.__init__)
slots = SLOTS.get()
TOOL_THREADS: Final = ProcessObject(
    "execution.tool_threads",
    lambda: concurrent.futures.ThreadPoolExecutor(
        # Running calls plus as many draining ones (threads are made on demand).
        max_workers=2 * MAX_WORKER_THREADS,
        thread_name_prefix="mcp-tool",
    ),
    kind="pool",
    close=lambda pool: pool.shutdown(wait=False),
)
_pool = TOOL_THREADS.get


async def run_bounded(work: Callable[[], T], *, on_cancel: Callable[[], None] | None = None) -> T:
    """Run ``work`` in a worker thread within the concurrency limit and the call deadline.

    If the awaiting task is cancelled (the client went away), ``on_cancel`` tells the work so
    (it stops at its next checkpoint) and the slot is freed at once, the thread counted as
    draining until it returns (``_Slots.drain``).

    Raises:
        BoundError: ``OVERLOADED`` when every slot is taken (nothing ran), ``TIMED_OUT`` when
            the deadline passed (the work may still be running and finish later).
    """
    return await _bounded(_InThread(work, on_cancel))


async def run_on_loop(work: Callable[[], Awaitable[T]], *, outlives_view: bool = False) -> T:
    """Await ``work()`` on this event loop within the concurrency limit and the call deadline.

    The bounds of ``run_bounded`` for a declared non-blocking tool (``async def``): it takes a
    slot like any call, and its deadline cancels it at its next ``await``; the slot comes back
    when the coroutine has really ended (returned, raised or been cancelled). There is no
    thread to drain: a cancelled call is cancelled where it runs. ``outlives_view``: the call
    may go on after its view has returned (a streamed answer), so its thread-sensitive work
    gets a thread of its own (``_ToolThread``).

    Raises:
        BoundError: ``OVERLOADED`` when every slot is taken (nothing ran), ``TIMED_OUT`` when
            the deadline passed (the work was cancelled).
    """
    return await _bounded(_OnLoop(work, outlives_view))


class _Place(Generic[T]):
    """Where one bounded call runs: ``run`` it holding a slot (of ``limit``), under the
    deadline; ``cancelled`` when its task is (not by the deadline); ``ended`` afterwards."""

    async def run(self, limit: int) -> T:
        raise NotImplementedError

    def cancelled(self, limit: int) -> None:
        pass

    def ended(self) -> None:
        pass


async def _bounded(place: _Place[T]) -> T:
    """The one bounded run, wherever it runs: a slot, then ``place.run`` under the deadline."""
    limit = int(conf.get("MAX_CONCURRENT_CALLS"))
    timeout = float(conf.get("CALL_TIMEOUT_SECONDS"))
    if not slots.try_acquire(limit):  # else a slot was free and nobody waits: no coroutine
        await _take_slot(limit)
    try:
        async with asyncio.timeout(timeout):
            return await place.run(limit)
    except asyncio.CancelledError:
        place.cancelled(limit)
        raise
    except TimeoutError:
        raise _timed_out(timeout) from None
    finally:
        place.ended()


class _InThread(_Place[T]):
    """A worker thread, which gives the slot back itself when the work really returns."""

    def __init__(self, work: Callable[[], T], on_cancel: Callable[[], None] | None) -> None:
        self.work = work
        self.on_cancel = on_cancel
        self.hold = _Hold()

    async def run(self, limit: int) -> T:
        hold, work = self.hold, self.work
        loop = asyncio.get_running_loop()
        # The worker settles this future itself with ``(value, error)`` (no concurrent.futures
        # Future wrapped into an asyncio one and raced against a ``wait_for`` task: the hop
        # costs about 40 % less CPU). Shielded, it is never cancelled, so the worker's result
        # always lands.
        done: asyncio.Future[tuple[Any, BaseException | None]] = loop.create_future()
        lent = handover.LENT.get()

        def in_thread() -> None:
            value: Any = None
            error: BaseException | None = None
            try:
                if lent:  # the request's connection
                    handover.adopt(lent, close_if_open=False)
                value = work()
            except BaseException as exc:
                error = exc
            finally:
                # Worker threads never see request_finished; without this, each keeps a DB
                # connection open (or a broken one) for the next call.
                close_old_connections()
                hold.returned()
            try:
                loop.call_soon_threadsafe(done.set_result, (value, error))
            except RuntimeError:
                pass  # the loop is closed: nobody awaits the answer

        try:
            _pool().submit(observability.carry(in_thread))  # observability: trace context
        except BaseException:
            slots.release()
            raise
        value, error = await asyncio.shield(done)
        if error is not None:
            raise error
        result: T = value
        return result

    def cancelled(self, limit: int) -> None:
        if self.on_cancel is not None:
            self.on_cancel()
        self.hold.cancelled(limit)


class _OnLoop(_Place[T]):
    """This event loop: the slot comes back when the coroutine has ended, however it ended."""

    def __init__(self, work: Callable[[], Awaitable[T]], outlives_view: bool) -> None:
        self.work = work
        self.thread = _ToolThread() if outlives_view else None

    async def run(self, limit: int) -> T:
        if self.thread is None:
            return await self.work()
        async with ThreadSensitiveContext(executor=self.thread):
            return await self.work()

    def ended(self) -> None:
        slots.release()
        if self.thread is not None:
            self.thread.shutdown(wait=False)


class _ToolThread(concurrent.futures.Executor):
    """The thread of one streamed ``async def`` call's thread-sensitive work (``sync_to_async``,
    Django's async ORM), made on first use.

    A JSON answer's call sends that work to its request's own thread, which waits for the
    view (``mcp_tools.serving.asgi``); a streamed answer's view has returned, its thread has moved
    on,
    so the call keeps a thread of its own instead, its database connections closed at the end.
    """

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcp-tool")
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._pool is not None:
            self._pool.submit(connections.close_all)
            self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


async def _take_slot(limit: int) -> None:
    """Take one of ``limit`` slots, waiting at most ``MCP_TOOLS_SLOT_WAIT_SECONDS``.

    Raises:
        BoundError: ``OVERLOADED`` (no slot came).
    """
    if not await slots.acquire(limit, float(conf.get("SLOT_WAIT_SECONDS"))):
        observability.bound_refused("concurrency")  # observability
        raise overloaded()


def _timed_out(timeout: float) -> BoundError:
    observability.bound_refused("deadline")  # observability
    return BoundError(
        TIMED_OUT, f"Tool call exceeded its {timeout:g} s deadline", {"timeoutSeconds": timeout}
    )


def overloaded() -> BoundError:
    """The refusal of a call that found no slot, with a retry hint.

    ``data.retryAfterMs`` is ``MCP_TOOLS_OVERLOAD_RETRY_AFTER_MS`` spread by ±50 %, so
    clients refused together do not all come back at the same instant; ``retryAfterSeconds``
    (and the ``Retry-After`` header the endpoint adds) is that, rounded up to whole seconds.
    """
    base = float(conf.get("OVERLOAD_RETRY_AFTER_MS"))
    retry_ms = max(int(base * random.uniform(0.5, 1.5)), 1)
    return BoundError(
        OVERLOADED,
        "Server overloaded: too many tool calls in progress; retry shortly",
        {"retryAfterMs": retry_ms, "retryAfterSeconds": math.ceil(retry_ms / 1000)},
    )


def retry_after_header(error: BoundError) -> str | None:
    """``Retry-After`` (whole seconds) for a refusal that carries a retry hint."""
    seconds = (error.data or {}).get("retryAfterSeconds")
    return str(seconds) if error.code == OVERLOADED and seconds is not None else None
